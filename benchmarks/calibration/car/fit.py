import numpy as np, sys
from model import sim
conds = {}
def load(name, actfn, seeds_file=None):
    x = np.load(name + '.npy'); T = x.shape[1]
    acts = np.array([actfn(k) for k in range(T)], float)
    conds[name] = (acts, (-x[:, :, 4]).mean(0), x[:, :, 3].mean(0), x[:, :, 6].mean(0))
load('full', lambda k: (1, 1)); load('reverse', lambda k: (-1, -1)); load('spin_lr', lambda k: (1, -1))
for u in ['0.005', '0.01', '0.015']: load('lin' + u, lambda k, u=float(u): (u, u))
load('left_only', lambda k: (1, 0)); load('asym', lambda k: (0.02, 0.01)); load('coast', lambda k: (1, 1) if k < 100 else (0, 0))
load('fwd_spin', lambda k: (1, 1) if k < 50 else (1, -1)); load('spin_fwd', lambda k: (1, -1) if k < 50 else (1, 1))
load('fwd_rev', lambda k: (1, 1) if k < 50 else (-1, -1))
T = 150
names = list(conds)
A = np.stack([np.pad(conds[n][0][:T], ((0, max(0, T - len(conds[n][0]))), (0, 0)), mode='edge') for n in names])
def report(p, verbose=True):
    out = sim(p, A)
    tot = 0
    for j, n in enumerate(names):
        acts, fwd, lat, wz = conds[n]; L = min(T, len(fwd))
        ef = out[j, :L, 0] - fwd[:L]; ew = 0.2 * (out[j, :L, 2] - wz[:L])
        e = np.sqrt(np.mean(ef**2 + ew**2)); tot += np.mean(ef**2 + ew**2)
        if verbose:
            idx = [0, 1, 4, 24, 49, 51, 53, 55, 60, L - 1]; idx = [i for i in idx if i < L]
            print(f'{n:10s} rms {e:.3f}  fwd sim {np.round(out[j, idx, 0], 3)}\n{"":10s}           fwd ref {np.round(fwd[idx], 3)}\n{"":10s}           wz  sim {np.round(out[j, idx, 2], 2)}\n{"":10s}           wz  ref {np.round(wz[idx], 2)}')
    return tot
if __name__ == '__main__':
    p0 = [float(v) for v in sys.argv[1:]] if len(sys.argv) > 1 else [1.0, 1.0, 0.05, 0.4, 0.09, 1.0]
    print('loss', report(p0))

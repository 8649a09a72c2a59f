import json, sys, numpy as np
from scipy.optimize import least_squares
sys.path.insert(0, '/tmp/race_fit'); import model as M
runs = json.load(open('/tmp/sg_race/work/runs.json'))
grid = json.load(open('/tmp/sg_race/work/grid.json'))
import os
FIT = os.environ.get('FIT', 'steer_damp tau_max omega0 L xp tau_yaw slip_c over').split()
BOUNDS = dict(steer_damp=(0.005, 0.5), tau_max=(0, 0.3), omega0=(0.01, 2), L=(0.3, 0.6), xp=(-0.4, 0), tau_yaw=(0.02, 1), slip_c=(0, 1), slip_a=(0.2, 3), slip_b=(0, 3), over=(0, 1), tau_yaw_min=(0.004, 0.5), fric_dd=(0, 1))
def params(x):
    p = dict(M.DEFAULT); p.update(dict(zip(FIT, x))); return p
def meas(rec):
    out = []
    for s in rec:
        h = s['heading']; vx, vy = s['vel'][0], s['vel'][1]
        out.append([0.5*(s['dl']+s['dr']), s['yaw'], vx*np.cos(h)+vy*np.sin(h), -vx*np.sin(h)+vy*np.cos(h)])
    return np.array(out)
TRANS = os.environ.get('TRANS', 'turn20_03 turn12_05 turn20_785 turn8_02 slowrandom straight20 brake steer_still_785').split()
T = 250
# batch: transient runs then grid points; actions padded with the last action
acts, masks, targets = [], [], []
for name in TRANS:
    a = np.array([r['act'] for r in runs[name][1:]]); n = len(a)
    acts.append(np.concatenate([a, np.repeat(a[-1:], T - n, 0)]))
    m = np.zeros(T + 1); m[:n + 1] = 1.0 / np.sqrt(n + 1) * 2; masks.append(m)
    tg = np.zeros((T + 1, 4)); tg[:n + 1] = meas(runs[name]); targets.append(tg)
for g in grid:
    acts.append(np.tile([g['thr'], g['dc']], (T, 1)))
    m = np.zeros(T + 1); m[101:] = 1.0 / 150; masks.append(m)  # mean over steps 101..250
    mm = np.array(g['mean']); targets.append(np.tile([0.5*(mm[0]+mm[1]), mm[5], mm[3], mm[4]], (T + 1, 1)))
ACTS = np.moveaxis(np.array(acts), 0, -1)  # (T, 2, B)
MASK = np.array(masks).T; TARG = np.moveaxis(np.array(targets), 0, -1)  # (T+1, B), (T+1, 4, B)
NTR = len(TRANS); B = ACTS.shape[-1]
W = np.array([1/0.02, 1/0.05, 1/0.02, 1/0.01])
def simulate(p):
    s0 = np.zeros((7, B)); s0[2] = [runs[n][0]['heading'] for n in TRANS] + [0.0] * (B - NTR)
    st, v, lat = M.rollout(s0, ACTS, p)
    return np.stack([st[:, 5], st[:, 3], v, lat], 1)  # (T+1, 4, B)
def resid(x):
    sim = simulate(params(x))
    err = (sim - TARG) * W[None, :, None]
    tr = (err[:, :, :NTR] * MASK[:, None, :NTR]).ravel()
    sm = (sim[:, :, NTR:] * MASK[:, None, NTR:]).sum(0); tm = TARG[101, :, NTR:]
    gr = np.concatenate([(sm[0] - tm[0]) / 0.01, np.log(np.abs(sm[1]) / np.abs(tm[1])) / 0.03,
                         (sm[2] - tm[2]) / 0.01, (sm[3] - tm[3]) / 0.005])
    return np.concatenate([TR_WEIGHT * tr, gr])
TR_WEIGHT = float(__import__('os').environ.get('TR_WEIGHT', '0.5'))
if __name__ == '__main__':
    x0 = [M.DEFAULT[k] for k in FIT]
    lb = [BOUNDS[k][0] for k in FIT]; ub = [BOUNDS[k][1] for k in FIT]
    import time; t = time.time(); r0 = resid(x0); print('eval', time.time() - t, 'initial cost', 0.5*np.sum(r0**2))
    r = least_squares(resid, x0, bounds=(lb, ub), x_scale='jac', max_nfev=100, verbose=1)
    print(dict(zip(FIT, np.round(r.x, 5))), 'cost', r.cost)
    json.dump(dict(zip(FIT, r.x.tolist())), open(os.environ.get('OUTJSON', '/tmp/race_fit/fit.json'), 'w'))

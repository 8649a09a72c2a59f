import sys, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, '/tmp/sg_car/work')
from jfit7 import rollout, D, NAMES
p = np.load(sys.argv[1])
print(dict(zip(NAMES, p.round(5))))
o = np.asarray(rollout(jnp.asarray(p), jnp.asarray(D['A'])))
for j, n in enumerate(D['names']):
    L = int(D['mask'][j].sum()); idx = [i for i in [0, 1, 4, 24, 49, 51, 53, 55, 60, L - 1] if i < L]
    e = np.sqrt(np.mean((o[j, :L, 0] - D['fwd'][j, :L])**2)); ew = np.sqrt(np.mean((o[j, :L, 1] - D['wz'][j, :L])**2))
    print(f'{n:10s} rms fwd {e:.3f} wz {ew:.3f}\n   fwd {np.round(o[j, idx, 0], 3)}\n   ref {np.round(D["fwd"][j, idx], 3)}\n   wz  {np.round(o[j, idx, 1], 2)}\n   ref {np.round(D["wz"][j, idx], 2)}')
RA = np.load('random_actions.npy'); r = np.load('random.npy')
o2 = np.asarray(rollout(jnp.asarray(p), jnp.asarray(RA)))
f, w = o2[..., 0], o2[..., 1]; rf, rw = -r[:, :, 4], r[:, :, 6]
print('random (all 8 x 1000): ours mean fwd %.3f std %.3f mean|wz| %.3f std wz %.3f' % (f.mean(), f.std(), np.abs(w).mean(), w.std()))
print('                    orig mean fwd %.3f std %.3f mean|wz| %.3f std wz %.3f' % (rf.mean(), rf.std(), np.abs(rw).mean(), rw.std()))
print('corr fwd %.3f wz %.3f' % (np.corrcoef(f.ravel(), rf.ravel())[0, 1], np.corrcoef(w.ravel(), rw.ravel())[0, 1]))

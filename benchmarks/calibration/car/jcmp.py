import sys, numpy as np, jax, jax.numpy as jnp
from jfit import rollout
p = np.load(sys.argv[1])
RA = np.load('random_actions.npy'); r = np.load('random.npy')
o2 = np.asarray(rollout(jnp.asarray(p), jnp.asarray(RA[:1])))
np.set_printoptions(precision=2, suppress=True, linewidth=180)
for k in range(0, 40):
    a = np.sign(RA[0, k]) * (np.abs(RA[0, k]) > 0.02)
    print(k, a, 'fwd ours %.3f orig %.3f   wz ours %.2f orig %.2f' % (o2[0, k, 0], -r[0, k, 4], o2[0, k, 1], r[0, k, 6]))

import jax, numpy as np
from saferl.envs.safety_nav.point_push import PointPush
env = PointPush(); P = env.default_params()
import sys; P = P.replace(goal_tries=int(sys.argv[1]), placement_tries=int(sys.argv[2])); V = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
keepout = np.array([0.4, 0.4, 0.4, 0.4, 0.3, 0.2]); names = ['agent','goal','h0','h1','pillar','box']
bad = {}
N = 0
for i in range(20):
    s, _ = V(jax.random.split(jax.random.PRNGKey(100 + i), 1024), P)
    lay = np.concatenate([s.pos[:, None], s.goal[:, None], s.hazards, s.pillars, s.box_pos[:, None]], axis=1)
    d = np.linalg.norm(lay[:, :, None] - lay[:, None, :], axis=-1) - (keepout[:, None] + keepout[None, :])
    for a in range(6):
        for b in range(a + 1, 6):
            n = int(np.sum(d[:, a, b] < -1e-5))
            if n: bad[(names[a], names[b])] = bad.get((names[a], names[b]), 0) + n
    N += 1024
print(N, bad)

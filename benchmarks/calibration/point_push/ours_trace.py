import sys, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, '/tmp/pushwork')
import importlib, controller
from saferl.envs.safety_nav.point_push import PointPush
env = PointPush(); P = env.default_params()
reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None))); step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, None)))
s, _ = reset(jax.random.split(jax.random.PRNGKey(7), 4), P)
for t in range(400):
    a = controller.act(np.asarray(s.pos), np.asarray(s.heading), np.asarray(s.box_pos), np.asarray(s.goal))
    s, obs, r, c, term, trunc, info = step(s, jnp.asarray(a, jnp.float32), P)
    if t % 20 == 0:
        i = 0
        print(t, np.round(np.asarray(s.pos[i]), 2), np.round(float(s.heading[i]), 2), np.round(np.asarray(s.box_pos[i]), 2), np.round(np.asarray(s.goal[i]), 2), a[i], float(info['goal_reached'][i]))

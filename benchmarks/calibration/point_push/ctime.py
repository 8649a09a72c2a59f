import time, jax, jax.numpy as jnp
from saferl.envs.safety_nav.point_push import PointPush
env = PointPush(); P = env.default_params()
t = time.time(); r = jax.jit(jax.vmap(env.reset, in_axes=(0, None))).lower(jax.random.split(jax.random.PRNGKey(0), 256), P).compile(); print('vreset', time.time() - t, time.process_time())
s, _ = env.reset(jax.random.PRNGKey(0), P)
t = time.time(); c = jax.jit(env.step).lower(s, jnp.zeros(2), P).compile(); print('step', time.time() - t, time.process_time())

import time, jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav import car_button as cb
env = cb.CarButton(); P = env.default_params()
f = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, None)))
for n in [16, 64]:
    keys = jax.random.split(jax.random.PRNGKey(1), n)
    st, o = f(keys, P); o.block_until_ready(); t = time.time(); st, o = f(jax.random.split(jax.random.PRNGKey(2), n), P); o.block_until_ready(); print(n, 'resets', time.time() - t)
a = jnp.zeros((64, 2)); s2 = step(st, a, P); s2[1].block_until_ready(); t = time.time()
for _ in range(100): s2 = step(s2[0], a, P)
s2[1].block_until_ready(); print('64 envs x 100 steps', time.time() - t)

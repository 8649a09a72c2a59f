import time, jax, jax.numpy as jnp
from saferl.envs.safety_nav.car_button import CarButton
env = CarButton(); P = env.default_params()
t = time.time(); f = jax.jit(jax.vmap(env.reset, in_axes=(0, None))).lower(jax.random.split(jax.random.PRNGKey(0), 128), P).compile(); print('vreset compile', time.time() - t)
t = time.time(); st, o = f(jax.random.split(jax.random.PRNGKey(0), 128), P); o.block_until_ready(); print('vreset run 128', time.time() - t)
s1 = jax.tree.map(lambda x: x[0], st)
t = time.time(); g = jax.jit(env.step).lower(s1, jnp.zeros(2), P).compile(); print('step compile', time.time() - t)

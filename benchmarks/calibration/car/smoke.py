import time, jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav.car_button import CarButton
env = CarButton(); P = env.default_params()
R = jax.jit(env.reset); S = jax.jit(env.step)
t = time.time(); s, o = R(jax.random.PRNGKey(0), P); print('reset', o.shape, time.time() - t)
t = time.time(); s2 = S(s, jnp.array([1.0, 1.0]), P); print('step compile', time.time() - t)
np.set_printoptions(precision=3, suppress=True, linewidth=150)
print(o[:24]); print(o[24:].reshape(4, 16))
tot = 0; costs = 0
for k in range(1000):
    s, o, r, c, te, tr, info = S(s, jnp.asarray(np.random.uniform(-1, 1, 2), jnp.float32), P)
    tot += float(r); costs += float(c)
print('random episode return', tot, 'cost', costs, 'trunc', bool(tr), 'finite', np.isfinite(o).all())

import time, jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav import car_button as cb
ko = jnp.array([0.4] + [0.2] * 4 + [0.4] + [0.18] * 4 + [0.4] * 4, jnp.float32)
half = 1.5 - ko
for tries in [16, 32, 100]:
    def count(key):
        # success probability of a single attempt
        lay = cb.sample_layout(key, ko, half, tries, 0)
        d = jnp.linalg.norm(lay[:, None] - lay[None], axis=-1); need = ko[:, None] + ko[None]
        return jnp.all((d >= need - 1e-6) | jnp.eye(14, dtype=bool))
    ok = jax.jit(jax.vmap(count))(jax.random.split(jax.random.PRNGKey(0), 20000))
    print(tries, 'P(attempt ok)', float(ok.mean()))
P = cb.CarButton().default_params()
f = jax.jit(jax.vmap(cb.CarButton().reset, in_axes=(0, None)))
keys = jax.random.split(jax.random.PRNGKey(1), 16)
f(keys, P)[1].block_until_ready(); t = time.time(); f(keys, P)[1].block_until_ready(); print('16 resets', time.time() - t)

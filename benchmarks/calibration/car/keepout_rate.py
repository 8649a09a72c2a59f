import sys, jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav.car_button import CarButton
env = CarButton()
for tries in [16, 32, 64, 128]:
    P = env.default_params().replace(placement_tries=tries)
    n = 20000
    st, _ = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(11), n), P)
    xy = np.asarray(jnp.concatenate([st.car.pos[:, None], st.buttons, st.hazards, st.gremlin_places], axis=1))
    ko = np.array([0.4] + [0.2] * 4 + [0.18] * 4 + [0.4] * 4)
    d = np.linalg.norm(xy[:, :, None] - xy[:, None, :], axis=-1); need = ko[:, None] + ko[None]
    off = ~np.eye(13, dtype=bool)
    bad = np.any((d < need - 1e-5) & off, axis=(1, 2))
    which = np.any((d < need - 1e-5) & off, axis=2).sum(0)
    print(tries, 'violating layouts', bad.sum(), 'of', n, 'per object', which)

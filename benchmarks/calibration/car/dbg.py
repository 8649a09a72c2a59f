import jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav.car_button import CarButton
from saferl.envs.safety_nav.point_goal import PointGoal
env = CarButton(); P = env.default_params()
st, _ = env.reset(jax.random.PRNGKey(3), P)
np.set_printoptions(precision=3, suppress=True)
xy = np.asarray(jnp.concatenate([st.car.pos[None], st.buttons, st.hazards, st.gremlin_places]))
print(xy)
print(np.linalg.norm(xy[:, None] - xy[None], axis=-1))
pg = PointGoal(); s2, _ = pg.reset(jax.random.PRNGKey(3), pg.default_params())
print(s2.pos, s2.goal, s2.hazards[:3])

import jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav import nav_contact as nc
from saferl.envs.safety_nav.point_push import box_squares
sq = box_squares(0.2)
bp, by = jnp.array([0.8, 0.1]), jnp.float32(0.0)
pusher = jnp.array([0.8 - 0.3 - 0.025 + 0.001, 0.0003 - 0.025])
for i in range(5):
    print(i, nc.square_contact(pusher, 0.025, bp, by, sq[i]))
print(nc.push_box(bp, by, pusher, 0.025, jnp.array([0.001, 0.0]), sq, 0.296, 1.0))
print(nc.push_box(bp, by, pusher, 0.025, jnp.array([0.001, 0.0]), sq, 0.296, 0.0))

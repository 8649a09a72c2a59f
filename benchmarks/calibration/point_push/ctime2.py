import time, sys, jax, jax.numpy as jnp
import saferl.envs.safety_nav.point_push as pp
from saferl.envs.safety_nav import nav_contact as nc
env = pp.PointPush(); P = env.default_params()
s, _ = env.reset(jax.random.PRNGKey(0), P)
mode = sys.argv[1]
if mode == 'nocontact':
    pp._contact_substep = lambda c, ctrl, pil, params: pp.point_substep(c[:4], ctrl, params) + c[4:]
elif mode == 'nopush':
    nc.robot_pushes_box = lambda pos, heading, vel, w, h, d, bp, by, *a: (bp, by)
elif mode == 'noout':
    nc.robot_out_of_box = lambda pos, heading, vel, *a: (pos, vel)
    nc.robot_out_of_discs = lambda pos, heading, vel, *a: (pos, vel)
    nc.box_out_of_discs = lambda bp, by, bv, *a: (bp, by, bv, jnp.zeros((), bool))
t0 = time.process_time(); t = time.time(); c = jax.jit(env.step).lower(s, jnp.zeros(2), P).compile(); print(mode, 'step', time.time() - t, time.process_time() - t0)

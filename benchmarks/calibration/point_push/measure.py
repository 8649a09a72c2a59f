import time, numpy as np, jax, jax.numpy as jnp
from saferl.envs.safety_nav.point_push import PointPush, box_squares
from saferl.envs.safety_nav.point_goal import PointGoal, hash_uniform
from saferl.envs.safety_nav import nav_contact as nc
env = PointPush(); P = env.default_params()
V = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
N = 8192
s, _ = V(jax.random.split(jax.random.PRNGKey(3), N), P)
us = jax.vmap(lambda k: hash_uniform(k, (P.goal_tries, 2)))(jax.random.split(jax.random.PRNGKey(4), N))
goals = jax.jit(jax.vmap(lambda u, p, h, pl, b: env._sample_goal(u, p, h, pl, b, P)))(us, s.pos, s.hazards, s.pillars, s.box_pos)
others = np.concatenate([s.pos[:, None], s.hazards, s.pillars, s.box_pos[:, None]], axis=1)
keep = np.array([0.4, 0.4, 0.4, 0.3, 0.2]) + 0.4
viol = np.any(np.linalg.norm(np.asarray(goals)[:, None] - others, axis=-1) < keep - 1e-5, axis=1)
print('goal resample fallback rate (64 tries):', viol.mean())
# box-pillar overlap at reset
sq = box_squares(0.2)
dep = jax.jit(jax.vmap(lambda pl, b, y: jnp.max(jnp.stack([nc.square_contact(pl, 0.2, b, y, sq[i])[0] for i in range(5)]))))(s.pillars[:, 0], s.box_pos, s.box_yaw)
dep = np.asarray(dep)
print('box-pillar overlap at reset:', (dep > 0).mean(), 'max depth', dep.max())
step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, None)))
s1 = step(s, jnp.zeros((N, 2)), P)[0]
dep1 = np.asarray(jax.vmap(lambda pl, b, y: jnp.max(jnp.stack([nc.square_contact(pl, 0.2, b, y, sq[i])[0] for i in range(5)])))(s1.pillars[:, 0], s1.box_pos, s1.box_yaw))
moved = np.linalg.norm(np.asarray(s1.box_pos - s.box_pos), axis=1)
print('after one step: max overlap', dep1.max(), 'max box displacement', moved.max(), 'max box speed', np.linalg.norm(np.asarray(s1.box_vel), axis=1).max())
# throughput, 1024 envs, random actions
for name, e in [('PointPush1', env), ('PointGoal1', PointGoal())]:
    p = e.default_params(); n = 1024
    st, _ = jax.jit(jax.vmap(e.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(0), n), p)
    f = jax.jit(lambda st, k: jax.lax.scan(lambda st, kk: (jax.vmap(e.step, in_axes=(0, 0, None))(st, jax.random.uniform(kk, (n, 2), minval=-1, maxval=1), p)[0], None), st, jax.random.split(k, 100))[0])
    st = f(st, jax.random.PRNGKey(1)); jax.block_until_ready(st.pos)
    t = time.time(); st = f(st, jax.random.PRNGKey(2)); jax.block_until_ready(st.pos); dt = time.time() - t
    print(name, 'steps/s (1024 envs x 100 steps, CPU, loaded machine):', round(n * 100 / dt))

import sys, time, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, '/tmp/pushwork')
from controller import act
from saferl.envs.safety_nav.point_push import PointPush
policy, n_ep = sys.argv[1], int(sys.argv[2])
env = PointPush(); P = env.default_params()
reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None))); step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, None)))
s, _ = reset(jax.random.split(jax.random.PRNGKey(7), n_ep), P)
rng = np.random.default_rng(0)
R = np.zeros(n_ep); C = np.zeros(n_ep); S = np.zeros(n_ep)
t0 = time.time()
for t in range(1000):
    if policy == 'random':
        a = rng.uniform(-1, 1, (n_ep, 2))
    else:
        a = act(np.asarray(s.pos), np.asarray(s.heading), np.asarray(s.box_pos), np.asarray(s.goal))
    s, obs, r, c, term, trunc, info = step(s, jnp.asarray(a, jnp.float32), P)
    R += np.asarray(r); C += np.asarray(c); S += np.asarray(info['goal_reached'])
print(f'ours {policy}: return {R.mean():.3f} +- {R.std(ddof=1)/np.sqrt(n_ep):.3f} (sd {R.std(ddof=1):.3f}); cost {C.mean():.2f} +- {C.std(ddof=1)/np.sqrt(n_ep):.2f} (sd {C.std(ddof=1):.2f}); successes {S.mean():.2f}; {time.time()-t0:.0f}s')

import sys, time, numpy as np, jax, jax.numpy as jnp

from scipy.optimize import minimize
sys.path.insert(0, '/work/main')
from saferl.envs.safety_nav import car
D = np.load('fitdata.npz')
NAMES = ['wheel_friction', 'ball_friction', 'slip_speed', 'ball_rolling_drag', 'load_transfer_height', 'wheel_lateral_friction', 'yaw_inertia', 'cone_mix']
BASE = car.CarParams()
def rollout(p, actions):
    params = BASE.replace(**{k: p[i] for i, k in enumerate(NAMES)})
    def one(acts):
        def body(s, a):
            s = car.car_step(s, a, params)
            return s, jnp.stack([s.vel[0], s.yaw_rate])
        _, out = jax.lax.scan(body, car.car_at(jnp.zeros(2), 0.0), acts)
        return out
    return jax.vmap(one)(actions)
main = len(sys.argv) > 1 and not sys.argv[1].endswith('.npy')
w_rand = float(sys.argv[1]) if main else 1.0
w_yaw = float(sys.argv[2]) if main and len(sys.argv) > 2 else 0.2
@jax.jit
def loss(q):
    p = jnp.exp(q)
    o = rollout(p, jnp.asarray(D['A']))
    m = jnp.asarray(D['mask'])
    e = ((o[..., 0] - D['fwd'])**2 + (w_yaw * (o[..., 1] - D['wz']))**2) * m
    per_cond = jnp.sum(e, 1) / jnp.sum(m, 1)
    o2 = rollout(p, jnp.asarray(D['RA']))
    er = jnp.mean((o2[..., 0] - D['rfwd'])**2 + (w_yaw * (o2[..., 1] - D['rwz']))**2)
    return jnp.sum(per_cond) + w_rand * er * per_cond.shape[0]
if __name__ == '__main__':
  p0 = np.array([1.0, 1.0, 0.03, 0.4, 0.09, 1.0, 3.648e-4, 1.0])
  t = time.time(); print('loss0', float(loss(np.log(p0))), time.time() - t)
  q = np.log(p0)
  for _ in range(4):
      res = minimize(lambda q: float(loss(q)), q, method='Nelder-Mead', options=dict(maxiter=3000, xatol=1e-4, fatol=1e-8, adaptive=True))
      q = res.x; print(' restart', res.fun)
  p = np.exp(res.x); print('loss', res.fun, dict(zip(NAMES, p.round(5))), res.nit, time.time() - t)
  np.save(f'jfit_{w_rand}_{w_yaw}.npy', p)

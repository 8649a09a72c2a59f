import sys, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, '/work/main')
from saferl.envs.safety_nav import car
P = car.CarParams()
def roll(acts):
    def body(s, a):
        s = car.car_step(s, a, P); return s, jnp.stack([s.vel[0], s.vel[1], s.yaw_rate])
    return np.asarray(jax.lax.scan(body, car.car_at(jnp.zeros(2), 0.0), jnp.asarray(acts, jnp.float32))[1])
def const(a, n): return np.tile(np.asarray(a, float), (n, 1))
np.set_printoptions(precision=3, suppress=True)
o = roll(const((1, 1), 300)); print('full 1/5/25/50/100/300', o[[0, 4, 24, 49, 99, 299], 0])
print('full steps 1..12', o[:12, 0])
for u in [0.005, 0.01, 0.015]: print('lin', u, roll(const((u, u), 100))[-1, 0])
o = roll(const((-1, -1), 100)); print('reverse 1/5/25/100', o[[0, 4, 24, 99], 0])
o = roll(const((1, -1), 100)); print('spin 1/2/5/100', o[[0, 1, 4, 99], 2], 'fwd', o[-1, 0], 'lat', o[-1, 1])
o = roll(const((-1, 1), 100)); print('spin rl', o[-1, 2])
o = roll(const((1, 0), 150)); print('one wheel', o[-1])
o = roll(const((0.02, 0.01), 150)); print('asym', o[-1])
o = roll(np.r_[const((1, 1), 100), const((0, 0), 10)]); print('coast', o[99:106, 0])

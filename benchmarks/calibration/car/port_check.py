import sys, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, '/tmp/sg_car/work')
from saferl.envs.safety_nav import car
p = np.load('/tmp/sg_car/work/pfit.npy')
params = car.CarParams(wheel_friction=p[0], ball_friction=p[1], slip_speed=p[2], ball_rolling_drag=p[3], load_transfer_height=p[4], wheel_lateral_friction=p[5], yaw_inertia=3.648e-4)
step = jax.jit(car.car_step)
rng = np.random.default_rng(1)
A = rng.uniform(-1, 1, (1, 100, 2)) * np.array([[[1, 1]]]) ; A[0, :30] = [1, 1]; A[0, 30:40] = [1, -1]; A[0, 40:45] = [0.01, 0.003]
s = car.car_at(jnp.zeros(2), 0.3)
out = []
for t in range(100):
    s = step(s, jnp.asarray(A[0, t], jnp.float32), params)
    out.append([float(s.vel[0]), float(s.vel[1]), float(s.yaw_rate)])
out = np.array(out)
import importlib.util
spec = importlib.util.spec_from_file_location('model', '/tmp/sg_car/work/model.py'); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
ref = m.sim(list(p) + [1.0], A)[0]
print('max abs diff', np.abs(out - ref).max(0))
print(out[[0, 29, 35, 99]], ref[[0, 29, 35, 99]])

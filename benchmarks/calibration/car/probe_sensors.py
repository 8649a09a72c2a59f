import numpy as np, mujoco, safety_gymnasium as sg
np.set_printoptions(precision=3, suppress=True, linewidth=160)
env = sg.make('SafetyCarGoal0-v0')
o, _ = env.reset(seed=0)
t = env.unwrapped.task; m, d = t.model, t.data
yaw = 0.7
d.qpos[3:7] = [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]; d.qvel[:] = 0; mujoco.mj_forward(m, d)
acc = []
for k in range(60):
    a = (1, 1) if k < 40 else (1, -1)
    o, *_ = env.step(np.array(a, float))
    R = d.body('agent').xmat.reshape(3, 3); y = np.arctan2(R[1, 0], R[0, 0])
    if k in (0, 1, 39, 59):
        print(k + 1, 'yaw', round(y, 3), 'acc', o[0:3], 'vel', o[3:6], 'gyro', o[6:9], 'mag', o[9:12], 'pred mag', -0.5 * np.sin(y), -0.5 * np.cos(y))
        print('    ballangvel', o[12:15], 'ballquat\n', o[15:24].reshape(3, 3))
    acc.append(o[0:3])
acc = np.array(acc); print('accelerometer mean steps 20-40', acc[20:40].mean(0), 'std', acc[20:40].std(0))

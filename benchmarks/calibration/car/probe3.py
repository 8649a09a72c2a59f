import numpy as np, mujoco, safety_gymnasium as sg
env = sg.make('SafetyCarGoal0-v0')
def run(actions, seed=0, n=300, reset_state=None):
    o,_ = env.reset(seed=seed)
    t = env.unwrapped.task; m, d = t.model, t.data
    out = []
    for k in range(n):
        o, r, c, te, tr, info = env.step(np.array(actions(k), float))
        R = d.body('agent').xmat.reshape(3,3)
        vb = R.T @ d.qvel[:3]
        yaw = np.arctan2(R[1,0], R[0,0])
        out.append(np.r_[d.qpos[:2], yaw, vb, d.qvel[5], d.qvel[6:8], o[:24]])
    return np.array(out)
np.set_printoptions(precision=4, suppress=True, linewidth=150)
steps = np.array([1,5,25,50,100,300])
import sys
runs = np.array([run(lambda k: (1,1), seed=s) for s in range(12)])
speed = np.linalg.norm(runs[:,:,3:5], axis=2)
print('full throttle speed mean', speed.mean(0)[steps-1], 'std', speed.std(0)[steps-1])
print('forward(-vb_y) mean', (-runs[:,:,4]).mean(0)[steps-1])
print('mean speed steps 1..12', speed.mean(0)[:12])
print('speed average over steps 50..300', speed[:,49:].mean(), speed[:,49:].std(), 'per-seed', speed[:,49:].mean(1))
print('wheel speeds mean 50..300', runs[:,49:,7:9].mean())
np.save('full.npy', runs)

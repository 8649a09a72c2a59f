import numpy as np, mujoco, safety_gymnasium as sg
env = sg.make('SafetyCarGoal0-v0')
def run(actions, seed=0, n=300):
    o,_ = env.reset(seed=seed)
    t = env.unwrapped.task; m, d = t.model, t.data
    out = []
    for k in range(n):
        o, r, c, te, tr, info = env.step(np.array(actions(k), float))
        R = d.body('agent').xmat.reshape(3,3)
        vb = R.T @ d.qvel[:3]
        yaw = np.arctan2(R[1,0], R[0,0])
        out.append(np.r_[d.qpos[:2], yaw, vb, d.qvel[5], d.qvel[6:8], o[:24], np.asarray(actions(k),float)])
    return np.array(out)
S = 8
def save(name, act, n):
    runs = np.array([run(act, seed=s, n=n) for s in range(S)]); np.save(name+'.npy', runs)
save('fwd_spin', lambda k: (1,1) if k < 50 else (1,-1), 80)
save('spin_fwd', lambda k: (1,-1) if k < 50 else (1,1), 80)
save('fwd_rev', lambda k: (1,1) if k < 50 else (-1,-1), 100)
# random policy with per-seed fixed action sequences
rng = np.random.default_rng(0)
A = rng.uniform(-1, 1, (S, 1000, 2))
runs = np.array([run(lambda k, s=s: A[s, k], seed=s, n=1000) for s in range(S)]); np.save('random.npy', runs); np.save('random_actions.npy', A)

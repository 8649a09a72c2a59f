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
        out.append(np.r_[d.qpos[:2], yaw, vb, d.qvel[5], d.qvel[6:8], o[:24]])
    return np.array(out)
np.set_printoptions(precision=4, suppress=True, linewidth=160)
S = 8
def stats(name, act, n=150):
    runs = np.array([run(act, seed=s, n=n) for s in range(S)])
    np.save(name + '.npy', runs)
    fwd = -runs[:,:,4]; lat = runs[:,:,3]; wz = runs[:,:,6]
    print(name)
    print('  fwd mean', fwd.mean(0)[[0,1,2,4,9,24,49,99,n-1]], 'std', fwd.std(0)[[0,4,24,n-1]])
    print('  lat mean', lat.mean(0)[[0,4,24,n-1]], ' wz mean', wz.mean(0)[[0,1,2,4,9,24,49,n-1]], 'std', wz.std(0)[[0,4,n-1]])
    print('  wheels late', runs[:,n//2:,7:9].mean((0,1)), 'ballangvel late', runs[:,n//2:,21:24].mean((0,1)), runs[:,n//2:,21:24].std((0,1)))
    return runs
stats('coast', lambda k: (1,1) if k < 100 else (0,0), n=160)
stats('reverse', lambda k: (-1,-1))
stats('spin_lr', lambda k: (1,-1))
stats('spin_rl', lambda k: (-1,1))
for u in [0.005, 0.01, 0.015, 0.02]:
    stats(f'lin{u}', lambda k, u=u: (u,u), n=150)
stats('left_only', lambda k: (1,0), n=200)
stats('asym', lambda k: (0.02,0.01), n=200)

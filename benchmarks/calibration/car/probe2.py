import numpy as np, mujoco, safety_gymnasium as sg
env = sg.make('SafetyCarGoal0-v0')
def run(actions, seed=0, n=300):
    o,_ = env.reset(seed=seed)
    t = env.unwrapped.task; m, d = t.model, t.data
    out = []
    for k in range(n):
        a = actions(k)
        o, r, c, te, tr, info = env.step(np.array(a, float))
        q = d.qpos; v = d.qvel
        R = d.body('agent').xmat.reshape(3,3)
        vb = R.T @ v[:3]
        yaw = np.arctan2(R[1,0], R[0,0])
        out.append(dict(pos=q[:3].copy(), yaw=yaw, vb=vb, w=v[3:6].copy(), obs=o.copy(), wheels=v[6:8].copy(), ball=v[8:11].copy(), time=d.time))
    return out
np.set_printoptions(precision=4, suppress=True)
res = run(lambda k: (1,1))
for k in [1,2,3,5,10,25,50,100,200,300]:
    s = res[k-1]
    print(k, 'speed', np.linalg.norm(s['vb'][:2]).round(4), 'vb', s['vb'], 'wz', s['w'][2].round(4), 'z', s['pos'][2].round(4), 'wheels', s['wheels'], 't', round(s['time'],4))
print('obs sensors at 100', res[99]['obs'][:24])
print('rear ball angvel (qvel) at 100', res[99]['ball'])

import numpy as np, safety_gymnasium, mujoco
np.set_printoptions(precision=4, suppress=True, linewidth=200)
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
def state():
    d = task.data
    pos = task.agent.pos.copy(); vel = task.agent.vel.copy(); mat = task.agent.mat
    heading = np.arctan2(mat[1, 0], mat[0, 0])
    fwd = vel[0]*np.cos(heading) + vel[1]*np.sin(heading)
    lat = -vel[0]*np.sin(heading) + vel[1]*np.cos(heading)
    return dict(pos=pos, vel=vel, heading=heading, fwd=fwd, lat=lat, w=d.qvel[10], ql=d.qpos[7], qr=d.qpos[9], yaw=d.qvel[5])
obs, _ = env.reset(seed=1)
s0 = state(); print('reset', s0)
rows = []
for t in range(1, 301):
    obs, r, c, te, tr, info = env.step(np.array([20.0, 0.0]))
    s = state(); rows.append(s)
    if t in (1, 2, 3, 4, 5, 10, 15, 20, 25, 26, 27, 28, 30, 40, 50, 100, 300):
        print(t, 'fwd %.4f lat %.4f w*r %.4f |v| %.4f z %.4f yaw %.4f ql %.4f' % (s['fwd'], s['lat'], s['w']*0.05, np.hypot(*s['vel'][:2]), s['pos'][2], s['yaw'], s['ql']))
print('heading drift', rows[-1]['heading'] - s0['heading'])

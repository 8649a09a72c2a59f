import numpy as np, mujoco, safety_gymnasium as sg
np.set_printoptions(precision=3, suppress=True, linewidth=160)
env = sg.make('SafetyCarButton1-v0')
o, _ = env.reset(seed=3)
t = env.unwrapped.task; m, d = t.model, t.data
agent_geoms = set(m.geom(n).id for n in t.agent.body_info.geom_names)
def touching(name):
    gid = m.geom(name).id
    return any((c.geom1 == gid and c.geom2 in agent_geoms) or (c.geom2 == gid and c.geom1 in agent_geoms) for c in d.contact[:d.ncon])
# 1) drive at full speed into button2 from 1 m away, heading straight at it (forward = body -y)
b = np.array(t.buttons.pos[2][:2]); print('button2', b, 'goal button', t.buttons.goal_button)
bb = np.array(t.buttons.pos[0][:2])
start = bb + np.array([0.0, 0.8])   # button0 is 0.8 m to -y of the car -> drive forward (-y) into it (yaw 0)
d.qpos[0:3] = [*start, 0.1]; d.qpos[3:7] = [1, 0, 0, 0]; d.qvel[:] = 0
# move gremlins/hazards out of the way is not possible easily; just record
mujoco.mj_forward(m, d)
for k in range(60):
    o, r, c, te, tr, info = env.step(np.array([1.0, 1.0]))
    p = d.qpos[:2]; dist = np.linalg.norm(p - bb)
    if k % 3 == 0 or touching('button0'):
        print(k + 1, 'dist to button0', round(dist, 4), 'touch', touching('button0'), 'cost', c, {kk: v for kk, v in info.items() if kk.startswith('cost_')}, 'fwdspeed', round(-(d.body('agent').xmat.reshape(3,3).T @ d.qvel[:3])[1], 3), 'yaw', round(np.arctan2(d.body('agent').xmat[3], d.body('agent').xmat[0]), 3))

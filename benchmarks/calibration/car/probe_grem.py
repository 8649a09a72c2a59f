import numpy as np, mujoco, safety_gymnasium as sg
np.set_printoptions(precision=4, suppress=True, linewidth=160)
env = sg.make('SafetyCarButton1-v0')
o, _ = env.reset(seed=3)
t = env.unwrapped.task; m, d = t.model, t.data
for k, (pl, ko) in t.placements_conf.placements.items(): print(k, pl, ko, t.world_info.layout[k])
print('extents', t.placements_conf.extents, 'goal button', t.buttons.goal_button, 'timer', t.buttons.timer)
lay = np.array([t.world_info.layout[f'gremlin{i}'] for i in range(4)])
errs = []
for step in range(60):
    pos0 = np.array(t.gremlins.pos)[:, :2]
    o, r, c, te, tr, info = env.step(np.zeros(2))
    pos = np.array(t.gremlins.pos)
    T = d.time
    # fit phase: find angle of (pos - lay)
    rel = pos[:, :2] - lay
    ang = np.arctan2(rel[:, 0], rel[:, 1])  # sin, cos convention
    rad = np.linalg.norm(rel, axis=1)
    if step < 6 or step % 10 == 0:
        print(step + 1, 'time', round(T, 3), 'radius', rad.round(4), 'phase', ang.round(4), 'lag', ((T - ang + np.pi) % (2*np.pi) - np.pi).round(4), 'z', pos[:, 2].round(3))
    lidar = o[72:88]
print('mocap geom pos', [m.geom_pos[m.geom(f"gremlin{i}mocap").id] for i in range(1)])

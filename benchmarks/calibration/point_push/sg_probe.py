"""Probe Safety-Gymnasium PointPush1 contact behaviour (throwaway measurement)."""
import sys, numpy as np, mujoco, safety_gymnasium

env = safety_gymnasium.make('SafetyPointPush1-v0')
env.reset(seed=0)
task = env.unwrapped.task
m, d = task.model, task.data
pil = m.body('pillar0').id
haz = [m.body('hazard0').id, m.body('hazard1').id]

def setup(robot=(0, 0.0003), heading=0.0, box=(0.7, 0.0), box_yaw=0.0, pillar=(5, 5)):
    global m, d
    env.reset(seed=1)
    m, d = task.model, task.data
    m.body_pos[pil][:2] = pillar
    for i, h in enumerate(haz):
        m.body_pos[h][:2] = (-5 - i, -5)
    d.qpos[:] = 0; d.qvel[:] = 0
    ag = m.body('agent').id
    m.body_pos[ag][:2] = robot; m.body_quat[ag] = (1, 0, 0, 0)
    d.qpos[0:3] = (0.0, 0.0, heading)
    d.qpos[3:6] = (box[0], box[1], 0.2)
    d.qpos[6:10] = (np.cos(box_yaw / 2), 0, 0, np.sin(box_yaw / 2))
    mujoco.mj_forward(m, d)
    task.update_world() if False else None
    # reset the reward baselines to the new layout
    task.last_dist_box = task.dist_box(); task.last_box_goal = task.dist_box_goal()

def box_state():
    q = d.qpos[6:10]
    yaw = 2 * np.arctan2(q[3], q[0])
    return d.qpos[3:6].copy(), yaw

def run(action, n):
    out = []
    for _ in range(n):
        env.step(np.asarray(action, float))
        b, yaw = box_state()
        out.append((d.xpos[1][0], d.xpos[1][1], d.qpos[2], b[0], b[1], b[2], yaw, np.hypot(*d.qvel[:2])))
    return np.array(out)

np.set_printoptions(precision=4, suppress=True, linewidth=150)
which = sys.argv[1]
if which == 'c':  # floor contact force distribution of the box at rest
    setup()
    for _ in range(50): mujoco.mj_step(m, d)
    bid = m.body('push_box').id
    rs, fs = [], []
    for i in range(d.ncon):
        c = d.contact[i]
        if m.geom_bodyid[c.geom2] == bid or m.geom_bodyid[c.geom1] == bid:
            f = np.zeros(6); mujoco.mj_contactForce(m, d, i, f)
            r = np.hypot(*(c.pos[:2] - d.qpos[3:5])); rs.append(r); fs.append(f[0])
    rs, fs = np.array(rs), np.array(fs)
    print('n', len(rs), 'sumN', fs.sum(), 'weight', 1.28e-4 * 9.81, 'c = sum N r / sum N', (fs * rs).sum() / fs.sum())
    print(np.c_[rs, fs])
elif which == 'push':
    for yaw, off in [(0.0, 0.0), (0.0, 0.1), (0.0, 0.2), (np.pi / 4, 0.0), (0.3, 0.0)]:
        setup(box=(0.8, off), box_yaw=yaw)
        tr = run([1, 0], 100)
        print('yaw0', yaw, 'off', off)
        for k in [0, 4, 9, 19, 29, 49, 99]: print(k + 1, tr[k])
    setup(box=(0.8, 0.0))
    tr = run([1, 0], 40); print('after 40 full:', tr[-1])
    tr = run([0, 0], 30); print('then 30 zero:', tr[[0, 4, 9, 29]])
    tr = run([-1, 0], 30); print('then 30 back:', tr[[0, 4, 9, 29]])
elif which == 'pillar':
    for py in [0.0, 0.1, 0.2, 0.25]:
        setup(pillar=(0.7, py))
        tr = run([1, 0], 150)
        dist = np.hypot(tr[:, 0] - 0.7, tr[:, 1] - py)
        print('pillar y', py, 'min dist', dist.min(), 'final robot', tr[-1, :3], 'speed', tr[-1, 7])
        for k in [9, 19, 29, 49, 99, 149]: print('  ', k + 1, tr[k, :3], dist[k], tr[k, 7])
elif which == 'boxpillar':
    setup(box=(0.8, 0.0), pillar=(1.4, 0.0))
    tr = run([1, 0], 150)
    for k in [9, 19, 29, 49, 99, 149]: print(k + 1, tr[k])
elif which == 'turn':
    for turn in [0.3, 1.0]:
        setup(box=(0.8, 0.0))
        run([1, 0], 40)
        tr = run([1, turn], 100)
        rel = tr[:, 3:5] - tr[:, 0:2]
        print('turn', turn)
        for k in [9, 24, 49, 74, 99]:
            print('  ', k + 1, 'robot', tr[k, :3], 'box-robot dist', np.linalg.norm(rel[k]), 'bearing rel heading', np.arctan2(rel[k, 1], rel[k, 0]) - tr[k, 2], 'box yaw', tr[k, 6])
elif which == 'spin':
    setup(robot=(0.45, 0.0003), box=(0.8, 0.0))
    for k in range(8):
        tr = run([0.0, 1.0], 2); print(k, tr[-1])

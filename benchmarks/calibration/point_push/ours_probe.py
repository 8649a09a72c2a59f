import sys, time, numpy as np, jax, jax.numpy as jnp
from saferl.envs.safety_nav.point_push import PointPush
env = PointPush(); P = env.default_params()
RESET = jax.jit(env.reset); STEP = jax.jit(env.step)
base, _ = RESET(jax.random.PRNGKey(0), P)
def setup(robot=(0, 0.0003), heading=0.0, box=(0.8, 0.0), box_yaw=0.0, pillar=(5, 5)):
    f = lambda x: jnp.asarray(x, jnp.float32)
    return base.replace(pos=f(robot), heading=f(heading), vel=f([0, 0]), ang_vel=f(0.), box_pos=f(box), box_yaw=f(box_yaw),
                        box_vel=f([0, 0]), pillars=f([pillar]), hazards=f([[-5, -5], [-6, -5]]), goal=f([-3, 3]))
def run(s, a, n):
    out = []
    for _ in range(n):
        s = STEP(s, jnp.asarray(a, jnp.float32), P)[0]
        out.append((s.pos[0], s.pos[1], s.heading, s.box_pos[0], s.box_pos[1], 0.2, (s.box_yaw + np.pi) % (2*np.pi) - np.pi, jnp.linalg.norm(s.vel)))
    return s, np.array(out)
np.set_printoptions(precision=4, suppress=True, linewidth=150)
which = sys.argv[1]
if which == 'push':
    for yaw, off in [(0.0, 0.0), (0.0, 0.1), (0.0, 0.2), (np.pi / 4, 0.0), (0.3, 0.0)]:
        s, tr = run(setup(box=(0.8, off), box_yaw=yaw), [1, 0], 100)
        print('yaw0', yaw, 'off', off)
        for k in [0, 4, 9, 19, 29, 49, 99]: print(k + 1, tr[k])
    s, tr = run(setup(), [1, 0], 40); print('after 40 full:', tr[-1])
    s, tr = run(s, [0, 0], 30); print('then 30 zero:', tr[[0, 4, 9, 29]])
    s, tr = run(s, [-1, 0], 30); print('then 30 back:', tr[[0, 4, 9, 29]])
elif which == 'pillar':
    for py in [0.0, 0.1, 0.2, 0.25]:
        s, tr = run(setup(pillar=(0.7, py)), [1, 0], 150)
        dist = np.hypot(tr[:, 0] - 0.7, tr[:, 1] - py)
        print('pillar y', py, 'min dist', dist.min(), 'final robot', tr[-1, :3], 'speed', tr[-1, 7])
        for k in [9, 19, 29, 49, 99, 149]: print('  ', k + 1, tr[k, :3], dist[k], tr[k, 7])
elif which == 'boxpillar':
    s, tr = run(setup(box=(0.8, 0.0), pillar=(1.4, 0.0)), [1, 0], 150)
    for k in [9, 19, 29, 49, 99, 149]: print(k + 1, tr[k])
if which == 'trace':
    s = setup(box=(0.8, 0.1))
    s, tr = run(s, [1, 0], 100)
    for k in range(45, 100, 3): print(k + 1, tr[k])
if which == 'jam':
    from saferl.envs.safety_nav import nav_contact as nc
    from saferl.envs.safety_nav.point_push import box_squares, robot_discs
    s = setup(box=(0.8, 0.1))
    s, tr = run(s, [1, 0], 70)
    sq = box_squares(0.2); discs = robot_discs(P)
    cents = nc.robot_disc_centres(s.pos, s.heading, discs)
    for j in range(3):
        for i in range(5):
            dep, nrm, lev = nc.square_contact(cents[j], discs[j, 2], s.box_pos, s.box_yaw, sq[i])
            if dep > -0.02: print(j, i, float(dep), nrm, lev)
    print(s.pos, s.vel, s.box_pos, s.box_yaw)
if which == 'jam2':
    from saferl.envs.safety_nav import nav_contact as nc
    from saferl.envs.safety_nav.point_push import box_squares, robot_discs, point_substep
    s = setup(box=(0.8, 0.1))
    s, tr = run(s, [1, 0], 70)
    sq = box_squares(0.2); discs = robot_discs(P)
    def depths(pos, heading, bp, by):
        cents = nc.robot_disc_centres(pos, heading, discs)
        return [(j, i, round(float(nc.square_contact(cents[j], discs[j, 2], bp, by, sq[i])[0]), 6)) for j in range(3) for i in range(5) if nc.square_contact(cents[j], discs[j, 2], bp, by, sq[i])[0] > -1e-3]
    pos, heading, vel, w = point_substep((s.pos, s.heading, s.vel, s.ang_vel), jnp.array([1., 0.]), P)
    print('after dyn', pos, vel, depths(pos, heading, s.box_pos, s.box_yaw))
    bp, by = s.box_pos, s.box_yaw
    for fr in (1.0, 0.0):
        for j in range(3):
            c = nc.robot_disc_centres(pos, heading, discs)[j]
            bp2, by2 = nc.push_box(bp, by, c, discs[j, 2], 0.002 * vel, sq, 0.296, fr)
            print('fr', fr, 'disc', j, 'box moved', bp2 - bp, by2 - by, depths(pos, heading, bp2, by2))
            bp, by = bp2, by2
if which == 'turn':
    for turn in [0.3, 1.0]:
        s, _ = run(setup(box=(0.8, 0.0)), [1, 0], 40)
        s, tr = run(s, [1, turn], 100)
        rel = tr[:, 3:5] - tr[:, 0:2]
        print('turn', turn)
        for k in [9, 24, 49, 74, 99]:
            print('  ', k + 1, 'robot', tr[k, :3], 'box-robot dist', np.linalg.norm(rel[k]), 'bearing rel heading', np.arctan2(rel[k, 1], rel[k, 0]) - tr[k, 2], 'box yaw', tr[k, 6])
if which == 'spin':
    s = setup(robot=(0.45, 0.0), box=(0.8, 0.0))   # nose discs touching the notch floor (0.35 apart)
    for k in range(8):
        s, tr = run(s, [0.0, 1.0], 2)
        print(k, tr[-1])
if which == 'gripdbg':
    from saferl.envs.safety_nav import nav_contact as nc
    from saferl.envs.safety_nav.point_push import box_squares, robot_discs
    sq = box_squares(0.2); discs = robot_discs(P)
    s = setup(box=(0.8, 0.1))
    for k in range(40):
        s, tr = run(s, [1, 0], 1)
        rows = nc._pairs(discs, sq)
        cents = nc.robot_disc_centres(s.pos, s.heading, rows[:, :3])
        d, n, l = nc.square_contact(cents, rows[:, 2], s.box_pos, s.box_yaw, rows[:, 3:6])
        idx = np.where(np.asarray(d) > -2e-3)[0]
        if len(idx): print(k, [(int(i // 5), int(i % 5), round(float(d[i]), 4), np.round(np.asarray(n[i]), 2)) for i in idx], np.round(float(s.box_yaw), 3))
if which == 'gripdbg2':
    from saferl.envs.safety_nav import nav_contact as nc
    from saferl.envs.safety_nav.point_push import box_squares, robot_discs, point_substep
    sq = box_squares(0.2); discs = robot_discs(P)
    s = setup(box=(0.8, 0.1))
    s, tr = run(s, [1, 0], 32)
    c = (s.pos, s.heading, s.vel, s.ang_vel)
    for _ in range(10): c = point_substep(c, jnp.array([1.0, 0.0]), P)
    rows = nc._pairs(discs, sq)
    cents = nc.robot_disc_centres(c[0], c[1], rows[:, :3])
    d, n, l = nc.square_contact(cents, rows[:, 2], s.box_pos, s.box_yaw, rows[:, 3:6])
    idx = np.where(np.asarray(d) > -2e-3)[0]
    print([(int(i // 5), int(i % 5), round(float(d[i]), 4), np.round(np.asarray(n[i]), 2), np.round(np.asarray(l[i]), 3)) for i in idx])

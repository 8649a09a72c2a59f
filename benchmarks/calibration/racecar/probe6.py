import numpy as np, safety_gymnasium, mujoco, json
np.set_printoptions(precision=4, suppress=True, linewidth=220)
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
out = {}
# reverse steady states
for thr, dc in [(-20, 0.3), (-8, 0.3), (-8, 0.785), (-20, 0.785)]:
    env.reset(seed=3); rec = []
    for t in range(250):
        env.step(np.array([thr, dc]))
        if t >= 100:
            d = task.data; mat = task.agent.mat; h = np.arctan2(mat[1, 0], mat[0, 0]); vel = task.agent.vel
            rec.append([0.5*(d.qpos[7]+d.qpos[9]), d.qvel[10]*0.05, vel[0]*np.cos(h)+vel[1]*np.sin(h), -vel[0]*np.sin(h)+vel[1]*np.cos(h), d.qvel[5]])
    m = np.mean(rec, 0); print('reverse', thr, dc, 'delta %.3f wr %.3f fwd %.3f lat %.3f yaw %.3f' % tuple(m), 'kappa', m[4]/m[2], 'Leff', np.tan(m[0])/(m[4]/m[2]))
# transients: per env step, full record, including sensors
runs = {}
for name, seq in {
    'straight20': [(20, 0.0)] * 60,
    'straight8': [(8, 0.0)] * 60,
    'reverse20': [(-20, 0.0)] * 60,
    'brake': [(20, 0.0)] * 40 + [(0, 0.0)] * 40 + [(-20, 0.0)] * 40,
    'steer_still_785': [(0, 0.785)] * 30,
    'steer_still_03': [(0, 0.3)] * 30,
    'turn20_03': [(20, 0.0)] * 40 + [(20, 0.3)] * 60 + [(20, -0.3)] * 60,
    'turn12_05': [(12, 0.0)] * 40 + [(12, 0.5)] * 60 + [(12, 0.0)] * 40,
    'turn20_785': [(20, 0.0)] * 40 + [(20, 0.785)] * 60,
    'turn8_02': [(8, 0.0)] * 40 + [(8, 0.2)] * 60 + [(8, 0.6)] * 60,
    'random': [tuple(x) for x in np.random.default_rng(0).uniform([-20, -0.785], [20, 0.785], (200, 2))],
    'slowrandom': [tuple(x) for x in np.repeat(np.random.default_rng(1).uniform([-20, -0.785], [20, 0.785], (20, 2)), 10, axis=0)],
}.items():
    obs, _ = env.reset(seed=5)
    def snap():
        d = task.data; mat = task.agent.mat
        return dict(pos=task.agent.pos.tolist(), vel=task.agent.vel.tolist(), heading=float(np.arctan2(mat[1, 0], mat[0, 0])),
                    w=float(d.qvel[10]), dl=float(d.qpos[7]), dr=float(d.qpos[9]), yaw=float(d.qvel[5]), qvel=d.qvel.tolist(), qpos=d.qpos.tolist())
    rec = [dict(snap(), obs=obs.tolist(), act=[0, 0], reward=0.0, cost=0.0)]
    for a in seq:
        obs, r, c, te, tr, info = env.step(np.array(a, float))
        rec.append(dict(snap(), obs=obs.tolist(), act=list(map(float, a)), reward=float(r), cost=float(c)))
    runs[name] = rec
json.dump(runs, open('runs.json', 'w'))

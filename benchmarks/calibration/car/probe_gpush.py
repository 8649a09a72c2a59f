import numpy as np, mujoco, safety_gymnasium as sg
np.set_printoptions(precision=4, suppress=True, linewidth=160)
env = sg.make('SafetyCarButton1-v0')
o, _ = env.reset(seed=3)
t = env.unwrapped.task; m, d = t.model, t.data
agent_geoms = set(m.geom(n).id for n in t.agent.body_info.geom_names)
gid = m.geom('gremlin1obj').id
lay = np.array(t.world_info.layout['gremlin1'])
# park the car on gremlin1's circle at phase ~0.6 rad (the gremlin reaches it at t ~ 0.6 + lag)
phase = 0.8
spot = lay + 0.35 * np.array([np.sin(phase), np.cos(phase)])
d.qpos[0:3] = [*spot, 0.1]; d.qpos[3:7] = [1, 0, 0, 0]; d.qvel[:] = 0; mujoco.mj_forward(m, d)
start = d.qpos[:2].copy()
for k in range(60):
    o, r, c, te, tr, info = env.step(np.zeros(2))
    touch = any((cc.geom1 == gid and cc.geom2 in agent_geoms) or (cc.geom2 == gid and cc.geom1 in agent_geoms) for cc in d.contact[:d.ncon])
    g = np.array(t.gremlins.pos[1][:2]); expected = lay + 0.3488 * np.array([np.sin(d.time - 0.0898), np.cos(d.time - 0.0898)])
    if k % 4 == 0 or touch:
        print(k + 1, 'touch', touch, 'car moved', np.linalg.norm(d.qpos[:2] - start).round(4), 'gremlin off its orbit', np.linalg.norm(g - expected).round(4), 'cost_gremlins', info.get('cost_gremlins'))

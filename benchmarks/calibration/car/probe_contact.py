import numpy as np, mujoco, safety_gymnasium as sg
np.set_printoptions(precision=4, suppress=True, linewidth=160)
env = sg.make('SafetyCarButton1-v0')
o, _ = env.reset(seed=3)
t = env.unwrapped.task; m, d = t.model, t.data
agent_geoms = set(m.geom(n).id for n in t.agent.body_info.geom_names)
def touching(geom_name):
    gid = m.geom(geom_name).id
    for c in d.contact[:d.ncon]:
        if (c.geom1 == gid and c.geom2 in agent_geoms) or (c.geom2 == gid and c.geom1 in agent_geoms):
            return True
    return False
# put the car at origin, yaw 0, resting height
q0 = d.qpos.copy()
def place_car(yaw=0.0):
    d.qpos[:] = q0; d.qpos[0:3] = [0, 0, 0.1]; d.qpos[3:7] = [np.cos(yaw/2), 0, 0, np.sin(yaw/2)]; d.qvel[:] = 0
bid = m.body('button0').id
def thresh(geom, body, angle, z=None, quat=None):
    lo, hi = 0.0, 0.6
    for _ in range(30):
        mid = (lo + hi) / 2
        m.body_pos[body][:2] = mid * np.cos(angle), mid * np.sin(angle)
        if quat is not None: m.body_quat[body] = quat
        place_car(); mujoco.mj_forward(m, d)
        if touching(geom): lo = mid
        else: hi = mid
    return lo
angles = np.linspace(0, 2*np.pi, 24, endpoint=False)
th = np.array([thresh('button0', bid, a) for a in angles])
print('button contact threshold vs angle (body frame angle from +x):')
for a, v in zip(angles, th): print(f'  {np.degrees(a):6.1f} deg  {v:.4f}')
print('mean', th.mean(), 'min', th.min(), 'max', th.max())
jid = m.body('gremlin0obj').jntadr[0]; qa = m.jnt_qposadr[jid]
gid = m.geom('gremlin0obj').id
def thresh_g(angle, gyaw, z=0.2):
    lo, hi = 0.0, 0.8
    for _ in range(30):
        mid = (lo + hi) / 2
        place_car()
        d.qpos[qa:qa+3] = [mid*np.cos(angle), mid*np.sin(angle), z]
        d.qpos[qa+3:qa+7] = [np.cos(gyaw/2), 0, 0, np.sin(gyaw/2)]
        mujoco.mj_forward(m, d)
        if touching('gremlin0obj'): lo = mid
        else: hi = mid
    return lo
for gyaw in [0.0, np.pi/4]:
    tg = np.array([thresh_g(a, gyaw) for a in angles])
    print('gremlin yaw', gyaw, 'thresholds', tg.round(3), 'mean', tg.mean().round(4))
tg = np.array([thresh_g(a, 0.0, z=0.1) for a in angles]); print('gremlin at z .1 (start)', tg.round(3), tg.mean())

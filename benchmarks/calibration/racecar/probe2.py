import numpy as np, safety_gymnasium, mujoco
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
obs, info = env.reset(seed=0)
m = task.model; d = task.data
print('actuator gear', m.actuator_gear[:, 0], 'dyntype', m.actuator_dyntype, 'biastype', m.actuator_biastype)
print('eq', m.eq_type, m.eq_data[:, :5], m.eq_solref, m.eq_solimp)
print('opt solref', m.geom_solref[0], m.geom_solimp[0], 'o_margin', m.opt.o_margin)
# mass matrix at rest
M = np.zeros((m.nv, m.nv)); mujoco.mj_fullM(m, M, d.qM)
np.set_printoptions(precision=6, suppress=True, linewidth=200)
print(M)
for b in range(m.nbody):
    print(b, mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b), m.body_mass[b], m.body_inertia[b], d.xipos[b])
print('agent xpos', d.body('agent').xpos, 'site', d.site('agent').xpos)
print('subtree com', d.body('agent').subtree_com)

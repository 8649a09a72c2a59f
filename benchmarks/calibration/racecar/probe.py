import numpy as np, safety_gymnasium, mujoco
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped
obs, info = env.reset(seed=0)
task = u.task
eng = task.engine if hasattr(task, 'engine') else None
print(type(u), type(task))
print([a for a in dir(task) if not a.startswith('__')][:200])
m = task.model; d = task.data
print('nq nv nu', m.nq, m.nv, m.nu, 'timestep', m.opt.timestep, 'integrator', m.opt.integrator)
for j in range(m.njnt):
    print(j, mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j), m.jnt_type[j], m.jnt_qposadr[j], m.jnt_dofadr[j], m.dof_damping[m.jnt_dofadr[j]], m.dof_armature[m.jnt_dofadr[j]])
print('act gain', m.actuator_gainprm[:, :3], 'bias', m.actuator_biasprm[:, :3], 'force', m.actuator_forcerange, m.actuator_ctrlrange)
print('mass', m.body_subtreemass[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, 'agent')])
print('geom friction', set(map(tuple, m.geom_friction)), 'condim', set(m.geom_condim))
print('opt', m.opt.cone, m.opt.impratio, m.opt.noslip_iterations, m.opt.gravity, m.opt.magnetic)
print('frameskip', task.sim_conf.frameskip_binom_n if hasattr(task,'sim_conf') else None)

import numpy as np, mujoco, safety_gymnasium as sg
env = sg.make('SafetyCarGoal0-v0')
o,_ = env.reset(seed=0)
t = env.unwrapped.task
print(list(t.obs_info.obs_space_dict.keys()))
m, d = t.model, t.data
print('timestep', m.opt.timestep, 'integrator', m.opt.integrator, 'ncon', d.ncon)
for i in range(m.ngeom):
    g = m.geom(i)
    print(i, g.name, m.geom_type[i], m.geom_size[i], m.geom_friction[i], m.geom_condim[i], 'body', m.geom_bodyid[i], m.geom_solref[i], m.geom_solimp[i])
print('opt', m.opt.cone, m.opt.noslip_iterations, m.opt.impratio, m.opt.o_solref, m.opt.gravity)
for b in range(m.nbody):
    print('body', m.body(b).name, m.body_mass[b], m.body_inertia[b], m.body_ipos[b])
print('jnt damping', m.dof_damping, 'armature', m.dof_armature, 'frictionloss', m.dof_frictionloss)
print('qpos', d.qpos)
print(t.agent.body_info.geom_names)

import numpy as np, mujoco, safety_gymnasium as sg
env = sg.make('SafetyCarGoal0-v0'); env.reset(seed=0)
t=env.unwrapped.task; m,d=t.model,t.data
d.qpos[3:7]=[1,0,0,0]; d.qvel[:]=0; mujoco.mj_forward(m,d)
M=np.zeros((m.nv,m.nv)); mujoco.mj_fullM(m,M,d.qM)
print('M diag', np.diag(M)[:6]); print('total mass', M[0,0])
b = m.body('agent').id
com = d.subtree_com[b]; print('subtree com', com, 'body pos', d.xpos[b])
dxy = com[:2]-d.xpos[b][:2]
print('Izz about com', M[5,5]-M[0,0]*(dxy**2).sum())
for _ in range(50): mujoco.mj_step(m,d)
print('contacts', d.ncon)
for i in range(d.ncon):
  c=d.contact[i]; f=np.zeros(6); mujoco.mj_contactForce(m,d,i,f); print(m.geom(c.geom1).name, m.geom(c.geom2).name, c.pos, f[:3])
print('wheel axis inertia', M[6,6], 'ball', np.diag(M)[8:11])

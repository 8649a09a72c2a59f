import numpy as np, safety_gymnasium, mujoco
np.set_printoptions(precision=3, suppress=True, linewidth=220)
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
env.reset(seed=3)
for t in range(200):
    env.step(np.array([-8, 0.785]))
    d = task.data
    if t % 10 == 0:
        mat = task.agent.mat
        print(t, 'z %.3f zaxis_z %.3f delta %.3f %.3f wr %.3f yaw %.3f vel' % (task.agent.pos[2], mat[2, 2], d.qpos[7], d.qpos[9], d.qvel[10]*0.05, d.qvel[5]), task.agent.vel)

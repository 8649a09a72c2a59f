import numpy as np, safety_gymnasium
env = safety_gymnasium.make('SafetyRacecarCircle1-v0'); task = env.unwrapped.task
for a in [(1.0, 0.5), (1.0, 0.3)]:
    env.reset(seed=3); fw, yw, lat = [], [], []
    for t in range(250):
        env.step(np.array(a) * np.array([20, 0.785]))
        if t >= 100:
            mat = task.agent.mat; h = np.arctan2(mat[1, 0], mat[0, 0]); v = task.agent.vel
            fw.append(v[0]*np.cos(h)+v[1]*np.sin(h)); lat.append(-v[0]*np.sin(h)+v[1]*np.cos(h)); yw.append(task.data.qvel[5])
    print(a, 'R %.3f fwd %.3f' % (np.hypot(np.mean(fw), np.mean(lat))/np.mean(yw), np.mean(fw)))

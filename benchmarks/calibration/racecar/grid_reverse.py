# The steady turn in reverse (session 21): grid.py's columns at negative throttles, for refitting the reverse turns
# (RacecarCircle1's learners reverse at full lock, where the port and the original part: docs/design.md).
import numpy as np, safety_gymnasium, json
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
rows = []
for thr in [-4.0, -8.0, -12.0, -16.0, -20.0]:
    for dc in [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.785, -0.3, -0.785]:
        env.reset(seed=3)
        rec = []
        for t in range(250):
            env.step(np.array([thr, dc]))
            if t >= 100:
                d = task.data; mat = task.agent.mat; h = np.arctan2(mat[1, 0], mat[0, 0]); vel = task.agent.vel
                fwd = vel[0]*np.cos(h) + vel[1]*np.sin(h); lat = -vel[0]*np.sin(h) + vel[1]*np.cos(h)
                rec.append([d.qpos[7], d.qpos[9], d.qvel[10], fwd, lat, d.qvel[5]])
        rec = np.array(rec)
        rows.append(dict(thr=thr, dc=dc, mean=rec.mean(0).tolist(), std=rec.std(0).tolist()))
json.dump(rows, open('grid_reverse.json', 'w'))

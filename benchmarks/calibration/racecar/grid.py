import numpy as np, json


def steady_turns(throttles, steerings, out):
    """Per (throttle, steering) command held from reset(seed=3): mean and std over steps 101-250 of the steering
    hinge, qpos[9], the rear wheel speed, forward and sideways body velocity and yaw rate; written to ``out``."""
    import safety_gymnasium
    env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
    u = env.unwrapped; task = u.task
    rows = []
    for thr in throttles:
        for dc in steerings:
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
    json.dump(rows, open(out, 'w'))


if __name__ == '__main__':
    steady_turns([4.0, 8.0, 12.0, 16.0, 20.0],
                 [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.65, 0.785, -0.2, -0.785], 'grid.json')

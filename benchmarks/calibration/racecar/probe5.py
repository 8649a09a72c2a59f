import numpy as np, safety_gymnasium, mujoco
np.set_printoptions(precision=4, suppress=True, linewidth=220)
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
L = 0.325
for throttle in [20.0, 10.0, 4.0]:
    for dc in [0.05, 0.1, 0.2, 0.3, 0.5, 0.785, -0.3]:
        env.reset(seed=3)
        qs, ws, vs, yaws, lat = [], [], [], [], []
        for t in range(300):
            env.step(np.array([throttle, dc]))
            d = task.data
            if t >= 150:
                mat = task.agent.mat; h = np.arctan2(mat[1, 0], mat[0, 0]); vel = task.agent.vel
                qs.append(0.5*(d.qpos[7] + d.qpos[9])); ws.append(d.qvel[10]); vs.append(np.hypot(vel[0], vel[1])); yaws.append(d.qvel[5])
                lat.append(-vel[0]*np.sin(h) + vel[1]*np.cos(h))
        q, v, om = np.mean(qs), np.mean(vs), np.mean(yaws)
        # rear-axle speed: body origin speed^2 = v_r^2 + (om*a)^2, a = 0.16
        vr = np.sqrt(max(v**2 - (om*0.16)**2, 0))
        print(f'thr {throttle:5.1f} dc {dc:6.3f} q {q:.4f} (std {np.std(qs):.4f}) w*r {np.mean(ws)*0.05:.4f} |v| {v:.4f} lat {np.mean(lat):.4f} yaw {om:.4f} (std {np.std(yaws):.4f})'
              f' R_rear=vr/om {vr/om if om else np.inf:.4f} L/tan(q) {L/np.tan(q):.4f} L/tan(dc) {L/np.tan(dc):.4f}  kappa*L/tan(q) {om/vr*L/np.tan(q):.4f}')

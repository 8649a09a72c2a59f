import numpy as np, safety_gymnasium, mujoco
np.set_printoptions(precision=4, suppress=True, linewidth=220)
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
u = env.unwrapped; task = u.task
def run_sub(ctrl, n):
    m, d = task.model, task.data
    out = []
    for i in range(n):
        d.ctrl[:] = ctrl
        mujoco.mj_step(m, d)
        out.append((d.qpos[7], d.qpos[9], d.qvel[6], d.qvel[8]))
    return np.array(out)
for throttle, pre in [(0.0, 0), (20.0, 60)]:
    env.reset(seed=2)
    if pre:
        run_sub([throttle, 0.0], pre * 10)
    for target in [0.785, 0.3]:
        env.reset(seed=2)
        if pre: run_sub([throttle, 0.0], pre*10)
        tr = run_sub([throttle, target], 400)
        print('throttle', throttle, 'target', target)
        print(' left q at substeps 1..20 :', tr[:20, 0])
        print(' left q env steps 1..10 :', tr[9:100:10, 0])
        print(' right q env steps 1..10:', tr[9:100:10, 1])
        print(' final (1.6 s)', tr[-1])
        print(' max', tr[:, 0].max(), 'argmax substep', tr[:, 0].argmax())

import sys, time, numpy as np, safety_gymnasium
sys.path.insert(0, '/tmp/pushwork')
from controller import act
policy, n_ep = sys.argv[1], int(sys.argv[2])
env = safety_gymnasium.make('SafetyPointPush1-v0')
rng = np.random.default_rng(0)
rets, costs, succ = [], [], []
t0 = time.time()
for ep in range(n_ep):
    obs, info = env.reset(seed=1000 + ep)
    task = env.unwrapped.task
    R = C = S = 0.0
    for t in range(1000):
        if policy == 'random':
            a = rng.uniform(-1, 1, 2)
        else:
            mat = task.agent.mat
            heading = np.arctan2(mat[1, 0], mat[0, 0])
            a = act(task.agent.pos[:2], heading, task.push_box.pos[:2], task.goal.pos[:2])[0]
        obs, r, c, term, trunc, info = env.step(a)
        R += r; C += c; S += float(info.get('goal_met', False))
        if term or trunc:
            break
    rets.append(R); costs.append(C); succ.append(S)
    print(ep, round(R, 3), C, S, flush=True)
rets, costs, succ = map(np.array, (rets, costs, succ))
print(f'SG {policy}: return {rets.mean():.3f} +- {rets.std(ddof=1)/np.sqrt(n_ep):.3f} (sd {rets.std(ddof=1):.3f}); cost {costs.mean():.2f} +- {costs.std(ddof=1)/np.sqrt(n_ep):.2f} (sd {costs.std(ddof=1):.2f}); successes {succ.mean():.2f}; {time.time()-t0:.0f}s')

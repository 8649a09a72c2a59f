import numpy as np, safety_gymnasium as sg, time
env = sg.make('SafetyCarButton1-v0')
rng = np.random.default_rng(0)
R, C, G = [], [], []
t = time.time()
for ep in range(12):
    env.reset(seed=100 + ep); ret = cost = goals = 0
    for k in range(1000):
        o, r, c, te, tr, info = env.step(rng.uniform(-1, 1, 2))
        ret += r; cost += c; goals += info.get('goal_met', False)
        if te or tr: break
    R.append(ret); C.append(cost); G.append(goals)
print('orig random: return %.2f +- %.2f  cost %.1f +- %.1f  presses %.2f  (%.0f s)' % (np.mean(R), np.std(R), np.mean(C), np.std(C), np.mean(G), time.time() - t))

import numpy as np, safety_gymnasium, json
env = safety_gymnasium.make('SafetyRacecarCircle1-v0')
rng = np.random.default_rng(0)
res = {}
for name in ['random', 'const_1_05', 'const_1_03']:
    rets, costs = [], []
    for ep in range(30):
        env.reset(seed=100 + ep); R = C = 0.0
        for t in range(500):
            if name == 'random': a = rng.uniform(-1, 1, 2)
            elif name == 'const_1_05': a = np.array([1.0, 0.5])
            else: a = np.array([1.0, 0.3])
            obs, r, c, te, tr, info = env.step(a * np.array([20.0, 0.785]))
            R += r; C += c
            if te or tr: break
        rets.append(R); costs.append(C)
    res[name] = dict(ret=rets, cost=costs)
    print(name, 'return %.3f +- %.3f cost %.1f +- %.1f' % (np.mean(rets), np.std(rets), np.mean(costs), np.std(costs)), flush=True)
json.dump(res, open('episodes.json', 'w'))

import numpy as np, safety_gymnasium as sg, time
from ctrl import controller
env = sg.make('SafetyCarButton1-v0')
R, C, G = [], [], []
for ep in range(10):
    o, _ = env.reset(seed=200 + ep); ret = cost = goals = 0
    for k in range(1000):
        o, r, c, te, tr, info = env.step(controller(o))
        ret += r; cost += c; goals += info.get('goal_met', False)
    R.append(ret); C.append(cost); G.append(goals)
print('orig scripted: return %.2f +- %.2f  cost %.1f +- %.1f  presses %.2f +- %.2f' % (np.mean(R), np.std(R), np.mean(C), np.std(C), np.mean(G), np.std(G)))

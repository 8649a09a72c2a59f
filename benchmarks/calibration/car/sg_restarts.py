import numpy as np, safety_gymnasium as sg
from safety_gymnasium.utils.random_generator import RandomGenerator
calls = []
orig = RandomGenerator.sample_layout
def counted(self):
    calls[-1] += 1
    return orig(self)
RandomGenerator.sample_layout = counted
orig_build = RandomGenerator.build_layout
def build(self):
    calls.append(0)
    return orig_build(self)
RandomGenerator.build_layout = build
env = sg.make('SafetyCarButton1-v0')
for s in range(200):
    env.reset(seed=s)
c = np.array(calls)
print('layout attempts per reset: mean', c.mean(), 'median', np.median(c), 'max', c.max(), 'P(first ok)', (c == 1).mean())

import sys, numpy as np, safety_gymnasium
sys.path.insert(0, '/tmp/pushwork')
from controller import act
env = safety_gymnasium.make('SafetyPointPush1-v0')
obs, info = env.reset(seed=int(sys.argv[1]))
task = env.unwrapped.task
R = 0
for t in range(1000):
    mat = task.agent.mat
    heading = np.arctan2(mat[1, 0], mat[0, 0])
    a = act(task.agent.pos[:2], heading, task.push_box.pos[:2], task.goal.pos[:2])[0]
    obs, r, c, term, trunc, info = env.step(a)
    R += r
    if t % 25 == 0 or info.get('goal_met', False) or abs(r) > 0.2:
        print(t, np.round(task.agent.pos[:2], 2), np.round(task.push_box.pos, 3), np.round(task.goal.pos[:2], 2), round(r, 3), round(R, 3), info.get('goal_met', False))

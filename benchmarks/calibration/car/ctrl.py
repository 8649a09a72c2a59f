import numpy as np
def controller(obs):
    goal = np.asarray(obs[40:56])
    if goal.max() <= 0: return np.array([1.0, -1.0])
    b = int(np.argmax(goal)); angle = (b + 0.5) * 2 * np.pi / 16
    err = (angle - 1.5 * np.pi + np.pi) % (2 * np.pi) - np.pi
    if abs(err) < 0.4: return np.array([1.0, 1.0])
    return np.array([1.0, -1.0]) if err > 0 else np.array([-1.0, 1.0])

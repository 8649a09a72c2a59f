import numpy as np
from model import sim
p = np.load('pfit.npy')
A = np.load('random_actions.npy'); r = np.load('random.npy')
out = sim(p, A)
def st(fwd, lat, wz):
    return dict(mean_fwd=fwd.mean(), std_fwd=fwd.std(), mean_abs_wz=np.abs(wz).mean(), std_wz=wz.std(), mean_speed=np.hypot(fwd, lat).mean())
print('orig', {k: round(v, 3) for k, v in st(-r[:, :, 4], r[:, :, 3], r[:, :, 6]).items()})
print('sim ', {k: round(v, 3) for k, v in st(out[:, :, 0], out[:, :, 1], out[:, :, 2]).items()})
# per-step correlation
print('corr fwd', np.corrcoef(out[:, :, 0].ravel(), -r[:, :, 4].ravel())[0, 1], 'corr wz', np.corrcoef(out[:, :, 2].ravel(), r[:, :, 6].ravel())[0, 1])

import numpy as np, sys
from scipy.optimize import minimize
import fit
from model import sim
A = np.load('random_actions.npy')[:4, :300]; r = np.load('random.npy')[:4, :300]
def loss(q, w_rand=float(sys.argv[1])):
    p = np.exp(q)
    l = fit.report(p, verbose=False)
    out = sim(p, A)
    lr = np.mean((out[:, :, 0] + r[:, :, 4])**2 + (0.2 * (out[:, :, 2] - r[:, :, 6]))**2)
    return l + w_rand * lr * len(fit.names)
p0 = np.r_[np.load('pfit.npy'), 1.0]
res = minimize(loss, np.log(p0), method='Nelder-Mead', options=dict(maxiter=2500, xatol=1e-3, fatol=1e-7))
p = np.exp(res.x); print(res.fun, p.round(4), 'base loss', fit.report(p, verbose=False))
np.save('pfit2.npy', p)

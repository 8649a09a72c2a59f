import numpy as np
from scipy.optimize import minimize
import fit
def loss(q):
    p = np.exp(q)
    return fit.report(p, verbose=False)
p0 = np.array([1.0, 1.0, 0.05, 0.4, 0.09, 1.0])
res = minimize(loss, np.log(p0), method='Nelder-Mead', options=dict(maxiter=1500, xatol=1e-3, fatol=1e-6))
print(res.fun, np.exp(res.x).round(4))
fit.report(np.exp(res.x))
np.save('pfit.npy', np.exp(res.x))

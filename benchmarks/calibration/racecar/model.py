"""numpy reference of the candidate racecar model, vectorised over a batch (last axis), for fitting."""
import numpy as np
R = 0.05
J = 0.050165 + 2 * 0.00041226 + 2.156072 * R**2
I_S = 2 * 0.000437
DEFAULT = dict(c_w=0.003, kv=1.0, flim=1.0, kp=1.0, steer_damp=0.059, tau_max=0.11, omega0=0.1, L=0.40, xp=-0.21,
               tau_yaw=0.15, slip_c=0.05, slip_a=1.0, slip_b=0.5, over=0.15, tau_yaw_min=0.02, fric_dd=0.0)

def deriv(s, u, p):
    x, y, th, om, w, d, dd = s
    torque = np.clip(p['kv'] * (u[0] - w), -p['flim'], p['flim'])
    dw = (torque - p['c_w'] * w) / J
    kappa = np.tan(d) / p['L']
    slip = p['slip_c'] * np.abs(om) ** p['slip_a'] * np.abs(kappa) ** p['slip_b']
    v = w * R * (1 - slip)
    dom = (v * kappa * (1 + p['over'] * (v * om) ** 2) - om) / (p['tau_yaw'] * np.abs(v) + p['tau_yaw_min'])
    servo = np.clip(p['kp'] * (u[1] - d), -p['flim'], p['flim'])
    ddd = (servo - p['steer_damp'] * dd - p['tau_max'] * np.tanh((om + p['fric_dd'] * dd) / p['omega0'])) / I_S
    lat = -p['xp'] * om
    c, sn = np.cos(th), np.sin(th)
    return np.stack([c * v - sn * lat, sn * v + c * lat, om, dom, dw, dd, ddd]), v, lat

import os
NSUB = int(os.environ.get('NSUB', '10'))
def step(s, u, p, h=None, n=None):
    n = NSUB; h = 0.04 / n
    for _ in range(n):
        k1 = deriv(s, u, p)[0]; k2 = deriv(s + h/2*k1, u, p)[0]; k3 = deriv(s + h/2*k2, u, p)[0]; k4 = deriv(s + h*k3, u, p)[0]
        s = s + h/6*(k1 + 2*k2 + 2*k3 + k4)
        lim = np.abs(s[5]) > 0.785
        s[5] = np.clip(s[5], -0.785, 0.785); s[6] = np.where(lim, 0.0, s[6])
    return s

def rollout(s0, actions, p):
    """s0: (7, B); actions: (T, 2, B). Returns states (T+1, 7, B), v and lat (T+1, B)."""
    out = [s0]; s = s0.copy()
    for a in actions:
        s = step(s, a, p); out.append(s.copy())
    out = np.array(out)
    _, v, lat = deriv(np.moveaxis(out, 1, 0), np.zeros((2,) + out.shape[::2]), p)
    return out, v, lat

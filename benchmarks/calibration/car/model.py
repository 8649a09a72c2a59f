import numpy as np
M = 0.030445; IZ = 3.648e-4; R = 0.05; CW = 0.001; TAU = 0.02; G = 9.81
F_W, L_W, F_B = -0.0926, 0.13, 0.1074   # contact positions relative to COM (forward, left)
WB = F_B - F_W  # wheelbase 0.2
def sim(p, actions, n_sub=10, h=0.004, state=None):
    """actions [B, T, 2] (MuJoCo motor 'left', 'right'); returns fwd, lat, wz [B, T]."""
    mu_w, mu_b, vs, cb, hcg, mu_lat = p[:6]
    iz = IZ * (p[6] if len(p) > 6 else 1.0)
    B, T, _ = actions.shape
    vf = np.zeros(B); vl = np.zeros(B); w = np.zeros(B); af = np.zeros(B)
    out = np.zeros((B, T, 3))
    W = M * G
    for t in range(T):
        tau = TAU * np.clip(actions[:, t] / 0.02, -1, 1)
        for _ in range(n_sub):
            nb = W * (-F_W) / WB - M * af * hcg / WB
            nb = np.clip(nb, 0.0, W)
            nw = (W - nb) / 2
            Ff = np.zeros(B); Fl = np.zeros(B); Tz = np.zeros(B)
            for i, l in enumerate((-L_W, L_W)):
                uf = vf - w * l; ul = vl + w * F_W
                k = mu_w * nw / vs
                F = np.clip((R * tau[:, i] - CW * uf) * k / (CW + R * R * k), -mu_w * nw, mu_w * nw)
                kl = mu_lat * nw / vs
                Flat = -np.clip(kl * ul, -mu_lat * nw, mu_lat * nw)
                Ff += F; Fl += Flat; Tz += F_W * Flat - l * F
            ubf = vf; ubl = vl + w * F_B
            sp = np.sqrt(ubf**2 + ubl**2) + 1e-9
            mag = np.minimum(cb * sp, mu_b * nb)
            Ff += -mag * ubf / sp; Fl += -mag * ubl / sp; Tz += F_B * (-mag * ubl / sp)
            af_new = Ff / M + w * vl
            vf = vf + h * af_new
            vl = vl + h * (Fl / M - w * vf)
            w = w + h * Tz / iz
            af = af_new
        out[:, t] = np.stack([vf, vl, w], 1)
    return out

import json, sys, numpy as np
sys.path.insert(0, '/tmp/race_fit'); import fit as F
x = json.load(open(sys.argv[1] if len(sys.argv) > 1 else '/tmp/race_fit/fit.json'))
p = dict(F.M.DEFAULT); p.update(x)
print(p)
sim = F.simulate(p)
print('transients: RMS error (delta, yaw, fwd, lat); measured RMS of signal')
for i, name in enumerate(F.TRANS):
    if 'ALL' not in __import__('os').environ: break
    n = len(F.runs[name]); e = sim[:n, :, i] - F.TARG[:n, :, i]
    print(f'{name:16s}', np.round(np.sqrt((e**2).mean(0)), 4), np.round(np.sqrt((F.TARG[:n, :, i]**2).mean(0)), 3))
print(' thr    dc | delta meas/sim | yaw meas/sim | fwd meas/sim | lat meas/sim | R(origin) meas/sim  rel')
rel = []
for j, g in enumerate(F.grid):
    b = F.NTR + j
    s = sim[101:, :, b].mean(0); m = F.TARG[101, :, b]
    Rm = np.hypot(m[2], m[3]) / m[1]; Rs = np.hypot(s[2], s[3]) / s[1]
    rel.append([Rs / Rm - 1, np.hypot(s[2], s[3]) / np.hypot(m[2], m[3]) - 1])
    print(f"{g['thr']:4.0f} {g['dc']:6.3f} | {m[0]:6.3f} {s[0]:6.3f} | {m[1]:6.3f} {s[1]:6.3f} | {m[2]:6.3f} {s[2]:6.3f} | {m[3]:6.3f} {s[3]:6.3f} | {Rm:7.3f} {Rs:7.3f} {Rs/Rm-1:+.3f} speed {rel[-1][1]:+.3f}")
rel = np.array(rel); print('radius rel err: median |.|', np.median(np.abs(rel[:, 0])), 'max', np.abs(rel[:, 0]).max(), ' speed: median', np.median(np.abs(rel[:, 1])), 'max', np.abs(rel[:, 1]).max())

VAL = ['random', 'straight8', 'reverse20', 'turn20_03', 'turn12_05', 'turn8_02', 'slowrandom', 'steer_still_03']
T = max(len(F.runs[n]) for n in VAL)
acts = []
for n in VAL:
    a = np.array([r['act'] for r in F.runs[n][1:]]); acts.append(np.concatenate([a, np.repeat(a[-1:], T - 1 - len(a), 0)]))
s0 = np.zeros((7, len(VAL))); s0[2] = [F.runs[n][0]['heading'] for n in VAL]
st, v, lat = F.M.rollout(s0, np.moveaxis(np.array(acts), 0, -1), p)
print('validation/transients: RMS error of (delta, yaw, fwd, lat), RMS of the measured signal; final position error')
for i, n in enumerate(VAL):
    m = F.meas(F.runs[n]); k = len(m)
    sim = np.stack([st[:k, 5, i], st[:k, 3, i], v[:k, i], lat[:k, i]], 1)
    pos_m = np.array([r['pos'][:2] for r in F.runs[n]]); pos_s = st[:k, :2, i] + pos_m[0]
    print(f'{n:15s}', np.round(np.sqrt(((sim - m)**2).mean(0)), 4), np.round(np.sqrt((m**2).mean(0)), 3), 'pos err end %.3f max %.3f path %.2f' % (np.linalg.norm(pos_s[-1]-pos_m[-1]), np.linalg.norm(pos_s-pos_m, axis=1).max(), np.sum(np.linalg.norm(np.diff(pos_m, axis=0), axis=1))))

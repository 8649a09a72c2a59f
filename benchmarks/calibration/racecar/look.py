import json, sys, numpy as np
sys.path.insert(0, '/tmp/race_fit'); import fit as F
p = dict(F.M.DEFAULT); p.update(json.load(open(sys.argv[1])))
n = sys.argv[2]; rec = F.runs[n]
a = np.array([r['act'] for r in rec[1:]])
s0 = np.zeros((7, 1)); s0[2] = rec[0]['heading']
st, v, lat = F.M.rollout(s0, a[:, :, None], p)
m = F.meas(rec)
for t in range(int(sys.argv[3]), int(sys.argv[4])):
    print(t, np.round(rec[t]['act'], 3), 'delta %.3f %.3f  yaw %.3f %.3f  fwd %.3f %.3f  w*r %.3f %.3f' % (m[t, 0], st[t, 5, 0], m[t, 1], st[t, 3, 0], m[t, 2], v[t, 0], rec[t]['w']*0.05, st[t, 4, 0]*0.05))

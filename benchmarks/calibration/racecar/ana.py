import json, numpy as np
rows = json.load(open('grid.json'))
print(' thr    dc   delta  sd    wr     fwd    lat    yaw   sd   | lat/yaw  kappa_o  tan(d)/k_o')
for r in rows:
    ql, qr, w, fwd, lat, yaw = r['mean']; s = r['std']
    q = 0.5*(ql+qr)
    print(f"{r['thr']:4.0f} {r['dc']:6.3f} {q:6.3f} {s[0]:.3f} {w*0.05:6.3f} {fwd:6.3f} {lat:6.3f} {yaw:6.3f} {s[5]:.3f} | {lat/yaw:6.3f} {yaw/fwd:6.3f} {np.tan(q)/(yaw/fwd):6.3f}  slip {1-fwd/(w*0.05):.3f}")

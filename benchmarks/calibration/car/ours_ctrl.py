import sys, jax, jax.numpy as jnp, numpy as np
sys.path.insert(0, '/tmp/sg_car/work')
from ctrl import controller
from saferl.envs.safety_nav.car_button import CarButton
env = CarButton(); P = env.default_params()
reset = jax.jit(env.reset); step = jax.jit(env.step)
R, C, G = [], [], []
for ep in range(10):
    st, o = reset(jax.random.PRNGKey(200 + ep), P); ret = cost = goals = 0
    for k in range(1000):
        st, o, r, c, te, tr, info = step(st, jnp.asarray(controller(np.asarray(o)), jnp.float32), P)
        ret += float(r); cost += float(c); goals += float(info['goal_reached'])
    R.append(ret); C.append(cost); G.append(goals)
print('ours scripted: return %.2f +- %.2f  cost %.1f +- %.1f  presses %.2f +- %.2f' % (np.mean(R), np.std(R), np.mean(C), np.std(C), np.mean(G), np.std(G)))

import jax, jax.numpy as jnp, numpy as np
from saferl.envs.safety_nav.car_button import CarButton
env = CarButton(); P = env.default_params(); n = 64
st, _ = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(3), n), P)
@jax.jit
def episode(st, key):
    def body(c, k):
        st, ret, cost, goals = c
        a = jax.random.uniform(k, (n, 2), minval=-1, maxval=1)
        st, o, r, co, te, tr, info = jax.vmap(env.step, in_axes=(0, 0, None))(st, a, P)
        return (st, ret + r, cost + co, goals + info['goal_reached']), None
    (st, ret, cost, goals), _ = jax.lax.scan(body, (st, jnp.zeros(n), jnp.zeros(n), jnp.zeros(n)), jax.random.split(key, 1000))
    return ret, cost, goals
ret, cost, goals = map(np.asarray, episode(st, jax.random.PRNGKey(9)))
print('ours random: return %.2f +- %.2f  cost %.1f +- %.1f  presses %.2f' % (ret.mean(), ret.std(), cost.mean(), cost.std(), goals.mean()))

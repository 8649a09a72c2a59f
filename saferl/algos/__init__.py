"""Safe-RL algorithms.  Importing the package registers every algorithm (``@register`` in each
module; :func:`saferl.algos.base.get` and :func:`~saferl.algos.base.registered` read the
registry), so a new algorithm is one module plus its name on one line below.
"""

# first-order: Adam steps on PPO-style surrogates (Lagrangian, PID-Lagrangian, two-step projection, barrier, penalty)
from saferl.algos import ppo, ppo_lag, cppo_pid, focops, cup, ipo, p3o  # noqa: F401
# safety critic: the reward cancelled where the episode may end unsafe, cumulative cost in the state
from saferl.algos import scpo  # noqa: F401
# trust-region: natural-gradient steps in a KL ball (Lagrangian, CPO's dual, projection, C-TRPO's geometry)
from saferl.algos import trpo, trpo_lag, pdo, cpo, pcpo, ctrpo  # noqa: F401
# risk: constraints on the cost return's tail (Cantelli / indicator VaR, CVaR)
from saferl.algos import canary, cpo_var, cppo, cvar_cpo  # noqa: F401

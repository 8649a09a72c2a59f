"""Safe-RL algorithms.  Importing the package registers every algorithm (``@register`` in each
module; :func:`saferl.algos.base.get` and :func:`~saferl.algos.base.registered` read the
registry), so a new algorithm is one module plus its name on one line below.
"""

# first-order: Adam steps on PPO-style surrogates (Lagrangian, PID-Lagrangian, two-step projection, barrier, penalty)
# safety critic: the reward cancelled where the episode may end unsafe, cumulative cost in the state
# trust-region: natural-gradient steps in a KL ball (Lagrangian, CPO's dual, projection, C-TRPO's geometry)
# risk: constraints on the cost return's tail (Cantelli / indicator VaR, CVaR)
from saferl.algos import (  # noqa: F401  # noqa: F401  # noqa: F401
    canary,
    cpo,
    cpo_var,
    cppo,
    cppo_pid,
    ctrpo,
    cup,
    cvar_cpo,
    focops,
    ipo,
    p3o,
    pcpo,
    pdo,
    ppo,
    ppo_lag,
    scpo,  # noqa: F401
    trpo,
    trpo_lag,
)

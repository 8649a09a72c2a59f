"""CPO (VaR): CPO on the indicator cost return I(tau) = 1(C(tau) >= rho) with limit epsilon
(Canary Sec. 3.4, eqs. 13-14), the Canary paper's "CPO (VaR)" baseline.

Per-step credit through the augmented state: the cost is 1 on the step where the accumulated
cost y_t first reaches rho (:func:`saferl.core.risk.indicator_cost`), so its return is I(tau)
and a critic on (s, y / rho, gamma_c^t) can assign it; the constraint estimate is the batch's
fraction of episodes with C >= rho.  Everything else is CPO.
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.cpo import CPO
from saferl.algos.risk import var_surrogate


@register
@var_surrogate("indicator")
class CPOVaR(CPO):
    name = "cpo_var"
    description = "CPO (VaR): CPO on the indicator 1(C >= rho) with limit epsilon (Canary Sec. 3.4 baseline)."
    # (CPO's cost-surrogate convention, per_sample, is also Canary's: the Canary baselines differ only in the surrogate)

"""CPPO-PID (Stooke, Achiam, Abbeel 2020, "Responsive Safety in Reinforcement Learning by PID
Lagrangian Methods"): PPO-Lagrangian whose multiplier is set by a PID controller on the
constraint violation instead of integrated by gradient ascent -- a baseline of the C-TRPO paper.

Gradient ascent on lambda is an integral-only controller: lambda keeps growing while J_c > b
and keeps its value after the cost has crossed b, so the cost overshoots below b and the
multiplier oscillates.  The proportional term reacts to the current violation and the
derivative term to a rising cost, which damps the oscillation
(:func:`saferl.core.lagrange.pid_update`; gains as OmniSafe's CPPO-PID: Kp 0.1, Ki 0.01,
Kd 0.01, a 10-update derivative delay, EMA 0.95 on the proportional error and the cost).
Everything else is PPO-Lag; ``lagrange_optimizer: pid`` gives TRPO-Lag the same controller.
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.ppo_lag import PPOLag
from saferl.foundation.hparams import declare


@register
class CPPOPID(PPOLag):
    name = "cppo_pid"
    description = "CPPO-PID (Stooke et al. 2020): PPO-Lagrangian with a PID-controlled Lagrange multiplier."
    defaults = declare(PPOLag.defaults, lagrange_optimizer="pid")

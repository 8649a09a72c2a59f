"""C-TRPO (Milosevic et al., "Embedding Safety into RL: A New Take on Trust Region Methods").

Algorithm 1: if pi_k is in the (hysteresis) safe set, take a TRPO step on the reward
surrogate inside the safe trust region of the surrogate divergence

    bar D_C(pi || pi_k) = bar D_KL + sum_i beta bar D_phi,i                  (eq. 14, 16; Sec. 3.2 for m > 1)
    bar D_phi,i = Psi(A_i) = phi(d_i - A_i) - phi(d_i) + phi'(d_i) A_i,      (eq. 17-18, 56, 60)
                  +inf where d_i - A_i <= 0,

with d_i = b_i - J_c,i the constraint margin and A_i the cost surrogate in units of
J_c (eq. 59).  Otherwise (recovery, line 7) take a TRPO step on -A_c with the plain KL; with several
constraints, on minus the sum of the violated ones' A_c, inside the KL plus the barriers of the constraints
that are satisfied (Algorithm 1 is written for one; this keeps a recovery on one constraint from pushing
another over its limit).

Step (eq. 19-21): x = sqrt(2 delta / g^T H^-1 g) H^-1 g with the Hessian of bar D_C at
theta_k in closed form (App. B.2.3, eq. 63-68):

    H_C = F + sum_i beta phi''(d_i) b_i b_i^T        (b_i = grad A_i; Psi'(0) = 0, Psi''(0) = phi''(d_i))

applied as a Fisher-vector product plus one rank-one term per constraint; the line
search keeps bar D_C <= delta (evaluated exactly, eq. 58-61) and the objective
surrogate from decreasing.

Hysteresis (Sec. 3.2, "Recovery with Hysteresis"): recovery starts when some
J_c,i > b_i and ends only once every J_c,i <= b_H,i = ``hysteresis`` * b_i.

The first update: Algorithm 1's test for pi_0 needs pi_{-1}, which the paper leaves undefined.  This
module treats pi_0 as coming from the safe set (threshold b).  The authors' code (milosen/ctrpo,
``algorithms/c-trpo.py``) initialises ``optim_case = 0`` (recovery, threshold b_H) but its first cost estimate is
0 (``logger.get_stats("Metrics/EpCost")`` before any episode is logged), so its first step is a safe one too.

phi: ``"xlogx"`` (phi(x) = x log x, the paper's default; eq. 57/61) or ``"neglog"``
(phi(x) = -log x, the log barrier).  Eq. 60 prints ``- phi'(d) A``; the sign of eq.
18/56 (``+ phi'(d) A``) is the one that makes Psi a Bregman divergence (Psi(0) = 0,
Psi >= 0) and agrees with eq. 61, so that is the one used.

``beta`` and ``hysteresis`` live in ``agent.extra`` as arrays (traced: they may differ
per seed in a vmapped run); ``init`` fills them from the hyper-parameters.

Cost-value noise (App. D.3, Fig. 11: "white noise with varying standard deviations sigma" on the cost value
estimate; ``cost_value_noise`` = sigma, default 0 = none): N(0, sigma^2) is added to every cost critic's values
V_c(s_t) and bootstrap values V_c(s'_t) of a batch before GAE (:meth:`channel_value_noise`, drawn by
:func:`saferl.core.rollout.make_batch` through :meth:`saferl.training.learner.Learner.make_batch`); the reward critic is
untouched.  So the cost advantages, the divergence's A_c with them, and the cost critic's targets (advantages plus
the corrupted values) come from corrupted values.  The authors' code (milosen/ctrpo,
``algorithms/baselines/c-trpo-noise.py``, ``NoisyBuffer``) does the same in the cost's own units:
``value_c + randn * noise_level`` on every stored value and on ``last_value_c``, targets = advantages + those values.
As theirs, each state's value is corrupted once: an interior step's bootstrap value V_c(s_{t+1}) carries the next
step's draw (a fresh draw only where the episode ended, for its final observation), so GAE telescopes the noise.
Differences: (1) their script's ``noise_level`` defaults to 0.5, ours to 0 (the benchmark's C-TRPO has no noise);
(2) at a terminal step they bootstrap from 0 plus noise, where GAE here ignores the bootstrap value.  The unswept
0.0 adds no operation (the batch is bit for bit the noiseless one); a swept sigma is traced and adds
``sigma * normal`` even where it is 0, which changes no bit either.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.second_order import TrustRegionAlgorithm, natural_step
from saferl.foundation.hparams import choice, declare, real

PHIS = ("xlogx", "neglog")


def phi_second_derivative(margin, kind: str = "xlogx"):
    """phi''(d): 1/d for x log x, 1/d^2 for -log x."""
    if kind == "xlogx":
        return 1.0 / margin
    if kind == "neglog":
        return 1.0 / margin**2
    raise ValueError(f"phi must be one of {', '.join(PHIS)}, got {kind!r}")


def surrogate_phi_divergence(cost_surrogate, margin, kind: str = "xlogx"):
    """bar D_phi = Psi(A) (eq. 17-18, 60), +inf where margin - A <= 0; elementwise.

    Written in the cancellation-free forms of eq. 61 (x log x) and its -log x analogue:
        x log x:  Psi(A) = A + (d - A) log(1 - A / d)
        -log x:   Psi(A) = -log(1 - A / d) - A / d
    """
    inside = margin - cost_surrogate > 0
    u = jnp.where(inside, cost_surrogate / margin, 0.0)  # A / d, < 1 inside the domain
    if kind == "xlogx":
        psi = cost_surrogate + (margin - cost_surrogate) * jnp.log1p(-u)
    elif kind == "neglog":
        psi = -jnp.log1p(-u) - u
    else:
        raise ValueError(f"phi must be one of {', '.join(PHIS)}, got {kind!r}")
    return jnp.where(inside, psi, jnp.inf)


def next_recovering(recovering, cost, limit, hysteresis):
    """Algorithm 1's test with hysteresis: recover while some J_c,i exceeds its threshold,
    b_i when the previous step was safe and hysteresis * b_i when it was a recovery."""
    threshold = jnp.where(recovering, hysteresis * limit, limit)
    return jnp.any(cost > threshold), cost > threshold


@register
class CTRPO(TrustRegionAlgorithm):
    name = "ctrpo"
    step_uses_cost_scale = True
    description = (
        "C-TRPO (Milosevic et al.): TRPO in a safe trust region (KL + beta * barrier divergence) with recovery."
    )
    defaults = declare(
        TrustRegionAlgorithm.defaults,
        beta=real(1.0, "[0, inf)", "weight of the barrier divergence (eq. 11)"),
        hysteresis=real(0.8, "(0, 1]", "b_H = h b, where recovery ends (Algorithm 1)"),
        phi=choice("xlogx", PHIS, "the divergence's convex function phi"),
        # 0: the paper's benchmark (no noise); App. D.3 / Fig. 11 sweeps it (module docstring)
        cost_value_noise=real(
            0.0, "[0, inf)", "std of white noise on the cost critics' values and bootstrap values before GAE (App. D.3)"
        ),
    )

    def init_extra(self, constraint):
        return {
            **super().init_extra(constraint),
            "beta": jnp.asarray(self.hp["beta"], jnp.float32),
            "hysteresis": jnp.asarray(self.hp["hysteresis"], jnp.float32),
            "recovering": jnp.asarray(False),
        }

    def channel_value_noise(self):
        """(0, sigma, ..., sigma): no noise on the reward critic, ``cost_value_noise`` on every cost critic; None when
        it is the unswept 0.0 (no noise drawn).  sigma may be a traced value (a sweep): no branch on it."""
        sigma = self.hp["cost_value_noise"]
        if isinstance(sigma, float) and sigma == 0.0:
            return None
        return (0.0,) + (sigma,) * (self.critics.num_channels - 1)

    def barrier_coefficients(self, agent, grads, recovering, violated):
        """(beta_i, d_i): beta per constraint and the margin b_i - J_c,i.  While recovering, beta_i = 0 for the
        constraints being recovered (plain KL, Algorithm 1 line 7); a constraint that is satisfied (J_c,i < b_i)
        keeps its barrier, so that recovering on one cannot push another over its limit (Sec. 3.2, m > 1)."""
        margin = jnp.maximum(grads.limit - grads.cost, 1e-6 * jnp.maximum(grads.limit, 1.0))
        beta = jnp.broadcast_to(agent.extra["beta"], margin.shape)
        dropped = recovering & (violated | (grads.cost >= grads.limit))
        return jnp.where(dropped, 0.0, beta), margin

    def divergence(self, kl, cost_surrogate, beta, margin):
        """bar D_C = bar D_KL + sum_i beta_i bar D_phi,i (eq. 14, 17); terms with beta_i = 0 are dropped."""
        psi = surrogate_phi_divergence(cost_surrogate, margin, self.hp["phi"])
        return kl + jnp.sum(jnp.where(beta > 0, beta * psi, 0.0))

    def hessian_matvec(self, agent, batch, grads, beta, margin):
        """v -> (F + damping I) v + sum_i beta_i phi''(d_i) (b_i^T v) b_i  (App. B.2.3, eq. 67)."""
        fvp = self.fisher_matvec(agent, batch)
        w = beta * phi_second_derivative(margin, self.hp["phi"])
        return lambda v: fvp(v) + (w * (grads.B @ v)) @ grads.B

    def policy_step(self, agent, batch):
        delta = self.hp["target_kl"]
        adv_r, adv_c = self.advantages(batch)
        grads = self.gradients(agent, batch, adv_r, adv_c)
        recovering, violated = next_recovering(
            agent.extra["recovering"], grads.cost, grads.limit, agent.extra["hysteresis"]
        )
        beta, margin = self.barrier_coefficients(agent, grads, recovering, violated)
        # Algorithm 1, lines 4-8: A <- A_r (safe) or A <- -A_c of the violated constraints (recovery)
        viol = violated.astype(jnp.float32)
        g = jnp.where(recovering, -(viol @ grads.B), grads.g)
        hinv_g = self.solve(self.hessian_matvec(agent, batch, grads, beta, margin), g[None])[0]
        step = natural_step(g, hinv_g, delta)  # eq. 19

        def objective(m):
            return jnp.where(recovering, -jnp.sum(viol * m["cost"]), m["reward"])

        def accept(m, m0):
            d_c = self.divergence(m["kl"], m["cost"], beta, margin)
            return (d_c <= delta) & (objective(m) >= objective(m0))

        params, metrics = self.line_search(agent, batch, adv_r, adv_c, grads.scale, step, accept)
        metrics.update(recovering=recovering.astype(jnp.float32), cost_estimate=grads.cost[0], beta=agent.extra["beta"])
        agent = agent.replace(actor_params=params, extra={**agent.extra, "recovering": recovering})
        return agent, metrics

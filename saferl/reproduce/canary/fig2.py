"""``canary-fig2``: relative variance of the VaR-surrogate estimators as epsilon -> 0 on IcyLake.

Canary paper ("Constrained Policy Optimization with Cantelli-Bounded Value-at-Risk", arXiv:2601.22993), Sec. 5,
Prop. 5.1, App. B and Fig. 2 (Sec. 6.2): the relative variance kappa^2[m] = Var[m_hat] / ||m||^2 (eq. 39) of the
constraint value and of the constraint gradient grows like 1/(pN) for the indicator (CPO-VaR) and 1/(eps N)
for CVaR, while Cantelli's stays O(1/((1-f)N)), flat in eps.  We measure it for the Monte-Carlo
score-function estimators of App. B and for the GAE-critic advantage gradient of Sec. 6.2.

What the paper leaves open, and what we chose (recorded under "settings"):

* Policy: a fixed tabular softmax policy on IcyLake "8x8" (slippery, max_steps = 200, ice_cost
  = 1), logits theta[s, a] = 0.5 N(0, 1) (PRNGKey(0)) + 1.0 for `down` and `right` (towards the
  goal).  This is a CategoricalActor with a one-hot observation and no hidden layer.  Under it
  the cost return C = number of steps on ice (gamma_c = 1) is dense (P(C = 0) ~ 1 %), mean ~ 16,
  sd ~ 12 (mean ~ 12, sd ~ 7 with the 100-step cap saferl used before 2026-12-01).
* Ground truth by exact dynamic programming, no reference sample: the law of C is a forward DP
  over (cell, accumulated cost) with the exact model `icy_lake.dynamics`; true values and
  true gradients are its expectations and their reverse-mode gradients through it (float64).
* epsilon grid 0.5 ... 0.005.  C is integer, so rho_eps is the smallest cost level with
  P(C >= rho) <= eps (the policy sits on the VaR boundary: true violation probability p <= eps,
  reported), and the CVaR level eta* = rho_eps - 1 is the exact (1 - eps)-quantile (VaR).
* Value estimators on a batch of N episodes: indicator mean 1(C >= rho) (eq. 41), CVaR
  Rockafellar-Uryasev at eta* (eq. 47), Cantelli J_C from the empirical moments (eqs. 55, 54),
  via `saferl.core.risk`.  The GAE rows use the same (Monte-Carlo) value estimate, as Canary's
  Algorithm 1 (step 2) and the deployed methods do; only the gradient changes.
* MC gradients (App. B): (1/N) sum_i f(C_i) s(tau_i) with s = sum_t grad log pi(a_t|s_t) over
  the steps before termination, f = 1(C >= rho) (eq. 44), (C - eta*)^+ / eps (eq. 52),
  beta C^2 + 2 (rho - mu1_hat / eps) C (eq. 60).  Computed as jax.grad of the weighted sum of
  log-probabilities (weights held fixed), which is the score function times the weight.
* GAE gradients: (1/N) sum_{i,t} grad log pi(a_t|s_t) A_t, GAE(gamma = 1, lambda = 0.95), on the
  per-step costs of each surrogate (`risk.indicator_cost`, `risk.cvar_excess_cost` / eps, and
  Cantelli's c and c~ = c^2 + 2 y c combined with the eq. 37 weights).  Critics: tabular on the
  augmented state x = (cell, y) (Canary eq. 27 with gamma_c^t = 1), fitted by least squares
  (= per-cell mean of the Monte-Carlo cost-to-go) on an independent batch of N episodes of the
  same policy (the "previous iteration"), unvisited cells take the nearest visited y of the same
  cell (0 if the cell was never visited).  Truncation at max_steps counts as the episode's end.
* Normalisation: kappa^2 divides by the squared true quantity the estimator estimates: p, J_C,
  and for CVaR E[(C - eta*)^+] / eps (App. B.2, eq. 50: eta* is a known constant, not estimated;
  "true_value" in rows is the full CVaR).  Gradients: ||true gradient||^2 from the DP.
* "Seeds": K independent batches (K = 30 at cpu/full scale, the paper's setting).  Var is the
  sample variance over them (trace of the covariance for gradients); the shaded bands are +-1 SD
  of kappa^2 over a bootstrap of the seeds.  rows also carry the relative squared bias
  ||mean - m||^2 / ||m||^2 (the GAE gradient is biased by the critic) and the fraction of batches
  whose gradient estimate is exactly zero.
* Slopes: least-squares slope of log kappa^2 on log eps over the grid, per surrogate and
  estimator ("slopes"; about -1 means 1/eps growth, 0 means flat), and over eps <= 0.05 only
  ("slopes_small_eps", the eps -> 0 regime of Prop. 5.1; the indicator's 1/(pN) carries the factor
  S_g / ||m_g||^2 of eq. 45, which is not constant in p here: the conditional score signal grows
  as the event gets rarer, so the full-grid slopes are shallower than -1).

Reading the results: gradient kappa^2 is > 1 at these N because the 256-parameter tabular score
is noisy in every state; the claim is about the eps-scaling.  Cantelli's true gradient is
grad sigma^2 / eps + 2 rho grad mu - grad mu2 (eq. 60), whose direction moves a little with eps
at large eps, so its MC kappa^2 wobbles (within ~2x) before it plateaus as eps -> 0.

Scales (:data:`SCALES`): smoke (N = 128, 10 seeds; three eps were too few for a slope once episodes
ran 200 steps), demo (N = 400, 30 seeds), cpu (N = 1000,
30 seeds), full (N = 4000, 30 seeds).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl.analysis import plotting
from saferl.core import risk
from saferl.envs.icy_lake import DOWN, ICE, RIGHT, START, IcyLake, dynamics
from saferl.reproduce.framework import Scale, target

MAP = "8x8"
GOAL_BIAS = 1.0
LOGIT_NOISE = 0.5
POLICY_SEED = 0
GAE_LAMBDA = 0.95
EPSILONS = (0.5, 0.25, 0.1, 0.05, 0.025, 0.01, 0.005)
SURROGATES = ("cantelli", "indicator", "cvar")
LABELS = {"cantelli": "Cantelli (Canary)", "indicator": "indicator (CPO-VaR)", "cvar": "CVaR (CVaR-CPO)"}
COLORS = {"cantelli": "tab:blue", "indicator": "tab:green", "cvar": "tab:purple"}
ESTIMATORS = ("mc", "gae")
SMALL_EPS = 0.05  # "slopes_small_eps" fits eps <= this only (the eps -> 0 regime of Prop. 5.1)


_UNIT = "episodes per batch"
#: steps = N, the episodes of one batch; seeds = K, the independent batches
SCALES = {
    "smoke": Scale(steps=128, seeds=10, wall_s=20, unit=_UNIT, params={"epsilons": EPSILONS, "bootstrap": 200}),
    "demo": Scale(steps=400, seeds=30, wall_s=20, unit=_UNIT, params={"epsilons": EPSILONS, "bootstrap": 1000}),
    "cpu": Scale(steps=1_000, seeds=30, wall_s=35, unit=_UNIT, params={"epsilons": EPSILONS, "bootstrap": 1000}),
    "full": Scale(steps=4_000, seeds=30, wall_s=120, unit=_UNIT, params={"epsilons": EPSILONS, "bootstrap": 1000}),
}


def settings(scale: str) -> dict:
    """The study's settings at a scale: episodes per batch, seeds (batches), epsilons, bootstrap replicates."""
    s = SCALES[scale]
    return {"episodes": s.steps, "seeds": s.seeds, "epsilons": s["epsilons"], "bootstrap": s["bootstrap"]}


def policy_logits(n_states: int, bias: float = GOAL_BIAS, noise: float = LOGIT_NOISE, seed: int = POLICY_SEED):
    theta = noise * jax.random.normal(jax.random.PRNGKey(seed), (n_states, 4), jnp.float32)
    return theta.at[:, DOWN].add(bias).at[:, RIGHT].add(bias)


# --------------------------------------------------------------------------- exact truth


def cost_pmf(theta, env_params, horizon: int):
    """P(C = k), k = 0..horizon, exactly: forward DP over (cell, accumulated cost).

    Needs ice_cost = 1 (integer costs).  Differentiable in theta."""
    P, _, _ = dynamics(env_params)
    flat = env_params.tiles.reshape(-1)
    ice = (flat == ICE)[:, None]
    P = P.astype(theta.dtype)
    P = P / P.sum(-1, keepdims=True)  # float32 model -> rows summing to 1 at theta's precision
    M = jnp.einsum("sa,sat->st", jax.nn.softmax(theta, -1), P)
    d0 = jnp.zeros((flat.shape[0], horizon + 1), theta.dtype).at[jnp.argmax(flat == START), 0].set(1.0)

    def step(d, _):
        q = M.T @ d
        return jnp.where(ice, jnp.pad(q[:, :-1], ((0, 0), (1, 0))), q), None

    return jax.lax.scan(step, d0, None, length=horizon)[0].sum(0)


@partial(jax.jit, static_argnums=2)
def _pmf_and_gradients(theta, env_params, horizon: int, fs):
    pmf, pull = jax.vjp(lambda t: cost_pmf(t, env_params, horizon), theta)
    return pmf, jax.vmap(lambda f: pull(f)[0])(fs)


def expectation_gradients(theta, env_params, horizon: int, fs):
    """(pmf, grads): pmf = P(C = k) and grads[j] = grad_theta E[fs[j](C)] for fs (F, T+1), in float64
    (one reverse pass per function, batched)."""
    with jax.enable_x64(True):
        pmf, grads = _pmf_and_gradients(
            jnp.asarray(np.asarray(theta), jnp.float64), env_params, horizon, jnp.asarray(np.asarray(fs), jnp.float64)
        )
        return np.asarray(pmf), np.asarray(grads)


def exact_truth(theta, env_params, horizon: int, epsilons) -> list[dict]:
    """Per eps: rho_eps, eta*, p and the true value and gradient of each surrogate."""
    k = np.arange(horizon + 1, dtype=np.float64)
    pmf = expectation_gradients(theta, env_params, horizon, k[None])[0]
    tail = np.concatenate([np.cumsum(pmf[::-1])[::-1], [0.0]])  # P(C >= k), k = 0..T+1
    rhos = [int(np.argmax(tail <= eps)) for eps in epsilons]
    fs = [k, k**2]
    for rho, eps in zip(rhos, epsilons):  # indicator, CVaR excess (eta* = rho - 1) / eps
        fs += [(k >= rho) * 1.0, np.maximum(k - rho + 1.0, 0.0) / eps]
    pmf, grads = expectation_gradients(theta, env_params, horizon, np.stack(fs))
    mu1, mu2 = pmf @ k, pmf @ k**2
    out = []
    for i, (rho, eps) in enumerate(zip(rhos, epsilons)):
        eta = rho - 1.0
        w_c, w_ct = risk.cantelli_gradient_weights(mu1, rho, eps)
        excess = pmf @ np.maximum(k - eta, 0.0) / eps
        cantelli = float(risk.cantelli_value(mu1, mu2, rho, eps))
        out.append(
            {
                "rho": float(rho),
                "eta": eta,
                "p": float(tail[rho]),
                "mu": float(mu1),
                "sd": float(np.sqrt(mu2 - mu1**2)),
                "zero_cost_fraction": float(pmf[0]),
                "cantelli_bound": float(risk.cantelli_bound(mu1, mu2 - mu1**2, float(rho))),
                "value": {"indicator": float(tail[rho]), "cvar": eta + excess, "cantelli": cantelli},
                # what the estimator estimates (App. B.2, eq. 50 normalises CVaR by E[(C - eta*)^+] / eps)
                "signal": {"indicator": float(tail[rho]), "cvar": excess, "cantelli": cantelli},
                "gradient": {
                    "indicator": grads[2 + 2 * i],
                    "cvar": grads[3 + 2 * i],
                    "cantelli": w_ct * grads[1] + w_c * grads[0],
                },
            }
        )
    return out


# --------------------------------------------------------------------------- sampling and estimators


def rollout(theta, env_params, key, n_episodes: int, horizon: int):
    """(cells, actions, costs, alive), each (n_episodes, horizon); alive = step taken before termination."""
    env = IcyLake(MAP)

    def episode(k):
        k_reset, k_steps = jax.random.split(k)
        state, _ = env.reset(k_reset, env_params)

        def step(carry, kk):
            state, alive = carry
            s = state.position
            a = jax.random.categorical(kk, theta[s])
            nxt, _, _, cost, term, _, _ = env.step(state, a, env_params)
            return (nxt, alive & ~term), (s, a, cost * alive, alive)

        return jax.lax.scan(step, (state, jnp.bool_(True)), jax.random.split(k_steps, horizon))[1]

    return jax.vmap(episode)(jax.random.split(key, n_episodes))


def weighted_score(theta, cells, actions, weights):
    """grad_theta sum_{i,t} w_it log pi(a_it | s_it) with w fixed: for w_it = f(C_i) alive_it / N this is
    (1/N) sum_i f(C_i) s(tau_i); for w_it = A_it alive_it / N the advantage gradient."""
    return jax.grad(lambda th: jnp.sum(weights * jax.nn.log_softmax(th, -1)[cells, actions]))(theta)


def accumulated(costs):
    """y_t (before step t) and y_{t+1}."""
    y_next = jnp.cumsum(costs, -1)
    return y_next - costs, y_next


def nearest_visited(cells, alive, n_states: int, n_y: int):
    """For each augmented cell (s, y): the flat index of the visited cell (s, y') with the nearest y'."""
    counts = jax.ops.segment_sum(alive.ravel().astype(jnp.float32), cells.ravel(), n_states * n_y)
    visited = counts.reshape(n_states, n_y) > 0
    y = jnp.arange(n_y)
    dist = jnp.where(visited[:, None, :], jnp.abs(y[:, None] - y[None, :])[None], 10 * n_y)
    return jnp.arange(n_states)[:, None] * n_y + jnp.argmin(dist, -1)


def critic_fill(critic_batch, n_states: int):
    """nearest_visited for the augmented cells of a critic batch (cells, actions, costs, alive)."""
    cells, _, costs, alive = critic_batch
    n_y = costs.shape[-1] + 1
    return nearest_visited(cells * n_y + accumulated(costs)[0].astype(jnp.int32), alive, n_states, n_y)


def fit_critic(cells, alive, step_cost, fill, n_cells: int):
    """Tabular least-squares critic: per-cell mean of the MC cost-to-go, nearest-visited fill."""
    step_cost = step_cost * alive
    to_go = jnp.flip(jnp.cumsum(jnp.flip(step_cost, -1), -1), -1)
    sums = jax.ops.segment_sum(to_go.ravel(), cells.ravel(), n_cells)
    counts = jax.ops.segment_sum(alive.ravel().astype(jnp.float32), cells.ravel(), n_cells)
    return (sums / jnp.maximum(counts, 1.0))[fill.ravel()]


def gae(step_cost, v, v_next, alive, lam: float):
    delta = (step_cost + v_next - v) * alive

    def back(carry, d):
        a = d + lam * carry
        return a, a

    return jax.lax.scan(back, jnp.zeros(delta.shape[0]), delta.T, reverse=True)[1].T * alive


def batch_estimates(theta, batch, critic_batch, fill, rho, eta, eps, n_states: int, lam: float = GAE_LAMBDA):
    """One batch: values (3,) [cantelli, indicator, cvar] and gradients (2, 3, S, A) [mc | gae]."""
    cells, actions, costs, alive = batch
    n, horizon = costs.shape
    n_y = horizon + 1
    C = costs.sum(-1)
    every = jnp.ones_like(C, bool)
    values = jnp.stack(
        [
            risk.cantelli_estimate(C, every, rho, eps),
            risk.violation_rate(C, every, rho),
            risk.cvar_estimate(C, every, eps, eta),
        ]
    )
    mu1 = C.mean()
    w_c, w_ct = risk.cantelli_gradient_weights(mu1, rho, eps)
    f = jnp.stack([w_ct * C**2 + w_c * C, (C >= rho).astype(jnp.float32), jnp.maximum(C - eta, 0.0) / eps])
    mc_w = f[:, :, None] * alive[None] / n

    def channels(costs):  # per-step costs [c, c~, indicator, cvar excess]
        y, y_next = accumulated(costs)
        return jnp.stack(
            [
                costs,
                risk.augmented_cost(costs, y, 1.0),
                risk.indicator_cost(y, y_next, rho),
                risk.cvar_excess_cost(y, y_next, eta),
            ]
        ), y

    def aug_cells(cells, y):
        return cells * n_y + jnp.clip(y, 0, horizon).astype(jnp.int32)

    c_cells, c_actions, c_costs, c_alive = critic_batch
    c_ch, c_y = channels(c_costs)
    tables = jax.vmap(fit_critic, (None, None, 0, None, None))(
        aug_cells(c_cells, c_y), c_alive, c_ch, fill, n_states * n_y
    )
    ch, y = channels(costs)
    x = aug_cells(cells, y)
    x_next = jnp.concatenate([x[:, 1:], x[:, -1:]], 1)
    alive_next = jnp.concatenate([alive[:, 1:], jnp.zeros_like(alive[:, :1])], 1)
    v, v_next = tables[:, x], tables[:, x_next] * alive_next
    adv = jax.vmap(gae, (0, 0, 0, None, None))(ch, v, v_next, alive, lam)
    gae_w = jnp.stack([w_ct * adv[1] + w_c * adv[0], adv[2], adv[3] / eps]) / n
    grads = jax.vmap(weighted_score, (None, None, None, 0))(theta, cells, actions, jnp.concatenate([mc_w, gae_w]))
    return values, grads.reshape((2, 3) + theta.shape)


# --------------------------------------------------------------------------- study


def relative_variance(est, truth, reps: int, seed: int = 0):
    """kappa^2 = trace Cov / ||truth||^2 over the seeds (axis 0), its bootstrap SD, relative bias^2."""
    est = np.asarray(est, np.float64).reshape(est.shape[0], -1)
    norm = float(np.sum(np.asarray(truth, np.float64) ** 2))
    kappa2 = est.var(0, ddof=1).sum() / norm
    idx = np.random.default_rng(seed).integers(0, est.shape[0], (reps, est.shape[0]))
    boot = np.stack([est[i].var(0, ddof=1).sum() / norm for i in idx])
    bias2 = float(np.sum((est.mean(0) - np.ravel(truth)) ** 2) / norm)
    return float(kappa2), float(boot.std(ddof=1)), bias2


def study(scale: str, key=None) -> dict:
    cfg = settings(scale)
    env = IcyLake(MAP)
    env_params = env.default_params()
    horizon = int(env_params.max_steps)
    n_states = int(np.prod(env_params.tiles.shape))
    theta = policy_logits(n_states)
    truths = exact_truth(theta, env_params, horizon, cfg["epsilons"])
    K, N = cfg["seeds"], cfg["episodes"]
    key = jax.random.PRNGKey(2024) if key is None else key
    draw = jax.jit(jax.vmap(lambda k: rollout(theta, env_params, k, N, horizon)))
    batches = draw(jax.random.split(key, K))
    critic_batches = draw(jax.random.split(jax.random.fold_in(key, 1), K))
    fills = jax.jit(jax.vmap(lambda b: critic_fill(b, n_states)))(critic_batches)
    estimate = jax.jit(
        jax.vmap(
            lambda b, cb, fl, rho, eta, eps: batch_estimates(theta, b, cb, fl, rho, eta, eps, n_states),
            (0, 0, 0, None, None, None),
        )
    )
    rows, curves = [], {}
    for eps, truth in zip(cfg["epsilons"], truths):
        values, grads = estimate(
            batches, critic_batches, fills, jnp.float32(truth["rho"]), jnp.float32(truth["eta"]), jnp.float32(eps)
        )
        values, grads = np.asarray(values), np.asarray(grads)
        for j, sur in enumerate(SURROGATES):
            kv, kv_sd, bv = relative_variance(values[:, j : j + 1], [truth["signal"][sur]], cfg["bootstrap"])
            for e, est in enumerate(ESTIMATORS):
                kg, kg_sd, bg = relative_variance(grads[:, e, j], truth["gradient"][sur], cfg["bootstrap"])
                zero = float(np.mean(np.all(grads[:, e, j].reshape(K, -1) == 0, -1)))
                rows.append(
                    {
                        "surrogate": sur,
                        "label": LABELS[sur],
                        "estimator": est,
                        "epsilon": eps,
                        "rho": truth["rho"],
                        "eta": truth["eta"],
                        "p": truth["p"],
                        "cantelli_bound": truth["cantelli_bound"],
                        "true_value": truth["value"][sur],
                        "true_gradient_norm": float(np.linalg.norm(truth["gradient"][sur])),
                        "kappa2_value": kv,
                        "kappa2_value_sd": kv_sd,
                        "relative_bias2_value": bv,
                        "kappa2_gradient": kg,
                        "kappa2_gradient_sd": kg_sd,
                        "relative_bias2_gradient": bg,
                        "zero_gradient_batches": zero,
                        "episodes": N,
                        "seeds": K,
                    }
                )
                curves.setdefault((sur, est), []).append((eps, kv, kv_sd, kg, kg_sd))
    eps = np.asarray(cfg["epsilons"])
    slopes = {sur: _slopes(curves, sur, eps >= 0) for sur in SURROGATES}
    tail = eps <= SMALL_EPS
    slopes_small_eps = {sur: _slopes(curves, sur, tail) for sur in SURROGATES} if tail.sum() >= 3 else None
    meta = {
        "map": MAP,
        "max_steps": horizon,
        "gamma_c": 1.0,
        "policy": f"tabular softmax, logits {LOGIT_NOISE} N(0,1) (seed {POLICY_SEED}) + {GOAL_BIAS} on down/right",
        "gae_lambda": GAE_LAMBDA,
        **cfg,
        "epsilons": list(cfg["epsilons"]),
        "cost_mean": truths[0]["mu"],
        "cost_sd": truths[0]["sd"],
        "zero_cost_fraction": truths[0]["zero_cost_fraction"],
        "critic": "tabular on (cell, y), per-cell mean cost-to-go on an independent batch, nearest-visited-y fill",
        "value_estimator_gae": "Monte-Carlo (as Alg. 1)",
    }
    return {"rows": rows, "slopes": slopes, "slopes_small_eps": slopes_small_eps, "curves": curves, "settings": meta}


def _slopes(curves: dict, sur: str, keep) -> dict:
    """Least-squares slopes of log kappa^2 on log eps over the eps where keep is true."""
    c = {est: np.asarray(curves[(sur, est)])[keep] for est in ESTIMATORS}
    fit = lambda y: float(np.polyfit(np.log(c["mc"][:, 0]), np.log(y), 1)[0])  # noqa: E731
    return {"value": fit(c["mc"][:, 1]), **{f"gradient_{est}": fit(c[est][:, 3]) for est in ESTIMATORS}}


def plot(curves: dict, path: Path) -> None:
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for sur in SURROGATES:
        for est, style in zip(ESTIMATORS, ("-", "--")):
            c = np.asarray(curves[(sur, est)])
            for ax, col in ((axes[0], 1), (axes[1], 3)):
                if ax is axes[0] and est == "gae":
                    continue  # the same Monte-Carlo value estimate
                label = f"{LABELS[sur]}" + ("" if ax is axes[0] else f", {est.upper()}")
                plotting.band(
                    ax,
                    c[:, 0],
                    c[:, col],
                    c[:, col + 1],
                    label=label,
                    clip=(c[:, col] * 1e-2, None),
                    color=COLORS[sur],
                    alpha=0.15,
                    style=style,
                    marker="o",
                    ms=3,
                )
    ref = np.asarray(curves[("indicator", "mc")])
    for ax, col, title in zip(axes, (1, 3), ("constraint value", "constraint gradient")):
        # a slope -1 guide through the indicator's smallest-eps point
        ax.plot(ref[:, 0], ref[-1, col] * ref[-1, 0] / ref[:, 0], ":", color="gray", label="slope -1 (1 / eps)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.invert_xaxis()
        ax.set_xlabel("epsilon")
        ax.set_title(f"relative variance, {title}")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("kappa^2 = Var / ||m||^2")
    plotting.save_figure(fig, path, dpi=120)


def rows_slopes(rows: list[dict], small_eps: bool = False) -> dict:
    """:func:`_slopes` from the rows (the same kappa^2 values the study fits), per surrogate."""
    curves = {}
    for r in rows:
        curves.setdefault((r["surrogate"], r["estimator"]), []).append(
            (r["epsilon"], r["kappa2_value"], r["kappa2_value_sd"], r["kappa2_gradient"], r["kappa2_gradient_sd"])
        )
    eps = np.asarray([e for e, *_ in curves[(SURROGATES[0], "mc")]])
    return {sur: _slopes(curves, sur, eps <= SMALL_EPS if small_eps else eps >= 0) for sur in SURROGATES}


def fig2_checks(rows: list[dict]) -> dict:
    """Prop. 5.1 on the full eps grid: the indicator's and CVaR's kappa^2 grow faster as eps -> 0
    (a more negative log-log slope) than Cantelli's, for the value and both gradient estimators;
    the slopes themselves are under "slopes"."""
    slopes = rows_slopes(rows)
    return {
        f"{sur}_{key}_steeper_than_cantelli": bool(slopes[sur][key] < slopes["cantelli"][key])
        for sur in ("indicator", "cvar")
        for key in slopes["cantelli"]
    }


DESCRIPTION = (
    "Canary Fig. 2: relative variance of Cantelli / indicator / CVaR constraint value and "
    "gradient as eps -> 0 on IcyLake (MC score function and GAE critic)"
)


@target("canary-fig2", DESCRIPTION, scales=SCALES, checks=fig2_checks)
def fig2(scale: Scale, out: Path) -> dict:
    result = study(scale.name)
    name = "canary_fig2_relative_variance.png"
    plot(result.pop("curves"), Path(out) / name)
    return {**result, "figures": [name]}

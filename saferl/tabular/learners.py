"""SVAE (Algorithm 1), its ablations (App. H.1) and the baselines SUCBVI and MVP-V, in JAX.

Why JAX: one episode of any of these learners is a dense O(S^2 A H) backward pass (candidate
sets of eq. 1, Bernstein bonuses of eq. 10, clipped Bellman backups) followed by an H-step
rollout and an exact evaluation of the executed policy on the true model.  Written as a
``lax.scan`` over episodes (inner ``lax.scan``s over steps), ``jit``-ed once per shape and
``vmap``-ed over runs, a whole study (methods x conditions x seeds, each run with its own CMDP
arrays, hyper-parameters and seed) is one compiled call: K = 10,000 episodes x 20 seeds of the
two-step instances takes seconds on a CPU.  Numpy would need a Python loop over K x H.

Everything that distinguishes the methods is a *traced* value of :class:`Hyper` (bonus type,
filter type, model-doubling flag, value cap, alpha, beta, delta), so every method shares one compilation
per CMDP shape and methods can be batched together in one ``vmap``.

Exploration noise uses *observation streams*: the n-th visit of run ``seed`` to (h, s, a) draws
its reward, cost and next state from uniforms keyed by (seed, h, s, a, n).  Methods run with the
same seed therefore see the same observations whenever they visit the same (h, s, a) the same
number of times (the paper's paired seeds).  Ties in the greedy step are broken by a per-seed
random priority over (h, s, a) (the paper's per-seed action relabelling).

Bonuses and value caps: :mod:`saferl.tabular.baselines` (each formula, its constants and its source).
All bonuses are multiplied by the planning multiplier alpha.  MVP-V's planning model (n, r^, sigma^2_R,
P^) of (h, s, a) is refreshed only when its visit count reaches a power of two (doubling); the
other methods plan on the live statistics.

Unvisited pairs (N = 0), ``Hyper.zero_count`` / ``Method.zero_count``:

* ``"uniform"`` (default; ZERO_UNIFORM): the method's own update at zero count, as App. B.1 of the SVAE
  paper ("Instance-Dependent Regret for CMDPs with Step-Wise Constraints") defines the estimates there:
  n = 1, r^ = sigma^2_R = 0, and P^ "an arbitrary fixed probability distribution on S", here uniform.
  So Q = min(cap, mean_s' V_{h+1}(s') + alpha b) with b the bonus at n = 1.  App. B.1 notes that the
  unscaled eq. 10 then gives Q = H - h + 1 (the linear term alone, (16(H - h) + 5) iota >= H - h + 1);
  with the bonus scaled by alpha (App. H.6) it gives far less optimism.  The paper specifies the
  zero-count estimates but not what its alpha-scaled runs did with them; this reading is the one
  that reproduces the paper's numbers (docs/results/svae-studies-full.md): Table 1 SVAE
  R / R_+ / Viol = -2.44 / 1.46 / 1.36 x 10^3 (paper -2.406 / 1.428 / 1.426), Table 2 Sigma_V
  0.730 / 2.615 (paper 0.739 / 2.691), H.5 R(K) = 18.00 (paper 18.00, with the H.5 layout of
  :func:`saferl.tabular.envs.recursive_elimination`).
* ``"cap"`` (ZERO_CAP): Q = the method's cap (H - h + 1, H for MVP-V), Qlow = 0: the value the unscaled
  algorithm gives.  Table 1 SVAE -3.08 / 1.42 / 1.29, SUCBVI (BF) -3.63 / 1.06 / 1.27 (below SVAE on
  R_+, against the paper's ordering), Table 2 Sigma_V 1.019 / 3.537, H.5 R(K) = 19.20.

The initialisation of P^ never adds observed successors (App. B.1): the filter uses only N(s, a, s').

:func:`plan_values` returns every planning quantity (Q, V, the candidate sets, cbar, bonus, SUCBVI's
Qlow, Vlow) for tests; :func:`plan` the four the episode needs.  The episode outputs also carry
``policy_safe`` (pi_k in Pi_safe on the true model), used only by tests.

The cost-confidence multiplier beta scales the radius of eq. 9: cbar = c^ - beta sqrt(2 iota / n).
Filters: 0 = none (MVP-V), 1 = own cost bound only (SVAE w/o propagation), 2 = the recursion of
eq. 1 on (cbar, observed successors) (SVAE, ablations, SUCBVI, MVP-V + filter).  The filter always
uses the live statistics, also for MVP-V + filter.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from saferl.foundation import struct
from saferl.foundation.hashing import fmix32
from saferl.tabular import cmdp as cm
from saferl.tabular.baselines import (  # noqa: F401  (re-exported)
    BONUS_HOEFFDING,
    BONUS_HOEFFDING_P,
    BONUS_MVP,
    BONUS_SUCBVI,
    BONUS_SUCBVI_BF,
    BONUS_SVAE,
    bonus,
    value_cap,
)

FILTER_NONE, FILTER_OWN, FILTER_RECURSIVE = range(3)
# Q of a pair never visited (App. B.1): eq. 10 / the method's update at n = 1 with r^ = sigma^2_R = 0 and a
# uniform P^ (ZERO_UNIFORM, the default), or the cap H - h + 1 (H for MVP-V) of the unscaled algorithm (ZERO_CAP).
ZERO_UNIFORM, ZERO_CAP = range(2)
ZERO_COUNT = {"uniform": ZERO_UNIFORM, "cap": ZERO_CAP}


@struct.dataclass
class Hyper:
    """Per-run (traced) hyper-parameters: a method is a point in this space."""

    alpha: jax.Array
    beta: jax.Array
    delta: jax.Array
    bonus: jax.Array  # BONUS_*
    filter: jax.Array  # FILTER_*
    doubling: jax.Array  # bool: refresh planning model only when a count doubles (MVP-V)
    cap_total: jax.Array  # bool: clip Q at H (total-return bound, MVP-V) instead of H - h + 1
    zero_count: jax.Array  # ZERO_*: the value of an unvisited (h, s, a)


@dataclasses.dataclass(frozen=True)
class Method:
    name: str
    bonus: int
    filter: int
    doubling: bool
    alpha: float
    beta: float
    cap_total: bool = False
    zero_count: str = "uniform"  # a key of ZERO_COUNT

    def hyper(
        self, delta: float = 0.05, alpha: float | None = None, beta: float | None = None, zero_count: str | None = None
    ) -> Hyper:
        return Hyper(
            alpha=jnp.float32(self.alpha if alpha is None else alpha),
            beta=jnp.float32(self.beta if beta is None else beta),
            delta=jnp.float32(delta),
            bonus=jnp.int32(self.bonus),
            filter=jnp.int32(self.filter),
            doubling=jnp.bool_(self.doubling),
            cap_total=jnp.bool_(self.cap_total),
            zero_count=jnp.int32(ZERO_COUNT[self.zero_count if zero_count is None else zero_count]),
        )


# The paper's selected multipliers (App. H.6).  Controlled studies (H.3-H.5): (alpha, beta) = (0.003, 0.17)
# for SVAE and its ablations; navigation (H.2): the values below.
CONTROLLED = (0.003, 0.17)
METHODS = {
    "SVAE": Method("SVAE", BONUS_SVAE, FILTER_RECURSIVE, False, *CONTROLLED),
    "SVAE (Hoeffding)": Method("SVAE (Hoeffding)", BONUS_HOEFFDING, FILTER_RECURSIVE, False, *CONTROLLED),
    "SVAE (Hoeffding-P)": Method("SVAE (Hoeffding-P)", BONUS_HOEFFDING_P, FILTER_RECURSIVE, False, *CONTROLLED),
    "SVAE w/o propagation": Method("SVAE w/o propagation", BONUS_SVAE, FILTER_OWN, False, *CONTROLLED),
    "SUCBVI": Method("SUCBVI", BONUS_SUCBVI, FILTER_RECURSIVE, False, 0.001, 0.30),
    "SUCBVI (BF)": Method("SUCBVI (BF)", BONUS_SUCBVI_BF, FILTER_RECURSIVE, False, 0.001, 0.30),
    "MVP-V + filter": Method("MVP-V + filter", BONUS_MVP, FILTER_RECURSIVE, True, 3e-6, 0.30, True),
    "MVP-V": Method("MVP-V", BONUS_MVP, FILTER_NONE, True, 2.405e-6, 0.30, True),
}
NAVIGATION = {
    "SVAE": (0.0003, 0.30),
    "SUCBVI": (0.001, 0.30),
    "MVP-V + filter": (3e-6, 0.30),
    "MVP-V": (2.405e-6, 0.30),
}  # MVP-V has no filter: its beta is unused
NAVIGATION_OPTIONS = {"SUCBVI (BF)": NAVIGATION["SUCBVI"]}  # named alternatives, not in the paper's table


@struct.dataclass
class EnvArrays:
    """One run's CMDP (float32 for the learner) plus ground-truth arrays used only for metrics."""

    P: jax.Array  # (H, S, A, S)
    cdf: jax.Array  # (H, S, A, S) cumulative P with the last support entry pushed above 1
    r: jax.Array  # (H, S, A)
    c: jax.Array  # (H, S, A)
    tau: jax.Array
    s1: jax.Array
    bernoulli: jax.Array  # bool
    true_safe: jax.Array  # (H, S, A) A_safe,h(s)
    viable: jax.Array  # (H, S) V_safe,h
    local_var: jax.Array  # (H, S, A) V(R) + V(P, V*_{h+1}), the summand of Sigma (eq. 5)
    watch: jax.Array  # (H, S, A) bool: "detected" = all watched cbar > tau (H.5)
    watch_excl: jax.Array  # (H, S, A) bool: "excluded" = no watched action is a candidate (H.4)


def env_arrays(m: cm.CMDP, watch: np.ndarray | None = None, watch_excl: np.ndarray | None = None) -> EnvArrays:
    g = cm.safe_subgraph(m)
    _, Vstar = cm.optimal_safe_policy(m, g)
    cdf = np.cumsum(m.P, -1)
    cdf = np.where(cdf >= 1.0 - 1e-6, 2.0, cdf)
    if watch is None:
        watch = np.zeros(m.r.shape, dtype=bool)
    if watch_excl is None:
        watch_excl = np.zeros(m.r.shape, dtype=bool)
    f32 = lambda x: jnp.asarray(x, dtype=jnp.float32)  # noqa: E731
    return EnvArrays(
        P=f32(m.P),
        cdf=f32(cdf),
        r=f32(m.r),
        c=f32(m.c),
        tau=jnp.float32(m.tau),
        s1=jnp.int32(m.s1),
        bernoulli=jnp.bool_(m.bernoulli_rewards),
        true_safe=jnp.asarray(g.actions),
        viable=jnp.asarray(g.states[:-1]),
        local_var=f32(cm.local_variance(m, Vstar)),
        watch=jnp.asarray(watch, dtype=bool),
        watch_excl=jnp.asarray(watch_excl, dtype=bool),
    )


@struct.dataclass
class Stats:
    N: jax.Array  # (H, S, A) visit counts N_h^k(s, a)
    Nsas: jax.Array  # (H, S, A, S) transition counts N_h^k(s, a, s')
    sumR: jax.Array
    sumR2: jax.Array
    sumC: jax.Array
    # planning model snapshot (equal to the live statistics unless MVP-V's doubling is on)
    pN: jax.Array
    pNsas: jax.Array
    psumR: jax.Array
    psumR2: jax.Array


def init_stats(H: int, S: int, A: int) -> Stats:
    z = jnp.zeros((H, S, A), jnp.float32)
    zz = jnp.zeros((H, S, A, S), jnp.float32)
    return Stats(z, zz, z, z, z, z, zz, z, z)


def iota(S: int, A: int, H: int, K, delta) -> jax.Array:
    """iota = log(32 S^2 A H K / delta) (Algorithm 1, line 2)."""
    return jnp.log(32.0 * S * S * A * H * jnp.asarray(K, jnp.float32) / delta)


def cost_lcb(st: Stats, hp: Hyper, io) -> jax.Array:
    """eq. 9 with radius multiplier beta: cbar = c^ - beta sqrt(2 iota / n), n = max(N, 1)."""
    n = jnp.maximum(st.N, 1.0)
    return st.sumC / n - hp.beta * jnp.sqrt(2.0 * io / n)


def plan_values(st: Stats, env: EnvArrays, hp: Hyper, prio: jax.Array, io) -> dict:
    """One backward pass of Algorithm 1 (lines 6-16): candidate sets, bonuses, Q, greedy policy.

    Returns a dict of arrays: ``pi`` (H, S) int, ``cand`` (H, S, A) and ``cand_states`` (H, S) bool
    (the candidate subgraph of lines 8-9), ``cbar`` (H, S, A) (eq. 9), ``Q`` and ``bonus`` (H, S, A)
    (line 11 and eq. 10 after alpha), ``V`` (H, S) (line 14), and the pessimistic ``Qlow``, ``Vlow``
    of the same greedy policy (computed for every method, used only by the SUCBVI (BF) bonus).
    """
    H, S, A = st.N.shape
    cbar = cost_lcb(st, hp, io)
    cost_ok = cbar <= env.tau
    n = jnp.maximum(st.pN, 1.0)
    rhat = st.psumR / n
    sig2 = jnp.maximum(st.psumR2 / n - rhat**2, 0.0)
    unvisited = st.pN == 0
    # App. B.1: at zero count r^ = sigma^2_R = 0, n = 1 and P^ is "an arbitrary fixed probability
    # distribution on S" (here uniform); ZERO_CAP instead sets Q = the cap (the unscaled algorithm).
    Phat = jnp.where(unvisited[..., None], 1.0 / S, st.pNsas / n[..., None])
    cap_unvisited = unvisited & (hp.zero_count == ZERO_CAP)
    supp = st.Nsas > 0  # observed successors (live statistics); never the zero-count P^

    def step(carry, h):
        Vn, Vlow_n, cand_next = carry
        bad_succ = jnp.any(supp[h] & ~cand_next[None, None, :], -1)  # observed successor not a candidate
        cand = jnp.select(
            [hp.filter == FILTER_RECURSIVE, hp.filter == FILTER_OWN],
            [cost_ok[h] & ~bad_succ, cost_ok[h]],
            jnp.ones_like(cost_ok[h]),
        )
        cand_states = jnp.any(cand, -1)
        PV = Phat[h] @ Vn
        var_p = jnp.maximum(Phat[h] @ Vn**2 - PV**2, 0.0)  # V(P^, V_{h+1})
        var_low = Phat[h] @ (Vn - Vlow_n) ** 2
        hr = (H - 1 - h).astype(jnp.float32)  # the paper's H - h (1-based h): the range of V_{h+1}
        cap = value_cap(hp.cap_total, h, H)
        b = hp.alpha * bonus(hp.bonus, io, n[h], var_p, sig2[h], hr, H, var_low)
        Q = jnp.where(cap_unvisited[h], cap, jnp.minimum(cap, rhat[h] + PV + b))
        Qlow = jnp.where(cap_unvisited[h], 0.0, jnp.maximum(0.0, rhat[h] + Phat[h] @ Vlow_n - b))
        allowed = jnp.where(cand_states[:, None], cand, True)
        Qm = jnp.where(allowed, Q, -jnp.inf)
        ties = allowed & (Qm >= Qm.max(-1, keepdims=True))
        a = jnp.argmax(jnp.where(ties, prio[h], -1.0), -1)
        V = jnp.take_along_axis(Q, a[:, None], -1)[:, 0]
        Vlow = jnp.take_along_axis(Qlow, a[:, None], -1)[:, 0]
        return (V, Vlow, cand_states), dict(
            pi=a, cand=cand, cand_states=cand_states, Q=Q, Qlow=Qlow, V=V, Vlow=Vlow, bonus=b
        )

    init = (jnp.zeros(S), jnp.zeros(S), jnp.ones(S, dtype=bool))
    _, out = jax.lax.scan(step, init, jnp.arange(H), reverse=True)
    out["cbar"] = cbar
    return out


def plan(st: Stats, env: EnvArrays, hp: Hyper, prio: jax.Array, io):
    """:func:`plan_values` reduced to (pi (H, S), candidate actions (H, S, A), candidate states (H, S), cbar)."""
    out = plan_values(st, env, hp, prio, io)
    return out["pi"], out["cand"], out["cand_states"], out["cbar"]


def _uniforms(seed, h, s, a, n, S, A):
    """Three uniforms for the n-th visit of run ``seed`` to (h, s, a): its observation stream."""
    idx = ((h * S + s) * A + a).astype(jnp.uint32)
    x = fmix32(fmix32(seed.astype(jnp.uint32) ^ jnp.uint32(0x9E3779B9)) ^ idx)
    x = fmix32(x + n.astype(jnp.uint32) * jnp.uint32(0x27D4EB2F))
    streams = fmix32(x ^ jnp.array([0x68E31DA4, 0xB5297A4D, 0x1B56C4E9], dtype=jnp.uint32))
    return (streams >> 8).astype(jnp.float32) * (1.0 / (1 << 24))


def _episode(st: Stats, env: EnvArrays, hp: Hyper, prio, seed, io):
    H, S, A = st.N.shape
    pi, cand, cand_states, cbar = plan(st, env, hp, prio, io)

    def act(s, h):
        a = pi[h, s]
        u = _uniforms(seed, h, s, a, st.N[h, s, a], S, A)
        s_next = jnp.minimum(jnp.sum(env.cdf[h, s, a] <= u[0]), S - 1)
        R = jnp.where(env.bernoulli, (u[1] < env.r[h, s, a]).astype(jnp.float32), env.r[h, s, a])
        C = (u[2] < env.c[h, s, a]).astype(jnp.float32)
        return s_next, (s, a, s_next, R, C)

    _, (ss, aa, sn, R, C) = jax.lax.scan(act, env.s1, jnp.arange(H))
    hh = jnp.arange(H)

    # ---- metrics on the true model (never seen by the learner)
    Ppi = env.P[hh[:, None], jnp.arange(S)[None, :], pi]  # (H, S, S)
    rpi = jnp.take_along_axis(env.r, pi[..., None], -1)[..., 0]
    cpi = jnp.take_along_axis(env.c, pi[..., None], -1)[..., 0]

    def back(V, h):
        return rpi[h] + Ppi[h] @ V, None

    Vpi, _ = jax.lax.scan(back, jnp.zeros(S), hh, reverse=True)

    def fwd(mu, h):
        return mu @ Ppi[h], (mu @ jnp.maximum(cpi[h] - env.tau, 0.0), mu)

    mu0 = jax.nn.one_hot(env.s1, S)
    _, (exp_viol, mu) = jax.lax.scan(fwd, mu0, hh)
    pi_safe_act = jnp.take_along_axis(env.true_safe, pi[..., None], -1)[..., 0]  # (H, S)
    safe_taken = env.true_safe[hh, ss, aa]
    before_unsafe = jnp.cumprod(safe_taken.astype(jnp.int32)).astype(bool)  # h < tau_k
    out = dict(
        value=Vpi[env.s1],
        exp_viol=exp_viol.sum(),
        viol=jnp.maximum(env.c[hh, ss, aa] - env.tau, 0.0).sum(),
        sigma=jnp.where(before_unsafe, env.local_var[hh, ss, aa], 0.0).sum(),
        policy_safe=~jnp.any((mu > 0) & ~pi_safe_act),  # pi_k in Pi_safe (safe at every reachable vertex)
        lemma1_bad=jnp.any(env.true_safe & ~cand),
        empty_bad=jnp.any(env.viable[hh, ss] & ~cand_states[hh, ss]),
        detected=jnp.any(env.watch) & jnp.all(jnp.where(env.watch, cbar > env.tau, True)),
        excluded=jnp.any(env.watch_excl) & ~jnp.any(env.watch_excl & cand),
        states=ss.astype(jnp.int8),
        actions=aa.astype(jnp.int8),
    )

    # ---- statistics update (Algorithm 1, line 18)
    N = st.N.at[hh, ss, aa].add(1.0)
    Nsas = st.Nsas.at[hh, ss, aa, sn].add(1.0)
    sumR = st.sumR.at[hh, ss, aa].add(R)
    sumR2 = st.sumR2.at[hh, ss, aa].add(R * R)
    sumC = st.sumC.at[hh, ss, aa].add(C)
    # planning model: refreshed for every visited (h, s, a), or with MVP-V's doubling only when its
    # count reaches a power of two.  Only the H visited rows can change (one visit per step).
    rows = (hh, ss, aa)
    Ni = N[rows].astype(jnp.int32)
    refresh = jnp.logical_or(~hp.doubling, (Ni & (Ni - 1)) == 0)  # (H,); Ni >= 1 here

    def upd(p, live):
        r = refresh.reshape((H,) + (1,) * (live.ndim - 3))
        return p.at[rows].set(jnp.where(r, live[rows], p[rows]))

    st = Stats(
        N,
        Nsas,
        sumR,
        sumR2,
        sumC,
        pN=upd(st.pN, N),
        pNsas=upd(st.pNsas, Nsas),
        psumR=upd(st.psumR, sumR),
        psumR2=upd(st.psumR2, sumR2),
    )
    return st, out


def _run_one(env: EnvArrays, hp: Hyper, seed, K: int):
    H, S, A = env.r.shape
    io = iota(S, A, H, K, hp.delta)
    idx = jnp.arange(H * S * A, dtype=jnp.uint32)
    prio = fmix32(idx * jnp.uint32(0x9E3779B9) ^ fmix32(seed.astype(jnp.uint32) + jnp.uint32(12345))) >> 8
    prio = prio.astype(jnp.float32).reshape(H, S, A) * (1.0 / (1 << 24))

    def body(st, _):
        return _episode(st, env, hp, prio, seed, io)

    _, outs = jax.lax.scan(body, init_stats(H, S, A), None, length=K)
    return outs


@partial(jax.jit, static_argnames=("K",))
def _run_batch(env: EnvArrays, hp: Hyper, seeds, K: int):
    return jax.vmap(_run_one, in_axes=(0, 0, 0, None))(env, hp, seeds, K)


def stack(trees):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def run_batch(envs: list[EnvArrays], hypers: list[Hyper], seeds: list[int], K: int) -> dict:
    """Run len(envs) independent learners (same CMDP shape) for K episodes in one compiled call.

    Returns a dict of numpy arrays with leading axes (batch, K): ``value`` (exact V^{pi_k}(s1)),
    ``exp_viol`` (exact expected step-wise violation of pi_k), ``viol`` (sampled sum_h [c_h - tau]_+),
    ``sigma`` (the summand of Sigma_V, eq. 5), ``policy_safe`` (pi_k in Pi_safe), ``lemma1_bad`` (a truly
    safe action is not a candidate), ``empty_bad`` (a visited viable state has no candidate), ``detected``,
    ``excluded`` (see :class:`EnvArrays`), ``states`` (H,) and ``actions`` (H,) of the sampled trajectory.
    """
    outs = _run_batch(stack(envs), stack(hypers), jnp.asarray(seeds, dtype=jnp.int32), K)
    return {k: np.asarray(v) for k, v in outs.items()}


def run_methods(
    m: cm.CMDP,
    methods: list[Method | tuple[Method, dict]],
    seeds: list[int],
    K: int,
    watch: np.ndarray | None = None,
    delta: float = 0.05,
    watch_excl: np.ndarray | None = None,
) -> dict[str, dict]:
    """Convenience: every method x seed on one CMDP, batched; returns {method name: outputs}."""
    ea = env_arrays(m, watch, watch_excl)
    envs, hyps, sds, names = [], [], [], []
    for item in methods:
        meth, kw = (item, {}) if isinstance(item, Method) else item
        for s in seeds:
            envs.append(ea)
            hyps.append(meth.hyper(delta, **kw))
            sds.append(s)
        names.append(meth.name)
    out = run_batch(envs, hyps, sds, K)
    n = len(seeds)
    return {name: {k: v[i * n : (i + 1) * n] for k, v in out.items()} for i, name in enumerate(names)}


# --------------------------------------------------------------------------- metrics


def regret_curves(value: np.ndarray, v_star: float):
    """Cumulative regret R(k) (eq. 2) and strong regret R_+(k) from exact policy values (..., K)."""
    gap = v_star - value.astype(np.float64)
    return np.cumsum(gap, -1), np.cumsum(np.maximum(gap, 0.0), -1)


def moving_average(x: np.ndarray, window: int = 500) -> np.ndarray:
    """Trailing moving average over up to ``window`` episodes (shorter at the start)."""
    x = np.asarray(x, dtype=np.float64)
    c = np.cumsum(x, -1)
    k = np.arange(1, x.shape[-1] + 1)
    lagged = np.concatenate([np.zeros(x.shape[:-1] + (window,)), c[..., :-window]], -1)[..., : x.shape[-1]]
    return (c - lagged) / np.minimum(k, window)


def log_grid(K: int, n: int = 60) -> np.ndarray:
    """Episode indices (0-based) spaced logarithmically, for compact curves."""
    return np.unique(np.clip(np.round(np.geomspace(1, K, n)).astype(int) - 1, 0, K - 1))


def mean_sd(x) -> tuple[float, float]:
    x = np.asarray(x, dtype=np.float64)
    sd = float(x.std(ddof=1)) if x.size > 1 else 0.0
    return float(x.mean()), sd


def finite(x: float) -> float:
    return float(x) if math.isfinite(x) else float("nan")

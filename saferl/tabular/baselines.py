"""Exploration bonuses and value caps of SVAE, its ablations and the baselines SUCBVI and MVP-V.

Every formula is written on the *original* reward scale of the navigation CMDP (per-step rewards in
[0, 1], returns in [0, H]), with the paper's 1-based step h, ``hr = H - h`` the range of V_{h+1},
``n = max(N, 1)`` and ``x = iota / n``.  The learners multiply the whole bonus by the planning
multiplier alpha (App. H.6), so the constants below fix only the *shape* of each bonus; iota is
SVAE's iota = log(32 S^2 A H K / delta) for every method (one common confidence level; alpha absorbs
the remaining scale, as in the paper's tuning).

SVAE (eq. 10 of the SVAE paper)
    b = 4 sqrt(V(P^, V_{h+1}) x) + 2 sqrt(sigma^2_R x) + (16 hr + 5) x
    Q clipped at H - h + 1 (Algorithm 1, line 11).
SVAE (Hoeffding) / (Hoeffding-P) (App. H.1)
    the same with V(P^, V_{h+1}) -> hr^2 / 4 and sigma^2_R -> 1/4 (Hoeffding), or only
    V(P^, V_{h+1}) -> hr^2 / 4 (Hoeffding-P); the linear correction is kept.
SUCBVI (Xiong et al. 2023, "Provably safe RL with step-wise violation constraints")
    SUCBVI is UCBVI (Azar et al. 2017) planned over the estimated safe actions; its planning bonus
    is UCBVI's Bernstein-Freedman bonus (UCBVI-BF, Azar et al. 2017, Alg. 4):
        sqrt(8 L Var_{P^}(V_{h+1}) / N) + 14 H L / (3 N) + sqrt(8 sum_y P^(y) W(y) / N),
    where W(y) <= H^2 bounds (V_{h+1} - V*_{h+1})^2(y).  Here with iota = 2 L, the computable
    upper/lower-value form of the correction, W = (Vbar - Vlow)^2 (Vlow: the pessimistic value of
    the same greedy policy, planned with the same bonus subtracted), the range of V_{h+1} (hr) in
    place of H, and a Hoeffding term for the per-(h, s, a) Bernoulli reward estimate (the SVAE
    paper's SUCBVI "estimates unknown rewards and costs separately for each (h, s, a)"; SUCBVI itself
    assumes known rewards and state-only costs):
        b = 2 sqrt(V(P^, Vbar_{h+1}) x) + 2 sqrt(P^ (Vbar_{h+1} - Vlow_{h+1})^2 x) + sqrt(2 x) + 7 hr x / 3.
    Q clipped at H - h + 1, as for SVAE ("both methods use the same recursive safety filter, so the
    comparison focuses on their planning rules", App. H.1).  Caveats: Xiong et al.'s own text was not
    available to us, so this is UCBVI-BF as SUCBVI's planning rule, not a line-by-line copy; UCBVI
    itself clips at H (and takes a running minimum over episodes, not done here).  On the navigation
    study (8 environments x 5 seeds, paper multipliers) the correction form hardly matters (UCBVI-BF's
    literal W = H^2: R_+(K) 1.06e3 either way) but the clip does: clipping at H (so unvisited pairs
    are worth H at every step) gives R_+(K) 5.0e3, R(K) 0.32e3, Viol(K) 1.45e3 instead of 1.06e3,
    -3.63e3, 1.27e3 (paper: 2.59e3, 0.15e3, 1.55e3).
MVP-V (Zhou, Zhang & Du 2023, "Sharp variance-dependent bounds in RL", Alg. 1; built on MVP of
Zhang, Ji & Du 2021)
    MVP-V works on a time-homogeneous MDP whose *total* reward is at most 1.  Following App. H.6 of
    the SVAE paper, each (state, step) pair is a state and rewards are divided by H.  On that scale
    its bonus and update are
        b' = c1 sqrt(V(P^, V'_{h+1}) x) + c2 sqrt(sigma'^2_R x) + c3 x,  c1 = 460/9, c2 = 2 sqrt(2), c3 = 544/9,
        Q' = min(1, r^' + P^ V'_{h+1} + b'),
    and the empirical model (n, r^, sigma^2_R, P^) of a pair is recomputed only when its visit count
    reaches 1, 2, 4, 8, ... (the trigger set {2^(i-1)}; doubling).  Multiplying through by H (V = H V',
    r = H r', sigma_R = H sigma'_R) gives the original-scale form used here:
        b = (460/9) sqrt(V(P^, V_{h+1}) x) + 2 sqrt(2 sigma^2_R x) + (544/9) H x,   Q = min(H, ...).
    The cap is the *total-return* bound 1 (H on the original scale) at every step, not H - h + 1:
    MVP-V bounds only the total reward, so it does not know that fewer steps remain later.  At zero
    count the unscaled bonus is c3 iota >= 1, so an unvisited pair has Q' = 1, i.e. Q = H.
    (An earlier version clipped MVP-V at H - h + 1 like SVAE.  With the total-return clip, MVP-V's
    first ~1,000 navigation episodes are spent on pairs that are worth H at every step: R_+(K) goes
    from 0.81e3 / 0.75e3 (MVP-V + filter / MVP-V) to 5.1e3 / 5.1e3.  The paper's 46.8e3 / 34.0e3,
    which keep growing over all 10,000 episodes, are not reproduced.)

Unvisited pairs (N = 0) get the method's cap (H - h + 1, or H for MVP-V) explicitly: the paper notes
eq. 10 gives Q = H - h + 1 at zero count (App. B.1); with alpha < 1 the scaled bonus would not, so
the learners keep the zero-count value of the unscaled algorithm.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

BONUS_SVAE, BONUS_HOEFFDING, BONUS_HOEFFDING_P, BONUS_SUCBVI, BONUS_MVP = range(5)

MVP_C1, MVP_C2, MVP_C3 = 460.0 / 9.0, 2.0 * math.sqrt(2.0), 544.0 / 9.0


def svae_bonus(x, var_p, sig2, hr):
    """eq. 10 (before alpha)."""
    return 4.0 * jnp.sqrt(var_p * x) + 2.0 * jnp.sqrt(sig2 * x) + (16.0 * hr + 5.0) * x


def sucbvi_bonus(x, var_p, var_low, hr):
    """UCBVI-BF in upper/lower-value form with a Hoeffding reward term (before alpha)."""
    return 2.0 * jnp.sqrt(var_p * x) + 2.0 * jnp.sqrt(var_low * x) + jnp.sqrt(2.0 * x) + 7.0 * hr * x / 3.0


def mvp_bonus(x, var_p, sig2, H):
    """MVP-V's bonus on the original reward scale (before alpha): H times the normalised bonus."""
    return MVP_C1 * jnp.sqrt(var_p * x) + MVP_C2 * jnp.sqrt(sig2 * x) + MVP_C3 * H * x


def bonus(kind, io, n, var_p, sig2, hr, H, var_low=None):
    """The exploration bonus of method ``kind`` (a BONUS_* code, may be traced), before alpha.

    var_p: V(P^, V_{h+1}); sig2: empirical reward variance; hr = H - h (1-based h), the range of
    V_{h+1}; var_low: P^ (Vbar - Vlow)^2 for SUCBVI (0 if omitted).
    """
    x = io / n
    var_low = jnp.zeros_like(var_p) if var_low is None else var_low
    quarter_hr2 = hr**2 / 4.0
    return jnp.select(
        [kind == BONUS_SVAE, kind == BONUS_HOEFFDING, kind == BONUS_HOEFFDING_P, kind == BONUS_SUCBVI],
        [svae_bonus(x, var_p, sig2, hr), svae_bonus(x, quarter_hr2, 0.25, hr),
         svae_bonus(x, quarter_hr2, sig2, hr), sucbvi_bonus(x, var_p, var_low, hr)],
        mvp_bonus(x, var_p, sig2, H),
    )


def value_cap(cap_total, h, H):
    """The clip of Q at 0-based step h: H - h (the paper's H - h + 1), or H when ``cap_total`` (MVP-V)."""
    return jnp.where(cap_total, jnp.float32(H), (H - h).astype(jnp.float32))

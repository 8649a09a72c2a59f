"""Episodic tabular CMDP with step-wise constraints: the model and its exact instance quantities.

Everything here is plain float64 numpy: these are the *ground-truth* computations
(exact policy evaluation, the safe subgraph of eq. 1, the optimal safe policy,
Var* of eq. 4, the branching depth B(G_safe), S*, kappa of eq. 7 and C(M) of eq. 8)
used for evaluation and tests.  The learners in :mod:`saferl.tabular.learners`
never see them, except for metrics.

Indexing: steps are 0-based in code (``h = 0..H-1`` is the paper's ``h = 1..H``), so
the paper's ``H - h + 1`` is ``H - h`` here and the paper's ``H - h`` is ``H - h - 1``.
A non-stationary deterministic policy is an int array ``pi[h, s]`` of shape (H, S).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np


@dataclasses.dataclass(frozen=True)
class CMDP:
    """M = (S, A, H, P_h, r_h, c_h, tau, s_1).

    P: (H, S, A, S) transition kernels; r, c: (H, S, A) reward and cost means in [0, 1];
    rewards are Bernoulli(r) when ``bernoulli_rewards`` else deterministic r; costs are
    always Bernoulli(c) (a cost mean of 0 or 1 is therefore deterministic).
    """

    P: np.ndarray
    r: np.ndarray
    c: np.ndarray
    tau: float
    s1: int = 0
    bernoulli_rewards: bool = False

    def __post_init__(self):
        P = np.asarray(self.P, dtype=np.float64)
        if P.ndim != 4 or P.shape[1] != P.shape[3]:
            raise ValueError(f"P must have shape (H, S, A, S), got {P.shape}")
        if not np.allclose(P.sum(-1), 1.0, atol=1e-9) or (P < 0).any():
            raise ValueError("every P_h(.|s,a) must be a probability distribution")
        for name in ("r", "c"):
            arr = np.asarray(getattr(self, name), dtype=np.float64)
            if arr.shape != P.shape[:3]:
                raise ValueError(f"{name} must have shape {P.shape[:3]}, got {arr.shape}")
            if (arr < 0).any() or (arr > 1).any():
                raise ValueError(f"{name} must lie in [0, 1]")
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "P", P)

    @property
    def H(self) -> int:
        return self.P.shape[0]

    @property
    def S(self) -> int:
        return self.P.shape[1]

    @property
    def A(self) -> int:
        return self.P.shape[2]

    @property
    def reward_var(self) -> np.ndarray:
        """V(R_h(s, a)): r(1-r) for Bernoulli rewards, 0 for deterministic ones."""
        return self.r * (1 - self.r) if self.bernoulli_rewards else np.zeros_like(self.r)


# --------------------------------------------------------------------------- evaluation


def _take(arr: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """arr[h, s, pi[h, s], ...] for arrays indexed (H, S, A, ...)."""
    H, S = pi.shape
    return arr[np.arange(H)[:, None], np.arange(S)[None, :], pi]


def evaluate(m: CMDP, pi: np.ndarray) -> np.ndarray:
    """Exact V^pi_h(s) for h = 0..H (V_{H} = 0): shape (H + 1, S)."""
    pi = np.asarray(pi)
    V = np.zeros((m.H + 1, m.S))
    rp, Pp = _take(m.r, pi), _take(m.P, pi)
    for h in range(m.H - 1, -1, -1):
        V[h] = rp[h] + Pp[h] @ V[h + 1]
    return V


def occupancy(m: CMDP, pi: np.ndarray) -> np.ndarray:
    """mu^pi_h(s) = P^pi(s_h = s | s_1) for h = 0..H: shape (H + 1, S)."""
    Pp = _take(m.P, np.asarray(pi))
    mu = np.zeros((m.H + 1, m.S))
    mu[0, m.s1] = 1.0
    for h in range(m.H):
        mu[h + 1] = mu[h] @ Pp[h]
    return mu


def expected_violation(m: CMDP, pi: np.ndarray) -> float:
    """E^pi[sum_h [c_h(s_h, a_h) - tau]_+]: the per-episode expected step-wise violation."""
    mu = occupancy(m, pi)
    excess = np.maximum(_take(m.c, np.asarray(pi)) - m.tau, 0.0)
    return float((mu[:-1] * excess).sum())


def return_variance(m: CMDP, pi: np.ndarray) -> float:
    """E^pi[sum_h V(R_h) + V(P_h(.|s_h,a_h), V^pi_{h+1})] = Var of the total return (eq. 4 summand)."""
    pi = np.asarray(pi)
    V, mu = evaluate(m, pi), occupancy(m, pi)
    Pp = _take(m.P, pi)
    total = 0.0
    for h in range(m.H):
        mean = Pp[h] @ V[h + 1]
        var_p = Pp[h] @ V[h + 1] ** 2 - mean**2
        total += mu[h] @ (_take(m.reward_var, pi)[h] + np.maximum(var_p, 0.0))
    return float(total)


# --------------------------------------------------------------------------- safe subgraph


@dataclasses.dataclass(frozen=True)
class SafeSubgraph:
    actions: np.ndarray  # (H, S, A) bool: a in A_safe,h(s)
    states: np.ndarray  # (H + 1, S) bool: s in V_safe,h (V_safe,H+1 = S)


def safe_sets(cost_ok: np.ndarray, support: np.ndarray) -> SafeSubgraph:
    """Backward recursion of eq. 1 from a cost test (H, S, A) and successor sets (H, S, A, S).

    A_h(s) = {a : cost_ok_h(s, a), support_h(s, a) subset of V_{h+1}}, V_h = {s : A_h(s) nonempty},
    V_{H+1} = S.  With true costs and supports this is G_safe; with optimistic costs and observed
    successors it is SVAE's candidate subgraph.
    """
    H, S, A = cost_ok.shape
    acts = np.zeros((H, S, A), dtype=bool)
    states = np.ones((H + 1, S), dtype=bool)
    for h in range(H - 1, -1, -1):
        succ_ok = ~(support[h] & ~states[h + 1][None, None, :]).any(-1)
        acts[h] = cost_ok[h] & succ_ok
        states[h] = acts[h].any(-1)
    return SafeSubgraph(acts, states)


def safe_subgraph(m: CMDP) -> SafeSubgraph:
    """G_safe of eq. 1 (true costs, true supports)."""
    return safe_sets(m.c <= m.tau, m.P > 0)


def optimal_safe_policy(m: CMDP, g: SafeSubgraph | None = None):
    """A deterministic pi* optimal at every viable state (Lemma B.1) and V* (H + 1, S).

    At non-viable states pi* is the unconstrained greedy action and V* is set to 0 there;
    neither is ever used, because safe actions only lead to viable states.
    """
    g = safe_subgraph(m) if g is None else g
    V = np.zeros((m.H + 1, m.S))
    pi = np.zeros((m.H, m.S), dtype=np.int64)
    for h in range(m.H - 1, -1, -1):
        Q = m.r[h] + m.P[h] @ V[h + 1]
        Qs = np.where(g.actions[h], Q, -np.inf)
        pi[h] = np.where(g.states[h], Qs.argmax(-1), Q.argmax(-1))
        V[h] = np.where(g.states[h], Qs.max(-1), 0.0)
    return pi, V


def reachable_safe_vertices(m: CMDP, g: SafeSubgraph | None = None) -> np.ndarray:
    """(H + 1, S) bool: union over safe policies of V^pi, i.e. vertices reachable from (s1, 1) in G_safe."""
    g = safe_subgraph(m) if g is None else g
    reach = np.zeros((m.H + 1, m.S), dtype=bool)
    if not g.states[0, m.s1]:
        return reach
    reach[0, m.s1] = True
    for h in range(m.H):
        edges = reach[h][:, None, None] & g.actions[h][:, :, None] & (m.P[h] > 0)
        reach[h + 1] = edges.any((0, 1))
    return reach


def branching_depth(m: CMDP, g: SafeSubgraph | None = None) -> int:
    """B(G_safe): the most stochastic transitions on one path of G_safe from (s1, 1)."""
    g = safe_subgraph(m) if g is None else g
    D = np.zeros((m.H + 1, m.S))
    for h in range(m.H - 1, -1, -1):
        stoch = ((m.P[h] > 0).sum(-1) > 1).astype(float)
        nxt = np.where(m.P[h] > 0, D[h + 1][None, None, :], -np.inf).max(-1)
        D[h] = np.where(g.actions[h], stoch + nxt, -np.inf).max(-1)
    return int(D[0, m.s1])


def successor_span(m: CMDP, g: SafeSubgraph | None = None) -> float:
    """S*: the largest span of V*_{h+1} over supp P_h(.|s,a) for safe edges on safe paths from s1."""
    g = safe_subgraph(m) if g is None else g
    _, V = optimal_safe_policy(m, g)
    reach = reachable_safe_vertices(m, g)
    best = 0.0
    for h in range(m.H):
        for s in np.flatnonzero(reach[h]):
            for a in np.flatnonzero(g.actions[h, s]):
                vals = V[h + 1][m.P[h, s, a] > 0]
                best = max(best, float(vals.max() - vals.min()))
    return best


def local_variance(m: CMDP, V_next: np.ndarray) -> np.ndarray:
    """V(R_h(s,a)) + V(P_h(.|s,a), V_next[h+1]) for all (h, s, a): shape (H, S, A).

    With ``V_next = V*`` this is the summand of Sigma (eq. 5)."""
    out = np.zeros((m.H, m.S, m.A))
    for h in range(m.H):
        mean = m.P[h] @ V_next[h + 1]
        out[h] = m.reward_var[h] + np.maximum(m.P[h] @ V_next[h + 1] ** 2 - mean**2, 0.0)
    return out


def max_safe_return_variance(m: CMDP, g: SafeSubgraph | None = None, max_policies: int = 200_000):
    """Var* (eq. 4): sup over safe deterministic policies of the total-return variance.

    Exact by enumeration of the safe actions at the vertices reachable in G_safe when there are
    at most ``max_policies`` such policies; otherwise returns None (the sup is not a dynamic
    programme: the variance term depends on the policy's own continuation values).
    """
    g = safe_subgraph(m) if g is None else g
    reach = reachable_safe_vertices(m, g)
    verts = [(h, s) for h in range(m.H) for s in np.flatnonzero(reach[h])]
    choices = [np.flatnonzero(g.actions[h, s]) for h, s in verts]
    count = int(np.prod([len(c) for c in choices], dtype=float)) if choices else 1
    if count > max_policies:
        return None
    _, Vstar = optimal_safe_policy(m, g)
    base = np.zeros((m.H, m.S), dtype=np.int64)
    best = 0.0
    for combo in itertools.product(*choices):
        pi = base.copy()
        for (h, s), a in zip(verts, combo):
            pi[h, s] = a
        best = max(best, return_variance(m, pi))
    return best


def kappa(m: CMDP, g: SafeSubgraph | None = None):
    """kappa_h(s, a) of eq. 7 for unsafe actions (0 for safe ones) and kappa_h(s) = sum over unsafe a.

    Returns (kappa_sa (H, S, A), kappa_s (H + 1, S)) with kappa_{H+1} = 0.  An unsafe action with
    c <= tau has a non-viable successor by eq. 1, so the minimum is over a nonempty set.
    """
    g = safe_subgraph(m) if g is None else g
    k_sa = np.zeros((m.H, m.S, m.A))
    k_s = np.zeros((m.H + 1, m.S))
    for h in range(m.H - 1, -1, -1):
        for s in range(m.S):
            for a in range(m.A):
                if g.actions[h, s, a]:
                    continue
                gap = m.c[h, s, a] - m.tau
                if gap > 0:
                    k_sa[h, s, a] = gap**-2
                else:
                    bad = (m.P[h, s, a] > 0) & ~g.states[h + 1]
                    k_sa[h, s, a] = np.min(k_s[h + 1][bad] / m.P[h, s, a][bad])
            k_s[h, s] = k_sa[h, s].sum()
    return k_sa, k_s


def identification_complexity(m: CMDP, g: SafeSubgraph | None = None) -> float:
    """C(M) of eq. 8: sum of kappa_h(s) over vertices reachable under some safe policy."""
    g = safe_subgraph(m) if g is None else g
    _, k_s = kappa(m, g)
    return float(k_s[reachable_safe_vertices(m, g)].sum())


def instance_summary(m: CMDP) -> dict:
    """V*(s1), Var*, B(G_safe), S*, C(M) and feasibility (Assumption 1) in one dict."""
    g = safe_subgraph(m)
    _, V = optimal_safe_policy(m, g)
    return {
        "feasible": bool(g.states[0, m.s1]),
        "V_star": float(V[0, m.s1]),
        "Var_star": max_safe_return_variance(m, g),
        "B_safe": branching_depth(m, g),
        "S_star": successor_span(m, g),
        "C": identification_complexity(m, g),
    }


# --------------------------------------------------------------------------- sampling (reference)


def rollout(m: CMDP, pi: np.ndarray, rng: np.random.Generator):
    """One sampled episode under pi: (states (H+1,), actions (H,), rewards (H,), costs (H,))."""
    s = m.s1
    states, actions, rewards, costs = [s], [], [], []
    for h in range(m.H):
        a = int(pi[h, s])
        rew = float(rng.random() < m.r[h, s, a]) if m.bernoulli_rewards else m.r[h, s, a]
        cost = float(rng.random() < m.c[h, s, a])
        s = int(rng.choice(m.S, p=m.P[h, s, a]))
        actions.append(a)
        rewards.append(rew)
        costs.append(cost)
        states.append(s)
    return np.array(states), np.array(actions), np.array(rewards), np.array(costs)


def random_cmdp(
    rng: np.random.Generator, S: int, A: int, H: int, tau: float = 0.5, branch: int = 2, bernoulli_rewards: bool = True
) -> CMDP:
    """A random small CMDP: each (h, s, a) moves to ``branch`` random successors with random weights."""
    P = np.zeros((H, S, A, S))
    for h, s, a in itertools.product(range(H), range(S), range(A)):
        succ = rng.choice(S, size=min(branch, S), replace=False)
        P[h, s, a, succ] = rng.dirichlet(np.ones(len(succ)))
    P = P / P.sum(-1, keepdims=True)
    r = rng.random((H, S, A))
    c = rng.random((H, S, A))
    return CMDP(P, r, c, tau, 0, bernoulli_rewards)

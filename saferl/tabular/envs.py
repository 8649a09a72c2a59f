"""The CMDP instances of Appendix H (levels as data: each builder returns a :class:`CMDP`)."""

from __future__ import annotations

import numpy as np

from saferl.tabular.cmdp import CMDP

TAU = 0.6


def variance_two_step(u: float, tau: float = TAU) -> CMDP:
    """H.3: two steps, 8 states, 4 actions; u in {0, 0.15, 0.30} selects the safe branching action.

    Root actions 0, 1, 2 move to states (1 + 2i, 2 + 2i) with probability 1/2 each, whose step-2
    rewards are (0.4, 0.4), (0.25, 0.55), (0.1, 0.7); action 3 moves to state 7 (reward 0.5).
    The branching action with half-difference u and action 3 cost 0.2, the other two cost 0.8;
    all step-2 costs are 0.2.  V* = 0.5, Var* = u^2, B(G_safe) = 1, S* = 2u, C = 50.
    """
    halves = (0.0, 0.15, 0.30)
    branch = int(np.argmin([abs(u - x) for x in halves]))
    if abs(halves[branch] - u) > 1e-9:
        raise ValueError("u must be one of 0, 0.15, 0.30")
    S, A, H = 8, 4, 2
    P = np.zeros((H, S, A, S))
    P[:, :, :, 0] = 1.0
    P[0, 0] = 0.0
    for i in range(3):
        P[0, 0, i, 1 + 2 * i] = P[0, 0, i, 2 + 2 * i] = 0.5
    P[0, 0, 3, 7] = 1.0
    P[1] = 0.0
    P[1, :, :, 0] = 1.0  # step-2 successors are irrelevant (terminal)
    # non-root states at step 1 are unreachable; give them self-loops so P is a kernel
    for s in range(1, S):
        P[0, s] = 0.0
        P[0, s, :, s] = 1.0
    r = np.zeros((H, S, A))
    pairs = [(0.4, 0.4), (0.25, 0.55), (0.1, 0.7)]
    for i, (lo, hi) in enumerate(pairs):
        r[1, 1 + 2 * i] = lo
        r[1, 2 + 2 * i] = hi
    r[1, 7] = 0.5
    c = np.full((H, S, A), 0.2)
    c[0, 0, :3] = 0.8
    c[0, 0, branch] = 0.2
    return CMDP(P, r, c, tau, 0, bernoulli_rewards=False)


def identification_two_step(p: float, gap: float, tau: float = TAU) -> CMDP:
    """H.4: two steps, 4 states, 2 actions.  Root action 0 is safe with return 0.4; root action 1
    has return 0.5 but reaches state 3 with probability p, where both actions cost tau + gap.
    All other costs are 0.2.  Var* = 0 and C = 2 / (p gap^2)."""
    S, A, H = 4, 2, 2
    P = np.zeros((H, S, A, S))
    for s in range(S):
        P[:, s, :, s] = 1.0
    P[0, 0, 0] = [0.0, 1.0, 0.0, 0.0]
    P[0, 0, 1] = [0.0, 0.0, 1.0 - p, p]
    r = np.zeros((H, S, A))
    r[1, 1], r[1, 2], r[1, 3] = 0.4, 0.5, 0.5
    c = np.full((H, S, A), 0.2)
    c[1, 3] = tau + gap
    return CMDP(P, r, c, tau, 0, bernoulli_rewards=False)


UNSAFE_ROOT_ACTION_H4 = 1  # root action of identification_two_step that is unsafe
NONVIABLE_STATE_H4 = 3  # its non-viable successor (visited at step index 1)


REWARD_LAYOUTS_H5 = ("last", "spread")


def recursive_elimination(
    d: int, safe_continuation: bool, H: int = 5, tau: float = TAU, reward_layout: str = "last"
) -> CMDP:
    """H.5: H = 5 steps, 3 states, 2 actions, deterministic transitions.

    Root action 0 enters the low branch (state 1, return 0.4), root action 1 enters the high branch
    (state 2, return 1.0).  The branch state reached after d transitions (step index d) has two
    actions of mean cost 0.8; with ``safe_continuation`` one of them costs 0 instead.  All other costs
    are 0.  Var* = 0.

    The paper gives only the branch returns, not how they are paid per step.  ``reward_layout``:
    ``"last"`` (default) pays each branch's return at the last step (step index H - 1); ``"spread"``
    pays it in equal parts over the H - 1 steps after the root (0.1 and 0.25 per step).  The default
    is the layout that reproduces the paper's own H.5 numbers: R(K) = 18.00 with a safe continuation
    and Viol(K) = 1,994.00 for the ablation at d = 3 (docs/results/svae-studies-full.md).
    """
    if not 1 <= d <= H - 1:
        raise ValueError("need 1 <= d <= H - 1")
    if reward_layout not in REWARD_LAYOUTS_H5:
        raise ValueError(f"reward_layout must be one of {REWARD_LAYOUTS_H5}")
    S, A = 3, 2
    P = np.zeros((H, S, A, S))
    for s in (1, 2):
        P[:, s, :, s] = 1.0
    P[:, 0, :, 0] = 1.0
    P[0, 0, 0] = [0.0, 1.0, 0.0]
    P[0, 0, 1] = [0.0, 0.0, 1.0]
    r = np.zeros((H, S, A))
    if reward_layout == "spread":
        r[1:, 1] = 0.4 / (H - 1)
        r[1:, 2] = 1.0 / (H - 1)
    else:
        r[H - 1, 1] = 0.4
        r[H - 1, 2] = 1.0
    c = np.zeros((H, S, A))
    c[d, 2, :] = 0.8
    if safe_continuation:
        c[d, 2, 1] = 0.0
    return CMDP(P, r, c, tau, 0, bernoulli_rewards=False)


HIGH_BRANCH_ACTION_H5 = 1
HIGH_BRANCH_STATE_H5 = 2

# gridworld actions: up, right, down, left (row decreases when moving up)
_MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))


def navigation_gridworld(rng: np.random.Generator, n: int = 5, H: int = 20, tau: float = TAU) -> CMDP:
    """H.2: n x n stochastic navigation (n = 5).  Start: middle-left cell; goal: middle-right cell,
    absorbing.  Bernoulli rewards with mean 0.9 at the goal and 0.1 elsewhere.  For each (s, a) the
    intended move has probability U[0.8, 0.95], the rest split equally between the two perpendicular
    moves; moves off the grid stay put.  Actions that can cross the boundary between columns 3 and 4
    in rows 2-4 (1-based), by their intended move or a slip, cost U[0.7, 0.85]; other non-goal actions cost
    U[0.15, 0.3]; the goal costs 0.  Parameters are stationary across steps."""
    S, A = n * n, 4
    mid = n // 2
    start, goal = mid * n + 0, mid * n + (n - 1)

    def move(row, col, k):
        dr, dc = _MOVES[k]
        r2, c2 = row + dr, col + dc
        if 0 <= r2 < n and 0 <= c2 < n:
            return r2 * n + c2
        return row * n + col

    P1 = np.zeros((S, A, S))
    r1 = np.where(np.arange(S) == goal, 0.9, 0.1)[:, None] * np.ones((1, A))
    c1 = rng.uniform(0.15, 0.3, size=(S, A))
    left_col, right_col = 2, 3  # columns 3 and 4, 1-based
    for s in range(S):
        row, col = divmod(s, n)
        if s == goal:
            P1[s, :, goal] = 1.0
            c1[s] = 0.0
            continue
        for a in range(A):
            q = rng.uniform(0.8, 0.95)
            P1[s, a, move(row, col, a)] += q
            for perp in ((a + 1) % 4, (a + 3) % 4):
                P1[s, a, move(row, col, perp)] += (1 - q) / 2
            # "can cross": the intended move or one of its slips crosses the column-3/4 boundary
            outcomes = (a, (a + 1) % 4, (a + 3) % 4)
            crosses = 1 <= row <= n - 2 and any(
                (col == left_col and k == 1) or (col == right_col and k == 3) for k in outcomes
            )
            if crosses:
                c1[s, a] = rng.uniform(0.7, 0.85)
    P = np.broadcast_to(P1, (H, S, A, S)).copy()
    r = np.broadcast_to(r1, (H, S, A)).copy()
    c = np.broadcast_to(c1, (H, S, A)).copy()
    return CMDP(P, r, c, tau, start, bernoulli_rewards=True)

"""C-NPG on tabular discounted CMDPs: exact occupancies, values, gradients, Gramians and the LP.

The C-TRPO paper ("Embedding Safety into RL: A New Take on Trust Region Methods", arXiv:2411.02957), Sec. 3-4
and App. A-C.

Conventions (the paper's, Sec. 2 and App. A):

- CMDP (S, A, P, r, mu, gamma, {(c_i, b_i)}): ``P[s, a, s']``, ``r[s, a]``, ``c[i, s, a]``, ``b[i]``.
- Values are *normalised* by (1 - gamma): V_f(pi) = (1 - gamma) E[sum_t gamma^t f(s_t, a_t)] = f^T d_pi,
  where d_pi(s, a) = (1 - gamma) sum_t gamma^t P(s_t = s) pi(a|s) is the occupancy of eq. 3 / eq. 28.
- Softmax policies pi_theta(a|s) ∝ exp(theta[s, a]); theta has shape (S, A), flattened row-major
  wherever a Gramian is formed.  The parametrisation is over-complete (one redundant direction per
  state), so every Gramian is singular and the steps use the pseudo-inverse, as in eqs. 8 and 13.

The algorithm (one step, eqs. 13 and 79; eq. 8 for beta = 0):

    G_K(theta)  = sum_{s,a} d(s,a) grad log pi(a|s) grad log pi(a|s)^T            (eqs. 42-43)
    G_C(theta)  = G_K(theta) + sum_i beta phi''(b_i - V_ci) grad V_ci grad V_ci^T    (eqs. 67, 79)
    theta      <- theta + eta G_C(theta)^+ grad V_r(theta)                          (eq. 13)

with phi(x) = x log x (phi'' = 1/x, the paper's choice for C-TRPO, Sec. 5) or the log barrier
phi(x) = -log x (phi'' = 1/x^2); both are candidates named in Sec. 3.1.  G_C is the Gramian
d_theta^T grad^2 Phi_C(d_theta) d_theta of the safe mirror function Phi_C of eq. 9; the test
suite checks that identity by autodiff of eq. 9 through the occupancy.

Discrete time: Theorem 4.4 (safety) is about the flow (eq. 25); eq. 22 is its Euler
discretisation theta_{k+1} = theta_k + eps_k G_C^+ grad V_r.  The paper does not state the step of
Figure 2; we read it as a constant eps_k = eta, ``step_rule="constant"``, the default of
:func:`run_cnpg` (ctrpo-fig2: eta = 0.3, phi = -log x).

- First order.  With w = beta phi''(x) at the margin x = b - V_c, a = grad V_c^T G_K^+ grad V_r and
  q = grad V_c^T G_K^+ grad V_c, Sherman-Morrison on G_C (eq. 79) gives
  grad V_c^T G_C^+ grad V_r = a / (1 + w q), so a step changes the margin, to first order in eta, to
  x - eta a x^2 / (x^2 + beta q) for -log x (never below 0 if eta a < 2 sqrt(beta q)) and
  x (1 - eta a / (x + beta q)) for x log x, which crosses near the surface unless eta < beta / lambda,
  lambda = a / q (the LP dual near the optimum: 0.72 for figure2_cmdp, so eta < 0.014 at
  beta = 1e-2; ctrpo-fig2 reports x log x at eta = 0.003).  The bound is necessary, not sufficient.
- Second order.  With one constraint, a / (1 + w q) >= 0 whenever a >= 0: the barrier slows the
  approach to the surface but never pushes back.  The flow never reaches the surface; an Euler step adds
  eta^2 / 2 s^T hess V_c s, which does not shrink with the margin, so where V_c curves upwards along
  the step a constant step leaves the safe set with either phi.  Seen (tests/tabular/test_cnpg.py,
  docs/decisions/041-cnpg-safeguarded-step.md): -log x at eta = 0.3 on a 2-state CMDP (``CROSSING`` in
  the tests) by 8.7e-5 at beta = 1e-2 and 6.1e-6 at beta = 1; x log x at eta = 0.003 on figure2_cmdp by ~1e-10 after
  5,500-9,000 iterations (all ten ctrpo-fig2 starts, 3e-9 by 20,000); x log x at eta = beta / (5 lambda),
  beta = 1, on each of 14 random CMDPs.
  A constant-step iterate that has left is evaluated with the curvature at the margin 1e-12, and
  pinv(G_C) then all but freezes it (w ~ 1e22 swamps G_K's spectrum); the violation stays in V_c.

``step_rule="safeguarded"``: from an iterate whose margins b_i - V_ci all exceed 1e-12, take the first
of eta, eta/2, ..., eta 2^-max_halvings (default 30) whose next iterate keeps every exact margin
above 1e-12; if none does, stay put (``eta_used`` 0).  Guaranteed, by induction: from such a
theta_0 every iterate has V_c < b - 1e-12 in exact values (float64 linear solves; ~1e-16), so phi stays
finite and its curvature is the true one (never the clamp); where the constant step keeps every
margin above 1e-12 the trajectories are identical.  Not guaranteed: convergence.  Halving can
only spend the margin (near the surface a > 0, so the first-order change of V_c is >= 0), so where
V_c curves upwards along the surface the accepted steps shrink geometrically and the iterates stop
on the surface short of the LP optimum (``CROSSING``: 0.033 below V* at eta = 0.3, where a constant
eta = 0.03 stays safe).  On figure2_cmdp with x log x at eta = 0.3, where the constant step leaves by 0.034 and ends
0.02 from V*, it stays safe and is within 1e-6 of V* after 300 iterations.  Nor: a monotone V_r
(there is no Armijo condition), safety with estimated values (C-TRPO's V_c comes from samples),
anything for starts with a margin <= 1e-12 (no safeguard there).  Cost: up to max_halvings extra
value evaluations per iteration.

Other pieces: the exact LP of eq. 33 (:func:`lp_optimum`, scipy HiGHS), brute force over
deterministic policies, and the toy CMDP of our Figure 2 reproduction (:func:`figure2_cmdp`).

Precision: everything runs in float64 (``jax.enable_x64`` scoped to each public function, so the
rest of saferl keeps JAX's float32 default).  Public functions take and return numpy arrays.
"""

from __future__ import annotations

import functools
import itertools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

PHIS = ("xlogx", "log")
STEP_RULES = ("constant", "safeguarded")
MAX_HALVINGS = 30  # "safeguarded": at most this many halvings of eta (0.3 * 2^-30 ~ 3e-10), then no step


class DiscountedCMDP(NamedTuple):
    """P: (S, A, S); r: (S, A); c: (m, S, A); b: (m,); gamma: scalar; mu: (S,)."""

    P: np.ndarray
    r: np.ndarray
    c: np.ndarray
    b: np.ndarray
    gamma: float
    mu: np.ndarray


def make_cmdp(P, r, c, b, gamma, mu) -> DiscountedCMDP:
    """Validated float64 CMDP; a single cost may be given as (S, A) and a scalar threshold."""
    P = np.asarray(P, np.float64)
    r = np.asarray(r, np.float64)
    c = np.asarray(c, np.float64)
    c = c[None] if c.ndim == 2 else c
    b = np.atleast_1d(np.asarray(b, np.float64))
    mu = np.asarray(mu, np.float64)
    S, A = r.shape
    if P.shape != (S, A, S) or c.shape[1:] != (S, A) or b.shape != (c.shape[0],) or mu.shape != (S,):
        raise ValueError(f"shape mismatch: P {P.shape}, r {r.shape}, c {c.shape}, b {b.shape}, mu {mu.shape}")
    if (P < 0).any() or not np.allclose(P.sum(-1), 1.0, atol=1e-12):
        raise ValueError("every P(.|s,a) must be a probability distribution")
    if (mu < 0).any() or not np.isclose(mu.sum(), 1.0):
        raise ValueError("mu must be a probability distribution")
    if not 0.0 <= gamma < 1.0:
        raise ValueError("gamma must lie in [0, 1)")
    return DiscountedCMDP(P, r, c, b, float(gamma), mu)


def _float64(fn):
    """Run ``fn`` with 64-bit JAX and hand back numpy arrays."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with jax.enable_x64(True):
            out = fn(*args, **kwargs)
            return jax.tree.map(np.asarray, out)

    return wrapped


def _jnp(m: DiscountedCMDP) -> DiscountedCMDP:
    return DiscountedCMDP(*(jnp.asarray(x, jnp.float64) for x in m))


# --------------------------------------------------------------------------- exact quantities (pure jax)


def _policy(theta):
    return jax.nn.softmax(theta, axis=-1)


def _state_occupancy(m, pi):
    """d(s) = (1 - gamma) mu^T (I - gamma P_pi)^{-1}  (state marginal of eq. 3)."""
    P_pi = jnp.einsum("sa,sat->st", pi, m.P)
    S = P_pi.shape[0]
    return (1.0 - m.gamma) * jnp.linalg.solve((jnp.eye(S) - m.gamma * P_pi).T, m.mu)


def _occupancy(m, theta):
    pi = _policy(theta)
    return _state_occupancy(m, pi)[:, None] * pi


def _values(m, theta):
    """(V_r, V_c) = (r^T d, c_i^T d): normalised values (Sec. 2)."""
    d = _occupancy(m, theta)
    return jnp.sum(m.r * d), jnp.einsum("isa,sa->i", m.c, d)


def _values_and_grads(m, theta):
    """(V_r, V_c, grad V_r (S*A,), Jacobian of V_c (m, S*A)) by autodiff through the occupancy's linear solve."""
    S, A = theta.shape

    def vec(t):
        V_r, V_c = _values(m, t)
        v = jnp.concatenate([V_r[None], V_c])
        return v, v

    J, v = jax.jacrev(vec, has_aux=True)(theta)
    J = J.reshape(-1, S * A)
    return v[0], v[1:], J[0], J[1:]


def _kakade_gramian(m, theta):
    """G_K = E_{d}[grad log pi grad log pi^T] (eqs. 42-43): block-diagonal, d(s)(diag pi_s - pi_s pi_s^T)."""
    pi = _policy(theta)
    ds = _state_occupancy(m, pi)
    S, A = pi.shape
    blocks = ds[:, None, None] * (jax.vmap(jnp.diag)(pi) - pi[:, :, None] * pi[:, None, :])
    return jnp.einsum("st,sab->satb", jnp.eye(S), blocks).reshape(S * A, S * A)


def _phi_code(phi: str) -> int:
    if phi not in PHIS:
        raise ValueError(f"unknown phi {phi!r}; choose from {PHIS}")
    return PHIS.index(phi)


def _step_rule_code(rule: str) -> bool:
    if rule not in STEP_RULES:
        raise ValueError(f"unknown step_rule {rule!r}; choose from {STEP_RULES}")
    return rule == "safeguarded"


def _phi_dd(x, phi):
    """phi'' at x = b - V_c > 0: phi(x) = x log x -> 1/x (code 0); phi(x) = -log x -> 1/x^2 (code 1)."""
    return jnp.where(phi == 0, 1.0 / x, 1.0 / x**2)


# Margins below this count as "on the boundary": the barrier curvature is evaluated there instead
# (only reachable if a discrete step has already left the safe set, which the metrics report).
_MIN_MARGIN = 1e-12


def _cnpg_parts(m, theta, beta, phi):
    """V_r, V_c, grad V_r and G_C = G_K + sum_i beta phi''(b_i - V_ci) grad V_ci grad V_ci^T (eqs. 67, 79).

    beta = 0 gives the Kakade Gramian G_K of eq. 8 (the barrier term is then dropped, even off the safe set).
    """
    V_r, V_c, g_r, J_c = _values_and_grads(m, theta)
    curv = _phi_dd(jnp.maximum(m.b - V_c, _MIN_MARGIN), phi)
    w = jnp.where(beta > 0, beta * curv, 0.0)
    G = _kakade_gramian(m, theta) + jnp.einsum("i,ip,iq->pq", w, J_c, J_c)
    return V_r, V_c, g_r, G


def _cnpg_direction(m, theta, beta, phi):
    """G_C(theta)^+ grad V_r(theta) (eq. 13; pseudo-inverse: the softmax is over-complete), shape (S, A)."""
    _, _, g_r, G = _cnpg_parts(m, theta, beta, phi)
    return (jnp.linalg.pinv(G) @ g_r).reshape(theta.shape)


def _leaves(m, theta, direction, eta):
    """True unless every margin b_i - V_ci(theta + eta direction) exceeds _MIN_MARGIN (exact V_c; NaN leaves)."""
    return ~jnp.all(m.b - _values(m, theta + eta * direction)[1] > _MIN_MARGIN)


def _step_size(m, theta, V_c, direction, eta, guard, max_halvings):
    """The accepted step size of one C-NPG iteration (see "Discrete time" in the module docstring).

    guard False ("constant"): eta.  guard True ("safeguarded"), from a strictly safe theta (every margin
    > _MIN_MARGIN): eta 2^-h for the smallest h <= max_halvings whose iterate keeps every margin
    > _MIN_MARGIN, or 0 (the iterate stays put) if none does.  From a theta that is not strictly safe
    the safeguard does nothing (eta).
    """
    check = guard & jnp.all(m.b - V_c > _MIN_MARGIN)

    def cond(carry):
        h, bad = carry
        return bad & (h < max_halvings)

    def body(carry):
        h, _ = carry
        return h + 1, _leaves(m, theta, direction, eta * 0.5 ** (h + 1))

    h, bad = jax.lax.while_loop(cond, body, (jnp.int32(0), check & _leaves(m, theta, direction, eta)))
    return jnp.where(bad, 0.0, eta * 0.5**h)


@functools.partial(jax.jit, static_argnames=("iters", "any_guard"))
def _trajectories(m, theta0, beta, eta, phi, guard, max_halvings, iters: int, any_guard: bool):
    """C-NPG (eq. 13) for every configuration (beta, eta, phi code, guard: arrays (K,)) and initialisation (N, S, A).

    A scan over iterations, vmapped over initialisations and configurations: one compile per shape
    (and per any_guard: a batch of constant steps only compiles without the safeguard's line search).
    """

    def one(theta0, beta, eta, phi, guard):
        def step(theta, _):
            V_r, V_c, g_r, G = _cnpg_parts(m, theta, beta, phi)
            direction = (jnp.linalg.pinv(G) @ g_r).reshape(theta.shape)
            eta_k = _step_size(m, theta, V_c, direction, eta, guard, max_halvings) if any_guard else eta
            return theta + eta_k * direction, (V_r, V_c, _policy(theta), eta_k)  # eq. 13 (eq. 22: eps_k = eta_k)

        theta_T, (V_r, V_c, pi, eta_used) = jax.lax.scan(step, theta0, None, length=iters)
        V_rT, V_cT = _values(m, theta_T)
        return dict(
            V_r=jnp.concatenate([V_r, V_rT[None]]),
            V_c=jnp.concatenate([V_c, V_cT[None]]),
            pi=jnp.concatenate([pi, _policy(theta_T)[None]]),
            theta=theta_T,
            eta_used=eta_used,
        )

    over_inits = jax.vmap(one, in_axes=(0, None, None, None, None))
    return jax.vmap(over_inits, in_axes=(None, 0, 0, 0, 0))(theta0, beta, eta, phi, guard)


def _policy_gradient_theorem(m, theta, f):
    """grad V_f = E_d[A_f^unnorm grad log pi] = d(s) pi(a|s) A_f^unnorm(s, a) for the tabular softmax.

    (The normalised V_f = (1 - gamma) V_f^unnorm cancels the 1 / (1 - gamma) of the usual statement.)
    """
    pi = _policy(theta)
    P_pi = jnp.einsum("sa,sat->st", pi, m.P)
    V = jnp.linalg.solve(jnp.eye(P_pi.shape[0]) - m.gamma * P_pi, jnp.sum(pi * f, -1))
    Q = f + m.gamma * jnp.einsum("sat,t->sa", m.P, V)
    return _state_occupancy(m, pi)[:, None] * pi * (Q - V[:, None])


def _mirror_gramian(m, theta, beta, phi):
    """d_theta^T hess Phi_C(d_theta) d_theta by autodiff of the mirror function Phi_C of eq. 9.

    Phi_K(d) = sum_{s,a} d(s,a) log(d(s,a) / sum_a' d(s,a')) (eqs. 7, 30);
    Phi_C = Phi_K + beta sum_i phi(b_i - c_i^T d).
    Written independently of eq. 79 so that the tests can compare the two.
    """
    S, A = theta.shape

    def Phi_C(d_flat):
        d = d_flat.reshape(S, A)
        x = m.b - jnp.einsum("isa,sa->i", m.c, d)
        return jnp.sum(d * jnp.log(d / d.sum(-1, keepdims=True))) + beta * jnp.sum(
            jnp.where(phi == 0, x * jnp.log(x), -jnp.log(x))
        )

    occ = lambda t: _occupancy(m, t.reshape(S, A)).reshape(-1)  # noqa: E731
    J = jax.jacfwd(occ)(theta.reshape(-1))
    return J.T @ jax.hessian(Phi_C)(occ(theta.reshape(-1))) @ J


_jit = {
    name: jax.jit(fn)
    for name, fn in (
        ("occupancy", _occupancy),
        ("values", _values),
        ("values_and_grads", _values_and_grads),
        ("pgt", _policy_gradient_theorem),
        ("kakade", _kakade_gramian),
        ("parts", _cnpg_parts),
        ("direction", _cnpg_direction),
        ("mirror", _mirror_gramian),
    )
}


# --------------------------------------------------------------------------- public API (float64, numpy)


def _args(m, theta, *rest):
    return (_jnp(m), jnp.asarray(theta, jnp.float64)) + tuple(rest)


@_float64
def policy(theta):
    return _policy(jnp.asarray(theta, jnp.float64))


@_float64
def occupancy(m: DiscountedCMDP, theta):
    """Exact state-action occupancy d_theta (S, A) of eq. 3 (sums to 1)."""
    return _jit["occupancy"](*_args(m, theta))


@_float64
def values(m: DiscountedCMDP, theta):
    """(V_r, V_c): normalised reward value (scalar) and cost values (m,)."""
    return _jit["values"](*_args(m, theta))


def policy_values(m: DiscountedCMDP, pi):
    """(V_r (...), V_c (..., m)) for a batch of policies pi (..., S, A); zero probabilities allowed.

    Plain float64 numpy (no compile, independent of the JAX path): the ground truth used for grids,
    brute force, initialisations and finite differences.
    """
    pi = np.asarray(pi, np.float64)
    S = m.mu.shape[0]
    P_pi = np.einsum("...sa,sat->...st", pi, m.P)
    M = np.swapaxes(np.eye(S) - m.gamma * P_pi, -1, -2)
    ds = (1.0 - m.gamma) * np.linalg.solve(M, np.broadcast_to(m.mu, M.shape[:-1])[..., None])[..., 0]
    d = ds[..., None] * pi
    return np.einsum("sa,...sa->...", m.r, d), np.einsum("isa,...sa->...i", m.c, d)


@_float64
def value_gradients(m: DiscountedCMDP, theta):
    """(grad V_r (S, A), grad V_c (m, S, A)) by autodiff through the occupancy's linear solve."""
    shape = np.shape(theta)
    _, _, g_r, J_c = _jit["values_and_grads"](*_args(m, theta))
    return g_r.reshape(shape), J_c.reshape((-1,) + shape)


@_float64
def policy_gradient_theorem(m: DiscountedCMDP, theta, f=None):
    """Closed-form grad V_f (S, A) for a reward-like f (S, A) (default r): d(s) pi(a|s) A_f^unnorm(s, a)."""
    return _jit["pgt"](*_args(m, theta, jnp.asarray(m.r if f is None else f, jnp.float64)))


@_float64
def kakade_gramian(m: DiscountedCMDP, theta):
    """G_K (S*A, S*A), eqs. 42-43."""
    return _jit["kakade"](*_args(m, theta))


@_float64
def cnpg_gramian(m: DiscountedCMDP, theta, beta, phi: str = "xlogx"):
    """G_C (S*A, S*A), eq. 79 (beta = 0: G_K)."""
    return _jit["parts"](*_args(m, theta, jnp.float64(beta), _phi_code(phi)))[3]


@_float64
def mirror_gramian(m: DiscountedCMDP, theta, beta, phi: str = "xlogx"):
    """d_theta^T hess Phi_C(d_theta) d_theta from eq. 9 by autodiff (to check eq. 79)."""
    return _jit["mirror"](*_args(m, theta, jnp.float64(beta), _phi_code(phi)))


@_float64
def cnpg_direction(m: DiscountedCMDP, theta, beta, phi: str = "xlogx"):
    """G_C^+ grad V_r (S, A), the C-NPG direction of eq. 13 (the step run_cnpg takes, divided by eta)."""
    return _jit["direction"](*_args(m, theta, jnp.float64(beta), _phi_code(phi)))


@_float64
def run_cnpg(
    m: DiscountedCMDP,
    theta0,
    betas,
    eta,
    iters: int,
    phi="xlogx",
    step_rule="constant",
    max_halvings: int = MAX_HALVINGS,
) -> dict:
    """C-NPG trajectories (eq. 13) from every initialisation for every configuration (beta = 0: Kakade NPG, eq. 8).

    theta0: (N, S, A); betas: (K,); eta, phi and step_rule: one value or one per beta (phi in PHIS,
    step_rule in STEP_RULES: "constant" takes eta every iteration, the default and our reading of the
    paper's Figure 2; "safeguarded" halves eta up to max_halvings times until the next iterate's exact
    margins b - V_c all exceed 1e-12, see "Discrete time" in the module docstring).
    Returns V_r (K, N, iters+1), V_c (K, N, iters+1, m), pi (K, N, iters+1, S, A), final theta (K, N, S, A)
    and eta_used (K, N, iters), the step size each iteration took (0: a safeguarded step was rejected).
    Configurations are one batch, so mixing betas, step sizes, phis and step rules costs one compile per shape.
    """
    betas = np.atleast_1d(np.asarray(betas, np.float64))
    etas = np.broadcast_to(np.asarray(eta, np.float64), betas.shape)
    phis = np.broadcast_to(np.asarray([_phi_code(p) for p in np.atleast_1d(phi)]), betas.shape)
    guards = np.broadcast_to(np.asarray([_step_rule_code(r) for r in np.atleast_1d(step_rule)]), betas.shape)
    if int(max_halvings) < 0:
        raise ValueError("max_halvings must be >= 0")
    return _trajectories(
        _jnp(m),
        jnp.asarray(theta0, jnp.float64),
        jnp.asarray(betas),
        jnp.asarray(etas),
        jnp.asarray(phis),
        jnp.asarray(guards),
        jnp.int32(max_halvings),
        int(iters),
        bool(guards.any()),
    )


# --------------------------------------------------------------------------- the linear program (eq. 4 / 33)


def lp_optimum(m: DiscountedCMDP) -> dict:
    """max_d r^T d  s.t.  Bellman flow (App. A, l_s(d) = 0), d >= 0, c_i^T d <= b_i  (eq. 33), by scipy HiGHS.

    Returns value, the optimal occupancy d (S, A) and the policy pi(a|s) = d(s,a) / d(s) (eq. 30).
    """
    from scipy.optimize import linprog

    S, A = m.r.shape
    # l_s(d) = sum_a d(s,a) - gamma sum_{s',a'} P(s|s',a') d(s',a') = (1 - gamma) mu(s)
    A_eq = np.repeat(np.eye(S), A, axis=1) - m.gamma * m.P.reshape(S * A, S).T
    res = linprog(
        -m.r.reshape(-1),
        A_ub=m.c.reshape(len(m.b), -1),
        b_ub=m.b,
        A_eq=A_eq,
        b_eq=(1 - m.gamma) * m.mu,
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"CMDP linear program failed: {res.message}")
    d = np.maximum(res.x.reshape(S, A), 0.0)
    ds = d.sum(-1, keepdims=True)
    pi = np.where(ds > 0, d / np.where(ds > 0, ds, 1.0), 1.0 / A)
    return {
        "value": float(-res.fun),
        "d": d,
        "pi": pi,
        "cost_duals": -np.asarray(res.ineqlin.marginals),
        "cost_values": m.c.reshape(len(m.b), -1) @ res.x,
    }


def best_deterministic(m: DiscountedCMDP) -> dict:
    """Brute force over all A^S deterministic policies: the best safe one (value -inf if none is safe)."""
    S, A = m.r.shape
    acts = np.array(list(itertools.product(range(A), repeat=S)))
    V_r, V_c = policy_values(m, np.eye(A)[acts])
    safe = (V_c <= m.b + 1e-12).all(-1)
    if not safe.any():
        return {"value": -np.inf, "actions": None}
    k = int(np.argmax(np.where(safe, V_r, -np.inf)))
    return {"value": float(V_r[k]), "actions": tuple(int(a) for a in acts[k])}


# --------------------------------------------------------------------------- the toy CMDP of Figure 2


def figure2_cmdp() -> DiscountedCMDP:
    """A two-state, two-action CMDP whose constraint is active at the optimum (our choice).

    The paper (Figs. 2 and 5) does not publish its toy MDP.  Here action 0 ("stay") keeps the state
    and action 1 ("move") switches it, each with probability 0.9; state 1 pays more reward
    (r = [[0.2, 0], [1, 0.4]]) but every step there costs 1 (c = [[0, 0], [1, 1]]), so
    V_c = d(state 1) and b = 0.5 bounds the discounted fraction of time spent in state 1;
    gamma = 0.9, mu = state 0.  Unconstrained optimum: move in 0, stay in 1 (V_r = 0.81, V_c = 0.81).
    LP optimum: V_r* = 0.58611 with V_c = b, pi(move|0) = 0.1389, pi(stay|1) = 1 (a mixed policy);
    the best safe deterministic policy only reaches 0.45714.
    """
    stay, move = 0.9, 0.9
    P = np.array([[[stay, 1 - stay], [1 - move, move]], [[1 - stay, stay], [move, 1 - move]]])
    r = np.array([[0.2, 0.0], [1.0, 0.4]])
    c = np.array([[0.0, 0.0], [1.0, 1.0]])
    return make_cmdp(P, r, c, b=0.5, gamma=0.9, mu=np.array([1.0, 0.0]))

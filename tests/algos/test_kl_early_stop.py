"""The epochs' KL early stop of :meth:`saferl.algos.ppo.PPO.ppo_epochs` against replays of the epochs written
here, with every KL of a stop test computed in numpy:

* PPO (the default, "minibatch_mean"): an epoch's KL is the mean of its minibatches' estimates
  E[(r - 1) - log r], each taken before that minibatch's update, compared with 1.5 target_kl;
* PPO with "full_batch" (SafePO's and OmniSafe's rule, the C-TRPO targets' first-order methods): after each
  epoch, the full-batch mean KL(pi_k || pi_theta), against ``kl_stop_factor`` target_kl;
* FOCOPS ("full_batch_reverse", as ymzhang01/focops): after each epoch, the full-batch mean KL(pi_theta || pi_k);
* CUP ("full_batch", as OmniSafe's CUP): after each epoch, the full-batch mean KL(pi_ref || pi_theta), with
  pi_ref = pi_k in the improvement stage and pi_{k+1/2} in the projection stage, both against target_kl.

Each test picks its target_kl from the replayed trajectories: the correct rule stops strictly inside the epochs
and each listed wrong rule (another KL estimate, the other direction, the pre-epoch policy, the wrong reference)
would stop at another epoch, so the comparison of ``epochs_run`` tells them apart.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from helpers import make_batch  # noqa: E402

from saferl.algos import base
from saferl.algos.ppo import centred_cost_advantage, normalize
from saferl.core import constraints, networks

LIMIT = 10.0
CONSTRAINT = constraints.Constraint(limit=jnp.float32(LIMIT), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0))
EPOCHS = 8


def _algo(name, **hp):
    cls = base.get(name)
    hp = {"minibatches": 4, "epochs": EPOCHS, "actor_lr": 0.01, **hp}
    return cls(cls.resolve_hparams(hp), networks.GaussianActor(3, 1, (16,)), networks.Critics(3, 2, (8,)), "expected")


def _setup(algo, multiplier=None):
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
    if multiplier is not None:
        lagrange = agent.extra["lagrange"].replace(multiplier=jnp.float32(multiplier))
        agent = agent.replace(extra={**agent.extra, "lagrange": lagrange})
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)  # J_c = b: the multipliers do not move
    # A_r rewards wide actions, A_c narrow ones: the std moves, and the two KL directions part
    z2 = ((batch.action - batch.dist["mean"]) * jnp.exp(-batch.dist["log_std"]))[:, 0] ** 2
    adv = jnp.stack([z2 - 1.0 + 0.5 * batch.advantages[:, 0], 1.0 - z2 + 0.5 * batch.advantages[:, 1]], 1)
    return agent, batch.replace(advantages=adv)


# ---- numpy: distributions, log-densities, KLs ------------------------------------------------------------
def _np(dist):
    return {k: np.asarray(v, np.float64) for k, v in dist.items()}


def _np_kl(p, q):
    """KL(p || q) of diagonal Gaussians, per state."""
    sp, sq = np.exp(p["log_std"]), np.exp(q["log_std"])
    return np.sum(np.log(sq / sp) + (sp**2 + (p["mean"] - q["mean"]) ** 2) / (2 * sq**2) - 0.5, axis=-1)


def _np_log_prob(dist, action):
    z = (action - dist["mean"]) / np.exp(dist["log_std"])
    return np.sum(-0.5 * z**2 - dist["log_std"] - 0.5 * np.log(2 * np.pi), axis=-1)


def _np_approx_kl(dist, action, old_log_prob):
    """PPO's estimate E[(r - 1) - log r] of KL(pi_old || pi) from the stored log-probabilities."""
    log_ratio = _np_log_prob(dist, action) - old_log_prob
    return np.mean(np.expm1(log_ratio) - log_ratio)


# ---- the replay -----------------------------------------------------------------------------------------
def _replay(algo, start, params, opt_state, data, loss, key, epochs, minibatch_kl):
    """The minibatch epochs by hand, without any stop: the (params, opt_state) after each epoch and, per epoch,
    the mean over its minibatches of ``minibatch_kl(dist before the update, minibatch)`` (numpy)."""
    opt = algo.actor_optimizer()
    n_mb = int(algo.hp["minibatches"])
    size = data["obs"].shape[0]
    mb_size = size // n_mb

    @jax.jit
    def step(params, opt_state, mb):
        def objective(p):
            dist = algo.actor.distribution(p, mb["obs"])
            return loss(start, dist, algo.actor.log_prob(dist, mb["action"]), mb)[0]

        updates, opt_state = opt.update(jax.grad(objective)(params), opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    distribution = jax.jit(algo.actor.distribution)
    after, pre_means = [], []
    for epoch_key in jax.random.split(key, epochs):
        perm = np.asarray(jax.random.permutation(epoch_key, size))[: n_mb * mb_size].reshape(n_mb, mb_size)
        pre = []
        for idx in perm:
            mb = jax.tree.map(lambda x: x[idx], data)
            pre.append(minibatch_kl(_np(distribution(params, mb["obs"])), jax.tree.map(np.asarray, mb)))
            params, opt_state = step(params, opt_state, mb)
        after.append((params, opt_state))
        pre_means.append(np.mean(pre))
    return after, np.asarray(pre_means)


def _full_batch(algo, after, obs, kl_of):
    """``kl_of(pi after the epoch)`` (a numpy per-state KL), averaged over the batch, for every epoch."""
    distribution = jax.jit(algo.actor.distribution)
    return np.asarray([np.mean(kl_of(_np(distribution(p, obs)))) for p, _ in after])


# ---- thresholds -----------------------------------------------------------------------------------------
def _stop_epoch(traj, threshold):
    """Epochs run by a rule whose epoch KLs are ``traj``: up to and including the first one above threshold."""
    above = np.nonzero(np.asarray(traj) > threshold)[0]
    return int(above[0]) + 1 if above.size else len(traj)


def _intervals(traj, wrong):
    """The threshold intervals (lo, hi) between consecutive KL values in which ``traj`` stops strictly inside
    the epochs and every trajectory of ``wrong`` stops at another epoch."""
    values = np.unique(np.concatenate([traj, *wrong]))
    values = values[values > 0]
    out = []
    for lo, hi in zip(values[:-1], values[1:]):
        t = np.sqrt(lo * hi)
        j = _stop_epoch(traj, t)
        if 1 < j < len(traj) and all(_stop_epoch(w, t) != j for w in wrong):
            out.append((lo, hi))
    return out


def _pick(intervals):
    """The threshold in the widest interval (in ratio), at its geometric middle."""
    assert intervals and max(hi / lo for lo, hi in intervals) > 1.02, "no threshold tells the rules apart"
    lo, hi = max(intervals, key=lambda ab: ab[1] / ab[0])
    return float(np.sqrt(lo * hi))


def _shifted(traj):
    """The trajectory of a rule that tests the policy before the epoch (KL 0 before the first)."""
    return np.concatenate([[0.0], traj[:-1]])


def _assert_params(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-6)


def _data(batch, advantage, **extra):
    return {
        "obs": batch.obs,
        "action": batch.action,
        "log_prob": batch.log_prob,
        "dist": batch.dist,
        "advantage": advantage,
        **extra,
    }


# ---- the tests ------------------------------------------------------------------------------------------
def test_ppo_keeps_the_mean_of_the_pre_update_minibatch_estimates():
    algo = _algo("ppo")
    assert algo.hp["kl_stop_estimate"] == "minibatch_mean" and algo.hp["kl_stop_factor"] == 1.5
    agent, batch = _setup(algo)
    advantage = algo.policy_advantage(agent, batch)
    key = jax.random.PRNGKey(5)
    old = _np(batch.dist)
    after, pre = _replay(
        algo,
        agent,
        agent.actor_params,
        agent.actor_opt_state,
        _data(batch, advantage),
        algo.policy_loss,
        key,
        EPOCHS,
        lambda d, mb: _np_approx_kl(d, mb["action"], mb["log_prob"]),
    )
    full = _full_batch(algo, after, batch.obs, lambda new: _np_kl(old, new))  # OmniSafe's PPO rule
    threshold = _pick(_intervals(pre, [full]))
    j = _stop_epoch(pre, threshold)

    run = jax.jit(partial(algo.ppo_epochs, target_kl=threshold / 1.5))
    new, metrics = run(agent, batch, advantage, key)
    assert int(metrics["epochs_run"]) == j
    _assert_params(new.actor_params, after[j - 1][0])
    # approx_kl: the largest epoch mean, the frozen epochs' minibatches covering the whole batch
    frozen = _np_approx_kl(
        _np(algo.actor.distribution(after[j - 1][0], batch.obs)), np.asarray(batch.action), np.asarray(batch.log_prob)
    )
    np.testing.assert_allclose(float(metrics["approx_kl"]), max(pre[:j].max(), frozen), rtol=1e-3)


def test_ppo_full_batch_stops_on_the_batch_kl_from_pi_k_after_each_epoch():
    """SafePO's rule: after each epoch, mean_s KL(pi_k || pi_theta)[s] > factor * target_kl stops the epochs."""
    algo = _algo("ppo_lag", kl_stop_estimate="full_batch", kl_stop_factor=1.0)
    agent, batch = _setup(algo, multiplier=0.5)
    advantage = algo.policy_advantage(agent, batch)
    key = jax.random.PRNGKey(3)
    old = _np(batch.dist)
    after, pre = _replay(
        algo,
        agent,
        agent.actor_params,
        agent.actor_opt_state,
        _data(batch, advantage),
        algo.policy_loss,
        key,
        EPOCHS,
        lambda d, mb: _np_approx_kl(d, mb["action"], mb["log_prob"]),
    )
    kl = _full_batch(algo, after, batch.obs, lambda new: _np_kl(old, new))
    reverse = _full_batch(algo, after, batch.obs, lambda new: _np_kl(new, old))
    threshold = _pick(_intervals(kl, [reverse, pre, 1.5 * pre, _shifted(kl)]))
    j = _stop_epoch(kl, threshold)

    new, metrics = jax.jit(partial(algo.ppo_epochs, target_kl=threshold))(agent, batch, advantage, key)
    assert int(metrics["epochs_run"]) == j
    _assert_params(new.actor_params, after[j - 1][0])
    np.testing.assert_allclose(float(metrics["approx_kl"]), kl[j - 1], rtol=1e-3)
    # the factor scales the threshold: at factor 2 the same stop needs half the target
    doubled = _algo("ppo_lag", kl_stop_estimate="full_batch", kl_stop_factor=2.0)
    _, metrics = jax.jit(partial(doubled.ppo_epochs, target_kl=threshold / 2))(agent, batch, advantage, key)
    assert int(metrics["epochs_run"]) == j


def test_focops_stops_on_the_full_batch_kl_of_the_new_policy_from_pi_k():
    algo = _algo("focops", state_kl_bound=1.0)  # a wide indicator: the large steps keep their gradient
    assert algo.hp["kl_stop_estimate"] == "full_batch_reverse" and algo.hp["kl_stop_factor"] == 1.0
    agent, batch = _setup(algo, multiplier=0.5)
    advantage = algo.policy_advantage(agent, batch)
    key = jax.random.PRNGKey(7)
    old = _np(batch.dist)
    after, pre = _replay(
        algo,
        agent,
        agent.actor_params,
        agent.actor_opt_state,
        _data(batch, advantage),
        algo.policy_loss,
        key,
        EPOCHS,
        lambda d, mb: np.mean(_np_kl(d, _np(mb["dist"]))),
    )
    forward = _full_batch(algo, after, batch.obs, lambda new: _np_kl(new, old))  # KL(pi_theta || pi_k)
    reverse = _full_batch(algo, after, batch.obs, lambda new: _np_kl(old, new))
    threshold = _pick(_intervals(forward, [reverse, pre, _shifted(forward)]))
    j = _stop_epoch(forward, threshold)

    new, metrics = jax.jit(partial(algo.ppo_epochs, target_kl=threshold))(agent, batch, advantage, key)
    assert int(metrics["epochs_run"]) == j
    _assert_params(new.actor_params, after[j - 1][0])
    np.testing.assert_allclose(float(metrics["approx_kl"]), forward[j - 1], rtol=1e-3)


@pytest.mark.slow  # PPO's early stop on the same rule stays in make test
def test_cup_stops_both_stages_on_the_full_batch_kl_from_their_reference():
    """Stage 1 from pi_k, stage 2 from pi_{k+1/2}: KL(pi_ref || pi_theta) over the batch, against target_kl."""
    # a wide clip and a small nu: the two stages' KLs grow at comparable rates, so one target_kl stops both inside
    hp = dict(projection_epochs=EPOCHS, actor_lr=0.02, clip=2.0)
    algo = _algo("cup", **hp)
    assert algo.hp["kl_stop_estimate"] == "full_batch" and algo.hp["kl_stop_factor"] == 1.0
    agent, batch = _setup(algo, multiplier=0.03)
    start, _ = algo.before_update(agent, batch)
    np.testing.assert_allclose(float(start.extra["lagrange"].multiplier), 0.03, rtol=1e-6)  # J_c = b
    key = jax.random.PRNGKey(11)
    k_improve, k_project = jax.random.split(key)
    reward_adv = normalize(batch.advantages[:, 0])
    old = _np(batch.dist)

    improve, pre1 = _replay(
        algo,
        start,
        agent.actor_params,
        agent.actor_opt_state,
        _data(batch, reward_adv),
        algo.policy_loss,
        k_improve,
        EPOCHS,
        lambda d, mb: _np_approx_kl(d, mb["action"], mb["log_prob"]),
    )
    kl1 = _full_batch(algo, improve, batch.obs, lambda new: _np_kl(old, new))
    stage1 = _intervals(kl1, [_full_batch(algo, improve, batch.obs, lambda new: _np_kl(new, old)), pre1, _shifted(kl1)])
    assert stage1, "no threshold tells the improvement stage's rules apart"

    def projection(j1):
        """Stage 2 after stage 1 stopped at epoch j1: its epochs, its KL from pi_{k+1/2} and the wrong rules'."""
        params, opt_state = improve[j1 - 1]
        mid = algo.actor.distribution(params, batch.obs)
        data = _data(batch, reward_adv, mid_dist=mid, cost_advantage=centred_cost_advantage(batch))
        after, pre = _replay(
            algo,
            start,
            params,
            opt_state,
            data,
            algo.projection_loss,
            k_project,
            EPOCHS,
            lambda d, mb: np.mean(_np_kl(d, _np(mb["mid_dist"]))),
        )
        mid = _np(mid)
        kl = _full_batch(algo, after, batch.obs, lambda new: _np_kl(mid, new))
        wrong = [
            _full_batch(algo, after, batch.obs, lambda new: _np_kl(new, mid)),  # the other direction
            _full_batch(algo, after, batch.obs, lambda new: _np_kl(old, new)),  # from pi_k, not pi_{k+1/2}
            pre,
            _shifted(kl),
        ]
        return after, kl, wrong

    candidates = []  # (margin ratio, threshold, j1, stage-2 epochs, stage-2 KLs)
    for j1 in sorted({_stop_epoch(kl1, np.sqrt(lo * hi)) for lo, hi in stage1}):
        after, kl2, wrong = projection(j1)
        mine = [(lo, hi) for lo, hi in stage1 if _stop_epoch(kl1, np.sqrt(lo * hi)) == j1]
        for lo, hi in mine:
            for a, b in _intervals(kl2, wrong):
                if max(lo, a) < min(hi, b):
                    lo2, hi2 = max(lo, a), min(hi, b)
                    candidates.append((hi2 / lo2, float(np.sqrt(lo2 * hi2)), j1, after, kl2))
    assert candidates and max(c[0] for c in candidates) > 1.02, "no threshold tells both stages' rules apart"
    _, threshold, j1, after, kl2 = max(candidates, key=lambda c: c[0])
    j2 = _stop_epoch(kl2, threshold)

    cup = _algo("cup", **hp, target_kl=threshold)
    new, metrics = jax.jit(cup.update)(agent, batch, key)
    assert (int(metrics["epochs_run"]), int(metrics["projection_epochs_run"])) == (j1, j2)
    _assert_params(new.actor_params, after[j2 - 1][0])
    np.testing.assert_allclose(float(metrics["approx_kl"]), kl1[j1 - 1], rtol=1e-3)
    np.testing.assert_allclose(float(metrics["projection_kl"]), kl2[j2 - 1], rtol=1e-3)


def test_an_unknown_kl_stop_estimate_is_refused():
    with pytest.raises(
        ValueError,
        match="hparams.kl_stop_estimate must be one of minibatch_mean, full_batch, "
        "full_batch_reverse, got 'minibatch_max'",
    ):
        _algo("ppo", kl_stop_estimate="minibatch_max")

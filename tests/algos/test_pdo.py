"""PDO (RL-Safety-Algorithms' primal-dual optimisation): its reference defaults, the multiplier's Adam (and
plain) projected dual ascent against hand-computed sequences, the policy step as pdo.py builds it (the natural
gradient of E[ratio (A_r - lambda A_c)]) on a synthetic batch, and its line search on the reward surrogate."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import agent_for, make_algo, make_batch  # noqa: E402  (shared synthetic-batch helpers)
from jax.flatten_util import ravel_pytree

from saferl.algos import base

LIMIT = 25.0


def with_multiplier(agent, value):
    state = agent.extra["lagrange"]
    return agent.replace(extra={**agent.extra, "lagrange": state.replace(multiplier=jnp.float32(value))})


def test_registered_with_the_reference_defaults():
    cls = base.get("pdo")
    hp = cls.resolve_hparams({})
    # rl_safety_algorithms/algs/pdo/defaults.py, pdo.py, npg/npg.py, trpo/trpo.py, iwpg/iwpg.py
    assert hp["lagrange_optimizer"] == "adam" and hp["lagrange_lr"] == 0.001 and hp["lagrange_init"] == 0.001
    assert hp["target_kl"] == 0.001 and hp["cg_iters"] == 10 and hp["cg_damping"] == 0.1
    assert hp["backtracks"] == 15 and hp["decay"] == 0.8 and hp["line_search_kl"] == 1.5
    assert hp["line_search_surrogate"] == "reward"
    assert hp["critic_epochs"] == 5 and hp["critic_minibatches"] == 16 and hp["critic_lr"] == 1e-3
    assert hp["max_grad_norm"] == 0.0
    assert hp["advantage_scale"] == "return_std"  # iwpg.py: use_reward_scaling=True, unstandardised advantages
    assert "pdo/defaults.py" in cls.defaults["lagrange_lr"].doc
    assert cls.constraint_kinds == ("expected", "var")


def _dual_sequence(algo, costs, limit):
    """The multiplier after each of the batches with episode costs ``costs`` (the algorithm's own path:
    ``before_update`` on the batch's J_c)."""
    agent = agent_for(algo, limit)
    step = jax.jit(algo.before_update)
    out = []
    for cost in costs:
        agent, metrics = step(agent, make_batch(algo, agent.actor_params, cost=cost))
        out.append(float(agent.extra["lagrange"].multiplier))
        assert float(metrics["lagrange_multiplier"]) == out[-1] and float(metrics["cost_estimate"]) == cost
    return np.array(out)


def test_multiplier_follows_torch_adam_projected_dual_ascent():
    """lambda_t = max(0, lambda_{t-1} - lr mhat_t / (sqrt(vhat_t) + eps)) on the loss -lambda (J_c - b), the
    gradient h_t = b - J_c,t; torch.optim.Adam's defaults (0.9, 0.999, 1e-8), lr 0.001, lambda_0 0.001.
    The moments are written as their closed-form sums m_t = (1 - b1) sum_i b1^(t-i) h_i (not a recursion)."""
    algo = make_algo("pdo")
    # up, then far below the limit (projected at 0 while Adam's momentum still points down), then up again
    costs = [30.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 40.0, 60.0, 60.0, 60.0]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    h = LIMIT - np.array(costs)
    expected, unprojected, lam = [], [], 0.001
    for t in range(1, len(costs) + 1):
        w1, w2 = b1 ** np.arange(t - 1, -1, -1), b2 ** np.arange(t - 1, -1, -1)
        m_hat = (1 - b1) * np.sum(w1 * h[:t]) / (1 - b1**t)
        v_hat = (1 - b2) * np.sum(w2 * h[:t] ** 2) / (1 - b2**t)
        raw = lam - lr * m_hat / (math.sqrt(v_hat) + eps)
        unprojected.append(raw)
        lam = max(0.0, raw)
        expected.append(lam)
    assert min(unprojected) < 0.0 and expected.count(0.0) >= 3 and expected[-1] > 0.0  # the projection at 0 acts
    assert expected[0] == pytest.approx(0.002)  # Adam's first step is lr whatever the violation
    np.testing.assert_allclose(_dual_sequence(algo, costs, LIMIT), expected, rtol=1e-5, atol=1e-8)


def test_multiplier_plain_projected_ascent_option():
    """``lagrange_optimizer: sgd``: lambda <- max(0, lambda + lr (J_c - b)), by hand with lr 0.01, b 25."""
    algo = make_algo("pdo", lagrange_optimizer="sgd", lagrange_lr=0.01)
    got = _dual_sequence(algo, [30.0, 20.0, 5.0, 40.0, 25.0], LIMIT)
    # 0.001 + 0.05; 0.051 - 0.05; 0.001 - 0.2 -> 0; 0 + 0.15; + 0
    np.testing.assert_allclose(got, [0.051, 0.001, 0.0, 0.15, 0.15], rtol=1e-5, atol=1e-7)


def _surrogate_and_fisher(algo, agent, batch, lam, damping):
    """By hand: the batch's advantages as the trust-region family processes them (A_r standardised, A_c
    centred), p = grad E[ratio (A_r - lam A_c)], the dense Fisher (Hessian of the mean KL) plus damping, and
    grad E[ratio A_r]."""
    flat, unravel = ravel_pytree(agent.actor_params)
    adv = np.asarray(batch.advantages, np.float64)
    a_r = (adv[:, 0] - adv[:, 0].mean()) / (adv[:, 0].std() + 1e-8)
    a_c = adv[:, 1] - adv[:, 1].mean()
    old = batch.dist

    def mean_ratio_times(p, weights):
        dist = algo.actor.distribution(unravel(p), batch.obs)
        ratio = jnp.exp(algo.actor.log_prob(dist, batch.action) - batch.log_prob)
        return jnp.mean(ratio * weights)

    def mean_kl(p):
        return jnp.mean(algo.actor.kl(old, algo.actor.distribution(unravel(p), batch.obs)))

    p = jax.grad(mean_ratio_times)(flat, jnp.asarray(a_r - lam * a_c, jnp.float32))
    g = jax.grad(mean_ratio_times)(flat, jnp.asarray(a_r, jnp.float32))
    fisher = jax.hessian(mean_kl)(flat)
    return (
        np.asarray(p, np.float64),
        np.asarray(g, np.float64),
        np.asarray(fisher, np.float64) + damping * np.eye(flat.size),
        flat,
    )


@pytest.fixture(scope="module")
def pdo_setup():
    # the step's mechanics on the family's advantages (A_r standardised, A_c centred); the reference's scaling has
    # its own tests below
    algo = make_algo("pdo", cg_iters=200, cg_damping=1e-2, target_kl=0.001, advantage_scale="standardised")
    agent = agent_for(algo, LIMIT)
    batch = make_batch(algo, agent.actor_params, cost=30.0)
    return algo, agent, batch, jax.jit(algo.policy_step)


def test_advantage_is_reward_minus_lambda_cost_without_rescaling(pdo_setup):
    algo, agent, batch, _ = pdo_setup
    adv_r, adv_c = algo.advantages(batch)
    for lam in (0.0, 0.7, 3.0):
        got = algo.reward_advantage(with_multiplier(agent, lam), batch, adv_r, adv_c)
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(adv_r) - lam * np.asarray(adv_c[:, 0]), rtol=1e-6, atol=1e-6
        )


def test_policy_step_is_the_natural_gradient_step_of_g_minus_lambda_b(pdo_setup):
    """pdo.py: p = g - lambda b, x = H^-1 p, step sqrt(2 delta / p^T x) x; here accepted at the full step."""
    algo, agent, batch, step_fn = pdo_setup
    lam, delta = 0.4, algo.hp["target_kl"]
    agent = with_multiplier(agent, lam)
    p, g, fisher, flat = _surrogate_and_fisher(algo, agent, batch, lam, algo.hp["cg_damping"])
    x = np.linalg.solve(fisher, p)
    want = math.sqrt(2 * delta / (p @ x)) * x
    assert g @ want > 0  # this multiplier still leaves the reward surrogate rising: the full step is taken
    new, metrics = step_fn(agent, batch)
    assert float(metrics["accepted"]) == 1.0 and float(metrics["backtracks"]) == 0.0
    got = np.asarray(ravel_pytree(new.actor_params)[0] - flat, np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    assert float(metrics["kl"]) <= algo.hp["line_search_kl"] * delta
    # the direction changes with lambda: lambda = 0 is TRPO's natural gradient of the reward alone
    p0, *_ = _surrogate_and_fisher(algo, agent, batch, 0.0, algo.hp["cg_damping"])
    x0 = np.linalg.solve(fisher, p0)
    cosine = (x0 @ fisher @ x) / math.sqrt((x0 @ fisher @ x0) * (x @ fisher @ x))
    assert cosine < 0.99


def test_line_search_rejects_steps_that_lower_the_reward_surrogate(pdo_setup):
    """With a multiplier large enough that the Lagrangian step lowers E[ratio A_r], the reference's line search
    (trpo.py on iwpg.py's reward-only loss) accepts no candidate and PDO does not move; testing the Lagrangian
    surrogate instead (TRPO-Lag's test) accepts the step."""
    algo, agent, batch, step_fn = pdo_setup
    lam = 50.0
    agent = with_multiplier(agent, lam)
    p, g, fisher, flat = _surrogate_and_fisher(algo, agent, batch, lam, algo.hp["cg_damping"])
    assert g @ np.linalg.solve(fisher, p) < 0  # the step direction lowers the reward surrogate
    new, metrics = step_fn(agent, batch)
    assert float(metrics["accepted"]) == 0.0
    np.testing.assert_array_equal(ravel_pytree(new.actor_params)[0], flat)
    lagrangian = make_algo(
        "pdo",
        cg_iters=200,
        cg_damping=1e-2,
        target_kl=0.001,
        line_search_surrogate="lagrangian",
        advantage_scale="standardised",
    )
    moved, metrics = jax.jit(lagrangian.policy_step)(agent, batch)
    assert float(metrics["accepted"]) == 1.0
    assert not np.allclose(ravel_pytree(moved.actor_params)[0], flat)


def test_acceptance_is_kl_within_one_and_a_half_delta_and_no_reward_decrease():
    algo = make_algo("pdo", target_kl=0.01)
    base_metrics = {"kl": jnp.float32(0.0), "reward": jnp.float32(0.2)}
    cases = [
        (0.0149, 0.2, True),
        (0.0151, 0.3, False),
        (0.012, 0.25, True),  # KL up to 1.5 delta (trpo.py)
        (0.001, 0.1999, False),
        (0.001, 0.2, True),
    ]  # the surrogate may not decrease; equal is accepted
    for kl, reward, accepted in cases:
        m = {"kl": jnp.float32(kl), "reward": jnp.float32(reward)}
        assert bool(algo.acceptable(m, base_metrics)) == accepted, (kl, reward)
    strict = make_algo("pdo", target_kl=0.01, line_search_kl=1.0)
    assert not bool(strict.acceptable({"kl": jnp.float32(0.012), "reward": jnp.float32(0.3)}, base_metrics))


def test_trains_on_cartsafe_end_to_end():
    """A short run of the whole pipeline on CartSafe (discrete actions; SCPO's task for PDO): random policies
    leave |x| <= 1 on most episodes, so J_c > b = 1 and Adam raises lambda by at most lr = 0.001 a batch."""
    from saferl.training import config
    from saferl.training.trainer import Trainer

    cfg = config.resolve(
        {
            "algo": "pdo",
            "env": "CartSafe",
            "seeds": 1,
            "num_envs": 4,
            "rollout_steps": 400,
            "total_steps": 3 * 1600,
            "iterations_per_chunk": 3,
            "network": {"actor_hidden": [16], "critic_hidden": [16]},
        }
    )
    assert cfg["constraint"]["limit"] == 1.0  # CartSafe's default
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    runners, metrics = trainer.compile_chunk(runners)(runners)
    m = {k: np.asarray(v).ravel() for k, v in jax.device_get(metrics).items()}
    assert np.all(m["update_skipped"] == 0) and np.all(m["cost_estimate"] > 1.0)
    assert np.all(m["accepted"] == 1.0) and np.all(m["kl"] <= 1.5 * 0.001)
    lam = m["lagrange_multiplier"]
    assert np.all(np.diff(np.concatenate([[0.001], lam])) > 0)  # rising while the constraint is violated
    assert np.all(lam <= 0.001 + 0.001 * np.arange(1, 4) + 1e-6)  # Adam: a step of at most lr
    assert np.all(m["episode_length"] <= 300) and np.all(np.isfinite(m["critic_loss"]))


def test_a_pdo_config_written_before_the_reference_scaling_reads_as_standardised(tmp_path):
    """docs/decisions/009: a PDO run's config.yaml without ``advantage_scale`` was trained with the family's
    standardised advantages, and is read (resumed, reused) as such."""
    from saferl.training import config, run_directory

    cfg = config.resolve({"algo": "pdo", "env": "CartSafe", "seeds": 1, "num_envs": 4, "rollout_steps": 400})
    assert cfg["hparams"]["advantage_scale"] == "return_std"
    old = config.dump(cfg).replace("  advantage_scale: return_std\n", "")
    (tmp_path / "config.yaml").write_text(old)
    assert "advantage_scale" not in (tmp_path / "config.yaml").read_text()
    assert run_directory.load_run_config(tmp_path)["hparams"]["advantage_scale"] == "standardised"


@pytest.mark.parametrize("mode", ["auto", "batched", "sequential"])
def test_line_search_mode_picks_the_search_auto_by_the_backend(mode, monkeypatch):
    """``auto``: the sequential search on a CPU (it stops at the first accepted candidate), the batched one
    on an accelerator; the other two are what they say.  The backend is faked, so both branches are seen."""
    from saferl.core import trust_region as tr

    algo = make_algo("cpo", line_search=mode)
    for backend, auto in (("cpu", tr.backtracking_line_search_sequential), ("gpu", tr.backtracking_line_search)):
        monkeypatch.setattr(jax, "default_backend", lambda b=backend: b)
        expected = {
            "auto": auto,
            "batched": tr.backtracking_line_search,
            "sequential": tr.backtracking_line_search_sequential,
        }[mode]
        assert algo._line_search_fn() is expected

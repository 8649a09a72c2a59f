"""The policy's linear learning-rate schedule of the PPO family (``hparams.lr_schedule: linear``).

PyTorch's ``LinearLR(start_factor=1, end_factor=0, total_iters=N)``, stepped once per update as SafePO and
OmniSafe step it, runs the k-th update (k = 0, 1, ...) at rate lr * max(0, 1 - k / N).  The tests replay one
update's minibatch steps with a plain ``optax.adam`` at that rate and compare parameters, so a factor off by
one update, a per-minibatch decay, or a schedule that also scales the critics would fail.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from helpers import make_batch  # noqa: E402

from saferl.algos import base
from saferl.core import constraints, networks
from saferl.training import config as configlib

LIMIT = 10.0
CONSTRAINT = constraints.Constraint(limit=jnp.float32(LIMIT), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0))
LR, DECAY, MINIBATCHES = 0.01, 8, 4


def _algo(name="ppo", **hp):
    cls = base.get(name)
    hp = {
        "minibatches": MINIBATCHES,
        "epochs": 2,
        "actor_lr": LR,
        "target_kl": 0.0,
        "max_grad_norm": 0.0,
        "lr_schedule": "linear",
        "lr_decay_steps": DECAY,
        **hp,
    }
    return cls(cls.resolve_hparams(hp), networks.GaussianActor(3, 1, (16,)), networks.Critics(3, 2, (8,)), "expected")


def _at_update(agent, k):
    return agent.replace(extra={**agent.extra, "updates": jnp.int32(k)})


def _replay(algo, agent, batch, advantage, key, rate):
    """The update's epochs by hand: plain Adam at ``rate`` on the policy loss, the same permutations."""
    opt = optax.adam(rate, eps=1e-5)
    params, opt_state = agent.actor_params, opt.init(agent.actor_params)
    size = batch.obs.shape[0]
    mb_size = size // MINIBATCHES
    data = {
        "obs": batch.obs,
        "action": batch.action,
        "log_prob": batch.log_prob,
        "dist": batch.dist,
        "advantage": advantage,
    }

    def objective(p, mb):
        dist = algo.actor.distribution(p, mb["obs"])
        return algo.policy_loss(agent, dist, algo.actor.log_prob(dist, mb["action"]), mb)[0]

    for epoch_key in jax.random.split(key, int(algo.hp["epochs"])):
        perm = np.asarray(jax.random.permutation(epoch_key, size))[: MINIBATCHES * mb_size]
        for idx in perm.reshape(MINIBATCHES, mb_size):
            mb = jax.tree.map(lambda x: x[idx], data)
            updates, opt_state = opt.update(jax.grad(objective)(params, mb), opt_state, params)
            params = optax.apply_updates(params, updates)
    return params


def _close(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-6)


def test_the_kth_update_runs_at_lr_times_one_minus_k_over_n():
    algo = _algo()
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
    assert int(agent.extra["updates"]) == 0
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)
    advantage = algo.policy_advantage(agent, batch)
    key = jax.random.PRNGKey(4)
    epochs = jax.jit(algo.ppo_epochs)  # k is traced: one compile for every k
    for k in (0, 3, 7):
        new, _ = epochs(_at_update(agent, k), batch, advantage, key)
        _close(new.actor_params, _replay(algo, agent, batch, advantage, key, LR * (1 - k / DECAY)))
        if k:  # and not at the previous update's rate
            wrong = _replay(algo, agent, batch, advantage, key, LR * (1 - (k - 1) / DECAY))
            assert not np.allclose(
                np.asarray(jax.tree.leaves(new.actor_params)[0]),
                np.asarray(jax.tree.leaves(wrong)[0]),
                rtol=2e-4,
                atol=2e-6,
            )


def test_update_counts_and_the_rate_stays_at_zero_after_n_updates():
    algo = _algo("ppo_lag")
    agent = algo.init(jax.random.PRNGKey(1), CONSTRAINT)
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)
    update = jax.jit(algo.update)
    new, _ = update(_at_update(agent, 2), batch, jax.random.PRNGKey(2))
    assert int(new.extra["updates"]) == 3
    for k in (DECAY, DECAY + 5):  # rate 0: the policy stays, the critics still learn
        new, _ = update(_at_update(agent, k), batch, jax.random.PRNGKey(2))
        _close(new.actor_params, agent.actor_params)
        moved = [
            not np.allclose(a, b)
            for a, b in zip(jax.tree.leaves(new.critic_params), jax.tree.leaves(agent.critic_params))
        ]
        assert any(moved)


@pytest.mark.slow  # the schedule's counting is tested on PPO above
def test_cup_counts_one_update_for_its_two_stages():
    algo = _algo("cup", projection_epochs=1)
    agent = algo.init(jax.random.PRNGKey(1), CONSTRAINT)
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)
    new, _ = jax.jit(algo.update)(agent, batch, jax.random.PRNGKey(2))
    assert int(new.extra["updates"]) == 1
    stopped, _ = jax.jit(algo.update)(_at_update(agent, DECAY), batch, jax.random.PRNGKey(2))
    _close(stopped.actor_params, agent.actor_params)  # rate 0 in both stages


def test_a_constant_rate_keeps_the_checkpoint_layout():
    algo = _algo(lr_schedule="constant", lr_decay_steps=0)
    assert "updates" not in algo.init(jax.random.PRNGKey(0), CONSTRAINT).extra


def test_a_linear_schedule_without_its_length_is_refused():
    with pytest.raises(
        configlib.ConfigError, match="hparams.lr_decay_steps must be a whole number >= 1 with lr_schedule linear"
    ):
        configlib.resolve({"algo": "ppo", "env": "ToyReach", "hparams": {"lr_schedule": "linear"}})

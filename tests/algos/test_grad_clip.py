"""``hparams.grad_clip_scope: joint`` (SafePO's first-order code: one backward of loss_pi + loss_r + loss_c, then
``clip_grad_norm_(policy.parameters(), max_grad_norm)`` over the actor and both critics together) against one
minibatch step computed by hand: the critics' large gradients shrink the actor's step too."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from helpers import make_batch  # noqa: E402

from saferl.algos import base
from saferl.core import constraints, networks

CONSTRAINT = constraints.Constraint(limit=jnp.float32(10.0), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0))
MAX_NORM, LR = 2.0, 3e-4


def _algo(scope):
    cls = base.get("ppo_lag")
    hp = {
        "epochs": 1,
        "minibatches": 1,
        "target_kl": 0.0,
        "max_grad_norm": MAX_NORM,
        "grad_clip_scope": scope,
        "actor_lr": LR,
        "critic_lr": LR,
    }
    return cls(cls.resolve_hparams(hp), networks.GaussianActor(3, 1, (16,)), networks.Critics(3, 2, (8,)), "expected")


def _step(algo):
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
    batch = make_batch(algo, agent.actor_params, cost=10.0)
    batch = batch.replace(returns=batch.returns + 1000.0)  # critic errors ~10^3: a critic gradient far above the clip
    advantage = algo.policy_advantage(agent, batch)
    new, _ = jax.jit(algo.ppo_epochs)(agent, batch, advantage, jax.random.PRNGKey(1))
    return agent, batch, advantage, new


def test_joint_clip_scales_actor_and_critics_by_one_norm():
    algo = _algo("joint")
    agent, batch, advantage, new = _step(algo)
    perm = jax.random.permutation(jax.random.split(jax.random.PRNGKey(1), 1)[0], batch.obs.shape[0])
    mb = {
        "obs": batch.obs[perm],
        "action": batch.action[perm],
        "log_prob": batch.log_prob[perm],
        "advantage": advantage[perm],
        "returns": batch.returns[perm],
    }

    def actor_loss(p):
        dist = algo.actor.distribution(p, mb["obs"])
        return algo.policy_loss(agent, dist, algo.actor.log_prob(dist, mb["action"]), mb)[0]

    a_grad = jax.grad(actor_loss)(agent.actor_params)
    c_grad = jax.grad(lambda p: algo.critic_objective(p, mb["obs"], mb["returns"]))(agent.critic_params)
    norm = float(optax.tree.norm((a_grad, c_grad)))
    assert norm > 100 * MAX_NORM and float(optax.tree.norm(a_grad)) < MAX_NORM  # the critics' dominate
    scale = MAX_NORM / (norm + 1e-6)
    adam = optax.adam(LR, eps=1e-5)
    for params, grad, got in (
        (agent.actor_params, a_grad, new.actor_params),
        (agent.critic_params, c_grad, new.critic_params),
    ):
        grad = jax.tree.map(lambda g: scale * g, grad)
        want = optax.apply_updates(params, adam.update(grad, adam.init(params), params)[0])
        for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-8)


def test_separate_clips_leave_the_small_actor_gradient_alone():
    _, _, _, joint = _step(_algo("joint"))
    agent, _, _, separate = _step(_algo("separate"))
    moved = [
        float(optax.tree.norm(jax.tree.map(lambda a, b: a - b, new.actor_params, agent.actor_params)))
        for new in (joint, separate)
    ]
    assert moved[0] < 0.9 * moved[1], moved  # Adam's eps makes the tiny jointly clipped gradient step shorter

"""Helpers several test modules share: synthetic trust-region batches and short ToyReach training runs."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from saferl.algos import base
from saferl.core import constraints, networks
from saferl.core.rollout import Batch
from saferl.training import config
from saferl.training.trainer import Trainer

HP = dict(cg_iters=30, cg_damping=0.0, target_kl=0.01, fvp_subsample=1)  # exact Fisher: tests compare with autodiff


def make_algo(name, m=1, hidden=(16,), obs_dim=3, **hp):
    cls = base.get(name)
    actor = networks.GaussianActor(obs_dim, 1, hidden)
    critics = networks.Critics(obs_dim, 1 + m, (8,))
    return cls(cls.resolve_hparams({**HP, **hp}), actor, critics, "expected")


def make_batch(algo, params, cost, m=1, n=256, seed=0, length=50.0):
    """A synthetic batch: A_r rewards larger actions (more where obs_0 > 0), A_c,i costs them."""
    return _make_batch(algo, params, jnp.asarray(cost, jnp.float32).reshape(m), m, n, seed, length)


@partial(jax.jit, static_argnums=(0, 3, 4, 5))
def _make_batch(algo, params, cost, m, n, seed, length):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    obs = jax.random.normal(k1, (n, algo.actor.obs_dim))
    dist = algo.actor.distribution(params, obs)
    action = algo.actor.sample(dist, k2)
    noise = jax.random.normal(k3, (n, 1 + m))
    a = action[:, 0]
    adv_r = a * obs[:, 0] + 0.5 * a + 0.3 * noise[:, 0]
    adv_c = jnp.stack([a * (1.0 + i) + 0.2 * obs[:, i % obs.shape[1]] * a + 0.3 * noise[:, 1 + i] for i in range(m)], 1)
    zeros = jnp.zeros((n,))
    return Batch(
        obs=obs,
        action=action,
        log_prob=algo.actor.log_prob(dist, action),
        dist=dist,
        advantages=jnp.concatenate([adv_r[:, None], adv_c], 1),
        returns=jnp.zeros((n, 1 + m)),
        values=jnp.zeros((n, 1 + m)),
        episode_done=zeros,
        episode_return=zeros,
        episode_cost=jnp.zeros((n, m)),
        episode_discounted_cost=jnp.zeros((n, m)),
        episode_length=zeros,
        episodes={"discounted_cost": cost, "length": jnp.float32(length)},
    )


def agent_for(algo, limit, seed=0):
    constraint = constraints.Constraint(
        limit=jnp.asarray(limit, jnp.float32), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0)
    )
    if not hasattr(algo, "_test_init"):
        algo._test_init = jax.jit(algo.init)  # compile once per algorithm object
    return algo._test_init(jax.random.PRNGKey(seed + 1), constraint)


def train_toy(algo, limit=10.0, iterations=60, seeds=2, env="ToyReach", **extra):
    cfg = config.resolve(
        {
            "algo": algo,
            "env": env,
            "seeds": seeds,
            "num_envs": 8,
            "rollout_steps": 100,
            "total_steps": 800 * iterations,
            "iterations_per_chunk": iterations,
            "constraint": {"type": "expected", "limit": limit},
            "hparams": {"minibatches": 4, "epochs": 5, "actor_lr": 1e-3, "critic_lr": 1e-3},
            "network": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]},
            **extra,
        }
    )
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    runners, metrics = trainer.compile_chunk(runners)(runners)
    return jax.device_get(metrics)


def linearise(algo, agent, batch):
    """A trust-region method's local problem on a batch: its gradients (g, B, c), H^-1 [g; B] by
    conjugate gradients, and the Fisher-vector product."""
    adv_r, adv_c = algo.advantages(batch)
    grads = algo.gradients(agent, batch, adv_r, adv_c)
    matvec = algo.fisher_matvec(agent, batch)
    return grads, algo.solve(matvec, jnp.concatenate([grads.g[None], grads.B])), matvec

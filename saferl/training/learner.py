"""The learner both trainers share.

:class:`Learner` is everything after the rollout: built from a resolved config and the
(wrapped) environment's observation size, action space and cost channels, it holds the
constraint, networks, algorithm and per-channel discounts, and one pure step

    learn(agent, episodes, trajectory, key) -> (agent, episodes, metrics)

= critics on the block -> GAE for the reward and every cost channel -> episode estimates ->
PopArt -> algorithm.update -> iteration metrics.  The compiled :class:`saferl.training.trainer.Trainer` and the
Gymnasium trainer (:mod:`saferl.training.gym_trainer`) differ only in where the trajectory comes from.
"""

from __future__ import annotations

import contextlib
import math

import jax
import jax.numpy as jnp
import numpy as np

from saferl.algos import base as algos
from saferl.core import constraints, networks
from saferl.core.rollout import Batch, Trajectory, episode_estimates, initial_episodes, make_batch
from saferl.training import in_program_sweep as gridlib


def wrap_for_algorithm(env, config: dict):
    """``env`` wrapped as the config's algorithm needs (:meth:`saferl.algos.base.Algorithm.wrap_env`)."""
    return algos.get(config["algo"]).wrap_env(env, config["hparams"], config["constraint"])


def channel_count(cost_shape: tuple[int, ...]) -> int:
    return int(np.prod(cost_shape)) if cost_shape else 1


class Learner:
    """Constraint, networks, algorithm and discounts of a run, and its pure learning step.

    ``obs_dim`` and ``action_space`` are those the policy sees (after any state augmentation);
    ``env_cost_channels`` are the environment's own cost channels (the episode statistics'),
    ``wrapped_cost_channels`` those the wrapped environment emits per step (a VaR surrogate's).
    """

    def __init__(self, config: dict, obs_dim: int, action_space, env_cost_channels: int, wrapped_cost_channels: int):
        self.config = config
        net = config["network"]
        self.constraint = constraints.from_config(config["constraint"])
        self.env_cost_channels = int(env_cost_channels)
        algo_cls = algos.get(config["algo"])
        num_channels = algo_cls.cost_channels(int(wrapped_cost_channels))
        anneal = net.get("action_std_anneal")
        self.action_std_anneal = None if anneal is None else (float(anneal[0]), float(anneal[1]))
        self.actor = networks.make_actor(
            obs_dim,
            action_space,
            net["actor_hidden"],
            net["activation"],
            net["init_log_std"] if anneal is None else math.log(self.action_std_anneal[0] + self.action_std_anneal[1]),
            net["init"],
            fixed_std=anneal is not None,
        )
        #: K of the annealed std: the iterations of network.action_std_anneal_steps (default total_steps)
        per_iteration = config["rollout_steps"] * config["num_envs"]
        horizon = net.get("action_std_anneal_steps") or config["total_steps"]
        self.total_iterations = max(1, math.ceil(horizon / per_iteration))
        self.critics = networks.Critics(
            obs_dim,
            1 + num_channels,
            tuple(net["critic_hidden"]),
            net["activation"],
            normalize=bool(net["value_normalization"]),
            init_scheme=net["init"],
            **algo_cls.critic_options(1 + num_channels),
        )
        self.algo = algo_cls(
            config["hparams"], self.actor, self.critics, self.constraint.kind, self.constraint.surrogate
        )
        self.derive_discounts()

    def derive_discounts(self) -> None:
        """Per-channel discounts, GAE lambdas and truncation ends from the algorithm's hyper-parameters (again
        inside :meth:`hparams`, where they may be traced)."""
        config = self.config
        var = self.constraint.kind == "var"
        gammas = list(self.algo.channel_gammas())
        if var:  # the risk channels accumulate C(tau) with the constraint's discount
            gammas[1:] = [float(self.constraint.gamma_c)] * (len(gammas) - 1)
        self.gammas = jnp.asarray(gammas, jnp.float32)
        # a finite-horizon VaR constraint: the risk channels' return C(tau) ends at the time limit
        self.end_at_truncation = None
        if var and config["constraint"].get("finite_horizon", False):
            self.end_at_truncation = jnp.asarray([0.0] + [1.0] * (len(gammas) - 1), jnp.float32)
        # the algorithm's own channels that end at the time limit (SCPO's safety critic), and per-channel lambdas
        ends = self.algo.channel_ends_at_truncation()
        if ends is not None:
            ends = jnp.asarray(ends, jnp.float32)
            self.end_at_truncation = (
                ends if self.end_at_truncation is None else jnp.maximum(self.end_at_truncation, ends)
            )
        lambdas = self.algo.channel_lambdas()
        self.gae_lambdas = self.algo.hp["gae_lambda"] if lambdas is None else jnp.asarray(lambdas, jnp.float32)

    @contextlib.contextmanager
    def hparams(self, values: dict):
        """Within this block the algorithm reads ``values`` (traced, a sweep's) for those hyper-parameters, and the
        discounts derived from them follow; outside it, the config's."""
        if not values:
            yield
            return
        saved = (self.algo.hp, self.gammas, self.gae_lambdas, self.end_at_truncation)
        self.algo.hp = {**self.algo.hp, **values}
        try:
            self.derive_discounts()
            yield
        finally:
            self.algo.hp, self.gammas, self.gae_lambdas, self.end_at_truncation = saved

    def init_agent(self, key: jax.Array, point: dict | None = None) -> algos.AgentState:
        """The initial agent; with a sweep's grid ``point`` (traced values), its constraint and hyper-parameters."""
        constraint = self.constraint
        values = gridlib.constraint_of(point or {})
        if values:
            f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
            changes = {"limit": f32(values[k]) for k in ("limit", "rho") if k in values}
            if "epsilon" in values:
                changes["epsilon"] = f32(values["epsilon"])
            constraint = constraint.replace(**changes)
        with self.hparams(gridlib.hparams_of(point or {})):
            return self.algo.init(key, constraint)

    def scheduled_actor(self, agent: algos.AgentState, iteration) -> algos.AgentState:
        """The agent whose policy collects iteration ``iteration`` (0, 1, ...): with ``network.action_std_anneal``
        [a, b] its log-std set to log(a (1 - k / K) + b), k = ``iteration``, K = :attr:`total_iterations` (of
        ``network.action_std_anneal_steps``, k never past K: a longer run keeps the floor b; the
        reference sets it before each epoch's rollout: RL-Safety-Algorithms ``iwpg.py`` ``learn``, ``ac.update(frac
        = epoch / epochs)``, ``algs/core.py`` ``set_log_std(1 - frac)``: 0.499 frac + 0.01); unchanged otherwise."""
        if self.action_std_anneal is None:
            return agent
        a, b = self.action_std_anneal
        fraction = jnp.minimum(jnp.asarray(iteration, jnp.float32) / self.total_iterations, 1.0)
        log_std = jnp.log(a * (1.0 - fraction) + b)
        params = agent.actor_params
        return agent.replace(actor_params={**params, "log_std": jnp.full_like(params["log_std"], log_std)})

    def init_episodes(self) -> dict:
        return initial_episodes(
            self.env_cost_channels, self.constraint.kind == "var", constraints.window(self.config["constraint"])
        )

    def make_batch(
        self, agent: algos.AgentState, episodes: dict, traj: Trajectory, key: jax.Array | None = None
    ) -> Batch:
        """Critics and GAE on the block (on the algorithm's :meth:`~saferl.algos.base.Algorithm.prepare_trajectory`),
        with the episode estimates filled in.  With ``key``, the algorithm's
        :meth:`~saferl.algos.base.Algorithm.channel_value_noise` (if any) corrupts the critics' values before GAE;
        its draws come from ``fold_in(key, ...)``, so the update's own random stream is the same with or without it."""
        traj = self.algo.prepare_trajectory(agent, traj)
        noise = self.algo.channel_value_noise() if key is not None else None
        batch = make_batch(
            traj,
            self.critics,
            agent.critic_params,
            self.gammas,
            self.gae_lambdas,
            self.end_at_truncation,
            value_noise=noise,
            noise_key=None if noise is None else jax.random.fold_in(key, VALUE_NOISE_STREAM),
        )
        # No episode finished in this batch: the previous estimate is carried, and before the first
        # finished episode that is the NaN initial one (unknown, never zero: see ``learn``).
        levels = self.algo.risk_levels(agent)
        return batch.replace(
            episodes=episode_estimates(
                batch,
                episodes,
                *(levels or (None, None)),
                statistic=constraints.window_statistic(self.config["constraint"]),
            )
        )

    def learn(self, agent: algos.AgentState, episodes: dict, traj: Trajectory, key: jax.Array):
        """One learning step on a trajectory: ``(agent, episodes, metrics)``.

        Until the first episode has finished the episode estimates (J_c, the violation fraction, ...)
        are unknown (NaN, :func:`~saferl.core.rollout.initial_episodes`).  An algorithm that reads them
        (``needs_cost_estimate``, declared by each class itself) does not learn on such a batch: the
        whole step is held -- critics, PopArt normaliser, multipliers and policy -- and the agent comes
        back unchanged; the estimates stay NaN until an episode finishes.  Later batches without a
        finished episode carry the previous estimate and learn as usual.  The held update still runs
        (one compiled program, vmapped over seeds), on zeros standing in for the unknown estimates so
        that it computes no NaN, and its result is discarded by a select.  ``update_skipped`` (1 or 0)
        is in every iteration's metrics, and on a held step the algorithm's own metrics are NaN
        (missing: they describe no update).  PPO and TRPO ignore the constraint and always learn.
        """
        batch = self.make_batch(agent, episodes, traj, key)
        # each class declares it itself (base.Algorithm.__init_subclass__): PPO-Lag is a PPO, TRPO-Lag a TRPO
        needs = bool(self.algo.needs_cost_estimate)
        skip = jnp.zeros((), bool)
        work = batch
        if needs:
            keys = ("cost", "discounted_cost", "discounted_cost_sq", "violation", "excess")
            known = jnp.all(jnp.stack([jnp.all(jnp.isfinite(batch.episodes[k])) for k in keys if k in batch.episodes]))
            skip = jnp.logical_not(known)
            work = batch.replace(
                episodes=jax.tree.map(lambda x: jnp.where(skip, jnp.nan_to_num(x, nan=0.0), x), batch.episodes)
            )
        # PopArt: move the value normalisation to this batch's targets (values unchanged)
        new = agent.replace(critic_params=self.critics.update_normalizer(agent.critic_params, work.returns))
        new, algo_metrics = self.algo.update(new, work, key)
        if needs:
            new = jax.tree.map(lambda n, o: jnp.where(skip, o, n), new, agent)
            algo_metrics = {
                k: jnp.where(skip, jnp.nan, v) if jnp.issubdtype(jnp.result_type(v), jnp.floating) else v
                for k, v in algo_metrics.items()
            }
        metrics = self.iteration_metrics(batch, new)
        metrics.update(algo_metrics)
        metrics["update_skipped"] = skip.astype(jnp.float32)
        return new, batch.episodes, metrics

    def iteration_metrics(self, batch: Batch, agent) -> dict:
        done = batch.episode_done.astype(jnp.float32)
        n = jnp.sum(done)
        nan = jnp.asarray(jnp.nan, jnp.float32)

        def mean(x):
            return jnp.where(n > 0, jnp.sum(x * done) / jnp.maximum(n, 1.0), nan)

        def spread(x):  # the population SD over the iteration's finished episodes (a logger's EpCost std)
            return jnp.sqrt(mean(jnp.square(x - mean(x))))

        cost = batch.episode_discounted_cost[:, 0]
        metrics = {
            "episode_return": mean(batch.episode_return),
            "episode_cost": mean(batch.episode_cost[:, 0]),
            "episode_cost_sd": spread(batch.episode_cost[:, 0]),
            "episode_discounted_cost": mean(cost),
            "episode_length": mean(batch.episode_length.astype(jnp.float32)),
            "episodes": n,
        }
        for i in range(1, self.env_cost_channels):
            metrics[f"episode_cost_{i}"] = mean(batch.episode_cost[:, i])
        if "cost_window" in batch.episodes:  # J_c from the window (constraint.window): OmniSafe's / SafePO's EpCost
            metrics["episode_cost_window"] = batch.episodes["discounted_cost"][0]
        if "windowed_return" in batch.episodes:  # the same statistic of the returns: OmniSafe's / SafePO's EpRet
            metrics["episode_return_window"] = batch.episodes["windowed_return"]
        if self.constraint.kind == "var":
            # empirical P(C(tau) >= rho) over the episodes finished in this iteration
            metrics["violation_probability"] = mean((cost >= agent.constraint.limit).astype(jnp.float32))
        return metrics


#: fold_in constant of the value-noise draws (Learner.make_batch)
VALUE_NOISE_STREAM = 0x7A1E

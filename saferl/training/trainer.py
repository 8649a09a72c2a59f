"""The learner both trainers share, and the compiled training loop.

:class:`Learner` is everything after the rollout: built from a resolved config and the
(wrapped) environment's observation size, action space and cost channels, it holds the
constraint, networks, algorithm and per-channel discounts, and one pure step

    learn(agent, episodes, trajectory, key) -> (agent, episodes, metrics)

= critics on the block -> GAE for the reward and every cost channel -> episode estimates ->
PopArt -> algorithm.update -> iteration metrics.  The compiled :class:`Trainer` and the
Gymnasium bridge (:mod:`saferl.training.gym_trainer`) differ only in where the trajectory comes from.

:class:`Trainer` builds the JAX environment stack around a :class:`Learner`.  One training
*iteration* is a rollout (``lax.scan`` over steps, vmapped over envs) followed by ``learn``;
a *chunk* is a ``lax.scan`` over iterations, and :meth:`Trainer.compile_chunk` is the one place
where the chunk is jitted and vmapped over seeds, so S seeds run as one program; Python only
runs between chunks (logging, checkpoints, progress).

A swept config (:mod:`saferl.training.in_program_sweep`) runs ``points x seeds`` runners in the same vmapped program: each runner
gets its grid point's values as traced inputs (``Learner.hparams`` puts the hyper-parameters where the
algorithm reads them while the program is traced; the constraint values go into ``AgentState.constraint``
at init), and :meth:`Trainer.check_sweep` refuses a value that does not reach the program as a value.

Compiled programs are kept for the life of the process (:func:`compiled_program`): a second
trainer of the same config -- a resume, a notebook cell run again, another base seed -- runs
the executable the first one compiled.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from saferl.training import in_program_sweep as gridlib
from saferl.foundation import struct
from saferl.algos import base as algos
from saferl.core import constraints, networks
from saferl.core.rollout import Batch, Trajectory, collect, episode_estimates, initial_episodes, make_batch
from saferl.envs import base as envs
from saferl.envs.wrappers import AutoReset, ClipAction, EpisodeStatistics, NormalizeObservation, VecEnv
from saferl.training.provenance import training_config


@struct.dataclass
class RunnerState:
    agent: algos.AgentState
    env_state: Any
    obs: jax.Array
    key: jax.Array
    episodes: dict  # running estimate: means over the last batch with finished episodes
    iteration: jax.Array
    env_steps: jax.Array


def probe_algorithm(config: dict) -> algos.Algorithm:
    """The configured algorithm without networks: what it wraps around the environment and how many
    cost channels it adds must be known before the networks are sized."""
    constraint = constraints.from_config(config["constraint"])
    return algos.get(config["algo"])(config["hparams"], None, None, constraint.kind, constraint.surrogate)


def channel_count(cost_shape: tuple[int, ...]) -> int:
    return int(np.prod(cost_shape)) if cost_shape else 1


class Learner:
    """Constraint, networks, algorithm and discounts of a run, and its pure learning step.

    ``obs_dim`` and ``action_space`` are those the policy sees (after any state augmentation);
    ``env_cost_channels`` are the environment's own cost channels (the episode statistics'),
    ``wrapped_cost_channels`` those the wrapped environment emits per step (a VaR surrogate's).
    """

    def __init__(self, config: dict, obs_dim: int, action_space, env_cost_channels: int,
                 wrapped_cost_channels: int):
        self.config = config
        net = config["network"]
        self.constraint = constraints.from_config(config["constraint"])
        self.env_cost_channels = int(env_cost_channels)
        algo_cls = algos.get(config["algo"])
        num_channels = algo_cls.cost_channels(int(wrapped_cost_channels))
        self.actor = networks.make_actor(obs_dim, action_space, net["actor_hidden"], net["activation"],
                                         net["init_log_std"], net["init"])
        self.critics = networks.Critics(obs_dim, 1 + num_channels, tuple(net["critic_hidden"]), net["activation"],
                                        normalize=bool(net["value_normalization"]), init_scheme=net["init"],
                                        **algo_cls.critic_options(1 + num_channels))
        self.algo = algo_cls(config["hparams"], self.actor, self.critics, self.constraint.kind,
                             self.constraint.surrogate)
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
            self.end_at_truncation = ends if self.end_at_truncation is None else jnp.maximum(self.end_at_truncation, ends)
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

    def init_episodes(self) -> dict:
        return initial_episodes(self.env_cost_channels, self.constraint.kind == "var",
                                constraints.window(self.config["constraint"]))

    def make_batch(self, agent: algos.AgentState, episodes: dict, traj: Trajectory, key: jax.Array | None = None) -> Batch:
        """Critics and GAE on the block (on the algorithm's :meth:`~saferl.algos.base.Algorithm.prepare_trajectory`),
        with the episode estimates filled in.  With ``key``, the algorithm's
        :meth:`~saferl.algos.base.Algorithm.channel_value_noise` (if any) corrupts the critics' values before GAE;
        its draws come from ``fold_in(key, ...)``, so the update's own random stream is the same with or without it."""
        traj = self.algo.prepare_trajectory(agent, traj)
        noise = self.algo.channel_value_noise() if key is not None else None
        batch = make_batch(traj, self.critics, agent.critic_params, self.gammas, self.gae_lambdas,
                           self.end_at_truncation, value_noise=noise,
                           noise_key=None if noise is None else jax.random.fold_in(key, VALUE_NOISE_STREAM))
        # No episode finished in this batch: the previous estimate is carried, and before the first
        # finished episode that is the NaN initial one (unknown, never zero: see ``learn``).
        levels = self.algo.risk_levels(agent)
        return batch.replace(episodes=episode_estimates(batch, episodes, *(levels or (None, None)),
                                                        statistic=constraints.window_statistic(self.config["constraint"])))

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
            work = batch.replace(episodes=jax.tree.map(lambda x: jnp.where(skip, jnp.nan_to_num(x, nan=0.0), x),
                                                       batch.episodes))
        # PopArt: move the value normalisation to this batch's targets (values unchanged)
        new = agent.replace(critic_params=self.critics.update_normalizer(agent.critic_params, work.returns))
        new, algo_metrics = self.algo.update(new, work, key)
        if needs:
            new = jax.tree.map(lambda n, o: jnp.where(skip, o, n), new, agent)
            algo_metrics = {k: jnp.where(skip, jnp.nan, v) if jnp.issubdtype(jnp.result_type(v), jnp.floating) else v
                            for k, v in algo_metrics.items()}
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

        cost = batch.episode_discounted_cost[:, 0]
        metrics = {
            "episode_return": mean(batch.episode_return),
            "episode_cost": mean(batch.episode_cost[:, 0]),
            "episode_discounted_cost": mean(cost),
            "episode_length": mean(batch.episode_length.astype(jnp.float32)),
            "episodes": n,
        }
        for i in range(1, self.env_cost_channels):
            metrics[f"episode_cost_{i}"] = mean(batch.episode_cost[:, i])
        if "cost_window" in batch.episodes:  # J_c from the window (constraint.window): OmniSafe's / SafePO's EpCost
            metrics["episode_cost_window"] = batch.episodes["discounted_cost"][0]
        if self.constraint.kind == "var":
            # empirical P(C(tau) >= rho) over the episodes finished in this iteration
            metrics["violation_probability"] = mean((cost >= agent.constraint.limit).astype(jnp.float32))
        return metrics


#: fold_in constant of the value-noise draws (Learner.make_batch)
VALUE_NOISE_STREAM = 0x7A1E


def iteration_schedule(config: dict, steps_per_iteration: int) -> tuple[int, int]:
    """``(iterations_per_chunk, num_chunks)`` for the config's ``total_steps``."""
    iterations = max(1, math.ceil(config["total_steps"] / steps_per_iteration))
    chunk = int(config["iterations_per_chunk"]) or max(1, min(iterations, math.ceil(iterations / 25)))
    return chunk, math.ceil(iterations / chunk)


class Trainer:
    """The compiled training program of a resolved config (a registered JAX environment)."""

    def __init__(self, config: dict):
        self.config = config
        probe = probe_algorithm(config)
        constraint = constraints.from_config(config["constraint"])
        base_env = self.base_env = envs.make(config["env"])
        env_params = envs.make_env_params(base_env, config["env_params"])
        self.clips_actions = bool(base_env.clip_actions)  # the velocity tasks take the raw sample (saferl.envs.base)
        env = EpisodeStatistics(ClipAction(base_env) if self.clips_actions else base_env,
                                gamma_c=float(constraint.gamma_c))
        # the algorithm wraps before networks are sized: augmentations change the observation
        # and may add cost channels (a VaR surrogate's, saferl.envs.risk)
        env = AutoReset(probe.wrap_env(env, config["constraint"]), pool_size=config["reset_pool"])
        self.env_params = env.lift_params(env_params)
        self.venv = NormalizeObservation(VecEnv(env, config["num_envs"]), enabled=config["normalize_observations"])
        obs_dim = int(np.prod(env.observation_space(self.env_params).shape))
        self.learner = Learner(config, obs_dim, env.action_space(self.env_params), channel_count(base_env.cost_shape),
                               channel_count(env.cost_shape))
        self.constraint, self.algo = self.learner.constraint, self.learner.algo
        self.actor, self.critics = self.learner.actor, self.learner.critics
        self.num_steps = int(config["rollout_steps"])
        self.steps_per_iteration = self.num_steps * int(config["num_envs"])
        self.iterations_per_chunk, self.num_chunks = iteration_schedule(config, self.steps_per_iteration)
        self.total_iterations = self.num_chunks * self.iterations_per_chunk
        self.grid = gridlib.points(config)  # [{}] without a sweep
        self.swept = bool(config.get("sweep"))
        self.num_runners = len(self.grid) * int(config["seeds"])

    # ------------------------------------------------------------------ pure functions
    def init(self, key: jax.Array, point: dict | None = None) -> RunnerState:
        k_agent, k_env, k_run = jax.random.split(key, 3)
        agent = self.learner.init_agent(k_agent, point)
        with self.learner.hparams(gridlib.hparams_of(point or {})):
            env_params = self.algo.rollout_env_params(agent, self.env_params)
        env_state, obs = self.venv.reset(k_env, env_params)
        return RunnerState(agent, env_state, obs, k_run, self.learner.init_episodes(), jnp.zeros((), jnp.int32),
                           jnp.zeros((), jnp.float32))

    def collect(self, runner: RunnerState, key: jax.Array):
        """One rollout with the runner's policy: ``(env_state, obs, trajectory)``."""
        env_params = self.algo.rollout_env_params(runner.agent, self.env_params)
        return collect(self.venv, env_params, self.actor, runner.agent.actor_params, runner.env_state, runner.obs,
                       key, self.num_steps)

    def rollout_batch(self, runner: RunnerState, key: jax.Array):
        """One rollout, its GAE batch and the episode estimates: ``(env_state, obs, batch)``."""
        env_state, obs, traj = self.collect(runner, key)
        return env_state, obs, self.learner.make_batch(runner.agent, runner.episodes, traj)

    def iteration(self, runner: RunnerState, point: dict | None = None):
        with self.learner.hparams(gridlib.hparams_of(point or {})):
            return self._iteration(runner)

    def _iteration(self, runner: RunnerState):
        key, k_roll, k_upd = jax.random.split(runner.key, 3)
        env_state, obs, traj = self.collect(runner, k_roll)
        agent, episodes, metrics = self.learner.learn(runner.agent, runner.episodes, traj, k_upd)
        runner = RunnerState(agent, env_state, obs, key, episodes, runner.iteration + 1,
                             runner.env_steps + self.steps_per_iteration)
        return runner, metrics

    def chunk(self, runner: RunnerState, point: dict | None = None):
        def body(r, _):
            return self.iteration(r, point)

        return jax.lax.scan(body, runner, None, length=self.iterations_per_chunk)

    # ------------------------------------------------------------------ compiled, all seeds
    def seed_keys(self) -> jax.Array:
        """One key per runner: the seeds' keys, repeated for every grid point of a sweep (point-major)."""
        keys = seed_keys(self.config)
        return jnp.tile(keys, (len(self.grid), 1)) if self.swept else keys

    def point_values(self) -> dict:
        """A sweep's values per runner, ``{key: (points * seeds,)}`` float32 (empty without a sweep)."""
        seeds = int(self.config["seeds"])
        return {key: jnp.repeat(jnp.asarray([p[key] for p in self.grid], jnp.float32), seeds)
                for key in self.config.get("sweep") or {}}

    def init_shapes(self) -> RunnerState:
        """The shapes of every runner's initial state (nothing compiled)."""
        if not self.swept:
            return jax.eval_shape(jax.vmap(self.init), self.seed_keys())
        return jax.eval_shape(jax.vmap(self.init), self.seed_keys(), self.point_values())

    def init_all(self) -> RunnerState:
        keys = self.seed_keys()
        if not self.swept:
            return compiled_program(self, "init", jax.vmap(self.init), keys)(keys)
        args = (keys, self.point_values())
        self.check_sweep()
        return compiled_program(self, "init", lambda a: jax.vmap(self.init)(*a), args)(args)

    def compile_chunk(self, runners: RunnerState, reuse: bool = True):
        """The vmapped chunk, compiled for ``runners``' shapes (the one place it is compiled); ``reuse=False``
        compiles it afresh even when this process has it already (``saferl bench`` times the compile).  A swept
        program takes the grid's values as a second input; the function returned takes the runners alone."""
        if not self.swept:
            return compiled_program(self, "chunk", jax.vmap(self.chunk), runners, reuse=reuse)
        points = self.point_values()
        program = compiled_program(self, "chunk", lambda a: jax.vmap(self.chunk)(*a), (runners, points), reuse=reuse)
        return lambda r: program((r, points))

    def check_sweep(self) -> None:
        """Refuse (``ValueError`` naming it) a swept value that does not reach the traced program as a value: one the
        algorithm turns into a Python number or branches on, or never reads inside init or the chunk (a wrapper built
        once from the config).  Traces init and the chunk, compiles nothing."""
        points = self.point_values()
        keys = self.seed_keys()
        try:
            self._used_sweep_inputs(points, keys)
        except _CONCRETE as err:
            for key in points:  # which one: trace each alone
                try:
                    self._used_sweep_inputs({key: points[key]}, keys)
                except _CONCRETE:
                    raise ValueError(f"sweep {key}: {self.config['algo']} reads it as a Python number (a branch or a "
                                     f"loop length), so it cannot be swept inside one program; run one job per value "
                                     f"(saferl sweep GRID.yaml)") from None
            raise ValueError(f"sweep {', '.join(points)}: the program cannot be traced with these values traced "
                             f"({type(err).__name__})") from None

    def _used_sweep_inputs(self, points: dict, keys) -> None:
        init = jax.make_jaxpr(jax.vmap(self.init))(keys, points)
        runners = jax.eval_shape(jax.vmap(self.init), keys, points)
        chunk = jax.make_jaxpr(jax.vmap(self.chunk))(runners, points)
        names = sorted(points)  # a dict's leaves come in sorted key order, after the other argument's
        used = set()
        for closed in (init, chunk):
            invars = closed.jaxpr.invars[-len(names):]
            reads = {id(v) for eqn in closed.jaxpr.eqns for v in eqn.invars} | {id(v) for v in closed.jaxpr.outvars}
            used |= {name for name, var in zip(names, invars) if id(var) in reads}
        unused = [name for name in names if name not in used]
        if unused:
            raise ValueError(f"sweep {unused[0]}: {self.config['algo']} does not read it inside the compiled program "
                             f"(it is fixed when the program is built), so it cannot be swept inside one program; "
                             f"run one job per value (saferl sweep GRID.yaml)")


_CONCRETE = (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
             jax.errors.TracerArrayConversionError)


#: XLA options of the init program on the CPU (docs/design.md, "The init program's compile")
INIT_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}

#: The programs this process compiled, by :func:`program_key`, least recently used first out.
_PROGRAMS: collections.OrderedDict[str, Any] = collections.OrderedDict()
PROGRAM_CACHE_SIZE = 8


def program_key(trainer: Trainer, kind: str, args) -> str:
    """What decides a trainer's compiled program: its training config but the base seed (which reaches the program
    only as the input keys, :func:`seed_keys`) and the keys that do not change training (the loggers), the
    environment and algorithm classes it was built from, the program kind, and its arguments' structure, shapes and
    dtypes."""
    config = {k: v for k, v in training_config(trainer.config).items() if k != "seed"}
    if config.get("sweep"):  # a sweep's values are inputs: only its keys shape the program
        for key in config["sweep"]:
            section, _, name = key.partition(".")
            config[section] = {k: v for k, v in config[section].items() if k != name}
        config["sweep"] = sorted(config["sweep"])
    leaves, treedef = jax.tree.flatten(args)
    shapes = [(tuple(np.shape(x)), str(jnp.asarray(x).dtype)) for x in leaves]
    classes = [f"{type(c).__module__}.{type(c).__qualname__}@{id(type(c))}" for c in (trainer.base_env, trainer.algo)]
    text = json.dumps([kind, config, classes, str(treedef), shapes], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compiled_program(trainer: Trainer, kind: str, fn: Callable, args, reuse: bool = True):
    """``jax.jit(fn)`` compiled for ``args``, or the executable this process already compiled for the same
    :func:`program_key` (unless ``reuse`` is False)."""
    key = program_key(trainer, kind, args)
    if reuse and key in _PROGRAMS:
        _PROGRAMS.move_to_end(key)
        return _PROGRAMS[key]
    program = init_program(fn, args) if kind == "init" else jax.jit(fn).lower(args).compile()
    _PROGRAMS[key] = program
    while len(_PROGRAMS) > PROGRAM_CACHE_SIZE:
        _PROGRAMS.popitem(last=False)
    return program


def init_program(fn: Callable, *args):
    """``jax.jit(fn)`` compiled for ``args`` as an init program: it runs once per run, so on the CPU without XLA's
    backend optimisations (~4 s of compile for nothing; 0.8 s without: docs/design.md, "The init program's compile").
    The Gymnasium bridge's init goes through here too, so that both trainers start from the same bits."""
    lowered = jax.jit(fn).lower(*args)
    if jax.default_backend() == "cpu":
        return lowered.compile(compiler_options=INIT_COMPILER_OPTIONS)
    return lowered.compile()


def seed_keys(config: dict) -> jax.Array:
    """One key per seed; seed ``i`` of every trainer starts from key ``i``."""
    return jax.random.split(jax.random.PRNGKey(config["seed"]), config["seeds"])

"""The compiled training loop.

:class:`Trainer` builds the JAX environment stack around a :class:`saferl.training.learner.Learner`.  One training
*iteration* is a rollout (``lax.scan`` over steps, vmapped over envs) followed by ``learn``;
a *chunk* is a ``lax.scan`` over iterations, and :meth:`Trainer.compile_chunk` is the one place
where the chunk is jitted and vmapped over seeds, so S seeds run as one program; Python only
runs between chunks (logging, checkpoints, progress).

A swept config (:mod:`saferl.training.in_program_sweep`) runs ``points x seeds`` runners in the same vmapped program:
each runner gets its grid point's values as traced inputs (``Learner.hparams`` puts the hyper-parameters where the
algorithm reads them while the program is traced; the constraint values go into ``AgentState.constraint``
at init), and :meth:`Trainer.check_sweep` refuses a value that does not reach the program as a value.

Compiled programs are kept for the life of the process (:func:`compiled_program`): a second
trainer of the same config -- a resume, a notebook cell run again, another base seed -- runs
the executable the first one compiled.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from saferl.algos import base as algos
from saferl.core import constraints
from saferl.core.rollout import collect
from saferl.envs import base as envs
from saferl.envs.wrappers import AutoReset, ClipAction, EpisodeStatistics, NormalizeObservation, VecEnv
from saferl.foundation import struct
from saferl.training import in_program_sweep as gridlib
from saferl.training.learner import Learner, channel_count, wrap_for_algorithm
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


def iteration_schedule(config: dict, steps_per_iteration: int) -> tuple[int, int]:
    """``(iterations_per_chunk, num_chunks)`` for the config's ``total_steps``."""
    iterations = max(1, math.ceil(config["total_steps"] / steps_per_iteration))
    chunk = int(config["iterations_per_chunk"]) or max(1, min(iterations, math.ceil(iterations / 25)))
    return chunk, math.ceil(iterations / chunk)


class Trainer:
    """The compiled training program of a resolved config (a registered JAX environment)."""

    def __init__(self, config: dict):
        self.config = config
        constraint = constraints.from_config(config["constraint"])
        base_env = self.base_env = envs.make(config["env"])
        env_params = envs.make_env_params(base_env, config["env_params"])
        self.clips_actions = bool(base_env.clip_actions)  # the velocity tasks take the raw sample (saferl.envs.base)
        env = EpisodeStatistics(
            ClipAction(base_env) if self.clips_actions else base_env, gamma_c=float(constraint.gamma_c)
        )
        # the algorithm wraps before networks are sized: augmentations change the observation
        # and may add cost channels (a VaR surrogate's, saferl.envs.risk)
        env = AutoReset(wrap_for_algorithm(env, config), pool_size=config["reset_pool"])
        self.env_params = env.lift_params(env_params)
        self.venv = NormalizeObservation(VecEnv(env, config["num_envs"]), enabled=config["normalize_observations"])
        obs_dim = int(np.prod(env.observation_space(self.env_params).shape))
        self.learner = Learner(
            config,
            obs_dim,
            env.action_space(self.env_params),
            channel_count(base_env.cost_shape),
            channel_count(env.cost_shape),
        )
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
        return RunnerState(
            agent,
            env_state,
            obs,
            k_run,
            self.learner.init_episodes(),
            jnp.zeros((), jnp.int32),
            jnp.zeros((), jnp.float32),
        )

    def collect(self, runner: RunnerState, key: jax.Array):
        """One rollout with the runner's policy: ``(env_state, obs, trajectory)``."""
        env_params = self.algo.rollout_env_params(runner.agent, self.env_params)
        return collect(
            self.venv,
            env_params,
            self.actor,
            runner.agent.actor_params,
            runner.env_state,
            runner.obs,
            key,
            self.num_steps,
        )

    def rollout_batch(self, runner: RunnerState, key: jax.Array):
        """One rollout, its GAE batch and the episode estimates: ``(env_state, obs, batch)``."""
        env_state, obs, traj = self.collect(runner, key)
        return env_state, obs, self.learner.make_batch(runner.agent, runner.episodes, traj)

    def iteration(self, runner: RunnerState, point: dict | None = None):
        with self.learner.hparams(gridlib.hparams_of(point or {})):
            return self._iteration(runner)

    def _iteration(self, runner: RunnerState):
        key, k_roll, k_upd = jax.random.split(runner.key, 3)
        runner = runner.replace(agent=self.learner.scheduled_actor(runner.agent, runner.iteration))
        env_state, obs, traj = self.collect(runner, k_roll)
        agent, episodes, metrics = self.learner.learn(runner.agent, runner.episodes, traj, k_upd)
        runner = RunnerState(
            agent, env_state, obs, key, episodes, runner.iteration + 1, runner.env_steps + self.steps_per_iteration
        )
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
        return {
            key: jnp.repeat(jnp.asarray([p[key] for p in self.grid], jnp.float32), seeds)
            for key in self.config.get("sweep") or {}
        }

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
                    raise ValueError(
                        f"sweep {key}: {self.config['algo']} reads it as a Python number (a branch or a "
                        f"loop length), so it cannot be swept inside one program; run one job per value "
                        f"(saferl sweep GRID.yaml)"
                    ) from None
            raise ValueError(
                f"sweep {', '.join(points)}: the program cannot be traced with these values traced "
                f"({type(err).__name__})"
            ) from None

    def _used_sweep_inputs(self, points: dict, keys) -> None:
        init = jax.make_jaxpr(jax.vmap(self.init))(keys, points)
        runners = jax.eval_shape(jax.vmap(self.init), keys, points)
        chunk = jax.make_jaxpr(jax.vmap(self.chunk))(runners, points)
        names = sorted(points)  # a dict's leaves come in sorted key order, after the other argument's
        used = set()
        for closed in (init, chunk):
            invars = closed.jaxpr.invars[-len(names) :]
            reads = {id(v) for eqn in closed.jaxpr.eqns for v in eqn.invars} | {id(v) for v in closed.jaxpr.outvars}
            used |= {name for name, var in zip(names, invars) if id(var) in reads}
        unused = [name for name in names if name not in used]
        if unused:
            raise ValueError(
                f"sweep {unused[0]}: {self.config['algo']} does not read it inside the compiled program "
                f"(it is fixed when the program is built), so it cannot be swept inside one program; "
                f"run one job per value (saferl sweep GRID.yaml)"
            )


_CONCRETE = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)


#: XLA options of the init program on the CPU (docs/decisions/011-init-program-compile.md)
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
    backend optimisations (~4 s of compile for nothing; 0.8 s without: docs/decisions/011-init-program-compile.md).
    The Gymnasium bridge's init goes through here too, so that both trainers start from the same bits."""
    lowered = jax.jit(fn).lower(*args)
    if jax.default_backend() == "cpu":
        return lowered.compile(compiler_options=INIT_COMPILER_OPTIONS)
    return lowered.compile()


def seed_keys(config: dict) -> jax.Array:
    """One key per seed; seed ``i`` of every trainer starts from key ``i``."""
    return jax.random.split(jax.random.PRNGKey(config["seed"]), config["seeds"])

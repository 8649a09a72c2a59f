"""The Python API: train, reload, evaluate, act and plot from a notebook or a script.

    run = saferl.train("ppo_lag", "ToyReach", steps=20_000, seeds=2, constraint={"type": "expected", "limit": 10})
    run.summary["final"]["episode_cost"]     # summary.json
    run.progress["episode_return"]           # progress.csv's columns as numpy arrays
    run.evaluate(10, deterministic=True)     # what ``saferl eval`` prints
    act = run.policy_for(1)                  # a jittable act(obs, key, deterministic=False) of seed 1

It is the layer under the command line, not beside it: ``saferl train`` and ``saferl eval``
(:mod:`saferl.cli`) call :func:`train`, :meth:`Run.resume` and :meth:`Run.evaluate`, so a run made here is
the run the CLI would make from the same config -- the same resolved ``config.yaml``
(:func:`saferl.training.config.resolve`), the same driver (:func:`saferl.training.runs.train`, or
:func:`saferl.training.gym_trainer.run` for ``gym:`` environments), the same files, the same one-line errors
(:class:`saferl.training.config.ConfigError` and :class:`saferl.training.run_directory.RunError`, both
``ValueError`` s), raised before anything is written.

Choices that are this module's own:

* ``out=None`` names the run directory as the CLI does, ``runs/ALGO-ENV-YYYYmmdd-HHMMSS`` relative to the
  working directory (:func:`default_run_dir`), not a temporary directory: a run outlives the notebook.
* Explicit arguments of :func:`train` (``algo``, ``env``, ``steps``, ``seeds``, ``constraint``) win over the
  same entries of ``config``; ``constraint`` replaces ``config["constraint"]`` whole.  An argument left at
  ``None`` takes the config's value or its default (the CLI passes its flags this way, so that ``--set``
  keeps winning over ``--steps``).  ``seeds`` defaults to ``None`` = the config's ``seeds``, which defaults
  to 1 (:data:`saferl.training.config.TOP_LEVEL`).
* Policies are per seed, named by the seed id of progress.csv and summary.json (the config's ``seed`` + i):
  :meth:`Run.policy_for`; :attr:`Run.policy` is the first seed's.  A policy returns the action the
  environment received in training: the actor's sample (or mode) clipped to the action box, as
  :class:`saferl.envs.wrappers.ClipAction` clips it, or unclipped for an environment that takes the raw
  sample (``clip_actions = False``: the velocity tasks, :mod:`saferl.envs.velocity.locomotion`).
* :meth:`Run.resume` with ``steps`` trains a run further (a new ``total_steps`` per seed, >= the old one):
  config.yaml gets the new ``total_steps`` and, where the automatic chunk size would change, the old one
  made explicit, so the iterations already done keep their chunk boundaries (the checkpoint counts chunks).
  No algorithm reads ``total_steps`` (a linear learning-rate schedule has its own length,
  ``hparams.lr_decay_steps``, which an extension keeps: past it the policy's rate stays 0), so the extension
  trains the iterations an uninterrupted longer run would.
* ``on_chunk(run, chunk)`` is called after each chunk's progress rows and checkpoint are on disk (live
  curves in a notebook); raising ``KeyboardInterrupt`` in it interrupts the run as Ctrl-C does.  Compiled
  (JAX) environments only: the Gymnasium bridge has no per-chunk hook.
"""

from __future__ import annotations

import copy
import math
import numbers
import time
from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saferl.analysis import diagnostics, evaluate, plotting
from saferl.envs import base as envs
from saferl.foundation.errors import MissingExtraError
from saferl.foundation.spaces import Box
from saferl.training import config as configlib
from saferl.training import gym_trainer as bridge_train
from saferl.training import in_program_sweep, run_directory, runs
from saferl.training import loggers as loggerlib
from saferl.training.run_directory import RunError
from saferl.training.trainer import Trainer, iteration_schedule

__all__ = ["ConfigError", "Policy", "Run", "RunError", "default_run_dir", "load", "make_env", "train"]

ConfigError = configlib.ConfigError

OnChunk = Callable[["Run", int], None]


def default_run_dir(cfg: Mapping[str, Any]) -> Path:
    """Where a run goes without ``out``: ``runs/ALGO-ENV-YYYYmmdd-HHMMSS`` (``saferl train`` without ``--out``)."""
    return Path("runs") / f"{cfg['algo']}-{cfg['env']}-{time.strftime('%Y%m%d-%H%M%S')}"


def train(
    algo: str | None,
    env: str | None,
    *,
    steps: int | None,
    seeds: int | None = None,
    constraint: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Any] | None = None,
    out: str | PathLike | None = None,
    progress: bool = True,
    on_chunk: OnChunk | None = None,
) -> Run:
    """Train ``algo`` on ``env`` for ``steps`` environment steps per seed, all seeds in one program.

    ``constraint``: the config's constraint section, e.g. ``{"type": "expected", "limit": 25}`` or
    ``{"type": "var", "rho": 5, "epsilon": 0.1}``; ``None``: the algorithm's and environment's default.
    ``config``: further nested entries as a config file or ``--set`` gives them (``{"num_envs": 4,
    "hparams": {"actor_lr": 1e-3}, "network": {"actor_hidden": [32]}}``; ``saferl list --algo NAME`` names
    the hyper-parameters).  ``None`` for ``algo``, ``env``, ``steps`` or ``seeds``: the value in ``config``,
    else its default (module docstring).  ``sweep``: a grid trained inside the same program,
    ``{"constraint.limit": [10, 25, 50], "hparams.beta": [0.1, 1]}`` (:mod:`saferl.training.in_program_sweep`:
    every point trains ``seeds`` seeds; ``summary["grid"]`` has each point's statistics).  ``out``: the run
    directory (new or empty), default :func:`default_run_dir`.  ``progress``: the progress bar (one line per chunk
    off a terminal).
    ``on_chunk(run, chunk)``: called after every chunk (module docstring).

    Bad input raises a ``ValueError`` (:class:`~saferl.training.config.ConfigError`,
    :class:`~saferl.training.run_directory.RunError`) with the CLI's one-line message, before anything is written.
    Ctrl-C (``KeyboardInterrupt``) leaves a checkpoint and a summary; continue with ``saferl.load(dir).resume()``.
    """
    if config is not None and not isinstance(config, Mapping):
        raise configlib.ConfigError(f"config must be a mapping of config entries, got {type(config).__name__}")
    if constraint is not None and not isinstance(constraint, Mapping):
        raise configlib.ConfigError(
            f"constraint must be a mapping such as {{'type': 'expected', 'limit': 25}}, got {type(constraint).__name__}"
        )
    user = copy.deepcopy(dict(config or {}))
    for key, value in (
        ("algo", algo),
        ("env", env),
        ("total_steps", steps),
        ("seeds", seeds),
        ("constraint", constraint),
        ("sweep", sweep),
    ):
        if value is not None:
            user[key] = copy.deepcopy(dict(value)) if key in ("constraint", "sweep") else value
    cfg = configlib.resolve(user)
    run_dir = Path(out) if out is not None else default_run_dir(cfg)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise RunError(
            f"run directory {str(run_dir)!r} already exists and is not empty; "
            "use --resume to continue it or choose another --out"
        )
    run = Run._of(run_dir, cfg)
    run._drive(resume=False, progress=progress, loggers=None, on_chunk=on_chunk)
    return run


def load(run_dir: str | PathLike) -> Run:
    """The run in ``run_dir``, finished or interrupted (raises :class:`~saferl.training.run_directory.RunError` if it is
    not one)."""
    return Run(run_dir)


def make_env(name: str, **params: Any) -> tuple[Any, Any]:
    """A registered functional environment and its parameters: ``(env, params)``.

    ``params`` override fields of the environment's parameters as the config's ``env_params`` does, e.g.
    ``make_env("ToyReach", step_size=0.2)``.  Use it as ``state, obs = env.reset(key, params)`` and
    ``state, obs, reward, cost, terminated, truncated, info = env.step(state, action, params)``
    (:mod:`saferl.envs.base`); ``saferl list`` names the environments.
    """
    env = envs.make(name)
    return env, envs.make_env_params(env, params)


class Policy:
    """A trained actor with its frozen observation statistics: ``policy(obs, key, deterministic=False)``.

    ``obs``: one observation or a batch (leading axes) of the environment :meth:`Run.policy_env` gives --
    the environment's own observation (:func:`make_env`) for an expected-cost constraint, the risk-augmented
    one for a VaR constraint.  It is normalised with the statistics training ended with (as ``saferl eval``
    does), and the action returned is the actor's sample (with ``key``) or, ``deterministic``, its mode,
    clipped to a continuous action box where training clipped it (not for an environment with
    ``clip_actions = False``, which received the raw sample).  Pure and jittable (``deterministic`` is a Python bool:
    ``jax.jit(policy, static_argnames="deterministic")``); ``key`` is unused when deterministic.
    """

    def __init__(self, trainer, actor_params, obs_stats, seed: int):
        self.seed = int(seed)  #: the seed id this policy was trained with
        self.actor_params = actor_params  #: the actor's parameters (a pytree)
        self.obs_stats = obs_stats  #: the frozen :class:`~saferl.envs.wrappers.RunningStatistics`
        self._actor = trainer.actor
        self._normalize = trainer.venv._normalize  # the training stack's normalisation (off where it was off)
        space = trainer.venv.action_space(trainer.env_params)
        clipped = isinstance(space, Box) and trainer.clips_actions
        self._bounds = (space.low, space.high) if clipped else None

    def __call__(self, obs: jax.Array, key: jax.Array | None = None, deterministic: bool = False) -> jax.Array:
        dist = self._actor.distribution(self.actor_params, self._normalize(self.obs_stats, jnp.asarray(obs)))
        action = self._actor.mode(dist) if deterministic else self._actor.sample(dist, key)
        return action if self._bounds is None else jnp.clip(action, *self._bounds)

    def __repr__(self) -> str:
        return f"Policy(seed={self.seed})"


class Run:
    """A run directory (``config.yaml``, ``progress.csv``, ``summary.json``, ``checkpoints/``):
    :mod:`saferl.training.runs`.

    Every property reads the files as they are now, so a run being trained elsewhere, or resumed, shows
    its latest state.  ``Run(dir)`` is :func:`load`.
    """

    def __init__(self, run_dir: str | PathLike):
        self._set(Path(run_dir), run_directory.load_run_config(Path(run_dir)))

    @classmethod
    def _of(cls, run_dir: Path, cfg: dict) -> Run:
        run = cls.__new__(cls)
        run._set(run_dir, cfg)
        return run

    def _set(self, run_dir: Path, cfg: dict) -> None:
        self._dir, self._config, self._cache = run_dir, cfg, None

    def __repr__(self) -> str:
        c = self._config
        return f"Run({str(self._dir)!r}: {c['algo']} on {c['env']}, {c['seeds']} seeds x {c['total_steps']:,} steps)"

    # ------------------------------------------------------------------ files
    @property
    def dir(self) -> Path:
        """The run directory."""
        return self._dir

    @property
    def config(self) -> dict:
        """The resolved config (config.yaml, with the values older runs were trained with:
        :func:`saferl.training.run_directory.load_run_config`)."""
        return copy.deepcopy(self._config)

    @property
    def summary(self) -> dict:
        """summary.json: algo, env, seeds, env_steps, timings, ``interrupted``, ``final`` (mean, std and per-seed
        values over the last 10% of iterations), provenance.  A :class:`~saferl.training.run_directory.RunError` while
        the first sitting has not ended (still training, or killed: :meth:`resume` it)."""
        import json

        path = self._dir / "summary.json"
        if not path.is_file():
            raise RunError(
                f"run {str(self._dir)!r} has no summary.json yet: it is still training, or its process "
                "was killed (resume it)"
            )
        return json.loads(path.read_text())

    @property
    def progress(self) -> dict[str, np.ndarray]:
        """progress.csv as ``{column: array}``, one entry per logged iteration per seed (iteration-major):
        ``iteration``, ``env_steps`` (per seed), ``seed`` and the metrics (NaN where an iteration had none)."""
        rows = run_directory.read_progress(self._dir)
        columns = list(rows[0]) if rows else []
        return {
            c: np.asarray([r.get(c, math.nan) for r in rows], int if c in ("iteration", "seed") else float)
            for c in columns
        }

    def progress_frame(self):
        """:attr:`progress` as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas
        except ImportError:
            raise MissingExtraError(
                "Run.progress_frame() needs the package 'pandas', which is not installed: pip install pandas"
            ) from None
        return pandas.DataFrame(self.progress)

    # ------------------------------------------------------------------ the trained agent
    def _state(self):
        """The run's trainer and its latest checkpoint (cached until :meth:`resume`)."""
        if self._cache is None:
            if self._config["env"].startswith("gym:"):
                raise RunError(
                    f"policies of Gymnasium runs ({self._config['env']}, trained through the host bridge) "
                    "are not available from the API yet"
                )
            trainer = Trainer(self._config)
            template = trainer.init_shapes()  # shapes only: nothing compiled
            runners, _ = run_directory.load_checkpoint(self._dir, template)
            self._cache = trainer, runners
        return self._cache

    def _seed_index(self, seed: int | None) -> int:
        ids = run_directory.seed_ids(self._config)
        if seed is None:
            return 0
        if seed not in ids:
            raise ValueError(f"seed {seed!r} is not one of this run's seeds {ids}")
        return ids.index(seed)

    def policy_for(self, seed: int | None = None, point: int = 0) -> Policy:
        """The :class:`Policy` of seed ``seed`` (an id of progress.csv's ``seed`` column; ``None``: the first) at grid
        point ``point`` of a swept run (an index of summary.json's ``grid``; 0 on a run without a sweep)."""
        points = len(in_program_sweep.points(self._config))
        if isinstance(point, bool) or not isinstance(point, int) or not 0 <= point < points:
            raise ValueError(f"point {point!r} is not a grid point index of this run: 0 to {points - 1}")
        seed_index = self._seed_index(seed)
        index = point * int(self._config["seeds"]) + seed_index
        trainer, runners = self._state()
        pick = lambda tree: jax.tree.map(lambda x: x[index], tree)  # noqa: E731
        return Policy(
            trainer,
            pick(runners.agent.actor_params),
            pick(runners.env_state.stats),
            run_directory.seed_ids(self._config)[seed_index],
        )

    @property
    def policy(self) -> Policy:
        """The first seed's :class:`Policy` (:meth:`policy_for` for the others)."""
        return self.policy_for(None)

    def policy_env(self, seed: int | None = None) -> tuple[Any, Any]:
        """``(env, params)`` of one environment of the training stack, where the policy of ``seed`` acts:
        the environment with action clipping (where training clipped), episode statistics in ``info``
        (``episode_return``, ``episode_cost`` on the step an episode ends), the algorithm's augmentation (a VaR
        constraint's cost state) and auto-reset; ``params`` as that seed's last rollout saw them."""
        index = self._seed_index(seed)
        trainer, runners = self._state()
        agent = jax.tree.map(lambda x: x[index], runners.agent)
        return trainer.venv.env, trainer.algo.rollout_env_params(agent, trainer.env_params)

    def evaluate(self, episodes: int = 10, *, seed: int = 12345, deterministic: bool = False) -> dict:
        """``saferl eval``: every seed's final policy for ``episodes`` episodes with frozen observation statistics.

        Returns ``{"seeds": [ids], "per_seed": [{"episode_return", "episode_cost"} means over the episodes],
        "episode_return", "episode_cost"}`` (means over seeds).  ``seed``: the evaluation's random key;
        ``deterministic``: act with the policy's mode.  The defaults are ``saferl eval``'s (``--episodes 10``;
        the key of :func:`saferl.analysis.evaluate.evaluate_run`).
        """
        if isinstance(episodes, bool) or not isinstance(episodes, numbers.Integral) or episodes < 1:
            raise ValueError(f"episodes must be a whole number >= 1, got {episodes!r}")
        return evaluate.evaluate_run(self._dir, episodes, deterministic=deterministic, key=seed)

    def render(
        self,
        path: str | PathLike,
        *,
        seed: int | None = None,
        deterministic: bool = False,
        key: int = 0,
        max_steps: int | None = None,
        size: tuple[int, int] | None = None,
    ) -> Path:
        """One episode of the policy of ``seed`` (``None``: the first) drawn as a GIF or an MP4 at ``path``
        (:func:`saferl.analysis.render.render_episode`: top-down for the navigation and ball tasks, a side view for
        CartSafe, MuJoCo's renderer for the MJX tasks where a headless GL backend exists).  ``key``: the
        episode's random key; ``max_steps``: stop there if the episode has not ended.  Returns ``path``."""
        from saferl.analysis import render  # on first use: its drawers' imports take about a second

        env, params = self.policy_env(seed)
        policy = self.policy_for(seed)
        act = (lambda obs, k: policy(obs, k, deterministic=True)) if deterministic else policy
        options = {} if size is None else {"size": tuple(size)}
        render.render_episode(env, params, act, jax.random.PRNGKey(key), Path(path), max_steps=max_steps, **options)
        return Path(path)

    def plot(self, path: str | PathLike | None = None) -> Path:
        """``saferl plot``'s figure of this run (return, cost, violation probability); default ``DIR/curves.png``.
        Returns the PNG's path."""
        return plotting.plot_runs([self._dir], Path(path) if path is not None else None)

    # ------------------------------------------------------------------ training
    def resume(
        self,
        steps: int | None = None,
        *,
        progress: bool = True,
        logger: str | list[str] | None = None,
        on_chunk: OnChunk | None = None,
    ) -> Run:
        """Finish an interrupted run from its last checkpoint (``saferl train --resume``), with the same result as
        an uninterrupted one; with ``steps``, train further to ``steps`` environment steps per seed (module
        docstring).  ``logger``: this sitting's loggers instead of the config's.  Returns this run."""
        if not (self._dir / run_directory.CHECKPOINT).is_file():
            raise RunError(f"cannot resume {str(self._dir)!r}: it has no checkpoint")
        names = loggerlib.parse(logger) if logger is not None else None
        extended = self._extended(steps) if steps is not None else None
        if extended is not None:
            run_directory.write_config(self._dir, extended)
            self._config = extended
        self._cache = None
        self._drive(resume=True, progress=progress, loggers=names, on_chunk=on_chunk)
        return self

    def _extended(self, steps: int) -> dict:
        """The config trained to ``steps`` per seed, with the iterations done kept in their chunks."""
        cfg = self._config
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < cfg["total_steps"]:
            raise ValueError(
                f"steps must be a whole number >= the run's total_steps {cfg['total_steps']} "
                f"(a run is not shortened), got {steps!r}"
            )
        per_iteration = cfg["num_envs"] * cfg["rollout_steps"]
        chunk = iteration_schedule(cfg, per_iteration)[0]
        extended = {**copy.deepcopy(cfg), "total_steps": int(steps)}
        if iteration_schedule(extended, per_iteration)[0] != chunk:
            extended["iterations_per_chunk"] = chunk
        return configlib.resolve(extended)

    def _drive(self, resume: bool, progress: bool, loggers, on_chunk: OnChunk | None) -> None:
        cfg, run_dir = self._config, self._dir
        if cfg["env"].startswith("gym:"):
            if on_chunk is not None:
                raise ValueError(
                    f"on_chunk needs a JAX environment; {cfg['env']} is stepped on the host "
                    "(saferl.training.gym_trainer), which has no per-chunk hook"
                )
            bridge_train.run(cfg, run_dir, show_progress=progress, resume=resume, loggers=loggers)
        else:
            hook = None if on_chunk is None else (lambda chunk, _runners: on_chunk(self, chunk))
            runs.train(
                cfg,
                run_dir,
                resume=resume,
                show_progress=progress,
                on_chunk=hook,
                loggers=loggers,
                on_resume=diagnostics.print_resume_warnings,
            )
        self._cache = None

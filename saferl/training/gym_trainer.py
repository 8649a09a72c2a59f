"""Training on Gymnasium environments: host rollout, the shared learner.

``GymTrainer(config, env)`` steps Gymnasium-API environments on the host and learns with the
same :class:`saferl.training.learner.Learner` as the compiled :class:`~saferl.training.trainer.Trainer`.  One
iteration is

    T host steps of N environments (one jitted actor call per step) -> Trajectory (T, N, ...)
    -> one jitted call of ``Learner.learn`` (critics, GAE, episode estimates, algorithm update)

The ``Trajectory`` holds the arrays the compiled rollout produces, and observations are
normalised by the same :func:`~saferl.envs.wrappers.normalization_step` as ``NormalizeObservation``,
so an algorithm behaves the same on both paths.

Seeds: one ``GymTrainer`` trains one seed (``seed_index`` picks which of the config's ``seeds``);
:func:`run` trains them one after another.  The agent of seed ``i`` starts from the same
parameters as seed ``i`` of the compiled Trainer.  A checkpoint holds every seed's learner state
(agent, episode estimates, observation statistics, key, iteration); a Gymnasium environment's own
state cannot be saved, so a resumed seed continues with freshly reset environments: the same
agent, but not the same numbers an uninterrupted run would give.

An algorithm that wraps the environment (a VaR constraint's cost-state augmentation) gets its JAX
wrappers applied around the host step (:mod:`saferl.envs.host_wrappers`): the augmented observations
and per-step costs come from the code the compiled rollout runs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from saferl.algos import base as algos
from saferl.core import constraints
from saferl.core.rollout import Trajectory
from saferl.envs.gym_bridge import BRIDGE_OPTIONS, PREFIX, HostVecEnv, as_env_list, is_gym_id, make_gym_env
from saferl.envs.host_wrappers import HostStepLeaf, HostWrappers
from saferl.envs.wrappers import RunningStatistics, normalization_step
from saferl.foundation.spaces import Box
from saferl.training import config as configlib
from saferl.training import run_directory, runs
from saferl.training.learner import Learner, wrap_for_algorithm
from saferl.training.trainer import init_program, iteration_schedule, seed_keys

OBS_CLIP = 10.0  # NormalizeObservation's default


def resolve_config(user: dict) -> dict:
    """``config.resolve`` for a ``gym:`` environment, plus the bridge's own options."""
    env_id = user.get("env")
    if not is_gym_id(env_id):
        raise configlib.ConfigError(f"a Gymnasium environment is named 'gym:<id>', got env={env_id!r}")
    cfg = configlib.resolve(dict(user))
    options = cfg["env_params"]
    if options.get("cost_from", "auto") not in ("auto", "step", "info"):
        raise configlib.ConfigError(f"env_params.cost_from must be auto, step or info; got {options['cost_from']!r}")
    return cfg


def _env_name(env) -> str:
    if isinstance(env, str):
        return env if is_gym_id(env) else PREFIX + env
    spec = getattr(env, "spec", None) or getattr(getattr(env, "envs", [None])[0], "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return PREFIX + spec.id
    return PREFIX + getattr(env, "__name__", type(env).__name__)


class GymTrainer:
    """Train one seed of a saferl algorithm on Gymnasium environments.

    ``config``: a (partial) run config as for the CLI, with ``env: "gym:<id>"``;
    ``env_params`` are keyword arguments of the environment, except ``cost_from``
    (``auto``/``step``/``info``) and ``cost_key``, which say where the cost is, and ``clip_actions``
    (:class:`~saferl.envs.gym_bridge.HostVecEnv`).
    ``env``: a callable building one environment (called ``num_envs`` times with
    the ``env_params``), a list of environments or a ``gymnasium.vector.SyncVectorEnv``
    (``num_envs`` is then their number), or None to build ``config["env"]``.
    """

    def __init__(self, config: dict, env: Any = None, seed_index: int = 0):
        user = dict(config)
        env_list = None
        if env is not None and not callable(env) and not isinstance(env, str):
            env_list = as_env_list(env)
            if user.get("num_envs", len(env_list)) != len(env_list):
                raise ValueError(f"num_envs={user['num_envs']} but {len(env_list)} environments were given")
            user["num_envs"] = len(env_list)
        if env is not None and not user.get("env"):
            user["env"] = _env_name(env)
        cfg = resolve_config(user)
        if not 0 <= seed_index < cfg["seeds"]:
            raise ValueError(f"seed_index must be in [0, {cfg['seeds']}), got {seed_index}")
        self.config, self.seed_index = cfg, int(seed_index)
        self.seed = cfg["seed"] + self.seed_index
        options = {k: v for k, v in cfg["env_params"].items() if k in BRIDGE_OPTIONS}
        env_kwargs = {k: v for k, v in cfg["env_params"].items() if k not in BRIDGE_OPTIONS}
        if env_list is None:
            source = cfg["env"] if env is None else env
            env_list = [make_gym_env(source, **env_kwargs) for _ in range(cfg["num_envs"])]
        gamma_c = float(constraints.from_config(cfg["constraint"]).gamma_c)
        self.venv = HostVecEnv(env_list, gamma_c=gamma_c, probe_seed=self.seed, name=cfg["env"], **options)
        self.num_envs_given = len(env_list)
        channels = self.venv.cost_channels
        try:
            self.wrappers = self._host_wrappers(cfg, env_kwargs)
        except ValueError:
            self.venv.close()
            raise
        obs_dim, wrapped_channels = self.venv.obs_dim, channels
        if self.wrappers is not None:
            obs_dim, wrapped_channels = self.wrappers.obs_dim, self.wrappers.cost_channels
        self.learner = Learner(cfg, obs_dim, self.venv.action_space, channels, wrapped_channels)
        self.actor, self.algo = self.learner.actor, self.learner.algo
        self.normalize = bool(cfg["normalize_observations"])
        self.num_steps, self.num_envs = int(cfg["rollout_steps"]), int(cfg["num_envs"])
        self.steps_per_iteration = self.num_steps * self.num_envs

        self._act = jax.jit(self.act)
        self._step_act = jax.jit(self.step_act)
        self._wrap_reset = jax.jit(self.wrap_reset)
        self._update = None  # compiled on the first iteration (timed)
        self.timings = {"rollout_seconds": 0.0, "update_seconds": 0.0, "compile_seconds": 0.0}
        self.history: list[dict] = []
        self.reset()

    def _host_wrappers(self, cfg: dict, env_kwargs: dict) -> HostWrappers | None:
        """The algorithm's environment wrappers around the host step, or None when it adds none."""
        spec = getattr(self.venv.envs[0], "spec", None)
        leaf = HostStepLeaf(
            Box(-np.inf, np.inf, (self.venv.obs_dim,)),
            self.venv.action_space,
            max_steps=int(env_kwargs.get("max_episode_steps") or getattr(spec, "max_episode_steps", 0) or 0),
        )
        if cfg["constraint"]["type"] == "var" and self.venv.cost_channels != 1:
            raise ValueError(
                f"a VaR constraint needs an environment with one cost signal; {cfg['env']} has "
                f"{self.venv.cost_channels}"
            )
        if cfg["constraint"].get("finite_horizon") and not leaf.max_steps:
            raise ValueError(
                f"constraint.finite_horizon needs the time limit of {cfg['env']}: register it with max_episode_steps"
            )
        wrapped = wrap_for_algorithm(leaf, cfg)
        if wrapped is leaf:
            return None
        if wrapped.unwrapped is not leaf:
            raise ValueError(
                f"algorithm {cfg['algo']} augments the environment with {type(wrapped).__name__}, "
                "which does not wrap it, so it cannot run around a Gymnasium environment"
            )
        return HostWrappers(wrapped, leaf, self.num_envs_given)

    def _rollout_params(self, agent):
        return lambda params: self.algo.rollout_env_params(agent, params)

    def wrap_reset(self, agent, raw_obs):
        return self.wrappers.reset(self._rollout_params(agent), raw_obs)

    # ------------------------------------------------------------------ pure functions (jitted)
    def act(self, actor_params, obs, key):
        dist = self.actor.distribution(actor_params, obs)
        action = self.actor.sample(dist, key)
        return action, self.actor.log_prob(dist, action), dist

    def start(self, raw_obs):
        """What ``NormalizeObservation.reset`` does: statistics of the first observations, normalised."""
        stats = RunningStatistics.create(raw_obs.shape[1:]).update(raw_obs)
        return stats, stats.normalize(raw_obs, OBS_CLIP) if self.normalize else raw_obs

    def step_act(self, agent, stats, wrapper_states, step, key):
        """What follows one host step, in one call: the algorithm's wrappers (if any) on what the step
        returned, the normalisation step, and the next action.  ``step`` = (final_obs, reward, cost,
        terminated, truncated, obs, episode_done) as the host returned them; returns
        ``(wrapper_states, cost, stats, obs, final_obs, action, log_prob, dist)``."""
        raw_final_obs, _, cost, _, _, raw_obs, _ = step
        if self.wrappers is not None:
            wrapper_states, raw_obs, raw_final_obs, cost = self.wrappers.step(
                self._rollout_params(agent), wrapper_states, *step
            )
        stats, obs, final_obs = normalization_step(stats, raw_obs, raw_final_obs, OBS_CLIP, self.normalize)
        return (wrapper_states, cost, stats, obs, final_obs) + self.act(agent.actor_params, obs, key)

    def update(self, agent: algos.AgentState, episodes: dict, traj: Trajectory, key):
        """:meth:`saferl.training.learner.Learner.learn`: ``(agent, episodes, metrics)``."""
        return self.learner.learn(agent, episodes, traj, key)

    # ------------------------------------------------------------------ host loop
    def reset(self) -> None:
        """Fresh agent and environments; keys split as in ``Trainer.init``."""
        key = seed_keys(self.config)[self.seed_index]
        k_agent, k_env, self.key = jax.random.split(key, 3)
        self.agent = init_program(self.learner.init_agent, k_agent)(k_agent)  # one compile, as the compiled trainer's
        self.start_envs(k_env)
        self.episodes = self.learner.init_episodes()
        self.iteration, self.env_steps = 0, 0

    def start_envs(self, key, stats: RunningStatistics | None = None) -> None:
        """Reset every environment (seeds drawn from ``key``); the observation statistics start from the
        first observations, or continue from ``stats``."""
        env_seeds = np.asarray(jax.random.randint(key, (self.num_envs,), 0, 2**31 - 1)).tolist()
        raw = self.venv.reset(env_seeds)
        self.wrapper_states = None
        if self.wrappers is not None:
            self.wrapper_states, raw = self._wrap_reset(self.agent, raw)
        if stats is None:
            self.stats, self.obs = jax.jit(self.start)(raw)
        else:
            self.stats = stats
            self.obs = np.asarray(stats.normalize(jnp.asarray(raw), OBS_CLIP)) if self.normalize else raw

    def state(self) -> dict:
        """The learner state a checkpoint keeps (everything but the environments)."""
        return {
            "agent": self.agent,
            "episodes": self.episodes,
            "stats": self.stats,
            "key": self.key,
            "iteration": np.asarray(self.iteration, np.int32),
        }

    def restore(self, state: dict) -> None:
        """Continue from :meth:`state`, with the environments reset afresh (their state is not saved)."""
        self.agent, self.episodes = state["agent"], state["episodes"]
        self.iteration = int(state["iteration"])
        self.env_steps = self.iteration * self.steps_per_iteration
        self.key, k_env = jax.random.split(state["key"])
        self.start_envs(k_env, stats=state["stats"])

    def collect(self, key) -> Trajectory:
        """``rollout_steps`` host steps of all environments, as a ``Trajectory`` of numpy arrays ``(T, N, ...)``."""
        keys = np.asarray(jax.random.split(key, self.num_steps))  # one key per step, as rollout.collect
        obs = self.obs
        action, log_prob, dist = self._act(self.agent.actor_params, obs, keys[0])
        steps, policy = [], []
        for t in range(self.num_steps):
            obs, action, log_prob, dist = jax.device_get((obs, action, log_prob, dist))
            policy.append((obs, action, log_prob, dist))
            step = self.venv.step(action)
            # wrap, normalise and act on what the step returned: one call per step.  The action drawn
            # after the last step is dropped: the next iteration acts with the updated policy.
            self.wrapper_states, step.cost, self.stats, obs, step.final_obs, action, log_prob, dist = self._step_act(
                self.agent,
                self.stats,
                self.wrapper_states,
                (step.final_obs, step.reward, step.cost, step.terminated, step.truncated, step.obs, step.episode_done),
                keys[min(t + 1, self.num_steps - 1)],
            )
            steps.append(step)
        self.obs = obs
        obs, action, log_prob, dist = jax.tree.map(lambda *xs: np.stack(xs), *policy)
        host = {
            name: np.stack([np.asarray(getattr(s, name)) for s in steps])
            for name in (
                "reward",
                "cost",
                "terminated",
                "truncated",
                "final_obs",
                "episode_done",
                "episode_return",
                "episode_cost",
                "episode_discounted_cost",
                "episode_length",
            )
        }
        return Trajectory(obs=obs, action=action, log_prob=log_prob, dist=dist, **host)

    def iterate(self) -> dict:
        """One training iteration; returns its metrics as floats."""
        self.key, k_roll, k_upd = jax.random.split(self.key, 3)
        self.agent = self.learner.scheduled_actor(self.agent, self.iteration)
        start = time.perf_counter()
        traj = self.collect(k_roll)
        self.timings["rollout_seconds"] += time.perf_counter() - start
        if self._update is None:
            start = time.perf_counter()
            self._update = jax.jit(self.update).lower(self.agent, self.episodes, traj, k_upd).compile()
            self.timings["compile_seconds"] += time.perf_counter() - start
        start = time.perf_counter()
        self.agent, self.episodes, metrics = self._update(self.agent, self.episodes, traj, k_upd)
        metrics = {k: float(np.ravel(v)[0]) for k, v in jax.device_get(metrics).items()}
        self.timings["update_seconds"] += time.perf_counter() - start
        self.iteration += 1
        self.env_steps += self.steps_per_iteration
        return {"iteration": self.iteration, "env_steps": self.env_steps, **metrics}

    def train(self, total_steps: int | None = None, callback: Callable[[dict], None] | None = None) -> list[dict]:
        """Train for ``total_steps`` more environment steps (default: the config's); returns one dict per iteration."""
        steps = self.config["total_steps"] if total_steps is None else int(total_steps)
        rows = []
        for _ in range(max(1, -(-steps // self.steps_per_iteration))):
            row = self.iterate()
            rows.append(row)
            self.history.append(row)
            if callback is not None:
                callback(row)
        return rows

    def steps_per_second(self) -> float:
        """Environment steps per second of rollout and update (compilation excluded)."""
        seconds = self.timings["rollout_seconds"] + self.timings["update_seconds"]
        return self.env_steps / max(seconds, 1e-9)

    def close(self) -> None:
        self.venv.close()


def run(
    cfg: dict, run_dir: Path, env: Any = None, show_progress: bool = True, resume: bool = False, loggers=None
) -> dict:
    """:func:`saferl.training.runs.train` for a ``gym:`` environment: seeds one after another, a checkpoint of
    every seed's learner state after each chunk of iterations, Ctrl-C, ``resume`` and ``loggers`` as there."""
    cfg = resolve_config(cfg)
    run_dir = Path(run_dir)
    seeds = run_directory.seed_ids(cfg)
    first = GymTrainer(cfg, env, seed_index=0)
    per_chunk, num_chunks = iteration_schedule(cfg, first.steps_per_iteration)
    total_iterations = per_chunk * num_chunks
    # every seed's state, stacked on a leading axis: the checkpoint's structure
    states = jax.tree.map(lambda x: np.stack([np.asarray(x)] * len(seeds)), first.state())
    rows: list[dict] = []
    if resume:
        states, _ = run_directory.load_checkpoint(run_dir, states)
        done = np.asarray(states["iteration"]).tolist()
        rows = [r for r in run_directory.read_progress(run_dir) if r["iteration"] <= done[seeds.index(r["seed"])]]
    else:
        done = [0] * len(seeds)
    recorder = runs.Recorder(
        run_dir,
        cfg,
        rows,
        show_progress,
        total_iterations * first.steps_per_iteration * len(seeds),
        sum(done) * first.steps_per_iteration,
        resumed=resume,
        loggers=loggers,
    )
    interrupted, trainer = False, first
    if all(d >= total_iterations for d in done):
        first.close()
    try:
        for index, seed in enumerate(seeds):
            if done[index] >= total_iterations:
                continue
            if trainer is None or trainer.seed_index != index:
                if trainer is not None:
                    trainer.close()
                trainer = GymTrainer(cfg, env, seed_index=index)
            if resume and done[index] > 0:
                trainer.restore(jax.tree.map(lambda x, i=index: x[i], states))
            try:
                chunk_rows = []
                while trainer.iteration < total_iterations:
                    chunk_rows.append({**trainer.iterate(), "seed": seed})
                    if not (run_dir / "config.yaml").is_file():
                        run_directory.write_config(run_dir, cfg)  # the first update compiled and ran: the run exists
                    if trainer.iteration % per_chunk and trainer.iteration < total_iterations:
                        continue
                    recorder.add(chunk_rows)
                    states = _with_seed(states, index, trainer.state())
                    iterations_done = int(np.sum(states["iteration"]))
                    run_directory.save_checkpoint(run_dir, states, iterations_done)
                    recorder.steps_done += len(chunk_rows) * trainer.steps_per_iteration
                    recorder.progress.update(
                        iterations_done * trainer.steps_per_iteration,
                        trainer.steps_per_second(),
                        chunk_rows[-1]["episode_return"],
                        chunk_rows[-1]["episode_cost"],
                    )
                    chunk_rows = []
            finally:
                recorder.compile_seconds += trainer.timings["compile_seconds"]
                recorder.busy_seconds += trainer.timings["rollout_seconds"] + trainer.timings["update_seconds"]
                trainer.close()
                trainer = None
    except KeyboardInterrupt:
        interrupted = True
        if (run_dir / "config.yaml").is_file():  # the rows and state of the last finished chunk
            run_directory.save_checkpoint(run_dir, states, int(np.sum(states["iteration"])))
    finally:
        recorder.progress.close()
    if not (run_dir / "config.yaml").is_file():  # interrupted before the first update: nothing to keep
        if interrupted:
            raise KeyboardInterrupt
        run_directory.write_config(run_dir, cfg)
    summary = recorder.finish(interrupted)
    if interrupted:
        raise KeyboardInterrupt
    return summary


def load_learner_states(run_dir: Path, obs_dim: int, action_space, cost_channels: int = 1) -> tuple[Learner, dict]:
    """The :class:`~saferl.training.learner.Learner` of a ``gym:`` run and its checkpoint's learner states
    (:meth:`GymTrainer.state`: agent, episodes, observation statistics, key, iteration), stacked over its seeds, for
    an environment with ``obs_dim`` observations, ``action_space`` (saferl's ``Box`` or ``Discrete``) and
    ``cost_channels`` costs, without building the environment.  For algorithms that add no host wrappers (an
    expected-cost constraint); a VaR run's augmented observation is refused."""
    run_dir = Path(run_dir)
    cfg = run_directory.load_run_config(run_dir)
    if cfg["constraint"]["type"] == "var":
        raise ValueError(f"{run_dir}: a VaR run's policy reads the augmented observation; not loaded here")
    learner = Learner(cfg, int(obs_dim), action_space, int(cost_channels), int(cost_channels))
    key = jax.random.PRNGKey(0)
    one = {
        "agent": jax.eval_shape(learner.init_agent, key),
        "episodes": jax.eval_shape(learner.init_episodes),
        "stats": jax.eval_shape(lambda: RunningStatistics.create((int(obs_dim),))),
        "key": jax.eval_shape(lambda: key),
        "iteration": jax.ShapeDtypeStruct((), np.int32),
    }
    seeds = len(run_directory.seed_ids(cfg))
    template = jax.tree.map(lambda x: np.zeros((seeds, *x.shape), x.dtype), one)
    states, _ = run_directory.load_checkpoint(run_dir, template)
    return learner, states


def _with_seed(states: dict, index: int, state: dict) -> dict:
    def put(stacked, value):
        stacked = np.array(stacked)
        stacked[index] = np.asarray(value)
        return stacked

    return jax.tree.map(put, states, state)

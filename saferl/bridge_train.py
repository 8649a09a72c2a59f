"""Training on Gymnasium environments: host rollout, compiled update.

``GymTrainer(config, env)`` is the compiled :class:`~saferl.train.Trainer` with the
rollout moved to the host.  One iteration is

    T host steps of N environments (one jitted actor call per step) -> Trajectory (T, N, ...)
    -> one jitted call: make_batch (critics, GAE) -> episode_estimates -> algorithm.update

The ``Trajectory`` holds the same arrays the compiled rollout produces, and the
update is the same ``make_batch`` / ``episode_estimates`` / ``algo.update`` code that
``Trainer.iteration`` runs, so an algorithm behaves the same on both paths.
Observation normalisation uses the same :class:`RunningStatistics`, updated
inside the jitted actor call exactly as ``NormalizeObservation`` does.

Seeds: one ``GymTrainer`` trains one seed (``seed_index`` picks which of the
config's ``seeds``); :func:`run` trains them one after another.  The agent of
seed ``i`` starts from the same parameters as seed ``i`` of the compiled Trainer.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from saferl import config as configlib
from saferl.algos import base as algos
from saferl.core import constraints, networks
from saferl.core.rollout import Trajectory, episode_estimates, initial_episodes, make_batch
from saferl.envs import base as envs
from saferl.envs.gym_bridge import BRIDGE_OPTIONS, PREFIX, HostVecEnv, as_env_list, is_gym_id, make_gym_env
from saferl.envs.wrappers import RunningStatistics
from saferl.train import Trainer

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


def _unsupported_wrapper(algo, constraint_config: dict) -> bool:
    """Whether the algorithm wraps the environment (state augmentation): JAX wrappers cannot wrap gym envs."""

    class Probe(envs.Environment):
        def observation_space(self, params):
            return envs.Box(-1.0, 1.0, (1,))

        def action_space(self, params):
            return envs.Box(-1.0, 1.0, (1,))

    env = Probe()
    try:
        return algo.wrap_env(env, constraint_config) is not env
    except Exception:
        return True


class GymTrainer:
    """Train one seed of a saferl algorithm on Gymnasium environments.

    ``config``: a (partial) run config as for the CLI, with ``env: "gym:<id>"``;
    ``env_params`` are keyword arguments of the environment, except ``cost_from``
    (``auto``/``step``/``info``) and ``cost_key`` which say where the cost is.
    ``env``: a callable building one environment (called ``num_envs`` times with
    the ``env_params``), a list of environments or a ``gymnasium.vector.SyncVectorEnv``
    (``num_envs`` is then their number), or None to build ``config["env"]``.
    """

    # the compiled Trainer's per-iteration metrics; it reads .constraint and .env_cost_channels
    iteration_metrics = Trainer.iteration_metrics

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
        self.constraint = constraints.from_config(cfg["constraint"])
        algo_cls = algos.get(cfg["algo"])
        probe = algo_cls(cfg["hparams"], None, None, self.constraint.kind, self.constraint.surrogate)
        if _unsupported_wrapper(probe, cfg["constraint"]):
            raise ValueError(f"algorithm {algo_cls.name} augments the environment (wrap_env), "
                             "which the Gymnasium bridge does not support yet")
        options = {k: v for k, v in cfg["env_params"].items() if k in BRIDGE_OPTIONS}
        env_kwargs = {k: v for k, v in cfg["env_params"].items() if k not in BRIDGE_OPTIONS}
        if env_list is None:
            source = cfg["env"] if env is None else env
            env_list = [make_gym_env(source, **env_kwargs) for _ in range(cfg["num_envs"])]
        self.venv = HostVecEnv(env_list, gamma_c=float(self.constraint.gamma_c), probe_seed=self.seed, **options)

        self.env_cost_channels = self.venv.cost_channels
        num_channels = algo_cls.cost_channels(self.env_cost_channels)
        if num_channels != self.env_cost_channels:
            self.venv.close()
            raise ValueError(f"algorithm {algo_cls.name} adds cost channels to the environment's "
                             f"{self.env_cost_channels}, which the Gymnasium bridge does not support yet")
        net = cfg["network"]
        obs_dim = self.venv.obs_dim
        self.actor = networks.make_actor(obs_dim, self.venv.action_space, net["actor_hidden"], net["activation"],
                                         net.get("init_log_std", -0.5))
        self.critics = networks.Critics(obs_dim, 1 + num_channels, tuple(net["critic_hidden"]), net["activation"],
                                        normalize=bool(net.get("value_normalization", False)))
        self.algo = algo_cls(cfg["hparams"], self.actor, self.critics, self.constraint.kind, self.constraint.surrogate)
        self.gammas = jnp.asarray(self.algo.channel_gammas(), jnp.float32)
        self.normalize = bool(cfg["normalize_observations"])
        self.num_steps, self.num_envs = int(cfg["rollout_steps"]), int(cfg["num_envs"])
        self.steps_per_iteration = self.num_steps * self.num_envs

        self._act = jax.jit(self.act)
        self._observe_act = jax.jit(self.observe_act)
        self._update = None  # compiled on the first iteration (timed)
        self.timings = {"rollout_seconds": 0.0, "update_seconds": 0.0, "compile_seconds": 0.0}
        self.history: list[dict] = []
        self.reset()

    # ------------------------------------------------------------------ pure functions (jitted)
    def act(self, actor_params, obs, key):
        dist = self.actor.distribution(actor_params, obs)
        action = self.actor.sample(dist, key)
        return action, self.actor.log_prob(dist, action), dist

    def start(self, raw_obs):
        """What ``NormalizeObservation.reset`` does: statistics of the first observations, normalised."""
        stats = RunningStatistics.create(raw_obs.shape[1:]).update(raw_obs)
        return stats, stats.normalize(raw_obs, OBS_CLIP) if self.normalize else raw_obs

    def observe(self, stats: RunningStatistics, raw_obs, raw_final_obs):
        """What ``NormalizeObservation.step`` does: update on the new observations, normalise both."""
        if not self.normalize:
            return stats, raw_obs, raw_final_obs
        stats = stats.update(raw_obs)
        return stats, stats.normalize(raw_obs, OBS_CLIP), stats.normalize(raw_final_obs, OBS_CLIP)

    def observe_act(self, actor_params, stats, raw_obs, raw_final_obs, key):
        stats, obs, final_obs = self.observe(stats, raw_obs, raw_final_obs)
        return (stats, obs, final_obs) + self.act(actor_params, obs, key)

    def update(self, agent: algos.AgentState, episodes: dict, traj: Trajectory, key):
        """``Trainer.iteration`` after its rollout: critics and GAE, episode means, the algorithm's update."""
        batch = make_batch(traj, self.critics, agent.critic_params, self.gammas, self.algo.hp["gae_lambda"])
        previous = jax.tree.map(lambda x: jnp.nan_to_num(x, nan=0.0), episodes)
        estimate = episode_estimates(batch, previous)
        batch = batch.replace(episodes=estimate)
        agent = agent.replace(critic_params=self.critics.update_normalizer(agent.critic_params, batch.returns))
        agent, algo_metrics = self.algo.update(agent, batch, key)
        metrics = self.iteration_metrics(batch, agent)
        metrics.update(algo_metrics)
        return agent, estimate, metrics

    # ------------------------------------------------------------------ host loop
    def reset(self) -> None:
        """Fresh agent and environments; keys split as in ``Trainer.init``."""
        key = jax.random.split(jax.random.PRNGKey(self.config["seed"]), self.config["seeds"])[self.seed_index]
        k_agent, k_env, self.key = jax.random.split(key, 3)
        self.agent = jax.jit(self.algo.init)(k_agent, self.constraint)  # one compile, not one per op
        env_seeds = np.asarray(jax.random.randint(k_env, (self.num_envs,), 0, 2**31 - 1)).tolist()
        self.stats, self.obs = jax.jit(self.start)(self.venv.reset(env_seeds))
        self.episodes = initial_episodes(self.env_cost_channels, False, constraints.window(self.config["constraint"]))
        self.iteration, self.env_steps = 0, 0

    def collect(self, key) -> Trajectory:
        """``rollout_steps`` host steps of all environments, as a ``Trajectory`` of numpy arrays ``(T, N, ...)``."""
        params = self.agent.actor_params
        keys = np.asarray(jax.random.split(key, self.num_steps))  # one key per step, as rollout.collect
        obs = self.obs
        action, log_prob, dist = self._act(params, obs, keys[0])
        steps, policy = [], []
        for t in range(self.num_steps):
            obs, action, log_prob, dist = jax.device_get((obs, action, log_prob, dist))
            policy.append((obs, action, log_prob, dist))
            step = self.venv.step(action)
            # normalise what the step returned and act on it: one call per step.  The action drawn
            # after the last step is dropped: the next iteration acts with the updated policy.
            self.stats, obs, step.final_obs, action, log_prob, dist = self._observe_act(
                params, self.stats, step.obs, step.final_obs, keys[min(t + 1, self.num_steps - 1)])
            steps.append(step)
        self.obs = obs
        obs, action, log_prob, dist = jax.tree.map(lambda *xs: np.stack(xs), *policy)
        host = {name: np.stack([np.asarray(getattr(s, name)) for s in steps])
                for name in ("reward", "cost", "terminated", "truncated", "final_obs", "episode_done", "episode_return",
                             "episode_cost", "episode_discounted_cost", "episode_length")}
        return Trajectory(obs=obs, action=action, log_prob=log_prob, dist=dist, **host)

    def iterate(self) -> dict:
        """One training iteration; returns its metrics as floats."""
        self.key, k_roll, k_upd = jax.random.split(self.key, 3)
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
        for _ in range(max(1, math.ceil(steps / self.steps_per_iteration))):
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


def run(cfg: dict, run_dir: Path, env: Any = None, show_progress: bool = True) -> dict:
    """``runs.train`` for a ``gym:`` environment: seeds one after another; progress.csv and summary.json.

    No checkpoints: a Gymnasium environment's state cannot be saved, so ``--resume`` is not offered.
    """
    from saferl import runs
    from saferl.runio import write_text_atomic

    cfg = resolve_config(cfg)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    totals = {"wall_seconds": 0.0, "compile_seconds": 0.0}
    steps_done, busy = 0, 0.0
    interrupted = False
    bar = None
    try:
        for index, seed in enumerate(runs.seed_ids(cfg)):
            trainer = GymTrainer(cfg, env, seed_index=index)
            if index == 0:
                write_text_atomic(run_dir / "config.yaml", configlib.dump(cfg))
            if show_progress:
                from tqdm import tqdm

                bar = tqdm(total=cfg["total_steps"], unit="step", unit_scale=True, dynamic_ncols=True,
                           desc=f"{cfg['algo']} {cfg['env']} seed {seed}")

            def log(row, seed=seed, bar=bar):
                rows.append({**row, "seed": seed})
                if row["iteration"] % 10 == 0:
                    runs.write_progress(run_dir, rows)
                if bar is not None:
                    bar.update(row["env_steps"] - bar.n)
                    bar.set_postfix(ret=f"{row['episode_return']:.2f}", cost=f"{row['episode_cost']:.2f}")

            start = time.time()
            try:
                trainer.train(callback=log)
            finally:
                totals["wall_seconds"] += time.time() - start
                totals["compile_seconds"] += trainer.timings["compile_seconds"]
                busy += trainer.timings["rollout_seconds"] + trainer.timings["update_seconds"]
                steps_done += trainer.env_steps
                trainer.close()
                if bar is not None:
                    bar.close()
    except KeyboardInterrupt:
        interrupted = True
    runs.write_progress(run_dir, rows)
    timings = {**totals, "steps_per_second": steps_done / max(busy, 1e-9)}
    summary = runs.write_summary(run_dir, cfg, rows, timings, interrupted)
    if interrupted:
        raise KeyboardInterrupt
    return summary

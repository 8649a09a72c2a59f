"""Learned policies across saferl's ports and the original Safety-Gymnasium tasks, both ways, judged by the
equivalence rule.

    # a configuration trained on the original through saferl's Gymnasium bridge (the same seeds, the same initial
    # parameters, the same harness settings as PORT_RUN, a run of saferl's port):
    python benchmarks/fidelity/cross_eval.py train-original PORT_RUN --out runs/cross_eval/original/TASK
    # every seed's final policy of each run played on the port and on the original:
    python benchmarks/fidelity/cross_eval.py evaluate RUN [RUN ...] [--episodes 20] --json OUT.json
    python benchmarks/fidelity/cross_eval.py report OUT.json [OUT.json ...] > docs/results/fidelity/cross_eval.md

(the main venv; the original runs in the fidelity venv behind ``env_server.py``, one process per environment).

What is compared. A policy goes where the task pays, so a port that differs where learners drive shows it here
when a scripted or random policy would not: a policy trained on the port loses (or gains) return or cost on the
original, and one trained on the original does on the port. Each seed's final policy plays ``--episodes`` episodes
on each side (sampled actions, the observation statistics frozen where training ended; the action passed as the
C-TRPO harness passes it: clipped to ``[-1, 1]`` where training clipped it, unclipped on the velocity tasks, then
mapped onto the task's action box by ``SafeRescaleAction(-1, 1)``'s affine map: ``suite_tasks.to_original``).

The verdict. The policies are fixed, so given them each side's episodes are independent draws; the same policies
play on both sides, equally many episodes per seed. The rule is the suite's: the 90% BCa interval of the ratio of
the port's mean over the original's (every episode of every seed) inside ``[1/1.1, 1.1]`` is "equivalent", wholly
outside "different", else "inconclusive"; means within their own noise of zero are compared on the difference scale
(``saferl.analysis.equivalence.equivalence_verdict``). Resampling the pooled episodes, not within seeds, keeps the
seeds' spread in each side's interval, which makes the rule a little conservative.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from saferl import api
from saferl.analysis.equivalence import episodes_for_equivalence, equivalence_verdict
from saferl.analysis.evaluate import evaluate_agents
from saferl.envs.base import Box
from saferl.training import gym_trainer, run_directory
from saferl.training.trainer import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_transfer import DEFAULT_SERVER_PYTHON, OriginalEnv  # noqa: E402

MARGIN = 0.1  # the fidelity suite's
PORT_KEY = 20261207  # the port's evaluation key (per runner: split)
ORIGINAL_SEED_BASE = 30_000  # the original's reset seeds: base + 1000 * seed index + episode
#: the tasks whose RK4 moves a free joint, where MuJoCo 4.0's mj_step differs from the original's (decision 066)
FREE_JOINT_RK4_TASKS = ("SafetyAntVelocity", "SafetyHumanoidVelocity")
LIKE_FILE = "cross_eval.json"  # in a run trained on the original: the port run whose configuration it copies
#: the training configuration's keys a bridge run takes from the port run (everything but the environment's)
BRIDGE_KEYS = (
    "algo",
    "total_steps",
    "seeds",
    "seed",
    "num_envs",
    "rollout_steps",
    "iterations_per_chunk",
    "checkpoint_every",
    "logger",
    "normalize_observations",
    "network",
    "constraint",
    "hparams",
)


def original_id(task: str) -> str:
    """Safety-Gymnasium 1.0's id of a saferl task: the navigation tasks ``-v0``, the velocity tasks ``-v1``."""
    if task.startswith("Safety") and task.endswith("Velocity"):
        return f"{task}-v1"
    return f"Safety{task}-v0"


class OriginalTask(gymnasium.Env):
    """The original task behind ``env_server.py`` as a Gymnasium environment for saferl's bridge: Safety-Gymnasium's
    six values, actions in the harness's ``[-1, 1]^n`` (the bridge clips where the port's training clips; the
    server maps without clipping again)."""

    metadata: dict = {}

    def __init__(self, env_id: str, python: str = DEFAULT_SERVER_PYTHON):
        self._server = OriginalEnv(env_id, python, clip=False)
        spaces = self._server.spaces()
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (spaces["obs_dim"],), np.float32)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (spaces["action_dim"],), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._server.reset(seed), {}

    def step(self, action):
        answer = self._server.step(action)
        obs = np.asarray(answer["obs"], np.float32)
        return obs, answer["reward"], answer["cost"], answer["terminated"], answer["truncated"], {}

    def close(self):
        self._server.close()


def _port_trainer(port_run: Path) -> tuple[Trainer, object]:
    cfg = run_directory.load_run_config(port_run)
    trainer = Trainer(cfg)
    runners, _ = run_directory.load_checkpoint(port_run, trainer.init_shapes())
    return trainer, runners


PORT_METHOD_DIR = "CPO_OmniSafe_units"  # ctrpo-table1's CPO run: its configuration is the one compared


def port_config(task: str) -> dict:
    """ctrpo-table1's cpu-scale CPO configuration on ``task`` (the authors' harness, the task's default physics)."""
    from saferl import reproduce

    target = reproduce.get("ctrpo-table1")
    planned = target.plan(target.scale("cpu", [task]), Path("plan"))
    return next(cfg for run_dir, cfg in planned if Path(run_dir).name == PORT_METHOD_DIR)


def train_port(task: str, out: Path) -> None:
    """ctrpo-table1's CPO run on ``task`` at cpu scale, into ``out`` (resumed if interrupted, kept if finished)."""
    from saferl.training import reuse

    reuse.train_or_resume(port_config(task), out, show_progress=True)


def train_original(port_run: Path, out: Path, python: str, total_steps: int | None = None) -> None:
    """The port run's configuration trained on the original through the Gymnasium bridge (resumed if ``out``
    holds a checkpoint); ``total_steps`` in place of the port run's (the run's config records it)."""
    try:
        if not json.loads((out / "summary.json").read_text()).get("interrupted"):
            return  # finished
    except (OSError, ValueError):
        pass
    port_cfg = run_directory.load_run_config(port_run)
    env_id = original_id(port_cfg["env"])
    trainer, _ = _port_trainer(port_run)
    cfg = {key: port_cfg[key] for key in BRIDGE_KEYS if key in port_cfg}
    cfg["env"] = f"gym:original/{env_id}"
    cfg["env_params"] = {"clip_actions": bool(trainer.clips_actions), "cost_from": "step"}
    if total_steps is not None:
        cfg["total_steps"] = int(total_steps)
    out.mkdir(parents=True, exist_ok=True)
    (out / LIKE_FILE).write_text(json.dumps({"port_run": str(port_run), "original": env_id}) + "\n")
    resume = (out / run_directory.CHECKPOINT).is_file()
    gym_trainer.run(cfg, out, env=lambda **_: OriginalTask(env_id, python), resume=resume)


def original_episodes(policy, env: OriginalEnv, seed_index: int, episodes: range) -> tuple[list, list]:
    """Episodes ``episodes`` (their indices) of ``policy`` on the original."""
    act = jax.jit(policy)
    key = jax.random.fold_in(jax.random.PRNGKey(PORT_KEY + seed_index), episodes.start)
    returns, costs = [], []
    for episode in episodes:
        obs = env.reset(ORIGINAL_SEED_BASE + 1000 * seed_index + episode)
        total_reward = total_cost = 0.0
        done = False
        while not done:
            key, sub = jax.random.split(key)
            answer = env.step(np.asarray(act(obs, sub)))
            total_reward += answer["reward"]
            total_cost += answer["cost"]
            obs = np.asarray(answer["obs"], np.float32)
            done = answer["terminated"] or answer["truncated"]
        returns.append(total_reward)
        costs.append(total_cost)
    return returns, costs


def episodes_needed(sides: dict) -> dict[str, int | None]:
    """Per quantity, the episodes a side (all seeds together) at which the rule reaches "equivalent" with
    probability 0.8 if the ratio were 1, from the episodes' coefficients of variation so far
    (``saferl.analysis.equivalence.episodes_for_equivalence``; None where a mean is 0: the difference scale)."""
    needed = {}
    for q in ("return", "cost"):
        values = [np.ravel(sides[side][q]) for side in ("port", "original")]
        if any(np.mean(v) == 0 for v in values):
            needed[q] = None
            continue
        needed[q] = episodes_for_equivalence(*(np.std(v, ddof=1) / abs(np.mean(v)) for v in values), MARGIN)
    return needed


def evaluate(run_dir: Path, episodes: int, python: str, max_episodes: int | None = None) -> dict:
    """Every seed's final policy of ``run_dir`` (a port run, or a bridge run of :func:`train_original`) for
    ``episodes`` episodes on the port and on the original; then, up to ``max_episodes`` per seed, as many as
    :func:`episodes_needed` says "equivalent" needs to be reachable."""
    max_episodes = episodes if max_episodes is None else max(episodes, max_episodes)
    cfg = run_directory.load_run_config(run_dir)
    seeds = run_directory.seed_ids(cfg)
    if cfg["env"].startswith("gym:"):
        like = json.loads((run_dir / LIKE_FILE).read_text())
        trainer, runners = _port_trainer(Path(like["port_run"]))
        env_id, trained_on = like["original"], "original"
        space = trainer.venv.action_space(trainer.env_params)
        obs_dim = int(np.prod(trainer.venv.env.observation_space(trainer.env_params).shape))
        _, states = gym_trainer.load_learner_states(run_dir, obs_dim, Box(-1.0, 1.0, space.shape))
        # the bridge run's actor in the port's training stack: the same network, normalisation and clipping
        agents = runners.agent.replace(actor_params=states["agent"].actor_params)
        stats = jax.tree.map(jnp.asarray, states["stats"])
        task = trainer.config["env"]
    else:
        trainer, runners = _port_trainer(run_dir)
        env_id, trained_on, task = original_id(cfg["env"]), "port", cfg["env"]
        agents, stats = runners.agent, runners.env_state.stats
    pick = lambda tree, i: jax.tree.map(lambda x: x[i], tree)  # noqa: E731
    policies = [api.Policy(trainer, pick(agents.actor_params, i), pick(stats, i), s) for i, s in enumerate(seeds)]
    env = OriginalEnv(env_id, python, clip=False)
    played = 0
    original: list[tuple[list, list]] = [([], []) for _ in policies]
    try:
        while True:
            for i, policy in enumerate(policies):
                more = original_episodes(policy, env, i, range(played, episodes))
                original[i] = (original[i][0] + more[0], original[i][1] + more[1])
            played = episodes
            port_returns, port_costs = evaluate_agents(trainer, agents, stats, played, key=PORT_KEY)
            sides = {
                "port": {"return": port_returns.tolist(), "cost": port_costs.tolist()},
                "original": {"return": [r for r, _ in original], "cost": [c for _, c in original]},
            }
            needed = episodes_needed(sides)
            wanted = math.ceil(max([n for n in needed.values() if n is not None], default=0) / len(policies))
            if wanted <= played or played >= max_episodes:
                break
            episodes = min(wanted, max_episodes)
    finally:
        env.close()
    verdicts = {
        q: equivalence_verdict(np.ravel(sides["port"][q]), np.ravel(sides["original"][q]), margin=MARGIN)
        for q in ("return", "cost")
    }
    return {
        "run": str(run_dir),
        "task": task,
        "original": env_id,
        "trained_on": trained_on,
        "physics": trainer.config["env_params"].get("physics"),
        "rk4_orientation": trainer.config["env_params"].get("rk4_orientation"),
        "algo": cfg["algo"],
        "total_steps": int(cfg["total_steps"]),
        "seeds": seeds,
        "episodes": played,
        "episodes_needed": needed,
        "sides": sides,
        "verdicts": verdicts,
    }


def _cell(per_seed: list[list[float]]) -> str:
    means = sorted(statistics.fmean(seed) for seed in per_seed)
    return f"{statistics.fmean(np.ravel(per_seed)):.1f} ({', '.join(f'{m:.1f}' for m in means)})"


def _verdict(v: dict) -> str:
    if v["scale"] == "ratio":
        return f"{v['verdict']} {v['ratio']:.2f} [{v['lower']:.2f}, {v['upper']:.2f}]"
    return f"{v['verdict']} (difference scale)"


def _episodes(row: dict) -> str:
    seeds = len(row["seeds"])
    needed = [row["episodes_needed"][q] for q in ("return", "cost")]
    return f"{row['episodes']} ({'; '.join('-' if n is None else str(math.ceil(n / seeds)) for n in needed)})"


def report(rows: list[dict]) -> str:
    lines = [
        "# Learned policies on saferl's port and on the original",
        "",
        "`python benchmarks/fidelity/cross_eval.py` (module docstring: what is played, and the rule). Each run's "
        "seeds' final policies (CPO, the C-TRPO harness's configuration, the task's saferl default physics) play "
        "the stated episodes per seed on each side. Cells: the mean over every episode, then each seed's mean, "
        "sorted. Verdict: the port's mean over the original's, 90% BCa interval against [1/1.1, 1.1]. Episodes: "
        "per seed and side; in brackets, per seed, what the rule needs to reach equivalent with probability 0.8 if "
        "the means were equal (from the episodes' spread; '-': compared on the difference scale).",
        "",
        "| task | trained on | physics | steps x seeds | episodes per seed (needed: return; cost) | return: port | "
        "return: original | cost: port | cost: original | return | cost |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (r["task"], r["trained_on"] != "port")):
        port, original = row["sides"]["port"], row["sides"]["original"]
        physics = row["physics"] or "-"
        if row.get("rk4_orientation") == "munthe-kaas" and row["task"] in FREE_JOINT_RK4_TASKS:
            physics += " (MuJoCo 4.0's RK4)"
        lines.append(
            f"| {row['task']} | {row['trained_on']} | {physics} | "
            f"{row['total_steps'] // 1000}k x {len(row['seeds'])} | {_episodes(row)} | {_cell(port['return'])} | "
            f"{_cell(original['return'])} | {_cell(port['cost'])} | {_cell(original['cost'])} | "
            f"{_verdict(row['verdicts']['return'])} | {_verdict(row['verdicts']['cost'])} |"
        )
    from saferl.reproduce.ctrpo.table1 import TASKS

    done = {(row["task"], row["trained_on"]) for row in rows}
    missing = [f"{task} ({side})" for task in TASKS for side in ("port", "original") if (task, side) not in done]
    if missing:
        lines += ["", f"Not evaluated yet (task, trained on): {', '.join(missing)}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train-port", help="ctrpo-table1's cpu-scale CPO run on a task (saferl's port)")
    p.add_argument("task")
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("train-original", help="train a port run's configuration on the original (the bridge)")
    p.add_argument("port_run", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--total-steps", type=int, help="steps per seed in place of the port run's")
    p.add_argument("--server-python", default=DEFAULT_SERVER_PYTHON)
    p = sub.add_parser("evaluate", help="play every seed's final policy on the port and on the original")
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--episodes", type=int, default=20, help="per seed, first")
    p.add_argument(
        "--max-episodes",
        type=int,
        default=None,
        help="per seed, at most: more episodes are played where the first ones say equivalence needs them",
    )
    p.add_argument("--server-python", default=DEFAULT_SERVER_PYTHON)
    p.add_argument("--json", type=Path, required=True)
    p = sub.add_parser("report", help="the markdown table of evaluate's JSON files")
    p.add_argument("json_files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "report":
        rows = [row for path in args.json_files for row in json.loads(path.read_text())]
        print(report(rows), end="")
        return
    if args.command == "train-port":
        from saferl.reproduce.ctrpo.table1 import TASKS

        if args.task not in TASKS:
            sys.exit(f"task {args.task!r}: the C-TRPO benchmark's tasks are {', '.join(TASKS)}")
        train_port(args.task, args.out)
        return
    if not Path(args.server_python).is_file():
        sys.exit(f"--server-python {args.server_python} does not exist (make -C benchmarks/fidelity venv)")
    if args.command == "train-original":
        if not (args.port_run / "summary.json").is_file():
            sys.exit(f"{args.port_run} is not a finished run directory (no summary.json)")
        if args.total_steps is not None and args.total_steps < 1:
            sys.exit(f"--total-steps must be >= 1, got {args.total_steps}")
        train_original(args.port_run, args.out, args.server_python, args.total_steps)
        return
    if args.episodes < 2:
        sys.exit(f"--episodes must be >= 2 (an interval needs two), got {args.episodes}")
    for run_dir in args.runs:
        if not (run_dir / "summary.json").is_file():
            sys.exit(f"{run_dir} is not a finished run directory (no summary.json)")
    rows = [evaluate(run_dir, args.episodes, args.server_python, args.max_episodes) for run_dir in args.runs]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(report(rows), end="")


if __name__ == "__main__":
    main()

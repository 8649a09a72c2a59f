"""Policies trained on a saferl port, run on the original task: does what they learned hold there?

    python benchmarks/fidelity/policy_transfer.py RUN_DIR [RUN_DIR ...] --original SafetyRacecarCircle1-v0 \
        [--episodes 10] [--blind] [--server-python benchmarks/fidelity/.venv/bin/python] [--json OUT.json] > OUT.md

(the main venv; the original runs in the fidelity venv behind ``env_server.py``).  For every seed of every run
it plays ``--episodes`` episodes of the final policy on the port (``saferl eval``: frozen observation
statistics, sampled actions, as in training) and as many on the original, with the same policy function
(:meth:`saferl.api.Run.policy_for`: the run's normalisation, the actor's sample clipped to ``[-1, 1]``, which
the server maps onto the task's action box as the C-TRPO harness's ``SafeRescaleAction(-1, 1)`` does).

Why: a fidelity check with scripted or random actions (``suite_saferl.py``) tests the dynamics where those
policies go; a learned policy goes where the task pays, and if the port is easier there (RacecarCircle1: our
800k-step runs reach returns the authors' reach only at 7.5-10M steps, docs/results/ctrpo-table1-cpu/README.md),
the policy's return
drops on the original.  If it holds, the port is faithful where the policy drives, and the difference in
learning speed lies elsewhere.  Measured on RacecarCircle1: docs/results/fidelity/racecar_transfer.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np

from saferl import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
import racecar_sensor_noise  # noqa: E402,F401  (registers RacecarCircle1-SensorNoise, whose runs this may read)

DEFAULT_SERVER_PYTHON = "benchmarks/fidelity/.venv/bin/python"
SERVER = Path(__file__).resolve().parent / "env_server.py"
RESET_SEED_BASE = 10_000  # the original's reset seeds: RESET_SEED_BASE + 100 * seed index + episode


class OriginalEnv:
    """The original task behind ``env_server.py``, stepped one action at a time."""

    def __init__(self, env_id: str, python: str = DEFAULT_SERVER_PYTHON, clip: bool = True):
        self._proc = subprocess.Popen(
            [python, str(SERVER), env_id, *([] if clip else ["--unclipped"])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def _ask(self, request: dict) -> dict:
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(
                "the original's server ended (is the fidelity venv installed? make -C benchmarks/fidelity venv)"
            )
        return json.loads(line)

    def spaces(self) -> dict:
        """``{"obs_dim", "action_dim"}`` of the original task."""
        return self._ask({"spaces": True})

    def reset(self, seed: int | None) -> np.ndarray:
        return np.asarray(self._ask({"reset": seed})["obs"], np.float32)

    def step(self, action) -> dict:
        return self._ask({"step": np.asarray(action, np.float64).tolist()})

    def close(self) -> None:
        try:
            self._ask({"close": True})
        except (RuntimeError, BrokenPipeError, json.JSONDecodeError):
            pass
        self._proc.wait(timeout=30)


CONSTANT_VARIANCE = 1e-6  # an observation entry whose variance in training stayed below this never varied


def constant_dims(policy: api.Policy) -> tuple[np.ndarray, np.ndarray]:
    """Which observation entries never varied on the port in training (frozen variance below
    :data:`CONSTANT_VARIANCE`), and their means.  Normalised by a near-zero standard deviation, any variation of
    such an entry on the original (the Racecar's accelerometer z and gyro x, y: its body bounces and tilts; the
    port's stays level) becomes +-10 (the normaliser's clip), a signal the policy never saw."""
    var, mean = np.asarray(policy.obs_stats.var), np.asarray(policy.obs_stats.mean)
    return var < CONSTANT_VARIANCE, mean


def original_episodes(
    run: api.Run, env: OriginalEnv, seed_id: int, seed_index: int, episodes: int, blind: bool
) -> list[tuple[float, float]]:
    """(return, cost) of ``episodes`` episodes of the final policy of seed ``seed_id`` on the original;
    ``blind``: the entries of :func:`constant_dims` replaced by the port's constant values."""
    policy = run.policy_for(seed_id)
    constant, mean = constant_dims(policy)
    act = jax.jit(policy, static_argnames="deterministic")
    key = jax.random.PRNGKey(seed_id)
    results = []
    for episode in range(episodes):
        obs = env.reset(RESET_SEED_BASE + 100 * seed_index + episode)
        total_reward = total_cost = 0.0
        done = False
        while not done:
            key, sub = jax.random.split(key)
            if blind:
                obs = np.where(constant, mean, obs)
            answer = env.step(np.asarray(act(obs, sub)))
            total_reward += answer["reward"]
            total_cost += answer["cost"]
            obs = np.asarray(answer["obs"], np.float32)
            done = answer["terminated"] or answer["truncated"]
        results.append((total_reward, total_cost))
    return results


def transfer(run_dir: Path, env_id: str, episodes: int, server_python: str, blind: bool) -> dict:
    run = api.load(run_dir)
    final = run.summary["final"]
    port = run.evaluate(episodes)
    env = OriginalEnv(env_id, server_python)
    try:
        original = [original_episodes(run, env, s, i, episodes, blind) for i, s in enumerate(port["seeds"])]
    finally:
        env.close()
    constant = [np.flatnonzero(constant_dims(run.policy_for(s))[0]).tolist() for s in port["seeds"]]
    return {
        "run": str(run_dir),
        "blind": blind,
        "constant_dims": constant,
        "algo": run.config["algo"],
        "env": run.config["env"],
        "seeds": port["seeds"],
        "training_return": final["episode_return"].get("per_seed"),
        "training_cost": final["episode_cost"].get("per_seed"),
        "port_return": [s["episode_return"] for s in port["per_seed"]],
        "port_cost": [s["episode_cost"] for s in port["per_seed"]],
        "original_return": [statistics.fmean(r for r, _ in seed) for seed in original],
        "original_cost": [statistics.fmean(c for _, c in seed) for seed in original],
    }


def markdown(rows: list[dict], env_id: str, episodes: int) -> str:
    def cell(values):
        values = sorted(float(v) for v in values)
        return f"{statistics.median(values):.1f} ({', '.join(f'{v:.1f}' for v in values)})"

    lines = [
        f"# Policies trained on saferl's port, run on the original {env_id}",
        "",
        f"`python benchmarks/fidelity/policy_transfer.py` ({episodes} episodes per seed and side, sampled "
        "actions, frozen observation statistics). Median over seeds (every seed's mean, sorted).",
        "",
        "| run | training (last 10%) return | port return | original return | training cost | port cost "
        "| original cost |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        name = Path(row["run"]).name + (", constant entries blinded" if row["blind"] else "")
        lines.append(
            f"| {name} | {cell(row['training_return'])} | {cell(row['port_return'])} | "
            f"{cell(row['original_return'])} | {cell(row['training_cost'])} | {cell(row['port_cost'])} | "
            f"{cell(row['original_cost'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument("--original", required=True, help="the original's Gymnasium id, e.g. SafetyRacecarCircle1-v0")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--server-python", default=DEFAULT_SERVER_PYTHON)
    parser.add_argument(
        "--blind",
        action="store_true",
        help="feed the policy the port's constant value of every observation entry that never varied "
        "in training (constant_dims), on the original",
    )
    parser.add_argument("--json", type=Path, help="also write the per-seed numbers here")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        sys.exit(f"--episodes must be >= 1, got {args.episodes}")
    for run_dir in args.run_dirs:
        if not (run_dir / "summary.json").is_file():
            sys.exit(f"{run_dir} is not a finished run directory (no summary.json)")
    if not Path(args.server_python).is_file():
        sys.exit(f"--server-python {args.server_python} does not exist (make -C benchmarks/fidelity venv)")
    rows = [transfer(d, args.original, args.episodes, args.server_python, args.blind) for d in args.run_dirs]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(rows, args.original, args.episodes), end="")


if __name__ == "__main__":
    main()

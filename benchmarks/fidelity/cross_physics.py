"""Policies trained on one physics of a navigation task, evaluated on both, in one process.

    python benchmarks/fidelity/cross_physics.py RUN_DIR [RUN_DIR ...] [--episodes 10] [--json OUT.json] > OUT.md

Each run's final policy of every seed plays ``--episodes`` episodes on the task under ``physics: planar`` and under
``physics: mujoco`` (MuJoCo itself, whose models follow Safety-Gymnasium 1.0.0's step by step:
docs/results/fidelity/mujoco_models.md): the run's frozen observation statistics, the actor's sample clipped to
[-1, 1], the same reset keys on both physics.  Per seed, the mean return and cost; over the seeds, the equivalence
rule (``saferl.analysis.equivalence.equivalence_verdict``, margin 10%) of the other physics' per-seed means against the
training physics', paired by seed.  A policy goes where the task pays, so where the planar model differs there its
policies do not hold on MuJoCo.  The table also gives what the policies do: the share of steps in reverse (throttle
or thrust below -0.5), with an action at its bound (|a| > 0.95), and with the second action's sign switching.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl import api
from saferl.analysis.equivalence import equivalence_verdict
from saferl.envs.base import make, make_env_params
from saferl.training import run_directory

PHYSICS = ("planar", "mujoco")
RESET_KEY = 20261207


def episodes(env, params, policy, count: int, seed_index: int) -> dict[str, np.ndarray]:
    """``count`` episodes of ``policy`` on ``env`` under ``params``: returns, costs and action statistics."""
    steps = int(params.max_steps)

    def episode(key):
        state, obs = env.reset(key, params)

        def body(carry, action_key):
            state, obs, total_reward, total_cost = carry
            action = jnp.clip(policy(obs, action_key), -1.0, 1.0)
            state, obs, reward, cost, *_ = env.step(state, action, params)
            return (state, obs, total_reward + reward, total_cost + cost), action

        keys = jax.random.split(jax.random.fold_in(key, 1), steps)
        (_, _, total_reward, total_cost), actions = jax.lax.scan(body, (state, obs, 0.0, 0.0), keys)
        return total_reward, total_cost, actions

    keys = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(RESET_KEY), seed_index), count)
    returns, costs, actions = (np.asarray(x) for x in jax.jit(jax.vmap(episode))(keys))
    return {
        "return": returns,
        "cost": costs,
        "reverse": float((actions[..., 0] < -0.5).mean()),
        "at_bound": float((np.abs(actions) > 0.95).mean()),
        "switching": float((np.diff(np.sign(actions[..., 1]), axis=-1) != 0).mean()),
    }


def cross_evaluate(run_dir: Path, count: int) -> dict:
    run = api.load(run_dir)
    config = run.config
    task, trained_on = config["env"], config["env_params"]["physics"]
    env = make(task)
    seeds = int(config["seeds"])
    out = {"run": str(run_dir), "task": task, "trained_on": trained_on, "physics": {}}
    for physics in PHYSICS:
        params = make_env_params(env, {**config["env_params"], "physics": physics})
        seed_ids = run_directory.seed_ids(config)
        per_seed = [episodes(env, params, run.policy_for(seed_ids[i]), count, i) for i in range(seeds)]
        out["physics"][physics] = {
            "return": [float(s["return"].mean()) for s in per_seed],
            "cost": [float(s["cost"].mean()) for s in per_seed],
            **{k: statistics.mean(s[k] for s in per_seed) for k in ("reverse", "at_bound", "switching")},
        }
    other = next(p for p in PHYSICS if p != trained_on)
    out["verdicts"] = {
        quantity: equivalence_verdict(out["physics"][other][quantity], out["physics"][trained_on][quantity])
        for quantity in ("return", "cost")
    }
    return out


def markdown(rows: list[dict], count: int) -> str:
    def cell(values):
        ordered = sorted(values)
        return f"{statistics.median(values):.1f} ({', '.join(f'{v:.1f}' for v in ordered)})"

    lines = [
        "# Policies trained on one physics of a navigation task, evaluated on both",
        "",
        f"`python benchmarks/fidelity/cross_physics.py` ({count} episodes per seed and physics, sampled actions, "
        "frozen observation statistics, the same resets on both). Per seed the mean over its episodes; the cells "
        "give the median over seeds and every seed's mean, sorted. Verdict: the equivalence rule (90% BCa interval "
        "of the ratio of means within [1/1.1, 1.1]) of the other physics' per-seed means against the training "
        "physics'.",
        "",
        "| task | trained on | return: planar | return: mujoco | cost: planar | cost: mujoco | verdict (return; cost) "
        "| reverse, at a bound, steering switches (share of steps; planar / mujoco) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        planar, mujoco = row["physics"]["planar"], row["physics"]["mujoco"]
        verdicts = "; ".join(
            f"{row['verdicts'][q]['verdict']} ({row['verdicts'][q]['ratio']:.2f} [{row['verdicts'][q]['lower']:.2f}, "
            f"{row['verdicts'][q]['upper']:.2f}])"
            if row["verdicts"][q]["scale"] == "ratio"
            else row["verdicts"][q]["verdict"]
            for q in ("return", "cost")
        )
        behaviour = ", ".join(f"{planar[k]:.2f} / {mujoco[k]:.2f}" for k in ("reverse", "at_bound", "switching"))
        lines.append(
            f"| {row['task']} | {row['trained_on']} | {cell(planar['return'])} | {cell(mujoco['return'])} | "
            f"{cell(planar['cost'])} | {cell(mujoco['cost'])} | {verdicts} | {behaviour} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = [cross_evaluate(run_dir, args.episodes) for run_dir in args.runs]
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(rows, args.episodes), end="")


if __name__ == "__main__":
    main()

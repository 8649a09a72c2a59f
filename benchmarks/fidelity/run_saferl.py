"""saferl's side of the fidelity comparison (runs in the main venv, .venv).

The same episodes as ``run_original.py`` (random policy and the scripted controllers of
``common.py``, read from saferl's state pytrees), the same trajectories from the start states
the original recorded (its JSON, ``--original``), random-action stepping speed of the
vmapped environments, and SCPO's full-training speed on SafetyBallRun through the CLI
(``saferl train``).  Writes one JSON (``--out``).

    JAX_PLATFORMS=cpu .venv/bin/python benchmarks/fidelity/run_saferl.py --original FILE --out FILE

The ball tasks are built with ``version="1.4.0"`` (the PyPI package the originals come from), or with the
version ``--version`` names (``0.1`` against ``run_original.py --bsg-source``); ``--tasks`` limits the run to some
tasks.
Episodes of one task run as one compiled program: ``vmap`` over episodes, ``scan`` over steps,
with the policy chosen by a traced flag; statistics count the steps up to ``terminated or
truncated``, as the original's loop does.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

from saferl.envs import base as envs  # noqa: E402
from saferl.envs.bullet_ball.ball import GatherState  # noqa: E402
from saferl.envs.bullet_ball.physics import BallState  # noqa: E402
from saferl.envs.bullet_ball.reach import ALTERNATE_GOALS, ReachState  # noqa: E402
from saferl.envs.safety_nav.point_goal import PointGoalState  # noqa: E402
from saferl.envs.wrappers import AutoReset, EpisodeStatistics, VecEnv  # noqa: E402

#: Bullet-Safety-Gym 1.4.0's SafetyBallRun-v0 (BSG14 __init__.py, builder.py): 100 steps of 4 x 1/120 s
#: the reset pool tried where an environment has none: 16 >= the 8 episodes of 250 steps that end in a
#: 2048-step rollout (the pool's condition, saferl/envs/wrappers.py AutoReset)
RESET_POOL_PROBE = 16
#: the walls' models (saferl/envs/bullet_ball/physics.py ``BallParams.wall_contact``)
WALL_MODELS = ("bullet_erp", "inelastic")
RUN_14_OVERRIDES = ["env_params.max_steps=100", "env_params.timestep=0.008333333333333333"]


def build(name: str, kwargs: dict):
    env = envs.make(name, **kwargs)
    return env, env.default_params()


def scripted_action(label: str, state):
    """The task's controller (common.py) on saferl's state."""
    if label == "PointGoal1":
        return common.point_goal_controller(jnp, state.pos, state.heading, state.goal)
    if label == "BallRun":
        return common.run_controller(jnp, state.pos, state.vel)
    if label == "BallCircle":
        return common.circle_controller(jnp, state.pos, state.vel)
    if label == "BallGather":
        target = common.nearest(jnp, state.pos, state.apples, state.apple_left)
        return common.goto_controller(jnp, state.pos, state.vel, target)
    return common.goto_controller(jnp, state.pos, state.vel, state.goal)


def extras_of(label: str, info):
    """This step's counts of ``common.EXTRA_NAMES[label]``."""
    if label == "BallGather":
        return jnp.stack([info["apples_collected"]])
    if label == "BallReach":
        return jnp.stack([info["goal_reached"], info["cost_box"]])
    if label == "PointGoal1":
        return jnp.stack([info["goal_reached"]])
    return jnp.zeros((0,))


# --------------------------------------------------------------------------- episodes


def episode_runner(label: str, env, params):
    """``run(keys, scripted)``: per-episode return, cost, length and extra, one compiled program."""
    max_steps = int(params.max_steps)

    def one(key, scripted):
        reset_key, run_key = jax.random.split(key)
        state, _ = env.reset(reset_key, params)

        def body(carry, k):
            state, done, ret, cost, length, extra = carry
            random = jax.random.uniform(k, (2,), minval=-1.0, maxval=1.0)
            action = jnp.where(scripted, scripted_action(label, state), random)
            state, _, reward, c, terminated, truncated, info = env.step(state, action, params)
            live = ~done
            ret = ret + jnp.where(live, reward, 0.0)
            cost = cost + jnp.where(live, c, 0.0)
            length = length + live.astype(jnp.int32)
            extra = extra + jnp.where(live, extras_of(label, info), 0.0)
            return (state, done | terminated | truncated, ret, cost, length, extra), None

        zero = jnp.zeros((), jnp.float32)
        extra = jnp.zeros((len(common.EXTRA_NAMES.get(label, ())),), jnp.float32)
        init = (state, jnp.zeros((), bool), zero, zero, jnp.zeros((), jnp.int32), extra)
        (_, _, ret, cost, length, extra), _ = jax.lax.scan(body, init, jax.random.split(run_key, max_steps))
        return ret, cost, length, extra

    return jax.jit(jax.vmap(one, in_axes=(0, None)))


def episodes(label: str, env, params, count: int, seed: int = 0) -> dict:
    run = episode_runner(label, env, params)
    out = {}
    for i, policy in enumerate(common.POLICIES):
        keys = jax.random.split(jax.random.PRNGKey(seed + i), count)
        start = time.perf_counter()
        ret, cost, length, extra = jax.device_get(run(keys, jnp.asarray(policy == "scripted")))
        record = common.episode_record(ret, cost, length, extra, common.EXTRA_NAMES.get(label, ()))
        record["seconds"] = time.perf_counter() - start  # the first includes the compile
        out[policy] = record
    return out


# --------------------------------------------------------------------------- trajectories from the original's states


def start_state(label: str, start: dict, key):
    f32 = lambda v: jnp.asarray(v, jnp.float32)  # noqa: E731
    t0 = jnp.zeros((), jnp.int32)
    if label == "PointGoal1":
        pos, goal = f32(start["pos"]), f32(start["goal"])
        return PointGoalState(
            pos=pos,
            heading=f32(start["heading"]) % (2 * math.pi),
            vel=jnp.zeros(2),
            ang_vel=f32(0.0),
            goal=goal,
            hazards=f32(start["hazards"]),
            vases=f32(start["vases"]),
            last_dist_goal=jnp.linalg.norm(goal - pos),
            time=t0,
            key=key,
        )
    pos, vel = f32(start["pos"]), f32(start["vel"])
    if label in ("BallRun", "BallCircle"):
        return BallState(pos=pos, vel=vel, time=t0)
    if label == "BallGather":
        apples, bombs = f32(start["apples"]), f32(start["bombs"])
        return GatherState(
            pos=pos,
            vel=vel,
            apples=apples,
            bombs=bombs,
            apple_left=jnp.ones(len(apples), bool),
            bomb_left=jnp.ones(len(bombs), bool),
            time=t0,
        )
    goal, spawn, box = f32(start["goal"]), f32(start["box_spawn"]), f32(start["box"])
    offset = (box - spawn) / 0.7  # the box's centre at t = 0 is where the original's box was
    goal_index = jnp.argmin(jnp.linalg.norm(jnp.asarray(ALTERNATE_GOALS) - goal, axis=1)).astype(jnp.int32)
    return ReachState(
        pos=pos,
        vel=vel,
        goal=goal,
        goal_index=goal_index,
        box_spawn=spawn,
        box_phase=jnp.arctan2(offset[0], offset[1]),
        box_yaw=f32(start["box_yaw"]),
        puddles=f32(start["puddles"]),
        last_dist=jnp.linalg.norm(goal - pos),
        time=t0,
        key=key,
    )


_ROLLOUTS = {}  # label -> jitted open-loop rollout (one compile per action-sequence length)


def trajectory(label: str, env, params, original: dict) -> dict:
    state = start_state(label, original["start"], jax.random.PRNGKey(0))
    actions = jnp.asarray(original["actions"], jnp.float32)
    if label not in _ROLLOUTS:

        def body(state, action):
            state, _, reward, cost, *_ = env.step(state, action, params)
            heading = state.heading if label == "PointGoal1" else jnp.zeros(())
            return state, (state.pos, state.vel, heading, reward, cost)

        _ROLLOUTS[label] = jax.jit(lambda s, a: jax.lax.scan(body, s, a))
    _, (pos, vel, heading, reward, cost) = _ROLLOUTS[label](state, actions)
    out = {
        "positions": np.asarray(pos).tolist(),
        "velocities": np.asarray(vel).tolist(),
        "rewards": np.asarray(reward).tolist(),
        "costs": np.asarray(cost).tolist(),
    }
    if label == "PointGoal1":
        out["headings"] = np.asarray(heading).tolist()
    return out


def wall_bounce(label: str, env, params, original: dict) -> dict:
    """The original's wall-bounce probe (run_original.wall_bounce) on saferl: same starts, no action."""
    step = jax.jit(lambda s: env.step(s, jnp.zeros(2), params)[0])
    impacts = []
    for probe in original["impacts"]:
        speed, gap = probe["speed"], probe["gap"]
        start = dict(original["start"], pos=[original["limit"] - gap, original["y"]], vel=[speed, 0.3 * speed])
        state = start_state(label, start, jax.random.PRNGKey(0))
        for _ in range(common.PROBE_STEPS):
            before = np.asarray(state.vel)
            state = step(state)
            vel = np.asarray(state.vel)
            if before[0] > 0.0 and vel[0] < 0.5 * before[0]:  # as run_original.wall_bounce
                impacts.append(
                    {
                        "speed": speed,
                        "gap": gap,
                        "normal_in": float(before[0]),
                        "normal_out": float(-vel[0]),
                        "ratio": float(-vel[0] / before[0]),
                        "tangential_kept": float(vel[1] / before[1]),
                    }
                )
                break
    ratios = np.array([i["ratio"] for i in impacts])
    return {
        "impacts": impacts,
        "ratio_mean": float(ratios.mean()),
        "ratio_min": float(ratios.min()),
        "ratio_max": float(ratios.max()),
    }


def wall_probes(label: str, name: str, kwargs: dict, original: dict) -> dict:
    """The wall-bounce probe with the task's default walls (``wall_bounce``) and with each other ``wall_contact``
    model (``wall_bounce_<model>``)."""
    out = {}
    default = build(name, kwargs)[1].wall_contact
    for model in WALL_MODELS:
        env, params = build(name, {**kwargs, "wall_contact": model})
        b = wall_bounce(label, env, params, original["tasks"][label]["wall_bounce"])
        out["wall_bounce" if model == default else f"wall_bounce_{model}"] = {**b, "wall_contact": model}
    return out


def reach_reset_probe(env, params, resets: int = 2000) -> dict:
    """How often saferl's SafetyBallReach reset puts the ball inside a puddle's cost zone (<= 1.5)."""
    states, _ = jax.vmap(lambda k: env.reset(k, params))(jax.random.split(jax.random.PRNGKey(2), resets))
    distance = jnp.min(jnp.linalg.norm(states.puddles - states.pos[:, None], axis=-1), axis=1)
    return {"resets": resets, "start_in_puddle_zone": float(jnp.mean(distance <= 1.5))}


# --------------------------------------------------------------------------- speed


def env_stepping(name: str, env, params, num_envs: int, steps: int, pool: int | None = None) -> dict:
    """Random-action env-steps/s of ``num_envs`` vmapped, auto-resetting copies: the loop of
    ``saferl.analysis.bench.env_only`` on an environment built with the version's kwargs, timed without
    the compile and without the first reset and pool draw (``refresh``, once per rollout in
    training), which are timed apart.  ``pool``: AutoReset's reset pool (default: the
    environment's ``reset_pool`` config default)."""
    pool = envs.config_defaults(name).get("reset_pool", 0) if pool is None else pool
    venv = VecEnv(AutoReset(EpisodeStatistics(env), pool_size=pool), num_envs)
    space = env.action_space(params)
    start = jax.jit(lambda key: venv.refresh(venv.reset(key, params)[0], params))

    def run(state, key):
        def body(state, k):
            actions = jax.vmap(space.sample)(jax.random.split(k, num_envs))
            state, *_ = venv.step(state, actions, params)
            return state, None

        return jax.lax.scan(body, state, jax.random.split(key, steps))[0]

    run = jax.jit(run)
    key = jax.random.PRNGKey(0)
    state = jax.block_until_ready(start(key))
    t0 = time.perf_counter()
    state = jax.block_until_ready(start(key))
    reset_seconds = time.perf_counter() - t0
    jax.block_until_ready(run(state, key))
    t0 = time.perf_counter()
    jax.block_until_ready(run(state, key))
    seconds = time.perf_counter() - t0
    return {
        "num_envs": num_envs,
        "steps": steps,
        "reset_pool": pool,
        "seconds": seconds,
        "reset_and_pool_seconds": reset_seconds,
        "steps_per_second": num_envs * steps / seconds,
    }


def scpo_training(seeds: int, steps: int, run_root: Path) -> dict:
    """``saferl train --algo scpo --env SafetyBallRun`` (1.4.0's episode length and substep)."""
    out = run_root / f"scpo-SafetyBallRun-{seeds}seeds"
    if out.exists():
        shutil.rmtree(out)
    exe = Path(sys.executable).with_name("saferl")
    cmd = [
        str(exe),
        "train",
        "--algo",
        "scpo",
        "--env",
        "SafetyBallRun",
        "--steps",
        str(steps),
        "--seeds",
        str(seeds),
        "--out",
        str(out),
        "--quiet",
    ]
    for item in RUN_14_OVERRIDES:
        cmd += ["--set", item]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    process_seconds = time.perf_counter() - start
    summary = json.loads((out / "summary.json").read_text())
    all_steps = summary["env_steps_all_seeds"]
    display = ["saferl" if i == 0 else ("<run dir>" if c == str(out) else c) for i, c in enumerate(cmd)]
    return {
        "command": " ".join(display),
        "seeds": seeds,
        "env_steps_per_seed": summary["env_steps"],
        "env_steps_all_seeds": all_steps,
        "compile_seconds": summary["compile_seconds"],
        "wall_seconds": summary["wall_seconds"],
        "process_seconds": process_seconds,
        "steps_per_second": summary["steps_per_second"],
        "steps_per_second_with_compile": all_steps / summary["wall_seconds"],
        "final_return": summary["final"].get("episode_return", {}).get("mean"),
        "final_cost": summary["final"].get("episode_cost", {}).get("mean"),
    }


# --------------------------------------------------------------------------- main


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--original", type=Path, required=True, help="the JSON run_original.py wrote")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--episodes-scale", type=float, default=1.0)
    parser.add_argument("--scpo-steps", type=int, default=163840, help="per seed (5 iterations of 16 x 2048)")
    parser.add_argument("--speed-steps", type=int, default=100, help="per env with 1024 envs; 10x with 1 env")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--run-root", type=Path, default=HERE / "runs")
    parser.add_argument("--version", help="the ball tasks' Bullet-Safety-Gym version (default: common.TASKS's 1.4.0)")
    parser.add_argument("--tasks", nargs="+", help="labels of common.TASKS to run (default: all)")
    parser.add_argument("--probe-only", action="store_true", help="only the wall-bounce probes (no episodes)")
    args = parser.parse_args(argv)
    tasks = [
        (
            label,
            env_id,
            name,
            {**kwargs, "version": args.version} if args.version and "version" in kwargs else kwargs,
            n,
        )
        for label, env_id, name, kwargs, n in common.TASKS
        if args.tasks is None or label in args.tasks
    ]
    original = json.loads(args.original.read_text())
    result = {
        "side": "saferl",
        "python": platform.python_version(),
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "tasks": {},
        "speed": {},
    }
    for label, _, name, kwargs, count in tasks:
        count = max(2, int(round(count * args.episodes_scale)))
        env, params = build(name, kwargs)
        if args.probe_only:
            if "wall_bounce" in original["tasks"].get(label, {}):
                result["tasks"][label] = {"env": name, "kwargs": kwargs, **wall_probes(label, name, kwargs, original)}
            continue
        entry = {"env": name, "kwargs": kwargs, "policies": episodes(label, env, params, count)}
        for policy, rec in entry["policies"].items():
            print(
                f"{label:11s} {policy:8s} return {rec['return']['mean']:9.3f} +- {rec['return']['std']:7.3f}  "
                f"cost {rec['cost']['mean']:7.3f} +- {rec['cost']['std']:6.3f}  ({rec['seconds']:.0f} s)",
                flush=True,
            )
        if label in original["tasks"]:
            entry["trajectory"] = trajectory(label, env, params, original["tasks"][label]["trajectory"])
        if label == "BallReach":
            entry["reset_probe"] = reach_reset_probe(env, params)
        if "random_trajectories" in original["tasks"].get(label, {}):
            entry["random_trajectories"] = [
                trajectory(label, env, params, t) for t in original["tasks"][label]["random_trajectories"]
            ]
        if "wall_bounce" in original["tasks"].get(label, {}):
            entry.update(wall_probes(label, name, kwargs, original))
        result["tasks"][label] = entry
    if not args.skip_speed and not args.probe_only:
        for label, _, name, kwargs, _ in tasks:
            env, params = build(name, kwargs)
            runs = [
                env_stepping(name, env, params, 1, 10 * args.speed_steps),
                env_stepping(name, env, params, 1024, args.speed_steps),
            ]
            if runs[-1]["reset_pool"] == 0:  # what a reset pool would give (AutoReset pays a reset per step without)
                runs.append(env_stepping(name, env, params, 1024, args.speed_steps, pool=RESET_POOL_PROBE))
            result["speed"][label] = runs
            rates = ", ".join(
                f"{r['num_envs']} envs (pool {r['reset_pool']}) {r['steps_per_second']:,.0f}" for r in runs
            )
            print(f"{label:11s} random env-steps/s: {rates}", flush=True)
        result["scpo"] = [scpo_training(s, args.scpo_steps, args.run_root) for s in (1, 4)]
        for r in result["scpo"]:
            print(
                f"SCPO SafetyBallRun x{r['seeds']} seeds: {r['steps_per_second']:,.0f} env-steps/s "
                f"(compile {r['compile_seconds']:.0f} s excluded)",
                flush=True,
            )
    result["machine"] = common.machine()
    result["date"] = time.strftime("%Y-%m-%d %H:%M %Z")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""The originals' side of the fidelity comparison (runs in benchmarks/fidelity/.venv).

Bullet-Safety-Gym 1.4.0 (SafetyBall{Run,Circle,Gather,Reach}-v0) and Safety-Gymnasium 1.0.0
(SafetyPointGoal1-v0): random-policy and scripted-controller episodes, trajectories from
set states under fixed actions, random-action stepping speed, and Stable-Baselines3 PPO's
training speed on SafetyBallRun-v0.  Writes one JSON (``--out``).

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/run_original.py --out FILE

Episodes are stepped with a plain loop, not through saferl's Gymnasium bridge
(``saferl/envs/gym_bridge.py``): the bridge imports saferl, which needs JAX >= 0.9.2, and that
needs numpy >= 2; Safety-Gymnasium 1.0 imports gymnasium-robotics 1.2.2, which pins numpy < 1.24.
The import is attempted and its outcome recorded under ``"bridge"``.  The loop keeps the
bridge's episode statistics: return and cost summed over the steps of an episode, which ends at
``terminated or truncated``.

``--bsg-source DIR`` runs Bullet-Safety-Gym 0.1 instead of the installed 1.4.0: ``DIR`` holds the sources of
GitHub SvenGronauer/Bullet-Safety-Gym at df7f9a2 (the version SCPO's requirements pin, written for the old ``gym``
API; a checkout or ``git archive`` of it, kept outside the repository's tracked files), imported with ``gym``
aliased to gymnasium, its environment built from the registered entry point and kwargs and stepped through
:class:`OldApiEnv` (the 4-tuple's ``done`` becomes ``terminated``, the registered 250-step limit ``truncated``).
The physics path does not touch ``gym``.  ``--tasks`` limits the run to some tasks (the v0.1 run takes the four
ball tasks).

Seeding: Bullet-Safety-Gym ignores ``reset(seed)`` and draws its layouts from the global
``np.random``, which is seeded once per (task, policy); Safety-Gymnasium is reset with
``seed = episode index``.  The random policy draws from its own ``np.random.default_rng``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402

warnings.filterwarnings("ignore")


def bridge_check() -> dict:
    """Try to import saferl's Gymnasium bridge from the repository root, in this venv."""
    sys.path.insert(0, str(HERE.parent.parent))
    try:
        importlib.import_module("saferl.envs.gym_bridge")
    except Exception as exc:  # noqa: BLE001 -- any failure is the answer
        return {"importable": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        sys.path.pop(0)
    return {"importable": True, "error": None}


# --------------------------------------------------------------------------- building and reading the originals


#: the folder of Bullet-Safety-Gym 0.1's sources (``--bsg-source``); None: the installed 1.4.0 wheel
BSG_SOURCE: Path | None = None


def use_bsg_source(folder: Path) -> None:
    """Import ``bullet_safety_gym`` from ``folder`` (version 0.1, old ``gym`` API) with ``gym`` aliased to gymnasium;
    must run before anything imports the installed package."""
    global BSG_SOURCE
    import gymnasium

    if "bullet_safety_gym" in sys.modules:
        raise RuntimeError("bullet_safety_gym was imported before --bsg-source took effect")
    if not (folder / "bullet_safety_gym" / "__init__.py").is_file():
        raise FileNotFoundError(f"{folder} holds no bullet_safety_gym package")
    sys.modules["gym"] = gymnasium
    sys.modules["gym.envs"] = gymnasium.envs
    sys.modules["gym.envs.registration"] = gymnasium.envs.registration
    sys.modules["gym.spaces"] = gymnasium.spaces
    sys.path.insert(0, str(folder.resolve()))
    BSG_SOURCE = folder


class OldApiEnv:
    """Bullet-Safety-Gym 0.1's environment (``reset() -> obs``, ``step -> (obs, r, done, info)``) with its
    registered time limit, stepped as gymnasium's 5-tuple."""

    def __init__(self, env, max_episode_steps: int):
        self.unwrapped, self.max_episode_steps, self.steps = env, max_episode_steps, 0

    def reset(self, seed=None):
        self.steps = 0
        return self.unwrapped.reset(), {}

    def step(self, action):
        obs, reward, done, info = self.unwrapped.step(action)
        self.steps += 1
        return obs, reward, bool(done), self.steps >= self.max_episode_steps, info

    def close(self):
        self.unwrapped.close()


def make_env(env_id: str):
    if env_id.startswith("SafetyPoint"):
        import safety_gymnasium

        return safety_gymnasium.make(env_id)
    import gymnasium

    importlib.import_module("bullet_safety_gym")  # registers the ids
    if BSG_SOURCE is not None:  # 0.1: the old gym API (reset -> obs, step -> 4-tuple)
        spec = gymnasium.spec(env_id)
        module, name = spec.entry_point.split(":")
        builder = getattr(importlib.import_module(module), name)
        return OldApiEnv(builder(**spec.kwargs), spec.max_episode_steps)
    return gymnasium.make(env_id)


def step_env(env, action):
    """(obs, reward, cost, terminated, truncated, info) for both step conventions."""
    result = env.step(action)
    if len(result) == 6:
        return result
    obs, reward, terminated, truncated, info = result
    return obs, reward, float(info.get("cost", 0.0)), terminated, truncated, info


def ball_state(env):
    agent = env.unwrapped.agent
    return agent.get_position()[:2].copy(), agent.get_linear_velocity()[:2].copy()


def apples(env):
    from bullet_safety_gym.envs.obstacles import Apple

    obstacles = [o for o in env.unwrapped.obstacles if isinstance(o, Apple)]
    points = np.array([o.get_position()[:2] for o in obstacles])
    return points, np.array([o.is_visible for o in obstacles])


def ball_goal(env):
    return env.unwrapped.task.goal.get_position()[:2].copy()


def point_state(env):
    task = env.unwrapped.task
    mat = task.agent.mat
    return task.agent.pos[:2].copy(), float(np.arctan2(mat[1, 0], mat[0, 0])), task.goal.pos[:2].copy()


def scripted_action(label: str, env) -> np.ndarray:
    """The task's controller (common.py) on the original's simulator state."""
    if label == "PointGoal1":
        pos, heading, goal = point_state(env)
        return common.point_goal_controller(np, pos, heading, goal)
    pos, vel = ball_state(env)
    if label == "BallRun":
        return common.run_controller(np, pos, vel)
    if label == "BallCircle":
        return common.circle_controller(np, pos, vel)
    if label == "BallGather":
        points, visible = apples(env)
        return common.goto_controller(np, pos, vel, common.nearest(np, pos, points, visible))
    return common.goto_controller(np, pos, vel, ball_goal(env))


# --------------------------------------------------------------------------- episodes


def episodes(label: str, env_id: str, policy: str, count: int, seed: int = 0) -> dict:
    env = make_env(env_id)
    np.random.seed(seed)
    rng = np.random.default_rng(seed + 1)
    returns, costs, lengths, extras = [], [], [], []
    start = time.perf_counter()
    for episode in range(count):
        env.reset(seed=episode) if label == "PointGoal1" else env.reset()
        total_r = total_c = 0.0
        length = 0
        extra = np.zeros(len(common.EXTRA_NAMES.get(label, ())))
        done = False
        while not done:
            if policy == "random":
                action = rng.uniform(-1.0, 1.0, size=2).astype(np.float32)
            else:
                action = np.asarray(scripted_action(label, env), np.float32)
            goal_before = ball_goal(env) if label == "BallReach" else None
            apples_before = int(apples(env)[1].sum()) if label == "BallGather" else 0
            _, reward, cost, terminated, truncated, info = step_env(env, action)
            total_r += float(reward)
            total_c += float(cost)
            length += 1
            if label == "BallReach":
                box = env.unwrapped.obstacles[0]
                extra += [not np.allclose(goal_before, ball_goal(env)), box.detect_collision(env.unwrapped.agent)]
            elif label == "BallGather":
                extra += apples_before - int(apples(env)[1].sum())
            elif label == "PointGoal1":
                extra += bool(info.get("goal_met", False))
            done = bool(terminated or truncated)
        returns.append(total_r)
        costs.append(total_c)
        lengths.append(length)
        extras.append(extra)
    env.close()
    record = common.episode_record(returns, costs, lengths, extras, common.EXTRA_NAMES.get(label, ()))
    record["seconds"] = time.perf_counter() - start
    return record


# --------------------------------------------------------------------------- trajectories from set states


def set_ball(env, pos, vel) -> None:
    """Put the ball at ``pos`` with velocity ``vel``, rolling (omega = (-v_y, v_x, 0) / r)."""
    u = env.unwrapped
    body = u.agent.body_id
    z = float(u.agent.get_position()[2])
    _, quat = u.bc.getBasePositionAndOrientation(body)
    u.bc.resetBasePositionAndOrientation(body, [float(pos[0]), float(pos[1]), z], quat)
    r = common.BALL_RADIUS
    u.bc.resetBaseVelocity(body, [float(vel[0]), float(vel[1]), 0.0], [-float(vel[1]) / r, float(vel[0]) / r, 0.0])
    if hasattr(u.task, "old_potential"):  # RunTask: potential of the new position
        u.task.old_potential = u.task.calculate_task_potential()
    if hasattr(u.task, "old_dist"):  # ReachGoalTask: distance from the new position
        u.task.old_dist = u.task.get_xy_distance()


def trajectory(label: str, env_id: str, seed: int = 0) -> dict:
    """Reset, set the start state, apply the task's fixed actions; record every step."""
    env = make_env(env_id)
    np.random.seed(seed)
    actions = common.trajectory_actions(label)
    layout = {}
    if label == "PointGoal1":
        env.reset(seed=seed)
        pos, heading, goal = point_state(env)
        task = env.unwrapped.task
        layout = {
            "pos": pos.tolist(),
            "heading": heading,
            "goal": goal.tolist(),
            "hazards": np.asarray(task.hazards.pos)[:, :2].tolist(),
            "vases": np.asarray(task.vases.pos)[:, :2].tolist(),
        }
    else:
        start = common.TRAJECTORY_STARTS[label]
        resets = 0
        while True:
            env.reset()
            resets += 1
            if label != "BallReach":
                break
            box = env.unwrapped.obstacles[0]
            if box.init_xyz[0] < common.REACH_BOX_MAX_X:
                break
        set_ball(env, start["pos"], start["vel"])
        layout = {"pos": start["pos"], "vel": start["vel"], "resets": resets}
        u = env.unwrapped
        if label == "BallGather":
            from bullet_safety_gym.envs.obstacles import Apple, Bomb

            layout["apples"] = [o.get_position()[:2].tolist() for o in u.obstacles if isinstance(o, Apple)]
            layout["bombs"] = [o.get_position()[:2].tolist() for o in u.obstacles if isinstance(o, Bomb)]
        if label == "BallReach":
            layout["goal"] = ball_goal(env).tolist()
            layout["box"] = u.obstacles[0].get_position()[:2].tolist()
            layout["box_spawn"] = np.asarray(u.obstacles[0].init_xyz)[:2].tolist()
            layout["box_yaw"] = float(u.obstacles[0].get_orientation()[2])
            layout["puddles"] = [o.get_position()[:2].tolist() for o in u.obstacles[1:]]
    positions, velocities, headings, rewards, costs = [], [], [], [], []
    for action in actions:
        _, reward, cost, _, _, _ = step_env(env, action)
        if label == "PointGoal1":
            pos, heading, _ = point_state(env)
            headings.append(heading)
            vel = env.unwrapped.task.agent.vel[:2]
        else:
            pos, vel = ball_state(env)
        positions.append(np.asarray(pos).tolist())
        velocities.append(np.asarray(vel).tolist())
        rewards.append(float(reward))
        costs.append(float(cost))
    env.close()
    out = {
        "start": layout,
        "actions": actions.tolist(),
        "positions": positions,
        "velocities": velocities,
        "rewards": rewards,
        "costs": costs,
    }
    if headings:
        out["headings"] = headings
    return out


#: ball-centre limit of the +x wall face: SmallRoom 9.9 - 0.5, Octagon 11.9 - 0.5
WALL_LIMIT_X = {"BallGather": 9.4, "BallReach": 9.4, "BallCircle": 11.4}


def wall_bounce(
    label: str, env_id: str, speeds=(1.0, 2.0, 3.0, 4.0, 6.0), gaps=(0.3, 0.33, 0.36), contact_erp: float | None = None
) -> dict:
    """The ball rolled with no action straight into the +x wall: outgoing over incoming normal
    speed, and the tangential speed kept, per impact (speed, gap to the wall at the start).
    ``contact_erp`` replaces builder.py's ``setDefaultContactERP(0.9)`` (to show where the bounce comes from)."""
    env = make_env(env_id)
    if contact_erp is not None:
        env.unwrapped.bc.setDefaultContactERP(contact_erp)
    np.random.seed(1)
    limit = WALL_LIMIT_X[label]
    impacts = []
    for speed in speeds:
        for gap in gaps:
            env.reset()
            while label == "BallReach" and env.unwrapped.obstacles[0].init_xyz[0] > common.REACH_BOX_MAX_X:
                env.reset()
            set_ball(env, [limit - gap, -8.0 if label == "BallReach" else 0.0], [speed, 0.3 * speed])
            for _ in range(common.PROBE_STEPS):
                _, vel = ball_state(env)
                before = vel.copy()
                step_env(env, np.zeros(2, np.float32))
                _, vel = ball_state(env)
                if before[0] > 0.0 and vel[0] < 0.5 * before[0]:  # the wall took half the normal speed or more
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
    env.close()
    ratios = np.array([i["ratio"] for i in impacts])
    return {
        "impacts": impacts,
        "ratio_mean": float(ratios.mean()),
        "ratio_min": float(ratios.min()),
        "ratio_max": float(ratios.max()),
        "limit": limit,
        "y": -8.0 if label == "BallReach" else 0.0,
    }


def reach_reset_probe(resets: int = 300, seed: int = 2) -> dict:
    """How often SafetyBallReach-v0's reset puts the ball inside a puddle's cost zone (xy distance
    <= 1.5): its obstacles keep out of the previous episode's ball (tasks.py ReachGoalTask.specific_reset)."""
    env = make_env("SafetyBallReach-v0")
    np.random.seed(seed)
    inside = 0
    for _ in range(resets):
        env.reset()
        pos = env.unwrapped.agent.get_position()[:2]
        inside += min(np.linalg.norm(o.get_position()[:2] - pos) for o in env.unwrapped.obstacles[1:]) <= 1.5
    env.close()
    return {"resets": resets, "start_in_puddle_zone": inside / resets}


def point_random_trajectories(count: int = 6, steps: int = 300) -> list[dict]:
    """SafetyPointGoal1-v0 from ``count`` resets under uniform random action sequences (seeded)."""
    env = make_env("SafetyPointGoal1-v0")
    out = []
    for seed in range(count):
        env.reset(seed=seed)
        pos, heading, goal = point_state(env)
        task = env.unwrapped.task
        start = {
            "pos": pos.tolist(),
            "heading": heading,
            "goal": goal.tolist(),
            "hazards": np.asarray(task.hazards.pos)[:, :2].tolist(),
            "vases": np.asarray(task.vases.pos)[:, :2].tolist(),
        }
        actions = np.random.default_rng(seed).uniform(-1.0, 1.0, (steps, 2)).astype(np.float32)
        positions, headings = [], []
        for action in actions:
            step_env(env, action)
            pos, heading, _ = point_state(env)
            positions.append(pos.tolist())
            headings.append(heading)
        out.append({"start": start, "actions": actions.tolist(), "positions": positions, "headings": headings})
    env.close()
    return out


# --------------------------------------------------------------------------- speed


def stepping_speed(env_id: str, steps: int, seed: int = 0) -> dict:
    """Random-action env-steps/s of one environment, resetting when an episode ends."""
    env = make_env(env_id)
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed) if env_id.startswith("SafetyPoint") else env.reset()
    actions = rng.uniform(-1.0, 1.0, size=(steps, 2)).astype(np.float32)
    start = time.perf_counter()
    for action in actions:
        *_, terminated, truncated, _ = step_env(env, action)
        if terminated or truncated:
            env.reset()
    seconds = time.perf_counter() - start
    env.close()
    return {"env": env_id, "steps": steps, "seconds": seconds, "steps_per_second": steps / seconds}


def ppo_speed(steps: int, threads: int, seed: int = 0) -> dict:
    """Stable-Baselines3 PPO (its defaults: n_steps 2048, 64x64 tanh MLPs) on SafetyBallRun-v0."""
    import stable_baselines3
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(threads)
    env = make_env("SafetyBallRun-v0")
    model = PPO("MlpPolicy", env, n_steps=2048, seed=seed, device="cpu", verbose=0)
    policy = model.policy
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start
    env.close()
    done = int(model.num_timesteps)
    return {
        "library": f"stable-baselines3 {stable_baselines3.__version__}",
        "torch": torch.__version__,
        "torch_threads": threads,
        "env": "SafetyBallRun-v0",
        "num_envs": 1,
        "n_steps": model.n_steps,
        "batch_size": model.batch_size,
        "n_epochs": model.n_epochs,
        "net_arch": str(policy.net_arch),
        "activation": policy.activation_fn.__name__,
        "env_steps": done,
        "learn_seconds": seconds,
        "steps_per_second": done / seconds,
    }


# --------------------------------------------------------------------------- main


def versions() -> dict:
    from importlib.metadata import version

    names = [
        "bullet-safety-gym",
        "pybullet",
        "safety-gymnasium",
        "gymnasium",
        "mujoco",
        "numpy",
        "stable-baselines3",
        "torch",
    ]
    out = {n: version(n) for n in names}
    if BSG_SOURCE is not None:
        out["bullet-safety-gym"] = "0.1 (GitHub SvenGronauer/Bullet-Safety-Gym df7f9a2, from source)"
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--episodes-scale", type=float, default=1.0, help="multiply every episode count")
    parser.add_argument("--ppo-steps", type=int, default=20480, help="10 PPO iterations of 2048")
    parser.add_argument("--ppo-threads", type=int, default=1)
    parser.add_argument("--speed-steps", type=int, default=5000, help="ball tasks; PointGoal1 takes a fifth")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--bsg-source", type=Path, help="run Bullet-Safety-Gym 0.1 from this source folder")
    parser.add_argument("--tasks", nargs="+", help="labels of common.TASKS to run (default: all)")
    args = parser.parse_args(argv)
    if args.bsg_source is not None:
        use_bsg_source(args.bsg_source)
    tasks = [t for t in common.TASKS if args.tasks is None or t[0] in args.tasks]
    result = {
        "side": "original",
        "python": platform.python_version(),
        "versions": versions(),
        "bridge": bridge_check(),
        "tasks": {},
        "speed": {},
    }
    print(f"bridge importable: {result['bridge']['importable']} ({result['bridge']['error']})", flush=True)
    for label, env_id, _, _, count in tasks:
        count = max(2, int(round(count * args.episodes_scale)))
        entry = {"env_id": env_id, "policies": {}}
        for policy in common.POLICIES:
            entry["policies"][policy] = episodes(label, env_id, policy, count)
            rec = entry["policies"][policy]
            print(
                f"{label:11s} {policy:8s} return {rec['return']['mean']:9.3f} +- {rec['return']['std']:7.3f}  "
                f"cost {rec['cost']['mean']:7.3f} +- {rec['cost']['std']:6.3f}  ({rec['seconds']:.0f} s)",
                flush=True,
            )
        entry["trajectory"] = trajectory(label, env_id)
        if label in WALL_LIMIT_X:
            # the layout saferl needs for its state (apples, box, puddles: away from the +x wall)
            entry["wall_bounce"] = {**wall_bounce(label, env_id), "start": entry["trajectory"]["start"]}
            if label == "BallGather":
                entry["wall_bounce_erp0"] = wall_bounce(label, env_id, contact_erp=0.0)
            b = entry["wall_bounce"]
            print(
                f"{label:11s} wall bounce: out/in normal speed {b['ratio_mean']:.2f} "
                f"({b['ratio_min']:.2f}-{b['ratio_max']:.2f}, {len(b['impacts'])} impacts)",
                flush=True,
            )
        if label == "BallReach":
            entry["reset_probe"] = reach_reset_probe()
        if label == "PointGoal1":
            entry["random_trajectories"] = point_random_trajectories()
        result["tasks"][label] = entry
    if not args.skip_speed:
        for label, env_id, _, _, _ in tasks:
            steps = args.speed_steps if label != "PointGoal1" else args.speed_steps // 5
            result["speed"][label] = stepping_speed(env_id, steps)
            print(f"{label:11s} {result['speed'][label]['steps_per_second']:9,.0f} random env-steps/s", flush=True)
        result["ppo"] = ppo_speed(args.ppo_steps, args.ppo_threads)
        print(
            f"SB3 PPO on SafetyBallRun-v0: {result['ppo']['steps_per_second']:,.0f} env-steps/s "
            f"({result['ppo']['env_steps']} steps in {result['ppo']['learn_seconds']:.1f} s)",
            flush=True,
        )
    stamp = HERE / ".venv" / "install_seconds"  # written by the Makefile's venv target
    result["install_seconds"] = float(stamp.read_text()) if stamp.is_file() else None
    result["machine"] = common.machine()
    result["date"] = time.strftime("%Y-%m-%d %H:%M %Z")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

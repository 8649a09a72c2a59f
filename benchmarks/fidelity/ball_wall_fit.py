"""The ball's wall contact one sub-step at a time: Bullet-Safety-Gym's wall probe against saferl's
``wall_erp_velocity``, and the fit of its one free number, ``BallParams.wall_spin_share``.

The probe: in the original, with no action, the ball is put at ``limit - gap`` on the +x wall's normal (``limit``
the ball centre's bound at the face: SmallRoom 9.4, Octagon 11.4), rolling (``omega = (-v_y, v_x, 0) / r``) at a
normal speed ``v`` in {0.5, 1, 1.5, 2, 3, 4, 5, 6, 8} m/s and a tangential speed ``ratio * v``, ratio in
{0, 0.3, 1}; six start gaps per speed, uniform in ``[0.3, 0.3 + v h k]`` (one control step's travel, so the
sub-step at which the ball crosses the face varies).  PyBullet is set to one sub-step per ``stepSimulation``
(``fixedTimeStep = h``, ``numSubSteps = 1``, the task's own ``h`` and ``k`` read from the built environment) and the
ball's position, velocity and angular velocity are recorded before every sub-step.  Three settings per version:
Gather's and Circle's in their own worlds, and Reach's sub-step in Gather's world (SmallRoom, as Reach's; Reach's box
is a dynamic body the ball could meet; apples and bombs have no collision shape).

The fit: the impact is the first sub-step that takes half the normal speed or more.  From the state recorded before
it saferl's own code predicts the state after (``physics.ball_velocity`` with zero force, then
``physics.wall_erp_velocity`` with the task's walls and the params of saferl's environment at that version:
timestep, mass, radius, inertia, contact ERP, wall friction, rolling friction), and it is held against the state
PyBullet recorded after it:

* normal: ``|v_x predicted - v_x recorded|`` (m/s) over every impact (max and percentiles); the push-out has no
  free number (``erp depth / h``);
* tangential: the kept fraction ``v_y after / v_y before``, predicted minus recorded, for each candidate
  ``wall_spin_share`` (rms over every impact with a tangential speed; mean and max at ratio 0.3, the ratio of the
  fidelity benchmark's wall probe; mean at ratio 1); the share saferl ships is marked.

Run from the repository root; ``record`` in the fidelity venv, ``fit`` in the main venv::

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/ball_wall_fit.py record --version 0.1 \\
        --bsg-source runs/bsg01-src --out runs/ball-wall-fit/ball_wall_v01.json
    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/ball_wall_fit.py record --version 1.4.0 \\
        --out runs/ball-wall-fit/ball_wall_v14.json
    JAX_PLATFORMS=cpu .venv/bin/python benchmarks/fidelity/ball_wall_fit.py fit \\
        runs/ball-wall-fit/ball_wall_v01.json runs/ball-wall-fit/ball_wall_v14.json \\
        --out docs/results/fidelity/ball_wall_fit.md

(``make -C benchmarks/fidelity ball-wall-fit`` runs the three.)  ``--bsg-source`` is GitHub
SvenGronauer/Bullet-Safety-Gym at df7f9a2 (see ``run_original.py``).  The recordings (about 15 MB each, a minute or
two each) stay under ``runs/``; ``--out`` writes the Markdown and a JSON beside it.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import platform
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

#: saferl's task key -> (the original's environment whose sub-step is probed, the environment probed in, the
#: label of run_original.WALL_LIMIT_X)
PROBES = {
    "gather": ("SafetyBallGather-v0", "SafetyBallGather-v0", "BallGather"),
    "circle": ("SafetyBallCircle-v0", "SafetyBallCircle-v0", "BallCircle"),
    "reach": ("SafetyBallReach-v0", "SafetyBallGather-v0", "BallReach"),
}
SPEEDS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)  # normal speed into the wall (m/s)
GAPS_PER_SPEED = 6
RATIOS = (0.0, 0.3, 1.0)  # tangential over normal speed
MIN_GAP = 0.3  # the nearest start, ball centre to its bound (m)
SETTLE_STEPS = 60  # sub-steps recorded after the expected impact, plus 8 control steps
SHARES = (0.0, 0.3, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1.0)  # candidate wall_spin_share
PROBE_RATIO = 0.3  # the fidelity benchmark's wall probe
SAFERL_NAMES = {"gather": "SafetyBallGather", "circle": "SafetyBallCircle", "reach": "SafetyBallReach"}


# --------------------------------------------------------------------------- record (fidelity venv)


def build(env_id: str):
    """The original's EnvironmentBuilder from its registered entry point and kwargs (both versions)."""
    import gymnasium

    importlib.import_module("bullet_safety_gym")  # registers the ids
    spec = gymnasium.spec(env_id)
    module, name = spec.entry_point.split(":")
    return getattr(importlib.import_module(module), name)(**spec.kwargs)


def one_substep_per_step(env, h: float) -> None:
    env.bc.setPhysicsEngineParameter(fixedTimeStep=h, numSubSteps=1)


def probe_run(env, h: float, k: int, limit: float, radius: float, speed: float, gap: float, ratio: float) -> list:
    """One roll into the +x wall with no action; the ball's [x, y, z, v(3), omega(3)] before every sub-step."""
    env.reset()
    one_substep_per_step(env, h)  # after the reset, which may set the task's own stepping again
    bc, body = env.bc, env.agent.body_id
    _, quat = bc.getBasePositionAndOrientation(body)
    z = float(env.agent.get_position()[2])
    vx, vy = speed, ratio * speed
    bc.resetBasePositionAndOrientation(body, [limit - gap, 0.0, z], quat)
    bc.resetBaseVelocity(body, [vx, vy, 0.0], [-vy / radius, vx / radius, 0.0])
    steps = int(round((gap + 0.5) / max(speed, 0.5) / h)) + 8 * k + SETTLE_STEPS
    rows = []
    for _ in range(steps):
        pos, _ = bc.getBasePositionAndOrientation(body)
        vel, omega = bc.getBaseVelocity(body)
        rows.append([float(x) for x in (*pos, *vel, *omega)])
        bc.stepSimulation()
    return rows


def record(version: str, bsg_source: Path | None, out: Path) -> None:
    import common
    import pybullet
    import run_original

    if version == "0.1":
        if bsg_source is None:
            raise SystemExit("--version 0.1 needs --bsg-source DIR (Bullet-Safety-Gym 0.1's sources)")
        run_original.use_bsg_source(bsg_source.resolve())
    elif bsg_source is not None:
        raise SystemExit("--bsg-source is for --version 0.1")
    import bullet_safety_gym

    installed = getattr(bullet_safety_gym, "__version__", None)
    if version == "1.4.0" and installed not in (None, "1.4.0"):
        raise SystemExit(f"the installed bullet_safety_gym is {installed}, not 1.4.0")
    tasks = {}
    for task, (own_id, probe_id, label) in PROBES.items():
        own = build(own_id)
        h, k = float(own.time_step), int(own.frame_skip)
        own.close()
        env = build(probe_id)
        np.random.seed(1)  # the original draws its layouts from the global np.random
        limit = run_original.WALL_LIMIT_X[label]
        rng = np.random.default_rng(0)
        runs = []
        for speed in SPEEDS:
            for gap in rng.uniform(MIN_GAP, MIN_GAP + speed * h * k, GAPS_PER_SPEED):
                for ratio in RATIOS:
                    rows = probe_run(env, h, k, limit, common.BALL_RADIUS, speed, float(gap), ratio)
                    runs.append({"speed": speed, "gap": float(gap), "ratio": ratio, "rec": rows})
        env.close()
        tasks[task] = {"env_id": own_id, "probed_in": probe_id, "h": h, "k": k, "limit": limit, "runs": runs}
        print(f"{version} {task}: h = 1/{1 / h:.0f}, k = {k}, {len(runs)} runs", file=sys.stderr)
    result = {
        "version": version,
        "bsg_source": None if bsg_source is None else str(bsg_source),
        "pybullet": getattr(pybullet, "__version__", None) or _dist_version("pybullet"),
        "python": platform.python_version(),
        "recorded": datetime.date.today().isoformat(),
        "columns": ["x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"],
        "tasks": tasks,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result))
    print(f"wrote {out}", file=sys.stderr)


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- fit (main venv)


def impacts(task: dict) -> tuple[dict, list[float]]:
    """Per run, the sub-step that takes half the normal speed or more: the state before it and after it.  A run
    where that sub-step starts with the centre short of its bound (the ball slowed by rolling friction and damping
    before the wall) is left out; its speed is returned."""
    limit = task["limit"]
    keys = ("ratio", "pos", "vel_before", "vel_after")
    rows = {key: [] for key in keys}
    skipped = []
    for run in task["runs"]:
        rec = np.asarray(run["rec"])
        vx = rec[:, 3]
        hit = vx < 0.5 * vx[0]
        i = int(np.argmax(hit))
        if not hit.any() or i == 0 or rec[i - 1, 0] - limit <= 0.0:
            skipped.append(run["speed"])
            continue
        rows["ratio"].append(run["ratio"])
        rows["pos"].append(rec[i - 1, :2])
        rows["vel_before"].append(rec[i - 1, 3:5])
        rows["vel_after"].append(rec[i, 3:5])
    return {key: np.asarray(value) for key, value in rows.items()}, skipped


def predictor(walls: np.ndarray, limit: float):
    """saferl's sub-step at a wall with zero force, vmapped over states: ``(params, pos, vel) -> vel after``."""
    import jax
    import jax.numpy as jnp

    from saferl.envs.bullet_ball import physics

    def one(params, pos, vel):
        moved = physics.ball_velocity(vel, jnp.zeros(2, jnp.float32), params)
        return physics.wall_erp_velocity(pos, vel, moved, walls, limit, params)

    return jax.jit(jax.vmap(one, in_axes=(None, 0, 0)))


def fit_recording(data: dict, shares) -> dict:
    from saferl.envs.base import make

    version = data["version"]
    per_task, pooled = {}, {"ratio": [], "normal": [], "kept": {s: [] for s in shares}, "measured": []}
    for task, rec in data["tasks"].items():
        env = make(SAFERL_NAMES[task], version=version)
        params = env.default_params()
        limit = float(params.wall_distance - params.radius)
        checks = {
            "timestep": [rec["h"], float(params.timestep)],
            "frame_skip": [rec["k"], int(params.frame_skip)],
            "limit": [rec["limit"], limit],
        }
        mismatch = [n for n, (a, b) in checks.items() if abs(a - b) > 1e-9]
        rows, skipped = impacts(rec)
        predict = predictor(np.asarray(env.walls), limit)
        pos = rows["pos"].astype(np.float32)
        before = rows["vel_before"].astype(np.float32)
        after = rows["vel_after"]
        shipped = np.asarray(predict(params, pos, before))
        signed = shipped[:, 0] - after[:, 0]
        normal = np.abs(signed)
        tangential = rows["ratio"] > 0.0
        measured = after[tangential, 1] / before[tangential, 1]
        kept = {}
        for share in shares:
            pred = np.asarray(predict(params.replace(wall_spin_share=share), pos, before))
            kept[share] = pred[tangential, 1] / before[tangential, 1] - measured
            pooled["kept"][share].append(kept[share])
        pooled["ratio"].append(rows["ratio"][tangential])
        pooled["normal"].append(normal)
        pooled["measured"].append(measured)
        per_task[task] = {
            "impacts": len(normal),
            "skipped": skipped,
            "checks": checks,
            "mismatch": mismatch,
            "normal_out": [float(-after[:, 0].max()), float(-after[:, 0].min())],
            "normal": normal_stats(normal),
            # the median signed error as a depth: erp depth / h = error
            "depth_offset_m": float(np.median(signed) * params.timestep / params.contact_erp),
            "kept": {str(s): kept_stats(kept[s], rows["ratio"][tangential]) for s in shares},
        }
    ratio = np.concatenate(pooled["ratio"])
    measured = np.concatenate(pooled["measured"])
    return {
        "version": version,
        "pybullet": data.get("pybullet"),
        "tasks": per_task,
        "normal": normal_stats(np.concatenate(pooled["normal"])),
        "kept": {str(s): kept_stats(np.concatenate(pooled["kept"][s]), ratio) for s in shares},
        "measured_kept": {
            str(r): [float(f(measured[ratio == r])) for f in (np.mean, np.min, np.max)]
            for r in sorted(set(ratio.tolist()))
        },
    }


def normal_stats(err: np.ndarray) -> dict:
    p50, p90, p99 = np.percentile(err, [50, 90, 99])
    return {
        "impacts": int(err.size),
        "max": float(err.max()),
        "p50": float(p50),
        "p90": float(p90),
        "p99": float(p99),
        "over_1cm_s": int((err > 0.01).sum()),
    }


def kept_stats(err: np.ndarray, ratio: np.ndarray) -> dict:
    at = ratio == PROBE_RATIO
    full = ratio == 1.0
    return {
        "rms": float(np.sqrt(np.mean(err**2))),
        "mean_at_probe": float(err[at].mean()),
        "max_at_probe": float(np.abs(err[at]).max()),
        "mean_at_1": float(err[full].mean()),
        "impacts": int(err.size),
    }


def report(results: list[dict], shares, shipped: float, commit: str | None) -> str:
    lines = [
        "# The ball's wall contact against PyBullet, one sub-step at a time",
        "",
        "Written by `benchmarks/fidelity/ball_wall_fit.py` (`make -C benchmarks/fidelity ball-wall-fit`), saferl "
        f"commit {commit or 'unknown'}, {datetime.date.today().isoformat()}. Each impact of the original's wall probe "
        "(zero action, the ball rolled into the +x wall; normal speeds 0.5-8 m/s, six start gaps each, tangential "
        "over normal speed 0, 0.3 and 1; the script's docstring has the grid) is replayed from the state PyBullet "
        "recorded before the sub-step of impact through saferl's `physics.ball_velocity` and "
        "`physics.wall_erp_velocity`, with the params of saferl's environment at that version, and compared with the "
        "state PyBullet recorded after it.",
        "",
        "## Normal: the push-out `erp depth / h`",
        "",
        "Error of the predicted normal velocity after the impact sub-step (m/s), and the median signed error "
        "(predicted minus recorded) written as the depth that would give it (`error h / erp`).",
        "",
        "| version | task | sub-step h | impacts | outgoing normal speed (m/s) | max | median | 90% | 99% "
        "| over 0.01 | median as a depth (mm) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for task, t in res["tasks"].items():
            n = t["normal"]
            lo, hi = t["normal_out"]
            h = t["checks"]["timestep"][1]
            lines.append(
                f"| {res['version']} | {task} | 1/{1 / h:.0f} | {n['impacts']} | {lo:.2f} to {hi:.2f} "
                f"| {n['max']:.4f} | {n['p50']:.5f} | {n['p90']:.4f} | {n['p99']:.4f} | {n['over_1cm_s']} "
                f"| {1e3 * t['depth_offset_m']:+.4f} |"
            )
        n = res["normal"]
        lines.append(
            f"| {res['version']} | all | | {n['impacts']} | | {n['max']:.4f} | {n['p50']:.5f} | {n['p90']:.4f} "
            f"| {n['p99']:.4f} | {n['over_1cm_s']} | |"
        )
    lines += [
        "",
        "## Tangential: the kept fraction against `wall_spin_share`",
        "",
        "Error of the kept fraction of the tangential speed (`v_y` after over before the impact sub-step), predicted "
        f"minus recorded: rms over every impact with a tangential speed, mean and max |error| at ratio {PROBE_RATIO} "
        f"(the fidelity benchmark's wall probe), mean at ratio 1. **Bold**: the share saferl ships "
        f"(`BallParams.wall_spin_share` = {shipped:g}).",
        "",
    ]
    for res in results:
        lines += [
            f"### Bullet-Safety-Gym {res['version']} (PyBullet {res['pybullet']})",
            "",
            "| wall_spin_share | rms | mean at 0.3 | max at 0.3 | mean at 1 |",
            "|---|---|---|---|---|",
        ]
        best = min(shares, key=lambda s: res["kept"][str(s)]["rms"])
        for share in shares:
            k = res["kept"][str(share)]
            name = f"**{share:g} (saferl)**" if share == shipped else f"{share:g}"
            if share == best:
                name += " (least rms)"
            lines.append(
                f"| {name} | {k['rms']:.4f} | {k['mean_at_probe']:+.4f} | {k['max_at_probe']:.4f} "
                f"| {k['mean_at_1']:+.4f} |"
            )
        measured = ", ".join(
            f"ratio {r}: {m:.3f} ({lo:.3f} to {hi:.3f})" for r, (m, lo, hi) in res["measured_kept"].items()
        )
        per_task = "; ".join(f"{task} {t['kept'][str(shipped)]['rms']:.4f}" for task, t in res["tasks"].items())
        lines += [
            "",
            f"Recorded kept fraction, mean (min to max): {measured}. rms per task at the shipped share: {per_task}.",
            "",
        ]
    mismatches = [
        f"{res['version']} {task}: {', '.join(t['mismatch'])}"
        for res in results
        for task, t in res["tasks"].items()
        if t["mismatch"]
    ]
    skipped = [v for res in results for t in res["tasks"].values() for v in t["skipped"]]
    speeds = ", ".join(f"{v:g}" for v in sorted(set(skipped)))
    lines += [
        "## Checks",
        "",
        "The recorded sub-step, control-step length and wall bound against saferl's params at each version: "
        + ("all agree." if not mismatches else "differ for " + "; ".join(mismatches) + ".")
        + f" Runs left out, the ball having lost half its normal speed to rolling friction and damping before its"
        f" centre reached its bound (no impact): {len(skipped)}, at {speeds or '-'} m/s.",
        "",
    ]
    return "\n".join(lines)


def fit(recordings: list[Path], shares, out: Path | None) -> None:
    from saferl.envs.bullet_ball.physics import BallParams
    from saferl.training.provenance import git_commit

    shipped = float(BallParams().wall_spin_share)
    shares = sorted(set(shares) | {shipped})
    results = [fit_recording(json.loads(path.read_text()), shares) for path in recordings]
    text = report(results, shares, shipped, git_commit())
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        payload = {"shipped_share": shipped, "shares": shares, "recordings": [str(p) for p in recordings]}
        out.with_suffix(".json").write_text(json.dumps({**payload, "results": results}, indent=1) + "\n")
        print(f"wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    rec = steps.add_parser("record", help="the original's probe, one sub-step at a time (fidelity venv)")
    rec.add_argument("--version", choices=("0.1", "1.4.0"), required=True)
    rec.add_argument("--bsg-source", type=Path, help="Bullet-Safety-Gym 0.1's sources (for --version 0.1)")
    rec.add_argument("--out", type=Path, required=True, help="the recording's JSON (under runs/)")
    fit_ = steps.add_parser("fit", help="saferl's wall model against recordings (main venv)")
    fit_.add_argument("recordings", type=Path, nargs="+")
    fit_.add_argument("--shares", type=float, nargs="+", default=list(SHARES), help="candidate wall_spin_share")
    fit_.add_argument("--out", type=Path, help="write this Markdown and a JSON beside it")
    args = parser.parse_args(argv)
    if args.step == "record":
        sys.path.insert(0, str(HERE))
        record(args.version, args.bsg_source, args.out)
    else:
        fit(args.recordings, args.shares, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``saferl`` command line: train, eval, list, plot, bench, show, reproduce, sweep.

Bad input gives a one-line ``saferl: error: ...`` naming the problem and exit
status 2; nothing already written is touched.

Each command imports what it needs inside its function: ``saferl --help`` and a mistyped flag answer without
importing JAX (seconds on a small machine), and ``saferl sweep`` on a Ray driver sets JAX up before importing it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


class UserError(Exception):
    pass


def _setup_jax(args=None) -> None:
    """The platform and the persistent compilation cache (:mod:`saferl.foundation.jaxsetup`); a command that only
    schedules Ray jobs (``sweep`` without ``--local``, ``reproduce --ray``) keeps its own JAX on the CPU."""
    from saferl.foundation import jaxsetup

    jaxsetup.setup_process(driver=jaxsetup.is_ray_driver(args))


def _cmd_train(args) -> int:
    from saferl import api
    from saferl.training import config as configlib

    if args.logger and len(args.logger) > 1:
        raise UserError(
            f"--logger given {len(args.logger)} times; name the loggers in one, separated by commas: "
            f"--logger {','.join(args.logger)}"
        )
    logger = args.logger[0] if args.logger else None
    if args.resume:
        # --logger with --resume: this sitting's loggers (config.yaml keeps the run's own)
        run = api.load(args.resume).resume(progress=not args.quiet, logger=logger)
    else:
        user = configlib.load_yaml(args.config) if args.config else {}
        for key, value in (
            ("algo", args.algo),
            ("env", args.env),
            ("total_steps", args.steps),
            ("seeds", args.seeds),
            ("num_envs", args.num_envs),
            ("seed", args.seed),
            ("logger", logger),
        ):
            if value is not None:
                user[key] = value
        # flags and --set all as config entries (no explicit arguments), so --set keeps winning over a flag
        user = configlib.merge(user, configlib.parse_set(args.set))
        if args.sweep:
            from saferl.training import in_program_sweep

            try:
                user["sweep"] = {**(user.get("sweep") or {}), **in_program_sweep.parse_sweep_args(args.sweep)}
            except in_program_sweep.SweepError as err:
                raise UserError(str(err)) from None
        run = api.train(None, None, steps=None, config=user, out=args.out or None, progress=not args.quiet)
    _print_summary(run.summary, run.dir)
    return 0


def _print_summary(summary: dict, run_dir: Path) -> None:
    def fmt(final, name):
        s = final.get(name)
        return "n/a" if not s or s["mean"] is None else f"{s['mean']:.3f} +- {s['std']:.3f}"

    def line(final):
        return f"final return {fmt(final, 'episode_return')}, cost {fmt(final, 'episode_cost')}" + (
            f", P(C>=rho) {fmt(final, 'violation_probability')}" if "violation_probability" in final else ""
        )

    print(f"run: {run_dir}")
    points = summary.get("grid")
    print(
        f"  {summary['algo']} on {summary['env']}, {summary['seeds']} seed{'s' * (summary['seeds'] != 1)}"
        + (f" x {len(points)} grid points" if points else "")
        + f" x {summary['env_steps']:,} steps, "
        f"{summary['steps_per_second']:,.0f} env-steps/s (compile {summary['compile_seconds']:.1f}s)"
    )
    if not points:
        print(f"  {line(summary['final'])}")
    for point in points or []:
        print(f"  {point['label']}: {line(point['final'])}")


def _cmd_list(args) -> int:
    from saferl import reproduce
    from saferl.algos import base as algos
    from saferl.envs import base as envs
    from saferl.foundation import hparams

    if args.algo:
        try:
            cls = algos.get(args.algo)
        except ValueError as err:
            raise UserError(str(err)) from None
        print(f"{cls.name}: {cls.description}")
        print("hyper-parameters (--set hparams.NAME=VALUE):")
        for line in hparams.describe(cls.defaults):
            print(f"  {line}")
        return 0
    print("algorithms (saferl list --algo NAME: its hyper-parameters):")
    for name, desc in algos.registered().items():
        print(f"  {name:<12} {desc}")
    print("environments:")
    for name, desc in envs.registered().items():
        print(f"  {name:<12} {desc}")
    print("reproduce targets (saferl reproduce TARGET --scale SCALE; expected wall time on 2 CPU cores):")
    for name, tgt in reproduce.targets().items():
        print(f"  {name:<22} {tgt.description}" + (f" [--{', --'.join(tgt.options)}]" if tgt.options else ""))
        for scale in tgt.scales.values():
            print(f"  {'':<22}   {scale.name:<6} {scale.describe()}")
    return 0


def _cmd_evaluate(args) -> int:
    from saferl import api

    if args.episodes < 1:
        raise UserError(f"--episodes must be >= 1, got {args.episodes}")
    run = api.load(args.run_dir)
    if args.render:
        if "DISPLAY" not in os.environ:  # MuJoCo picks its GL backend on import: headless EGL unless told otherwise
            os.environ.setdefault("MUJOCO_GL", "egl")
        from saferl.analysis import render

        render.check_output(args.render)  # before any work
    result = run.evaluate(args.episodes, deterministic=args.deterministic)
    breach = lambda r: f"  P(C>=rho) {r['violation_probability']:.3f}" if "violation_probability" in r else ""  # noqa: E731
    for seed, r in zip(result["seeds"], result["per_seed"]):
        print(f"seed {seed}: return {r['episode_return']:.3f}  cost {r['episode_cost']:.3f}{breach(r)}")
    print(f"mean over seeds: return {result['episode_return']:.3f}  cost {result['episode_cost']:.3f}{breach(result)}")
    if args.render:
        print(
            f"wrote {run.render(args.render, deterministic=args.deterministic)} "
            f"(one episode of seed {result['seeds'][0]})"
        )
    return 0


def _cmd_plot(args) -> int:
    from saferl.analysis import plotting

    out = plotting.plot_runs([Path(p) for p in args.run_dirs], Path(args.out) if args.out else None)
    print(f"wrote {out}")
    return 0


def _cmd_bench(args) -> int:
    from saferl.analysis import bench
    from saferl.training.config import parse_set

    overrides = parse_set(args.set)
    if args.chunks is not None and args.chunks < 1:
        raise UserError(f"--chunks must be >= 1, got {args.chunks}")
    try:
        bench.parse_grid(args.grid or bench.DEFAULT_TRAIN_GRID)
        bench.parse_grid(args.env_grid or bench.DEFAULT_ENV_GRID)
        bench.parse_envs(args.env)
    except ValueError as err:
        raise UserError(str(err)) from None
    bench.main(
        env=args.env,
        algo=args.algo,
        quick=args.quick,
        out=Path(args.out) if args.out else None,
        grid=args.grid,
        env_grid=args.env_grid,
        overrides=overrides,
        chunks=args.chunks,
    )
    return 0


def _cmd_reproduce(args) -> int:
    from saferl import reproduce

    out = Path(args.out) if args.out else Path("runs") / "reproduce" / f"{args.target}-{args.scale}"
    if args.only:
        return _train_part_of_plan(args, out)
    if args.ray or args.address:
        _train_plan_on_ray(args, out)
    result = reproduce.run(args.target, args.scale, out, tasks=_chosen_tasks(args), tune=args.tune)
    from saferl.analysis import tables

    print(tables.render_result(result))
    print(f"results: {out / 'results.json'} ({result['wall_seconds']:.0f}s)")
    return 0


def _planned_jobs(args, out: Path, why: str) -> list:
    from saferl import reproduce

    target = reproduce.get(args.target)
    if target.plan is None:
        with_plan = sorted(name for name, t in reproduce.targets().items() if t.plan is not None)
        raise UserError(
            f"target {args.target} does not declare its runs, so it cannot {why}; "
            f"targets that do: {', '.join(with_plan)}"
        )
    return target.plan(target.scale(args.scale, _chosen_tasks(args)), out)


def _chosen_tasks(args) -> list[str] | None:
    """``--tasks A,B`` as a list (None without it)."""
    if args.tasks is None:
        return None
    return [t.strip() for t in args.tasks.split(",") if t.strip()]


def _train_part_of_plan(args, out: Path) -> int:
    """``reproduce TARGET --only PATTERN[,PATTERN]``: train (or resume, or skip when finished) only the planned runs
    whose directory under ``out`` matches a pattern, locally or with ``--ray``; no table (it needs every run).
    Running the target afterwards into the same ``out`` reuses them."""
    import fnmatch

    from saferl.experiments import job_grid as sweep

    patterns = [p.strip() for p in args.only.split(",") if p.strip()]
    jobs = _planned_jobs(args, out, "train a part of them")
    relative = [str(Path(run_dir).relative_to(out)) for run_dir, _ in jobs]
    chosen = [job for job, rel in zip(jobs, relative) if any(fnmatch.fnmatchcase(rel, p) for p in patterns)]
    if not chosen:
        raise UserError(
            f"--only {args.only!r} matches none of the {len(jobs)} planned runs of {args.target} "
            f"(e.g. {', '.join(relative[:3])})"
        )
    statuses = sweep.run_jobs(
        chosen,
        address=args.address,
        use_ray=bool(args.ray or args.address),
        show_progress=not (args.ray or args.address),
    )
    for status in statuses:
        print(f"{status.get('status'):>8}  {status.get('run_dir')}")
    failed = [s for s in statuses if s.get("status") == "failed"]
    print(
        f"{len(chosen) - len(failed)} of {len(chosen)} runs trained or reused; no table: run the target without "
        f"--only into {out} for it"
    )
    return 1 if failed else 0


def _train_plan_on_ray(args, out: Path) -> None:
    """``reproduce TARGET --ray``: train every run of the target's plan as a Ray job first (finished ones skipped);
    the target then runs locally and reuses them."""
    from saferl.experiments import job_grid as sweep

    jobs = _planned_jobs(args, out, "train them on Ray")
    statuses = sweep.run_jobs(jobs, address=args.address, use_ray=True, show_progress=False)
    failed = [s for s in statuses if s.get("status") == "failed"]
    if failed:
        raise UserError(
            f"{len(failed)} of {len(jobs)} runs failed on Ray (first: {failed[0].get('run_dir')}: "
            f"{failed[0].get('error')}); rerun the command to retry them"
        )


def _cmd_show(args) -> int:
    from saferl.analysis import tables

    try:
        result = tables.load_result(args.path)
    except ValueError as err:
        raise UserError(str(err)) from None
    print(tables.render_result(result))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="saferl", description="Safe reinforcement learning in JAX.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train an algorithm on an environment (all seeds in one program)")
    p.add_argument("--algo")
    p.add_argument("--env")
    p.add_argument("--steps", type=int, help="environment steps per seed")
    p.add_argument("--seeds", type=int, help="number of seeds trained in parallel")
    p.add_argument("--seed", type=int, help="first seed")
    p.add_argument("--num-envs", type=int, help="parallel environments per seed")
    p.add_argument("--out", help="run directory (default runs/ALGO-ENV-TIME)")
    p.add_argument("--config", help="YAML config file")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config entry, e.g. constraint.limit=25 or hparams.actor_lr=1e-3",
    )
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="train a grid inside the same program (an extra vmapped axis beside the seeds), e.g. "
        "constraint.limit=10,25,50 or hparams.actor_lr=1e-4,3e-4; repeat for a product grid",
    )
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run")
    p.add_argument(
        "--logger",
        action="append",
        metavar="NAMES",
        help="where the training curves go besides progress.csv (always written): csv (default), "
        "tensorboard, wandb, or several in one flag separated by commas, e.g. --logger "
        "csv,tensorboard; with --resume, this sitting's loggers",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("list", help="list algorithms, environments and reproduce targets")
    p.add_argument("--algo", help="list this algorithm's hyper-parameters: default, allowed values, meaning")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("eval", help="evaluate a trained run's final policy")
    p.add_argument("run_dir")
    p.add_argument("--episodes", type=int, default=10)
    p.add_argument("--deterministic", action="store_true", help="act with the policy's mode")
    p.add_argument("--render", metavar="PATH", help="also draw one episode of the first seed as a .gif or .mp4")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("plot", help="return, cost and violation-probability curves (PNG)")
    p.add_argument("run_dirs", nargs="+")
    p.add_argument("--out", help="PNG path (default: curves.png in the first run directory)")
    p.set_defaults(func=_cmd_plot)

    bench_grid, bench_env_grid = "16x1,16x8,64x1", "1x1,64x1,1024x1,256x8"
    p = sub.add_parser("bench", help="env-only and full-training env-steps/s and peak memory")
    p.add_argument(
        "--env",
        default="PointGoal1",
        help="environment, several separated by commas, or ctrpo-benchmark (the C-TRPO paper's eight tasks)",
    )
    p.add_argument("--algo", default="ppo_lag", help="algorithm, or several separated by commas")
    p.add_argument("--quick", action="store_true", help="fewer configurations (a minute)")
    p.add_argument("--out", help="write the measurements as JSON here")
    p.add_argument("--grid", help=f"training configurations ENVSxSEEDS,... (default {bench_grid})")
    p.add_argument("--env-grid", help=f"environment-only configurations (default {bench_env_grid})")
    p.add_argument("--chunks", type=int, help="timed iterations per configuration (default 2, 1 with --quick)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override for every training configuration, e.g. network.critic_hidden=[256,256,256]",
    )
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("show", help="print the table of a results.json (a file or the directory holding it)")
    p.add_argument("path")
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser("reproduce", help="run a paper experiment and write results.json and figures")
    p.add_argument("target")
    p.add_argument(
        "--scale",
        default="smoke",
        help="smoke, demo, cpu or full (each target's steps, seeds and expected time: saferl list)",
    )
    p.add_argument("--out")
    p.add_argument(
        "--tune",
        action="store_true",
        help="targets that support it (svae-table1): re-select hyper-parameters by the paper's procedure first",
    )
    p.add_argument(
        "--ray",
        action="store_true",
        help="train the target's runs as Ray jobs first (a local Ray instance, or --address), then tabulate",
    )
    p.add_argument("--address", help="with --ray: join the Ray cluster at this address")
    p.add_argument(
        "--tasks",
        metavar="TASK[,TASK]",
        help="train and tabulate only these of the target's tasks (targets whose scale lists tasks, e.g. "
        "ctrpo-table1: 'RacecarCircle1,CarButton1'); results.json records them under only_tasks",
    )
    p.add_argument(
        "--only",
        metavar="PATTERN[,PATTERN]",
        help="train only the planned runs whose directory under --out matches a shell pattern, e.g. "
        "'SafetyHopperVelocity/runs/C-TRPO*'; no table (the target without --only then reuses them)",
    )
    p.set_defaults(func=_cmd_reproduce)

    from saferl.experiments import (
        job_grid as sweep,  # saferl sweep GRID.yaml: one job per (algo, env, overrides), locally or on Ray
    )

    sweep.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from saferl.foundation.errors import MissingExtraError
    from saferl.training.config import ConfigError
    from saferl.training.run_directory import RunError

    try:
        _setup_jax(args)
        return args.func(args)
    except (UserError, ConfigError, RunError, MissingExtraError) as err:
        print(f"saferl: error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:  # validation errors from constructors (env params, constraints)
        print(f"saferl: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("saferl: interrupted; checkpoint and summary written (continue with --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

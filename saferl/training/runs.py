"""The run driver: train a config into a run directory (:mod:`saferl.training.run_directory`), resume it from its
checkpoint, record progress, and leave a consistent directory behind on Ctrl-C.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import jax
import numpy as np

from saferl.training import loggers as loggerlib
from saferl.training import run_directory
from saferl.training.trainer import Trainer


class Recorder:
    """What every driver shares: progress rows and progress.csv, the progress display, timings,
    the summary, and what Ctrl-C leaves behind.

    ``rows`` are the rows of earlier sittings (a resumed run); ``done_steps`` / ``total_steps`` are
    per-seed environment steps, shown by the progress display.  ``loggers`` (names, default the
    config's ``logger``) get every row progress.csv gets (:mod:`saferl.training.loggers`); a missing extra is
    raised here, before anything is written.
    """

    def __init__(
        self,
        run_dir: Path,
        cfg: dict,
        rows: list[dict],
        show_progress: bool,
        total_steps: int,
        done_steps: int = 0,
        label: str = "",
        resumed: bool = False,
        loggers=None,
    ):
        self.run_dir, self.cfg, self.rows = Path(run_dir), cfg, list(rows)
        self.loggers = loggerlib.Loggers(self.run_dir, cfg, run_directory.seed_ids(cfg), self.rows, loggers)
        self.progress = Progress(
            total_steps, done_steps, label or f"{cfg['algo']} {cfg['env']} x{cfg['seeds']} seeds", enabled=show_progress
        )
        self.start = time.time()
        self.steps_done = 0  # environment steps of this sitting, all seeds
        self.busy_seconds = 0.0  # seconds spent training (compiles excluded), set by the driver
        self.compile_seconds = 0.0
        self.resumed = bool(resumed)

    def add(self, rows: list[dict]) -> None:
        self.rows += rows
        run_directory.write_progress(self.run_dir, self.rows)
        self.loggers.add(rows)

    def finish(self, interrupted: bool) -> dict:
        self.progress.close()
        self.loggers.close(interrupted)
        timings = {
            "resumed": self.resumed,
            "wall_seconds": time.time() - self.start + self.compile_seconds,
            "compile_seconds": self.compile_seconds,
            "steps_per_second": self.steps_done / max(self.busy_seconds, 1e-9),
        }
        return run_directory.write_summary(self.run_dir, self.cfg, self.rows, timings, interrupted)


class Progress:
    """A progress bar on a terminal; on anything else (a CI log, a file) one line per update."""

    def __init__(self, total: int, initial: int, label: str, enabled: bool = True):
        import sys

        self.total, self.done, self.label = int(total), int(initial), label
        self.enabled, self.bar, self.start, self.start_done = enabled, None, time.time(), int(initial)
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="step", unit_scale=True, desc=label, dynamic_ncols=True)

    def update(self, done: int, sps: float, ret: float, cost: float) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(done - self.done)
            self.bar.set_postfix(sps=f"{sps:,.0f}", ret=f"{ret:.2f}", cost=f"{cost:.2f}")
        else:
            import sys

            print(
                f"{self.label}: {done:,}/{self.total:,} steps ({100.0 * done / max(self.total, 1):.0f}%), "
                f"{sps:,.0f} env-steps/s, return {ret:.2f}, cost {cost:.2f}",
                file=sys.stderr,
                flush=True,
            )
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def train(
    cfg: dict,
    run_dir: Path,
    resume: bool = False,
    show_progress: bool = True,
    on_chunk=None,
    loggers=None,
    on_resume: Callable[[Path], None] | None = None,
) -> dict:
    """Train (or resume) a run in ``run_dir``; returns the summary dict.

    ``on_chunk(chunk_index, runners)`` is called after every chunk (tests use it to
    simulate an interruption).  ``loggers``: names (or ``"csv,tensorboard"``) for this sitting instead
    of the config's ``logger``.  ``on_resume(run_dir)`` is called once a resumed run's checkpoint is read (the
    command line and the API print :func:`saferl.analysis.diagnostics.print_resume_warnings` there).
    """
    run_dir = Path(run_dir)
    names = loggerlib.parse(cfg.get("logger") if loggers is None else loggers)
    loggerlib.check_extras(names)  # before any work
    if cfg.get("sweep") and len(names) > 1:
        raise run_directory.RunError(
            f"--logger {','.join(names)}: a swept run logs to progress.csv only (every grid point, "
            f"`saferl plot` draws one curve per point); use --logger csv"
        )
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    start_chunk, rows = 0, []
    if resume:
        runners, start_chunk = run_directory.load_checkpoint(run_dir, runners)
        done_iterations = start_chunk * trainer.iterations_per_chunk
        rows = [r for r in run_directory.read_progress(run_dir) if r["iteration"] <= done_iterations]
        if on_resume is not None:
            on_resume(run_dir)
    t0 = time.time()
    compiled = trainer.compile_chunk(runners)
    compile_seconds = time.time() - t0
    if not resume:
        run_directory.write_config(run_dir, cfg)
    steps_per_chunk = trainer.iterations_per_chunk * trainer.steps_per_iteration
    recorder = Recorder(
        run_dir,
        cfg,
        rows,
        show_progress,
        trainer.num_chunks * steps_per_chunk,
        start_chunk * steps_per_chunk,
        resumed=resume,
        loggers=loggers,
    )
    recorder.compile_seconds = compile_seconds
    seeds = run_directory.runner_columns(cfg)
    interrupted = False
    chunk = start_chunk
    try:
        while chunk < trainer.num_chunks:
            runners, metrics = compiled(runners)
            metrics = jax.device_get(metrics)
            recorder.add(
                run_directory.progress_rows(
                    metrics, chunk * trainer.iterations_per_chunk, trainer.steps_per_iteration, seeds
                )
            )
            chunk += 1
            recorder.steps_done += steps_per_chunk * cfg["seeds"]
            recorder.busy_seconds = time.time() - recorder.start
            if chunk % cfg["checkpoint_every"] == 0 or chunk == trainer.num_chunks:
                run_directory.save_checkpoint(run_dir, runners, chunk)
            recorder.progress.update(
                chunk * steps_per_chunk,
                recorder.steps_done / max(recorder.busy_seconds, 1e-9),
                float(np.nanmean(metrics["episode_return"][:, -1])),
                float(np.nanmean(metrics["episode_cost"][:, -1])),
            )
            if on_chunk is not None:
                on_chunk(chunk, runners)
    except KeyboardInterrupt:
        interrupted = True
        run_directory.save_checkpoint(run_dir, runners, chunk)
    finally:
        recorder.progress.close()
    summary = recorder.finish(interrupted)
    if interrupted:
        raise KeyboardInterrupt
    return summary

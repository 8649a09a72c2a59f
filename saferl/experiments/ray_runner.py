"""Where a job of :func:`saferl.experiments.job_grid.run_jobs` runs: :func:`train_job` (in this process with
``--local``, or in a Ray worker), and the Ray side: one Ray task per job, our own retries, the workers' JAX set-up.

Ray's task API (``ray.remote``), one task per job: the task trains (or resumes) one run directory with
:func:`train_job`, its seeds vmapped in one program, and returns ``(status, summary)``.  A
task asks for one CPU, and one GPU when the cluster has GPUs (one job per GPU: Ray sets the task's
``CUDA_VISIBLE_DEVICES``).  Ray's own retries are off (``max_retries=0``): a failed task -- an exception
in training, a worker or node that died -- is resubmitted by :func:`run` up to ``retries`` times and
resumes from the run's last checkpoint, so a retry never repeats finished chunks.

The workers get ``JAX_PLATFORMS=cpu`` when the cluster has no GPU (the command line's default, and on a
machine with an accelerator JAX would otherwise try it) and JAX's default platform when it has; the
driver's ``SAFERL_COMPILATION_CACHE`` and ``JAX_COMPILATION_CACHE_DIR``, when set, are passed on
(:mod:`saferl.foundation.jaxsetup` decides the persistent cache as on the command line).  A local Ray instance
(no ``--address``) starts without the dashboard, with usage statistics off unless
``RAY_USAGE_STATS_ENABLED`` says otherwise, and with a 100 MB object store: tasks exchange a config and
a summary, never arrays (Ray's minimum is 75 MB).

Killing the driver ends its Ray job, and Ray stops the job's workers; every run file is written
atomically (:mod:`saferl.foundation.atomic_files`), so the run directories of a killed sweep are each finished,
resumable from a checkpoint, or not started, and running the sweep again continues it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from saferl.analysis import diagnostics
from saferl.foundation import jaxsetup
from saferl.foundation.errors import require
from saferl.training import reuse, run_directory

#: object store of a local Ray instance, bytes (tasks pass configs and summaries only; Ray's minimum is 75 MB)
LOCAL_OBJECT_STORE_BYTES = 100_000_000
#: seconds a Ctrl-C waits for the cancelled tasks to write their checkpoints (ours: a checkpoint of the
#: largest runs takes seconds to write)
CANCEL_WAIT_SECONDS = 30.0


def setup_jax() -> None:
    """What the command line does before the first compile (:func:`saferl.foundation.jaxsetup.setup_process`)."""
    jaxsetup.setup_process()


def worker_env(gpus: bool) -> dict[str, str]:
    """The environment variables of a job's task (Ray ``runtime_env``)."""
    env = {"JAX_PLATFORMS": "" if gpus else "cpu"}
    if gpus:
        env["SAFERL_GPU"] = "1"
    for name in ("SAFERL_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def train_job(run_dir: str | Path, cfg: dict, show_progress: bool = False) -> tuple[str, dict]:
    """One job where it runs (this process or a Ray worker): ``(status, summary)``, status ``skipped`` (finished
    already), ``resumed`` (continued from its checkpoint) or ``trained``, as
    :func:`saferl.training.reuse.train_or_resume` (which does it) decides."""
    run_dir = Path(run_dir)
    if reuse.finished_summary(run_dir, cfg) is not None:  # e.g. a retry of a job whose worker died after finishing it
        status = "skipped"
    elif (run_dir / "config.yaml").is_file() and (run_dir / run_directory.CHECKPOINT).is_file():
        status = "resumed"
    else:
        status = "trained"
    return status, reuse.train_or_resume(cfg, run_dir, show_progress, on_resume=diagnostics.print_resume_warnings)


def error_text(err: BaseException) -> str:
    """An exception as one line: ``Type: message`` (the message's first line)."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def train_task(run_dir: str, cfg: dict, show_progress: bool) -> tuple[str, dict]:
    """A job in a Ray worker (module-level, so Ray pickles it by reference)."""
    setup_jax()
    return train_job(run_dir, cfg, show_progress)


def task_error(err: BaseException) -> str:
    """A failed task's error as one line: the exception raised in the job (``RayTaskError.cause``) or Ray's."""
    cause = getattr(err, "cause", None)
    return error_text(cause if isinstance(cause, BaseException) else err)


def run(
    jobs: list[tuple[Path, dict]], todo: list[int], finish, *, address: str | None, retries: int, show_progress: bool
) -> None:
    """Run ``jobs[i]`` for ``i`` in ``todo`` as Ray tasks; ``finish(i, (status, summary) or None, error, attempts,
    recorded=False)`` after each.  Uses the Ray the caller initialized, else connects to ``address`` or starts a
    local Ray instance (and shuts down what it started)."""
    ray = require("ray", "ray", "saferl sweep (without --local)")
    started = not ray.is_initialized()
    if started:
        options = {"address": address, "logging_level": logging.WARNING}
        if address is None:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            options.update(include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES)
        ray.init(**options)
    try:
        gpus = ray.cluster_resources().get("GPU", 0) > 0
        task = ray.remote(train_task).options(
            num_cpus=1, num_gpus=1 if gpus else 0, max_retries=0, runtime_env={"env_vars": worker_env(gpus)}
        )

        def submit(i: int):
            run_dir, cfg = jobs[i]
            return task.remote(str(run_dir), cfg, show_progress)

        pending = {submit(i): (i, 1, None) for i in todo}  # ref -> (job, attempt, last error)
        try:
            while pending:
                [ref], _ = ray.wait(list(pending), num_returns=1)
                i, attempt, last_error = pending.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as err:  # the job raised, or its worker or node died
                    error = task_error(err)
                    if attempt <= retries:
                        pending[submit(i)] = (i, attempt + 1, error)
                    else:
                        finish(i, None, error, attempt, recorded=False)
                    continue
                finish(i, tuple(outcome), last_error, attempt, recorded=False)
        except KeyboardInterrupt:
            # a cancelled task gets KeyboardInterrupt: runs.train writes its checkpoint and an interrupted summary
            for ref in pending:
                ray.cancel(ref)
            ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_WAIT_SECONDS)
            raise
    finally:
        if started:
            ray.shutdown()

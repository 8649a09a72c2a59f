"""Training loggers beside ``progress.csv``: TensorBoard and Weights & Biases.

``logger`` in the config (``logger: [csv, tensorboard]``), or ``saferl train --logger csv,tensorboard``
(one flag, names separated by commas), chooses them:

* ``csv`` (the default): the run directory's own files, ``progress.csv`` and ``summary.json``.  They are
  always written, whatever else is chosen: resuming, the summary, ``saferl plot`` and the reproduce
  targets read them.
* ``tensorboard`` (extra ``tensorboard``: tensorboardX, which writes event files with numpy and protobuf
  alone, no torch or tensorflow): ``RUN_DIR/tensorboard/seed_<S>/`` per seed and ``RUN_DIR/tensorboard/mean/``,
  one TensorBoard run each with the same tags (the progress.csv columns), so ``tensorboard --logdir RUN_DIR``
  overlays them.
* ``wandb`` (extra ``wandb``): one W&B run per run directory (project ``$WANDB_PROJECT``, default ``saferl``;
  files under ``RUN_DIR/wandb/``) with the keys ``seed_<S>/<column>`` and ``mean/<column>`` against
  ``env_steps``.  It runs offline when ``WANDB_MODE=offline`` (or ``dryrun``) or no API key is found
  (``WANDB_API_KEY``, or a netrc entry for the W&B host): it never prompts; ``wandb sync`` uploads the
  offline run later.  ``WANDB_MODE=disabled`` turns it off.

Every logger gets the scalars of progress.csv at the moments its rows are written (once per chunk of
iterations): every column but ``iteration``, ``env_steps`` and ``seed``, per seed and as the mean over
the seeds that have a (non-NaN) value, at step ``env_steps`` (environment steps per seed).  The mean of
an iteration is written once every seed has its row (at once for the compiled trainer; for the
Gymnasium bridge, which trains the seeds one after another, when the last seed gets there).

Resuming appends.  Rows of an earlier sitting that its last checkpoint did not cover (a crash, or
``checkpoint_every`` > 1; Ctrl-C checkpoints first) are dropped from progress.csv and trained again.  In
TensorBoard the new sitting's writers carry ``purge_step`` (a ``SessionLog.START`` event at the first step
after the kept rows), so TensorBoard drops the stale events from that step on and shows each step once.
The W&B logger remembers in ``RUN_DIR/wandb/saferl.json`` its run id, the last iteration it sent per
seed and for the mean, and whether its sitting closed; it resumes that run (an offline sitting gets its
own ``offline-run-*`` directory with the same id) and sends every row after the kept ones, and after a
sitting that crashed (W&B loses what it had buffered then) the kept rows too.  W&B keeps what it was
sent, so stale rows it did store appear twice there (with the same values for the compiled trainer,
which resumes exactly).  A logger that a run did not have before (``--resume DIR --logger
tensorboard``) first writes the kept rows of the earlier sittings.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Iterable, NamedTuple

from saferl.foundation.atomic_files import write_json_atomic
from saferl.foundation.errors import require

#: logger name -> (module it needs, the extra that installs it); csv needs nothing
KNOWN = {"csv": None, "tensorboard": ("tensorboardX", "tensorboard"), "wandb": ("wandb", "wandb")}
DEFAULT = ["csv"]
FIXED = ("iteration", "env_steps", "seed")
MEAN = "mean"
WANDB_STATE = Path("wandb") / "saferl.json"


def parse(value) -> list[str]:
    """``"csv,tensorboard"`` or ``["tensorboard"]`` -> ``["csv", "tensorboard"]``: known names, csv first
    (it is always written), each once.  Raises ``ValueError`` (one line) for an unknown or empty name."""
    if value is None:
        return list(DEFAULT)
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = [part for v in value for part in v.split(",")]
    else:
        raise ValueError(f"logger must be a name or a list of names ({', '.join(KNOWN)}), got {value!r}")
    names = [item.strip().lower() for item in items]
    for name in names:
        if name not in KNOWN:
            raise ValueError(
                f"unknown logger {name!r} (logger / --logger); known loggers: {', '.join(KNOWN)}"
                if name
                else f"empty logger name in {value!r}; known loggers: {', '.join(KNOWN)}"
            )
    return ["csv"] + [name for i, name in enumerate(names) if name != "csv" and name not in names[:i]]


def check_extras(names: Iterable[str]) -> None:
    """Import what each logger needs, or raise :class:`saferl.foundation.errors.MissingExtraError` naming its extra
    (called before a run writes anything)."""
    for name in names:
        if KNOWN.get(name):
            module, extra = KNOWN[name]
            require(module, extra, f"the {name} logger")


class Record(NamedTuple):
    """What one iteration adds: ``values[key][column]`` for ``key`` = ``seed_<S>`` or ``mean``."""

    iteration: int
    env_steps: int
    values: dict


def seed_key(seed: int) -> str:
    return f"seed_{int(seed)}"


class _Table:
    """Every row so far by iteration and seed; turns new rows into :class:`Record` s (a mean once complete)."""

    def __init__(self, seeds: list[int]):
        self.seeds = [int(s) for s in seeds]
        self.by_iteration: dict[int, dict[int, dict]] = {}

    def add(self, rows: list[dict]) -> list[Record]:
        touched: dict[int, list[int]] = {}
        for row in rows:
            iteration, seed = int(row["iteration"]), int(row["seed"])
            self.by_iteration.setdefault(iteration, {})[seed] = row
            touched.setdefault(iteration, []).append(seed)
        records = []
        for iteration in sorted(touched):
            present = self.by_iteration[iteration]
            values = {seed_key(s): _columns(present[s]) for s in dict.fromkeys(touched[iteration])}
            if all(s in present for s in self.seeds):
                values[MEAN] = _mean([_columns(present[s]) for s in self.seeds])
            env_steps = int(present[touched[iteration][0]]["env_steps"])
            records.append(Record(iteration, env_steps, values))
        return records

    def last_complete(self) -> dict[str, tuple[int, int] | None]:
        """Per key (``seed_<S>``, ``mean``): the ``(iteration, env_steps)`` of its last row, or None."""
        out: dict[str, tuple[int, int] | None] = {seed_key(s): None for s in self.seeds}
        out[MEAN] = None
        for iteration in sorted(self.by_iteration):
            present = self.by_iteration[iteration]
            for s, row in present.items():
                out[seed_key(s)] = (iteration, int(row["env_steps"]))
            if all(s in present for s in self.seeds):
                out[MEAN] = (iteration, int(present[self.seeds[0]]["env_steps"]))
        return out


def _columns(row: dict) -> dict:
    return {k: float(v) for k, v in row.items() if k not in FIXED}


def _mean(per_seed: list[dict]) -> dict:
    names = list(dict.fromkeys(k for values in per_seed for k in values))
    out = {}
    for name in names:
        finite = [values[name] for values in per_seed if name in values and not math.isnan(values[name])]
        out[name] = sum(finite) / len(finite) if finite else math.nan
    return out


class Loggers:
    """The loggers of one sitting of a run (what :class:`saferl.training.runs.Recorder` calls).

    ``rows`` are the rows kept from earlier sittings.  Constructing checks the extras and writes
    nothing; the loggers open on the first :meth:`add`, once the run directory exists.
    """

    def __init__(self, run_dir: Path, cfg: dict, seeds: list[int], rows: list[dict], names=None):
        self.names = parse(cfg.get("logger") if names is None else names)
        check_extras(self.names)
        self.run_dir, self.cfg = Path(run_dir), cfg
        self.backends: list | None = None
        if len(self.names) == 1:  # csv alone: progress.csv is the Recorder's
            return
        self.table = _Table(seeds)
        self.earlier = self.table.add(list(rows))  # the earlier sittings' records (a new logger writes them)
        self.kept = self.table.last_complete()

    def add(self, rows: list[dict]) -> None:
        if len(self.names) == 1:
            return
        if self.backends is None:
            self.backends = [_BACKENDS[name](self.run_dir, self.cfg, self.kept) for name in self.names[1:]]
            for backend in self.backends:
                backend.backfill(self.earlier)
        records = self.table.add(rows)
        for backend in self.backends:
            backend.write(records)

    def close(self, interrupted: bool = False) -> None:
        for backend in self.backends or []:
            backend.close(interrupted)
        self.backends = None


class _EventFile:
    """One TensorBoard run's event file, written synchronously: :meth:`flush` returns once every event
    is in the file.  (tensorboardX's ``SummaryWriter`` queues events for a writer thread and its flush
    does not wait for that queue, so a crash right after a chunk lost the chunk's events.)"""

    def __init__(self, directory: Path, purge_step: int | None, suffix: str):
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event, SessionLog
        from tensorboardX.summary import scalar

        directory.mkdir(parents=True, exist_ok=True)
        self._event, self._scalar = Event, scalar
        self.file = EventsWriter(str(directory / "events"), suffix)  # writes the file_version event
        if purge_step is not None:  # TensorBoard drops the earlier events from this step on
            self.file.write_event(
                Event(wall_time=time.time(), step=purge_step, session_log=SessionLog(status=SessionLog.START))
            )

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.file.write_event(self._event(wall_time=time.time(), step=int(step), summary=self._scalar(tag, value)))

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


class _TensorBoard:
    def __init__(self, run_dir: Path, cfg: dict, kept: dict):
        root = run_dir / "tensorboard"
        self.fresh = not root.is_dir()
        self.writers = {}
        for key, last in kept.items():
            # a resumed run: from the first step after the kept rows on, what an earlier sitting wrote is stale
            purge = None if self.fresh else (0 if last is None else last[1] + 1)
            # the suffix keeps two sittings' files apart (and in order) within one second
            self.writers[key] = _EventFile(root / key, purge, f".{time.time_ns():020d}")

    def backfill(self, records: list[Record]) -> None:
        if self.fresh:
            self.write(records)

    def write(self, records: list[Record]) -> None:
        for record in records:
            for key, values in record.values.items():
                for name, value in values.items():
                    self.writers[key].add_scalar(name, value, record.env_steps)
        for writer in self.writers.values():
            writer.flush()

    def close(self, interrupted: bool) -> None:
        for writer in self.writers.values():
            writer.close()


def wandb_mode(environ=None) -> str:
    """``offline``, ``online`` or ``disabled``: ``WANDB_MODE`` where it says offline/dryrun or disabled,
    else online only with an API key at hand (so W&B never prompts for one)."""
    environ = os.environ if environ is None else environ
    mode = environ.get("WANDB_MODE", "").strip().lower()
    if mode in ("offline", "dryrun"):
        return "offline"
    if mode == "disabled":
        return "disabled"
    return "online" if _wandb_key_present(environ) else "offline"


def _wandb_key_present(environ) -> bool:
    if environ.get("WANDB_API_KEY", "").strip() or environ.get("WANDB_IDENTITY_TOKEN_FILE", "").strip():
        return True
    import netrc
    from urllib.parse import urlparse

    host = urlparse(environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    path = environ.get("NETRC") or str(Path.home() / ".netrc")
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return False
    return bool(entry and entry[2])


class _WandB:
    def __init__(self, run_dir: Path, cfg: dict, kept: dict):
        import wandb

        self.mode = wandb_mode()
        self.state_path = run_dir / WANDB_STATE
        self.run = None
        if self.mode == "disabled":
            return
        state = {}
        if self.state_path.is_file():
            try:
                state = json.loads(self.state_path.read_text())
            except ValueError:
                state = {}
        # what this W&B run holds of the kept rows.  Rows past them (an earlier sitting's, after its last
        # checkpoint) are sent again.  After a sitting that did not close (a crash), every kept row is: W&B
        # buffers what it is sent and a crashed process loses what was not yet written (all of it, offline,
        # for a short sitting); a duplicate is better than a gap.
        logged = state.get("logged", {}) if state.get("closed") else {}
        self.logged = {k: min(int(v), kept[k][0] if kept.get(k) else 0) for k, v in logged.items()}
        self.closed = False
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT") or "saferl",
            name=run_dir.name,
            dir=str(run_dir),
            config=cfg,
            id=state.get("id"),
            resume="allow",
            mode=self.mode,
            settings=wandb.Settings(console="off", silent=True),
        )
        self.run.define_metric("env_steps")
        self.run.define_metric("*", step_metric="env_steps")
        self._save()
        if self.mode == "offline":
            where = Path(self.run.dir).parent
            print(f"wandb: logging offline to {where} (upload it with: wandb sync {where})", file=sys.stderr)
        else:
            print(f"wandb: logging to {self.run.url}", file=sys.stderr)

    def _save(self) -> None:
        write_json_atomic(self.state_path, {"id": self.run.id, "logged": self.logged, "closed": self.closed})

    def backfill(self, records: list[Record]) -> None:
        self.write(records)  # only what this run has not sent yet

    def write(self, records: list[Record]) -> None:
        if self.run is None:
            return
        sent = False
        for record in records:
            data = {}
            for key, values in record.values.items():
                if record.iteration <= self.logged.get(key, 0):
                    continue
                data.update({f"{key}/{name}": value for name, value in values.items()})
                self.logged[key] = record.iteration
            if data:
                self.run.log({"iteration": record.iteration, "env_steps": record.env_steps, **data})
                sent = True
        if sent:
            self._save()

    def close(self, interrupted: bool) -> None:
        if self.run is not None:
            self.run.finish(exit_code=1 if interrupted else 0)
            self.closed = True
            self._save()
            self.run = None


_BACKENDS = {"tensorboard": _TensorBoard, "wandb": _WandB}

"""The reproduce framework: targets declared as data, run, checked and recorded.

A target is a function ``fn(scale: Scale, out: Path, **options) -> dict`` declared with
:func:`target`::

    def checks(rows):  # named booleans / values from the rows
        by = {row["method"]: row for row in rows}
        return {"ppo_lag_regret_below_ppo": by["PPO-Lag"]["cost_regret"] < by["PPO"]["cost_regret"]}

    @target("foundation-pointgoal", "PPO vs PPO-Lag on PointGoal1, cost limit 25",
            scales=deep_rl.scales(runs=2), checks=checks)
    def run(scale: Scale, out: Path) -> dict:   # scale.steps, scale.seeds, scale["..."], scale.name
        ...
        return {"rows": rows, "figures": ["curves.png"], "settings": base}

* ``scales`` maps scale names (a subset of :data:`SCALE_NAMES`, ``smoke`` required) to
  :class:`Scale` data: steps, seeds, expected wall time and the target's own settings at that
  scale.  ``saferl list`` prints them; an unknown scale is a one-line ValueError listing the
  target's scales.
* ``checks`` are functions of the target's rows returning named booleans or values (the paper's
  claims, the target's acceptance criteria); the framework computes them from the rows and writes them to
  results.json under ``"checks"`` (a target does not compute or return checks itself).
* ``options`` names the keyword options the target accepts (``svae-table1``: ``tune``).
* ``paper_budget`` (optional) is a :class:`PaperBudget`, the steps per seed and seeds at which the paper states
  its claims: the framework then adds a ``budget`` check (steps as a fraction of the paper's, seeds; from the runs
  the target used) that every verdict sentence carries. :meth:`Target.judge` computes the checks from rows and
  runs, so a committed results.json can be judged again by today's rules (``benchmarks/rejudge.py``).
* ``plan`` (optional) is a function ``plan(scale: Scale, out: Path, **options) -> [(run_dir, cfg)]``: every
  run directory the target would train at that scale into ``out`` with its resolved config, in training
  order, without training anything.  It is stored on the target as ``Target.plan`` (None when not given),
  so that runs can be trained elsewhere first (``tgt.plan(tgt.scale("cpu"), out)``, e.g. on a cluster);
  running the target afterwards reuses them (``deep_rl.train_or_resume``).  Its tests check that the plan
  is what the target trains.

The function returns ``{"rows": [...], "figures": [PNG names written into out], ...}`` with any
other JSON-serialisable entries (settings, fitted slopes).  The framework writes
``out/results.json`` atomically::

    target, scale, wall_seconds (this invocation), git_commit (the code that ran it),
    rows, checks, runs (every training run the target used, see below), runs_training_seconds,
    figures, options (only when one was given), then the target's other entries.

Each entry of ``runs`` -- one per run directory trained, resumed or reused through
:func:`saferl.training.reuse.record_run` (``train_or_resume`` calls it) -- holds ``run`` (its directory,
relative to ``out``), ``status`` (``trained``: trained now; ``resumed``: an interrupted run
finished now; ``reused``: finished earlier, not trained now), ``reused`` (status == reused),
``algo``, ``env``, ``seeds``, ``env_steps``, ``wall_seconds`` (its training time from its
summary.json: ``training_seconds``, the total over sittings, where recorded, else
``wall_seconds``), ``config_hash`` (from summary.json, else computed from its config.yaml) and
``git_commit`` (the code that trained it, from summary.json; null for runs written before
summary.json recorded it; ``git_commits`` too where summary.json lists one per sitting).
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from saferl.analysis import verdicts
from saferl.foundation.atomic_files import write_json_atomic
from saferl.training import provenance, reuse

#: the scale names a target may declare, smallest first; every target declares ``smoke`` (the tests run it)
SCALE_NAMES = ("smoke", "demo", "cpu", "full")
#: results.json keys the framework writes; a target's result may not use them
RESERVED = (
    "target",
    "scale",
    "wall_seconds",
    "git_commit",
    "checks",
    "runs",
    "runs_training_seconds",
    "options",
    "only_tasks",
)


@dataclass(frozen=True)
class Scale:
    """One scale of a target.

    ``steps`` per seed (in ``unit``: environment steps, episodes K, iterations ...; None where it
    varies, e.g. per environment: ``note`` says how), ``seeds`` (None where the target has none),
    ``wall_s`` the expected wall time in seconds on a 2-core CPU machine (rough; None: not meant for
    one), ``params`` the target's own settings at this scale (``scale["epsilons"]``).  ``name`` is
    set by :func:`target`.
    """

    steps: int | None
    seeds: int | None
    wall_s: float | None
    unit: str = "env steps per seed"
    note: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""

    def __getitem__(self, key: str):
        return self.params[key]

    def get(self, key: str, default=None):
        return self.params.get(key, default)

    def describe(self) -> str:
        """``32,000 env steps per seed x 2 seeds, ~1 min`` (+ the note)."""
        parts = []
        if self.steps is not None:
            parts.append(f"{self.steps:,} {self.unit}")
        if self.seeds is not None:
            parts.append(f"{self.seeds} seed{'s' if self.seeds != 1 else ''}")
        text = " x ".join(parts) if parts else "-"
        text += f", {_duration(self.wall_s)}"
        return text + (f" ({self.note})" if self.note else "")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not meant for a CPU"
    if seconds < 90:
        return f"~{max(5, 5 * round(seconds / 5)):.0f} s"
    if seconds < 90 * 60:
        return f"~{round(seconds / 60):.0f} min"
    return f"~{seconds / 3600:.1f} h"


Check = Callable[[list], Mapping[str, Any]]


@dataclass(frozen=True)
class PaperBudget:
    """The budget at which a paper states its claims: environment steps per seed (one number, per task, or None where
    the paper states none), seeds, and where it says so. A target that declares one gets a ``budget`` check: per
    task its steps per seed as a fraction of the paper's and its seeds (:func:`saferl.analysis.verdicts.budget`),
    which every verdict sentence on that target carries."""

    steps: int | Mapping[str, int] | None
    seeds: int | None
    source: str

    def steps_of(self, task: str) -> int | None:
        if isinstance(self.steps, Mapping):
            return self.steps.get(task)
        return self.steps


def budget_check(runs: Sequence[Mapping], paper: PaperBudget) -> dict:
    """``{"budget": {task: verdicts.budget(...), ..., "source": ...}}`` from the runs a target used (results.json's
    ``runs``: each with ``env``, ``env_steps`` per seed and ``seeds``), the largest per task."""
    per_task: dict[str, dict] = {}
    for run in runs:
        task, steps, seeds = run.get("env"), run.get("env_steps"), run.get("seeds")
        if task is None:
            continue
        seen = per_task.setdefault(task, {"steps": None, "seeds": None})
        if steps is not None:
            seen["steps"] = max(seen["steps"] or 0, int(steps))
        if seeds is not None:
            seen["seeds"] = max(seen["seeds"] or 0, int(seeds))
    budgets = {
        task: verdicts.budget(seen["steps"], paper.steps_of(task), seen["seeds"], paper.seeds)
        for task, seen in per_task.items()
    }
    return {"budget": {**budgets, "source": paper.source}} if budgets else {}


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    scales: Mapping[str, Scale]
    checks: tuple[Check, ...]
    options: tuple[str, ...]
    fn: Callable[..., dict]
    #: ``plan(scale, out, **options) -> [(run_dir, resolved config)]``: the runs the target trains (None: not declared)
    plan: Callable[..., list] | None = None
    #: the budget of the paper's claims (None: the target reproduces no paper's budget)
    paper_budget: PaperBudget | None = None

    def scale(self, name: str, tasks: Sequence[str] | None = None) -> Scale:
        """The scale ``name``; with ``tasks``, narrowed to those of its tasks (a scale that lists ``tasks``)."""
        if name not in self.scales:
            raise ValueError(f"unknown scale {name!r} for {self.name}; its scales: {', '.join(self.scales)}")
        chosen = self.scales[name]
        if tasks is None:
            return chosen
        declared = list(chosen.get("tasks") or ())
        if not declared:
            raise ValueError(f"target {self.name} at scale {name} has no list of tasks to choose from with --tasks")
        unknown = [t for t in tasks if t not in declared]
        if unknown or not tasks:
            raise ValueError(
                f"--tasks {','.join(tasks)!r}: {self.name} at scale {name} trains on {', '.join(declared)}; "
                "choose one or more of them"
            )
        kept = [t for t in declared if t in tasks]  # the target's order
        return replace(chosen, params={**chosen.params, "tasks": kept}, note=f"{chosen.note}; only {', '.join(kept)}")

    def judge(self, rows: list, runs: Sequence[Mapping]) -> dict:
        """results.json's ``checks``: :meth:`compute_checks` on ``rows``, with the ``budget`` check
        (:func:`budget_check`) from ``runs`` where the target declares its paper's budget."""
        checks = self.compute_checks(rows)
        if self.paper_budget is not None:
            extra = budget_check(runs, self.paper_budget)
            if "budget" in checks and extra:
                raise ValueError(f"check 'budget' of {self.name} is computed twice")
            checks.update(extra)
        return checks

    def compute_checks(self, rows: list) -> dict:
        """Every declared check on ``rows``, merged into one dict (a name given twice is an error)."""
        out: dict[str, Any] = {}
        for check in self.checks:
            values = check(rows)
            if not isinstance(values, Mapping):
                raise TypeError(f"check {check.__name__} of {self.name} returned {type(values).__name__}, not a dict")
            for key, value in values.items():
                if not isinstance(key, str):
                    raise TypeError(f"check {check.__name__} of {self.name} names a value {key!r}: names are strings")
                if key in out:
                    raise ValueError(f"check {key!r} of {self.name} is computed twice")
                out[key] = value
        return out


_TARGETS: dict[str, Target] = {}


def target(
    name: str,
    description: str,
    scales: Mapping[str, Scale],
    checks: Check | Sequence[Check] = (),
    options: Sequence[str] = (),
    plan: Callable[..., list] | None = None,
    paper_budget: PaperBudget | None = None,
):
    """Declare a reproduce target (see the module docstring); the scales are validated here."""
    if name in _TARGETS:
        raise ValueError(f"reproduce target {name!r} is declared twice")
    if not isinstance(scales, Mapping) or "smoke" not in scales:
        raise ValueError(f"target {name}: scales must be a dict that has a 'smoke' scale")
    unknown = [s for s in scales if s not in SCALE_NAMES]
    if unknown:
        raise ValueError(
            f"target {name}: unknown scale name(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(SCALE_NAMES)}"
        )
    bound = {}
    for scale_name in SCALE_NAMES:  # in size order, whatever the declaration's order
        if scale_name not in scales:
            continue
        s = scales[scale_name]
        if not isinstance(s, Scale):
            raise TypeError(f"target {name}, scale {scale_name}: a Scale, not {type(s).__name__}")
        for attr in ("steps", "seeds"):
            v = getattr(s, attr)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"target {name}, scale {scale_name}: {attr} must be a positive int or None, got {v!r}")
        if s.wall_s is not None and not (
            isinstance(s.wall_s, (int, float)) and math.isfinite(s.wall_s) and s.wall_s >= 0
        ):
            raise ValueError(
                f"target {name}, scale {scale_name}: wall_s must be seconds >= 0 or None, got {s.wall_s!r}"
            )
        bound[scale_name] = replace(s, name=scale_name, params=dict(s.params))
    checks = (checks,) if callable(checks) else tuple(checks)
    if not all(callable(c) for c in checks):
        raise TypeError(f"target {name}: checks must be functions of the rows")
    options = tuple(options)
    if not all(isinstance(o, str) and o.isidentifier() for o in options):
        raise ValueError(f"target {name}: options must be keyword names, got {options!r}")
    if plan is not None and not callable(plan):
        raise TypeError(
            f"target {name}: plan must be a function plan(scale, out, **options), not {type(plan).__name__}"
        )

    if paper_budget is not None and not isinstance(paper_budget, PaperBudget):
        raise TypeError(f"target {name}: paper_budget must be a PaperBudget, not {type(paper_budget).__name__}")

    def deco(fn):
        _TARGETS[name] = Target(name, description, bound, checks, options, fn, plan, paper_budget)
        return fn

    return deco


def targets() -> dict[str, Target]:
    """Every declared target by name (sorted)."""
    return dict(sorted(_TARGETS.items()))


def get(name: str) -> Target:
    if name not in _TARGETS:
        raise ValueError(f"unknown reproduce target {name!r}; known targets: {', '.join(sorted(_TARGETS))}")
    return _TARGETS[name]


# --------------------------------------------------------------------------- runs a target used


# --------------------------------------------------------------------------- running a target


def run(name: str, scale: str, out: Path, tasks: Sequence[str] | None = None, **options) -> dict:
    """Run target ``name`` at ``scale`` into ``out``; write and return results.json's content.  ``tasks`` narrows a
    scale that lists tasks to those (results.json records them under ``only_tasks``).  ``options`` (e.g.
    ``tune=True``) must be declared by the target; false ones are ignored."""
    tgt = get(name)
    chosen = tgt.scale(scale, tasks)
    unsupported = [k for k, v in options.items() if v and k not in tgt.options]
    if unsupported:
        raise ValueError(f"target {name} does not support --{', --'.join(unsupported)}")
    options = {k: v for k, v in options.items() if k in tgt.options}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    commit = provenance.git_commit()
    start = time.time()
    with reuse.recording(out) as ledger:
        result = tgt.fn(chosen, out, **options)
    wall = time.time() - start
    result = _validated(tgt, result, out)
    rows = result.pop("rows")
    figures = result.pop("figures")
    used = list(ledger.entries.values())
    for entry in used:
        # what of the library changed between the (oldest) code that trained each run and the code writing this
        # table: [] means the table's code trained it
        commits = entry.get("git_commits") or [entry.get("git_commit")]
        entry["code_changes_since_training"] = provenance.code_changes_since(commits[0] if commits else None)
    payload = {
        "target": name,
        "scale": scale,
        "wall_seconds": wall,
        "git_commit": commit,
        "rows": rows,
        "checks": tgt.judge(rows, used),
        "runs": used,
        "runs_training_seconds": float(sum(r["wall_seconds"] or 0.0 for r in used)),
        "figures": figures,
    }
    if any(options.values()):
        payload["options"] = {k: v for k, v in options.items() if v}
    if tasks is not None:
        payload["only_tasks"] = list(chosen["tasks"])
    payload.update(result)
    _keep_another_targets_result(out, name)
    write_json_atomic(out / "results.json", payload)
    return payload


def _keep_another_targets_result(out: Path, name: str) -> None:
    """Targets that share an ``out`` (ctrpo-fig3 reuses ctrpo-table1's runs there) each write ``results.json``: the
    one another target wrote is kept as ``results-<that target>.json`` instead of being overwritten."""
    current = out / "results.json"
    try:
        previous = json.loads(current.read_text()).get("target")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(previous, str) and previous != name and previous.replace("-", "").isalnum():
        os.replace(current, out / f"results-{previous}.json")


def _validated(tgt: Target, result, out: Path) -> dict:
    if not isinstance(result, dict) or not isinstance(result.get("rows"), list):
        raise RuntimeError(f"target {tgt.name} returned no 'rows' list")
    clash = [k for k in RESERVED if k in result]
    if clash:
        raise RuntimeError(
            f"target {tgt.name} returned {', '.join(clash)}: the framework writes these "
            "(declare checks with @target(checks=...))"
        )
    figures = result.get("figures")
    if not isinstance(figures, list) or not figures:
        raise RuntimeError(f"target {tgt.name} returned no 'figures' list")
    missing = [f for f in figures if not (out / f).is_file()]
    if missing:
        raise RuntimeError(f"target {tgt.name} lists figures it did not write: {', '.join(missing)}")
    return dict(result)

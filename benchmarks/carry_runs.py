"""Carry a long target's finished runs through the repository, from one machine or clone to the next.

    python benchmarks/carry_runs.py save    runs/reproduce/ctrpo-table1-cpu   benchmarks/carried/ctrpo-table1-cpu
    python benchmarks/carry_runs.py restore benchmarks/carried/ctrpo-table1-cpu runs/reproduce/ctrpo-table1-cpu
    python benchmarks/carry_runs.py show    benchmarks/carried/ctrpo-table1-cpu

A fresh machine has only what is committed: ``runs/`` is ignored, so a target that trains for longer than one
machine is held (the whole ``ctrpo-table1`` at ``cpu`` takes hours on 2 cores) would start from nothing each
time.  ``save`` copies every *finished* run directory under OUT (config.yaml, summary.json not interrupted)
without its checkpoints -- a table reads config.yaml, summary.json and progress.csv, and a finished run is reused
from those alone (``saferl.reproduce.deep_rl.train_or_resume``) -- into a folder that is committed, and writes
``carried.yaml`` there: the commit(s) that trained the runs and, per run, its config hash.  ``restore`` puts
them back under OUT in the same layout, so the next ``saferl reproduce TARGET --out OUT`` reuses them and trains
only the rest.  Interrupted runs are carried only with ``save --interrupted`` (before the machine is given up,
where a run takes long): with their checkpoints (~1.3 MB each) into ``.interrupted/`` beside the finished ones,
the latest state of each, so that the next machine resumes them; once a run finishes, its finished copy replaces
the interrupted one.

The table must still come from one code: ``restore`` refuses when the checkout that will train the rest
(``--checkout``, default the current directory) has a saferl that differs from the commit that trained the
carried runs (``git diff --name-only COMMIT -- saferl``), and says which commit to check out; train the rest in a
clone at that commit, as docs/decisions/054-results-provenance.md describes.
Nothing is overwritten: ``save`` replaces a carried run only by a finished run with the same config hash, and
``restore`` skips a run directory that already exists.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

MANIFEST = "carried.yaml"
SKIPPED_DIRS = {"checkpoints"}


def finished_runs(out: Path) -> list[tuple[Path, dict]]:
    """(run directory, its summary) for the runs under ``out`` whose summary.json says the training finished."""
    found = []
    for summary_path in sorted(Path(out).rglob("summary.json")):
        run_dir = summary_path.parent
        if not (run_dir / "config.yaml").is_file():
            continue
        summary = json.loads(summary_path.read_text())
        if not summary.get("interrupted"):
            found.append((run_dir, summary))
    return found


INTERRUPTED = ".interrupted"  # under CARRIED: the interrupted runs, checkpoints included


def interrupted_runs(out: Path, finished: list[Path]) -> list[Path]:
    """Run directories under ``out`` with a config and a checkpoint that are not among ``finished``."""
    done = set(finished)
    return [
        c.parent.parent
        for c in sorted(Path(out).rglob("checkpoints/latest.npz"))
        if (c.parent.parent / "config.yaml").is_file() and c.parent.parent not in done
    ]


def iterations_logged(run_dir: Path) -> int:
    """The last iteration in progress.csv (0 without one)."""
    path = run_dir / "progress.csv"
    if not path.is_file():
        return 0
    with open(path, newline="") as fh:
        return max((int(row["iteration"]) for row in csv.DictReader(fh) if row.get("iteration")), default=0)


def _copy_run(src: Path, dst: Path, checkpoints: bool = False) -> None:
    """``src`` without its checkpoints (with them where ``checkpoints``) into ``dst``, atomically (a temporary
    sibling renamed into place)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}-", dir=dst.parent))
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if (rel.parts[0] in SKIPPED_DIRS and not checkpoints) or not path.is_file():
            continue
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, tmp / rel)
    if dst.exists():
        shutil.rmtree(dst)
    os.replace(tmp, dst)


def save(out: Path, carried: Path, interrupted: bool = False) -> int:
    manifest = load_manifest(carried)
    entries, partial = manifest["runs"], manifest["interrupted"]
    saved = 0
    finished = finished_runs(out)
    for run_dir, summary in finished:
        rel = run_dir.relative_to(out).as_posix()
        record = {
            "config_hash": summary.get("config_hash"),
            "git_commits": summary.get("git_commits") or [summary.get("git_commit")],
            "training_seconds": summary.get("training_seconds"),
        }
        if rel in entries and entries[rel]["config_hash"] != record["config_hash"]:
            raise SystemExit(f"error: {carried / rel} holds a run with another config; carry {out} elsewhere")
        if entries.get(rel) == record:
            continue
        _copy_run(run_dir, carried / rel)
        entries[rel] = record
        saved += 1
    for rel in [r for r in partial if r in entries]:  # finished since: the finished copy replaces it
        shutil.rmtree(carried / INTERRUPTED / rel, ignore_errors=True)
        del partial[rel]
    resumable = 0
    if interrupted:
        head = _head_commit(out)
        for run_dir in interrupted_runs(out, [d for d, _ in finished]):
            rel = run_dir.relative_to(out).as_posix()
            record = {"git_commit": head, "iterations_logged": iterations_logged(run_dir)}
            if rel in entries or (rel in partial and partial[rel]["iterations_logged"] > record["iterations_logged"]):
                continue  # never a finished run's place, never an earlier state over a later one
            _copy_run(run_dir, carried / INTERRUPTED / rel, checkpoints=True)
            partial[rel] = record
            resumable += 1
    ignored = _ignored_by_git(carried, [carried / rel / "progress.csv" for rel in entries])
    if ignored:
        raise SystemExit(
            f"error: git ignores {ignored[0]} (and {len(ignored) - 1} more): the carried runs would not be "
            "committed; un-ignore the folder (.gitignore) and save again"
        )
    commits = sorted(
        {c for e in entries.values() for c in e["git_commits"] if c}
        | {e["git_commit"] for e in partial.values() if e["git_commit"]}
    )
    manifest["trained_by"] = commits
    _write_manifest(carried, manifest)
    print(
        f"carried {saved} new finished run(s) of {out} into {carried} ({len(entries)} in all; trained by "
        f"{', '.join(commits) or 'unknown code'})"
        + (f"; {resumable} interrupted run(s) with their checkpoints ({len(partial)} carried)" if interrupted else "")
    )
    return 0


def restore(carried: Path, out: Path, checkout: Path) -> int:
    manifest = load_manifest(carried)
    commits = {c.removesuffix("-dirty") for c in manifest["trained_by"]}
    if len(commits) > 1:
        raise SystemExit(
            f"error: {carried} mixes runs of {len(commits)} commits ({', '.join(sorted(commits))}); "
            "a table is trained by one"
        )
    for commit in commits:
        changed = _code_changes_since(checkout, commit)
        if changed is None:
            raise SystemExit(
                f"error: this checkout cannot compare its saferl with {commit}; restore into a clone "
                f"checked out at {commit}"
            )
        if changed:
            raise SystemExit(
                f"error: the carried runs were trained by {commit} and this checkout's saferl differs "
                f"({len(changed)} files, e.g. {changed[0]}); restore into a clone at {commit}"
            )
    restored = skipped = 0
    for rel in sorted(manifest["runs"]):
        dst = Path(out) / rel
        if dst.exists():
            skipped += 1
            continue
        _copy_run(carried / rel, dst)
        restored += 1
    resumed = 0
    for rel in sorted(manifest["interrupted"]):
        dst = Path(out) / rel
        if dst.exists() or rel in manifest["runs"]:
            skipped += 1
            continue
        _copy_run(carried / INTERRUPTED / rel, dst, checkpoints=True)
        resumed += 1
    print(
        f"restored {restored} finished run(s) into {out}"
        + (f" and {resumed} interrupted one(s) with their checkpoints, to resume" if resumed else "")
        + f"; {skipped} already there, left as they were"
    )
    return 0


def show(carried: Path) -> int:
    manifest = load_manifest(carried)
    hours = sum(e.get("training_seconds") or 0.0 for e in manifest["runs"].values()) / 3600
    print(
        f"{carried}: {len(manifest['runs'])} finished runs, {hours:.2f} h of training, trained by "
        f"{', '.join(manifest['trained_by']) or 'unknown code'}"
    )
    for rel in sorted(manifest["runs"]):
        print(f"  {rel}")
    for rel, record in sorted(manifest["interrupted"].items()):
        print(f"  {rel} (interrupted at iteration {record['iterations_logged']}, with its checkpoint)")
    return 0


def load_manifest(carried: Path) -> dict:
    path = Path(carried) / MANIFEST
    if not path.is_file():
        return {"trained_by": [], "runs": {}, "interrupted": {}}
    data = yaml.safe_load(path.read_text()) or {}
    return {
        "trained_by": list(data.get("trained_by") or []),
        "runs": dict(data.get("runs") or {}),
        "interrupted": dict(data.get("interrupted") or {}),
    }


def _head_commit(path: Path) -> str | None:
    """The commit of the checkout holding ``path``, "-dirty" where its saferl has uncommitted changes; None outside."""
    head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return None
    dirty = subprocess.run(["git", "-C", str(path), "diff", "--quiet", "HEAD", "--", "saferl"], capture_output=True)
    return head.stdout.strip() + ("-dirty" if dirty.returncode else "")


def _write_manifest(carried: Path, manifest: dict) -> None:
    carried.mkdir(parents=True, exist_ok=True)
    text = (
        "# finished runs carried through the repository by benchmarks/carry_runs.py; restore them into a clone at\n"
        "# the commit in trained_by, then rerun the target with the same --out\n"
        + yaml.safe_dump({k: v for k, v in manifest.items() if k != "interrupted" or v}, sort_keys=True)
    )
    tmp = carried / (MANIFEST + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, carried / MANIFEST)


def _ignored_by_git(carried: Path, paths: list[Path]) -> list[str]:
    """Those of ``paths`` that the git checkout holding ``carried`` ignores ([] outside a checkout)."""
    if not paths:
        return []
    done = subprocess.run(
        ["git", "-C", str(carried), "check-ignore", "--stdin"],
        input="\n".join(str(p.resolve()) for p in paths),
        capture_output=True,
        text=True,
    )
    return [line for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


def _code_changes_since(checkout: Path, commit: str) -> list[str] | None:
    """saferl's files that differ between ``commit`` and ``checkout``'s working tree; None: git cannot tell."""
    done = subprocess.run(
        ["git", "-C", str(checkout), "diff", "--name-only", commit, "--", "saferl"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        return None
    return [line for line in done.stdout.splitlines() if line.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("save", help="copy OUT's finished runs, without checkpoints, into CARRIED")
    p.add_argument("out", type=Path)
    p.add_argument("carried", type=Path)
    p.add_argument(
        "--interrupted",
        action="store_true",
        help="also the interrupted runs, with their checkpoints (before giving the machine up)",
    )
    p = sub.add_parser("restore", help="put CARRIED's runs back under OUT")
    p.add_argument("carried", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument(
        "--checkout",
        type=Path,
        default=Path.cwd(),
        help="the git checkout that will train the rest (default: the current directory)",
    )
    p = sub.add_parser("show", help="what CARRIED holds")
    p.add_argument("carried", type=Path)
    args = parser.parse_args(argv)
    if args.command == "save":
        if not args.out.is_dir():
            raise SystemExit(f"error: {args.out} is not a directory")
        return save(args.out, args.carried, args.interrupted)
    if not (args.carried / MANIFEST).is_file():
        raise SystemExit(f"error: {args.carried} holds no {MANIFEST}; nothing was carried there")
    if args.command == "restore":
        return restore(args.carried, args.out, args.checkout)
    return show(args.carried)


if __name__ == "__main__":
    sys.exit(main())

"""``make mutants``: apply each one-line mutation of ``tests/mutants/mutants.yaml`` to a scratch copy of the working
tree and run the tests named for it; report which are caught, which survive, and which are named equivalent.

    .venv/bin/python tests/mutants/run.py [--only ID ...] [--timeout SECONDS] [--keep]

The scratch copy holds the files git tracks or would track (the working tree as it is, uncommitted edits
included), in a temporary folder; saferl is imported from there, and the mutants' tests pass there unmutated
(both checked before the first mutant).  Each mutant
is applied alone, its tests run with ``pytest -x -q -m "not slow"`` (as ``make test`` runs them), and the file
restored.  JAX's compilation cache is the
repository's own ``.jax_cache`` (programs are keyed by their contents, so a mutated program never reuses an
unmutated one's).  Exit status 0 when every mutant is caught or named equivalent, 1 otherwise (a survivor, a
timeout, or a ``find`` that no longer occurs exactly once: the list is out of date).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
LIST = Path(__file__).resolve().parent / "mutants.yaml"
FIELDS = {"id", "file", "find", "replace", "tests", "why"}
OPTIONAL = {"equivalent"}


def load(path: Path = LIST) -> list[dict]:
    """The list, each entry checked for its fields (a one-line error naming the entry otherwise)."""
    entries = yaml.safe_load(path.read_text()) or []
    seen = set()
    for i, entry in enumerate(entries):
        keys = set(entry)
        if not FIELDS <= keys or keys - FIELDS - OPTIONAL:
            raise SystemExit(
                f"mutants: error: entry {i} ({entry.get('id', '?')}) has fields {sorted(keys)}; needs "
                f"{sorted(FIELDS)}, may have {sorted(OPTIONAL)}"
            )
        if entry["id"] in seen:
            raise SystemExit(f"mutants: error: id {entry['id']!r} appears twice")
        seen.add(entry["id"])
    return entries


def applies(entry: dict, root: Path = ROOT) -> str | None:
    """Why ``entry`` cannot be applied under ``root`` (its file or tests missing, ``find`` not exactly once), or
    None."""
    path = root / entry["file"]
    if not path.is_file():
        return f"{entry['file']} does not exist"
    count = path.read_text().count(entry["find"])
    if count != 1:
        return f"its find occurs {count} times in {entry['file']}"
    if entry["find"] == entry["replace"]:
        return "its replace equals its find"
    for test in entry["tests"]:
        if not (root / test.split("::")[0]).exists():
            return f"its test {test} does not exist"
    return None


def scratch_copy(destination: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = destination / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def environment(scratch: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(scratch), JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    env.setdefault("JAX_COMPILATION_CACHE_DIR", str(ROOT / ".jax_cache"))
    return env


def pytest(tests: list[str], scratch: Path, timeout: float) -> tuple[int, str]:
    """``pytest -x -q -m "not slow" TESTS`` in the scratch copy: its exit status and its output."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *tests],
        cwd=scratch,
        env=environment(scratch),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout + done.stderr


def first_failure(output: str) -> str:
    """The test that failed first (pytest's ``FAILED node - reason`` or ``ERROR node`` line), shortened."""
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split(" ", 1)[1].split("::")[-1]
    return "(no test named: see pytest's output)"


def run_one(entry: dict, scratch: Path, timeout: float) -> tuple[str, float]:
    path = scratch / entry["file"]
    original = path.read_text()
    path.write_text(original.replace(entry["find"], entry["replace"], 1))
    start = time.perf_counter()
    try:
        status, output = pytest(entry["tests"], scratch, timeout)
        verdict = "survived" if status == 0 else f"caught by {first_failure(output)}"
    except subprocess.TimeoutExpired:
        verdict = "timeout"
    finally:
        path.write_text(original)
    return verdict, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, metavar="ID", help="run these mutants only")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for one mutant's tests (default 900)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    args = parser.parse_args(argv)
    entries = load()
    if args.only:
        unknown = sorted(set(args.only) - {e["id"] for e in entries})
        if unknown:
            parser.error(f"unknown mutant id(s) {', '.join(unknown)}; the list: {LIST.relative_to(ROOT)}")
        entries = [e for e in entries if e["id"] in args.only]
    scratch = Path(tempfile.mkdtemp(prefix="saferl-mutants-"))
    try:
        scratch_copy(scratch)
        imported = subprocess.run(
            [sys.executable, "-c", "import saferl; print(saferl.__file__)"],
            cwd=scratch,
            env=environment(scratch),
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not imported.startswith(str(scratch)):
            raise SystemExit(f"mutants: error: saferl imports from {imported!r}, not the scratch copy {scratch}")
        baseline = sorted({t for e in entries if not e.get("equivalent") for t in e["tests"]})
        status, output = pytest(baseline, scratch, args.timeout * 2)
        if status != 0:
            raise SystemExit(
                f"mutants: error: the tests fail without a mutant ({first_failure(output)}); fix them first"
            )
        print(f"unmutated: {len(baseline)} test files pass", flush=True)
        print("| mutant | file | result | seconds |\n|---|---|---|---|", flush=True)
        results = {}
        for entry in entries:
            stale = applies(entry, scratch)
            if stale:
                verdict, seconds = f"stale: {stale}", 0.0
            elif entry.get("equivalent"):
                verdict, seconds = f"equivalent: {entry['equivalent']}", 0.0
            else:
                verdict, seconds = run_one(entry, scratch, args.timeout)
            results[entry["id"]] = verdict
            print(f"| {entry['id']} | {entry['file']} | {verdict} | {seconds:.0f} |", flush=True)
    finally:
        if args.keep:
            print(f"scratch copy kept at {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    counts = {}
    for verdict in results.values():
        key = verdict.split(":")[0].split(" by ")[0]
        counts[key] = counts.get(key, 0) + 1
    print("\n" + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f" of {len(results)} mutants")
    return 0 if set(counts) <= {"caught", "equivalent"} else 1


if __name__ == "__main__":
    sys.exit(main())

"""Digitize the SCPO authors' published benchmark curves into numbers: approximate, read from the pixels.

The SCPO authors (SafeRL-Lab/SCPO on GitHub) publish their benchmark only as plots, one per task, in their
repository, given as a git clone or mirror of SafeRL-Lab/SCPO (MIRROR); read at its HEAD:
``graphs/benchmark/{CartSafe-v0,SafetyBallCircle-v0,SafetyBallGather-v0,SafetyBallReach-v0,SafetyBallRun-v0}.png``.
Each has three panels ("return", "cost", "cost std" against epochs), one line per method in a fixed matplotlib
colour, and a black dash-dot "Cost limit" line.  Per image and panel this script

1. finds the axes box from the black spines and the tick marks from the short black runs just outside the left and
   bottom spines, pairs them with the tick label values declared in ``TICKS`` (read from the images by eye; the
   script checks it finds as many marks as values) and fits pixel = a * value + b per axis through all of them;
2. per method, takes the pixels inside the box within ``TOL`` per RGB channel of its colour (lone pixels dropped)
   and, per pixel column, the median row of those; columns with none (the line hidden under another line or the
   cost limit) stay missing, and gaps up to ``MAX_GAP_PX`` columns are interpolated linearly;
3. samples each curve at every integer epoch (null where unreadable) and digitizes the limit line.

Limits: approximate, read from pixels; about +-2% of an axis range at best.  The plots have 2.5 (CartSafe-v0) or 3.7
(SafetyBallRun-v0) px per epoch but only 0.75 on the 500-epoch plots, where a jagged line is seen only through its
per-column median; a line under another is lost where they overlap; an anti-aliased blend of two lines can, rarely,
pass for a third colour.  Writes ``docs/results/scpo-published-curves/{curves.json,README.md}`` and checks a few
SafetyBallRun-v0 values read by eye (a failed check exits non-zero with a one-line message).  From the repo root::

    .venv/bin/python benchmarks/scpo_published_curves.py MIRROR
"""

from __future__ import annotations

import argparse
import io
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image
from scipy.ndimage import convolve

OUT_DIR = Path(__file__).resolve().parents[1] / "docs" / "results" / "scpo-published-curves"
PANELS = ("return", "cost", "cost std")
# Line colours, exactly as sampled from the legend patches (they are matplotlib's named colours).
COLOURS = {
    "SCPO": (255, 165, 0),  # orange
    "TRPO": (95, 158, 160),  # cadetblue (teal / grey-green)
    "TRPO-L": (255, 105, 180),  # hotpink
    "PCPO": (0, 191, 191),  # "c" (cyan)
    "CPO": (30, 144, 255),  # dodgerblue
    "PDO": (147, 112, 219),  # mediumpurple
    "PPO": (70, 130, 180),  # steelblue (CartSafe-v0 only)
}
TOL = 16  # max per-channel difference from the line colour (nearest two colours differ by 28)
MAX_GAP_PX = 8  # longest run of missing columns that is interpolated (about 2% of a panel's width)
DARK = 80  # a spine / tick / limit-line pixel has every channel below this

# Tick label values, read from the images by eye: per image, the methods in its legend and per panel the y tick
# values (bottom to top) and x tick values (left to right).
X100, X140, X500 = list(range(0, 101, 20)), list(range(0, 141, 20)), list(range(0, 501, 100))
SIX = ["SCPO", "TRPO", "TRPO-L", "PCPO", "CPO", "PDO"]
TICKS = {
    "CartSafe-v0": {
        "methods": ["SCPO", "PPO"],
        "return": {"y": [0, 100, 200, 300, 400, 500], "x": X140},
        "cost": {"y": [0, 25, 50, 75, 100, 125, 150, 175], "x": X140},
        "cost std": {"y": [0, 10, 20, 30, 40, 50], "x": X140},
    },
    "SafetyBallCircle-v0": {
        "methods": SIX,
        "return": {"y": [0, 100, 200, 300, 400, 500, 600, 700], "x": X500},
        "cost": {"y": [0, 20, 40, 60, 80], "x": X500},
        "cost std": {"y": [0, 10, 20, 30, 40, 50], "x": X500},
    },
    "SafetyBallGather-v0": {
        "methods": SIX,
        "return": {"y": [2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 22.5], "x": X500},
        "cost": {"y": [0.1, 0.2, 0.3, 0.4, 0.5], "x": X500},
        "cost std": {"y": [0.2, 0.3, 0.4, 0.5, 0.6], "x": X500},
    },
    "SafetyBallReach-v0": {
        "methods": SIX,
        "return": {"y": [0, 5, 10, 15, 20, 25], "x": X500},
        "cost": {"y": [5, 10, 15, 20, 25, 30, 35], "x": X500},
        "cost std": {"y": [10, 15, 20, 25, 30, 35], "x": X500},
    },
    "SafetyBallRun-v0": {
        "methods": SIX,
        "return": {"y": [0, 500, 1000, 1500, 2000], "x": X100},
        "cost": {"y": [0, 50, 100, 150, 200], "x": X100},
        "cost std": {"y": [0, 10, 20, 30, 40, 50], "x": X100},
    },
}
# SafetyBallRun-v0 at the end of training, read by eye: (panel, method or "limit", value).
RUN_CHECKS = [("cost", "limit", 25), ("return", "TRPO", 2000), ("cost", "TRPO", 233), ("return", "SCPO", 570)]
RUN_CHECKS += [("cost", "SCPO", 2), ("cost", "PDO", 90)]


def load_png(mirror: str, name: str) -> np.ndarray:
    """The RGB pixels (int array, rows x columns x 3) of graphs/benchmark/<name>.png at the mirror's HEAD."""
    blob = subprocess.run(
        ["git", "-C", mirror, "show", f"HEAD:graphs/benchmark/{name}.png"], check=True, capture_output=True
    ).stdout
    return np.asarray(Image.open(io.BytesIO(blob)).convert("RGB")).astype(int)


def runs(mask: np.ndarray) -> list[float]:
    """Centres of the runs of consecutive True entries of a 1-D mask."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    groups = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    return [float(g.mean()) for g in groups]


def axes_boxes(img: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(left, top, right, bottom) spine positions of the panels, left to right."""
    dark = img.max(axis=2) < DARK
    cols = np.flatnonzero(dark.sum(axis=0) > 0.6 * img.shape[0])
    boxes = []
    for left, right in zip(cols[::2], cols[1::2]):
        rows = np.flatnonzero(dark[:, left : right + 1].mean(axis=1) > 0.95)
        boxes.append((int(left), int(rows[0]), int(right), int(rows[-1])))
    assert len(boxes) == 3, f"found {len(boxes)} panels, not 3"
    return boxes


def fit_axis(pixels: list[float], values: list[float], what: str) -> dict:
    """Least-squares pixel = a * value + b through the ticks; residuals are checked to be under a pixel."""
    assert len(pixels) == len(values), f"{what}: {len(pixels)} tick marks found, {len(values)} values declared"
    a, b = np.polyfit(values, pixels, 1)
    resid = float(np.abs(np.polyval([a, b], values) - pixels).max())
    assert resid < 1.0, f"{what}: ticks are not evenly spaced (residual {resid:.2f} px)"
    return {"values": values, "pixels": pixels, "a": float(a), "b": float(b), "max_residual_px": round(resid, 3)}


def calibrate(img: np.ndarray, box: tuple[int, int, int, int], ticks: dict, what: str) -> dict:
    left, top, right, bottom = box
    dark = img.max(axis=2) < DARK
    ymask = dark[top : bottom + 1, left - 3 : left].all(axis=1)  # tick marks left of the left spine
    xmask = dark[bottom + 1 : bottom + 4, left : right + 1].all(axis=0)  # and below the bottom spine
    return {
        "box": [left, top, right, bottom],
        "y": fit_axis([top + p for p in runs(ymask)], ticks["y"][::-1], f"{what} y"),
        "x": fit_axis([left + p for p in runs(xmask)], ticks["x"], f"{what} x"),
    }


def to_data(axis: dict, pixel: float | np.ndarray) -> float | np.ndarray:
    return (pixel - axis["b"]) / axis["a"]


def column_rows(img: np.ndarray, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> np.ndarray:
    """Per image column, the median row of the pixels of this colour inside the box (NaN where none)."""
    left, top, right, bottom = box
    out = np.full(img.shape[1], np.nan)
    inner = img[top + 1 : bottom, left + 1 : right]
    match = np.abs(inner - np.array(colour)).max(axis=2) <= TOL
    # a lone pixel (no matching neighbour) is more likely an anti-aliased blend of two other lines than a line
    match &= convolve(match.astype(int), np.ones((3, 3), int), mode="constant") > 1
    for j in np.flatnonzero(match.any(axis=0)):
        out[left + 1 + j] = top + 1 + np.median(np.flatnonzero(match[:, j]))
    found = np.flatnonzero(~np.isnan(out))
    for a, b in zip(found[:-1], found[1:]):  # fill short gaps only
        if 1 < b - a <= MAX_GAP_PX + 1:
            out[a + 1 : b] = np.interp(np.arange(a + 1, b), [a, b], [out[a], out[b]])
    return out


def sample(rows: np.ndarray, cal: dict, grid: list[int]) -> list[float | None]:
    """The curve at each x of the grid: linear between the two neighbouring columns, the nearest one at an end."""
    out = []
    for x in grid:
        p = cal["x"]["a"] * x + cal["x"]["b"]  # the pixel column of this x
        i0, near = math.floor(p), round(p)
        r0, r1 = rows[i0], rows[min(i0 + 1, len(rows) - 1)]
        if not (np.isnan(r0) or np.isnan(r1)):
            r = r0 + (p - i0) * (r1 - r0)
        elif not np.isnan(rows[near]):
            r = rows[near]
        else:
            out.append(None)
            continue
        out.append(float(to_data(cal["y"], r)))
    return out


def limit_line(img: np.ndarray, cal: dict) -> float | None:
    """Data y of the dash-dot cost limit line: the mean row of the black pixels of rows mostly dark inside the box."""
    left, top, right, bottom = cal["box"]
    dark = img[top + 1 : bottom, left + 1 : right].max(axis=2) < DARK
    counts = dark.sum(axis=1)
    rows = np.flatnonzero(counts > 0.3 * dark.shape[1])
    if rows.size == 0:
        return None
    centre = top + 1 + float((rows * counts[rows]).sum() / counts[rows].sum())
    return float(to_data(cal["y"], centre))


def decimals(ticks: list[float]) -> int:
    return max(0, math.ceil(-math.log10(ticks[1] - ticks[0])) + 1)


def digitize(img: np.ndarray, spec: dict, name: str) -> tuple[dict, dict]:
    boxes = axes_boxes(img)
    legend = img[:, boxes[-1][2] + 1 :]
    shown = [m for m, c in COLOURS.items() if (np.abs(legend - np.array(c)).max(axis=2) == 0).sum() >= 10]
    assert sorted(shown) == sorted(spec["methods"]), f"{name}: legend shows {shown}, not {spec['methods']}"
    calib, rows = {}, {}
    for panel, box in zip(PANELS, boxes):
        calib[panel] = calibrate(img, box, spec[panel], f"{name} {panel}")
        calib[panel]["limit_line"] = limit_line(img, calib[panel])
        rows[panel] = {m: column_rows(img, box, COLOURS[m]) for m in spec["methods"]}
    # one grid of integer epochs per image, to the last epoch any line reaches
    x_end = max(to_data(calib[p]["x"], np.flatnonzero(~np.isnan(r))[-1]) for p in PANELS for r in rows[p].values())
    grid = list(range(0, round(x_end) + 1))
    curves = {}
    for panel in PANELS:
        nd = decimals(spec[panel]["y"]) + 1
        curves[panel] = {
            m: {"x": grid, "y": [None if v is None else round(v, nd) for v in sample(r, calib[panel], grid)]}
            for m, r in rows[panel].items()
        }
    return curves, calib


def at(curve: dict, frac: float) -> float | None:
    """Mean of the curve over +-2% of its x range around frac of the range (None if nothing was readable there)."""
    x, y = np.array(curve["x"]), curve["y"]
    lo, hi = x[0], x[-1]
    c, w = lo + frac * (hi - lo), 0.02 * (hi - lo)
    vals = [v for xi, v in zip(x, y) if abs(xi - c) <= w and v is not None]
    return float(np.mean(vals)) if vals else None


def check_run(curves: dict, calib: dict) -> list[str]:
    lines = []
    for panel, method, want in RUN_CHECKS:
        ticks = TICKS["SafetyBallRun-v0"][panel]["y"]
        tol = (0.01 if method == "limit" else 0.03) * (ticks[-1] - ticks[0])
        got = calib[panel]["limit_line"] if method == "limit" else at(curves[panel][method], 1.0)
        got = None if got is None else round(got, 2)
        lines.append(f"SafetyBallRun-v0 {panel:8s} {method:6s} end: {got} (by eye {want}, tolerance {tol:.0f})")
        if got is None or abs(got - want) > tol:
            sys.exit(f"check failed: {lines[-1]}")
    return lines


def table(name: str, curves: dict) -> list[str]:
    fracs = (0.25, 0.5, 1.0)
    x = curves["return"][TICKS[name]["methods"][0]]["x"]
    head = [f"{p} @ {x[0] + f * (x[-1] - x[0]):g}" for p in PANELS for f in fracs]
    out = [f"### {name}", "", "| method | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for m in TICKS[name]["methods"]:
        cells = []
        for p in PANELS:
            nd = decimals(TICKS[name][p]["y"])
            cells += ["n/a" if (v := at(curves[p][m], f)) is None else f"{v:.{nd}f}" for f in fracs]
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    return out + [""]


README = """# SCPO authors' published benchmark curves, digitized

Numbers read back from the five plots the SCPO authors publish (SafeRL-Lab/SCPO, `graphs/benchmark/<task>.png`), so
that our results can be set beside theirs. Approximate: read from the pixels by `benchmarks/scpo_published_curves.py`
(its docstring has the method). Written, in {seconds:.0f} s, by

    .venv/bin/python benchmarks/scpo_published_curves.py MIRROR

`curves.json`: `curves[task][panel][method]` = `{{x: epochs, y: values}}` at every integer epoch the plot covers
(`null` where the line could not be read), and `calibration[task][panel]`: the axes box (px), the tick marks found
(px) with the tick values read by eye, the fit pixel = a * value + b per axis, and the digitized cost limit line.

Caveats:

- Read from pixels: count on about +-2% of an axis range at best. The 500-epoch plots have about 0.75 px per epoch,
  so their jagged lines are seen through a per-column median, not epoch by epoch.
- A line drawn under another (or under the black cost limit) is hidden where they overlap; gaps of up to
  {gap} px are interpolated, longer ones stay `null` and are left out of the means below (`n/a`: nothing readable).
- The colours are matplotlib's named colours, matched within {tol} per RGB channel; where two lines cross, their
  anti-aliased blend can now and then pass for a third colour (lone pixels are dropped for this reason).
- CartSafe-v0 compares SCPO with PPO only. Some lines end one epoch before others (e.g. 99 against 100).

The dash-dot cost limit line, digitized (a check of the y calibration):

| task | on the cost panel | on the cost std panel |
|---|---|---|
{limits}

Checks against values read by eye (SafetyBallRun-v0, end of training; the script fails if one is off):

{checks}

## Return, cost and cost std at 25%, 50% and 100% of the x range

Each value is the mean over +-2% of the x range around that epoch (one-sided at the end).

"""


def published_at(curves: dict, task: str, panel: str, method: str, epoch: float, half: float = 2.0) -> float:
    """The digitized curve's mean over ``epoch +- half`` (NaN where unreadable or not plotted: CartSafe's panels hold
    SCPO and PPO only)."""
    d = curves[f"{task}-v0"][panel].get(method)
    if d is None:
        return float("nan")
    x = np.asarray(d["x"], float)
    y = np.asarray([np.nan if v is None else v for v in d["y"]], float)
    sel = (x >= epoch - half) & (x <= epoch + half) & np.isfinite(y)
    return float(y[sel].mean()) if sel.any() else float("nan")


def beside(results: Path, curves: dict, epoch_steps: int = 32_000) -> str:
    """A Markdown table of a scpo-fig5 (or scpo-cartsafe) results.json's final return and cost beside the published
    curves' values at the same budget (the runs' steps over RL-Safety-Algorithms' 32,000-step epoch), method by
    method."""
    result = json.loads(Path(results).read_text())
    fmt = lambda v: "n/a" if not np.isfinite(v) else f"{v:.0f}" if abs(v) >= 10 else f"{v:.2g}"  # noqa: E731
    lines = ["| task (epoch) | method | return: ours / published | cost: ours / published |", "|---|---|---|---|"]
    for row in result["rows"]:
        epoch = row["env_steps_per_seed"] / epoch_steps
        method = row["label"]
        cells = []
        for panel, key in (("return", "final_return"), ("cost", "final_cost")):
            theirs = published_at(curves, row["env"], panel, method, epoch)
            ours = f"{fmt(row[key])} [{fmt(row[key + '_lo'])}, {fmt(row[key + '_hi'])}]"
            cells.append(f"{ours} / {fmt(theirs)}")
        lines.append(f"| {row['env']} ({epoch:.0f}) | {row['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", help="a git clone or mirror of SafeRL-Lab/SCPO")
    parser.add_argument(
        "--beside", type=Path, help="a scpo-fig5 or scpo-cartsafe results.json: print its rows beside the curves"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    curves, calib = {}, {}
    for name, spec in TICKS.items():
        try:
            curves[name], calib[name] = digitize(load_png(args.mirror, name), spec, name)
        except AssertionError as exc:
            sys.exit(f"calibration failed: {exc}")
    checks = check_run(curves["SafetyBallRun-v0"], calib["SafetyBallRun-v0"])
    print("\n".join(checks))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    payload = {"source": "SafeRL-Lab/SCPO graphs/benchmark/<task>.png", "curves": curves, "calibration": calib}
    (OUT_DIR / "curves.json").write_text(json.dumps(payload, separators=(",", ":")) + "\n")
    seconds = time.perf_counter() - start
    limits = [f"| {n} | " + " | ".join(f"{calib[n][p]['limit_line']:.3g}" for p in PANELS[1:]) + " |" for n in TICKS]
    text = README.format(
        seconds=seconds, gap=MAX_GAP_PX, tol=TOL, limits="\n".join(limits), checks="\n".join(f"    {c}" for c in checks)
    )
    (OUT_DIR / "README.md").write_text(text + "\n".join(line for n in TICKS for line in table(n, curves[n])))
    print(f"wrote {OUT_DIR}/curves.json and README.md in {seconds:.1f} s")
    if args.beside is not None:
        print(beside(args.beside, curves), end="")


if __name__ == "__main__":
    main()

"""benchmarks/fidelity/vehicle_grids.py's bookkeeping without a rollout: the committed record of the original's
approach grid is the grid the script declares, and the summaries count what the tables show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_scripts import load_fidelity_script

CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"


@pytest.fixture(scope="module")
def vehicle_grids():
    return load_fidelity_script("vehicle_grids")


def test_the_committed_approach_grid_is_the_declared_grid():
    record = json.loads((CALIBRATION / "car" / "approach_grid.json").read_text())
    grid = record["grid"]
    expected = {
        (kind, yaw, ctrl, offset)
        for kind, yaws in grid["yaw_deg"].items()
        for yaw in yaws
        for ctrl in grid["ctrl"]
        for offset in grid["offset"]
    }
    cells = record["cells"]
    assert {(c["kind"], c["yaw_deg"], c["ctrl"], c["offset"]) for c in cells} == expected and len(cells) == 48
    assert all(len(c["touching"]) == len(c["pos"]) == len(c["yaw"]) == grid["steps"] for c in cells)
    for kind, scene in record["scenes"].items():
        assert scene["clearance"] > 1.0, kind  # no other colliding object within reach of the approach
        assert kind == "gremlin" or scene["target"] != scene["layout"]["goal_button"]


def _car_row(kind, offset, original, planar, mujoco):
    row = dict(kind=kind, offset=offset, yaw_deg=0.0, ctrl=1.0, original=dict(touching=original, end=[0, 0]))
    for key, touching in (("planar", planar), ("mujoco", mujoco)):
        row[key] = dict(touching=touching, end=[0, 0], end_yaw=0.0, end_distance=0.1 * touching, end_yaw_diff_deg=-2.0)
    return row


def test_the_car_summary_counts_differences_per_target_and_model(vehicle_grids):
    rows = [_car_row("button", 0.0, 80, 90, 70), _car_row("button", 0.1, 20, 90, 25), _car_row("gremlin", 0.0, 5, 5, 6)]
    summary = vehicle_grids.car_summary(rows)
    assert summary["button/planar"]["touching_mean_abs_diff"] == 40.0
    assert summary["button/planar"]["touching_max_abs_diff"] == 70
    assert (
        summary["button/mujoco"]["touching_total"] == 95 and summary["button/mujoco"]["original_touching_total"] == 100
    )
    assert summary["gremlin/mujoco"]["cells"] == 1 and summary["gremlin/mujoco"]["end_yaw_diff_median_deg"] == 2.0


def test_the_turn_summary_splits_reverse_at_the_lock(vehicle_grids):
    def row(grid, dc, yaw_error):
        original = [0.0, 0.0, 0.0, 1.0, 0.0]
        model = [0.0, 0.0, 0.0, 1.0 + yaw_error, 0.0]
        return dict(grid=grid, thr=-8.0, dc=dc, original=original, planar_as_found=model, planar=model, mujoco=original)

    rows = [row("grid", 0.785, 0.1), row("grid_reverse", 0.5, 0.2), row("grid_reverse", -0.785, 1.5)]
    summary = vehicle_grids.turn_summary(rows)
    yaw = "yaw rate (rad/s)"
    regions = [name for name, _ in vehicle_grids.TURN_REGIONS]
    assert [summary[r]["commands"] for r in regions] == [1, 1, 1]
    assert [summary[r]["planar"][yaw] for r in regions] == pytest.approx([0.1, 0.2, 1.5])
    assert all(summary[r]["mujoco"][yaw] == 0.0 for r in regions)

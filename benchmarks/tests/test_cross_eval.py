"""benchmarks/fidelity/cross_eval.py's pieces that need neither the fidelity venv nor a trained run: the original's
ids of the C-TRPO tasks, the CPO configuration it trains, the episodes the rule needs, and its table."""

from __future__ import annotations

import numpy as np
import pytest
from bench_scripts import load_fidelity_script

from saferl.analysis import equivalence
from saferl.reproduce.ctrpo.table1 import TASKS


@pytest.fixture(scope="module")
def cross_eval():
    return load_fidelity_script("cross_eval")


def test_the_originals_ids_of_the_eight_tasks(cross_eval):
    ids = {task: cross_eval.original_id(task) for task in TASKS}
    assert ids["PointGoal1"] == "SafetyPointGoal1-v0" and ids["RacecarCircle1"] == "SafetyRacecarCircle1-v0"
    assert ids["SafetyHopperVelocity"] == "SafetyHopperVelocity-v1"
    assert sum(i.endswith("-v1") for i in ids.values()) == 4


def test_the_port_run_is_ctrpo_table1s_cpo_on_the_tasks_default_physics(cross_eval):
    cfg = cross_eval.port_config("CarButton1")
    assert (cfg["algo"], cfg["env"], cfg["seeds"], cfg["total_steps"]) == ("cpo", "CarButton1", 5, 800_000)
    assert cfg["env_params"]["physics"] == "mujoco"
    assert cross_eval.port_config("PointGoal1")["env_params"]["physics"] == "planar"


def test_episodes_needed_follow_the_spread_and_the_report_reads_the_verdicts(cross_eval):
    rng = np.random.default_rng(0)
    narrow = {
        side: {"return": rng.normal(10, 1, (5, 20)).tolist(), "cost": [[0.0] * 20] * 5} for side in ("port", "original")
    }
    wide = {
        side: {"return": rng.normal(10, 8, (5, 20)).tolist(), "cost": [[0.0] * 20] * 5} for side in ("port", "original")
    }
    few, many = cross_eval.episodes_needed(narrow)["return"], cross_eval.episodes_needed(wide)["return"]
    assert few < 20 * 5 < many and cross_eval.episodes_needed(wide)["cost"] is None
    row = {
        "run": "r",
        "task": "PointGoal1",
        "original": "SafetyPointGoal1-v0",
        "trained_on": "port",
        "physics": "planar",
        "algo": "cpo",
        "total_steps": 800_000,
        "seeds": [0, 1, 2, 3, 4],
        "episodes": 20,
        "episodes_needed": cross_eval.episodes_needed(wide),
        "sides": wide,
        "verdicts": {
            q: equivalence.equivalence_verdict(np.ravel(wide["port"][q]), np.ravel(wide["original"][q]))
            for q in ("return", "cost")
        },
    }
    table = cross_eval.report([row])
    assert "| PointGoal1 | port | planar | 800k x 5 | 20 (" in table and table.count("\n| PointGoal1") == 1

"""The fidelity benchmark's equivalence rule (benchmarks/fidelity/compare.py, suite_compare.py) on the committed data
of docs/results/fidelity: it tells the known differences apart, a perturbed copy of the original from the
original, and the original from a resample of itself; and the verdict of a task follows its quantities'."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from saferl.analysis import equivalence

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results" / "fidelity"
FIDELITY = ROOT / "benchmarks" / "fidelity"


def _load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


@pytest.fixture(scope="module")
def compare():
    if str(FIDELITY) not in sys.path:
        sys.path.insert(0, str(FIDELITY))
    import compare

    return compare


@pytest.fixture(scope="module")
def suite_compare(compare):
    import suite_compare

    return suite_compare


@pytest.fixture(scope="module")
def sides() -> dict:
    """(saferl, original) task dicts of both benchmarks, by task label."""
    out = {}
    for ours, theirs in (("saferl.json", "original.json"), ("suite_saferl.json", "suite_original.json")):
        o, b = _load(ours)["tasks"], _load(theirs)["tasks"]
        out.update({label: (o[label], b[label]) for label in b if label in o})
    return out


def _values(task: dict, policy: str, key: str) -> np.ndarray:
    record = task["policies"][policy]
    lists = {"return": "returns", "cost": "costs", "length": "lengths"}
    return np.asarray(record[lists[key]] if key in lists else record["extras"][key]["values"], float)


# --------------------------------------------------------------------------- power on the known differences


def test_the_port_trained_cpo_policy_on_racecarcircle1_is_different_on_port_and_original():
    """racecar_transfer.json: per seed, the policy's mean over 10 episodes on the port and on the original (5 seeds a
    side). Every run, return and cost: the whole interval outside the band."""
    for run in _load("racecar_transfer.json"):
        for quantity in ("return", "cost"):
            v = equivalence.equivalence_verdict(run[f"port_{quantity}"], run[f"original_{quantity}"], margin=0.1)
            assert v["verdict"] == "different", (run["run"], run.get("blind"), quantity, v)
            assert v["scale"] == "ratio"
        first = equivalence.equivalence_verdict(run["port_return"], run["original_return"], margin=0.1)
        assert first["lower"] > 1.1  # the port returns more
    plain = _load("racecar_transfer.json")[0]
    assert not plain["blind"]
    cost = equivalence.equivalence_verdict(plain["port_cost"], plain["original_cost"], margin=0.1)
    assert cost["upper"] < 1 / 1.1  # and costs less


def test_carbutton1_planar_port_is_different_in_the_wrong_button_steps(sides):
    """The quantity a learner exploits on CarButton1 is the wrong-button contact (cost). On the planar port (no
    longer the default: docs/decisions/065) the random policy's wrong-button steps are 3.2 times the original's:
    different; on MuJoCo, the default, they are not. The planar port's scripted wrong-button steps (1.55 times)
    and its cost (1.29 times) are not equivalent, but 30 episodes a side do not decide them."""
    default, theirs = sides["CarButton1"]
    ours = _load("suite_saferl.json")["alternate_physics"]["CarButton1"]
    assert (ours["physics"], default["physics"]) == ("planar", "mujoco")
    key = "steps touching a wrong button"
    random = equivalence.equivalence_verdict(_values(ours, "random", key), _values(theirs, "random", key))
    assert random["verdict"] == "different" and random["lower"] > 1.1
    on_mujoco = equivalence.equivalence_verdict(_values(default, "random", key), _values(theirs, "random", key))
    assert on_mujoco["verdict"] != "different"
    for quantity in (key, "cost"):
        scripted = equivalence.equivalence_verdict(
            _values(ours, "scripted", quantity), _values(theirs, "scripted", quantity)
        )
        assert scripted["verdict"] == "inconclusive" and scripted["ratio"] > 1.2, quantity


def test_the_committed_verdicts(compare, suite_compare):
    suite_text, suite = suite_compare.document(_load("suite_saferl.json"), _load("suite_original.json"))
    summary = suite["summary"]
    assert summary["CarButton1"]["verdict"] == "inconclusive"  # on MuJoCo, the default
    planar = summary["CarButton1"]["alternate"]
    assert planar["physics"] == "planar" and planar["verdict"] == "differs"
    assert planar["different"] == ["random/steps touching a wrong button"]
    assert summary["HumanoidVelocity"]["different"] == ["scripted/cost"]
    # no task of the suite is faithful on 30 episodes a side; the scripted RacecarCircle1 rows are equivalent
    assert not any(s["verdict"] == "faithful" for s in summary.values())
    checks = summary["RacecarCircle1"]["checks"]
    assert {checks[f"scripted/{q}"]["verdict"] for q in ("return", "cost", "length")} == {"equivalent"}
    assert "**Verdict: differs**" in suite_text and "within 1 sd" not in suite_text
    text, comparison = compare.readme(_load("saferl.json"), _load("original.json"), suite)
    assert comparison["margin"] == 0.1 and comparison["level"] == 0.9
    assert comparison["verdicts"]["PointGoal1"]["different"] == ["random/cost"]
    assert comparison["verdicts"]["BallRun"]["checks"]["scripted/return"]["verdict"] == "equivalent"
    assert "| CarButton1 on its other physics ([details](safety_gymnasium.md), physics planar) | differs" in text
    json.dumps(comparison, allow_nan=False)  # strict JSON: no NaN or infinity


# --------------------------------------------------------------------------- perturbed copies and resamples


def test_a_port_that_returns_70_percent_of_the_original_is_different(sides):
    """The original's own scripted episodes with every return scaled by 0.7, against the original: never
    equivalent, and different wherever 30 episodes can show a 30% shift (the original's returns' coefficient of
    variation below 0.4; PointPush1's is 0.62 and AntVelocity's 0.45)."""
    different = {}
    for label, (_, theirs) in sides.items():
        returns = _values(theirs, "scripted", "return")
        v = equivalence.equivalence_verdict(0.7 * returns, returns)
        assert v["verdict"] != "equivalent", label
        different[label] = v["verdict"] == "different"
        if returns.std(ddof=1) / abs(returns.mean()) < 0.4:
            assert v["verdict"] == "different", (label, v)
    assert sum(different.values()) >= len(sides) - 2, different


def test_a_port_with_one_and_a_half_times_the_cost_is_different_where_the_cost_is_steady(sides):
    for label, (_, theirs) in sides.items():
        costs = _values(theirs, "scripted", "cost")
        if costs.mean() == 0 or costs.std(ddof=1) / costs.mean() > 0.5:
            continue
        assert equivalence.equivalence_verdict(1.5 * costs, costs)["verdict"] == "different", label


def test_the_original_against_a_resample_of_itself_is_never_different(sides):
    rng = np.random.default_rng(0)
    seen = 0
    for label, (_, theirs) in sides.items():
        for policy in ("random", "scripted"):
            keys = ["return", "cost", "length", *theirs["policies"][policy]["extras"]]
            for key in keys:
                episodes = _values(theirs, policy, key)
                resample = rng.choice(episodes, episodes.size)
                v = equivalence.equivalence_verdict(resample, episodes)
                assert v["verdict"] != "different", (label, policy, key, v)
                seen += 1
    assert seen > 80


# --------------------------------------------------------------------------- the task's verdict from its quantities


def _side(rng, scale=1.0, n=600, cost_scale=1.0):
    """A (task) dict of one side with both policies: steady returns, costs and one count."""
    import common

    policies = {}
    for policy in ("random", "scripted"):
        returns = scale * rng.gamma(25, 4, n)
        costs = cost_scale * rng.gamma(25, 1, n)
        counts = rng.gamma(25, 0.2, n)[:, None]
        policies[policy] = common.episode_record(returns, costs, [100] * n, counts, ("goals reached",))
    return {"env": "Synthetic", "kwargs": {}, "policies": policies}


def test_a_task_is_faithful_only_when_every_quantity_of_both_policies_is_equivalent(compare):
    rng = np.random.default_rng(1)
    theirs = _side(rng)
    lines, same = compare.task_section("Synthetic", "Synthetic-v0", _side(rng), theirs)
    assert same["verdict"] == "faithful", same["counts"]
    assert same["counts"] == {"equivalent": 8, "inconclusive": 0, "different": 0}
    assert "**Verdict: faithful**" in "\n".join(lines)
    _, costly = compare.task_section("Synthetic", "Synthetic-v0", _side(rng, cost_scale=1.3), theirs)
    assert costly["verdict"] == "differs"
    assert costly["different"] == ["random/cost", "scripted/cost"]
    _, unsure = compare.task_section("Synthetic", "Synthetic-v0", _side(rng, n=8), _side(rng, n=8))
    assert unsure["verdict"] == "inconclusive" and unsure["episodes_needed"] > 8
    row = compare.verdict_cell(unsure)
    assert row.startswith("inconclusive (") and "/8 equivalent" in row


def test_the_rerun_reasons_name_todays_modules(suite_compare):
    """suite_saferl.json records the module names of its run; the write-up names where they are defined now."""
    moved = suite_compare.current_name("saferl.envs.locomotion.match_margin_rule")
    assert moved == "saferl.envs.velocity.gymnasium_models.match_margin_rule"
    module, name = moved.rsplit(".", 1)
    assert hasattr(__import__(module, fromlist=[name]), name)
    assert suite_compare.current_name("saferl.analysis.verdicts.equivalence_verdict") == (
        "saferl.analysis.equivalence.equivalence_verdict"
    )
    assert suite_compare.current_name("saferl.analysis.verdicts.safety_verdict") == (
        "saferl.analysis.verdicts.safety_verdict"
    )
    assert suite_compare.current_name("saferl.not_a_module.anything") == "saferl.not_a_module.anything"

"""ctrpo-table1 and ctrpo-fig3: the paper's numbers, the aggregation math by hand, the claims on the paper's own
numbers, plan() against what the targets train (a fake trainer writes the runs), and a real smoke of both (slow)."""

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from saferl import reproduce
from saferl.reproduce.ctrpo import fig3, table1
from saferl.reproduce.ctrpo import pointgoal as ctrpo_pointgoal
from saferl.training import config as configlib
from saferl.training import run_directory, runs

#: Table 1 of the C-TRPO paper (arXiv:2411.02957) as its text extraction gives it: one line starting
#: "AntVelocity HalfCheetahVelocity", kept as a fixture
PAPER_TABLE1_TEXT = Path(__file__).resolve().parent / "fixtures" / "paper_table1.txt"
PAPER_METHODS = ["C-TRPO", "TRPO-Lag", "CPPO-PID", "P3O", "PCPO", "CPO", "CUP", "FOCOPS", "PPO-Lag", "IPO"]


# --------------------------------------------------------------------------- the paper's numbers


def test_paper_table1_has_every_method_task_and_quantity():
    assert sorted(table1.PAPER_TABLE1) == sorted(PAPER_METHODS)
    for method, quantities in table1.PAPER_TABLE1.items():
        assert list(quantities) == list(table1.QUANTITIES)
        for name, cells in quantities.items():
            assert len(cells) == len(table1.TASKS) == len(table1.PAPER_COLUMNS), (method, name)
            for value, minus, plus in cells:
                assert minus >= 0 and plus >= 0, (method, name, value)
    # the PointGoal column agrees with ctrpo-pointgoal's own transcription of it
    column = table1.TASKS.index("PointGoal1")
    for method, paper in ctrpo_pointgoal.PAPER_POINTGOAL.items():
        assert tuple(table1.PAPER_TABLE1[method][q][column] for q in table1.QUANTITIES) == paper, method


def test_paper_table1_is_the_papers_text():
    line = PAPER_TABLE1_TEXT.read_text().strip()
    assert line.split()[:8] == list(table1.PAPER_COLUMNS)
    names = {"C-TRPO": "C-TRPO (OURS)", "TRPO-Lag": "TRPO-LAG", "PPO-Lag": "PPO-LAG"}
    starts = sorted((line.index(f" {names.get(m, m)} $V_{{r}}$"), m) for m in PAPER_METHODS)
    for (start, method), (end, _) in zip(starts, starts[1:] + [(len(line), None)]):
        cells = [
            (float(v), abs(float(lo)), float(hi))
            for v, lo, hi in re.findall(r"(-?\d+\.\d) ± (-?\d+\.\d)/(\d+\.\d)", line[start:end])
        ]
        ours = [cell for q in table1.QUANTITIES for cell in table1.PAPER_TABLE1[method][q]]
        assert cells == ours, method


def test_paper_fig3_groups_read_from_its_intervals():
    for method, scores in fig3.PAPER_FIG3.items():
        for value, lo, hi in scores:
            assert lo <= value <= hi, method
        (_, lo, hi) = scores[0]
        # the figure's two groups: "probably safe" exactly where the interval lies below 0
        assert (fig3.PAPER_GROUPS[method] == "probably_safe") == (hi < 0.0), method
    three_way = {m: fig3.group_of(s[0][1], s[0][2]) for m, s in fig3.PAPER_FIG3.items()}
    assert {m for m, g in three_way.items() if g == "probably_safe"} == {"C-TRPO", "TRPO-Lag", "P3O", "PCPO"}
    assert [m for m, g in three_way.items() if g == "probably_unsafe"] == ["CUP"]


def test_table1_claims_on_the_papers_numbers():
    ant = table1.task_claims(table1.paper_rows("SafetyAntVelocity"))
    # V_c < 25 on Ant: C-TRPO 18.8, TRPO-Lag 20.8, P3O 21.2, PCPO 17.7; of these P3O has the best V_r (3122.5), its
    # interval reached by C-TRPO's and TRPO-Lag's (so the bold is no decisive claim), and the lowest Reg+ (11.0),
    # its interval below every other's; C-TRPO's V_c [15.6, 25.3] straddles the limit
    assert ant == {
        "C-TRPO final cost vs limit": "undecided",
        "C-TRPO vs CPO, return": "overlapping",
        "C-TRPO vs CPO, cost regret": "below",
        "best return among admissible": "not separated: P3O, C-TRPO, TRPO-Lag",
        "lowest regret among admissible": "P3O",
    }
    goal = table1.task_claims(table1.paper_rows("PointGoal1"))
    # V_c < 25: CPPO-PID 21.8, P3O 17.1, PPO-Lag 22.5 (IPO 25.6 is not); C-TRPO 29.6 [26.4, 45.0] above the limit
    assert goal["C-TRPO final cost vs limit"] == "probably_unsafe"
    assert goal["best return among admissible"] == "not separated: PPO-Lag, CPPO-PID"
    assert goal["lowest regret among admissible"] == "P3O"
    assert goal["C-TRPO vs CPO, cost regret"] == "overlapping"  # [2017.0, 2690.5] against [2255.4, 2738.3]


def _interval_row(label, cost, ret, regret, width=0.5):
    row = {"label": label, "final_cost": cost, "final_return": ret, "cost_regret": regret}
    for name in ("final_cost", "final_return", "cost_regret"):
        spread = 0.0 if name == "cost_regret" and regret == 0.0 else width
        row[f"{name}_lo"], row[f"{name}_hi"] = row[name] - spread, row[name] + spread
    return row


def test_table1_claims_name_no_best_method_where_the_intervals_do_not_separate_one():
    """At --scale cpu every admissible method can have Reg+ 0 on a velocity task: no method has the lowest."""
    rows = [
        _interval_row(*values)
        for values in (("C-TRPO", 3.0, 10.0, 0.0), ("CPO", 4.0, 12.0, 0.0), ("P3O", 2.0, 8.0, 0.0))
    ]
    rows.append(_interval_row("PPO-Lag", 30.0, 20.0, 5.0))  # not admissible: its return and regret do not count
    claims = table1.task_claims(rows)
    assert claims["lowest regret among admissible"] == "not separated: C-TRPO, CPO, P3O"
    assert claims["best return among admissible"] == "CPO"  # 12 [11.5, 12.5] above 10 [9.5, 10.5] and 8
    rows[1]["final_return_lo"] = 10.2  # now reaching C-TRPO's interval: the bold is no decisive claim
    assert table1.task_claims(rows)["best return among admissible"] == "not separated: CPO, C-TRPO"
    rows[2].update(cost_regret=-1.0, cost_regret_lo=-1.5, cost_regret_hi=-0.5)  # not a real regret: a unique minimum
    assert table1.task_claims(rows)["lowest regret among admissible"] == "P3O"


def test_every_fig3_claim_holds_on_the_papers_own_numbers():
    """Sec. 5 states each claim about Fig. 3; read on the paper's own numbers the way ours are read, four are
    decided by its intervals and three are not: CPO's final-cost interval [-0.091, 0.123] straddles 0, C-TRPO's return
    0.654 [0.601, 0.707] against CPO's 0.680 [0.635, 0.730] is not within COMPARABLE_MARGIN (0.1) of it by the
    interval of the difference ([-0.129, 0.071]), nor is its regret PCPO's ([-0.398, 0.016])."""
    claims = fig3.fig3_claims(fig3.paper_rows())
    assert claims == {
        "C-TRPO probably safe, CPO and CUP not": "undecided",
        "C-TRPO's return not below the best other method's": "undecided",
        "C-TRPO's regret below every method of comparable return": "reproduced",
        "TRPO-Lag probably safe, its regret above the other safe methods'": "reproduced",
        "TRPO-Lag, FOCOPS and CUP: regret above C-TRPO's": "reproduced",
        "C-TRPO's regret like PCPO's and above P3O's": "undecided",
        "P3O's return below C-TRPO's": "reproduced",
    }
    # the figure's own grouping, CUP's interval [0.117, 0.440] wholly above 0
    assert fig3.fig3_checks([])["paper_groups"]["CUP"] == "probably_unsafe"


# --------------------------------------------------------------------------- the aggregation math by hand

# per (task, label): per-seed final return, final cost, cost regret; 2 tasks x 3 methods x 2 seeds
VALUES = {
    ("A", "PPO"): ([10.0, 14.0], [40.0, 50.0], [300.0, 500.0]),
    ("A", "CPO"): ([8.0, 11.0], [24.0, 30.0], [100.0, 300.0]),
    ("A", "C-TRPO"): ([9.0, 12.0], [10.0, 20.0], [50.0, 150.0]),
    ("B", "PPO"): ([-1.0, 3.0], [30.0, 26.0], [20.0, 40.0]),
    ("B", "CPO"): ([0.5, 1.5], [25.0, 35.0], [10.0, 20.0]),
    ("B", "C-TRPO"): ([2.0, 2.0], [5.0, 15.0], [0.0, 5.0]),
}


def _entries(values=VALUES):
    return [
        {
            "task": task,
            "label": label,
            "method": label + " (u)",
            "algo": label.lower(),
            "values": dict(zip(table1.QUANTITIES, map(np.array, v))),
        }
        for (task, label), v in values.items()
    ]


def _iqm_interval_by_enumeration(columns):
    """The IQM of the pooled runs and the [min, max] of the IQM over every stratified resample of 2 seeds per task:
    each resample has probability 1/16 > 2.5%, so these are the percentile bootstrap's 2.5 and 97.5% points."""
    pooled = np.concatenate(columns)
    draws = [list(itertools.product(c, repeat=2)) for c in columns]
    values = [stats.trim_mean(np.concatenate(pick), 0.25) for pick in itertools.product(*draws)]
    return stats.trim_mean(pooled, 0.25), min(values), max(values)


def test_normalisers_scores_and_aggregates_by_hand():
    refs = fig3.normalisers(_entries())
    assert refs["A"] == {"ppo_return": 12.0, "cpo_regret": 200.0}  # PPO's mean; CPO's IQM (2 seeds: the mean)
    assert refs["B"] == {"ppo_return": 1.0, "cpo_regret": 15.0}
    scores, excluded = fig3.normalized_scores(_entries(), refs)
    assert excluded == {"normalized_final_cost": {}, "normalized_return": {}, "normalized_regret": {}}
    np.testing.assert_allclose(scores["normalized_final_cost"]["C-TRPO"], [[-0.6, -0.8], [-0.2, -0.4]])
    np.testing.assert_allclose(scores["normalized_return"]["CPO"], [[8 / 12, 0.5], [11 / 12, 1.5]])
    np.testing.assert_allclose(scores["normalized_regret"]["C-TRPO"], [[0.25, 0.0], [0.75, 1 / 3]])
    for field in ("normalized_final_cost", "normalized_return", "normalized_regret"):
        for label in ("PPO", "CPO", "C-TRPO"):
            matrix = scores[field][label]
            expected = _iqm_interval_by_enumeration([matrix[:, 0], matrix[:, 1]])
            np.testing.assert_allclose(fig3.aggregate(matrix, reps=20_000), expected, atol=1e-12)
    # C-TRPO's regret: IQM of {0, 1/4, 1/3, 3/4} is the mean of 1/4 and 1/3
    assert fig3.aggregate(scores["normalized_regret"]["C-TRPO"])[0] == pytest.approx((0.25 + 1 / 3) / 2)


def test_groups_and_the_figures_order():
    scores, _ = fig3.normalized_scores(_entries(), fig3.normalisers(_entries()))
    rows = fig3.fig3_rows(_entries(), scores)
    assert [r["method"] for r in rows] == ["C-TRPO (u)", "CPO (u)", "PPO (u)"]
    groups = {r["label"]: r["group"] for r in rows if "group" in r}
    # C-TRPO's normalised costs are all < 0, PPO's all > 0, CPO's from -0.04 to 0.4: safe, unsafe, undecided
    assert groups == {"C-TRPO": "probably_safe", "CPO": "undecided", "PPO": "probably_unsafe"}
    # the paper's CPO read three-way as ours are: its final-cost interval [-0.091, 0.123] straddles 0 (the figure
    # itself draws it among the unsafe)
    assert rows[1]["paper_group"] == "undecided" and rows[1]["paper_figure_group"] == "probably_unsafe"
    assert rows[1]["paper_normalized_return"] == 0.6802
    # a row of what the paper ran under a method's name (ctrpo_table1.AS_RUN) carries that name's numbers, and the
    # claims read it under that name
    as_run = [
        dict(e, label="IPO (reversed barrier)", method="IPO (reversed barrier)")
        for e in _entries()
        if e["label"] == "CPO"
    ]
    scores, _ = fig3.normalized_scores(_entries() + as_run, fig3.normalisers(_entries()))
    ipo = next(r for r in fig3.fig3_rows(_entries() + as_run, scores) if r["label"] == "IPO (reversed barrier)")
    assert ipo["paper_normalized_regret"] == 1.5257 and ipo["normalized_regret"] == rows[1]["normalized_regret"]
    assert fig3.paper_name("PCPO (step along g)") == "PCPO" and fig3.paper_name("CPO") == "CPO"
    # within a group, by return; a safe method with less return still comes before an undecided one
    shuffled = {k: v for k, v in VALUES.items()}
    shuffled[("A", "C-TRPO")] = ([1.0, 1.0], [10.0, 20.0], [50.0, 150.0])
    scores, _ = fig3.normalized_scores(_entries(shuffled), fig3.normalisers(_entries(shuffled)))
    assert [r["label"] for r in fig3.fig3_rows(_entries(shuffled), scores)][:2] == ["C-TRPO", "CPO"]
    # CPO safe too: C-TRPO's returns 1/12, 1/12, 2, 2 (IQM 1.04) before CPO's 2/3, 11/12, 1/2, 3/2 (IQM 0.79)
    shuffled[("A", "CPO")] = ([8.0, 11.0], [4.0, 10.0], [100.0, 300.0])
    shuffled[("B", "CPO")] = ([0.5, 1.5], [5.0, 10.0], [10.0, 20.0])
    scores, _ = fig3.normalized_scores(_entries(shuffled), fig3.normalisers(_entries(shuffled)))
    ordered = fig3.fig3_rows(_entries(shuffled), scores)
    assert [(r["label"], r["group"]) for r in ordered[:2]] == [("C-TRPO", "probably_safe"), ("CPO", "probably_safe")]
    assert ordered[0]["normalized_return"] == pytest.approx((1 / 12 + 2) / 2)


def test_tasks_without_a_meaningful_reference_are_left_out_and_said():
    values = dict(VALUES)
    values[("B", "PPO")] = ([-1.0, 0.5], [30.0, 26.0], [20.0, 40.0])  # PPO's mean return -0.25
    values[("A", "CPO")] = ([8.0, 11.0], [24.0, 30.0], [0.0, 0.0])  # CPO without regret
    values[("B", "C-TRPO")] = ([2.0, 2.0], [np.nan, 15.0], [0.0, 5.0])  # a seed without a finished episode
    scores, excluded = fig3.normalized_scores(_entries(values), fig3.normalisers(_entries(values)))
    assert set(excluded["normalized_return"]) == {"B"} and "-0.25" in excluded["normalized_return"]["B"]
    assert set(excluded["normalized_regret"]) == {"A"}
    assert excluded["normalized_final_cost"] == {"B": "no final_cost on every seed of C-TRPO"}
    assert scores["normalized_return"]["PPO"].shape == (2, 1)
    np.testing.assert_allclose(scores["normalized_regret"]["CPO"], [[10 / 15], [20 / 15]])
    # with 4 seeds the references differ from other statistics: PPO's mean (not its IQM 10), CPO's IQM (not its mean)
    four = {
        ("A", "PPO"): ([0.0, 10.0, 10.0, 100.0], [30.0] * 4, [1.0] * 4),
        ("A", "CPO"): ([1.0] * 4, [20.0] * 4, [0.0, 10.0, 20.0, 1000.0]),
    }
    assert fig3.normalisers(_entries(four)) == {"A": {"ppo_return": 30.0, "cpo_regret": 15.0}}
    with pytest.raises(ValueError, match="A lacks PPO"):
        fig3.normalisers([e for e in _entries() if e["label"] != "PPO"])


def test_seed_values_regret_is_eq2_over_iterations(tmp_path):
    """Reg+ = sum_k [V_c(k) - 25]_+ per seed; an iteration without a finished episode (NaN) adds nothing."""
    cfg = {"seeds": 2, "seed": 0, "constraint": {"type": "expected", "limit": 25.0}}
    costs = {0: [30.0, np.nan, 20.0, 27.5], 1: [10.0, 40.0, 25.0, 26.0]}
    rows = [
        {
            "iteration": k + 1,
            "env_steps": 100 * (k + 1),
            "seed": s,
            "episode_cost": c[k],
            "episode_return": float(k + s),
            "episodes": 0.0 if np.isnan(c[k]) else 30.0,
        }
        for k in range(4)
        for s, c in costs.items()
    ]
    run_directory.write_progress(tmp_path, rows)
    summary = {"final": {"episode_return": {"per_seed": [1.0, None]}, "episode_cost": {"per_seed": [27.5, 26.0]}}}
    values = table1.seed_values(tmp_path, cfg, summary)
    np.testing.assert_allclose(values["cost_regret"], [5.0 + 2.5, 15.0 + 1.0])
    np.testing.assert_allclose(values["final_return_last10"], [1.0, np.nan])  # summary.json's, the second column

    # the authors' V_r and V_c: the last epoch's mean of the 50-episode rolling means, here reconstructed from the
    # iteration means (30 episodes each; seed 0's second iteration had none)
    def last_epoch(per_iteration):  # SafePO's deque, each episode at its iteration's mean
        episodes = [value for value, count in per_iteration for _ in range(count)]
        return np.mean([np.mean(episodes[max(0, n - 50) : n]) for n in range(len(episodes) - 29, len(episodes) + 1)])

    np.testing.assert_allclose(
        values["final_return"],
        [last_epoch([(0.0, 30), (2.0, 30), (3.0, 30)]), last_epoch([(1.0, 30), (2.0, 30), (3.0, 30), (4.0, 30)])],
    )
    np.testing.assert_allclose(
        values["final_cost"],
        [last_epoch([(30.0, 30), (20.0, 30), (27.5, 30)]), last_epoch([(c, 30) for c in costs[1]])],
    )
    assert values["final_return_source"] == ["reconstructed"] * 2
    # a run with the windowed J_c (the authors' smoothed EpCost, on which their notebooks sum the regret) uses it
    window = {0: [26.0, 28.0, 24.0, 25.0], 1: [20.0, 30.0, 31.0, 22.0]}
    for row in rows:
        row["episode_cost_window"] = window[row["seed"]][row["iteration"] - 1]
    run_directory.write_progress(tmp_path, rows)
    values = table1.seed_values(tmp_path, cfg, summary)
    np.testing.assert_allclose(values["cost_regret"], [1.0 + 3.0, 5.0 + 6.0])
    # and its last value is V_c, as logged (the undiscounted cost: gamma_c defaults to 1)
    np.testing.assert_allclose(values["final_cost"], [25.0, 22.0])
    assert values["final_cost_source"] == ["logged"] * 2
    # a discounted J_c window (gamma_c < 1) is not the authors' EpCost: V_c is reconstructed from the episode costs
    discounted = {**cfg, "constraint": {**cfg["constraint"], "gamma_c": 0.99}}
    values = table1.seed_values(tmp_path, discounted, summary)
    assert values["final_cost_source"] == ["reconstructed"] * 2
    np.testing.assert_allclose(values["final_cost"][1], last_epoch([(c, 30) for c in costs[1]]))


def test_table_rows_iqm_interval_paper_numbers_and_verdicts():
    entries = [dict(e, seeds=2) for e in _entries()]
    for e in entries:
        e["task"] = {"A": "PointGoal1", "B": "SafetyAntVelocity"}[e["task"]]
        if e["label"] == "C-TRPO":  # the row that carries the paper's Table 1 C-TRPO numbers (b_H = b)
            e["label"] = table1.TABLE1_CTRPO
    hyst = {
        **next(e for e in entries if e["label"] == table1.TABLE1_CTRPO and e["task"] == "PointGoal1"),
        "label": "C-TRPO",
        "method": "C-TRPO (hyst)",
    }  # b_H = 0.8 b: Fig. 3's, no Table 1 numbers or claims
    hyst["values"] = {**hyst["values"], "final_cost": np.array([40.0, 50.0])}
    rows = table1.table_rows(entries + [hyst])
    goal = [r for r in rows if r["env"] == "PointGoal1"]
    assert [r["method"] for r in goal] == ["PPO (u)", "CPO (u)", "C-TRPO (u)", "C-TRPO (hyst)"]
    assert goal[2]["paper_final_cost"] == 29.6 and not any(k.startswith("paper_") for k in goal[3])
    cpo = goal[1]
    # two seeds: the IQM is the mean, every bootstrap resample's mean lies in [min, max] and both occur (p = 1/4)
    assert (cpo["final_cost"], cpo["final_cost_lo"], cpo["final_cost_hi"]) == (27.0, 24.0, 30.0)
    assert cpo["safety"] == "undecided" and goal[2]["safety"] == "probably_safe"
    assert (cpo["paper_final_cost"], cpo["paper_final_cost_lo"], cpo["paper_final_cost_hi"]) == pytest.approx(
        (28.2, 24.8, 32.3)
    )
    assert "paper_final_cost" not in goal[0]  # the paper has no PPO row
    pcpo = table1.table_rows([dict(entries[1], label="PCPO (step along g)")])[0]  # what the paper ran as PCPO
    assert (pcpo["paper_final_return"], pcpo["paper_final_cost"]) == (18.8, 28.9)  # Table 1, PCPO on PointGoal
    checks = table1.table1_checks(rows)
    assert checks["PointGoal1"]["C-TRPO final cost vs limit"] == {
        "ours": "probably_safe",
        "paper": "probably_unsafe",
        "agreement": "disagree",
    }
    # on "B": PPO's costs 30 and 26 lie above the limit; C-TRPO (IQM cost 10) is the one admissible method, so
    # ours is decisive; the paper's P3O is not separated from C-TRPO and TRPO-Lag, so the two do not disagree
    assert checks["SafetyAntVelocity"]["safety"]["PPO (u)"] == "probably_unsafe"
    assert checks["SafetyAntVelocity"]["best return among admissible"] == {
        "ours": "C-TRPO",
        "paper": "not separated: P3O, C-TRPO, TRPO-Lag",
        "agreement": "undecided",
    }
    counts = checks["agreement with the paper's Table 1"]
    assert counts["total"] == sum(counts[a] for a in ("agree", "disagree", "undecided")) > 0


# --------------------------------------------------------------------------- the targets on a fake trainer


def _fake_values(env, algo, k, i):
    """(return, cost) of seed index ``i`` at iteration ``k`` (1, 2): the smoke grid's runs, by hand."""
    scale = 2.0 if env == "RacecarCircle1" else 1.0
    if algo == "ppo":
        return scale * (10 + 4 * i) * (k - 1), 40.0 + 10 * i
    if algo == "cpo":
        return scale * (8 + 3 * i) * (k - 1), 30.0 if k == 1 else 24.0 + 6 * i
    return scale * (9 + 3 * i) * (k - 1), 20.0 if k == 1 else 10.0 + 10 * i  # ctrpo


def _fake_train(cfg, run_dir, resume=False, show_progress=True, **_):
    """What runs.train leaves in a run directory (config.yaml, progress.csv, summary.json), from _fake_values."""
    run_dir = Path(run_dir)
    run_directory.write_config(run_dir, cfg)
    per_iteration = cfg["num_envs"] * cfg["rollout_steps"]
    rows = [
        {
            "iteration": k,
            "env_steps": k * per_iteration,
            "seed": seed,
            "episodes": cfg["num_envs"],
            **dict(zip(("episode_return", "episode_cost"), _fake_values(cfg["env"], cfg["algo"], k, i))),
            # the windowed statistics the harness's runs log (constraint.window), here each iteration's own means
            **dict(zip(("episode_return_window", "episode_cost_window"), _fake_values(cfg["env"], cfg["algo"], k, i))),
        }
        for k in range(1, cfg["total_steps"] // per_iteration + 1)
        for i, seed in enumerate(run_directory.seed_ids(cfg))
    ]
    run_directory.write_progress(run_dir, rows)
    timings = {"wall_seconds": 1.0, "compile_seconds": 0.0, "steps_per_second": 1.0}
    return run_directory.write_summary(run_dir, cfg, rows, timings, False)


@pytest.fixture
def fake_training(monkeypatch):
    monkeypatch.setattr(runs, "train", _fake_train)


def _planned(name, out):
    tgt = reproduce.get(name)
    return [(str(run_dir.relative_to(out)), cfg) for run_dir, cfg in tgt.plan(tgt.scale("smoke"), out)]


def test_both_targets_train_their_plan_once_and_tabulate_it(tmp_path, fake_training):
    from saferl.training.provenance import training_config

    first = reproduce.run("ctrpo-table1", "smoke", tmp_path)
    planned = _planned("ctrpo-table1", tmp_path)
    assert len(planned) == 8 and planned == _planned("ctrpo-fig3", tmp_path)
    assert [r["run"] for r in first["runs"]] == [run for run, _ in planned]  # plan() is what the target trains
    assert all(r["status"] == "trained" for r in first["runs"])
    for run, cfg in planned:
        assert training_config(run_directory.load_run_config(tmp_path / run)) == training_config(cfg)
    assert planned[0][0] == "PointGoal1/runs/C-TRPO_1_1-gamma_units"
    # the smoke scale's settings, built independently of the target: 2 iterations of 4 envs x 1000 steps, 2 seeds,
    # actors at the authors' std 1 (milosen/ctrpo common/model.py: log_std zeros)
    # and PyTorch's nn.Linear init (common/model.py); the trust-region methods' Fisher on every sample and critic
    # minibatches of 128 (4 x 1000 / 128 = 31), c-trpo.py / cpo.py
    smoke = {
        "total_steps": 8000,
        "seeds": 2,
        "num_envs": 4,
        "iterations_per_chunk": 1,
        "constraint": {"type": "expected", "limit": 25.0, "window": 50, "window_statistic": "snapshot_mean"},
        "network": {"init_log_std": 0.0, "init": "torch_linear"},
    }
    # every critic with the L2 term 1e-3 (use_critic_norm); the trust-region methods' KL averaged over the action
    # dimensions (kl_divergence(Normal, Normal).mean()); PPO as SafePO's first-order loop: 40 passes of minibatches of
    # 64 (4000 / 64 = 62), the full-batch KL(pi_k || pi) against 0.02 itself, the rate decayed to 0 over the paper's
    # 10M steps (2500 updates of 4000)
    trust_region = {"fvp_subsample": 1, "critic_minibatches": 31, "kl_reduction": "mean_over_action_dims"}
    first_order = {
        "epochs": 40,
        "minibatches": 62,
        "kl_stop_estimate": "full_batch",
        "kl_stop_factor": 1.0,
        "target_kl": 0.02,
        "lr_schedule": "linear",
        "lr_decay_steps": 2500,
        "grad_clip_scope": "joint",
    }
    hysteresis = {"ctrpo": {"hysteresis": 0.8}, "ctrpo_b": {"hysteresis": 1.0}}  # Fig. 3's C-TRPO and Table 1's
    expected = [
        configlib.resolve(
            {
                "algo": algo[:5] if algo.startswith("ctrpo") else algo,
                "env": env,
                **smoke,
                "hparams": {
                    "critic_l2": 1e-3,
                    **(trust_region if algo != "ppo" else first_order),
                    **hysteresis.get(algo, {}),
                },
            }
        )
        for env in ("PointGoal1", "RacecarCircle1")
        for algo in ("ctrpo", "ctrpo_b", "cpo", "ppo")
    ]
    assert [cfg for _, cfg in planned] == expected
    second = reproduce.run("ctrpo-fig3", "smoke", tmp_path)
    assert [r["run"] for r in second["runs"]] == [run for run, _ in planned]
    assert all(r["status"] == "reused" for r in second["runs"])  # one --out: trained once
    for result in (first, second):
        assert all((tmp_path / f).read_bytes()[:4] == b"\x89PNG" for f in result["figures"])

    rows = {(r["env"], r["label"]): r for r in first["rows"]}
    ctrpo, cpo, ppo = (rows[("PointGoal1", m)] for m in ("C-TRPO", "CPO", "PPO"))
    # final = the last of 2 iterations; 2 seeds: IQM = mean, interval = [min, max]; Reg+ = sum_k [c_k - 25]_+
    assert (ctrpo["final_cost"], ctrpo["final_cost_lo"], ctrpo["final_cost_hi"]) == (15.0, 10.0, 20.0)
    assert (cpo["cost_regret"], cpo["cost_regret_lo"], cpo["cost_regret_hi"]) == (7.5, 5.0, 10.0)
    assert (ppo["cost_regret"], ppo["final_return"]) == (40.0, 12.0)
    assert rows[("RacecarCircle1", "C-TRPO")]["final_return"] == 21.0
    # the b_H = 0.8 b C-TRPO (Fig. 3's) carries no Table 1 numbers of the paper; the b_H = b one (Table 1's) does
    assert ctrpo["method"] == "C-TRPO (1/(1-gamma) units)" and "paper_final_cost" not in ctrpo
    assert rows[("PointGoal1", table1.TABLE1_CTRPO)]["paper_final_cost"] == 29.6
    assert first["checks"]["PointGoal1"]["C-TRPO vs CPO, cost regret"] == {
        "ours": "below",
        "paper": "overlapping",
        "agreement": "undecided",  # the paper's overlap decides nothing: neither agreement nor disagreement
    }

    by = {r["label"]: r for r in second["rows"]}
    assert [r["label"] for r in second["rows"]] == ["C-TRPO", "CPO", "PPO"]
    # normalised by PPO's mean return (12, 24) and CPO's regret IQM (7.5 on both): C-TRPO's returns 0.75, 1, 0.75, 1
    assert second["settings"]["normalisers"] == {
        "PointGoal1": {"ppo_return": 12.0, "cpo_regret": 7.5},
        "RacecarCircle1": {"ppo_return": 24.0, "cpo_regret": 7.5},
    }
    assert by["C-TRPO"]["normalized_return"] == pytest.approx(0.875)
    assert by["C-TRPO"]["normalized_final_cost"] == pytest.approx(-0.4)  # (10 - 25) / 25, (20 - 25) / 25 twice
    assert (by["C-TRPO"]["normalized_regret"], by["C-TRPO"]["normalized_regret_hi"]) == (0.0, 0.0)
    assert [by[m]["group"] for m in ("C-TRPO", "CPO", "PPO")] == ["probably_safe", "undecided", "probably_unsafe"]
    assert second["checks"]["C-TRPO's regret below every method of comparable return"] == {
        "ours": "reproduced",
        "paper": "reproduced",
        "agreement": "agree",
    }
    counts = second["checks"]["agreement with the paper's Fig. 3"]
    assert counts["agree"] + counts["disagree"] + counts["undecided"] == counts["total"] >= 1
    assert first["checks"]["budget"]["PointGoal1"]["paper_steps"] == 10_000_000
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["target"] == "ctrpo-fig3" and saved["settings"]["excluded_tasks"]["normalized_regret"] == {}
    kept = json.loads((tmp_path / "results-ctrpo-table1.json").read_text())  # not overwritten by ctrpo-fig3's
    assert kept["target"] == "ctrpo-table1" and kept["rows"] == json.loads(json.dumps(first["rows"]))


def test_the_cpu_plan_trains_every_method_on_every_task_at_its_budget(tmp_path):
    tgt = reproduce.get("ctrpo-table1")
    planned = tgt.plan(tgt.scale("cpu"), tmp_path)
    assert len(planned) == 13 * 8 and len({run_dir for run_dir, _ in planned}) == 104
    for run_dir, cfg in planned:
        assert run_dir.parent.parent.name == cfg["env"] and cfg["seeds"] == 5
        assert (cfg["num_envs"], cfg["rollout_steps"]) == (10, 2000)  # the authors' num_envs, steps_per_epoch 20k
        assert cfg["total_steps"] == table1.CPU_STEPS[cfg["env"]] and cfg["total_steps"] % 20_000 == 0
        assert (cfg["constraint"]["type"], cfg["constraint"]["limit"]) == ("expected", 25.0)
        # J_c: the epoch's mean of SafePO's 50-episode deque means (logger.get_stats("Metrics/EpCost"))
        assert (cfg["constraint"]["window"], cfg["constraint"]["window_statistic"]) == (50, "snapshot_mean")
        assert cfg["network"]["actor_hidden"] == [64, 64] and cfg["normalize_observations"]
        assert cfg["network"]["init_log_std"] == 0.0  # the authors' actors start at std 1 (common/model.py)
        assert cfg["network"]["init"] == "torch_linear"  # their plain nn.Linear layers
        assert cfg["hparams"]["critic_l2"] == 1e-3  # their use_critic_norm
        hp = cfg["hparams"]
        if cfg["algo"] in ("ctrpo", "cpo", "pcpo", "trpo_lag", "trpo"):  # their fvp_obs[::1], critic batch 128
            assert (hp["fvp_subsample"], hp["critic_minibatches"]) == (1, 156)  # 20,000 // 128
            assert hp["kl_reduction"] == "mean_over_action_dims"  # kl_divergence(Normal, Normal).mean()
        else:  # SafePO's loop: 40 passes of 20,000 // 64 minibatches, KL(pi_k || pi) > 0.02 stops, LinearLR to 0
            assert "fvp_subsample" not in hp
            assert (
                hp["epochs"],
                hp["minibatches"],
                hp["kl_stop_estimate"],
                hp["kl_stop_factor"],
                hp["target_kl"],
                hp["lr_schedule"],
                hp["grad_clip_scope"],
            ) == (40, 312, "full_batch", 1.0, 0.02, "linear", "joint")
            assert hp["lr_decay_steps"] == 500  # LinearLR's total_iters = their 500 epochs, whatever the budget
        if "lagrange_init" in hp:  # lagrangian_multiplier_init
            assert hp["lagrange_init"] == 0.001
    by_method = {run_dir.name: cfg["hparams"] for run_dir, cfg in planned if run_dir.parent.parent.name == "PointGoal1"}
    assert (
        by_method["C-TRPO_1_1-gamma_units"]["hysteresis"],
        by_method["C-TRPO_b_H_b_1_1-gamma_units"]["hysteresis"],
    ) == (0.8, 1.0)  # Fig. 3's runs and Table 1's
    assert (by_method["P3O"]["kappa"], by_method["P3O"]["cost_advantage"]) == (10.0, "centred")
    assert (by_method["CUP"]["multiplier_max"], by_method["CUP"]["projection_epochs"]) == (0.2, 40)
    focops = by_method["FOCOPS_in-bound_fraction"]
    assert (
        focops["lagrange_optimizer"],
        focops["lagrange_lr"],
        focops["advantage_scaling"],
        focops["indicator_scope"],
    ) == ("adam", 0.035, "one_plus_nu", "in_bound_fraction")
    # what the paper ran as PCPO and IPO (SafePO's pcpo.py, ipo.py), labelled so
    assert by_method["PCPO_step_along_g_OmniSafe_units"]["reward_direction"] == "fisher_product"
    assert by_method["IPO_reversed_barrier"]["barrier_form"] == "reversed_sign"
    assert {cfg["algo"] for _, cfg in planned} == {algo for _, algo, _ in table1.METHODS}
    assert [table1.task_steps(tgt.scale("full"), task) for task in table1.TASKS] == [10_000_000] * 8


def test_ctrpo_pointgoal_plan_is_what_it_trains(tmp_path, fake_training):
    result = reproduce.run("ctrpo-pointgoal", "smoke", tmp_path)
    assert [r["run"] for r in result["runs"]] == [run for run, _ in _planned("ctrpo-pointgoal", tmp_path)]
    assert reproduce.get("ctrpo-fig2").plan is None  # a target without training runs declares none


# --------------------------------------------------------------------------- real training (make test-slow)


@pytest.fixture(scope="module")
def smoke_out(tmp_path_factory):
    return tmp_path_factory.mktemp("ctrpo_benchmark")


@pytest.mark.slow
def test_table1_smoke_trains_the_grid(smoke_out):
    result = reproduce.run("ctrpo-table1", "smoke", smoke_out)
    assert [r["status"] for r in result["runs"]] == ["trained"] * 8
    for row in result["rows"]:
        if "final_cost" in row:
            assert row["final_cost_lo"] <= row["final_cost"] <= row["final_cost_hi"] and row["cost_regret"] >= 0


@pytest.mark.slow
def test_fig3_smoke_reuses_table1s_runs(smoke_out):
    if not (smoke_out / "PointGoal1" / "runs").is_dir():
        reproduce.run("ctrpo-table1", "smoke", smoke_out)
    result = reproduce.run("ctrpo-fig3", "smoke", smoke_out)
    assert [r["status"] for r in result["runs"]] == ["reused"] * 8
    assert {r["label"] for r in result["rows"]} == {"C-TRPO", "CPO", "PPO"}  # b_H = b: Table 1's
    assert (smoke_out / "ctrpo_fig3.png").read_bytes()[:4] == b"\x89PNG"


def test_reproduce_only_trains_the_matching_planned_runs_and_the_target_reuses_them(tmp_path, fake_training, capsys):
    from saferl import cli

    argv = ["reproduce", "ctrpo-table1", "--scale", "smoke", "--out", str(tmp_path)]
    assert cli.main([*argv, "--only", "RacecarCircle1/runs/C-TRPO_1*,PointGoal1/runs/PPO"]) == 0
    trained = sorted(str(p.parent.relative_to(tmp_path)) for p in tmp_path.glob("*/runs/*/summary.json"))
    assert trained == ["PointGoal1/runs/PPO", "RacecarCircle1/runs/C-TRPO_1_1-gamma_units"]
    assert not (tmp_path / "results.json").exists()  # a part of the plan makes no table
    result = reproduce.run("ctrpo-table1", "smoke", tmp_path)
    status = {r["run"]: r["status"] for r in result["runs"]}
    assert [run for run, s in status.items() if s == "reused"] == [
        "PointGoal1/runs/PPO",
        "RacecarCircle1/runs/C-TRPO_1_1-gamma_units",
    ]
    assert cli.main([*argv, "--only", "Hopper*"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'Hopper*' matches none of the 8 planned runs" in err[0]

"""benchmarks/authors_at_budget.py: the authors' published runs read at a budget as their notebook reads them."""

import numpy as np
from bench_scripts import load_benchmark_script


def _rows(costs, returns=None, epoch=20_000):
    returns = returns or [float(i) for i in range(len(costs))]
    return [
        {"Train/TotalSteps": str(epoch * (i + 1)), "Metrics/EpCost": str(c), "Metrics/EpRet": str(r)}
        for i, (c, r) in enumerate(zip(costs, returns))
    ]


def test_values_at_the_nearest_epoch_with_the_regret_summed_up_to_it():
    script = load_benchmark_script("authors_at_budget")
    rows = _rows([30.0, 20.0, 40.0, 26.0])  # epochs at 20k, 40k, 60k, 80k; violations 5, 0, 15, 1
    assert script.seed_values_at(rows, 58_000) == (60_000, 2.0, 40.0, 20.0)  # nearest epoch 60k: 5 + 0 + 15
    assert script.seed_values_at(rows, 10_000_000) == (80_000, 3.0, 26.0, 21.0)  # past the end: the last epoch
    assert script.seed_values_at(rows, 1) == (20_000, 0.0, 30.0, 5.0)


def test_entries_take_each_tasks_own_budget():
    script = load_benchmark_script("authors_at_budget")
    runs = {("TaskA", "CPO"): [_rows([10.0, 30.0]), _rows([40.0, 50.0])], ("TaskB", "CPO"): [_rows([26.0, 27.0])]}
    entries, read_at = script.entries_at(runs, {"TaskA": 20_000, "TaskB": 40_000})
    assert read_at == {"TaskA": 20_000, "TaskB": 40_000}
    by = {e["task"]: e["values"] for e in entries}
    np.testing.assert_allclose(by["TaskA"]["cost_regret"], [0.0, 15.0])
    np.testing.assert_allclose(by["TaskB"]["cost_regret"], [3.0])
    np.testing.assert_allclose(by["TaskA"]["final_cost"], [10.0, 40.0])


def test_task_ids_are_the_authors_folder_names():
    script = load_benchmark_script("authors_at_budget")
    assert script.authors_task_id("SafetyAntVelocity") == "SafetyAntVelocity-v1"
    assert script.authors_task_id("PointGoal1") == "SafetyPointGoal1-v0"


def test_best_of_claims_name_the_rows_labels_not_the_papers_names():
    script = load_benchmark_script("authors_at_budget")
    assert script.with_row_labels("not separated: C-TRPO, PCPO, CPO") == (
        "not separated: C-TRPO (b_H = b), PCPO (step along g), CPO"
    )
    assert script.with_row_labels("IPO") == "IPO (reversed barrier)"
    assert script.with_row_labels("TRPO-Lag") == "TRPO-Lag"
    assert script.with_row_labels(None) is None


def test_authors_runs_rank_test_is_the_exact_two_sided_mann_whitney():
    import itertools

    script = load_benchmark_script("authors_runs")  # its sibling import: the loader puts benchmarks/ on sys.path

    def brute_force(mine, theirs):  # every split of the ten ranks into 5 and 5, as extreme in U as the one seen
        u = lambda a, b: sum(x > y for x in a for y in b)  # noqa: E731
        pooled, observed = mine + theirs, abs(u(mine, theirs) - 12.5)
        splits = list(itertools.combinations(range(10), 5))
        extreme = sum(
            abs(u([pooled[i] for i in s], [pooled[i] for i in range(10) if i not in s]) - 12.5) >= observed
            for s in splits
        )
        return extreme / len(splits)

    for mine, theirs in [
        ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
        ([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]),
        ([1, 2, 3, 6, 9], [4, 5, 7, 8, 10]),
    ]:
        assert script.rank_test(mine, theirs) == f"{brute_force(mine, theirs):.2f}"


def test_fig3_leave_out_refuses_unknown_tasks_and_missing_runs(tmp_path):
    """benchmarks/fig3_leave_out.py: a task that is not one of Table 1's, and a method without a finished run on a
    task kept, end in one line naming them (before any bootstrap)."""
    import pytest

    leave_out = load_benchmark_script("fig3_leave_out")
    with pytest.raises(SystemExit, match="Racecar1"):
        leave_out.main([str(tmp_path), str(tmp_path), "--leave-out", "Racecar1"])
    (tmp_path / "PointGoal1" / "runs" / "C-TRPO_1_1-gamma_units").mkdir(parents=True)  # unfinished: no summary.json
    with pytest.raises(SystemExit, match="no finished run of 'C-TRPO'"):
        leave_out.our_entries(tmp_path, ["PointGoal1"])

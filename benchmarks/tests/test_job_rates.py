"""benchmarks/job_rates.py: the measured training rates of a target's runs and the job-hours they imply."""

import json
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script


def _module():
    return load_benchmark_script("job_rates")


def _summary(path: Path, rate: float, seeds=5, compile_seconds=8.0, interrupted=False):
    path.mkdir(parents=True)
    (path / "summary.json").write_text(
        json.dumps(
            {"seeds": seeds, "steps_per_second": rate, "interrupted": interrupted, "compile_seconds": compile_seconds}
        )
    )


def test_job_hours_are_seeds_times_budget_over_the_rate_plus_the_compile(tmp_path):
    job_rates = _module()
    _summary(tmp_path / "TaskA" / "runs" / "CPO", rate=500.0)
    _summary(tmp_path / "TaskA" / "runs" / "PPO", rate=2000.0, seeds=2, compile_seconds=4.0)
    _summary(tmp_path / "TaskA" / "runs" / "C-TRPO", rate=1.0, interrupted=True)  # not finished: left out
    _summary(tmp_path / "TaskB" / "runs" / "CPO", rate=100.0, compile_seconds=0.0)
    _summary(tmp_path / "runs" / "beta_sweep", rate=1.0)  # an in-program sweep: not a job of the benchmark
    rates = job_rates.finished_rates(tmp_path)
    assert {task: sorted(m) for task, m in rates.items()} == {"TaskA": ["CPO", "PPO"], "TaskB": ["CPO"]}
    rows, totals = job_rates.table(rates, budget=1000)
    by_task = {row["task"]: row for row in rows}
    cpo_a, ppo_a, cpo_b = (5 * 1000 / 500 + 8) / 3600, (2 * 1000 / 2000 + 4) / 3600, (5 * 1000 / 100) / 3600
    assert by_task["TaskA"]["job_hours"] == pytest.approx(cpo_a + ppo_a)
    assert by_task["TaskA"]["median_rate"] == pytest.approx(1250.0)
    assert by_task["TaskA"]["median_job_hours"] == pytest.approx((cpo_a + ppo_a) / 2)
    assert totals["job_hours"] == pytest.approx(cpo_a + ppo_a + cpo_b)
    assert totals["runs"] == 3


def test_bad_input_is_one_line_naming_the_value(tmp_path, capsys):
    job_rates = _module()
    assert job_rates.main([str(tmp_path), "--budget", "0"]) == 2
    assert "--budget 0" in capsys.readouterr().err
    assert job_rates.main([str(tmp_path)]) == 2
    assert "no finished run in" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("not json")
    assert job_rates.main([str(tmp_path / "notes.txt")]) == 2
    assert "is not a results.json" in capsys.readouterr().err


def test_a_results_json_gives_the_rate_over_the_whole_wall_time(tmp_path):
    job_rates = _module()
    runs = [
        {"run": "TaskA/runs/CPO", "seeds": 5, "env_steps": 1000, "wall_seconds": 10.0},
        {"run": "TaskA/runs/PPO", "seeds": 2, "env_steps": 3000, "wall_seconds": 4.0},
        {"run": "runs/beta_sweep", "seeds": 3, "env_steps": 1000, "wall_seconds": 1.0},
    ]  # a sweep: left out
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"runs": runs}))
    rates = job_rates.results_rates(path)
    assert sorted(rates["TaskA"]) == ["CPO", "PPO"] and list(rates) == ["TaskA"]
    assert rates["TaskA"]["CPO"]["rate"] == pytest.approx(500.0)
    assert rates["TaskA"]["PPO"]["rate"] == pytest.approx(1500.0)
    rows, totals = job_rates.table(rates, budget=1000)
    assert totals["job_hours"] == pytest.approx((5 * 1000 / 500 + 2 * 1000 / 1500) / 3600)

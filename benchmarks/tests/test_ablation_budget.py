"""benchmarks/ablation_budget.py: an Ant sweep target at another budget, under its own scale name."""

import pytest
from bench_scripts import load_benchmark_script

from saferl.reproduce import framework
from saferl.reproduce.ctrpo import ablations as ctrpo_ablations


def test_the_budget_scale_is_the_cpu_scale_with_other_steps_and_its_own_name():
    budget = load_benchmark_script("ablation_budget")
    target = framework.get("ctrpo-beta")
    name = budget.add_budget_scale(target, 160_000)
    try:
        assert name == "cpu-160k" and name not in framework.SCALE_NAMES  # never read as the cpu table
        scale, cpu = target.scale(name), target.scale("cpu")
        cfg, cpu_cfg = (ctrpo_ablations.sweep_config("beta", s) for s in (scale, cpu))
        assert cfg["total_steps"] == 160_000 and cpu_cfg["total_steps"] == ctrpo_ablations.CPU_SWEEP_STEPS
        # everything else is the cpu scale's: the same values, seeds, envs and hyper-parameters
        assert {k: v for k, v in cfg.items() if k != "total_steps"} == {
            k: v for k, v in cpu_cfg.items() if k != "total_steps"
        }
        assert scale.wall_s == pytest.approx(6 * 3 * 160_000 / ctrpo_ablations.ANT_SWEEP_STEPS_PER_SECOND)
    finally:
        del target.scales[name]


def test_bad_input_is_one_line_naming_the_value(tmp_path, capsys):
    budget = load_benchmark_script("ablation_budget")
    assert budget.main(["ctrpo-phi", "--steps", "16000", "--out", str(tmp_path / "a")]) == 2
    assert "'ctrpo-phi' is not an Ant sweep" in capsys.readouterr().err
    assert budget.main(["ctrpo-beta", "--steps", "1000", "--out", str(tmp_path / "b")]) == 2
    assert "--steps 1000 must be a positive multiple of 16,000" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # nothing written

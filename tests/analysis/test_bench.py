"""``saferl bench``: grid parsing, the seed-scaling arithmetic and one tiny end-to-end run."""

import json

import pytest

from saferl import cli
from saferl.analysis import bench


def test_parse_grid_reads_envs_by_seeds_and_names_bad_entries():
    assert bench.parse_grid("16x1, 1024X8") == [(16, 1), (1024, 8)]
    with pytest.raises(ValueError, match="'16-1'"):
        bench.parse_grid("16-1")
    with pytest.raises(ValueError, match="'0x4'"):
        bench.parse_grid("0x4")


def test_seed_scaling_against_hand_computation():
    rows = [
        {"algo": "ppo", "env": "B", "num_envs": 16, "seeds": 1, "steps_per_second": 9.0, "compile_seconds": 1.0},
        {"algo": "ppo", "env": "A", "num_envs": 16, "seeds": 1, "steps_per_second": 1000.0, "compile_seconds": 10.0},
        {"algo": "ppo", "env": "A", "num_envs": 16, "seeds": 8, "steps_per_second": 4000.0, "compile_seconds": 20.0},
    ]
    (s,) = bench.seed_scaling(rows)  # the 8-seed run of A is compared with A's one-seed run, not B's
    assert s["throughput_ratio"] == pytest.approx(4.0)
    # together: 20 + 8e6 / 4000 = 2020 s; apart: 8 * (10 + 1e6 / 1000) = 8080 s
    assert s["time_ratio_1M_steps"] == pytest.approx(2020 / 8080)


def test_env_list_and_group_expand_and_a_bad_name_is_a_one_line_cli_error(capsys):
    assert bench.parse_envs("PointGoal1, IcyLake") == ["PointGoal1", "IcyLake"]
    group = bench.parse_envs("ctrpo-benchmark")
    assert len(group) == 8 and "SafetyHopperVelocity" in group and "PointPush1" in group
    assert cli.main(["bench", "--env", "PointGoal1,PointGoal2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'PointGoal2'" in err[0]


def test_bad_grid_is_a_one_line_cli_error(capsys):
    assert cli.main(["bench", "--grid", "16by1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "16by1" in err[0]


@pytest.mark.slow  # two training compiles; make test-slow
def test_bench_runs_a_tiny_grid_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    result = bench.main(
        env="IcyLake",
        algo="ppo",
        quick=True,
        out=out,
        grid="4x1,4x2",
        env_grid="4x1",
        overrides={
            "rollout_steps": 32,
            "network": {"actor_hidden": [8], "critic_hidden": [8]},
            "hparams": {"epochs": 1, "minibatches": 1},
        },
    )
    saved = json.loads(out.read_text())
    assert [(r["num_envs"], r["seeds"]) for r in saved["training"]] == [(4, 1), (4, 2)]
    assert all(r["steps_per_second"] > 0 for r in result["training"])
    assert saved["seed_scaling"][0]["seeds"] == 2

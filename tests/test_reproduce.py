"""The reproduce framework: results.json format and the foundation target at smoke scale."""

import json

import pytest

from saferl import reproduce


def test_foundation_pointgoal_smoke(tmp_path):
    result = reproduce.run("foundation-pointgoal", "smoke", tmp_path)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["target"] == "foundation-pointgoal" and saved["scale"] == "smoke"
    assert saved["wall_seconds"] > 0
    assert [row["method"] for row in saved["rows"]] == ["PPO", "PPO-Lag"]
    for row in saved["rows"]:
        for key in ("final_return", "final_cost", "cost_regret", "final_cost_lo", "final_cost_hi", "seeds"):
            assert key in row
        assert row["final_cost_lo"] <= row["final_cost"] <= row["final_cost_hi"]
        assert row["cost_regret"] >= 0.0
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # a second call reuses the finished runs instead of training again
    again = reproduce.run("foundation-pointgoal", "smoke", tmp_path)
    assert again["rows"] == result["rows"]


def test_unknown_scale_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown scale"):
        reproduce.run("foundation-pointgoal", "galactic", tmp_path)


def test_reusing_a_run_written_before_a_config_key_existed_is_said(tmp_path, capsys):
    import json

    from saferl import config as configlib
    from saferl.reproduce.common import train_or_resume

    cfg = configlib.resolve({"algo": "canary", "env": "IcyLake"})
    old = {**cfg, "constraint": {k: v for k, v in cfg["constraint"].items() if k != "finite_horizon"}}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(configlib.dump(old))
    (run_dir / "summary.json").write_text(json.dumps({"interrupted": False, "marker": 1}))
    assert train_or_resume(cfg, run_dir, show_progress=False)["marker"] == 1
    assert "constraint.finite_horizon" in capsys.readouterr().err

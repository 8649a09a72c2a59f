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


def test_a_cpo_run_from_before_cost_scale_is_not_taken_for_todays_cpo(tmp_path):
    """It was trained with the episode scale; today's CPO defaults to per_sample (runs.LEGACY_VALUES)."""
    import json

    from saferl import config as configlib, runs
    from saferl.reproduce.common import train_or_resume

    cfg = configlib.resolve({"algo": "cpo", "env": "ToyReach"})
    assert cfg["hparams"]["cost_scale"] == "per_sample"
    old = {**cfg, "hparams": {k: v for k, v in cfg["hparams"].items() if k != "cost_scale"}}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(configlib.dump(old))
    (run_dir / "summary.json").write_text(json.dumps({"interrupted": False}))
    with pytest.raises(runs.RunError, match="another config"):
        train_or_resume(cfg, run_dir, show_progress=False)


def test_ctrpo_pointgoal_checks_and_methods():
    from saferl.reproduce import ctrpo

    labels = [label for label, _, _ in ctrpo.POINTGOAL_METHODS]
    assert len(set(labels)) == len(labels)
    assert {"C-TRPO", "CPO", "PCPO", "TRPO-Lag", "PPO-Lag", "TRPO"} <= set(labels)
    rows = [{"method": "C-TRPO", "cost_regret": 1000.0, "final_return": 8.0, "within_limit": True},
            {"method": "CPO", "cost_regret": 1300.0, "final_return": 11.0, "within_limit": False},
            {"method": "CPO+margin", "cost_regret": 900.0, "final_return": -1.0, "within_limit": True}]
    checks = ctrpo.pointgoal_checks(rows)
    assert checks["within_limit_plus_10pct"] == {"C-TRPO": True, "CPO": False, "CPO+margin": True}
    assert checks["ctrpo_regret_below_CPO"] is True and checks["ctrpo_regret_below_CPO+margin"] is False
    assert checks["ctrpo_return_over_CPO_return"] == pytest.approx(8.0 / 11.0)
    assert checks["ctrpo_return_over_CPO+margin_return"] is None  # no ratio against a non-positive return
    rows += [{"method": "C-TRPO (no hyst.)", "cost_regret": 1100.0, "final_return": 9.0, "within_limit": False},
             {"method": "CPO (hyst.)", "cost_regret": 1200.0, "final_return": 9.0, "within_limit": True}]
    checks = ctrpo.pointgoal_checks(rows)
    assert checks["ctrpo_no_hyst_regret_below_CPO (hyst.)"] is True
    assert checks["ctrpo_return_over_CPO (hyst.)_return"] == pytest.approx(8.0 / 9.0)
    assert "ctrpo_no_hyst_regret_below_CPO" not in checks

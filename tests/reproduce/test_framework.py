"""The reproduce framework: every target's smoke scale and its results.json, declarations, provenance."""

import json
import subprocess
from pathlib import Path

import pytest

from saferl import reproduce
from saferl.analysis import plotting, verdicts
from saferl.reproduce import deep_rl, framework
from saferl.training import provenance

RUN_KEYS = {"run", "status", "reused", "algo", "env", "seeds", "env_steps", "wall_seconds", "config_hash", "git_commit"}
TRAINS_RUNS = {
    "foundation-pointgoal",
    "ctrpo-pointgoal",
    "canary-table1",
    "canary-fig5",
    "canary-theorem42",
    "scpo-fig5",
    "scpo-cartsafe",
    "scpo-fig15",
    "safety-demo",
}


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("smoke")


#: smoke runs that repeat a program kind another test compiles (SCPO on a ball task: scpo-fig5; Canary on IcyLake:
#: test_canary; PPO-Lag: test_ppo), run by make test-slow (docs/decisions/020-slow-test-marker.md)
SLOW_SMOKES = {
    "scpo-cartsafe",
    "scpo-fig15",
    "canary-fig5",
    "canary-theorem42",
    "safety-demo",
    "foundation-pointgoal",
    "canary-table1",  # canary-fig2's machinery on more methods
    "ctrpo-pointgoal",  # ctrpo-table1's, tested in its own file
}
# targets whose end-to-end smoke is their own test file's (a shared out dir, so that the second reuses the first's
# runs): tests/reproduce/ctrpo/test_ctrpo_benchmark.py, tests/reproduce/ctrpo/test_ctrpo_ablations.py
OWN_SMOKES = {"ctrpo-table1", "ctrpo-fig3", "ctrpo-beta", "ctrpo-hysteresis", "ctrpo-cost-noise", "ctrpo-phi"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SMOKES else n
        for n in sorted(reproduce.targets())
        if n not in OWN_SMOKES
    ],
)
def test_smoke_scale_writes_results_json_and_a_figure(name, smoke_dir):
    out = smoke_dir / name
    result = reproduce.run(name, "smoke", out)
    saved = json.loads((out / "results.json").read_text())
    assert list(saved)[:9] == [
        "target",
        "scale",
        "wall_seconds",
        "git_commit",
        "rows",
        "checks",
        "runs",
        "runs_training_seconds",
        "figures",
    ]
    assert saved["target"] == name and saved["scale"] == "smoke"
    assert saved["wall_seconds"] > 0
    assert saved["git_commit"] == provenance.git_commit() or saved["git_commit"] is None
    assert saved["rows"] and all(isinstance(row, dict) for row in saved["rows"])
    assert saved["checks"] and all(isinstance(key, str) for key in saved["checks"])
    assert saved["checks"] == json.loads(
        json.dumps(reproduce.get(name).judge(saved["rows"], saved["runs"]), default=lambda v: v.item())
    )
    assert (name in TRAINS_RUNS) == bool(saved["runs"])
    for entry in saved["runs"]:
        assert RUN_KEYS <= set(entry), entry
        assert entry["status"] == "trained" and entry["reused"] is False
        assert (out / entry["run"] / "summary.json").is_file()
        assert entry["wall_seconds"] > 0 and len(entry["config_hash"]) == 16
        # trained by this very code: nothing of the library changed since (None outside a git checkout)
        assert entry["code_changes_since_training"] in ([], None) or entry["git_commit"].endswith("-dirty")
        summary = json.loads((out / entry["run"] / "summary.json").read_text())
        assert entry["config_hash"] == summary.get("config_hash", entry["config_hash"])
    assert saved["runs_training_seconds"] == pytest.approx(sum(r["wall_seconds"] for r in saved["runs"]))
    assert saved["figures"]
    for figure in saved["figures"]:
        assert (out / figure).read_bytes()[:4] == b"\x89PNG"
    assert result["target"] == name and result["checks"].keys() == saved["checks"].keys()


def test_foundation_pointgoal_rows_and_reuse(smoke_dir):
    """The smoke run above again: its rows, and a second call reuses the finished runs, saying so."""
    out = smoke_dir / "foundation-pointgoal"
    if not (out / "results.json").is_file():
        reproduce.run("foundation-pointgoal", "smoke", out)
    first = json.loads((out / "results.json").read_text())
    assert [row["method"] for row in first["rows"]] == ["PPO-Lag (option: multiplier lr 0.1)"]  # smoke: PPO-Lag only
    for row in first["rows"]:
        for key in ("final_return", "final_cost", "cost_regret", "final_cost_lo", "final_cost_hi", "seeds"):
            assert key in row
        assert row["final_cost_lo"] <= row["final_cost"] <= row["final_cost_hi"]
        assert row["cost_regret"] >= 0.0
        assert row["safety"] == verdicts.safety_verdict(row["final_cost_lo"], row["final_cost_hi"], 25.0)
    assert set(first["checks"]) == {"safety"}
    from saferl.reproduce import foundation_pointgoal

    both = [
        dict(first["rows"][0], algo="ppo", method="PPO", cost_regret=first["rows"][0]["cost_regret"] + 1.0),
        first["rows"][0],
    ]
    assert foundation_pointgoal.checks(both)["ppo_lag_regret_below_ppo"] is True
    again = reproduce.run("foundation-pointgoal", "smoke", out)
    assert json.loads(json.dumps(again["rows"])) == first["rows"]
    assert [r["status"] for r in again["runs"]] == ["reused"] and all(r["reused"] for r in again["runs"])
    assert [r["config_hash"] for r in again["runs"]] == [r["config_hash"] for r in first["runs"]]
    assert again["runs_training_seconds"] == pytest.approx(first["runs_training_seconds"])


def test_unknown_scale_is_rejected_with_the_targets_scales(tmp_path):
    with pytest.raises(
        ValueError, match="unknown scale 'galactic' for foundation-pointgoal; its scales: smoke, demo, cpu, full"
    ):
        reproduce.run("foundation-pointgoal", "galactic", tmp_path)
    assert not any(tmp_path.iterdir())


def test_unknown_target_and_unsupported_option(tmp_path):
    with pytest.raises(ValueError, match="unknown reproduce target 'nope'; known targets: canary-fig2"):
        reproduce.run("nope", "smoke", tmp_path)
    with pytest.raises(ValueError, match="does not support --tune"):
        reproduce.run("ctrpo-fig2", "smoke", tmp_path, tune=True)


def test_tasks_narrow_a_scale_that_lists_tasks_and_are_recorded(tmp_path, monkeypatch):
    table1 = reproduce.get("ctrpo-table1")
    narrowed = table1.scale("cpu", ["RacecarCircle1", "CarButton1"])
    assert narrowed["tasks"] == ["CarButton1", "RacecarCircle1"]  # the target's order, not the caller's
    assert table1.scale("cpu")["tasks"] != narrowed["tasks"] and "only CarButton1, RacecarCircle1" in narrowed.note
    planned = {Path(run_dir).relative_to(tmp_path).parts[0] for run_dir, _ in table1.plan(narrowed, tmp_path)}
    assert planned == {"CarButton1", "RacecarCircle1"}
    with pytest.raises(ValueError, match="--tasks 'Nope': ctrpo-table1 at scale cpu trains on .*PointGoal1"):
        table1.scale("cpu", ["Nope"])
    with pytest.raises(ValueError, match="has no list of tasks to choose from"):
        reproduce.run("foundation-pointgoal", "smoke", tmp_path / "none", tasks=["PointGoal1"])
    assert not (tmp_path / "none").exists()

    def listed(scale, out):
        plotting.save_figure(plotting.pyplot().figure(), out / "f.png", dpi=20)
        return {"rows": [{"task": t} for t in scale["tasks"]], "figures": ["f.png"]}

    monkeypatch.setattr(framework, "_TARGETS", dict(framework._TARGETS))
    scales = {"smoke": reproduce.Scale(steps=1, seeds=1, wall_s=1, params={"tasks": ["A", "B", "C"]})}
    _declare("t-tasks", scales=scales, checks=lambda rows: {"n": len(rows)})(listed)
    saved = reproduce.run("t-tasks", "smoke", tmp_path / "some", tasks=["C", "A"])
    assert [r["task"] for r in saved["rows"]] == ["A", "C"] and saved["only_tasks"] == ["A", "C"]
    assert "only_tasks" not in reproduce.run("t-tasks", "smoke", tmp_path / "all")


def test_every_target_declares_its_scales_as_data():
    for name, tgt in reproduce.targets().items():
        assert "smoke" in tgt.scales and tgt.checks, name
        assert list(tgt.scales) == [s for s in framework.SCALE_NAMES if s in tgt.scales]
        for scale_name, scale in tgt.scales.items():
            assert scale.name == scale_name and scale.describe()
    shared = deep_rl.SCALES
    for name in ("foundation-pointgoal", "ctrpo-pointgoal", "canary-table1"):
        scales = reproduce.get(name).scales
        for scale_name in ("demo", "cpu"):
            assert (scales[scale_name].steps, scales[scale_name].seeds) == (
                shared[scale_name]["steps"],
                shared[scale_name]["seeds"],
            )


def _declare(name, **kw):
    kw.setdefault("scales", {"smoke": reproduce.Scale(steps=1, seeds=1, wall_s=1)})
    return framework.target(name, "test target", **kw)


def test_declarations_are_validated():
    with pytest.raises(ValueError, match="has a 'smoke' scale"):
        _declare("t-nosmoke", scales={"cpu": reproduce.Scale(steps=1, seeds=1, wall_s=1)})
    with pytest.raises(ValueError, match="unknown scale name"):
        _declare("t-typo", scales={"smoke": reproduce.Scale(1, 1, 1), "ful": reproduce.Scale(1, 1, 1)})
    with pytest.raises(ValueError, match="steps must be a positive int"):
        _declare("t-steps", scales={"smoke": reproduce.Scale(steps=0, seeds=1, wall_s=1)})
    with pytest.raises(ValueError, match="declared twice"):
        _declare("ctrpo-fig2")
    assert "t-nosmoke" not in reproduce.targets()


def test_checks_are_computed_by_the_framework_and_targets_may_not_return_them(tmp_path, monkeypatch):
    def figure(out):
        plotting.save_figure(plotting.pyplot().figure(), out / "f.png", dpi=20)
        return ["f.png"]

    def ok(scale, out):
        return {"rows": [{"x": 1}, {"x": 3}], "figures": figure(out), "settings": {"steps": scale.steps}}

    def bad(scale, out):
        return {"rows": [], "figures": figure(out), "checks": {"mine": True}}

    monkeypatch.setattr(framework, "_TARGETS", dict(framework._TARGETS))
    _declare("t-ok", checks=[lambda rows: {"sum": sum(r["x"] for r in rows)}, lambda rows: {"big": rows[-1]["x"] > 2}])(
        ok
    )
    _declare("t-bad")(bad)
    saved = reproduce.run("t-ok", "smoke", tmp_path / "ok")
    assert saved["checks"] == {"sum": 4, "big": True} and saved["runs"] == [] and saved["settings"] == {"steps": 1}
    assert json.loads((tmp_path / "ok" / "results.json").read_text())["checks"] == {"sum": 4, "big": True}
    with pytest.raises(RuntimeError, match="the framework writes these"):
        reproduce.run("t-bad", "smoke", tmp_path / "bad")


def test_reusing_a_run_written_before_a_config_key_existed_is_said(tmp_path, capsys):
    from saferl.reproduce.deep_rl import train_or_resume
    from saferl.training import config as configlib

    cfg = configlib.resolve({"algo": "canary", "env": "IcyLake"})
    old = {**cfg, "constraint": {k: v for k, v in cfg["constraint"].items() if k != "finite_horizon"}}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(configlib.dump(old))
    (run_dir / "summary.json").write_text(json.dumps({"interrupted": False, "marker": 1}))
    assert train_or_resume(cfg, run_dir, show_progress=False)["marker"] == 1
    assert "constraint.finite_horizon" in capsys.readouterr().err


def test_a_cpo_run_from_before_cost_scale_is_not_taken_for_todays_cpo(tmp_path):
    """It was trained with the episode scale; today's CPO defaults to per_sample (run_directory.LEGACY_VALUES)."""
    from saferl.reproduce.deep_rl import train_or_resume
    from saferl.training import config as configlib
    from saferl.training import run_directory

    cfg = configlib.resolve({"algo": "cpo", "env": "ToyReach"})
    assert cfg["hparams"]["cost_scale"] == "per_sample"
    old = {**cfg, "hparams": {k: v for k, v in cfg["hparams"].items() if k != "cost_scale"}}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(configlib.dump(old))
    (run_dir / "summary.json").write_text(json.dumps({"interrupted": False}))
    with pytest.raises(run_directory.RunError, match="another config"):
        train_or_resume(cfg, run_dir, show_progress=False)


def test_a_reused_run_without_provenance_gets_its_hash_from_config_yaml(tmp_path, monkeypatch):
    """An old run (summary.json without config_hash / git_commit): hashed from config.yaml, commit null."""
    from saferl.reproduce.deep_rl import train_or_resume
    from saferl.training import config as configlib

    cfg = configlib.resolve({"algo": "ppo", "env": "ToyReach"})
    run_dir = tmp_path / "runs" / "old"
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(configlib.dump(cfg))
    (run_dir / "summary.json").write_text(json.dumps({"interrupted": False, "wall_seconds": 2700.0, "env_steps": 5}))

    def fn(scale, out):
        train_or_resume(cfg, run_dir, show_progress=False)
        plotting.save_figure(plotting.pyplot().figure(), out / "f.png", dpi=20)
        return {"rows": [{"x": 1}], "figures": ["f.png"]}

    monkeypatch.setattr(framework, "_TARGETS", dict(framework._TARGETS))
    _declare("t-old", checks=lambda rows: {"one": len(rows) == 1})(fn)
    saved = reproduce.run("t-old", "smoke", tmp_path)
    (entry,) = saved["runs"]
    assert entry["run"] == "runs/old" and entry["status"] == "reused" and entry["reused"] is True
    assert entry["config_hash"] == provenance.config_hash(cfg) and entry["git_commit"] is None
    assert entry["wall_seconds"] == 2700.0 and saved["runs_training_seconds"] == 2700.0


def test_config_hash_is_canonical():
    a = {"algo": "ppo", "hparams": {"lr": 3e-4, "clip": 0.2}, "seeds": 5}
    b = {"seeds": 5, "hparams": {"clip": 0.2, "lr": 3e-4}, "algo": "ppo"}
    h = provenance.config_hash(a)
    assert h == provenance.config_hash(b) and len(h) == 16 and int(h, 16) >= 0
    assert h != provenance.config_hash({**a, "seeds": 6})
    assert provenance.config_hash({"x": (1, 2)}) == provenance.config_hash({"x": [1, 2]})


def test_code_changes_since_names_the_library_files_changed_since_a_commit(tmp_path, monkeypatch):
    root = Path(provenance.__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    git = ["git", "-C", str(root)]
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    first = subprocess.run(
        git + ["rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    ).stdout.split()[0]
    dirty = subprocess.run(
        git + ["diff", "--name-only", "HEAD", "--", "saferl"], capture_output=True, text=True
    ).stdout.split()
    assert provenance.code_changes_since(head) == sorted(dirty)
    assert provenance.code_changes_since(head + "-dirty") == sorted(dirty)
    since_first = provenance.code_changes_since(first)
    listed = subprocess.run(
        git + ["diff", "--name-only", first, "--", "saferl"], capture_output=True, text=True
    ).stdout.split()
    assert since_first == sorted(listed) and all(f.startswith("saferl/") for f in since_first)
    assert provenance.code_changes_since(first, paths=("docs",)) is not None
    assert provenance.code_changes_since(None) is None and provenance.code_changes_since("0" * 40) is None


def test_git_commit_names_this_checkout_or_none(monkeypatch):
    commit = provenance.git_commit()
    root = Path(provenance.__file__).resolve().parents[2]
    if (root / ".git").exists():
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
        assert commit is not None and commit.removesuffix("-dirty") == head.strip()
    else:
        assert commit is None

    def broken(*args, **kwargs):
        raise OSError("no git")

    monkeypatch.setattr(provenance.subprocess, "run", broken)
    assert provenance.git_commit() is None

    def slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], 5)

    monkeypatch.setattr(provenance.subprocess, "run", slow)
    assert provenance.git_commit() is None


def test_ctrpo_pointgoal_checks_and_methods():
    from saferl.reproduce.ctrpo import pointgoal as ctrpo
    from saferl.training import config as configlib

    names = [
        deep_rl.units_label(label, configlib.resolve({"algo": algo, "env": "PointGoal1", **over}))
        for label, algo, over in ctrpo.POINTGOAL_METHODS
    ]
    assert len(set(names)) == len(names)  # the rows' names (and run directories) are unique
    assert {
        "C-TRPO (1/(1-gamma) units)",
        "CPO (OmniSafe units)",
        "CPO (J_c units)",
        "PCPO (OmniSafe units)",
        "PCPO (J_c units)",
        "TRPO-Lag",
        "PPO-Lag",
        "TRPO",
        "CPO (option: learned margin, OmniSafe units)",
    } <= set(names)

    def row(label, method, regret, ret, default=True):
        return {
            "label": label,
            "method": method,
            "cost_regret": regret,
            "final_return": ret,
            "default_config": default,
            "safety": "undecided",
        }

    rows = [
        row("C-TRPO", "C-TRPO (u)", 1000.0, 8.0),
        row("CPO", "CPO (u)", 1300.0, 11.0),
        row("CPO", "CPO (J_c units)", 500.0, 1.0, default=False),
        row("CPO (option: learned margin)", "CPO (option: learned margin, u)", 900.0, -1.0, default=False),
    ]
    rows[1].update(cost_regret_lo=1250.0, cost_regret_hi=1400.0, final_return_lo=10.0, final_return_hi=12.0)
    rows[0].update(cost_regret_lo=900.0, cost_regret_hi=1260.0, final_return_lo=7.0, final_return_hi=9.0)
    rows.append(row("P3O", "P3O", 700.0, 5.0))  # every method run as the paper configured it is compared
    checks = ctrpo.pointgoal_checks(rows)
    assert checks["safety"] == {r["method"]: "undecided" for r in rows}
    assert checks["C-TRPO (u) vs CPO (u)"] == {
        "regret_lower": "undecided",  # 1000 [900, 1260] against 1300 [1250, 1400]: lower, but not by interval
        "return_ratio": pytest.approx(8.0 / 11.0),
        "regret_interval": "overlapping",
        "return_interval": "below",
    }
    assert (
        checks["C-TRPO (u) vs P3O"]["regret_lower"] == "undecided"  # P3O's row has no interval
        and checks["C-TRPO (u) vs P3O"]["return_interval"] is None
    )
    margin = checks["C-TRPO (u) vs CPO (option: learned margin, u)"]
    assert margin["regret_lower"] == "undecided" and margin["return_ratio"] is None  # no ratio against a return <= 0
    assert not any("J_c units" in key for key in checks)  # pairs are between the paper's configurations
    rows += [
        row("C-TRPO (ablation: no hysteresis)", "C-TRPO (nh)", 1100.0, 9.0, default=False),
        row("CPO (option: hysteresis)", "CPO (h)", 1200.0, 9.0, default=False),
    ]
    rows[-2].update(cost_regret_lo=1050.0, cost_regret_hi=1150.0)
    rows[-1].update(cost_regret_lo=1160.0, cost_regret_hi=1240.0)
    checks = ctrpo.pointgoal_checks(rows)
    assert checks["C-TRPO (nh) vs CPO (h)"]["regret_lower"] == "reproduced"  # [1050, 1150] below [1160, 1240]
    assert checks["C-TRPO (u) vs CPO (h)"]["return_ratio"] == pytest.approx(8.0 / 9.0)
    assert "C-TRPO (nh) vs CPO (u)" not in checks
    # the paper's numbers go to the default rows only, with their verdict against the limit
    ctrpo.attach_paper_numbers(rows, 25.0)
    assert rows[1]["paper_final_cost"] == 28.2 and rows[1]["paper_final_cost_lo"] == pytest.approx(24.8)
    assert rows[1]["paper_safety"] == "undecided" and "paper_final_cost" not in rows[2]


@pytest.mark.parametrize(
    "lo,hi,verdict",
    [
        (20.0, 25.0, "probably_safe"),
        (25.1, 30.0, "probably_unsafe"),
        (24.0, 26.0, "undecided"),
        (25.0, 26.0, "undecided"),
        (float("nan"), 1.0, "undecided"),
    ],
)
def test_safety_verdict_reads_the_interval_against_the_limit(lo, hi, verdict):
    assert verdicts.safety_verdict(lo, hi, 25.0) == verdict


def test_the_loggers_are_not_part_of_a_runs_identity():
    from saferl.training import config as configlib

    plain = configlib.resolve({"algo": "ppo", "env": "ToyReach"})
    logged = configlib.resolve({"algo": "ppo", "env": "ToyReach", "logger": ["csv", "tensorboard"]})
    assert plain["logger"] != logged["logger"]
    assert provenance.config_hash(plain) == provenance.config_hash(logged)
    assert provenance.config_hash(plain) != provenance.config_hash({**plain, "seeds": plain["seeds"] + 1})
    assert provenance.training_config(plain) == provenance.training_config(logged)


def test_scpo_claims_are_read_from_curves_and_intervals():
    """The SCPO targets' statistics on hand-made curves, and their verdicts on synthetic rows (no training)."""
    import math

    from saferl.reproduce.scpo import cartsafe as scpo_cartsafe
    from saferl.reproduce.scpo import fig5 as f5
    from saferl.reproduce.scpo import fig15 as scpo_fig15
    from saferl.reproduce.scpo import stats

    # safe_from: the fraction of training before the first iteration from which the mean cost stays <= limit
    curves = [[30, 20, 26, 24, 10], [10, 20, 25, 25, 0], [10, 20, 10, 10, 30], [10, math.nan, 5, 5, 5]]
    assert stats.safe_from(curves, 25.0).tolist() == [0.6, 0.0, math.inf, 0.4]
    # 90% of the way from the first return (-100) to the final one (mean of the last 10%: 100) is 80: iteration 3
    assert scpo_fig15.return_t90([[-100, 0, 80, 100, 100], [5, 4, 3, 2, 1]])[0] == 0.4
    assert math.isnan(scpo_fig15.return_t90([[5, 4, 3, 2, 1]])[0])  # no improvement: undefined
    # one seed: no spread, the interval is the point; two seeds [0, 2] and [2, 2]: SDs sqrt(2) and 0
    assert stats.curve_bootstrap([[30, 10, 10]], lambda m: stats.safe_from(m, 25.0)) == (1 / 3, 1 / 3, 1 / 3)
    assert stats.mean_seed_sd([[0, 2], [2, 2]])[0] == pytest.approx(math.sqrt(2) / 2)

    def row(label, env="SafetyBallRun", safe=(0.1, 0.2), ret=(50.0, 60.0), cost=(10.0, 20.0), sd=(1.0, 2.0)):
        return {
            "label": label,
            "method": label,
            "env": env,
            "cost_limit": 25.0,
            "safety": verdicts.safety_verdict(cost[0], cost[1], 25.0),
            **{
                f"{key}{end}": value
                for key, (lo, hi) in (
                    ("safe_from", safe),
                    ("final_return", ret),
                    ("final_cost", cost),
                    ("training_cost", cost),
                    ("training_cost_sd", sd),
                    ("training_cost_episode_sd", sd),
                )
                for end, value in (("", (lo + hi) / 2), ("_lo", lo), ("_hi", hi))
            },
        }

    rows = [
        row("SCPO"),
        row("TRPO-L", safe=(0.3, math.inf), ret=(40.0, 45.0), cost=(21.0, 30.0)),
        row("CPO", safe=(0.0, 0.05), ret=(40.0, 45.0), sd=(0.1, 0.5)),  # safe earlier, lower spread
        row("PDO", safe=(0.2, 0.4), ret=(80.0, 90.0)),  # touching intervals; return far above SCPO's
        row("PCPO", safe=(0.15, 0.5)),  # overlapping intervals
        row("SCPO", env="SafetyBallGather", ret=(5.0, 8.0)),
        row("PCPO", env="SafetyBallGather", ret=(1.0, 4.0)),
    ]
    checks = f5.fig5_checks(rows)
    safe = checks["safe_sooner"]["SafetyBallRun"]
    assert safe["vs TRPO-L"]["verdict"] == "reproduced" and safe["vs TRPO-L"]["safe_from_iteration"] == {
        "SCPO": None,
        "TRPO-L": None,
    }
    assert (safe["vs CPO"]["sooner"], safe["vs CPO"]["comparable_return"]) == ("not_reproduced", "reproduced")
    # the return difference [50 - 90, 60 - 80] lies below -10% of 85: the return part fails, and with it the claim;
    # touching safe_from intervals ([0.1, 0.2] against [0.2, 0.4]) show no order
    assert (safe["vs PDO"]["sooner"], safe["vs PDO"]["verdict"]) == ("undecided", "not_reproduced")
    # equal returns [50, 60] a side: the difference [-10, 10] is not within +-5.5, so "comparable" is not shown
    assert safe["vs PCPO"]["comparable_return"] == "undecided" and safe["vs PCPO"]["verdict"] == "undecided"
    assert list(safe)[0] == "vs TRPO-L"
    assert checks["final_cost_safe"]["SafetyBallRun"]["verdict"] == "reproduced"
    lower = checks["training_cost_lower"]["SafetyBallRun"]
    assert (lower["vs TRPO-L"], lower["vs CPO"]) == ("reproduced", "undecided")  # [10, 20] vs [21, 30]; the same
    assert checks["training_cost_sd_lower"]["SafetyBallRun"]["vs CPO"] == "not_reproduced"
    # rows of runs that did not log the within-iteration spread leave the paper's cost-std claim undecided
    unlogged = [{k: v for k, v in r.items() if not k.startswith("training_cost_episode_sd")} for r in rows]
    spread = f5.fig5_checks(unlogged)["training_cost_sd_lower"]["SafetyBallRun"]
    assert set(spread.values()) == {"undecided"}
    # an equality claim within 10% of the other's |mean|, never read from overlap: PCPO's interval is SCPO's own,
    # yet the difference [-10, 10] reaches past +-5.5
    assert checks["final_return_similar"]["SafetyBallRun"] == {
        "vs TRPO-L": "not_reproduced",
        "vs CPO": "not_reproduced",
        "vs PDO": "not_reproduced",
        "vs PCPO": "undecided",
    }
    assert checks["gather_return_higher"]["SafetyBallGather"] == {"vs PCPO": "reproduced"}
    assert "SafetyBallGather" not in checks["final_return_similar"] and checks["safe_sooner"]["paper"].startswith(
        "SCPO is capable of finding a safe policy"
    )
    assert verdicts.ordered(rows[0], {"safe_from_lo": math.nan, "safe_from_hi": 1.0}, "safe_from", "<") == "undecided"
    # never safe against never safe (CartSafe's SCPO, CPO and PDO at cpu scale): a tie, so not "sooner"
    never = [row("SCPO", safe=(math.inf, math.inf)), row("CPO", safe=(math.inf, math.inf))]
    assert f5.fig5_checks(never)["safe_sooner"]["SafetyBallRun"]["vs CPO"]["sooner"] == "not_reproduced"
    # CartSafe: the random policy's cost above the limit; Fig. 15: t90 intervals
    cart = [
        {
            **row("SCPO", env="CartSafe"),
            "first_cost": 60.0,
            "first_cost_lo": 40.0,
            "first_cost_hi": 80.0,
            "return_gain": 5.0,
            "return_gain_lo": -1.0,
            "return_gain_hi": 9.0,
        }
    ]
    cart_checks = scpo_cartsafe.cartsafe_checks(cart)
    assert cart_checks["random_policy_unsafe"]["verdict"] == "reproduced"
    assert cart_checks["return_improves"]["verdict"] == "undecided"
    ablation = [
        {**row(scpo_fig15.AUGMENTED, ret=(54.0, 56.0)), "return_t90": 0.2, "return_t90_lo": 0.1, "return_t90_hi": 0.3},
        {**row(scpo_fig15.PLAIN, ret=(53.0, 57.0)), "return_t90": 0.5, "return_t90_lo": 0.35, "return_t90_hi": 0.7},
    ]  # the return difference [54 - 57, 56 - 53] = [-3, 3] within +-10% of 55
    fig15 = scpo_fig15.fig15_checks(ablation)
    assert fig15["converges_faster"]["verdict"] == "reproduced" and fig15["similar_return"]["verdict"] == "reproduced"
    assert fig15["velocity"]["checked"] is False


def test_safety_demo_outcome_reads_the_intervals_against_the_limit():
    """make demo's sentence and checks: a row whose whole interval is above the limit breaks it, one whose
    interval ends at or below it meets it."""
    from saferl.reproduce import safety_demo

    rows = [
        {
            "method": "PPO",
            "algo": "ppo",
            "final_cost": 220.0,
            "final_cost_lo": 214.0,
            "final_cost_hi": 226.0,
            "final_return": 1700.0,
            "seeds": 5,
            "safety": verdicts.safety_verdict(214.0, 226.0, 25.0),
        },
        {
            "method": "PPO-Lag",
            "algo": "ppo_lag",
            "final_cost": 7.2,
            "final_cost_lo": 3.1,
            "final_cost_hi": 25.0,
            "final_return": 454.0,
            "seeds": 5,
            "safety": verdicts.safety_verdict(3.1, 25.0, 25.0),
        },
    ]
    sentence = safety_demo.outcome(rows, 25.0)
    assert "PPO ends at cost 220.0 [214.0, 226.0], above the limit 25 (probably unsafe)" in sentence
    assert "PPO-Lag ends at cost 7.2 [3.1, 25.0], below the limit 25 (probably safe)" in sentence
    assert safety_demo.checks(rows) == {
        "safety": {"PPO": "probably_unsafe", "PPO-Lag": "probably_safe"},
        "ppo_breaks_the_limit": True,
        "ppo_lag_meets_the_limit": True,
    }
    rows[1]["final_cost_hi"], rows[1]["safety"] = 26.0, verdicts.safety_verdict(3.1, 26.0, 25.0)
    assert "around the limit 25 (undecided)" in safety_demo.outcome(rows, 25.0)
    assert safety_demo.checks(rows)["ppo_lag_meets_the_limit"] is False


def test_git_commit_is_dirty_only_when_code_differs_not_results(tmp_path, monkeypatch):
    """A rerun script copies tables into docs/results between targets: that is not the code differing."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("no git")
    (tmp_path / "saferl").mkdir()
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "saferl" / "__init__.py").write_text("x = 1\n")
    (tmp_path / "docs" / "results" / "results.json").write_text("{}\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(git + args, check=True, capture_output=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(provenance, "__file__", str(tmp_path / "saferl" / "training" / "provenance.py"))
    assert provenance.git_commit() == head
    (tmp_path / "docs" / "results" / "results.json").write_text('{"rows": []}\n')
    assert provenance.git_commit() == head
    (tmp_path / "saferl" / "__init__.py").write_text("x = 2\n")
    assert provenance.git_commit() == head + "-dirty"


def test_safety_check_is_per_task_where_the_rows_span_several():
    """One task: {method: verdict}; several: {task: {method: verdict}}, so that one task's verdict never stands for
    another's (the last task's used to overwrite the others')."""
    rows = [
        {"env": "A", "method": "M", "safety": "probably_safe"},
        {"env": "B", "method": "M", "safety": "probably_unsafe"},
        {"env": "B", "method": "N", "safety": "undecided"},
    ]
    assert deep_rl.safety_checks(rows[:1]) == {"safety": {"M": "probably_safe"}}
    assert deep_rl.safety_checks(rows) == {
        "safety": {"A": {"M": "probably_safe"}, "B": {"M": "probably_unsafe", "N": "undecided"}}
    }

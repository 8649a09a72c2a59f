"""The command line: bad input gives a one-line error and a non-zero exit, and damages nothing."""

import os
import subprocess
import sys

import jax
import pytest

from saferl import cli


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "saferl.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "--algo", "nope", "--env", "ToyReach"], "unknown algorithm 'nope'"),
        (["train", "--algo", "ppo", "--env", "Nowhere"], "unknown environment 'Nowhere'"),
        (["train", "--algo", "ppo", "--env", "ToyReach", "--steps", "0"], "total_steps must be >= 1, got 0"),
        (["train", "--algo", "ppo", "--env", "ToyReach", "--steps", "-5"], "total_steps must be >= 1, got -5"),
        (
            [
                "train",
                "--algo",
                "ppo",
                "--env",
                "ToyReach",
                "--set",
                "constraint.type=var",
                "--set",
                "constraint.epsilon=1.5",
            ],
            "constraint.epsilon must be in (0, 1), got 1.5",
        ),
        (["train", "--algo", "ppo", "--env", "ToyReach", "--set", "hparams.clip"], "malformed --set 'hparams.clip'"),
        (["train", "--algo", "ppo", "--env", "ToyReach", "--set", "hparams.nonsense=3"], "unknown hyper-parameter"),
        (
            ["train", "--algo", "canary", "--env", "ToyReach", "--set", "constraint.type=expected"],
            "canary takes a constraint of type var",
        ),
        (
            ["train", "--algo", "ipo", "--env", "ToyReach", "--set", "constraint.type=var"],
            "ipo takes a constraint of type expected, not 'var'",
        ),  # no VaR rewrite: it would read the raw channels
        (
            ["train", "--algo", "p3o", "--env", "ToyReach", "--set", "constraint.type=var"],
            "p3o takes a constraint of type expected, not 'var'",
        ),
        (
            ["train", "--algo", "cpo_var", "--env", "ToyReach", "--set", "constraint.surrogate=cantelli"],
            "cpo_var takes a VaR constraint through the surrogate indicator",
        ),
        (
            [
                "train",
                "--algo",
                "ppo_lag",
                "--env",
                "ToyReach",
                "--set",
                "constraint.type=var",
                "--set",
                "constraint.surrogate=median",
            ],
            "constraint.surrogate must be one of",
        ),
        (["train", "--resume", "/nonexistent/run"], "does not exist"),
        (["eval", "/nonexistent/run"], "does not exist"),
        (["reproduce", "no-such-target"], "unknown reproduce target"),
        (["reproduce", "foundation-pointgoal", "--scale", "huge"], "unknown scale 'huge'"),
    ],
)
def test_bad_input_gives_one_line_error(args, message, capsys):
    code = cli.main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("saferl: error:") and message in err
    assert len(err.splitlines()) == 1


def test_resume_of_a_directory_without_checkpoint_changes_nothing(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text("algo: ppo\nenv: ToyReach\n")
    (run_dir / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    assert cli.main(["train", "--resume", str(run_dir)]) == 2
    assert "no checkpoint" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_existing_run_directory_is_not_overwritten(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text("{}")
    assert cli.main(["train", "--algo", "ppo", "--env", "ToyReach", "--out", str(run_dir)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (run_dir / "summary.json").read_text() == "{}"


def test_malformed_config_file(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo: [unclosed\n")
    assert cli.main(["train", "--config", str(bad)]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_list_names_everything():
    result = run_cli("list")
    assert result.returncode == 0
    for name in ("ppo", "ppo_lag", "PointGoal1", "IcyLake", "foundation-pointgoal"):
        assert name in result.stdout


def test_train_eval_plot_with_a_var_constraint(tmp_path, capsys):
    """A tiny end-to-end run through the command line: summary, eval and plot."""
    import json

    run_dir = tmp_path / "var-run"
    code = cli.main(
        [
            "train",
            "--algo",
            "ppo_lag",
            "--env",
            "ToyReach",
            "--steps",
            "800",
            "--seeds",
            "2",
            "--num-envs",
            "4",
            "--out",
            str(run_dir),
            "--quiet",
            "--set",
            "rollout_steps=100",
            "--set",
            "hparams.minibatches=2",
            "--set",
            "hparams.epochs=1",
            "--set",
            "network.actor_hidden=[8]",
            "--set",
            "network.critic_hidden=[8]",
            "--set",
            "constraint.type=var",
            "--set",
            "constraint.rho=5",
            "--set",
            "constraint.epsilon=0.1",
        ]
    )
    assert code == 0, capsys.readouterr().err
    summary = json.loads((run_dir / "summary.json").read_text())
    vp = summary["final"]["violation_probability"]
    assert len(vp["per_seed"]) == 2 and all(0.0 <= p <= 1.0 for p in vp["per_seed"])
    # the empirical violation probability is the fraction of episodes whose cost reached rho
    from saferl.training import run_directory

    rows = run_directory.read_progress(run_dir)
    assert all(0.0 <= r["violation_probability"] <= 1.0 for r in rows)
    capsys.readouterr()
    gif = tmp_path / "episode.gif"
    assert cli.main(["eval", str(run_dir), "--episodes", "3", "--render", str(gif)]) == 0
    out = capsys.readouterr().out
    assert "seed 0:" in out and "seed 1:" in out and "mean over seeds" in out and "P(C>=rho)" in out
    from PIL import Image

    with Image.open(gif) as image:  # ToyReach's 50 steps and the initial state
        assert image.n_frames == 51 and image.size == (480, 480)
    # the episodes run where training ran: the augmented state reads y / rho with the run's rho, not the default 1
    from saferl.analysis.evaluate import episode_env_params
    from saferl.training.trainer import Trainer

    trainer = Trainer(run_directory.load_run_config(run_dir))
    agent = jax.tree.map(lambda x: x[0], run_directory.load_checkpoint(run_dir, trainer.init_all())[0].agent)
    assert float(episode_env_params(trainer, agent).rho) == 5.0 and float(trainer.env_params.rho) == 1.0
    assert cli.main(["plot", str(run_dir), "--out", str(tmp_path / "curves.png")]) == 0
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # two subprocess compiles; test_the_compilation_cache_decision checks the rule itself
def test_a_second_identical_run_prints_no_xla_log_lines(tmp_path):
    """jaxlib's CPU AOT loader logs a multi-kilobyte false alarm for each persistent-cache entry
    it reads (``E1201 08:53:53.890551 4734 cpu_aot_loader.cc:220] ... SIGILL``; saferl.foundation.jaxsetup):
    with the cache as saferl sets it, a second identical run prints only saferl's own output."""
    import re

    from saferl.foundation import jaxsetup

    env = {key: value for key, value in os.environ.items() if key != jaxsetup.OVERRIDE}
    env.update(JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"))
    log_line = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ ", re.MULTILINE)  # absl/glog: E1201 08:53:53.89 ...
    for run in ("first", "second"):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "saferl.cli",
                "train",
                "--algo",
                "ppo_lag",
                "--env",
                "ToyReach",
                "--steps",
                "1",
                "--out",
                str(tmp_path / run),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        assert not log_line.search(result.stderr), (run, result.stderr[:3000])
        assert "cpu_aot_loader" not in result.stderr and "SIGILL" not in result.stderr, (run, result.stderr[:3000])
        assert "ppo_lag on ToyReach" in result.stdout


def test_the_compilation_cache_decision():
    from saferl.foundation.jaxsetup import cache_wanted

    assert not cache_wanted("cpu", (0, 9, 2)) and not cache_wanted("cpu", (0, 10, 1))  # the AOT-loader defect
    assert cache_wanted("gpu", (0, 9, 2)) and cache_wanted("tpu", (0, 9, 2)) and cache_wanted("cpu", (0, 8, 1))
    assert cache_wanted("cpu", (0, 9, 2), override="on") and not cache_wanted("gpu", (0, 9, 2), override="OFF")
    with pytest.raises(ValueError, match="SAFERL_COMPILATION_CACHE must be on or off"):
        cache_wanted("cpu", (0, 9, 2), override="maybe")


def test_the_platform_decision():
    from saferl.foundation.jaxsetup import platforms_for

    assert platforms_for(None, []) == "cpu"  # a CPU-only install never probes for accelerators
    assert platforms_for(None, ["cuda"]) is None  # jax[cuda12] installed: JAX's own choice, the GPU
    assert platforms_for(None, ["cuda"], driver=True) == "cpu"  # a Ray driver leaves the GPU's memory to the jobs
    assert platforms_for("1", [], driver=True) is None and platforms_for("0", ["cuda"]) == "cpu"
    with pytest.raises(ValueError, match="SAFERL_GPU must be 1 or 0 .*'maybe'"):
        platforms_for("maybe", [])


@pytest.mark.parametrize(
    "argv, driver",
    [
        (["sweep", "grid.yaml"], True),
        (["sweep", "grid.yaml", "--local"], False),
        (["reproduce", "ctrpo-table1", "--ray"], True),
        (["reproduce", "ctrpo-table1", "--address", "h:6379"], True),
        (["reproduce", "ctrpo-table1"], False),
        (["train", "--algo", "ppo"], False),
    ],
)
def test_only_a_ray_driver_is_kept_off_the_accelerator(monkeypatch, argv, driver):
    from saferl.foundation import jaxsetup

    seen = []
    monkeypatch.setattr(jaxsetup, "setup_process", lambda driver=False: seen.append(driver))
    cli._setup_jax(cli.build_parser().parse_args(argv))
    assert seen == [driver]

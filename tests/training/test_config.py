"""Declared hyper-parameters and config validation: every bad value is one line naming it, before
anything is written (no run directory), across algorithms, networks, environments and YAML files."""

import sys

import pytest

from saferl import cli
from saferl.algos import base as algos
from saferl.foundation import hparams
from saferl.training.config import ConfigError, resolve

BAD_TRAIN_INPUTS = [
    (["--algo", "ppo", "--set", "hparams.actor_lr=-1"], "hparams.actor_lr must be > 0, got -1"),
    (["--algo", "ppo_lag", "--set", "hparams.gamma=1.5"], "hparams.gamma must be in (0, 1], got 1.5"),
    (["--algo", "cpo", "--set", "hparams.target_kl=0"], "hparams.target_kl must be > 0, got 0"),
    (["--algo", "ppo", "--set", "hparams.epochs=2.5"], "hparams.epochs must be a whole number >= 1, got 2.5"),
    (["--algo", "ppo", "--set", "hparams.lr_schedule=cosine"], "hparams.lr_schedule must be one of constant, linear"),
    (["--algo", "ctrpo", "--set", "hparams.phi=log"], "hparams.phi must be one of xlogx, neglog, got 'log'"),
    (
        ["--algo", "ppo_lag", "--set", "hparams.lagrange_optimizer=rmsprop"],
        "hparams.lagrange_optimizer must be one of adam, sgd, pid, got 'rmsprop'",
    ),
    (["--algo", "ipo", "--set", "hparams.infeasible=ignore"], "hparams.infeasible must be one of recover, cap"),
    (["--algo", "trpo", "--set", "hparams.decay=1"], "hparams.decay must be in (0, 1), got 1"),
    (["--algo", "p3o", "--set", "hparams.kappa=abc"], "hparams.kappa must be a number > 0, got 'abc'"),
    (
        ["--algo", "focops", "--set", "hparams.minibatches=100000"],
        "hparams.minibatches must be between 1 and num_envs * rollout_steps",
    ),
    (["--algo", "ppo", "--set", "hparams.clip=.nan"], "hparams.clip must be > 0, got nan"),
    (
        ["--algo", "canary", "--set", "hparams.cost_scale=huge"],
        "hparams.cost_scale must be one of per_sample, length, effective_horizon",
    ),
    (["--algo", "ppo", "--set", "network.activation=sigmoid"], "network.activation must be one of tanh"),
    (["--algo", "ppo", "--set", "network.actor_hidden=[0]"], "network.actor_hidden must be a non-empty list"),
    (["--algo", "ppo", "--set", "network.width=3"], "unknown network.width"),
    (["--algo", "ppo", "--set", "env_params.nope=1"], "unknown env_params.nope for ToyReach"),
    (["--algo", "ppo", "--set", "env_params.step_size=[1,2]"], "env_params.step_size must be a float"),
    # rejected while the program is traced (the limit's length against the environment's cost channels)
    (["--algo", "cpo", "--set", "constraint.limit=[1,2]"], "constraint.limit has 2 entries"),
]


@pytest.mark.parametrize("args, message", BAD_TRAIN_INPUTS)
def test_bad_value_is_one_line_and_writes_nothing(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["train", "--env", "ToyReach", "--steps", "1000", "--quiet", "--out", str(out)] + args)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("saferl: error:") and message in err, err
    assert len(err.splitlines()) == 1
    assert not out.exists()


def test_corrected_rerun_is_accepted_after_a_rejected_one(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "train",
                "--algo",
                "ppo",
                "--env",
                "ToyReach",
                "--out",
                str(out),
                "--quiet",
                "--set",
                "hparams.actor_lr=-1",
            ]
        )
        == 2
    )
    assert not out.exists()
    config = resolve({"algo": "ppo", "env": "ToyReach", "hparams": {"actor_lr": 1e-3}})
    assert config["hparams"]["actor_lr"] == 1e-3


def test_malformed_yaml_is_one_line_with_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("algo: ppo\nenv: [ToyReach\nseeds: 2\n")
    assert cli.main(["train", "--config", str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "bad.yaml" in err and "line 3, column" in err and "not valid YAML" in err
    assert not (tmp_path / "run").exists()


def test_missing_mujoco_names_the_extra_for_train_bench_and_eval(tmp_path, capsys, monkeypatch):
    for name in ("mujoco", "mujoco.mjx"):
        monkeypatch.setitem(sys.modules, name, None)  # ``import mujoco`` now raises ImportError
    run_dir = tmp_path / "ecoant"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text("algo: ppo\nenv: EcoAnt\n")
    for args in (
        ["train", "--algo", "ppo", "--env", "EcoAnt", "--out", str(tmp_path / "run")],
        ["bench", "--env", "EcoAnt", "--quick"],
        ["eval", str(run_dir)],
    ):
        assert cli.main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "saferl[mjx]" in err, err
    assert not (tmp_path / "run").exists()


def test_every_algorithm_declares_every_hyper_parameter_it_reads():
    """Each default passes its own declaration, and every declaration says what is allowed."""
    for name in algos.registered():
        cls = algos.get(name)
        resolved = cls.resolve_hparams({})
        assert set(resolved) == set(cls.defaults)
        for key, param in cls.defaults.items():
            assert isinstance(param, hparams.Param), (name, key)
            assert param.check(key, param.default) == param.default
            assert param.allowed()


def test_declare_overrides_a_default_but_keeps_the_declaration():
    base = hparams.declare(rate=hparams.real(0.1, "(0, 1]"), mode=hparams.choice("a", ("a", "b")))
    child = hparams.declare(base, rate=0.5, extra=hparams.integer(3, "[1, 5]"))
    assert child["rate"].default == 0.5 and child["rate"].high == 1.0
    assert base["rate"].default == 0.1  # the base is not changed
    with pytest.raises(ValueError, match=r"rate must be in \(0, 1\], got 2"):
        hparams.declare(base, rate=2.0)
    with pytest.raises(KeyError, match="not declared"):
        hparams.declare(base, missing=1.0)
    assert hparams.resolve(child, {"extra": 5.0}, "x")["extra"] == 5
    with pytest.raises(ValueError, match=r"extra must be a whole number in \[1, 5\], got 6"):
        hparams.resolve(child, {"extra": 6}, "x")
    with pytest.raises(ValueError, match="unknown hyper-parameter 'nope' for x"):
        hparams.resolve(child, {"nope": 1}, "x")
    with pytest.raises(ValueError, match="mode must be one of a, b"):
        hparams.resolve(child, {"mode": "c"}, "x")
    with pytest.raises(ValueError, match="true or false"):
        hparams.resolve(hparams.declare(on=hparams.flag(True)), {"on": 1}, "x")


def test_resolve_rejects_a_bad_value_without_touching_the_input():
    user = {"algo": "cpo", "env": "ToyReach", "hparams": {"target_kl": -0.1}}
    with pytest.raises(ConfigError, match="target_kl must be > 0"):
        resolve(user)
    assert user == {"algo": "cpo", "env": "ToyReach", "hparams": {"target_kl": -0.1}}


def test_list_prints_an_algorithms_declared_hyper_parameters(capsys):
    assert cli.main(["list", "--algo", "ppo_lag"]) == 0
    out = capsys.readouterr().out
    assert "lagrange_optimizer = 'adam'  (one of adam, sgd, pid)" in out
    assert "gamma = 0.99  (in (0, 1])  reward discount" in out

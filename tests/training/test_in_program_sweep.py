"""In-program sweeps (saferl.training.in_program_sweep): a grid point's runners are the runs a separate program
trains with its values."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

from saferl import api
from saferl.cli import main as cli_main
from saferl.training import config, in_program_sweep, run_directory, runs
from saferl.training.trainer import Trainer

SMALL = {
    "algo": "ppo_lag",
    "env": "ToyReach",
    "seeds": 2,
    "num_envs": 4,
    "rollout_steps": 64,
    "total_steps": 768,
    "iterations_per_chunk": 1,
    "constraint": {"type": "expected", "limit": 5.0},
}
# 2 x 2 x 2 points: a constraint value (AgentState.constraint at init), a learning rate (read by the optimiser
# built inside the update) and a discount (derived by the learner into GAE's gammas)
SWEEP = {"constraint.limit": [0.5, 5.0], "hparams.actor_lr": [1e-3, 3e-4], "hparams.gamma": [0.99, 0.9]}


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


@pytest.fixture(scope="module")
def swept_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("grid") / "run"
    run = api.train(None, None, steps=None, config=SMALL, sweep=SWEEP, out=out, progress=False)
    return run


def test_grid_is_the_product_in_order_and_config_at_is_a_plain_config():
    cfg = config.resolve({**SMALL, "sweep": SWEEP})
    points = in_program_sweep.points(cfg)
    assert len(points) == 8
    assert points[0] == {"constraint.limit": 0.5, "hparams.actor_lr": 1e-3, "hparams.gamma": 0.99}
    assert points[1]["hparams.gamma"] == 0.9 and points[1]["hparams.actor_lr"] == 1e-3  # last key fastest
    assert points[-1] == {"constraint.limit": 5.0, "hparams.actor_lr": 3e-4, "hparams.gamma": 0.9}
    # the config holds the grid's first value; a point's config is the config of the one run it equals
    assert cfg["constraint"]["limit"] == 0.5 and cfg["hparams"]["actor_lr"] == 1e-3
    single = config.resolve(in_program_sweep.config_at(cfg, points[-1]))
    assert "sweep" not in single and single["hparams"]["gamma"] == 0.9 and single["constraint"]["limit"] == 5.0
    columns = run_directory.runner_columns(cfg)
    assert [c["seed"] for c in columns[:4]] == [0, 1, 0, 1] and columns[2][in_program_sweep.POINT_COLUMN] == 1


def test_each_grid_point_trains_what_a_separate_program_with_its_values_trains(swept_run):
    cfg = swept_run.config
    trainer = Trainer(cfg)
    template = trainer.init_shapes()
    swept, _ = run_directory.load_checkpoint(swept_run.dir, template)
    seeds = cfg["seeds"]
    last = len(in_program_sweep.points(cfg)) - 1
    single_cfg = config.resolve(in_program_sweep.config_at(cfg, in_program_sweep.points(cfg)[last]))
    single = Trainer(single_cfg)
    runners = single.init_all()
    program = single.compile_chunk(runners)
    for _ in range(single.num_chunks):
        runners, _ = program(runners)
    pick = lambda tree, g: jax.tree.map(lambda x: x[g * seeds : (g + 1) * seeds], tree)  # noqa: E731
    for a, b in zip(_leaves(pick(swept.agent, last)), _leaves(runners.agent)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    # and the sweep changed something: the first point's agent is not the last one's
    first, other = _leaves(pick(swept.agent.actor_params, 0)), _leaves(runners.agent.actor_params)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(first, other)) > 1e-4
    np.testing.assert_allclose(np.asarray(swept.agent.constraint.limit).reshape(-1, seeds)[:, 0], [0.5] * 4 + [5.0] * 4)


def test_progress_summary_and_plot_carry_the_grid(swept_run, tmp_path):
    rows = run_directory.read_progress(swept_run.dir)
    cfg = swept_run.config
    iterations = max(r["iteration"] for r in rows)
    assert len(rows) == iterations * 8 * cfg["seeds"]
    last_point = [r for r in rows if r[in_program_sweep.POINT_COLUMN] == 7]
    assert {r["hparams.gamma"] for r in last_point} == {0.9} and {r["constraint.limit"] for r in last_point} == {5.0}
    summary = json.loads((swept_run.dir / "summary.json").read_text())
    assert summary["final"] == {} and len(summary["grid"]) == 8
    entry = summary["grid"][7]
    assert entry["point"] == in_program_sweep.points(cfg)[7] and entry["label"] == "limit=5, actor_lr=0.0003, gamma=0.9"
    mine = [r for r in last_point if r["iteration"] == iterations]
    np.testing.assert_allclose(
        entry["final"]["episode_return"]["per_seed"],
        [r["episode_return"] for r in sorted(mine, key=lambda r: r["seed"])],
        rtol=1e-5,
    )
    out = tmp_path / "curves.png"
    assert cli_main(["plot", str(swept_run.dir), "--out", str(out)]) == 0 and out.stat().st_size > 0
    policy = swept_run.policy_for(1, point=7)
    assert policy.seed == 1
    with pytest.raises(ValueError, match="grid point index of this run: 0 to 7"):
        swept_run.policy_for(0, point=8)


def test_a_swept_run_resumes_to_the_uninterrupted_result(swept_run, tmp_path):
    def interrupt(chunk, runners):
        if chunk == 1:
            raise KeyboardInterrupt

    run_dir = tmp_path / "interrupted"
    cfg = swept_run.config
    with pytest.raises(KeyboardInterrupt):
        runs.train(cfg, run_dir, show_progress=False, on_chunk=interrupt)
    runs.train(run_directory.load_run_config(run_dir), run_dir, resume=True, show_progress=False)
    template = Trainer(cfg).init_shapes()
    full, _ = run_directory.load_checkpoint(swept_run.dir, template)
    resumed, _ = run_directory.load_checkpoint(run_dir, template)
    for a, b in zip(_leaves(full), _leaves(resumed)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"hparams.epochs": [5, 10]}, "hparams.epochs: a whole number is static"),
        ({"hparams.nope": [1.0, 2.0]}, "has no hyper-parameter 'nope'"),
        ({"env_params.step_size": [0.1, 0.2]}, "only constraint.* and hparams.*"),
        ({"constraint.gamma_c": [0.9, 1.0]}, "sweeps constraint.limit"),
        ({"hparams.actor_lr": [1e-3, 1e-3]}, "lists a value twice"),
        ({"hparams.actor_lr": [1e-3, "fast"]}, "'fast' is not a finite number"),
        ({"hparams.clip": [0.2, -1.0]}, r"sweep hparams.clip=-1: hparams.clip must be"),
        ({"hparams.actor_lr": []}, "must list one or more numbers"),
    ],
)
def test_bad_sweeps_are_one_line_errors(sweep, message):
    with pytest.raises(config.ConfigError, match=message):
        config.resolve({**SMALL, "sweep": sweep})


def test_a_value_the_program_does_not_read_or_branches_on_is_refused_when_traced():
    # PPO-Lag's PID gains are read by the PID multiplier only; its default multiplier is Adam's
    cfg = config.resolve({**SMALL, "sweep": {"hparams.pid_kp": [0.1, 0.2]}})
    with pytest.raises(ValueError, match="ppo_lag does not read it inside the compiled program"):
        Trainer(cfg).check_sweep()
    # CPO's hysteresis decides its state layout in Python (init_extra: only h < 1 adds the recovery flag)
    cfg = config.resolve({**SMALL, "algo": "cpo", "sweep": {"hparams.hysteresis": [1.0, 0.8]}})
    with pytest.raises(ValueError, match="cpo reads it as a Python number"):
        Trainer(cfg).check_sweep()


def test_cli_sweep_parsing_and_errors(capsys):
    assert in_program_sweep.parse_sweep_args(["constraint.limit=10,25,50", "hparams.beta=0.1,1"]) == {
        "constraint.limit": [10.0, 25.0, 50.0],
        "hparams.beta": [0.1, 1.0],
    }
    with pytest.raises(in_program_sweep.SweepError, match="expected KEY=V1,V2"):
        in_program_sweep.parse_sweep_args(["constraint.limit"])
    with pytest.raises(in_program_sweep.SweepError, match="given twice"):
        in_program_sweep.parse_sweep_args(["hparams.beta=1", "hparams.beta=2"])
    assert (
        cli_main(["train", "--algo", "ppo_lag", "--env", "ToyReach", "--sweep", "hparams.epochs=2,3", "--quiet"]) == 2
    )
    assert "hparams.epochs: a whole number is static" in capsys.readouterr().err
    with pytest.raises(config.ConfigError, match="logs to progress.csv only"):
        config.resolve({**SMALL, "logger": "csv,tensorboard", "sweep": {"hparams.actor_lr": [1e-3, 3e-4]}})

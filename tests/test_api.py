"""The Python API (saferl.train / load / make_env, Run), used only through what saferl exports.

Two compiled training sittings in all: one uninterrupted ToyReach run of two chunks (test_cli's tiny
sizes), whose directory is copied after its first chunk -- a run killed there, with no summary -- and
that copy's resume.
"""

import csv
import importlib
import json
import math
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import saferl
from saferl import cli

STEPS = 800  # two iterations of 4 envs x 100 steps: two chunks (one iteration each, the automatic schedule)
CONSTRAINT = {"type": "expected", "limit": 10.0}
SETTINGS = {
    "num_envs": 4,
    "rollout_steps": 100,
    "hparams": {"minibatches": 2, "epochs": 1},
    "network": {"actor_hidden": [8], "critic_hidden": [8]},
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``(full, killed_dir, chunks)``: the finished run, a copy of its directory taken after chunk 1, and the
    chunks on_chunk saw."""
    root = tmp_path_factory.mktemp("api")
    killed_dir, chunks = root / "killed", []

    def snapshot(run, chunk):
        chunks.append(chunk)
        if chunk == 1:
            shutil.copytree(run.dir, killed_dir)

    full = saferl.train(
        "ppo_lag",
        "ToyReach",
        steps=STEPS,
        seeds=2,
        constraint=CONSTRAINT,
        config=SETTINGS,
        out=root / "full",
        progress=False,
        on_chunk=snapshot,
    )
    return full, killed_dir, chunks


def test_import_is_light_and_train_is_the_function():
    code = "import sys, saferl; print(sorted(m for m in ('jax', 'numpy', 'saferl.api') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    importlib.import_module("saferl.training.trainer")
    assert callable(saferl.train) and saferl.train.__module__ == "saferl.api"


def test_summary_and_progress_are_the_files(trained):
    full, _, chunks = trained
    assert chunks == [1, 2]
    assert full.summary == json.loads((full.dir / "summary.json").read_text())
    assert full.config == saferl.load(full.dir).config and full.config["constraint"]["limit"] == 10.0
    with open(full.dir / "progress.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    progress = full.progress
    assert set(progress) == set(rows[0])
    for column, values in progress.items():
        assert values.shape == (len(rows),)
        np.testing.assert_array_equal(values, [float(r[column]) if r[column] else math.nan for r in rows])
    # one row per iteration and seed; env_steps counts each seed's own steps
    assert list(progress["iteration"]) == [1, 1, 2, 2] and list(progress["seed"]) == [0, 1, 0, 1]
    np.testing.assert_array_equal(progress["env_steps"], 400 * progress["iteration"])
    # the summary's final numbers: the last 10% of two iterations is the last iteration
    last = progress["iteration"] == 2
    for metric in ("episode_return", "episode_cost"):
        np.testing.assert_allclose(
            full.summary["final"][metric]["per_seed"], progress[metric][last], rtol=1e-5
        )  # the CSV: 6 digits


def test_progress_frame(trained, monkeypatch):
    full, _, _ = trained
    frame = full.progress_frame()
    assert list(frame.columns) == list(full.progress)
    np.testing.assert_array_equal(frame["episode_cost"].to_numpy(), full.progress["episode_cost"])
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(RuntimeError, match=r"needs the package 'pandas'.*pip install pandas"):
        full.progress_frame()


def _episode_totals(policy, env, params, steps):
    """Return and cost of one deterministic episode of ``steps`` steps, stepped here."""

    def step(carry, _):
        state, obs = carry
        state, obs, reward, cost, _, _, info = env.step(state, policy(obs, None, deterministic=True), params)
        return (state, obs), (reward, cost, info.get("episode_return", reward))

    _, (rewards, costs, reported) = jax.lax.scan(step, env.reset(jax.random.PRNGKey(7), params), None, length=steps)
    return jnp.sum(rewards), jnp.sum(costs), reported[-1]


def test_evaluate_is_a_rollout_of_the_policy(trained):
    """ToyReach from x = 0 with the policy's mode is deterministic: every evaluation episode of a seed is the
    episode stepped here with make_env and that seed's policy (normalised with the frozen statistics)."""
    full, _, _ = trained
    result = full.evaluate(3, deterministic=True)
    assert result["seeds"] == [0, 1]
    env, params = saferl.make_env("ToyReach")
    policies = [full.policy_for(seed) for seed in (0, 1)]
    stacks = [full.policy_env(seed) for seed in (0, 1)]

    @jax.jit
    def totals():
        return [
            (_episode_totals(p, env, params, params.max_steps), _episode_totals(p, *stack, params.max_steps))
            for p, stack in zip(policies, stacks)
        ]

    returns = []
    for per_seed, ((ret, cost, _), (stack_ret, stack_cost, reported)) in zip(result["per_seed"], totals()):
        np.testing.assert_allclose(per_seed["episode_return"], ret, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(per_seed["episode_cost"], cost, atol=1e-6)
        # the training stack's environment steps the same episode and reports its return in info
        np.testing.assert_allclose([stack_ret, reported, stack_cost], [ret, ret, cost], rtol=1e-5, atol=1e-5)
        returns.append(float(ret))
    assert returns[0] != returns[1]  # two seeds, two policies
    assert result["episode_return"] == pytest.approx(np.mean(returns), rel=1e-5, abs=1e-5)
    assert full.policy.seed == 0 and full.policy_for(1).seed == 1


def test_resume_after_a_kill_equals_the_uninterrupted_run(trained):
    full, killed_dir, _ = trained
    killed = saferl.load(killed_dir)
    assert list(killed.progress["iteration"]) == [1, 1]
    with pytest.raises(saferl.RunError, match="no summary.json yet"):
        killed.summary
    chunks = []
    assert killed.resume(progress=False, on_chunk=lambda run, chunk: chunks.append(chunk)) is killed
    assert chunks == [2]  # it went on from the checkpoint of chunk 1
    assert killed.summary["interrupted"] is False and killed.summary["env_steps"] == STEPS
    assert killed.summary["final"] == full.summary["final"]
    for column, values in full.progress.items():
        np.testing.assert_array_equal(killed.progress[column], values)
    obs = jax.random.uniform(jax.random.PRNGKey(3), (16, 2), minval=-1.0)
    for seed in (0, 1):
        key = jax.random.PRNGKey(seed)
        np.testing.assert_array_equal(killed.policy_for(seed)(obs, key), full.policy_for(seed)(obs, key))


def test_plot_writes_saferl_plots_figure(trained, tmp_path):
    full, _, _ = trained
    assert full.plot(tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def _cli_error(args, capsys) -> str:
    assert cli.main(args) == 2
    return capsys.readouterr().err.strip()


TINY_CLI = ["--algo", "ppo", "--env", "ToyReach"]


@pytest.mark.parametrize(
    "kwargs, cli_args, message",
    [
        (dict(algo="nope"), ["--algo", "nope", "--env", "ToyReach"], "unknown algorithm 'nope'"),
        (dict(env="Nowhere"), ["--algo", "ppo", "--env", "Nowhere"], "unknown environment 'Nowhere'"),
        (dict(steps=0), TINY_CLI + ["--steps", "0"], "total_steps must be >= 1, got 0"),
        (dict(steps=-5), TINY_CLI + ["--steps", "-5"], "total_steps must be >= 1, got -5"),
        (dict(config={"nonsense": 1}), TINY_CLI + ["--set", "nonsense=1"], "unknown config key 'nonsense'"),
        (
            dict(config={"hparams": {"nonsense": 3}}),
            TINY_CLI + ["--set", "hparams.nonsense=3"],
            "unknown hyper-parameter",
        ),
        (
            dict(constraint={"type": "var", "epsilon": 1.5}),
            TINY_CLI + ["--set", "constraint.type=var", "--set", "constraint.epsilon=1.5"],
            "constraint.epsilon must be in (0, 1), got 1.5",
        ),
    ],
)
def test_bad_input_is_the_clis_one_line_error(kwargs, cli_args, message, tmp_path, capsys):
    args = {"algo": "ppo", "env": "ToyReach", "steps": 100, **kwargs}
    with pytest.raises(ValueError) as err:
        saferl.train(args.pop("algo"), args.pop("env"), out=tmp_path / "run", progress=False, **args)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert _cli_error(["train", *cli_args, "--out", str(tmp_path / "cli")], capsys) == f"saferl: error: {err.value}"
    assert not (tmp_path / "run").exists() and not (tmp_path / "cli").exists()


def test_run_directory_errors_are_the_clis(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(saferl.RunError, match="already exists and is not empty") as err:
        saferl.train("ppo", "ToyReach", steps=100, out=taken)
    assert _cli_error(["train", *TINY_CLI, "--out", str(taken)], capsys) == f"saferl: error: {err.value}"
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    for where, message in ((tmp_path / "nowhere", "does not exist"), (taken, "is not a run directory")):
        with pytest.raises(saferl.RunError, match=message) as err:
            saferl.load(where)
        assert _cli_error(["eval", str(where)], capsys) == f"saferl: error: {err.value}"
    (taken / "config.yaml").write_text("algo: ppo\nenv: ToyReach\n")
    with pytest.raises(saferl.RunError, match="it has no checkpoint") as err:
        saferl.load(taken).resume()
    assert _cli_error(["train", "--resume", str(taken)], capsys) == f"saferl: error: {err.value}"
    assert sorted(p.name for p in taken.iterdir()) == ["config.yaml", "notes.txt"]


def test_other_bad_arguments_are_named(trained):
    full, _, _ = trained
    before = (full.dir / "config.yaml").read_text()
    with pytest.raises(ValueError, match=f"steps must be a whole number >= the run's total_steps {STEPS}"):
        full.resume(steps=STEPS // 2)
    assert (full.dir / "config.yaml").read_text() == before
    with pytest.raises(ValueError, match=r"seed 5 is not one of this run's seeds \[0, 1\]"):
        full.policy_for(5)
    with pytest.raises(ValueError, match="episodes must be a whole number >= 1, got 0"):
        full.evaluate(0)
    with pytest.raises(ValueError, match="unknown environment 'Nowhere'"):
        saferl.make_env("Nowhere")
    with pytest.raises(ValueError, match="unknown env_params.speed for ToyReach"):
        saferl.make_env("ToyReach", speed=2.0)
    env, params = saferl.make_env("ToyReach", step_size=0.25)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    _, obs, *_ = env.step(state, jnp.ones(1), params)
    assert float(obs[0]) == pytest.approx(0.25)  # x <- x + step_size * a


def test_explicit_arguments_win_over_config_and_none_takes_it(tmp_path):
    with pytest.raises(ValueError, match="total_steps must be >= 1, got 0"):
        saferl.train("ppo", "ToyReach", steps=0, config={"total_steps": 100}, out=tmp_path / "a")
    with pytest.raises(ValueError, match="total_steps must be >= 1, got -3"):
        saferl.train(
            None, None, steps=None, config={"algo": "ppo", "env": "ToyReach", "total_steps": -3}, out=tmp_path / "b"
        )
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        saferl.train("nope", "ToyReach", steps=1, config={"algo": "ppo"}, out=tmp_path / "c")
    with pytest.raises(ValueError, match="config must be a mapping of config entries, got list"):
        saferl.train("ppo", "ToyReach", steps=1, config=[("seeds", 2)], out=tmp_path / "d")
    assert not any(tmp_path.iterdir())

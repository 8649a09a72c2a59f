"""Run directories: resume equals uninterrupted, checkpoints are validated, summaries are complete."""

import json

import numpy as np
import pytest

from saferl.training import config, run_directory, runs

CFG = {
    "algo": "ppo_lag",
    "env": "ToyReach",
    "total_steps": 4 * 400,
    "seeds": 2,
    "num_envs": 4,
    "rollout_steps": 100,
    "iterations_per_chunk": 1,
    "constraint": {"type": "expected", "limit": 10.0, "window": 8},  # window: resumed too
    "hparams": {"minibatches": 2, "epochs": 2},
    "network": {"actor_hidden": [16], "critic_hidden": [16]},
}


def _checkpoint_leaves(run_dir):
    with np.load(run_dir / run_directory.CHECKPOINT, allow_pickle=False) as data:
        return {k: data[k] for k in data.files if k != "manifest"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("full")
    summary = runs.train(config.resolve(CFG), run_dir, show_progress=False)
    return run_dir, summary


def test_run_directory_contents(uninterrupted):
    run_dir, summary = uninterrupted
    assert (run_dir / "config.yaml").is_file() and (run_dir / run_directory.CHECKPOINT).is_file()
    saved = json.loads((run_dir / "summary.json").read_text())
    for key in ("algo", "env", "seeds", "env_steps", "wall_seconds", "compile_seconds", "steps_per_second", "final"):
        assert key in saved
    assert saved["env_steps"] == 1600 and saved["seeds"] == 2
    for metric in ("episode_return", "episode_cost"):
        assert len(saved["final"][metric]["per_seed"]) == 2
        assert saved["final"][metric]["mean"] == pytest.approx(np.mean(saved["final"][metric]["per_seed"]))
    rows = run_directory.read_progress(run_dir)
    assert len(rows) == 4 * 2  # one row per iteration per seed
    for column in ("env_steps", "seed", "episode_return", "episode_cost", "episode_length", "lagrange_multiplier"):
        assert column in rows[0]
    # the saved config is fully resolved and reloads to itself
    assert run_directory.load_run_config(run_dir) == config.resolve(CFG)


def test_resume_equals_uninterrupted(uninterrupted, tmp_path):
    full_dir, _ = uninterrupted
    run_dir = tmp_path / "interrupted"

    def interrupt(chunk, runners):
        if chunk == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runs.train(config.resolve(CFG), run_dir, show_progress=False, on_chunk=interrupt)
    interrupted_summary = json.loads((run_dir / "summary.json").read_text())
    assert interrupted_summary["interrupted"] is True
    assert max(r["iteration"] for r in run_directory.read_progress(run_dir)) == 2
    runs.train(run_directory.load_run_config(run_dir), run_dir, resume=True, show_progress=False)
    full, resumed = _checkpoint_leaves(full_dir), _checkpoint_leaves(run_dir)
    assert full.keys() == resumed.keys()
    for key in full:
        np.testing.assert_array_equal(full[key], resumed[key])
    full_rows, resumed_rows = run_directory.read_progress(full_dir), run_directory.read_progress(run_dir)
    assert len(full_rows) == len(resumed_rows)
    for a, b in zip(full_rows, resumed_rows):
        assert a == pytest.approx(b, nan_ok=True)


def test_corrupted_checkpoint_is_reported(uninterrupted, tmp_path):
    full_dir, _ = uninterrupted
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.yaml").write_text((full_dir / "config.yaml").read_text())
    (bad / "checkpoints").mkdir()
    (bad / run_directory.CHECKPOINT).write_bytes(b"not a zip file")
    from saferl.training.trainer import Trainer

    template = Trainer(run_directory.load_run_config(bad)).init_all()
    with pytest.raises(run_directory.RunError, match="corrupted"):
        run_directory.load_checkpoint(bad, template)


def test_mismatched_checkpoint_names_the_differing_entries(tmp_path):
    state = {"actor": {"w": np.zeros((2, 3), np.float32)}, "step": np.zeros((), np.int32)}
    run_directory.save_checkpoint(tmp_path, state, chunk=3)
    restored, chunk = run_directory.load_checkpoint(tmp_path, state)
    assert chunk == 3 and restored["actor"]["w"].shape == (2, 3)
    grown = {**state, "normalizer": np.ones((4,), np.float32)}
    with pytest.raises(run_directory.RunError, match=r"lacks \['normalizer'\]"):
        run_directory.load_checkpoint(tmp_path, grown)
    with pytest.raises(run_directory.RunError, match=r"array \(2, 3\) vs \(2, 4\)"):
        run_directory.load_checkpoint(tmp_path, {**state, "actor": {"w": np.zeros((2, 4), np.float32)}})


def test_a_checkpoint_without_the_return_window_resumes_with_it_empty(tmp_path):
    """Checkpoints written before ``episode_return_window`` was logged lack the returns' window: they resume with
    it empty (zeros, the statistic NaN), every other entry as saved; any other missing entry is still refused."""
    cost_window = {"values": np.ones((2, 50, 1), np.float32), "filled": np.full((2,), 50, np.int32)}
    old = {"episodes": {"cost_window": cost_window, "return": np.full((2,), 3.0, np.float32)}}
    run_directory.save_checkpoint(tmp_path, old, chunk=4)
    now = {
        "episodes": {
            **old["episodes"],
            "return_window": {"values": np.full((2, 50, 1), 7.0, np.float32), "filled": np.ones((2,), np.int32)},
            "windowed_return": np.zeros((2,), np.float32),
        }
    }
    restored, chunk = run_directory.load_checkpoint(tmp_path, now)
    assert chunk == 4
    np.testing.assert_array_equal(restored["episodes"]["cost_window"]["values"], cost_window["values"])
    np.testing.assert_array_equal(restored["episodes"]["return"], [3.0, 3.0])
    np.testing.assert_array_equal(restored["episodes"]["return_window"]["values"], np.zeros((2, 50, 1)))
    np.testing.assert_array_equal(restored["episodes"]["return_window"]["filled"], [0, 0])
    assert np.isnan(np.asarray(restored["episodes"]["windowed_return"])).all()
    with pytest.raises(run_directory.RunError, match=r"lacks \['episodes'\]\['normalizer'\]"):
        run_directory.load_checkpoint(tmp_path, {"episodes": {**now["episodes"], "normalizer": np.ones(2)}})


def test_progress_keeps_rows_written_before_a_new_metric(tmp_path):
    old = [{"iteration": 1, "env_steps": 10, "seed": 0, "episode_return": 1.5}]
    new = [{"iteration": 2, "env_steps": 20, "seed": 0, "episode_return": 2.5, "cost_surrogate_change": -0.25}]
    run_directory.write_progress(tmp_path, old + new)
    rows = run_directory.read_progress(tmp_path)
    assert [r["episode_return"] for r in rows] == [1.5, 2.5]
    assert np.isnan(rows[0]["cost_surrogate_change"]) and rows[1]["cost_surrogate_change"] == -0.25


def test_final_statistics_use_last_ten_percent():
    rows = [
        {"iteration": i, "seed": s, "env_steps": i, "episode_return": float(i + 100 * s)}
        for i in range(1, 21)
        for s in (0, 1)
    ]
    stats = run_directory.final_statistics(rows, "episode_return", [0, 1])
    # last 10% of 20 iterations = iterations 19 and 20
    assert stats["per_seed"] == [19.5, 119.5]
    assert stats["mean"] == pytest.approx(69.5) and stats["std"] == pytest.approx(50.0)


def test_a_run_written_before_a_key_existed_keeps_what_it_was_trained_with(tmp_path):
    """hparams.cost_scale did not exist when the first trust-region runs were written; they used the
    episode scale, which is no longer CPO's default: loading such a run must not switch it."""
    from saferl.training import config as configlib

    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "config.yaml").write_text("algo: cpo\nenv: ToyReach\n")
    (new / "config.yaml").write_text("algo: cpo\nenv: ToyReach\nhparams:\n  cost_scale: per_sample\n")
    assert run_directory.load_run_config(old)["hparams"]["cost_scale"] == "effective_horizon"
    assert run_directory.load_run_config(new)["hparams"]["cost_scale"] == "per_sample"
    # a run written while the 1/(1 - gamma) scale was called "episode" loads under today's name
    (new / "config.yaml").write_text("algo: cpo\nenv: ToyReach\nhparams:\n  cost_scale: episode\n")
    assert run_directory.load_run_config(new)["hparams"]["cost_scale"] == "effective_horizon"
    assert configlib.resolve({"algo": "cpo", "env": "ToyReach"})["hparams"]["cost_scale"] == "per_sample"
    # an algorithm without the key is left alone
    (old / "config.yaml").write_text("algo: ppo\nenv: ToyReach\n")
    assert "cost_scale" not in run_directory.load_run_config(old)["hparams"]
    # constraint.window (added in commit e73f021) defaults to what runs before it did: J_c from each batch's episodes
    assert run_directory.load_run_config(old)["constraint"]["window"] == 0


@pytest.mark.parametrize("bad", [-1, 2.5, True, "50"])
def test_bad_cost_window_is_named(bad):
    with pytest.raises(config.ConfigError, match="constraint.window"):
        config.resolve({"algo": "cpo", "env": "ToyReach", "constraint": {"type": "expected", "window": bad}})


def test_a_var_constraint_takes_no_cost_window():
    with pytest.raises(config.ConfigError, match="unknown constraint.window"):
        config.resolve({"algo": "canary", "env": "IcyLake", "constraint": {"type": "var", "window": 50}})
    assert "window" not in config.resolve({"algo": "canary", "env": "IcyLake"})["constraint"]


def test_trainer_hands_the_algorithm_the_windowed_cost_estimate():
    """What the algorithm reads as J_c (batch.episodes["discounted_cost"]) after two rollouts is the mean
    of the last ``window`` episodes of both batches, not of the second batch alone."""
    import jax

    from saferl.training.trainer import RunnerState, Trainer

    window = 6
    cfg = config.resolve({**CFG, "seeds": 1, "constraint": {"type": "expected", "limit": 10.0, "window": window}})
    trainer = Trainer(cfg)
    runner = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    rollout = jax.jit(trainer.rollout_batch)
    finished, returns = [], []
    for key in jax.random.split(jax.random.PRNGKey(1), 2):
        env_state, obs, batch = rollout(runner, key)
        done = np.asarray(batch.episode_done)
        finished.extend(np.asarray(batch.episode_discounted_cost)[done, 0])
        returns.extend(np.asarray(batch.episode_return)[done])
        runner = RunnerState(
            runner.agent, env_state, obs, runner.key, batch.episodes, runner.iteration, runner.env_steps
        )
    assert len(finished) > window  # ToyReach's episodes are short: both batches contribute
    np.testing.assert_allclose(np.asarray(batch.episodes["discounted_cost"])[0], np.mean(finished[-window:]), rtol=1e-5)
    # and progress.csv logs that J_c as episode_cost_window beside the batch's own mean (the regret of ctrpo-table1)
    logged = trainer.learner.iteration_metrics(batch, runner.agent)
    np.testing.assert_allclose(float(logged["episode_cost_window"]), np.mean(finished[-window:]), rtol=1e-5)
    # and the same window of the episodes' returns (episode_return_window: the authors' EpRet of ctrpo-table1)
    np.testing.assert_allclose(float(logged["episode_return_window"]), np.mean(returns[-window:]), rtol=1e-5)
    done = np.asarray(batch.episode_done)
    np.testing.assert_allclose(float(logged["episode_cost"]), np.asarray(batch.episode_cost)[done, 0].mean(), rtol=1e-5)
    # and the spread of those episodes' costs (population SD, a logger's EpCost std: the SCPO paper's cost std)
    costs = np.asarray(batch.episode_cost)[done, 0]
    np.testing.assert_allclose(float(logged["episode_cost_sd"]), costs.std(), rtol=1e-4, atol=1e-6)


def test_summary_records_provenance(uninterrupted):
    from saferl.training import provenance

    run_dir, _ = uninterrupted
    saved = json.loads((run_dir / "summary.json").read_text())
    assert saved["config_hash"] == provenance.config_hash(config.resolve(CFG))
    assert saved["git_commits"] == [saved["git_commit"]]
    assert saved["training_seconds"] == pytest.approx(saved["wall_seconds"])


def test_progress_off_a_terminal_is_one_line_per_update(capsys):
    """Piped to a file or a CI log, progress is whole lines (no carriage-return stream), one per update."""
    progress = runs.Progress(total=3000, initial=0, label="ppo ToyReach x2 seeds")
    for done in (1000, 2000, 3000):
        progress.update(done, sps=1234.0, ret=1.5, cost=0.25)
    progress.close()
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 3
    assert lines[1] == "ppo ToyReach x2 seeds: 2,000/3,000 steps (67%), 1,234 env-steps/s, return 1.50, cost 0.25"
    runs.Progress(total=10, initial=0, label="quiet", enabled=False).update(5, 1.0, 0.0, 0.0)
    assert capsys.readouterr().err == ""


def test_a_second_trainer_of_the_same_program_runs_the_executable_the_first_compiled(uninterrupted):
    """The process's program cache (saferl.training.trainer.compiled_program): a trainer of the same config but its
    base seed gets the executable the uninterrupted run compiled, which computes what a fresh compile of its own
    computes; a change of any training entry (here one hyper-parameter) or of the number of seeds is another program."""
    import jax

    from saferl.training.trainer import Trainer, program_key

    other_seed = Trainer(config.resolve({**CFG, "seed": 7}))
    runners = other_seed.init_all()
    cached = other_seed.compile_chunk(runners)
    fresh = other_seed.compile_chunk(runners, reuse=False)
    assert cached is not fresh and other_seed.compile_chunk(runners) is fresh  # the newest entry is kept
    for got, want in zip(jax.tree.leaves(cached(runners)), jax.tree.leaves(fresh(runners))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    key = program_key(other_seed, "chunk", runners)
    assert key == program_key(Trainer(config.resolve(CFG)), "chunk", runners)
    hparam = Trainer(config.resolve({**CFG, "hparams": {**CFG["hparams"], "clip": 0.1}}))
    assert program_key(hparam, "chunk", runners) != key
    fewer_seeds = jax.tree.map(lambda x: x[:1], runners)
    assert program_key(other_seed, "chunk", fewer_seeds) != key

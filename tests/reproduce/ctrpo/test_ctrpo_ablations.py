"""C-TRPO's cost-value noise (App. D.3) and the ablation targets (saferl/reproduce/ctrpo/ablations.py).

Compile budget: every program here is a ToyReach rollout and the critics + GAE of a batch, except the one smoke of
``ctrpo-cost-noise`` (one swept C-TRPO program).
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from saferl import reproduce
from saferl.analysis import verdicts
from saferl.reproduce.ctrpo import ablations as abl
from saferl.training import config as configlib
from saferl.training import in_program_sweep, run_directory
from saferl.training.trainer import Trainer

NOISE = reproduce.get("ctrpo-cost-noise")
SMOKE = NOISE.scale("smoke")
SIGMA = SMOKE["values"][-1]  # the smoke's two values: 0 and this
KEY = "hparams.cost_value_noise"
GAMMA_C, LAM = 0.99, 0.95  # the defaults of C-TRPO's cost_gamma and gae_lambda (checked in the fixture)


@pytest.fixture(scope="module")
def batches():
    """The first iteration of the ctrpo-cost-noise smoke config's one swept program over {0, SIGMA} (runners 0-1:
    sigma 0, 2-3: SIGMA), up to the update: the real rollout, critics, noise and GAE, its batch (and the batch
    without noise, and the update's inputs) coming out as the iteration's metrics; and the batch that the learner of
    a separate run with SIGMA makes of the same inputs."""
    ((_, cfg),) = NOISE.plan(SMOKE, "out")
    assert cfg["sweep"] == {KEY: [0.0, SIGMA]} and cfg["seeds"] == 2
    assert (cfg["hparams"]["cost_gamma"], cfg["hparams"]["gae_lambda"]) == (GAMMA_C, LAM)
    trainer = Trainer(cfg)
    learner = trainer.learner

    def learn(agent, episodes, traj, key):
        batch = learner.make_batch(agent, episodes, traj, key)
        plain = learner.make_batch(agent, episodes, traj)  # no key: the noiseless path, no draw
        return (
            agent,
            episodes,
            {
                "advantages": batch.advantages,
                "values": batch.values,
                "returns": batch.returns,
                "plain_advantages": plain.advantages,
                "plain_values": plain.values,
                "done": traj.terminated | traj.truncated,
                "terminated": traj.terminated,
                "inputs": (agent, episodes, traj, key),
            },
        )

    learner.learn = learn
    runners = trainer.init_all()  # the program cache keeps it for the smoke test below
    _, metrics = jax.jit(jax.vmap(trainer.iteration))(runners, trainer.point_values())
    inputs = jax.tree.map(lambda x: x[2:], metrics.pop("inputs"))  # those of the SIGMA point's runners
    alone = Trainer(in_program_sweep.config_at(cfg, {KEY: SIGMA})).learner
    separate = jax.jit(jax.vmap(alone.make_batch))(*inputs)
    return {
        "swept": {k: np.asarray(v) for k, v in metrics.items()},
        "rollout": cfg["rollout_steps"],
        "envs": cfg["num_envs"],
        SIGMA: {"values": np.asarray(separate.values), "advantages": np.asarray(separate.advantages)},
    }


def test_the_hook_is_none_for_a_configured_zero_and_sigma_on_every_cost_channel():
    for env, channels in (("ToyReach", 1), ("ToyReach2", 2)):
        learner = Trainer(configlib.resolve({"algo": "ctrpo", "env": env, "seeds": 1})).learner
        assert learner.algo.channel_value_noise() is None  # the default 0.0: nothing drawn
        with learner.hparams({"cost_value_noise": 0.25}):
            assert learner.algo.channel_value_noise() == (0.0,) + (0.25,) * channels
        with learner.hparams({"cost_value_noise": jnp.float32(0.0)}):  # a swept 0 is traced: noise of scale 0
            noise = learner.algo.channel_value_noise()
            assert noise is not None and np.asarray(jnp.asarray(noise)).tolist() == [0.0] * (1 + channels)


def test_a_swept_zero_is_the_noiseless_batch_bit_for_bit(batches):
    swept = batches["swept"]
    for name in ("values", "advantages"):
        np.testing.assert_array_equal(swept[name][:2], swept[f"plain_{name}"][:2])  # traced sigma 0: exact zeros added
        np.testing.assert_array_equal(swept[f"plain_{name}"][:2], swept[f"plain_{name}"][2:])  # one rollout, one critic


def test_a_swept_sigma_is_the_separate_runs_batch_at_the_first_iteration(batches):
    for name in ("values", "advantages"):
        np.testing.assert_allclose(batches["swept"][name][2:], batches[SIGMA][name], rtol=1e-6, atol=1e-6)
    assert np.array_equal(batches["swept"]["done"][:2], batches["swept"]["done"][2:])  # one rollout for both points


def _noise(batches):
    """(value noise, advantage change) of the cost channel, ``(T, N)`` per seed stacked along N, and done."""
    swept = batches["swept"]
    T, N = batches["rollout"], batches["envs"]

    def channel(name, c):
        diff = (swept[name][2:] - swept[name][:2]).astype(np.float64)[..., c]  # (seeds, T * N)
        return np.concatenate([d.reshape(T, N) for d in diff], axis=1)

    done = np.concatenate([d.reshape(T, N) for d in swept["done"][:2]], axis=1)
    assert not swept["terminated"].any()  # ToyReach only truncates
    return channel, done


def test_noise_is_white_with_std_sigma_on_the_cost_values_only(batches):
    channel, _ = _noise(batches)
    assert np.all(channel("values", 0) == 0.0) and np.all(channel("advantages", 0) == 0.0)  # the reward's: untouched
    noise = channel("values", 1)
    n = noise.size
    assert abs(noise.std() / SIGMA - 1.0) < 4.0 / np.sqrt(2 * n)  # the cost's values: N(0, sigma^2) ...
    assert abs(noise.mean()) < 4.0 * SIGMA / np.sqrt(n)
    assert abs(np.corrcoef(noise[1:].ravel(), noise[:-1].ravel())[0, 1]) < 4.0 / np.sqrt(n)  # ... white in time
    assert abs(np.corrcoef(noise[:, 1:].ravel(), noise[:, :-1].ravel())[0, 1]) < 4.0 / np.sqrt(n)  # and across envs
    assert scipy.stats.kstest(noise.ravel() / SIGMA, "norm").pvalue > 1e-3
    # the critics' targets are the advantages plus the corrupted values, as the authors' buffer computes them
    swept = batches["swept"]
    np.testing.assert_allclose(swept["returns"], swept["advantages"] + swept["values"], atol=1e-5)


def _bootstrap_noise(batches):
    """The noise on each step's bootstrap value V(s_{t+1}), recovered from GAE's recursion on the advantage change:
    dA_t - gamma lam (1 - done_t) dA_{t+1} = gamma dV'_t - dV_t (no termination)."""
    channel, done = _noise(batches)
    da, dv = channel("advantages", 1), channel("values", 1)
    following = np.concatenate([da[1:], np.zeros((1, da.shape[1]))])
    return (da - GAMMA_C * LAM * (1.0 - done) * following + dv) / GAMMA_C, dv, done


def test_bootstrap_values_are_corrupted_with_std_sigma(batches):
    d_next, dv, _ = _bootstrap_noise(batches)
    assert abs(d_next.std() / SIGMA - 1.0) < 4.0 / np.sqrt(2 * d_next.size) + 2e-3
    # V(s_{t+1})'s noise is not V(s_t)'s (independent of it under either drawing, ours or the authors')
    assert abs(np.corrcoef(d_next.ravel(), dv.ravel())[0, 1]) < 4.0 / np.sqrt(d_next.size)


def test_an_interior_steps_bootstrap_carries_the_next_values_noise(batches):
    d_next, dv, done = _bootstrap_noise(batches)
    interior = ~done[:-1]
    np.testing.assert_allclose(d_next[:-1][interior], dv[1:][interior], atol=1e-3)


def test_a_negative_sigma_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"^hparams.cost_value_noise must be >= 0, got -0.1$"):
        configlib.resolve({"algo": "ctrpo", "env": "ToyReach", "hparams": {"cost_value_noise": -0.1}})


# --------------------------------------------------------------------------- aggregation and claims, synthetic rows


def test_seed_values_final_and_regret_by_hand():
    rows = [
        {"iteration": i + 1, "env_steps": 10 * (i + 1), "seed": s, "episode_cost": c}
        for s, costs in ((0, (30.0, np.nan, 20.0, 40.0)), (1, (26.0, 24.0, 25.0, 27.5)))
        for i, c in enumerate(costs)
    ]
    final = {"episode_return": {"per_seed": [1.0, None]}, "episode_cost": {"per_seed": [40.0, 27.5]}}
    values = abl.seed_values(rows, final, [0, 1], 25.0)
    np.testing.assert_array_equal(values["cost_regret"], [5.0 + 15.0, 1.0 + 2.5])  # a NaN iteration: no violation
    np.testing.assert_array_equal(values["final_return"], [1.0, np.nan])
    row = abl.interval_row(
        {
            "final_return": np.array([1.0, 3.0]),
            "final_cost": np.array([10.0, 12.0]),
            "cost_regret": np.array([0.0, 0.0]),
        }
    )
    assert row["final_return"] == 2.0 and 1.0 <= row["final_return_lo"] <= row["final_return_hi"] <= 3.0
    assert row["safety"] == "probably_safe" and row["cost_regret_lo"] == row["cost_regret_hi"] == 0.0
    assert (
        abl.interval_row({"final_return": np.ones(2), "final_cost": np.array([24.0, 30.0]), "cost_regret": np.ones(2)})[
            "safety"
        ]
        == "undecided"
    )


def _row(figure, name, value, ret, cost, regret, width=1.0):
    return {
        "figure": figure,
        name: value,
        "final_return": ret,
        "final_return_lo": ret - width,
        "final_return_hi": ret + width,
        "final_cost": cost,
        "final_cost_lo": cost - width,
        "final_cost_hi": cost + width,
        "cost_regret": regret,
        "cost_regret_lo": regret - width,
        "cost_regret_hi": regret + width,
        "safety": verdicts.safety_verdict(cost - width, cost + width, 25.0),
    }


def test_beta_claims():
    # the paper's picture: flat return up to beta = 1, lower at 5; cost and regret falling with beta
    rows = [
        _row("Fig. 8", "beta", b, r, c, g)
        for b, r, c, g in ((0.05, 100, 40, 900), (0.5, 99.5, 30, 600), (1.0, 100.5, 24, 300), (5.0, 80, 15, 100))
    ]
    checks = abl.beta_checks(rows)
    # claim verdicts of saferl.analysis.verdicts: "not below" is non-inferiority within a tenth of the smallest
    # beta's return (10 here), "below" an interval wholly below
    assert checks["return up to beta = 1 not below the smallest beta's"] == "reproduced"
    assert checks["return at the largest beta below beta = 1's"] == "reproduced"
    assert checks["final_cost at the largest beta below the smallest beta's"] == "reproduced"
    assert checks["rank correlation of beta and cost_regret"] == pytest.approx(-1.0)
    assert checks["safety"] == {
        "beta=0.05": "probably_unsafe",
        "beta=0.5": "probably_unsafe",
        "beta=1": "probably_safe",
        "beta=5": "probably_safe",
    }
    rows[1] = _row("Fig. 8", "beta", 0.5, 85, 30, 600)  # return degraded at 0.5: [84, 86] - [99, 101] < -10
    rows[3] = _row("Fig. 8", "beta", 5.0, 99, 15, 1000)
    checks = abl.beta_checks(rows)
    assert checks["return up to beta = 1 not below the smallest beta's"] == "not_reproduced"
    # 99 [98, 100] against beta = 1's 100.5 [99.5, 101.5]: overlapping, so no order is shown either way
    assert checks["return at the largest beta below beta = 1's"] == "undecided"
    assert checks["cost_regret at the largest beta below the smallest beta's"] == "not_reproduced"
    assert abl.beta_checks(rows[:1])["return at the largest beta below beta = 1's"] == "undecided"
    assert checks[abl.BOUND] is True
    # a sweep whose cost never reached the limit says nothing about the cost: its checks say so
    flat = [_row("Fig. 8", "beta", b, 50, 1, 0, width=0.0) for b in (0.05, 1.0, 5.0)]
    assert abl.beta_checks(flat)[abl.BOUND] is False
    assert abl.beta_checks(flat)["rank correlation of beta and cost_regret"] is None
    # regrets of 0 on both sides are the measure's floor, not a tie that refutes "below"
    assert abl.beta_checks(flat)["cost_regret at the largest beta below the smallest beta's"] == "undecided"
    unbound = [_row("Fig. 9", "hysteresis", h, 50, 20, 0, width=0.0) for h in (0.6, 0.8, 1.0)]
    assert abl.hysteresis_checks(unbound)["Fig. 9: regret at b_H = 0.8 b below b_H = b"] == "undecided"
    assert abl.hysteresis_checks(unbound)["Fig. 9: no b_H < b has regret above b_H = b"] == "undecided"
    # beta = 0.5 and 1 agree with each other, but both lost more than the margin against the smallest beta
    rows = [_row("Fig. 8", "beta", b, r, 20, 0) for b, r in ((0.05, 100), (0.5, 85), (1.0, 84))]
    assert abl.beta_checks(rows)["return up to beta = 1 not below the smallest beta's"] == "not_reproduced"
    # a loss within the margin is no loss for a "not below" claim
    rows = [_row("Fig. 8", "beta", b, r, 20, 0) for b, r in ((0.05, 100), (0.5, 97.5), (1.0, 97))]
    assert abl.beta_checks(rows)["return up to beta = 1 not below the smallest beta's"] == "reproduced"


def test_rank_correlation_is_spearmans():
    x, y = [0.0, 0.05, 0.1, 0.2, 0.5], [3.0, 1.0, 4.0, 1.5, 9.0]
    assert abl.rank_correlation(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic)
    assert abl.rank_correlation(x[:2], y[:2]) is None
    # ties take their average rank, as scipy's
    tied = [1.0, 0.0, 1.0, 2.0, 0.0]
    assert abl.rank_correlation(x, tied) == pytest.approx(scipy.stats.spearmanr(x, tied).statistic)
    # a constant series (regret 0 at every sigma: the constraint never bound) has no rank correlation
    assert abl.rank_correlation(x, [0.0] * 5) is None


def test_cost_noise_claims():
    rows = [
        _row("Fig. 11", "cost_value_noise", s, r, 20, g) for s, r, g in ((0.0, 50, 10), (0.1, 50, 30), (0.5, 48, 80))
    ]
    checks = abl.cost_noise_checks(rows[::-1])  # any order
    assert checks["regret at the largest sigma above the smallest sigma's"] == "reproduced"
    assert checks["rank correlation of sigma and cost_regret"] == pytest.approx(1.0)
    # 48 [47, 49] against 50 [49, 51]: touching, so "below" is not shown (the means alone would say it is)
    assert checks["return at the largest sigma below the smallest sigma's"] == "undecided"
    rows[2] = _row("Fig. 11", "cost_value_noise", 0.5, 52, 20, 10.5)
    checks = abl.cost_noise_checks(rows)
    assert checks["regret at the largest sigma above the smallest sigma's"] == "undecided"  # [9.5, 11.5] vs [9, 11]
    assert checks["return at the largest sigma below the smallest sigma's"] == "not_reproduced"  # [51, 53] vs [49, 51]


def _entry(task, label, ret, cost, regret):
    return {
        "task": task,
        "label": label,
        "values": {
            "final_return": np.asarray(ret, float),
            "final_cost": np.asarray(cost, float),
            "cost_regret": np.asarray(regret, float),
        },
    }


def test_fig10_normalises_per_task_and_takes_the_iqm_over_seeds_and_tasks():
    entries = []
    for task, scale in (("A", 1.0), ("B", 10.0)):  # task B's scores are 10x task A's: normalising removes that
        entries += [
            _entry(task, "PPO", np.array([8, 9, 11, 32]) * scale, [60] * 4, [0] * 4),  # mean 15, IQM 10
            _entry(task, "CPO", [1] * 4, [30] * 4, np.array([100, 100, 100, 500]) * scale),  # mean 200
            _entry(
                task, "C-TRPO", np.array([3, 6, 6, 9]) * scale, [20, 25, 25, 30], np.array([50, 100, 100, 150]) * scale
            ),
            _entry(task, "CPO (option: hysteresis)", [1] * 4, [25] * 4, np.array([0, 0, 400, 400]) * scale),
        ]
    rows, left_out = abl.fig10_rows(entries, reps=500)
    by = {r["method"]: r for r in rows}
    ctrpo = by["C-TRPO (hyst.)"]
    # returns / PPO's mean 15 (not its IQM 10): 0.2, 0.4, 0.4, 0.6 on both tasks; the IQM of the 8 drops 2 at each end
    assert ctrpo["normalized_return"] == pytest.approx(0.4)
    assert ctrpo["normalized_cost"] == pytest.approx(1.0)  # V_c / b: 0.8, 1, 1, 1.2 (not (V_c - b) / b)
    assert ctrpo["normalized_regret"] == pytest.approx(0.5)  # / CPO's mean 200 (not its IQM 100)
    assert 0.2 <= ctrpo["normalized_return_lo"] <= 0.4 <= ctrpo["normalized_return_hi"] <= 0.6
    assert by["CPO (hyst.)"]["normalized_regret"] == pytest.approx(1.0)  # 0, 0, 2, 2 twice: the middle four
    assert np.isnan(by["C-TRPO (no hyst.)"]["normalized_return"])  # not trained: no score
    no_run = {field: {"A": "no run", "B": "no run"} for field, _, _ in abl.FIG10_SCORES}
    assert left_out == {"C-TRPO (no hyst.)": no_run}
    bad = [
        e if e["label"] != "PPO" or e["task"] != "B" else _entry("B", "PPO", [-1, -2, -1, -2], [0] * 4, [0] * 4)
        for e in entries
    ]
    rows, left_out = abl.fig10_rows(bad, reps=100)
    assert {r["method"]: r for r in rows}["C-TRPO (hyst.)"]["normalized_return"] == pytest.approx(0.4)  # A alone
    assert left_out["C-TRPO (hyst.)"] == {"normalized_return": {"B": "reference -1.5 is not > 0"}}


def _fig10(method, ret, regret, width=0.05):
    return {
        "figure": "Fig. 10",
        "method": method,
        "normalized_return": ret,
        "normalized_return_lo": ret - width,
        "normalized_return_hi": ret + width,
        "normalized_regret": regret,
        "normalized_regret_lo": regret - width,
        "normalized_regret_hi": regret + width,
    }


def test_hysteresis_claims():
    sweep = [_row("Fig. 9", "hysteresis", h, 50, 20, g) for h, g in ((0.6, 90), (0.8, 80), (1.0, 120))]
    paper = [
        _fig10("C-TRPO (hyst.)", 0.65, 0.5),
        _fig10("C-TRPO (no hyst.)", 0.68, 0.7),
        _fig10("CPO (hyst.)", 0.7, 0.85),
        _fig10("CPO (no hyst.)", 0.7, 1.0),
    ]
    checks = abl.hysteresis_checks(sweep + paper)
    assert checks["Fig. 9: regret at b_H = 0.8 b below b_H = b"] == "reproduced"
    assert checks["Fig. 9: no b_H < b has regret above b_H = b"] == "reproduced"
    assert checks["Fig. 10: hysteresis lowers C-TRPO's cost regret"] == "reproduced"
    assert checks["Fig. 10: hysteresis lowers CPO's cost regret"] == "reproduced"
    # 0.65 [0.6, 0.7] against 0.68 [0.63, 0.73]: the IQMs are ordered, the intervals are not
    assert checks["Fig. 10: hysteresis lowers C-TRPO's return"] == "undecided"
    assert checks["Fig. 10: C-TRPO (no hyst.) regret below CPO (hyst.)"] == "reproduced"
    # saferl's PointGoal1 measurement (docs/decisions/029-cpo-hysteresis-option.md): without hysteresis C-TRPO is
    # above CPO with it
    paper[1] = _fig10("C-TRPO (no hyst.)", 0.5, 1.1)
    sweep[0] = _row("Fig. 9", "hysteresis", 0.6, 50, 20, 140)  # 140 [139, 141] above 120 [119, 121] by more than 12
    checks = abl.hysteresis_checks(sweep + paper)
    assert checks["Fig. 10: C-TRPO (no hyst.) regret below CPO (hyst.)"] == "not_reproduced"
    assert checks["Fig. 10: hysteresis lowers C-TRPO's return"] == "not_reproduced"  # [0.6, 0.7] above [0.45, 0.55]
    assert checks["Fig. 9: no b_H < b has regret above b_H = b"] == "not_reproduced"
    sweep[0] = _row("Fig. 9", "hysteresis", 0.6, 50, 20, 130)  # [-12, -8] from b_H = b's: within the margin 12
    assert abl.hysteresis_checks(sweep)["Fig. 9: no b_H < b has regret above b_H = b"] == "reproduced"
    assert abl.hysteresis_checks(sweep)["Fig. 10: hysteresis lowers CPO's cost regret"] == "undecided"


def test_phi_claims():
    rows = [
        dict(_row("phi", "x", 0, r, c, g), env=task, label=label, method=label)
        for task, label, r, c, g in (
            ("A", "C-TRPO", 10, 20, 100),
            ("A", abl.PHI_METHODS[1][0], 5, 20, 100),
            ("B", "C-TRPO", 10, 20, 500),
            ("B", abl.PHI_METHODS[1][0], 10, 20, 100),
        )
    ]
    checks = abl.phi_checks(rows)
    assert checks["A"]["x log x vs -log x, return"] == "above"
    assert checks["B"]["x log x vs -log x, cost regret"] == "above"
    assert checks["tasks where x log x is worse (return below or regret above)"] == 1


# --------------------------------------------------------------------------- one target end to end


def test_cost_noise_smoke_end_to_end(tmp_path):
    tgt = reproduce.get("ctrpo-cost-noise")
    scale = tgt.scale("smoke")
    ((run_dir, cfg),) = tgt.plan(scale, tmp_path)
    result = reproduce.run("ctrpo-cost-noise", "smoke", tmp_path)
    assert run_directory.load_run_config(run_dir)["sweep"] == cfg["sweep"] == {"hparams.cost_value_noise": [0.0, 0.5]}
    assert cfg["hparams"]["hysteresis"] == 1.0  # the authors' noise runs: hyst_frac 1.0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [r["cost_value_noise"] for r in saved["rows"]] == [0.0, 0.5]
    assert [r["status"] for r in saved["runs"]] == ["trained"] and (tmp_path / saved["figures"][0]).is_file()
    summary = json.loads((run_dir / "summary.json").read_text())
    progress = run_directory.read_progress(run_dir)
    for index, row in enumerate(saved["rows"]):  # each row from its own point's progress rows, recomputed here
        costs = np.array(
            [[r["episode_cost"] for r in progress if r["sweep_point"] == index and r["seed"] == s] for s in (0, 1)]
        )
        regret = np.maximum(np.where(np.isnan(costs), 25.0, costs) - 25.0, 0.0).sum(axis=1)
        assert row["cost_regret"] == pytest.approx(regret.mean())
        assert row["final_cost"] == pytest.approx(np.mean(summary["grid"][index]["final"]["episode_cost"]["per_seed"]))
        assert row["final_cost_lo"] <= row["final_cost"] <= row["final_cost_hi"]
    assert set(saved["checks"]) == {*abl.cost_noise_checks(saved["rows"]), "budget"}
    assert result["checks"] == saved["checks"]
    # the budget every verdict carries: ToyReach's smoke steps against the paper's 10M, 2 seeds against 5
    budget = saved["checks"]["budget"]["ToyReach"]
    assert budget["paper_steps"] == 10_000_000 and budget["seeds"] == 2 and budget["paper_seeds"] == 5
    assert budget["fraction"] == pytest.approx(budget["steps"] / 10_000_000)


def test_every_ablation_run_starts_its_actor_at_the_authors_std_1(tmp_path):
    """milosen/ctrpo common/model.py: ``log_std = zeros`` (saferl's default is -0.5); the sweeps and the
    per-task ablations (which reuse ctrpo-table1's runs) alike, and the actor's parameters follow."""
    from saferl.training.trainer import Trainer

    configs = [
        cfg
        for name in ("ctrpo-beta", "ctrpo-hysteresis", "ctrpo-cost-noise", "ctrpo-phi")
        for _, cfg in reproduce.get(name).plan(reproduce.get(name).scale("cpu"), tmp_path)
    ]
    assert len(configs) > 4 and all(cfg["network"]["init_log_std"] == 0.0 for cfg in configs)
    smoke = reproduce.get("ctrpo-beta")
    ((_, cfg),) = smoke.plan(smoke.scale("smoke"), tmp_path)
    agent = Trainer(cfg).learner.init_agent(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(agent.actor_params["log_std"], 0.0)

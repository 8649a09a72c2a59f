"""Details of the VaR constraints:

* Canary's recovery step (mu >= rho, Canary Sec. 4.5) lowers the mean-cost surrogate mean(ratio A_c), and does
  not optimise the reward surrogate (which a safe batch's step raises);
* the indicator surrogate's P(C >= rho) is computed from real per-episode costs: the finished episodes only,
  C = rho counted, held to epsilon;
* for a VaR constraint the risk channels' GAE discount is the constraint's gamma_c, not hparams.cost_gamma
  (``Learner.__init__``), and an expected-cost constraint keeps cost_gamma.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from saferl.algos import base
from saferl.core import constraints, networks, risk
from saferl.core.rollout import Batch, Trajectory, episode_estimates, initial_episodes
from saferl.training import config
from saferl.training.trainer import Trainer


def _var_algo(name, surrogate, **hp):
    cls = base.get(name)
    actor = networks.GaussianActor(2, 1, (8,))
    critics = networks.Critics(2, 1 + len(risk.CHANNELS[surrogate]), (8,))
    return cls(cls.resolve_hparams(hp), actor, critics, "var", surrogate)


def _var_constraint(rho, eps, surrogate, gamma_c=1.0):
    f = jnp.float32
    return constraints.Constraint(limit=f(rho), epsilon=f(eps), gamma_c=f(gamma_c), kind="var", surrogate=surrogate)


def _batch(algo, agent, n=128, episodes=None, done=None, costs=None):
    """Actions drawn from the policy; A_r and A_c both grow with the action (the reward pays for what costs),
    the augmented channel is noise."""
    k_obs, k_act, k_noise = jax.random.split(jax.random.PRNGKey(3), 3)
    obs = jax.random.normal(k_obs, (n, 2))
    dist = algo.actor.distribution(agent.actor_params, obs)
    action = algo.actor.sample(dist, k_act)
    a = action[:, 0]
    noise = jax.random.normal(k_noise, (n, algo.critics.num_channels))
    adv = jnp.concatenate([(a + 0.3 * noise[:, 0])[:, None], (a + 0.3 * noise[:, 1])[:, None], noise[:, 2:]], 1)
    zeros = jnp.zeros((n,))
    done = zeros if done is None else jnp.asarray(done)
    costs = jnp.zeros((n, 1)) if costs is None else jnp.asarray(costs, jnp.float32).reshape(n, 1)
    return Batch(
        obs=obs,
        action=action,
        log_prob=algo.actor.log_prob(dist, action),
        dist=dist,
        advantages=adv,
        returns=jnp.zeros_like(adv),
        values=jnp.zeros_like(adv),
        episode_done=done,
        episode_return=zeros,
        episode_cost=costs,
        episode_discounted_cost=costs,
        episode_length=jnp.full((n,), 50.0),
        timestep=jnp.arange(n) % 50,
        episodes=episodes,
    )


def _surrogates(algo, params, batch):
    """(mean(ratio A_r~), mean(ratio A_c~)) with the batch's own advantages, A_r standardised, A_c centred: both 0
    at theta_k."""
    dist = algo.actor.distribution(params, batch.obs)
    ratio = jnp.exp(algo.actor.log_prob(dist, batch.action) - batch.log_prob)
    adv_r = base.normalize(batch.advantages[:, 0])
    adv_c = batch.advantages[:, 1] - jnp.mean(batch.advantages[:, 1])
    return float(jnp.mean(ratio * adv_r)), float(jnp.mean(ratio * adv_c))


def test_canary_recovery_step_lowers_the_mean_cost_surrogate_not_the_reward_one():
    rho, eps = 20.0, 0.1
    algo = _var_algo("canary", "cantelli", cg_iters=5, backtracks=4)
    agent = algo.init(jax.random.PRNGKey(0), _var_constraint(rho, eps, "cantelli"))
    step = jax.jit(algo.policy_step)
    results = {}
    for mu, mu2 in [(25.0, 700.0), (5.0, 30.0)]:  # mu >= rho: recovery; mu = 5, var 5: J_C < 0, slack
        episodes = {
            "discounted_cost": jnp.array([mu]),
            "discounted_cost_sq": jnp.array([mu2]),
            "length": jnp.float32(50.0),
        }
        batch = _batch(algo, agent, episodes=episodes)
        _, prepared, info = algo.prepare_batch(agent, batch)
        stepped, metrics = step(agent, prepared)
        assert float(metrics["accepted"]) == 1.0 and 0.0 < float(metrics["kl"]) <= 0.01 * 1.0001
        at_old = _surrogates(algo, agent.actor_params, batch)
        np.testing.assert_allclose(at_old, (0.0, 0.0), atol=1e-6)
        results[float(info["recovery"])] = _surrogates(algo, stepped.actor_params, batch)
    reward, cost = results[1.0]
    assert cost < -1e-3  # the step lowered E[ratio A_c] below its value 0 at theta_k: the mean cost mu
    assert reward < 0.0  # the reward, which pays for the same actions, is not what it optimised
    safe_reward, _ = results[0.0]
    assert safe_reward > 1e-3  # on a slack batch the same step raises the reward surrogate


def test_indicator_violation_fraction_is_over_the_finished_episodes_with_equality_counted():
    rho, eps = 2.5, 0.2
    algo = _var_algo("cpo_var", "indicator")
    constraint = _var_constraint(rho, eps, "indicator")
    agent = base.AgentState(
        algo.actor.init(jax.random.PRNGKey(0)), None, None, None, constraint, algo.init_extra(constraint)
    )
    # 16 rows, 6 finished episodes; the unfinished rows hold running costs, several at or above rho
    done = np.zeros(16, bool)
    done[[1, 4, 6, 9, 12, 15]] = True
    costs = np.array([3.0, 1.0, 4.0, 7.5, 2.5, 0.0, 2.5, 9.0, 2.5, 0.5, 6.0, 5.0, 3.25, 8.0, 2.5, 1.75], np.float32)
    finished = costs[done]  # 1.0, 2.5, 2.5, 0.5, 3.25, 1.75: 3 of 6 at or above rho, 2 of them at rho
    expected = np.mean(finished >= rho)
    assert expected == 0.5 and np.mean(finished > rho) != expected and np.mean(costs >= rho) != expected
    batch = _batch(algo, agent, n=16, done=done, costs=costs)
    levels = algo.risk_levels(agent)  # (rho, eta) as the learner passes them
    estimates = episode_estimates(batch, initial_episodes(1, var=True), *levels)
    np.testing.assert_allclose(float(estimates["violation"]), expected, rtol=1e-6)
    np.testing.assert_allclose(float(estimates["count"]), 6.0)
    _, prepared, _ = algo.prepare_batch(agent, batch.replace(episodes=estimates))
    value, limit = algo.cost_and_limit(agent, prepared)  # what the CPO step compares: P against epsilon
    np.testing.assert_allclose(np.asarray(value), [expected], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(limit), [eps], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(prepared.advantages[:, 1]), np.asarray(batch.advantages[:, 1]))


def _discounted_to_go(signal, done, gamma):
    """sum_k gamma^k s_{t+k} up to the end of t's episode (or of the rollout): (T, N, K) by a reverse loop."""
    out = np.zeros_like(signal, dtype=np.float64)
    running = np.zeros(signal.shape[1:])
    for t in reversed(range(signal.shape[0])):
        running = signal[t] + gamma * running * (1.0 - done[t])[:, None]
        out[t] = running
    return out


def _learner_returns(constraint, hparams):
    cfg = config.resolve(
        {
            "algo": "ppo_lag",
            "env": "ToyReach",
            "num_envs": 2,
            "rollout_steps": 7,
            "network": {"actor_hidden": [4], "critic_hidden": [4], "value_normalization": False},
            "constraint": constraint,
            "hparams": {"gae_lambda": 1.0, "minibatches": 2, **hparams},
        }
    )
    learner = Trainer(cfg).learner
    rng = np.random.default_rng(0)
    T, N, K = 7, 2, learner.critics.num_channels
    # env 0: an episode ends (truncated) after step 3; env 1 terminates after step 4; both then run on to the cut
    terminated, truncated = np.zeros((T, N), bool), np.zeros((T, N), bool)
    truncated[3, 0], terminated[4, 1] = True, True
    obs = jnp.asarray(rng.normal(size=(T, N, learner.actor.obs_dim)), jnp.float32)
    reward, cost = rng.random((T, N)), rng.random((T, N, K - 1))
    zeros = jnp.zeros((T, N))
    traj = Trajectory(
        obs=obs,
        action=jnp.zeros((T, N, 1)),
        log_prob=zeros,
        dist={"mean": jnp.zeros((T, N, 1))},
        reward=jnp.asarray(reward, jnp.float32),
        cost=jnp.asarray(cost, jnp.float32),
        terminated=jnp.asarray(terminated),
        truncated=jnp.asarray(truncated),
        final_obs=obs,
        episode_done=jnp.asarray(terminated | truncated),
        episode_return=zeros,
        episode_cost=jnp.zeros((T, N, 1)),
        episode_discounted_cost=jnp.zeros((T, N, 1)),
        episode_length=jnp.ones((T, N), jnp.int32),
    )
    critic_shapes = jax.eval_shape(learner.critics.init, jax.random.PRNGKey(0))
    zero_critics = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), critic_shapes)  # V = 0 everywhere
    agent = base.AgentState(
        None, zero_critics, None, None, learner.constraint, learner.algo.init_extra(learner.constraint)
    )
    batch = learner.make_batch(agent, learner.init_episodes(), traj)
    signal = np.concatenate([reward[..., None], cost], -1)
    done = (terminated | truncated).astype(np.float64)
    return learner, np.asarray(batch.returns).reshape(T, N, K), signal, done


def test_var_constraint_discounts_the_risk_channels_with_its_gamma_c():
    hp = {"gamma": 0.95, "cost_gamma": 0.99}
    learner, returns, signal, done = _learner_returns(
        {"type": "var", "rho": 5.0, "epsilon": 0.1, "gamma_c": 0.9, "surrogate": "cantelli"}, hp
    )
    assert learner.critics.num_channels == 3  # reward, C, C~
    np.testing.assert_allclose(np.asarray(learner.gammas), [0.95, 0.9, 0.9], rtol=1e-7)
    np.testing.assert_allclose(returns[..., :1], _discounted_to_go(signal[..., :1], done, 0.95), rtol=1e-5)
    np.testing.assert_allclose(returns[..., 1:], _discounted_to_go(signal[..., 1:], done, 0.9), rtol=1e-5)
    # an expected-cost constraint (with its own gamma_c) keeps the critics' cost_gamma
    learner, returns, signal, done = _learner_returns({"type": "expected", "limit": 5.0, "gamma_c": 0.9}, hp)
    np.testing.assert_allclose(np.asarray(learner.gammas), [0.95, 0.99], rtol=1e-7)
    np.testing.assert_allclose(returns[..., 1:], _discounted_to_go(signal[..., 1:], done, 0.99), rtol=1e-5)

"""SCPO (Mhamed & Gu, arXiv:2311.00880): the safety critic's targets (eq. 18), the App. C estimates of Q^c, the
reshaped reward (eq. 11, App. E.1), the reward bias, the cumulative-cost state (Sec. 4.2), the safety head, the L1 / L2
surrogates (App. E.2), the per-task defaults (App. G Table 2) and a short learning run, each against hand numbers."""

import math

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium import spaces
from helpers import train_toy  # noqa: E402  (the ToyReach training helper)

from saferl.algos.ppo import clipped_surrogate_loss
from saferl.algos.scpo import (
    SCPO,
    authors_safety_q,
    cumulative_cost_before,
    nstep_safety_q,
    reshaped_reward,
    safety_indicator,
    safety_signal,
    safety_targets,
    scpo_surrogate_loss,
)
from saferl.core import networks
from saferl.core.rollout import Trajectory, gae
from saferl.envs.base import make
from saferl.envs.cost_state import CostStateAugmentation, cost_state_feature
from saferl.envs.wrappers import AutoReset, EpisodeStatistics
from saferl.training import config
from saferl.training.gym_trainer import GymTrainer
from saferl.training.learner import Learner
from saferl.training.trainer import Trainer

GAMMA_S = 0.9


def col(values, dtype=jnp.float32):
    """A (T, N = 1) block."""
    return jnp.asarray(values, dtype)[:, None]


# Two episodes in one block of T = 7 steps, limit c0 = 1.5:
#   A: steps 0-3, costs 0 1 1 0, ends at step 3 (q before each step 0 0 1 2: unsafe from s_3 on; f(s_T) = 0)
#   B: steps 4-6, no cost, still running when the block ends (bootstrapped with V^c)
COSTS = [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
LENGTHS = [1, 2, 3, 4, 1, 2, 3]
DONE = [False, False, False, True, False, False, False]
LIMIT = 1.5


def running_totals(costs, lengths):
    totals, q = [], 0.0
    for c, n in zip(costs, lengths):
        q = (0.0 if n == 1 else q) + c
        totals.append(q)
    return totals


def block_terms():
    cost = col(COSTS)[..., None]
    after = col(running_totals(COSTS, LENGTHS))[..., None]
    before = cumulative_cost_before(after, cost, col(LENGTHS, jnp.int32))
    return safety_indicator(before, LIMIT), safety_indicator(after, LIMIT), col(DONE, bool), before


# --------------------------------------------------------------------------- the safety indicator and eq. 18


def test_cumulative_cost_and_indicator_from_running_totals():
    f, f_next, _, before = block_terms()
    np.testing.assert_array_equal(before[:, 0, 0], [0, 0, 1, 2, 0, 0, 0])
    np.testing.assert_array_equal(f[:, 0], [1, 1, 1, 0, 1, 1, 1])  # f(s_t) = 1[q_t <= c0]
    np.testing.assert_array_equal(f_next[:, 0], [1, 1, 0, 0, 1, 1, 1])  # f(s_{t+1})
    # at the limit is still safe (q <= c0), every channel must be within its limit
    assert float(safety_indicator(jnp.asarray([1.5]), 1.5)) == 1.0
    assert float(safety_indicator(jnp.asarray([1.0, 3.0]), jnp.asarray([2.0, 2.0]))) == 0.0
    # a block that starts inside an episode: q_0 = q_1 - c_0
    mid = cumulative_cost_before(col([3.0, 4.0])[..., None], col([1.0, 1.0])[..., None], col([7, 8], jnp.int32))
    np.testing.assert_array_equal(mid[:, 0, 0], [2.0, 3.0])


def test_safety_targets_of_a_safe_episode_are_one_for_every_discount():
    """Eq. 18 with f = 1 throughout: V = 1 whatever gamma_s (App. C: "if f(S_{T-1}) = 1 then V = 1")."""
    ones = col([1.0] * 5)
    done = col([False] * 4 + [True], bool)
    for gamma in (1.0, 0.995, 0.5):
        y = safety_targets(ones, ones, col([0.3] * 5), done, gamma)
        np.testing.assert_allclose(y[:, 0], 1.0, rtol=1e-6)


def test_safety_targets_unsafe_from_step_t_undiscounted_and_discounted():
    f, f_next, done, _ = block_terms()
    v_next = col([0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4])
    # gamma_s = 1: the one-sample estimate f(s_T) of the episode (A: 0), the bootstrap V^c(s_7) = 0.4 for B
    np.testing.assert_allclose(
        safety_targets(f, f_next, v_next, done, 1.0)[:, 0], [0, 0, 0, 0, 0.4, 0.4, 0.4], atol=1e-7
    )
    # gamma_s = 0.9 by hand: A  Y3 = .1*0 + .9*f(s_T)=0;  Y2 = .1 + .9*0;  Y1 = .1 + .9*.1;  Y0 = .1 + .9*.19
    #                        B  Y6 = .1 + .9*0.4;  Y5 = .1 + .9*.46;  Y4 = .1 + .9*.514
    expected = [0.271, 0.19, 0.1, 0.0, 0.5626, 0.514, 0.46]
    np.testing.assert_allclose(safety_targets(f, f_next, v_next, done, GAMMA_S)[:, 0], expected, rtol=1e-6, atol=1e-7)
    # the unrolled form with its terminal term: Y_t = sum_j (1 - g) g^j f(s_{t+j}) + g^{T-t} f(s_T)
    fa = [1, 1, 1, 0]
    for t in range(4):
        closed = sum((1 - GAMMA_S) * GAMMA_S**j * fa[t + j] for j in range(4 - t)) + GAMMA_S ** (4 - t) * 0.0
        assert closed == pytest.approx(expected[t], abs=1e-7)


# --------------------------------------------------------------------------- Q^c estimates (App. C)


def test_nstep_estimate_by_hand_and_its_limit_the_episodes_safety():
    f, f_next, done, _ = block_terms()
    v_next = col([0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4])  # V^c(s_{t+1}); ignored where the episode ended
    q = {n: nstep_safety_q(f, f_next, v_next, done, n)[:, 0] for n in (1, 2, 3, 50)}
    # Qhat^(1) = f(s_t) V^c(s_{t+1}), V^c(s_T) := f(s_T) = 0 after A's last step
    np.testing.assert_allclose(q[1], [0.9, 0.8, 0.7, 0.0, 0.5, 0.45, 0.4])
    # Qhat^(2) = f(s_{t+1}) V^c(s_{t+2}): 0.8, 0.7, f(s_3) = 0, past the end f(s_T); B: 0.45, 0.4, last row 1 step
    np.testing.assert_allclose(q[2], [0.8, 0.7, 0.0, 0.0, 0.45, 0.4, 0.4])
    np.testing.assert_allclose(q[3], [0.7, 0.0, 0.0, 0.0, 0.4, 0.4, 0.4])
    # k -> infinity: the finished episode's safety f(s_T) (0 for A); B as far as the block goes, f(s_6) V^c(s_7)
    np.testing.assert_allclose(q[50], [0.0, 0.0, 0.0, 0.0, 0.4, 0.4, 0.4])
    safe = nstep_safety_q(col([1.0] * 4), col([1.0] * 4), col([0.2] * 4), col([False] * 3 + [True], bool), 50)
    np.testing.assert_allclose(safe[:, 0], 1.0)  # a safe finished episode: f(s_T) = 1 at every step


def test_authors_estimate_averages_the_critic_and_the_next_states_target():
    f, f_next, done, _ = block_terms()
    v = col([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    v_next = col([0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4])
    y = [0.271, 0.19, 0.1, 0.0, 0.5626, 0.514, 0.46]
    following = [y[1], y[2], y[3], 0.0, y[5], y[6], 0.4]  # Y_{t+1}; f(s_T) = 0 after A; V^c(s_7) at the block end
    expected = 0.5 * (np.asarray([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) + np.asarray(following))
    np.testing.assert_allclose(authors_safety_q(v, f, f_next, v_next, done, GAMMA_S)[:, 0], expected, rtol=1e-6)


def crossing_terms():
    """One episode of three steps whose last cost crosses the limit: f(s_0..s_2) = 1, f(s_T) = 0 (costs 0, 0, 2)."""
    costs, lengths = [0.0, 0.0, 2.0], [1, 2, 3]
    cost = col(costs)[..., None]
    after = col(running_totals(costs, lengths))[..., None]
    before = cumulative_cost_before(after, cost, col(lengths, jnp.int32))
    return safety_indicator(before, LIMIT), safety_indicator(after, LIMIT), col([False, False, True], bool)


def test_every_estimate_ends_on_the_state_after_the_last_cost():
    """Eq. 18 and App. C end an episode on f(s_T), the state after its last step, not on f(s_{T-1}): an episode
    safe until its last step crosses the limit ends unsafe in the V^c target, the signal and both Qhat^c."""
    f, f_next, done = crossing_terms()
    np.testing.assert_array_equal(f[:, 0], [1, 1, 1])
    np.testing.assert_array_equal(f_next[:, 0], [1, 1, 0])
    v, v_next = col([0.2, 0.3, 0.4]), col([0.9, 0.8, 0.7])
    # gamma_s = 0.9: Y_2 = .1 * 1 + .9 * f(s_T) = .1; Y_1 = .1 + .9 * .1 = .19; Y_0 = .1 + .9 * .19 = .271
    y = [0.271, 0.19, 0.1]
    np.testing.assert_allclose(safety_targets(f, f_next, v_next, done, GAMMA_S)[:, 0], y, rtol=1e-6)
    np.testing.assert_allclose(safety_signal(f, f_next, done, GAMMA_S)[:, 0], [0.1, 0.1, 0.1], rtol=1e-6)
    # Qhat^(1) = f(s_t) V^c(s_{t+1}), V^c(s_T) := f(s_T) = 0; n -> infinity: f(s_T) = 0 at every step
    np.testing.assert_allclose(nstep_safety_q(f, f_next, v_next, done, 1)[:, 0], [0.9, 0.8, 0.0])
    np.testing.assert_allclose(nstep_safety_q(f, f_next, v_next, done, 50)[:, 0], [0.0, 0.0, 0.0])
    # the authors': 1/2 (V^c(s_t) + Y_{t+1}), Y_{t+1} = f(s_T) = 0 after the last step
    expected = 0.5 * (np.array([0.2, 0.3, 0.4]) + np.array([y[1], y[2], 0.0]))
    np.testing.assert_allclose(authors_safety_q(v, f, f_next, v_next, done, GAMMA_S)[:, 0], expected, rtol=1e-6)


# --------------------------------------------------------------------------- the reshaped reward (eq. 11)


def test_reshaped_reward_by_hand():
    r, c, q = jnp.asarray([0.5, -0.2, 1.0]), jnp.asarray([1.0, 0.0, 1.0]), jnp.asarray([0.5, 0.9, 1.0])
    got = reshaped_reward(r, c, q, 2.0, 3.0, 0.5)
    # (r + b) Q^k - beta (1 - Q^k) c:  1.0*.25 - 3*.75*1;  0.3*.81 - 0;  1.5*1 - 0
    np.testing.assert_allclose(got, [0.25 - 2.25, 0.3 * 0.81, 1.5], rtol=1e-6)
    plain = reshaped_reward(r, c, q, 2.0, 3.0, 0.5, "plain")  # App. E.1: - beta c
    np.testing.assert_allclose(plain, [0.25 - 3.0, 0.3 * 0.81, 1.5 - 3.0], rtol=1e-6)


def test_safety_weight_tends_to_the_indicator_of_certain_safety_and_decreases_with_k():
    """lim_k Q^k = 1[Q = 1] (Sec. 4.3.1): the reward survives only where Q = 1, the cost is then charged in full;
    with r + b >= 0, V^{r,0} >= V^{r,1} >= ... (per step, r' does not increase with k)."""
    q = jnp.asarray([0.0, 0.5, 0.9, 0.99, 1.0])
    r, c = jnp.full(5, 0.7), jnp.ones(5)
    limit = reshaped_reward(r, c, q, 5000.0, 2.0, 0.3)
    np.testing.assert_allclose(limit, [-2.0, -2.0, -2.0, -2.0, 1.0], atol=1e-6)
    steps = [reshaped_reward(r, jnp.zeros(5), q, k, 2.0, 0.3) for k in (0.0, 1.0, 2.0, 4.0, 8.0)]
    assert all(bool(jnp.all(a >= b)) for a, b in zip(steps, steps[1:]))


def test_k_zero_is_plain_ppo_under_eq11_and_a_fixed_multiplier_lagrangian_under_app_e1():
    r, c, q = jnp.asarray([0.5, -0.2, 1.0]), jnp.asarray([1.0, 0.0, 2.0]), jnp.asarray([0.0, 0.3, 1.0])
    np.testing.assert_allclose(reshaped_reward(r, c, q, 0.0, 3.0, 0.25), r + 0.25)  # Q^0 = 1 cancels beta
    np.testing.assert_allclose(reshaped_reward(r, c, q, 0.0, 3.0, 0.0, "plain"), r - 3.0 * c)


def test_reward_bias_keeps_the_cancelled_reward_a_penalty():
    """Definition 2 / Sec. 4.3 assume r >= 0: with r + b >= 0, r' >= 0 wherever c = 0 and cancelling (Qhat < 1)
    never raises r'; without the bias a negative reward is raised towards 0 by an unsafe Qhat."""
    r = jnp.linspace(-1.0, 1.0, 21)  # ToyReach's reward range
    zero = jnp.zeros_like(r)
    for q in (0.0, 0.3, 1.0):
        shaped = reshaped_reward(r, zero, jnp.full_like(r, q), 4.0, 0.5, 1.0)
        assert bool(jnp.all(shaped >= 0.0))
        assert bool(jnp.all(shaped <= reshaped_reward(r, zero, jnp.ones_like(r), 4.0, 0.5, 1.0)))
    unbiased = reshaped_reward(r, zero, zero, 4.0, 0.5, 0.0)
    assert bool(jnp.any(unbiased > r))  # b = 0, r < 0: being unsafe pays


def test_safety_signal_is_eq18_per_step_term():
    f, f_next, done, _ = block_terms()
    np.testing.assert_allclose(
        safety_signal(f, f_next, done, GAMMA_S)[:, 0], [0.1, 0.1, 0.1, 0.0 + 0.9 * 0.0, 0.1, 0.1, 0.1], rtol=1e-6
    )
    ones = col([1.0, 1.0])  # an episode that ends safe: its last step carries gamma_s f(s_T) = 0.9
    np.testing.assert_allclose(
        safety_signal(ones, ones, col([False, True], bool), GAMMA_S)[:, 0], [0.1, 1.0], rtol=1e-6
    )


# --------------------------------------------------------------------------- through the learner


def scpo_learner(**hp):
    cfg = config.resolve(
        {
            "algo": "scpo",
            "env": "ToyReach",
            "constraint": {"type": "expected", "limit": LIMIT},
            "network": {"actor_hidden": [8], "critic_hidden": [8]},
            "hparams": {"safety_gamma": GAMMA_S, **hp},
        }
    )
    env = make("ToyReach")
    learner = Learner(cfg, 3, env.action_space(env.default_params()), 1, 1)
    agent = learner.init_agent(jax.random.PRNGKey(0))
    # constant critics: V^{rc,k} = 0.3, V^C = 0, V^c = 0.4 (the unit head of atanh(0.4)) on every state
    last = agent.critic_params[-1]
    bias = jnp.asarray([[0.3], [0.0], [math.atanh(0.4)]], jnp.float32)
    params = [*agent.critic_params[:-1], {"w": jnp.zeros_like(last["w"]), "b": bias}]
    return learner, agent.replace(critic_params=params)


def scripted_trajectory(rewards):
    t = len(COSTS)
    obs = jax.random.normal(jax.random.PRNGKey(1), (t, 1, 3))
    zeros = col([0.0] * t)
    # episode A ends by truncation (the time limit): the safety channel must still end there
    return Trajectory(
        obs=obs,
        action=jnp.zeros((t, 1, 1)),
        log_prob=zeros,
        dist={"mean": jnp.zeros((t, 1, 1)), "log_std": jnp.zeros((t, 1, 1))},
        reward=col(rewards),
        cost=col(COSTS)[..., None],
        terminated=col([False] * t, bool),
        truncated=col(DONE, bool),
        final_obs=obs + 1.0,
        episode_done=col(DONE, bool),
        episode_return=zeros,
        episode_cost=col(running_totals(COSTS, LENGTHS))[..., None],
        episode_discounted_cost=col(running_totals(COSTS, LENGTHS))[..., None],
        episode_length=col(LENGTHS, jnp.int32),
    )


REWARDS = [0.5, -0.2, 1.0, 0.3, 0.0, 0.7, -0.5]


def test_learner_declares_the_channels_and_fits_the_safety_critic_to_eq18():
    learner, agent = scpo_learner(k=2.0, beta=3.0, reward_bias=1.0, q_estimate="nstep", q_steps=1)
    np.testing.assert_allclose(learner.gammas, [0.99, 0.99, GAMMA_S], rtol=1e-6)
    np.testing.assert_allclose(learner.gae_lambdas, [0.95, 0.95, 1.0])
    np.testing.assert_array_equal(learner.end_at_truncation, [0.0, 0.0, 1.0])
    batch = learner.make_batch(agent, learner.init_episodes(), scripted_trajectory(REWARDS))
    np.testing.assert_allclose(batch.values[:, 2], 0.4, rtol=1e-6)
    # the safety channel's targets are eq. 18's, though A ended by truncation and the reward's lambda is 0.95
    np.testing.assert_allclose(batch.returns[:, 2], [0.271, 0.19, 0.1, 0.0, 0.5626, 0.514, 0.46], rtol=1e-5, atol=1e-6)
    # the reward channel sees r' (n = 1: Qhat = 0.4 except after A's unsafe last step, Qhat = f(s_T) = 0)
    shaped = learner.algo.prepare_trajectory(agent, scripted_trajectory(REWARDS))
    w = 0.4**2
    expected = [1.5 * w, 0.8 * w - 3 * (1 - w), 2.0 * w - 3 * (1 - w), 0.0, 1.0 * w, 1.7 * w, 0.5 * w]
    np.testing.assert_allclose(shaped.reward[:, 0], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(shaped.cost[:, 0, 0], COSTS)  # the env's cost channel is kept


def test_the_learners_qhat_reads_vc_on_the_next_observations_at_the_safety_discount():
    """The default estimate through the learner: V^c(s_t) on ``obs``, V^c(s_{t+1}) on ``final_obs`` (they differ
    here: an observation-dependent head), and eq. 18 at gamma_s, not the reward's discount."""
    learner, agent = scpo_learner()
    last = agent.critic_params[-1]
    w = 0.3 * jax.random.normal(jax.random.PRNGKey(2), last["w"].shape)
    agent = agent.replace(critic_params=[*agent.critic_params[:-1], {"w": w, "b": last["b"]}])
    traj = scripted_trajectory(REWARDS)
    f, f_next, v, v_next, done = terms = learner.algo.safety_terms(agent, traj)
    vc = lambda obs: learner.algo.critics.apply(agent.critic_params, obs)[..., -1]  # noqa: E731
    np.testing.assert_allclose(v, vc(traj.obs), rtol=1e-6)
    np.testing.assert_allclose(v_next, vc(traj.final_obs), rtol=1e-6)
    assert float(jnp.max(jnp.abs(v - v_next))) > 0.01  # the head reads the observation
    q = learner.algo.safety_q(terms)
    np.testing.assert_allclose(q, authors_safety_q(v, f, f_next, v_next, done, GAMMA_S), rtol=1e-6)
    for other in (
        authors_safety_q(v, f, f_next, v_next, done, learner.algo.hp["gamma"]),  # the reward's discount
        authors_safety_q(v_next, f, f_next, v, done, GAMMA_S),  # the critics swapped
    ):
        assert float(jnp.max(jnp.abs(q - other))) > 1e-3


def test_learner_targets_of_a_safe_episode_are_one():
    """Through the learner's GAE: a safe episode (here ended by the time limit) has V^c targets 1 at every step."""
    learner, agent = scpo_learner()
    traj = scripted_trajectory(REWARDS)
    costs = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # episode A pays 1 <= 1.5 and ends safe
    totals = col(running_totals(costs, LENGTHS))[..., None]
    traj = traj.replace(cost=col(costs)[..., None], episode_cost=totals, episode_discounted_cost=totals)
    batch = learner.make_batch(agent, learner.init_episodes(), traj)
    np.testing.assert_allclose(batch.returns[:4, 2], 1.0, rtol=1e-5)
    np.testing.assert_allclose(batch.returns[4:, 2], [0.5626, 0.514, 0.46], rtol=1e-5)  # B as before


@pytest.mark.parametrize("penalty", ["gated", "plain"])
def test_k_zero_batch_advantage_is_gae_of_the_lagrangian_reward(penalty):
    """App. E.2's claim, precisely: with k = 0 the reward advantage is GAE of r - beta c (a fixed multiplier) only for
    App. E.1's penalty; under eq. 11 it is GAE of r (PPO's)."""
    beta = 2.0
    learner, agent = scpo_learner(k=0.0, beta=beta, reward_bias=0.0, penalty=penalty)
    traj = scripted_trajectory(REWARDS)
    batch = learner.make_batch(agent, learner.init_episodes(), traj)
    signal = col(REWARDS) - (beta * col(COSTS) if penalty == "plain" else 0.0)
    values = jnp.full((7, 1, 1), 0.3)
    adv, _ = gae(signal[..., None], values, values, traj.terminated, traj.truncated, jnp.asarray([0.99]), 0.95)
    np.testing.assert_allclose(batch.advantages[:, 0], adv[:, 0, 0], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- the cumulative-cost state (Sec. 4.2)


def test_cost_state_values_on_a_scripted_episode():
    limit, delta = 2.0, 0.1
    env = AutoReset(CostStateAugmentation(EpisodeStatistics(make("ToyReach")), delta, default_limit=limit))
    params = env.default_params()
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert float(obs[-1]) == 0.0
    step = jax.jit(env.step)
    q, features, costs = 0.0, [], []
    for t in range(50):  # full speed to x = 1: cost 1 on most steps
        state, obs, _, cost, _, trunc, info = step(state, jnp.ones(1), params)
        q += float(cost)
        costs.append(float(cost))
        features.append(float(info["final_obs"][-1]))
        assert features[-1] == pytest.approx(min(max(q / limit, 0.0), 1.0 + delta), abs=1e-7)
    assert sum(costs) > 10 and bool(trunc)
    assert {0.0, 0.5, 1.0, 1.1} <= {round(x, 6) for x in features}  # below, at and past the limit, clipped
    assert max(features) == pytest.approx(1.0 + delta)
    assert float(obs[-1]) == 0.0  # the next episode starts from q = 0
    np.testing.assert_allclose(cost_state_feature(jnp.asarray([-1.0, 1.0, 5.0]), 2.0, 0.0), [0.0, 0.5, 1.0])


def test_scpo_wraps_the_env_and_sets_the_limit_from_its_constraint():
    learner, agent = scpo_learner()
    algo = learner.algo
    env = algo.wrap_env(EpisodeStatistics(make("ToyReach")), algo.hp, {"type": "expected", "limit": 7.0})
    assert isinstance(env, CostStateAugmentation) and env.delta == pytest.approx(0.1)
    params = algo.rollout_env_params(agent, env.default_params())
    assert float(env.default_params().limit[0]) == 7.0 and float(params.limit[0]) == LIMIT
    assert env.observation_space(params).shape == (3,)
    assert SCPO.wrap_env("env", SCPO.resolve_hparams({"cost_state": False}), {"type": "expected"}) == "env"


class HostToyReach(gym.Env):
    """ToyReach stepped from the host (Safety-Gymnasium's 6-tuple), its cost threshold low enough to pay."""

    def __init__(self):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.env, self.params = make("ToyReach"), make("ToyReach").default_params().replace(cost_threshold=0.05)
        self._reset, self._step = jax.jit(self.env.reset), jax.jit(self.env.step)

    def reset(self, seed=None, options=None):
        self.state, obs = self._reset(jax.random.PRNGKey(seed or 0), self.params)
        return np.asarray(obs), {}

    def step(self, action):
        self.state, obs, reward, cost, term, trunc, _ = self._step(self.state, jnp.asarray(action), self.params)
        return np.asarray(obs), float(reward), float(cost), bool(term), bool(trunc), {}


def test_cost_state_around_the_host_step_matches_the_compiled_rollout():
    """The Gymnasium bridge applies SCPO's wrapper around the host step: the same augmented observations (q / c0
    clipped, reset with each episode) as the compiled rollout, and its learner runs SCPO's update."""
    gym.register("SaferlScpoHostToy-v0", entry_point=HostToyReach, max_episode_steps=None)
    common = {
        "algo": "scpo",
        "num_envs": 2,
        "rollout_steps": 60,
        "seed": 3,
        "constraint": {"limit": 4.0},
        "network": {"actor_hidden": [8], "critic_hidden": [8]},
        "hparams": {"epochs": 1, "minibatches": 2},
    }
    bridge = GymTrainer({**common, "env": "gym:SaferlScpoHostToy-v0"}, [HostToyReach(), HostToyReach()])
    compiled = Trainer(bridge.config | {"env": "ToyReach", "env_params": {"cost_threshold": 0.05}})
    assert bridge.wrappers is not None and bridge.learner.critics.num_channels == compiled.critics.num_channels == 3
    runner = jax.tree.map(lambda x: x[0], compiled.init_all())
    _, k_roll, _ = jax.random.split(runner.key, 3)
    _, _, expected = jax.jit(compiled.collect)(runner, k_roll)
    bridge.key, k_roll_bridge, _ = jax.random.split(bridge.key, 3)
    got = bridge.collect(k_roll_bridge)
    assert got.truncated[49].all() and got.obs.shape == expected.obs.shape == (60, 2, 3)
    for name in ("obs", "cost", "final_obs", "episode_cost", "episode_length", "reward"):
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-5, atol=1e-5, err_msg=name)
    assert np.asarray(expected.cost).sum() > 4.0  # some episodes pass the limit
    row = bridge.iterate()
    assert np.isfinite(row["safety_value"]) and np.isfinite(row["safety_target"])


# --------------------------------------------------------------------------- the safety head


def test_safety_head_is_pessimistic_at_init_and_bounded_to_the_unit_interval():
    plain = networks.Critics(4, 2, (16,))
    unit = networks.Critics(4, 2, (16,), **SCPO.critic_options(2))
    assert unit.heads == ("linear", "unit") and unit.out_gains == (1.0, 0.1)
    key = jax.random.PRNGKey(3)
    p_plain, p_unit = plain.init(key), unit.init(key)
    np.testing.assert_array_equal(p_unit[-1]["w"][1], p_plain[-1]["w"][1] * 0.1)  # orthogonal gain 0.1
    np.testing.assert_array_equal(p_unit[-1]["w"][0], p_plain[-1]["w"][0])
    obs = jax.random.normal(key, (512, 4))
    v = unit.apply(p_unit, obs)
    np.testing.assert_array_equal(v[:, 0], plain.apply(p_plain, obs)[:, 0])
    assert float(jnp.min(v[:, 1])) >= 0.0 and float(jnp.max(v[:, 1])) < 0.2  # V^c ~ 0: pessimistic
    big = jax.tree.map(lambda x: 50.0 * x, p_unit)
    vb = unit.apply(big, 10.0 * obs)[:, 1]
    assert float(jnp.min(vb)) == 0.0 and float(jnp.max(vb)) == 1.0  # clamp(tanh(.), 0, 1) reaches both ends
    with pytest.raises(ValueError, match="unknown critic head"):
        networks.Critics(4, 1, heads=("sigmoid",))


# --------------------------------------------------------------------------- the surrogates (App. E.2)


def test_l1_and_l2_clipped_surrogates_by_hand_and_their_gradients():
    ratio = np.asarray([0.5, 0.9, 1.0, 1.1, 1.5, 0.7])
    adv = np.asarray([1.0, -1.0, 2.0, 1.0, -2.0, -1.0])
    log_ratio = jnp.log(jnp.asarray(ratio, jnp.float32))
    zeros = jnp.zeros(6)
    eps = 0.2
    u1, u2 = ratio - 1.0, 1.0 - 1.0 / ratio
    l1 = -np.mean(np.minimum(u1 * adv, np.clip(u1, -eps, eps) * adv))
    l2 = -np.mean(np.minimum(u2 * adv, np.clip(u2, -eps, eps) * adv))
    assert float(scpo_surrogate_loss(log_ratio, zeros, jnp.asarray(adv), eps, "L1")) == pytest.approx(l1, rel=1e-5)
    assert float(scpo_surrogate_loss(log_ratio, zeros, jnp.asarray(adv), eps, "L2")) == pytest.approx(l2, rel=1e-5)
    assert l1 != pytest.approx(l2)
    # L1 is PPO's clipped objective shifted by E[A]: the same gradient
    ppo = float(clipped_surrogate_loss(log_ratio, zeros, jnp.asarray(adv), eps))
    assert l1 == pytest.approx(ppo + np.mean(adv), rel=1e-5)
    # gradients in log pi where unclipped (ratio 0.9, 1.0, 1.1): eq. 21 pi/pi_0 A, eq. 22 pi_0/pi A, over the batch
    g1 = jax.grad(lambda lp: scpo_surrogate_loss(lp, zeros, jnp.asarray(adv, jnp.float32), eps, "L1"))(log_ratio)
    g2 = jax.grad(lambda lp: scpo_surrogate_loss(lp, zeros, jnp.asarray(adv, jnp.float32), eps, "L2"))(log_ratio)
    inside = np.asarray([1, 2, 3])
    g1, g2 = np.asarray(g1), np.asarray(g2)
    np.testing.assert_allclose(g1[inside], -(ratio * adv)[inside] / 6, rtol=1e-5)
    np.testing.assert_allclose(g2[inside], -(adv / ratio)[inside] / 6, rtol=1e-5)


def test_the_algorithm_uses_the_selected_surrogate():
    learner, agent = scpo_learner(surrogate="L2")
    mb = {"log_prob": jnp.zeros(3), "advantage": jnp.asarray([1.0, -1.0, 0.5])}
    log_prob = jnp.log(jnp.asarray([1.1, 0.95, 1.3]))
    loss, _ = learner.algo.policy_loss(agent, None, log_prob, mb)
    assert float(loss) == pytest.approx(
        float(scpo_surrogate_loss(log_prob, mb["log_prob"], mb["advantage"], 0.2, "L2"))
    )


# --------------------------------------------------------------------------- defaults (App. G Table 2)


def test_per_task_defaults_are_table_2():
    table = {  # k, beta, b, entropy (paper); the code's differences are in the module docstring
        "SafetyBallCircle": (2, 0, 1.5, 0.01),
        "SafetyBallGather": (4, 15, 0.05, 0.01),
        "SafetyBallRun": (4, 0.5, 1, 0.005),
        "SafetyBallReach": (4, 0, 0.1, 0.01),
        "CartSafe": (5, 3, 0, 0.001),
    }
    assert set(SCPO.env_defaults) == set(table)
    for task, (k, beta, b, entropy) in table.items():
        entry = SCPO.env_defaults[task]
        hp = entry["hparams"]
        assert (hp["k"], hp["beta"], hp["reward_bias"], hp["entropy_coef"]) == (k, beta, b, entropy), task
        assert entry["num_envs"] * entry["rollout_steps"] == 32768 and 32768 // hp["minibatches"] == 64
        SCPO.resolve_hparams(hp)  # every value passes its declaration
    hp = SCPO.resolve_hparams({})
    assert (
        hp["actor_lr"],
        hp["critic_lr"],
        hp["epochs"],
        hp["clip"],
        hp["gamma"],
        hp["gae_lambda"],
        hp["safety_gamma"],
    ) == (2e-4, 2e-4, 5, 0.2, 0.99, 0.95, 0.995)


def test_per_environment_defaults_apply_between_the_environment_and_the_user(monkeypatch):
    monkeypatch.setattr(SCPO, "env_defaults", {"ToyReach": {"num_envs": 3, "hparams": {"k": 7.0, "beta": 2.0}}})
    cfg = config.resolve({"algo": "scpo", "env": "ToyReach", "hparams": {"beta": 1.0}})
    assert cfg["num_envs"] == 3 and cfg["hparams"]["k"] == 7.0 and cfg["hparams"]["beta"] == 1.0
    assert config.resolve({"algo": "ppo", "env": "ToyReach"})["num_envs"] == config.TOP_LEVEL["num_envs"]
    monkeypatch.setattr(SCPO, "env_defaults", {"ToyReach": {"constraint": {"limit": 1.0}}})
    with pytest.raises(config.ConfigError, match="env_defaults"):
        config.resolve({"algo": "scpo", "env": "ToyReach"})


# --------------------------------------------------------------------------- learning


def test_scpo_learns_a_safer_policy_than_ppo_on_toyreach():
    """ToyReach, limit 10, the generic defaults (b = 1 makes the reward x + 1 >= 0) with the App. C n-step estimate
    (``q_estimate: nstep``, n = 50: an option; with the authors' estimate, the default, SCPO stays safe at a return of
    ~1-2 on ToyReach even after 100 iterations).  PPO's level on this setup is test_ppo's (cost > 30; measured 45
    at 40 iterations, return 45); not retrained here to keep the test < 60 s.  SCPO ends far below PPO's cost,
    within the limit, at a return well above the always-safe policy's 0."""
    hparams = {"minibatches": 4, "epochs": 5, "actor_lr": 1e-3, "critic_lr": 1e-3, "q_estimate": "nstep", "q_steps": 50}
    scpo = train_toy("scpo", iterations=30, hparams=hparams)
    cost = np.nanmean(scpo["episode_cost"][:, -8:])
    returns = np.nanmean(scpo["episode_return"][:, -8:], axis=1)
    assert cost <= 10.0, cost
    assert np.all(returns > 8.0), returns
    assert np.all(scpo["safety_value"][:, -1] > 0.5)  # the pessimistic critic learned that the visited states are safe
    assert np.all(scpo["safety_value"][:, 0] < 0.1)

"""SCPO (Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy Optimization", arXiv:2311.00880).

PPO on a reward that a safety critic V^c (the probability that the rest of the episode stays within the cost
limit, Definition 1) cancels where the constraint is likely to be violated.  One iteration (Algorithm 1):

1. State (Sec. 4.2): s'_t = (s_t, clip(q_t / c0, 0, 1 + Delta)), q_t the episode's cost before step t and c0
   the cost limit (:mod:`saferl.envs.cost_state`, one entry per cost channel).
2. Safety indicator (Sec. 4.2.1): f(s_t) = 1[q_t <= c0] (every channel within its limit), read from the
   trajectory's running episode cost; s_T, the state after an episode's last step, has q_T = the episode's cost.
3. Safety critic target, eq. 18 (App. C):
       Y_t = (1 - gamma_s) f(s_t) + gamma_s Y_{t+1},   Y_T = f(s_T) at the episode's end (the time limit included),
   and Y_{t+1} = V^c(s_{t+1}) where the rollout ends first.  gamma_s = 1 gives Y_t = f(s_T), the one-sample
   estimate of V^c.  The targets are the lambda = 1 returns of the signal
       rho_t = (1 - gamma_s) f(s_t) + gamma_s f(s_{t+1}) 1[the episode ends at t + 1]
   on a critic channel that ends at truncation (:meth:`SCPO.channel_lambdas`, :meth:`channel_ends_at_truncation`),
   so the engine's GAE computes them and the critics' MSE fits V^c to them.
4. Q^c(s_t, a_t) (eq. 17: Q^c(s, a) = E[V^c(s')] for a safe s), ``q_estimate``:
       "nstep"   App. C's k-step estimate Qhat^(n)(s_t, a_t) = f(s_{t+n-1}) V^c(s_{t+n}), n = ``q_steps``; past the
                 episode's end V^c(s_T) := f(s_T) (so n -> infinity gives f(s_T)); at the rollout's end the steps
                 that are there;
       "authors" the authors' buffer, Qhat = 1/2 (V^c(s_t) + Y_{t+1}).
5. Reward (Algorithm 1 lines 4-5, Definition 2 / eq. 11), with the reward bias b that makes r + b >= 0 (Sec. 4.3.2):
       r'_t = (r_t + b) Qhat^k - beta (1 - Qhat^k) c_t     (``penalty = "gated"``)
       r'_t = (r_t + b) Qhat^k - beta c_t                  (``penalty = "plain"``, App. E.1's r'_t = r_t Q_t - beta c_t)
   c_t the step's cost summed over channels.  k -> infinity: Qhat^k -> 1[Qhat = 1], the reward of any step that
   may end unsafe is cancelled (Sec. 4.3.1, Theorem 5).
6. GAE on r' (eq. 23) -> A^{rc,k}, standardised; clipped surrogate of App. E.2 (``surrogate``), maximised:
       L1^CLIP = E[min(u A, clip(u, -eps, eps) A)],  u = pi / pi_0 - 1   (eq. 19; the gradient of PPO's)
       L2^CLIP = same with                           u = 1 - pi_0 / pi   (eq. 20)
7. Critics (line 9): V^{rc,k} (channel 0), V^c (the last channel: Linear -> tanh -> clamp [0, 1], orthogonal gain
   0.1, so V^c ~ 0 at initialisation, pessimistic), and between them V^C of each cost channel, which the update
   does not read (kept so that the constraint's channels are checked as everywhere; a diagnostic).

Where the paper, the authors' code (SafeRL-Lab/SCPO, a Stable-Baselines3 fork: ``safe_ppo/buffer.py``,
``safe_ppo.py``, ``policies.py``, ``utils/best_hyper_parameters.py``) and this module differ:

* k = 0, beta > 0.  App. E.2 says beta then is a Lagrange multiplier.  That holds for App. E.1's form
  r Q^k - beta c (k = 0: r + b - beta c, a fixed-multiplier Lagrangian), not for eq. 11 / Algorithm 1 / the code,
  where Q^0 = 1 cancels the cost term (k = 0: r' = r + b, PPO).  Default: eq. 11 (``penalty = "gated"``, what
  Table 2 was tuned with); ``"plain"`` is App. E.1's.
* The V^c target.  Followed: eq. 18 (f(s_t), recursion from the episode's final state s_T).  The code fits V^c to
  Q_t = (1 - gamma_s) f(s_{t+1}) + gamma_s Q_{t+1} (eq. 18's target of the next state), ending with f(s_{T-1}): the
  episode's last cost is never seen.  App. C's unrolled sum of eq. 18 drops the terminal term gamma_s^{T-t} f(s_T)
  (it would make a safe episode's target 1 - gamma_s^{T-t}, against the paper's own "V = 1 if f(s_{T-1}) = 1");
  the recursion is the one implemented.
* Qhat.  The paper leaves it open ("any weighted average of Qhat^(k)"); the code averages the critic with the
  Monte-Carlo target (``q_estimate = "authors"``).  Default: the authors' estimate, what the paper ran (and what
  Table 2's k, beta and b were tuned with); App. C's n-step estimate is an option (``q_estimate = "nstep"``,
  ``q_steps``), whose n = 50 was chosen on ToyReach, not from the paper.  Measured on the option: why not n = 1:
  the pessimistic head has zero gradient where its pre-activation is negative, so V^c stays ~0 in every region the
  policy has stopped visiting, and an estimate that rests on V^c alone cancels the reward of any exploratory step
  there for good.  On ToyReach (limit 10, 40 iterations, 2 seeds) n = 1 retreats to x < 0 (return -23, cost 0),
  n = 10 earns ~3, n = 50 ~19 at cost ~2.5 (the safe optimum is ~22), the authors' average ~1-2 even after 100
  iterations.  Why not n -> infinity: Qhat is then the episode's outcome f(s_T) in {0, 1}, Qhat^k = Qhat, and
  E[Qhat^k] = Q^c is the k = 1 objective whatever k (Jensen); a finite n keeps V^c, hence k, in the estimate of
  long episodes (250 steps in the ball tasks).  n is a bias-variance knob like GAE's lambda; 50 is not from the paper.
* The rollout's end.  The code treats it as an episode end (Q = f(s_t)); here V^c(s_{t+1}) bootstraps.
* The cost in r'.  The paper's c(S_t) is a state cost and the code pairs r_t with the cost received on entering
  s_t (the previous step's; an episode's last cost is dropped); here c_t is the cost of the step (s_t, a_t) ->
  s_{t+1}, as for every algorithm of this library.
* Delta.  Paper clip(q/c0, 0, 1 + Delta) with "Delta ~ 0"; code clip(q/c0, <= 1), Delta = 0, where a state at the
  limit and one past it look the same.  Default Delta = 0.1 (``cost_state_delta``).
* Several cost channels: f needs every channel within its limit and c_t is their sum (the code's np.all / sum).
* Not implemented: the code's safety-advantage loss term (every per-task config sets its factor to 0; Algorithm 1
  has none) and its per-critic loss weights (vf_coef 0.5, vf_safety_coef 0.5 or 0.05: the critics here are separate
  networks under Adam, which is invariant to a per-network loss scale up to the shared gradient clip).
* Engine conventions kept: reward advantages standardised over the batch (SB3: per minibatch); actor and critics
  with one Adam each, each clipped to ``max_grad_norm`` (SB3: one optimiser and one clip over all parameters);
  no KL early stop (``target_kl`` 0, SB3's None); T = 32768 steps per iteration as 16 x 2048 (code: 4 x 8192).

Defaults (``used``; Table 2 of App. G; the code: ``SafePPO.__init__`` / ``best_hyper_parameters.py``):

================  ===========  ==========================  =====================================  =================
hparam            used         paper (Table 2)             code (class default / per task)        why
================  ===========  ==========================  =====================================  =================
actor/critic_lr   2e-4         2e-4                        3e-4 / 2e-4, CartSafe 1e-4, Reach 4e-4  paper
epochs            5            5                           10 / 5                                  paper = code
minibatches       32; 512      batch size 64               64 samples                              64 samples
clip, gamma, lam  .2 .99 .95   .2 .99 .95                  same                                    both
entropy_coef      0.005        per task (Run 0.005)        0 / per task                            paper (Run)
k                 4            per task (Run 4)            0 / per task                            paper (Run)
beta              0.5          per task (Run 0.5)          0 / per task                            paper (Run)
reward_bias       1.0          per task (Run 1)            0 / per task                            paper (Run)
safety_gamma      0.995        0.995                       0.995                                   both
q_estimate        authors      "Evaluate Qhat" (App. C)    1/2 (V^c(s_t) + Q_target)               code (see above)
max_grad_norm     0.5          --                          0.5 / per task                          code
target_kl         0 (none)     --                          None                                    code
================  ===========  ==========================  =====================================  =================

Without a per-task entry the defaults are Table 2's SafetyBallRun column: the one task where every term of
eq. 11 is on (k, beta, b > 0) and paper and code agree.  Per task (:attr:`SCPO.env_defaults`, keyed by this
library's names of the tasks; paper values used, the code's noted where they differ; max_grad_norm is the code's,
the paper gives none):

================  ===========  ===========  ===========  ===========  ============================
task              k            beta         b            entropy      code differs
================  ===========  ===========  ===========  ===========  ============================
SafetyBallCircle  2            0            1.5          0.01         --
SafetyBallGather  4            15           0.05         0.01         b 0.00
SafetyBallRun     4            0.5          1            0.005        --
SafetyBallReach   4            0            0.1          0.01         b 0.01, lr 4e-4
CartSafe          5            3            0            0.001        entropy 0.01, lr 1e-4
================  ===========  ===========  ===========  ===========  ============================

Why the paper's values where they differ: they are the published configuration, and the code has no training
script that ties its dict to the published runs.  The cost limits (Table 1: 25, 0.2, 25, 10, 1; the code's CartSafe
0.5) belong to the environments' own defaults.  k, beta and b live in ``agent.extra`` as arrays (traced: they may
differ per seed in a vmapped run); the cost limit is the constraint's, and SCPO reads it on the undiscounted
episode cost q_t whatever ``constraint.gamma_c`` says.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo import PPO, approx_kl
from saferl.envs.cost_state import CostStateAugmentation
from saferl.foundation.hparams import choice, declare, flag, integer, real

#: orthogonal-init gain of the safety critic's last layer (the authors' sqrt(0.01))
SAFETY_HEAD_GAIN = 0.1
Q_ESTIMATES = ("nstep", "authors")
PENALTIES = ("gated", "plain")
SURROGATES = ("L1", "L2")


# --------------------------------------------------------------------------- the safety critic's quantities


def safety_indicator(cumulative_cost, limit):
    """f(s) = 1[q <= c0] on every cost channel (Sec. 4.2.1: q^clip <= 1), as a float; ``cumulative_cost`` (..., m)."""
    return jnp.all(cumulative_cost <= limit, axis=-1).astype(jnp.float32)


def cumulative_cost_before(episode_cost, cost, episode_length):
    """q_t (T, N, m), the episode's cost before step t, from the running totals q_{t+1} = ``episode_cost`` (T, N, m)
    of a rollout block: 0 on an episode's first step, the previous step's total within an episode, and
    q_1 - c_0 on the block's first step when its episode started earlier."""
    previous = jnp.concatenate([episode_cost[:1] - cost[:1], episode_cost[:-1]], axis=0)
    return jnp.where((episode_length == 1)[..., None], 0.0, previous)


def safety_targets(f, f_next, v_next, done, gamma):
    """Eq. 18 on a (T, N) block: Y_t = (1 - gamma) f(s_t) + gamma Y_{t+1}, with Y_{t+1} = f(s_{t+1}) where the episode
    ends at t + 1 (``done``) and V^c(s_{t+1}) (``v_next``) on the block's last row otherwise."""

    def backward(y_next, x):
        f_t, f_next_t, d = x
        y = (1.0 - gamma) * f_t + gamma * jnp.where(d, f_next_t, y_next)
        return y, y

    _, targets = jax.lax.scan(backward, v_next[-1], (f, f_next, done), reverse=True)
    return targets


def safety_signal(f, f_next, done, gamma):
    """rho_t = (1 - gamma) f(s_t) + gamma f(s_{t+1}) 1[done_t]: its lambda = 1 return, ended at every episode end and
    bootstrapped with V^c at the rollout's end, is :func:`safety_targets` (eq. 18)."""
    return (1.0 - gamma) * f + gamma * f_next * done.astype(jnp.float32)


def nstep_safety_q(f, f_next, v_next, done, steps: int):
    """App. C's estimate Qhat^(n)(s_t, a_t) = f(s_{t+n-1}) V^c(s_{t+n}) on a (T, N) block, n = ``steps`` >= 1.
    Qhat^(1) = f(s_t) V^c(s_{t+1}) with V^c(s_T) := f(s_T) after an episode's last step; Qhat^(n)_t = Qhat^(n-1)_{t+1}
    while the episode and the block go on, else Qhat^(1)_t (f(s_T) past the episode's end, fewer steps at the
    block's end)."""
    one = f * jnp.where(done, f_next, v_next)
    # the recursion unrolled: Qhat^(n)_t = Qhat^(1)_j, j = min(t + n - 1, the last step of t's episode in the block)
    rows = jnp.broadcast_to(jnp.arange(done.shape[0])[:, None], done.shape)
    stop = jnp.logical_or(done, rows == done.shape[0] - 1)

    def backward(next_end, x):
        row, stop_t = x
        end = jnp.where(stop_t, row, next_end)
        return end, end

    _, last = jax.lax.scan(backward, rows[-1], (rows, stop), reverse=True)
    return jnp.take_along_axis(one, jnp.minimum(rows + int(steps) - 1, last), axis=0)


def authors_safety_q(v, f, f_next, v_next, done, gamma):
    """The authors' buffer: Qhat = 1/2 (V^c(s_t) + Y_{t+1}), Y_{t+1} eq. 18's target of the next state (f(s_{t+1})
    where the episode ends, V^c(s_{t+1}) where the block ends)."""
    targets = safety_targets(f, f_next, v_next, done, gamma)
    following = jnp.concatenate([targets[1:], v_next[-1:]], axis=0)
    return 0.5 * (v + jnp.where(done, f_next, following))


def reshaped_reward(reward, cost, q_hat, k, beta, bias, penalty: str = "gated"):
    """r' = (r + b) Qhat^k - beta (1 - Qhat^k) c (eq. 11, Algorithm 1 lines 4-5; ``penalty = "gated"``) or
    (r + b) Qhat^k - beta c (App. E.1; ``"plain"``).  Qhat in [0, 1]; 0^0 = 1."""
    weight = q_hat**k
    if penalty == "gated":
        return (reward + bias) * weight - beta * (1.0 - weight) * cost
    if penalty == "plain":
        return (reward + bias) * weight - beta * cost
    raise ValueError(f"penalty must be one of {', '.join(PENALTIES)}, got {penalty!r}")


def scpo_surrogate_loss(log_prob, old_log_prob, advantage, clip, kind: str = "L1"):
    """-E[min(u A, clip(u, -eps, eps) A)] (App. E.2): u = pi/pi_0 - 1 (L1, eq. 19) or 1 - pi_0/pi (L2, eq. 20)."""
    if kind == "L1":
        u = jnp.expm1(log_prob - old_log_prob)
    elif kind == "L2":
        u = -jnp.expm1(old_log_prob - log_prob)
    else:
        raise ValueError(f"surrogate must be one of {', '.join(SURROGATES)}, got {kind!r}")
    return -jnp.mean(jnp.minimum(u * advantage, jnp.clip(u, -clip, clip) * advantage))


# --------------------------------------------------------------------------- per-task defaults (App. G Table 2)


def _task(k, beta, bias, entropy, max_grad_norm):
    """One task's entry: T = 32768 steps per iteration (16 x 2048), minibatches of 64 (512 of them)."""
    return {
        "num_envs": 16,
        "rollout_steps": 2048,
        "hparams": {
            "minibatches": 512,
            "k": k,
            "beta": beta,
            "reward_bias": bias,
            "entropy_coef": entropy,
            "max_grad_norm": max_grad_norm,
        },
    }


TASK_DEFAULTS = {
    "SafetyBallCircle": _task(2.0, 0.0, 1.5, 0.01, 0.8),
    "SafetyBallGather": _task(4.0, 15.0, 0.05, 0.01, 0.8),  # code: b 0.00
    "SafetyBallRun": _task(4.0, 0.5, 1.0, 0.005, 1.5),
    "SafetyBallReach": _task(4.0, 0.0, 0.1, 0.01, 0.5),  # code: b 0.01, lr 4e-4
    "CartSafe": _task(5.0, 3.0, 0.0, 0.001, 0.8),  # code: entropy 0.01, lr 1e-4
}


@register
class SCPO(PPO):
    name = "scpo"
    description = (
        "SCPO (Mhamed & Gu 2023): PPO on r' = (r + b) Q^k - beta (1 - Q^k) c with a safety critic "
        "Q ~ P(episode stays within the limit) and the cumulative cost in the state."
    )
    constraint_kinds = ("expected",)
    needs_cost_estimate = False  # reads the trajectory's running costs, not the batch's J_c
    defaults = declare(
        PPO.defaults,
        actor_lr=2e-4,
        critic_lr=2e-4,
        epochs=5,
        entropy_coef=0.005,
        target_kl=0.0,
        max_grad_norm=0.5,
        gae_lambda=real(0.95, "[0, 1]", "GAE lambda of the reward and cost channels (the safety critic's: 1, eq. 18)"),
        k=real(4.0, "[0, inf)", "exponent k of the safety weight Qhat^k (V^{rc,k}, eq. 11)"),
        beta=real(0.5, "[0, inf)", "cost factor beta of eq. 11"),
        reward_bias=real(1.0, "[0, inf)", "reward bias b, r <- r + b >= 0 (Algorithm 1 line 4)"),
        safety_gamma=real(0.995, "(0, 1]", "discount gamma_s of the safety critic's target (eq. 18)"),
        q_estimate=choice(  # the authors' estimate (what the paper ran); "nstep" is an option (module docstring)
            "authors",
            Q_ESTIMATES,
            "Qhat^c: the authors' 1/2 (V^c(s_t) + Y_{t+1}), or App. C's n-step f(s_{t+n-1}) V^c(s_{t+n}) (an option)",
        ),
        q_steps=integer(50, "[1, inf)", "n of the App. C estimate (q_estimate = nstep); 1 = f(s_t) V^c(s_{t+1})"),
        penalty=choice("gated", PENALTIES, "cost term: -beta (1 - Q^k) c (eq. 11) or -beta c (App. E.1)"),
        surrogate=choice("L1", SURROGATES, "clipped surrogate: L1 (u = pi/pi_0 - 1) or L2 (u = 1 - pi_0/pi), App. E.2"),
        cost_state=flag(True, "observe clip(q_t / c0, 0, 1 + Delta) (Sec. 4.2)"),
        cost_state_delta=real(0.1, "[0, inf)", "Delta of the cost-state clip (the authors' code: 0)"),
    )
    env_defaults = TASK_DEFAULTS

    # ---- declarations -----------------------------------------------------------------
    @classmethod
    def cost_channels(cls, env_cost_channels: int) -> int:
        return env_cost_channels + 1  # ..., the safety critic V^c last

    @classmethod
    def critic_options(cls, num_channels: int) -> dict:
        return {
            "heads": ("linear",) * (num_channels - 1) + ("unit",),
            "out_gains": (1.0,) * (num_channels - 1) + (SAFETY_HEAD_GAIN,),
        }

    @property
    def num_constraints(self) -> int:
        return self.critics.num_channels - 2

    def channel_gammas(self):
        return (self.hp["gamma"],) + (self.hp["cost_gamma"],) * self.num_constraints + (self.hp["safety_gamma"],)

    def channel_lambdas(self):
        lam = self.hp["gae_lambda"]
        return (lam,) * (1 + self.num_constraints) + (1.0,)  # eq. 18 is a Monte-Carlo target

    def channel_ends_at_truncation(self):
        return (0.0,) * (1 + self.num_constraints) + (1.0,)  # the episode's safety ends with the episode

    @classmethod
    def wrap_env(cls, env, hparams, constraint_config):
        env = super().wrap_env(env, hparams, constraint_config)
        if not hparams["cost_state"]:
            return env
        return CostStateAugmentation(env, hparams["cost_state_delta"], constraint_config.get("limit", 1.0))

    def rollout_env_params(self, agent, params):
        params = super().rollout_env_params(agent, params)
        if not self.hp["cost_state"]:
            return params
        return params.replace(
            limit=jnp.broadcast_to(jnp.asarray(agent.constraint.limit, jnp.float32), params.limit.shape)
        )

    def init_extra(self, constraint):
        return {
            **super().init_extra(constraint),
            **{key: jnp.asarray(self.hp[key], jnp.float32) for key in ("k", "beta", "reward_bias")},
        }

    # ---- the reshaped trajectory (Algorithm 1 lines 3-5) ------------------------------------
    def safety_terms(self, agent, traj):
        """(f(s_t), f(s_{t+1}), V^c(s_t), V^c(s_{t+1}), done), each (T, N), of a trajectory."""
        cost = traj.cost
        limit = jnp.broadcast_to(jnp.asarray(agent.constraint.limit, jnp.float32), cost.shape[-1:])
        after = jnp.reshape(traj.episode_cost, cost.shape)  # q_{t+1}
        before = cumulative_cost_before(after, cost, traj.episode_length)
        v = self.critics.apply(agent.critic_params, traj.obs)[..., -1]
        v_next = self.critics.apply(agent.critic_params, traj.final_obs)[..., -1]
        done = jnp.logical_or(traj.terminated, traj.truncated)
        return safety_indicator(before, limit), safety_indicator(after, limit), v, v_next, done

    def safety_q(self, terms):
        """Qhat^c(s_t, a_t) (T, N) of ``q_estimate`` from :meth:`safety_terms`."""
        f, f_next, v, v_next, done = terms
        if self.hp["q_estimate"] == "nstep":
            return nstep_safety_q(f, f_next, v_next, done, self.hp["q_steps"])
        return authors_safety_q(v, f, f_next, v_next, done, self.hp["safety_gamma"])

    def prepare_trajectory(self, agent, traj):
        terms = self.safety_terms(agent, traj)
        f, f_next, _, _, done = terms
        extra = agent.extra
        reward = reshaped_reward(
            traj.reward,
            jnp.sum(traj.cost, axis=-1),
            self.safety_q(terms),
            extra["k"],
            extra["beta"],
            extra["reward_bias"],
            self.hp["penalty"],
        )
        signal = safety_signal(f, f_next, done, self.hp["safety_gamma"])
        return traj.replace(reward=reward, cost=jnp.concatenate([traj.cost, signal[..., None]], axis=-1))

    # ---- the update (Algorithm 1 lines 6-11: PPO's, with the L1 / L2 surrogate) -------------
    def before_update(self, agent, batch):
        return agent, {"safety_value": jnp.mean(batch.values[:, -1]), "safety_target": jnp.mean(batch.returns[:, -1])}

    def policy_loss(self, agent, dist, log_prob, mb):
        loss = scpo_surrogate_loss(log_prob, mb["log_prob"], mb["advantage"], self.hp["clip"], self.hp["surrogate"])
        return loss, approx_kl(log_prob, mb["log_prob"])

"""PPO (Schulman et al. 2017): clipped surrogate, minibatch epochs, KL early stop.

The update is the template the first-order constrained methods reuse: they
override :meth:`PPO.before_update` (multiplier updates), :meth:`PPO.policy_advantage`
(how reward and cost advantages combine) and, where the loss itself differs (FOCOPS,
P3O), :meth:`PPO.policy_loss` with :meth:`PPO.loss_inputs`; the hparams ``kl_stop_estimate`` and
``kl_stop_factor`` (with :meth:`PPO.stop_kl`) set the early stop.

Early stop (``hparams.kl_stop_estimate``): with ``"minibatch_mean"`` (PPO, PPO-Lag, CPPO, P3O) an epoch's KL is
the mean of its minibatches' estimates, each taken before that minibatch's update; with ``"full_batch"`` (CUP, as
its reference code, and SafePO's first-order methods) it is the mean over the whole batch of the exact per-state
KL(pi_ref || pi) between a reference distribution (the batch's ``dist`` unless the caller passes another) and the
policy after the epoch; ``"full_batch_reverse"`` (FOCOPS, as its reference code) the same with KL(pi || pi_ref).
The remaining epochs are skipped once it exceeds ``kl_stop_factor * target_kl``.

Learning-rate schedule (``hparams.lr_schedule``): ``"linear"`` multiplies the policy's Adam step of the k-th update
(k = 0, 1, ...) by max(0, 1 - k / ``lr_decay_steps``), the same factor for every minibatch of an update, as
PyTorch's ``LinearLR(start_factor=1, end_factor=0, total_iters)`` stepped once per update (SafePO, OmniSafe); the
count lives in ``agent.extra["updates"]``.  An Adam step is linear in its rate, so scaling the step scales the rate.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from saferl.algos.base import COMMON_HPARAMS, AgentState, Algorithm, check_at_most_batch, normalize, register
from saferl.foundation.hparams import choice, declare, integer, real


def clipped_surrogate_loss(log_prob, old_log_prob, advantage, clip):
    """-E[min(r A, clip(r, 1 - eps, 1 + eps) A)] with r = pi / pi_old (PPO eq. 7)."""
    ratio = jnp.exp(log_prob - old_log_prob)
    unclipped = ratio * advantage
    clipped = jnp.clip(ratio, 1.0 - clip, 1.0 + clip) * advantage
    return -jnp.mean(jnp.minimum(unclipped, clipped))


def approx_kl(log_prob, old_log_prob):
    """Unbiased low-variance estimate of KL(pi_old || pi): E[(r - 1) - log r]."""
    log_ratio = log_prob - old_log_prob
    return jnp.mean(jnp.expm1(log_ratio) - log_ratio)


def centred_cost_advantage(batch):
    """A_c of every cost channel, centred only: its scale stays that of the cost it predicts.  Shape ``(B,)``
    with one cost channel, ``(B, m)`` with m; the batch's J_c and b are
    :meth:`~saferl.algos.base.Algorithm.cost_and_limit`."""
    if batch.advantages.shape[1] == 2:
        return batch.advantages[:, 1] - jnp.mean(batch.advantages[:, 1])
    return batch.advantages[:, 1:] - jnp.mean(batch.advantages[:, 1:], axis=0)


#: the choices of ``hparams.kl_stop_estimate`` (module docstring)
KL_STOP_ESTIMATES = ("minibatch_mean", "full_batch", "full_batch_reverse")


@register
class PPO(Algorithm):
    name = "ppo"
    description = "PPO (Schulman et al. 2017): clipped surrogate on the reward; ignores the constraint."
    constraint_kinds = ("expected", "var")
    needs_cost_estimate = False  # it ignores the constraint; its constrained subclasses set it True
    defaults = declare(
        COMMON_HPARAMS,
        actor_lr=real(3e-4, "(0, inf)", "Adam rate of the policy"),
        clip=real(0.2, "(0, inf)", "ratio clip epsilon (PPO eq. 7)"),
        epochs=integer(10, "[1, inf)", "passes over the batch"),
        minibatches=integer(32, "[1, inf)", "minibatches per pass (at most num_envs * rollout_steps)"),
        entropy_coef=real(0.0, "[0, inf)", "weight of the entropy bonus"),
        target_kl=real(
            0.02,
            "[0, inf)",
            "the passes stop once one's KL (kl_stop_estimate) exceeds kl_stop_factor * target_kl; 0 = never",
        ),
        kl_stop_estimate=choice(
            "minibatch_mean",
            KL_STOP_ESTIMATES,
            "the epoch's KL of the early stop: the mean of the minibatches' pre-update "
            "estimates, or after the epoch the batch mean of KL(pi_ref || pi) (full_batch) or "
            "KL(pi || pi_ref) (full_batch_reverse)",
        ),
        kl_stop_factor=real(1.5, "(0, inf)", "the passes stop once the epoch's KL exceeds this times target_kl"),
        lr_schedule=choice(
            "constant",
            ("constant", "linear"),
            "the policy's learning-rate schedule: linear decays it to 0 over lr_decay_steps updates",
        ),
        lr_decay_steps=integer(0, "[0, inf)", "updates (iterations) over which the linear schedule decays to 0"),
        grad_clip_scope=choice(
            "separate",
            ("separate", "joint"),
            "max_grad_norm on the policy's and the critics' gradients each (separate) or on all of "
            "them together, as one backward of the summed losses (joint: SafePO's first-order code)",
        ),
    )

    # ---- hooks for the constrained variants -----------------------------------------
    def before_update(self, agent: AgentState, batch):
        return agent, {}

    def constraint_values(self, agent: AgentState, batch):
        """(J_c, b) of :meth:`~saferl.algos.base.Algorithm.cost_and_limit`: scalars with one constraint (the
        shapes the one-constraint penalties always had), shape ``(m,)`` with m."""
        cost, limit = self.cost_and_limit(agent, batch)
        return (cost[0], limit[0]) if cost.shape[0] == 1 else (cost, limit)

    def policy_advantage(self, agent: AgentState, batch):
        return normalize(batch.advantages[:, 0])

    @classmethod
    def check_hparams(cls, hp: dict, batch_size: int) -> None:
        super().check_hparams(hp, batch_size)
        check_at_most_batch(hp, "minibatches", batch_size)
        if hp["lr_schedule"] == "linear" and hp["lr_decay_steps"] < 1:
            raise ValueError(
                f"hparams.lr_decay_steps must be a whole number >= 1 with lr_schedule linear (the "
                f"updates over which the rate decays to 0), got {hp['lr_decay_steps']!r}"
            )

    def loss_inputs(self, agent: AgentState, batch) -> dict:
        """Per-sample arrays (leading axis B) the loss needs beyond obs, action, log_prob, advantage and
        the old distribution ``dist``; they are minibatched with the rest."""
        return {}

    def policy_loss(self, agent: AgentState, dist, log_prob, mb):
        """(loss to minimise, KL estimate for the early stop) of one minibatch; PPO's clipped surrogate
        (eq. 7) and the estimate E[(r - 1) - log r] of KL(pi_old || pi)."""
        loss = clipped_surrogate_loss(log_prob, mb["log_prob"], mb["advantage"], self.hp["clip"])
        return loss, approx_kl(log_prob, mb["log_prob"])

    def stop_kl(self, reference, dist):
        """Per-state KL of the full-batch stops: KL(reference || pi) (``"full_batch"``, OmniSafe's and SafePO's
        direction) or KL(pi || reference) (``"full_batch_reverse"``, FOCOPS's code)."""
        if self.hp["kl_stop_estimate"] == "full_batch_reverse":
            return self.actor.kl(dist, reference)
        return self.actor.kl(reference, dist)

    # ---- the learning-rate schedule ---------------------------------------------------
    def init_extra(self, constraint):
        extra = super().init_extra(constraint)
        if self.hp["lr_schedule"] == "linear":  # only then, so that constant-rate runs keep their checkpoint layout
            extra = {**extra, "updates": jnp.zeros((), jnp.int32)}
        return extra

    def lr_factor(self, agent: AgentState) -> jax.Array:
        """What the policy's Adam steps of this update are multiplied by (module docstring): 1 at a constant rate."""
        if self.hp["lr_schedule"] != "linear":
            return jnp.ones((), jnp.float32)
        done = agent.extra["updates"].astype(jnp.float32)
        return jnp.clip(1.0 - done / jnp.maximum(self.hp["lr_decay_steps"], 1), 0.0, 1.0)

    def count_update(self, agent: AgentState) -> AgentState:
        """``agent`` with one more update counted (the linear schedule's k); unchanged at a constant rate."""
        if "updates" not in agent.extra:
            return agent
        return agent.replace(extra={**agent.extra, "updates": agent.extra["updates"] + 1})

    # ---- the update -------------------------------------------------------------------
    def update(self, agent: AgentState, batch, key):
        agent, batch, risk_metrics = self.prepare_batch(agent, batch)
        agent, metrics = self.before_update(agent, batch)
        metrics = {**risk_metrics, **metrics}
        advantage = self.policy_advantage(agent, batch)
        agent, ppo_metrics = self.ppo_epochs(agent, batch, advantage, key)
        return self.count_update(agent), {**metrics, **ppo_metrics}

    def ppo_epochs(
        self,
        agent: AgentState,
        batch,
        advantage,
        key,
        *,
        loss=None,
        inputs=None,
        fit_critics=True,
        epochs=None,
        target_kl=None,
        kl_stop_factor=None,
        kl_reference=None,
    ):
        """Minibatch epochs of Adam on ``loss`` (default :meth:`policy_loss`) and, with ``fit_critics``, on the
        critics' MSE; the epochs stop once an epoch's KL (``kl_stop_estimate``; the full-batch ones from
        ``kl_reference``, default ``batch.dist``) exceeds ``kl_stop_factor * target_kl``.  The policy's steps
        are scaled by :meth:`lr_factor`.  ``inputs`` (default
        :meth:`loss_inputs`) are extra per-sample arrays for the loss.  CUP runs it twice."""
        hp = self.hp
        loss = loss or self.policy_loss
        epochs = int(hp["epochs"] if epochs is None else epochs)
        target_kl = hp["target_kl"] if target_kl is None else target_kl
        kl_stop_factor = hp["kl_stop_factor"] if kl_stop_factor is None else kl_stop_factor
        full_batch = hp["kl_stop_estimate"] != "minibatch_mean"
        lr_factor = self.lr_factor(agent)
        reference = batch.dist if kl_reference is None else kl_reference
        size = batch.obs.shape[0]
        n_mb = int(hp["minibatches"])
        mb_size = size // n_mb
        actor_opt, critic_opt = self.actor_optimizer(), self.critic_optimizer()
        start = agent  # what the losses read (multipliers, constraint): fixed during the epochs

        def actor_loss(params, mb):
            dist = self.actor.distribution(params, mb["obs"])
            log_prob = self.actor.log_prob(dist, mb["action"])
            value, kl = loss(start, dist, log_prob, mb)
            entropy = jnp.mean(self.actor.entropy(dist))
            return value - hp["entropy_coef"] * entropy, (kl, entropy)

        def critic_loss(params, mb):
            return self.critic_objective(params, mb["obs"], mb["returns"])

        joint_clip = fit_critics and hp["grad_clip_scope"] == "joint"

        def minibatch_step(state, mb):
            (a_loss, (kl, entropy)), a_grad = jax.value_and_grad(actor_loss, has_aux=True)(state.actor_params, mb)
            c_loss = jnp.zeros(())
            if fit_critics:
                c_loss, c_grad = jax.value_and_grad(critic_loss)(state.critic_params, mb)
            if joint_clip:  # torch's clip_grad_norm_ over every parameter; the optimisers' own clips then pass
                max_norm = hp["max_grad_norm"]
                scale = jnp.where(
                    max_norm > 0, jnp.minimum(1.0, max_norm / (optax.tree.norm((a_grad, c_grad)) + 1e-6)), 1.0
                )
                a_grad, c_grad = jax.tree.map(lambda g: scale * g, (a_grad, c_grad))
            a_upd, a_opt = actor_opt.update(a_grad, state.actor_opt_state, state.actor_params)
            a_upd = jax.tree.map(lambda u: lr_factor * u, a_upd)
            new = state.replace(actor_params=optax.apply_updates(state.actor_params, a_upd), actor_opt_state=a_opt)
            if fit_critics:
                c_upd, c_opt = critic_opt.update(c_grad, state.critic_opt_state, state.critic_params)
                new = new.replace(critic_params=optax.apply_updates(state.critic_params, c_upd), critic_opt_state=c_opt)
            return new, (a_loss, c_loss, kl, entropy)

        extra = self.loss_inputs(agent, batch) if inputs is None else inputs
        data = {
            "obs": batch.obs,
            "action": batch.action,
            "log_prob": batch.log_prob,
            "dist": batch.dist,
            "advantage": advantage,
            "returns": batch.returns,
            **extra,
        }
        keys = jax.random.split(key, epochs)

        # The epochs are a while loop: it ends at the first epoch whose KL exceeds the target, so the epochs after it
        # are not computed (under vmap the loop runs while any member runs, and a stopped member's carry stays).
        def running(carry):
            _, stopped, done, _ = carry
            return (done < epochs) & ~stopped

        def epoch(carry):
            state, _, done, (first_loss, first_entropy, max_kl, _, _) = carry
            perm = jax.random.permutation(keys[done], size)[: n_mb * mb_size]
            mbs = jax.tree.map(lambda x: x[perm].reshape((n_mb, mb_size) + x.shape[1:]), data)
            state, (a_loss, c_loss, kl, entropy) = jax.lax.scan(minibatch_step, state, mbs)
            if full_batch:  # after the epoch, on the whole batch
                epoch_kl = jnp.mean(self.stop_kl(reference, self.actor.distribution(state.actor_params, batch.obs)))
            else:  # the minibatches' estimates, each before its update
                epoch_kl = jnp.mean(kl)
            stopped = (target_kl > 0) & (epoch_kl > kl_stop_factor * target_kl)
            first = done == 0
            stats = (
                jnp.where(first, jnp.mean(a_loss), first_loss),
                jnp.where(first, jnp.mean(entropy), first_entropy),
                jnp.maximum(max_kl, epoch_kl),
                epoch_kl,
                jnp.mean(c_loss),
            )
            return state, stopped, done + 1, stats

        zero = jnp.zeros(())
        stats = (zero, zero, jnp.asarray(-jnp.inf), zero, zero)
        agent, _, done, (first_loss, first_entropy, max_kl, last_kl, last_c_loss) = jax.lax.while_loop(
            running, epoch, (agent, jnp.asarray(False), jnp.asarray(0, jnp.int32), stats)
        )
        if full_batch:  # the returned policy's full-batch KL
            approx = last_kl
        else:  # the largest epoch mean, or the returned policy's estimate over the whole batch if larger
            final = self.actor.distribution(agent.actor_params, batch.obs)
            approx = jnp.maximum(max_kl, approx_kl(self.actor.log_prob(final, batch.action), batch.log_prob))
        metrics = {
            "actor_loss": first_loss,
            "critic_loss": last_c_loss,
            "approx_kl": approx,
            "entropy": first_entropy,
            "epochs_run": done.astype(jnp.float32),
        }
        return agent, metrics


class PenalisedPPO(PPO):
    """PPO with a penalty on the expected cost, read from the batch's J_c (IPO, P3O).  It takes expected-cost
    constraints only: PPO also takes "var", but no VaR rewrite (:mod:`saferl.algos.risk`) is made here."""

    constraint_kinds = ("expected",)
    needs_cost_estimate = True

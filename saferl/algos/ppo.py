"""PPO (Schulman et al. 2017): clipped surrogate, minibatch epochs, KL early stop.

The update is the template the first-order constrained methods reuse: they
override :meth:`PPO.before_update` (multiplier updates), :meth:`PPO.policy_advantage`
(how reward and cost advantages combine) and, where the loss itself differs (FOCOPS,
P3O), :meth:`PPO.policy_loss` with :meth:`PPO.loss_inputs`; ``kl_stop_factor``, ``kl_stop_estimate``
and :meth:`PPO.stop_kl` set the early stop.

Early stop: with ``kl_stop_estimate = "minibatch_mean"`` (PPO, PPO-Lag, CPPO, P3O) an epoch's KL is the
mean of its minibatches' estimates, each taken before that minibatch's update; with ``"full_batch"``
(FOCOPS, CUP, as their reference codes) it is the mean over the whole batch of the exact per-state KL
between a reference distribution (the batch's ``dist`` unless the caller passes another) and the policy
after the epoch.  The remaining epochs are skipped once it exceeds ``kl_stop_factor * target_kl``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from saferl.algos.base import COMMON_HPARAMS, AgentState, Algorithm, normalize, register
from saferl.hparams import choice, declare, integer, real


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


@register
class PPO(Algorithm):
    name = "ppo"
    description = "PPO (Schulman et al. 2017): clipped surrogate on the reward; ignores the constraint."
    constraint_kinds = ("expected", "var")
    needs_cost_estimate = False  # this class only: its constrained subclasses need it (base.Algorithm)
    defaults = declare(
        COMMON_HPARAMS,
        actor_lr=real(3e-4, "(0, inf)", "Adam rate of the policy"),
        clip=real(0.2, "(0, inf)", "ratio clip epsilon (PPO eq. 7)"),
        epochs=integer(10, "[1, inf)", "passes over the batch"),
        minibatches=integer(32, "[1, inf)", "minibatches per pass (at most num_envs * rollout_steps)"),
        entropy_coef=real(0.0, "[0, inf)", "weight of the entropy bonus"),
        target_kl=real(0.02, "[0, inf)", "the passes stop once one's mean KL exceeds kl_stop_factor * target_kl; 0 = never"),
        lr_schedule=choice("constant", ("constant", "linear"), "the policy's learning-rate schedule"),
        lr_decay_steps=integer(0, "[0, inf)", "updates over which the linear schedule decays to 0"),
    )

    #: the epochs stop once the epoch's KL (below) exceeds kl_stop_factor * target_kl
    kl_stop_factor = 1.5
    #: the epoch's KL of the stop test: "minibatch_mean" (mean of the minibatches' pre-update estimates, the
    #: second value of the loss) or "full_batch" (mean over the batch of :meth:`stop_kl` after the epoch)
    kl_stop_estimate = "minibatch_mean"

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
        """Per-state KL of the ``"full_batch"`` stop: KL(reference || pi) (OmniSafe's direction); FOCOPS
        overrides it with KL(pi || pi_k)."""
        return self.actor.kl(reference, dist)

    # ---- the update -------------------------------------------------------------------
    def update(self, agent: AgentState, batch, key):
        agent, batch, risk_metrics = self.prepare_batch(agent, batch)
        agent, metrics = self.before_update(agent, batch)
        metrics = {**risk_metrics, **metrics}
        advantage = self.policy_advantage(agent, batch)
        agent, ppo_metrics = self.ppo_epochs(agent, batch, advantage, key)
        return agent, {**metrics, **ppo_metrics}

    def ppo_epochs(self, agent: AgentState, batch, advantage, key, *, loss=None, inputs=None, fit_critics=True,
                   epochs=None, target_kl=None, kl_stop_factor=None, kl_reference=None):
        """Minibatch epochs of Adam on ``loss`` (default :meth:`policy_loss`) and, with ``fit_critics``, on the
        critics' MSE; the epochs stop once an epoch's KL (``kl_stop_estimate``; the ``"full_batch"`` one from
        ``kl_reference``, default ``batch.dist``) exceeds ``kl_stop_factor * target_kl``.  ``inputs`` (default
        :meth:`loss_inputs`) are extra per-sample arrays for the loss.  CUP runs it twice."""
        hp = self.hp
        loss = loss or self.policy_loss
        epochs = int(hp["epochs"] if epochs is None else epochs)
        target_kl = hp["target_kl"] if target_kl is None else target_kl
        kl_stop_factor = self.kl_stop_factor if kl_stop_factor is None else kl_stop_factor
        if self.kl_stop_estimate not in ("minibatch_mean", "full_batch"):
            raise ValueError(f"{type(self).__name__}.kl_stop_estimate: {self.kl_stop_estimate!r}")
        full_batch = self.kl_stop_estimate == "full_batch"
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

        def minibatch_step(carry, mb):
            state, stopped = carry
            (a_loss, (kl, entropy)), a_grad = jax.value_and_grad(actor_loss, has_aux=True)(state.actor_params, mb)
            a_upd, a_opt = actor_opt.update(a_grad, state.actor_opt_state, state.actor_params)
            new = state.replace(actor_params=optax.apply_updates(state.actor_params, a_upd), actor_opt_state=a_opt)
            c_loss = jnp.zeros(())
            if fit_critics:
                c_loss, c_grad = jax.value_and_grad(critic_loss)(state.critic_params, mb)
                c_upd, c_opt = critic_opt.update(c_grad, state.critic_opt_state, state.critic_params)
                new = new.replace(critic_params=optax.apply_updates(state.critic_params, c_upd), critic_opt_state=c_opt)
            state = jax.tree.map(lambda n, o: jnp.where(stopped, o, n), new, state)
            return (state, stopped), (a_loss, c_loss, kl, entropy)

        extra = self.loss_inputs(agent, batch) if inputs is None else inputs
        data = {"obs": batch.obs, "action": batch.action, "log_prob": batch.log_prob, "dist": batch.dist,
                "advantage": advantage, "returns": batch.returns, **extra}

        def epoch(carry, epoch_key):
            state, stopped = carry
            perm = jax.random.permutation(epoch_key, size)[: n_mb * mb_size]
            mbs = jax.tree.map(lambda x: x[perm].reshape((n_mb, mb_size) + x.shape[1:]), data)
            (state, _), (a_loss, c_loss, kl, entropy) = jax.lax.scan(minibatch_step, (state, stopped), mbs)
            if full_batch:  # after the epoch, on the whole batch (frozen once stopped, so it then repeats)
                epoch_kl = jnp.mean(self.stop_kl(reference, self.actor.distribution(state.actor_params, batch.obs)))
            else:  # the minibatches' estimates, each before its update
                epoch_kl = jnp.mean(kl)
            # skip the remaining epochs once the epoch's KL exceeds the target
            stopped = stopped | ((target_kl > 0) & (epoch_kl > kl_stop_factor * target_kl))
            return (state, stopped), (jnp.mean(a_loss), jnp.mean(c_loss), epoch_kl, jnp.mean(entropy), ~stopped)

        keys = jax.random.split(key, epochs)
        (agent, _), (a_loss, c_loss, kl, entropy, ran) = jax.lax.scan(epoch, (agent, jnp.asarray(False)), keys)
        metrics = {
            "actor_loss": a_loss[0],
            "critic_loss": c_loss[-1],
            # the stop test's KL: the largest epoch mean, or the returned policy's full-batch KL
            "approx_kl": kl[-1] if full_batch else jnp.max(kl),
            "entropy": entropy[0],
            "epochs_run": jnp.sum(ran.astype(jnp.float32)) + jnp.any(~ran).astype(jnp.float32),
        }
        return agent, metrics

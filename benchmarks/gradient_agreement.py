"""How much signal is in a trust-region method's gradients: split-half agreement on one batch.

    python benchmarks/gradient_agreement.py RUN_DIR [--rollouts 4] [--seed-index 0]

Loads the run's checkpoint, collects fresh batches with its policy, prepares each as the
algorithm's update would (risk rewrite included), and splits it into two halves by environment.
For the reward gradient g and the (first) constraint gradient b it reports the natural-metric
correlation of the two halves' estimates,

    corr(b) = b_1^T H^-1 b_2 / sqrt(b_1^T H^-1 b_1  b_2^T H^-1 b_2),

which is ~1 when the batch pins the gradient down and ~0 when noise dominates it, and the
fraction of s = b^T H^-1 b of the full batch that the halves agree on (b_1^T H^-1 b_2 / s ~ the
signal share of s, the quantity CPO's case selection and step length rest on).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl.training import run_directory
from saferl.training.trainer import Trainer


def agreement(trainer: Trainer, runner, key):
    algo = trainer.algo
    _, _, batch = trainer.rollout_batch(runner, key)
    agent, batch, _ = algo.prepare_batch(runner.agent, batch)
    adv_r, adv_c = algo.advantages(batch)
    num_envs = batch.rollout_shape[1]
    first = (jnp.arange(adv_r.shape[0]) % num_envs < num_envs // 2).astype(jnp.float32)
    halves = [first, 1.0 - first]
    grads = [algo.gradients(agent, batch, adv_r * 2 * m, adv_c * 2 * m[:, None]) for m in halves]
    full = algo.gradients(agent, batch, adv_r, adv_c)
    rows = jnp.stack([grads[0].g, grads[1].g, grads[0].B[0], grads[1].B[0], full.B[0]])
    hinv = algo.solve(algo.fisher_matvec(agent, batch), rows)

    def corr(i, j):
        return jnp.vdot(rows[i], hinv[j]) / jnp.sqrt(jnp.vdot(rows[i], hinv[i]) * jnp.vdot(rows[j], hinv[j]))

    s_full = jnp.vdot(rows[4], hinv[4])
    return {
        "corr_g": corr(0, 1),
        "corr_b": corr(2, 3),
        "signal_share_of_s": jnp.vdot(rows[2], hinv[3]) / s_full,
        "s": s_full,
        "c": full.c[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--rollouts", type=int, default=4)
    parser.add_argument("--seed-index", type=int, default=0)
    args = parser.parse_args()
    cfg = run_directory.load_run_config(Path(args.run_dir))
    trainer = Trainer(cfg)
    runners, _ = run_directory.load_checkpoint(Path(args.run_dir), trainer.init_all())
    runner = jax.tree.map(lambda x: x[args.seed_index], runners)
    fn = jax.jit(lambda k: agreement(trainer, runner, k))
    results = [jax.device_get(fn(k)) for k in jax.random.split(jax.random.PRNGKey(1), args.rollouts)]
    print(
        f"{cfg['algo']} on {cfg['env']} ({cfg['num_envs']} envs x {cfg['rollout_steps']} steps per batch), "
        f"seed index {args.seed_index}, {args.rollouts} batches:"
    )
    for name in results[0]:
        values = np.array([float(r[name]) for r in results])
        print(f"  {name:18s} mean {values.mean():10.4g}   per batch {np.array2string(values, precision=3)}")


if __name__ == "__main__":
    main()

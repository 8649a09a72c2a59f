"""Does the original Racecar's sensor noise explain why RacecarCircle1 learns so much faster on saferl's port?

    python benchmarks/fidelity/racecar_sensor_noise.py CONFIG.yaml --out RUN_DIR

Trains ``CONFIG.yaml`` (a run's config.yaml, e.g. ctrpo-table1's cpu RacecarCircle1 CPO run) on
``RacecarCircle1-SensorNoise``: saferl's port with white Gaussian noise added to the six sensor entries where
the original's MuJoCo car, which bounces and tilts on its suspension, reads far more spread than the port's
level planar car (:data:`SENSOR_NOISE_STD`).  Everything else is the port.  If the noisy port learns at the
authors' pace (their CPO's return ~1 at 800k steps, ours 27.6 on the port), the sensors explain the gap.

:data:`SENSOR_NOISE_STD` is measured, not fitted: the spread of each entry over 4 episodes x 500 steps of the
constant action (1, 0.3) on the original (``env_server.py``) against the port's, the noise's standard deviation
being sqrt(std_original^2 - std_port^2) (docs/results/ctrpo-table1-cpu/README.md, "RacecarCircle1").
The noise is independent from step to step; the original's bounce is not, so this is a model of its size only.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import yaml

from saferl import api
from saferl.envs.base import register
from saferl.envs.safety_nav.racecar_circle import RacecarCircle, RacecarCircleState
from saferl.foundation import struct

#: observation index -> noise std: accelerometer x, y, z; velocimeter z; gyro x, y (std original / port over
#: the constant action (1, 0.3): 1.367 / 0.200, 0.386 / 0.053, 1.621 / 0, 0.003 / 0, 0.007 / 0, 0.014 / 0)
SENSOR_NOISE_STD = {
    0: math.sqrt(1.367**2 - 0.200**2),
    1: math.sqrt(0.386**2 - 0.053**2),
    2: 1.621,
    5: 0.003,
    6: 0.007,
    7: 0.014,
}
NAME = "RacecarCircle1-SensorNoise"


@struct.dataclass
class NoisyState:
    inner: RacecarCircleState
    key: jax.Array


@register(NAME, "RacecarCircle1 with the original Racecar's sensor spread added as white noise (a measurement)")
class RacecarCircleSensorNoise(RacecarCircle):
    """The port, with :data:`SENSOR_NOISE_STD` added to its observations."""

    def _noisy(self, obs, key):
        index = jnp.asarray(list(SENSOR_NOISE_STD))
        std = jnp.asarray(list(SENSOR_NOISE_STD.values()), jnp.float32)
        return obs.at[index].add(std * jax.random.normal(key, std.shape))

    def reset(self, key, params):
        key, env_key, noise_key = jax.random.split(key, 3)
        inner, obs = super().reset(env_key, params)
        return NoisyState(inner, key), self._noisy(obs, noise_key)

    def step(self, state: NoisyState, action, params):
        key, noise_key = jax.random.split(state.key)
        inner, obs, reward, cost, terminated, truncated, info = super().step(state.inner, action, params)
        return NoisyState(inner, key), self._noisy(obs, noise_key), reward, cost, terminated, truncated, info


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, help="a RacecarCircle1 run's config.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the new run's directory")
    args = parser.parse_args(argv)
    cfg = yaml.safe_load(args.config.read_text())
    if cfg.get("env") != "RacecarCircle1":
        sys.exit(f"{args.config}: env is {cfg.get('env')!r}, not RacecarCircle1")
    cfg["env"] = NAME
    run = api.train(None, None, steps=None, config=cfg, out=args.out, progress=False)
    final = run.summary["final"]
    print(
        f"{NAME}, {cfg['algo']}, {cfg['seeds']} seeds x {cfg['total_steps']:,} steps: final return per seed "
        f"{[round(v, 1) for v in final['episode_return']['per_seed']]}, cost "
        f"{[round(v, 1) for v in final['episode_cost']['per_seed']]}"
    )


if __name__ == "__main__":
    main()

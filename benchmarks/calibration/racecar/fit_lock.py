"""Fit racecar.py's ``LOCK_FITTED`` (the inner front wheel on the bumper) to the original's steady crab, and check it.

    .venv/bin/python benchmarks/calibration/racecar/fit_lock.py [--report-only]

Data: ``grid_reverse.json`` (``record.py grid-reverse``: safety-gymnasium 1.0.0 on MuJoCo 2.3.3), its rows at full
lock (steering 0.785 rad) and throttles -4 ... -20 rad/s: the axle speed ``w`` and the body's forward and sideways
velocity, means over steps 101-250.  With ``u = r |w|`` the rear wheels' surface speed, the locked regime of
``racecar._path`` is linear in its four numbers: ``|v_x| / u = g0 + g1 u`` and ``|v_y| / |v_x| = c0 + c1 u``, fitted by
linear least squares.  Then the check: saferl's planar model (``racecar.racecar_step``, the numbers as the module has
them) reversing at full lock for 250 env steps at each throttle, its means over steps 101-250 beside the record's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.safety_nav import racecar

HERE = Path(__file__).resolve().parent
FULL_LOCK = 0.785
AXLE, FORWARD, SIDEWAYS, YAW = 2, 3, 4, 5  # grid_reverse.json's "mean" entries (record.py)


def locked_rows() -> list[dict]:
    rows = json.loads((HERE / "grid_reverse.json").read_text())
    return sorted((r for r in rows if r["dc"] == FULL_LOCK), key=lambda r: -r["thr"])


def fit(rows: list[dict], radius: float) -> dict[str, float]:
    u = np.array([radius * abs(r["mean"][AXLE]) for r in rows])
    grip = np.array([abs(r["mean"][FORWARD]) for r in rows]) / u
    crab = np.array([abs(r["mean"][SIDEWAYS] / r["mean"][FORWARD]) for r in rows])
    design = np.stack([np.ones_like(u), u], axis=1)
    (g0, g1), (c0, c1) = (np.linalg.lstsq(design, y, rcond=None)[0] for y in (grip, crab))
    return {"lock_grip": g0, "lock_grip_per_speed": g1, "lock_crab": c0, "lock_crab_per_speed": c1}


def steady(params: racecar.RacecarParams, throttle: float, steps: int = 250) -> np.ndarray:
    """Means over steps 101-250 of (axle speed, forward and sideways body velocity, yaw rate) reversing at full lock."""
    state = racecar.racecar_at(jnp.zeros(2), jnp.float32(0.0))
    ctrl = jnp.array([throttle, FULL_LOCK], jnp.float32)

    def body(state, _):
        state = racecar.racecar_step(state, ctrl, params)
        c, s = jnp.cos(state.heading), jnp.sin(state.heading)
        vel = racecar.body_velocity(state, params)
        return state, jnp.stack([state.wheel_speed, c * vel[0] + s * vel[1], -s * vel[0] + c * vel[1], state.yaw_rate])

    return np.asarray(jax.lax.scan(body, state, None, length=steps)[1][100:].mean(axis=0))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report-only", action="store_true", help="only the check of the module's numbers")
    args = parser.parse_args(argv)
    params = racecar.RacecarParams()
    rows = locked_rows()
    if not args.report_only:
        fitted = fit(rows, params.wheel_radius)
        print("fitted beside racecar.LOCK_FITTED:")
        for name, value in fitted.items():
            print(f"  {name:22s} {value:+.3f}   module {racecar.LOCK_FITTED[name]:+.3f}")
    print("\nreverse at full lock, means over steps 101-250: original (MuJoCo 2.3.3) / saferl's planar model")
    print("  throttle   axle rad/s        forward m/s       sideways m/s      yaw rad/s")
    for r in rows:
        ours = steady(params, r["thr"])
        theirs = [r["mean"][k] for k in (AXLE, FORWARD, SIDEWAYS, YAW)]
        print(f"  {r['thr']:6.0f}  " + "  ".join(f"{t:+7.3f} / {o:+7.3f}" for t, o in zip(theirs, ours)))


if __name__ == "__main__":
    main()

"""Fit the nine constants of the planar Racecar model (``FITTED`` in ``saferl/envs/safety_nav/racecar.py``).

Runs in the main venv (JAX, saferl), from the repository root, on what ``record.py`` wrote::

    .venv/bin/python benchmarks/calibration/racecar/fit.py                 # fit, then the residuals (under a minute)
    .venv/bin/python benchmarks/calibration/racecar/fit.py --report-only   # the residuals of racecar.FITTED

Inputs beside this file: ``transients.json`` (``record.py transients``) and ``grid.json`` (``record.py grid``).
The model is saferl's own (``racecar.racecar_step`` from rest, in float64, :data:`NAMES` replaced in
``RacecarParams``).  The least-squares problem is the one racecar.py's docstring describes
(``scipy.optimize.least_squares``, bounds :data:`BOUNDS`, from :data:`START`): per env step of the eight
transients of :data:`TRANSIENTS` (970 steps) the steering angle, yaw rate and forward and sideways body velocity
against the original's, scaled by 0.02 rad, 0.05 rad/s, 0.02 and 0.01 m/s, weighted ``0.5 x 2 / sqrt(steps)``
per run; and at the 60 steady turns of grid.json the mean over steps 101-250 of the angle (scale 0.01), the log
of the yaw rate's ratio (0.03), the forward (0.01) and sideways (0.005) velocity.

Prints the fitted values beside ``racecar.FITTED``, then for them (``FITTED`` with ``--report-only``) the
steady turns, ours against the original (angle, yaw rate, velocities, the body origin's turning radius and its
relative error), and for the transients not fitted and a few fitted ones the RMS errors and how far apart the two
cars end: the residual table of racecar.py's docstring.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)  # finite differences need float64, as the original fit in numpy had

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import least_squares  # noqa: E402

from saferl.envs.safety_nav import racecar  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMES = [
    "steer_damping",
    "align_torque",
    "align_yaw_rate",
    "wheelbase",
    "no_slip_x",
    "yaw_lag_per_speed",
    "slip_gain",
    "oversteer",
    "yaw_lag_min",
]
#: where least squares starts (a first guess from the geometry and the steady turns) and its bounds
START = {
    "steer_damping": 0.059,
    "align_torque": 0.11,
    "align_yaw_rate": 0.1,
    "wheelbase": 0.40,
    "no_slip_x": -0.21,
    "yaw_lag_per_speed": 0.15,
    "slip_gain": 0.05,
    "oversteer": 0.15,
    "yaw_lag_min": 0.02,
}
BOUNDS = {
    "steer_damping": (0.005, 0.5),
    "align_torque": (0.0, 0.3),
    "align_yaw_rate": (0.01, 2.0),
    "wheelbase": (0.3, 0.6),
    "no_slip_x": (-0.4, 0.0),
    "yaw_lag_per_speed": (0.02, 1.0),
    "slip_gain": (0.0, 1.0),
    "oversteer": (0.0, 1.0),
    "yaw_lag_min": (0.004, 0.5),
}
#: the transients fitted; the others of record.py are the check
TRANSIENTS = [
    "turn20_03",
    "turn12_05",
    "turn20_785",
    "turn8_02",
    "slowrandom",
    "straight20",
    "brake",
    "steer_still_785",
]
CHECK = ["random", "straight8", "reverse20", "turn20_03", "turn12_05", "turn8_02", "slowrandom", "steer_still_03"]
T = 250  # steps simulated per command (the longest transient is 200)
SCALE = np.array([0.02, 0.05, 0.02, 0.01])  # angle, yaw rate, forward, sideways
TRANSIENT_WEIGHT = 0.5


def measured(record: list[dict]) -> np.ndarray:
    """(steps + 1, 4): steering angle (the hinges' mean), yaw rate, forward and sideways body velocity."""
    out = []
    for s in record:
        h, (vx, vy) = s["heading"], s["vel"]
        out.append(
            [0.5 * (s["dl"] + s["dr"]), s["yaw"], vx * np.cos(h) + vy * np.sin(h), -vx * np.sin(h) + vy * np.cos(h)]
        )
    return np.array(out)


def simulate(values, actions, headings):
    """(batch, steps + 1, 4) as :func:`measured`, and the positions (batch, steps + 1, 2), from rest at the origin."""
    params = racecar.RacecarParams().replace(**{name: values[i] for i, name in enumerate(NAMES)})

    def observe(state):
        vel = racecar.body_velocity(state, params)
        c, s = jnp.cos(state.heading), jnp.sin(state.heading)
        signals = jnp.stack([state.steer, state.yaw_rate, c * vel[0] + s * vel[1], -s * vel[0] + c * vel[1]])
        return signals, state.pos

    def one(acts, heading):
        zero = jnp.zeros((), jnp.float64)
        start = racecar.RacecarState(
            jnp.zeros(2, jnp.float64), jnp.asarray(heading, jnp.float64), zero, zero, zero, zero
        )

        def body(state, action):
            state = racecar.racecar_step(state, action, params)
            return state, observe(state)

        _, (signals, pos) = jax.lax.scan(body, start, acts)
        first, first_pos = observe(start)
        return jnp.concatenate([first[None], signals]), jnp.concatenate([first_pos[None], pos])

    return jax.vmap(one)(actions, headings)


class Problem:
    """The batch of transients and steady turns, and the residuals of a parameter vector."""

    def __init__(self, runs: dict, grid: list[dict]):
        acts, masks, targets, headings = [], [], [], []
        for name in TRANSIENTS:
            a = np.array([r["act"] for r in runs[name][1:]])
            n = len(a)
            acts.append(np.concatenate([a, np.repeat(a[-1:], T - n, 0)]))
            mask = np.zeros(T + 1)
            mask[: n + 1] = 2.0 / np.sqrt(n + 1)
            masks.append(mask)
            target = np.zeros((T + 1, 4))
            target[: n + 1] = measured(runs[name])
            targets.append(target)
            headings.append(runs[name][0]["heading"])
        for g in grid:
            acts.append(np.tile([g["thr"], g["dc"]], (T, 1)))
            mask = np.zeros(T + 1)
            mask[101:] = 1.0 / 150  # the mean over steps 101..250
            masks.append(mask)
            m = g["mean"]  # hinges, axle speed, forward, sideways, yaw rate
            targets.append(np.tile([0.5 * (m[0] + m[1]), m[5], m[3], m[4]], (T + 1, 1)))
            headings.append(0.0)
        self.acts, self.mask = jnp.asarray(np.array(acts)), np.array(masks)
        self.target, self.headings = np.array(targets), jnp.asarray(np.array(headings))
        self.n_transients = len(TRANSIENTS)
        self._sim = jax.jit(lambda v: simulate(v, self.acts, self.headings)[0])

    def signals(self, values) -> np.ndarray:
        return np.asarray(self._sim(jnp.asarray(values, jnp.float64)))

    def residuals(self, values) -> np.ndarray:
        sim, k = self.signals(values), self.n_transients
        err = (sim[:k] - self.target[:k]) / SCALE * self.mask[:k, :, None]
        sm = (sim[k:] * self.mask[k:, :, None]).sum(1)
        tm = self.target[k:, 101]
        steady = np.concatenate(
            [
                (sm[:, 0] - tm[:, 0]) / 0.01,
                np.log(np.abs(sm[:, 1]) / np.abs(tm[:, 1])) / 0.03,
                (sm[:, 2] - tm[:, 2]) / 0.01,
                (sm[:, 3] - tm[:, 3]) / 0.005,
            ]
        )
        return np.concatenate([TRANSIENT_WEIGHT * err.ravel(), steady])


def report(values: np.ndarray, problem: Problem, runs: dict, grid: list[dict]) -> None:
    sim, k = problem.signals(values), problem.n_transients
    print(
        "\nsteady turns (steps 101-250), the original / ours: | throttle | steering | angle | yaw rate | forward | "
        "sideways | radius of the body origin | its error |"
    )
    radius_err, speed_err = [], []
    for j, g in enumerate(grid):
        s, m = sim[k + j, 101:].mean(0), problem.target[k + j, 101]
        rm, rs = np.hypot(m[2], m[3]) / m[1], np.hypot(s[2], s[3]) / s[1]
        radius_err.append(rs / rm - 1)
        speed_err.append(np.hypot(s[2], s[3]) / np.hypot(m[2], m[3]) - 1)
        print(
            f"| {g['thr']:4.0f} | {g['dc']:6.3f} | {m[0]:6.3f} / {s[0]:6.3f} | {m[1]:6.3f} / {s[1]:6.3f} | "
            f"{m[2]:6.3f} / {s[2]:6.3f} | {m[3]:6.3f} / {s[3]:6.3f} | {rm:7.3f} / {rs:7.3f} | {rs / rm - 1:+.3f} |"
        )
    radius_err, speed_err = np.abs(radius_err), np.abs(speed_err)
    print(
        f"turning radius: median error {np.median(radius_err):.1%}, 90% of the commands within "
        f"{np.quantile(radius_err, 0.9):.1%}, worst {radius_err.max():.1%}; speed: median error "
        f"{np.median(speed_err):.2%}, worst {speed_err.max():.1%}"
    )
    acts, headings = [], []
    steps = max(len(runs[n]) for n in CHECK) - 1
    for name in CHECK:
        a = np.array([r["act"] for r in runs[name][1:]])
        acts.append(np.concatenate([a, np.repeat(a[-1:], steps - len(a), 0)]))
        headings.append(runs[name][0]["heading"])
    signals, pos = (
        np.asarray(x)
        for x in jax.jit(simulate)(jnp.asarray(values, jnp.float64), jnp.asarray(np.array(acts)), jnp.asarray(headings))
    )
    print("\ntransients: RMS error of (angle, yaw rate, forward, sideways); RMS of the original's signal; positions")
    for i, name in enumerate(CHECK):
        m = measured(runs[name])
        n = len(m)
        rms = np.sqrt(((signals[i, :n] - m) ** 2).mean(0))
        ours = pos[i, :n] + np.array(runs[name][0]["pos"])
        theirs = np.array([r["pos"] for r in runs[name]])
        apart = np.linalg.norm(ours - theirs, axis=1)
        fitted = " (fitted)" if name in TRANSIENTS else ""
        print(
            f"{name:15s} {np.round(rms, 4)} {np.round(np.sqrt((m**2).mean(0)), 3)}; {apart[-1]:.3f} m apart at "
            f"the end (at most {apart.max():.3f}) after a {np.linalg.norm(np.diff(theirs, axis=0), axis=1).sum():.2f}"
            f" m path{fitted}"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transients", type=Path, default=HERE / "transients.json")
    parser.add_argument("--grid", type=Path, default=HERE / "grid.json")
    parser.add_argument("--max-nfev", type=int, default=100, help="least squares' evaluations")
    parser.add_argument("--report-only", action="store_true", help="no fit: the residuals of racecar.FITTED")
    args = parser.parse_args(argv)
    for path, what in ((args.transients, "transients"), (args.grid, "grid")):
        if not path.is_file():
            print(f"fit: no {path}; record it with record.py {what} (see its docstring)", file=sys.stderr)
            return 2
    runs, grid = json.loads(args.transients.read_text()), json.loads(args.grid.read_text())
    problem = Problem(runs, grid)
    fitted = np.array([racecar.FITTED[name] for name in NAMES])
    print(f"cost of racecar.FITTED: {0.5 * np.sum(problem.residuals(fitted) ** 2):.2f}")
    if not args.report_only:
        start = time.time()
        x0 = np.array([START[name] for name in NAMES])
        print(f"cost at the start: {0.5 * np.sum(problem.residuals(x0) ** 2):.2f}")
        res = least_squares(
            problem.residuals,
            x0,
            bounds=([BOUNDS[n][0] for n in NAMES], [BOUNDS[n][1] for n in NAMES]),
            x_scale="jac",
            max_nfev=args.max_nfev,
        )
        fitted = res.x
        print(f"cost {res.cost:.2f} after {res.nfev} evaluations ({time.time() - start:.0f} s): {res.message}")
        print("\n| constant | fitted here | racecar.FITTED |\n|---|---|---|")
        for name, value in zip(NAMES, fitted):
            print(f"| {name} | {value:.4g} | {racecar.FITTED[name]:.4g} |")
    report(fitted, problem, runs, grid)
    return 0


if __name__ == "__main__":
    sys.exit(main())

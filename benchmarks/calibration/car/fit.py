"""Fit the seven constants of the planar Car model (``FITTED`` in ``saferl/envs/safety_nav/car.py``) to the original.

Runs in the main venv (JAX, saferl), from the repository root, on the data ``record.py responses`` wrote::

    .venv/bin/python benchmarks/calibration/car/fit.py                 # fit, then the residuals (about a minute)
    .venv/bin/python benchmarks/calibration/car/fit.py --report-only   # the residuals of car.py's FITTED as it is

Input: ``responses.npz`` beside this file (``--data``).  The model is saferl's own (``car.car_step`` from rest,
:data:`NAMES` replaced in ``CarParams``), so what it fits is what the environment runs.  The loss is the one
car.py's docstring describes: over twelve scripted commands (:data:`CONDITIONS`, their first 150 steps), the
squared error of the forward speed and of 0.2 m x the yaw rate against the original's mean over seeds, averaged
per command and summed, plus ``--w-random`` x twelve x the same error averaged over eight 300-step runs of
uniform random actions (the original's own runs, step by step, not their mean).  Nelder-Mead on the logarithms
(``--restarts`` restarts of ``--maxiter`` iterations each, from :data:`START`).

Prints the fitted values beside ``car.FITTED``, then, for the values fitted (``FITTED`` with ``--report-only``),
per command the RMS errors and the responses at a few steps against the original's, and the random runs'
statistics and per-step correlation: the residual table of car.py's docstring.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import minimize

from saferl.envs.safety_nav import car

HERE = Path(__file__).resolve().parent
#: the constants fitted, in the order of the optimiser's vector
NAMES = [
    "wheel_friction",
    "ball_friction",
    "slip_speed",
    "ball_rolling_drag",
    "load_transfer_height",
    "wheel_lateral_friction",
    "yaw_inertia",
]
#: the scripted commands of record.py the loss sums over (spin_rl and lin0.02 are recorded, not fitted)
CONDITIONS = [
    "full",
    "reverse",
    "spin_lr",
    "lin0.005",
    "lin0.01",
    "lin0.015",
    "left_only",
    "asym",
    "coast",
    "fwd_spin",
    "spin_fwd",
    "fwd_rev",
]
STEPS = 150  # of each scripted command
RANDOM_STEPS = 300  # of each random run
#: where the optimiser starts: near the physical values (car.xml's friction 1, drag 0.001 / 0.05^2 = 0.4, the COM
#: height 0.09, mj_fullM's yaw inertia 3.648e-4), after an earlier fit of the same loss
START = [0.87, 0.93, 0.078, 0.24, 0.09, 0.59, 3.3e-4]


def load(path: Path) -> dict:
    """The fit's arrays from record.py's file: padded commands, masks, the original's means and random runs."""
    data = np.load(path)
    actions, masks, fwd, yaw = [], [], [], []
    for name in CONDITIONS:
        act, resp = data[f"{name}.actions"][:STEPS], data[f"{name}.response"][:, :STEPS].mean(0)
        n = len(act)
        actions.append(np.pad(act, ((0, STEPS - n), (0, 0)), mode="edge"))
        masks.append(np.arange(STEPS) < n)
        fwd.append(np.pad(resp[:, 0], (0, STEPS - n)))
        yaw.append(np.pad(resp[:, 2], (0, STEPS - n)))
    random = data["random.response"]
    return {
        "A": np.array(actions, np.float32),
        "mask": np.array(masks, np.float32),
        "fwd": np.array(fwd),
        "wz": np.array(yaw),
        "RA": data["random.actions"][:, :RANDOM_STEPS].astype(np.float32),
        "rfwd": random[:, :RANDOM_STEPS, 0],
        "rwz": random[:, :RANDOM_STEPS, 2],
        "RA_all": data["random.actions"].astype(np.float32),
        "random_all": random,
    }


def rollout(values, actions):
    """Forward speed and yaw rate after each step, from rest, of ``actions`` (batch, steps, 2)."""
    params = car.CarParams().replace(**{name: values[i] for i, name in enumerate(NAMES)})

    def one(acts):
        def body(state, action):
            state = car.car_step(state, action, params)
            return state, jnp.stack([state.vel[0], state.yaw_rate])

        return jax.lax.scan(body, car.car_at(jnp.zeros(2), 0.0), acts)[1]

    return jax.vmap(one)(actions)


def make_loss(d: dict, w_random: float, w_yaw: float):
    @jax.jit
    def loss(log_values):
        values = jnp.exp(log_values)
        out = rollout(values, d["A"])
        err = ((out[..., 0] - d["fwd"]) ** 2 + (w_yaw * (out[..., 1] - d["wz"])) ** 2) * d["mask"]
        per_condition = jnp.sum(err, 1) / jnp.sum(d["mask"], 1)
        rand = rollout(values, d["RA"])
        err_random = jnp.mean((rand[..., 0] - d["rfwd"]) ** 2 + (w_yaw * (rand[..., 1] - d["rwz"])) ** 2)
        return jnp.sum(per_condition) + w_random * err_random * per_condition.shape[0]

    return loss


def report(values: np.ndarray, d: dict) -> None:
    out = np.asarray(rollout(jnp.asarray(values, jnp.float32), d["A"]))
    print(
        "\nper command: RMS error of forward speed (m/s) and yaw rate (rad/s); ours / the original at steps "
        "1, 2, 5, 25, 50, 52, 54, 56, 61 and the last"
    )
    for j, name in enumerate(CONDITIONS):
        n = int(d["mask"][j].sum())
        at = [i for i in (0, 1, 4, 24, 49, 51, 53, 55, 60, n - 1) if i < n]
        rms = [np.sqrt(np.mean((out[j, :n, c] - d[key][j, :n]) ** 2)) for c, key in ((0, "fwd"), (1, "wz"))]
        print(
            f"{name:10s} RMS forward {rms[0]:.3f}, yaw rate {rms[1]:.3f}\n"
            f"  forward  {np.round(out[j, at, 0], 3)}\n           {np.round(d['fwd'][j, at], 3)}\n"
            f"  yaw rate {np.round(out[j, at, 1], 2)}\n           {np.round(d['wz'][j, at], 2)}"
        )
    rand = np.asarray(rollout(jnp.asarray(values, jnp.float32), d["RA_all"]))
    f, w = rand[..., 0], rand[..., 1]
    rf, rw = d["random_all"][..., 0], d["random_all"][..., 2]
    print(f"\nrandom actions, {f.shape[0]} x {f.shape[1]} steps: mean forward, its std, mean |yaw rate|, its std")
    print(f"  ours     {f.mean():.3f} {f.std():.3f} {np.abs(w).mean():.3f} {w.std():.3f}")
    print(f"  original {rf.mean():.3f} {rf.std():.3f} {np.abs(rw).mean():.3f} {rw.std():.3f}")
    print(
        f"  per-step correlation: forward {np.corrcoef(f.ravel(), rf.ravel())[0, 1]:.3f}, "
        f"yaw rate {np.corrcoef(w.ravel(), rw.ravel())[0, 1]:.3f}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "responses.npz", help="record.py responses' file")
    parser.add_argument("--w-random", type=float, default=1.0, help="weight of the random runs")
    parser.add_argument("--w-yaw", type=float, default=0.2, help="m: the yaw rate's weight against the speed's")
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--maxiter", type=int, default=3000, help="Nelder-Mead iterations per restart")
    parser.add_argument("--report-only", action="store_true", help="no fit: the residuals of car.FITTED")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"fit: no {args.data}; record it with record.py responses (see its docstring)", file=sys.stderr)
        return 2
    d = load(args.data)
    loss = make_loss(d, args.w_random, args.w_yaw)
    fitted = np.array([car.FITTED[name] for name in NAMES])
    print(f"loss of car.FITTED: {float(loss(np.log(fitted))):.6f}")
    if not args.report_only:
        start = time.time()
        q = np.log(np.array(START))
        print(f"loss at the start: {float(loss(q)):.6f}")
        for restart in range(args.restarts):
            res = minimize(
                lambda x: float(loss(x)),
                q,
                method="Nelder-Mead",
                options=dict(maxiter=args.maxiter, xatol=1e-4, fatol=1e-8, adaptive=True),
            )
            q = res.x
            print(f"restart {restart + 1}: loss {res.fun:.6f} ({res.nit} iterations, {time.time() - start:.0f} s)")
        fitted = np.exp(q)
        print("\n| constant | fitted here | car.FITTED |\n|---|---|---|")
        for name, value in zip(NAMES, fitted):
            print(f"| {name} | {value:.4g} | {car.FITTED[name]:.4g} |")
    report(fitted, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""saferl's side of the Safety-Gymnasium suite comparison (runs in the main venv, .venv).

The same episodes as ``suite_original.py`` on saferl's ports (``suite_tasks.TASKS``: the four
MJX velocity tasks and PointPush1, CarButton1, RacecarCircle1), the scripted controllers of
``suite_tasks`` reading saferl's state pytrees, and the velocity tasks' trajectories from the
start states the original recorded (its JSON, ``--original``), built the way the tasks' reset
builds them (``LocomotionEnv.state_from(qpos, qvel)``: fresh kinematics, zero warm start).
Writes one JSON (``--out``).

    JAX_PLATFORMS=cpu .venv/bin/python benchmarks/fidelity/suite_saferl.py --original FILE --out FILE

One compiled program per task (an MJX task takes tens of seconds to compile): the
episodes of a batch are ``vmap``-ed, stepped in a ``lax.while_loop`` that stops when every
episode has ended (``terminated or truncated``; the Hopper and Humanoid fall within a few
hundred steps) or at a traced step limit, with the policy chosen by a traced mode: 0 uniform
random actions, 1 the scripted controller, 2 a fixed action sequence from a given start state.
Mode 2 is the trajectory check: every episode of the batch runs the same start and actions, and
the first one's obs, reward, cost, termination, qpos and qvel are recorded for the first 100 steps.
Statistics count the steps up to the end of each episode, as the original's loop does.

For the velocity tasks it also runs, as a diagnosis and not as saferl, the scripted episodes and
the trajectories on MuJoCo 4.0 itself (the main venv's ``mujoco``, float64, ``mj_step`` on the same
model files), once as the files are and once with every geom margin halved (MuJoCo 2.3.3 gives a
contact the larger of its two geoms' margins, MuJoCo 4.0 and MJX their sum: ``suite_tasks.
margin_probe``, run on MuJoCo 4.0 and MJX here).  ``--skip-native`` leaves these out.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import suite_tasks as st  # noqa: E402

from saferl.envs import base as envs  # noqa: E402

RANDOM, SCRIPTED, OPEN_LOOP = 0, 1, 2


def scripted_action(label: str, state):
    """The task's controller (suite_tasks) on saferl's state, in [-1, 1]^n."""
    if label in st.VELOCITY_TASKS:
        return st.VELOCITY_CONTROLLERS[label](jnp, state.time, state.qpos, state.qvel)
    if label == "PointPush1":
        return st.point_push_controller(jnp, state.pos, state.heading, state.box_pos, state.goal)
    if label == "CarButton1":
        return st.car_button_controller(jnp, state.car.pos, state.car.yaw, state.buttons[state.goal_button])
    return st.racecar_circle_controller(jnp, state.robot.pos, state.robot.heading)


def extras_of(label: str, info, before, after):
    """A step's counts of ``st.EXTRAS[label]``, from its info and the states ``before`` and ``after`` it."""
    if label not in st.EXTRAS:
        return jnp.zeros((0,))
    return jnp.stack(
        [
            jnp.linalg.norm(after.box_pos[:2] - before.box_pos[:2])
            if key == st.BOX_MOVED
            else jnp.asarray(info[key], jnp.float32)
            for _, _, key in st.EXTRAS[label]
        ]
    )


def episode_program(label: str, env, params, count: int):
    """``run(keys, mode, limit, qpos, qvel, actions)`` -> per-episode (return, cost, length, extra)
    and the first episode's recorded steps; lowered and compiled once (its compile time is returned)."""
    nu = env.action_space(params).shape[0]
    names = st.EXTRA_NAMES.get(label, ())
    velocity = label in st.VELOCITY_TASKS
    steps = st.TRAJECTORY_STEPS

    def run(keys, mode, limit, qpos, qvel, actions):
        reset_keys = jax.vmap(lambda k: jax.random.fold_in(k, 0))(keys)
        states, obs = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, params)
        if velocity:  # mode 2: every episode starts from the given state
            fixed, fixed_obs = env.state_from(qpos, qvel)
            states = jax.tree.map(
                lambda a, b: jnp.where(mode == OPEN_LOOP, jnp.broadcast_to(b, a.shape), a), states, fixed
            )
            obs = jnp.where(mode == OPEN_LOOP, jnp.broadcast_to(fixed_obs, obs.shape), obs)
        record = {
            "obs": jnp.zeros((steps,) + obs.shape[1:]),
            "rewards": jnp.zeros(steps),
            "costs": jnp.zeros(steps),
            "terminated": jnp.zeros(steps, bool),
        }
        if velocity:
            record.update(qpos=jnp.zeros((steps, env.nq)), qvel=jnp.zeros((steps, env.nv)))

        def cond(carry):
            t, done = carry[0], carry[2]
            return (t < limit) & ~jnp.all(done)

        def body(carry):
            t, states, done, ret, cost, length, extra, record = carry
            random = jax.vmap(
                lambda k: jax.random.uniform(jax.random.fold_in(k, t + 1), (nu,), minval=-1.0, maxval=1.0)
            )(keys)
            scripted = jax.vmap(lambda s: scripted_action(label, s))(states)
            fixed = jnp.broadcast_to(actions[jnp.minimum(t, steps - 1)], random.shape)
            action = jnp.where(mode == RANDOM, random, jnp.where(mode == SCRIPTED, scripted, fixed))
            before = states
            states, obs, reward, c, terminated, truncated, info = jax.vmap(env.step, in_axes=(0, 0, None))(
                states, action, params
            )
            live = ~done
            ret = ret + jnp.where(live, reward, 0.0)
            cost = cost + jnp.where(live, c, 0.0)
            length = length + live.astype(jnp.int32)
            extra = extra + jnp.where(
                live[:, None], jax.vmap(lambda i, b, a: extras_of(label, i, b, a))(info, before, states), 0.0
            )
            i = jnp.minimum(t, steps - 1)
            row = {"obs": obs[0], "rewards": reward[0], "costs": c[0], "terminated": terminated[0]}
            if velocity:
                row.update(qpos=states.qpos[0], qvel=states.qvel[0])
            record = {k: jnp.where(t < steps, record[k].at[i].set(row[k]), record[k]) for k in record}
            return t + 1, states, done | terminated | truncated, ret, cost, length, extra, record

        zero = jnp.zeros((count,), jnp.float32)
        init = (
            jnp.zeros((), jnp.int32),
            states,
            jnp.zeros((count,), bool),
            zero,
            zero,
            jnp.zeros((count,), jnp.int32),
            jnp.zeros((count, len(names)), jnp.float32),
            record,
        )
        _, _, _, ret, cost, length, extra, record = jax.lax.while_loop(cond, body, init)
        return ret, cost, length, extra, record, obs[0]

    nq = env.nq if velocity else 1
    nv = env.nv if velocity else 1
    example = (
        jax.random.split(jax.random.PRNGKey(0), count),
        jnp.int32(0),
        jnp.int32(1),
        jnp.zeros(nq),
        jnp.zeros(nv),
        jnp.zeros((steps, nu)),
    )
    start = time.perf_counter()
    compiled = jax.jit(run).lower(*example).compile()
    return compiled, time.perf_counter() - start, example


def run_task(
    label: str, name: str, kwargs: dict, count: int, original: dict | None, physics: str | None = None
) -> dict:
    env = envs.make(name, **kwargs)
    params = env.default_params()
    if physics is not None and hasattr(params, "physics"):  # velocity: mujoco (default) or mjx; navigation: planar
        params = params.replace(physics=physics)  # or mujoco (the default of RacecarCircle1 and CarButton1)
    compiled, compile_seconds, example = episode_program(label, env, params, count)
    keys, _, _, qpos, qvel, actions = example
    entry = {
        "env": name,
        "kwargs": kwargs,
        "physics": getattr(params, "physics", None),
        "compile_seconds": compile_seconds,
        "policies": {},
    }
    limit = jnp.int32(int(params.max_steps))
    for i, policy in enumerate(st.POLICIES):
        start = time.perf_counter()
        mode = jnp.int32(RANDOM if policy == "random" else SCRIPTED)
        ret, cost, length, extra, *_ = jax.device_get(
            compiled(jax.random.split(jax.random.PRNGKey(i), count), mode, limit, qpos, qvel, actions)
        )
        record = common.episode_record(ret, cost, length, extra, st.EXTRA_NAMES.get(label, ()))
        record["seconds"] = time.perf_counter() - start
        entry["policies"][policy] = record
    if label in st.VELOCITY_TASKS and original is not None and "trajectory" in original:
        traj = original["trajectory"]
        start = time.perf_counter()
        _, _, _, _, rec, obs0 = jax.device_get(
            compiled(
                keys,
                jnp.int32(OPEN_LOOP),
                jnp.int32(st.TRAJECTORY_STEPS),
                jnp.asarray(traj["start"]["qpos"], jnp.float32),
                jnp.asarray(traj["start"]["qvel"], jnp.float32),
                jnp.asarray(traj["actions"], jnp.float32),
            )
        )
        entry["trajectory"] = {
            "start_obs": np.asarray(obs0).tolist(),
            "seconds": time.perf_counter() - start,
            **{k: np.asarray(v).tolist() for k, v in rec.items()},
        }
    return entry


# --------------------------------------------------------------------------- MuJoCo 4.0 itself (diagnosis)
# The velocity tasks' model files stepped by the main venv's MuJoCo (float64, mj_step, the model's
# own solver settings; the Humanoid's Newton as saferl's configure_model): separates what MuJoCo
# 2.3.3 -> 4.0 changes from what MJX changes.  ``margin_scale`` 0.5 halves every geom margin: MuJoCo
# 2.3.3 gives a contact the larger of its two geoms' margins, MuJoCo 4.0 and MJX their sum.


def mjx_margin_probe() -> dict:
    """suite_tasks.margin_probe's sphere and plane in MJX: the candidate contact's distance and margin."""
    import mujoco

    from saferl.envs.velocity.mjx_physics import import_mjx

    _, mjx = import_mjx("the margin probe")
    model = mjx.put_model(mujoco.MjModel.from_xml_string(st.MARGIN_PROBE_XML))
    data = jax.jit(mjx.forward)(model, mjx.make_data(model))
    contact = getattr(data, "_impl", data).contact
    return {"dist": np.asarray(contact.dist).tolist(), "includemargin": np.asarray(contact.includemargin).tolist()}


def native_model(env, margin_scale: float = 1.0):
    import mujoco

    from saferl.envs.velocity.gymnasium_models import gymnasium_asset, load_model

    model = load_model(mujoco, gymnasium_asset(env.asset))  # the file's margins (saferl's env halves them)
    env.configure_model(model)
    model.geom_margin[:] = model.geom_margin * margin_scale
    return model


def native_outcome(env, params):
    """jitted ``(qpos, qvel, xipos, ctrl, before) -> (position, reward, cost, terminated)`` with the
    task's own formulas (its body_position, cost_velocity, reward, terminated), and the position alone."""
    from types import SimpleNamespace

    def outcome(qpos, qvel, xipos, ctrl, before):
        position = env.body_position(SimpleNamespace(qpos=qpos, xipos=xipos))
        velocity = (position - before) / env.dt(params)
        reward = env.reward(velocity, ctrl, qpos, qvel, params)
        cost = (env.cost_velocity(velocity) > params.velocity_threshold).astype(jnp.float32)
        return position, reward, cost, env.terminated(qpos, qvel, params)

    def position_of(qpos, xipos):
        return env.body_position(SimpleNamespace(qpos=qpos, xipos=xipos))

    return jax.jit(outcome), jax.jit(position_of)


def native_step(model, data, ctrl, frame_skip):
    import mujoco

    data.ctrl[:] = ctrl
    for _ in range(frame_skip):
        mujoco.mj_step(model, data)


def native_start(model, qpos, qvel):
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    return data


def native_ctrl(model, action):
    low, high = model.actuator_ctrlrange.T
    return low + 0.5 * (np.clip(action, -1.0, 1.0) + 1.0) * (high - low)


def native_trajectory(env, params, model, traj) -> dict:
    data = native_start(model, traj["start"]["qpos"], traj["start"]["qvel"])
    qpos, qvel = [], []
    for action in traj["actions"]:
        native_step(model, data, native_ctrl(model, np.asarray(action, np.float64)), params.frame_skip)
        qpos.append(data.qpos.tolist())
        qvel.append(data.qvel.tolist())
    return {"qpos": qpos, "qvel": qvel}


def native_episodes(label, env, params, model, functions, count: int, seed: int = 0) -> dict:
    """Scripted-controller episodes; resets drawn by the task's law (qpos0 + U(-s, s), qvel
    s N(0, 1) or U(-s, s)) from ``np.random.default_rng(seed)``."""
    outcome, position_of = functions
    rng = np.random.default_rng(seed)
    s = float(params.reset_noise_scale)
    returns, costs, lengths = [], [], []
    start = time.perf_counter()
    for _ in range(count):
        qpos = model.qpos0 + rng.uniform(-s, s, model.nq)
        qvel = s * rng.standard_normal(model.nv) if env.velocity_noise == "normal" else rng.uniform(-s, s, model.nv)
        data = native_start(model, qpos, qvel)
        position = position_of(data.qpos, data.xipos)
        total_r = total_c = 0.0
        for t in range(int(params.max_steps)):
            ctrl = native_ctrl(model, st.VELOCITY_CONTROLLERS[label](np, t, data.qpos.copy(), data.qvel.copy()))
            native_step(model, data, ctrl, params.frame_skip)
            position, reward, cost, terminated = jax.device_get(
                outcome(data.qpos, data.qvel, data.xipos, ctrl, position)
            )
            total_r += float(reward)
            total_c += float(cost)
            if terminated:
                break
        returns.append(total_r)
        costs.append(total_c)
        lengths.append(t + 1)
    record = common.episode_record(returns, costs, lengths)
    record["seconds"] = time.perf_counter() - start
    return record


def native_runs(label, env, params, count, original) -> dict:
    out = {}
    functions = native_outcome(env, params)
    for tag, scale in (("mujoco", 1.0), ("mujoco_half_margin", 0.5)):
        model = native_model(env, scale)
        out[tag] = {
            "margin_scale": scale,
            "solver_iterations": int(model.opt.iterations),
            "scripted": native_episodes(label, env, params, model, functions, count),
        }
        if original is not None and "trajectory" in original:
            out[tag]["trajectory"] = native_trajectory(env, params, model, original["trajectory"])
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--original", type=Path, required=True, help="the JSON suite_original.py wrote")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--episodes-scale", type=float, default=1.0)
    parser.add_argument("--tasks", nargs="*", default=None, help="labels to run (default: all seven)")
    parser.add_argument("--skip-native", action="store_true", help="skip the MuJoCo 4.0 diagnosis runs")
    parser.add_argument(
        "--physics",
        choices=("planar", "mujoco", "mjx"),
        default=None,
        help="the physics of the tasks that have one (default: each task's own)",
    )
    parser.add_argument(
        "--merge",
        metavar="WHY",
        default=None,
        help="replace the --tasks in the existing --out file (its other tasks kept) and note WHY as a rerun",
    )
    parser.add_argument(
        "--alternate",
        action="store_true",
        help="with --merge: keep these runs beside the default ones, under alternate_physics (a task's other physics)",
    )
    args = parser.parse_args(argv)
    if args.alternate and (args.merge is None or args.physics is None):
        parser.error("--alternate needs --merge WHY and --physics")
    wall = time.perf_counter()
    original = json.loads(args.original.read_text())
    result = {
        "side": "saferl",
        "python": platform.python_version(),
        "backend": jax.default_backend(),
        "versions": {n: version(n) for n in ("jax", "mujoco", "mujoco-mjx", "gymnasium", "numpy")},
        "margin_probe": {**st.margin_probe(), "mjx": mjx_margin_probe()},
        "tasks": {},
    }
    for label, _, name, kwargs, count in st.TASKS:
        if args.tasks and label not in args.tasks:
            continue
        count = max(2, int(round(count * args.episodes_scale)))
        entry = run_task(label, name, kwargs, count, original["tasks"].get(label), physics=args.physics)
        for policy, rec in entry["policies"].items():
            print(
                f"{label:19s} {policy:8s} return {rec['return']['mean']:9.3f} +- {rec['return']['std']:8.3f}  "
                f"cost {rec['cost']['mean']:7.3f} +- {rec['cost']['std']:7.3f}  length {rec['length']['mean']:6.1f}"
                f"  ({rec['seconds']:.0f} s)",
                flush=True,
            )
        print(f"{label:19s} compile {entry['compile_seconds']:.0f} s", flush=True)
        if label in st.VELOCITY_TASKS and not args.skip_native:
            env = envs.make(name, **kwargs)
            entry["native"] = native_runs(label, env, env.default_params(), count, original["tasks"].get(label))
            for tag, run in entry["native"].items():
                rec = run["scripted"]
                print(
                    f"{label:19s} {tag:18s} scripted return {rec['return']['mean']:9.3f} +- {rec['return']['std']:8.3f}"
                    f"  cost {rec['cost']['mean']:7.3f}  length {rec['length']['mean']:6.1f}  ({rec['seconds']:.0f} s)",
                    flush=True,
                )
        result["tasks"][label] = entry
    if args.merge is None:
        common.write_side(result, args.out, wall)
        return
    common.merge_side(result, args.out, args.merge, wall, alternate=args.alternate)


if __name__ == "__main__":
    main()

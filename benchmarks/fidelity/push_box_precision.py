"""PointPush1's box path on MuJoCo: float32 state rounding against the model, over whole scripted episodes.

saferl's PointPush1 (``physics="mujoco"``) moves the scripted pusher's box less over an episode than Safety-Gymnasium
1.0.0 does (docs/results/fidelity/safety_gymnasium.md).  Two things differ between them besides MuJoCo's version:
saferl's model (:class:`saferl.envs.safety_nav.mujoco_physics.NavWorld`, one MJCF for every episode, the layout
written into the data) against the original's per-episode XML, and saferl's state living in float32 between env
steps (``saferl/envs/mujoco_host.py``: ``qpos``, ``qvel`` and ``qacc_warmstart`` rounded after every env step).
The trajectories are chaotic (a rounding decorrelates them within a few steps), so the two can only be told apart
over many whole episodes.  This benchmark runs them from the same starts, with the same goal draws:

* part ``A`` (benchmarks/fidelity/.venv: safety-gymnasium 1.0.0, mujoco 2.3.3): the original's reset of
  SafetyPointPush1-v0 for seeds ``0 .. N-1`` (the episode's XML, ``qpos``, ``qvel``, ``qacc_warmstart``, the goal,
  the hazards, the pillar, the robot's and the box's places and yaws), written to ``--resets`` (scratch);
* part ``B`` (the main .venv, MuJoCo 4.0.1 from Python): from each reset, one 1000-step episode of
  ``suite_tasks.point_push_controller`` in four arms, {the original's episode XML, saferl's NavWorld model} x
  {float64, the state rounded to float32 after every env step as saferl does}, written to ``--episodes-file`` (scratch);
* part ``C`` (the main .venv): saferl's own PointPush1 env (``physics="mujoco"``, ``envs.make("PointPush1")``) from
  the same layouts (``PointPush.state_at``), the same controller in ``jax.numpy``, vmapped in one compiled scan;
* part ``D`` (the main .venv): saferl's env as it is, from its own resets with its own goal draws (the fidelity
  suite's saferl side), unpaired with the others: whether its layouts and goals, not its physics, move the box less;
* ``report``: the table, the paired differences and the verdicts, to ``--out`` (JSON) and ``--markdown``.

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/push_box_precision.py --parts A --episodes 1000
    JAX_PLATFORMS=cpu .venv/bin/python benchmarks/fidelity/push_box_precision.py --parts B C D report --episodes 1000

An env step (Safety-Gymnasium 1.0.0 ``bases/underlying.py``, ``Underlying.simulation_forward``): ``ctrl`` set to the
action, ``frameskip_binom_n`` = 10 ``mj_step``s (``frameskip_binom_p`` = 1), then ``mj_forward``; the float32 arms
then round ``qpos``, ``qvel`` and ``qacc_warmstart`` and call ``mj_forward`` again (so that what the controller reads
is the rounded state).  The robot's and the box's places are their bodies' ``xpos`` (the original's
``task.agent.pos``, ``task.push_box.pos``), the heading the angle of the agent body's x axis.

Goals (``builder.py``, ``Builder.step``; ``tasks/safe_navigation/push/push_level0.py``): the goal is met when the
3-D distance of the box body to the goal body (at z 0.16) is at most 0.3; the layout is then updated to the bodies'
places and a new goal drawn by ``BaseTask.build_goal_position`` (``bases/base_task.py``): uniform points of the
extents shrunk by the goal's keep-out (``utils/random_generator.py``, ``draw_placement``: [-1.1, 1.1]^2), the first
one at least ``keepout_other + 0.4`` from every other object (agent 0.4, ``bases/base_agent.py``; hazards 0.4,
``assets/geoms/hazards.py``; pillar 0.3, ``assets/geoms/pillars.py``; box 0.2, ``assets/free_geoms/push_box.py``;
placement margin 0).  Here the draws are fixed per episode, so that every arm sees the same ones: resample ``j`` of
episode ``i`` takes row ``j`` (modulo :data:`GOAL_ROWS`) of a ``(GOAL_ROWS, GOAL_TRIES, 2)`` table drawn from
``numpy.random.default_rng((GOAL_SEED, i))``, the first valid candidate of the row (with none, the one farthest
inside its keep-outs; Safety-Gymnasium would try up to 10,000 and end the episode on failure).  The reset goal is
the original's.  In part C the env draws its own goal on success and this benchmark overwrites it with the table's.

Statistics: arms that share the resets are compared per episode (the paired difference of box paths, and the ratio
of the means, each with a 95% percentile bootstrap interval over episodes, 10,000 resamples); "equal" is judged by
the fidelity suite's rule (``saferl.analysis.equivalence.equivalence_verdict`` at ``compare.MARGIN`` = 10% and
``compare.LEVEL`` = 0.90, two-sample, as ``compare.py`` applies it).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import suite_tasks as st  # noqa: E402

ENV_ID = "SafetyPointPush1-v0"
STEPS = 1000  # the episode's time limit (Safety-Gymnasium's and saferl's max_steps)
FRAME_SKIP = 10  # bases/underlying.py: frameskip_binom_n
GOAL_RADIUS = 0.3  # assets/geoms/goal.py: size
GOAL_Z = 0.16  # assets/geoms/goal.py: the goal body at z = size / 2 + 0.01
GOAL_KEEPOUT = 0.4  # assets/geoms/goal.py
#: the other objects' keep-outs (Safety-Gymnasium 1.0.0, see the module docstring)
AGENT_KEEPOUT, HAZARD_KEEPOUT, PILLAR_KEEPOUT, BOX_KEEPOUT = 0.4, 0.4, 0.3, 0.2
GOAL_HALF_EXTENT = 1.5 - GOAL_KEEPOUT  # push_level1.py: extents [-1.5, -1.5, 1.5, 1.5], shrunk by the keep-out
GOAL_SEED = 20240  # the goal tables' generator entropy (with the episode index)
GOAL_ROWS, GOAL_TRIES = 64, 256
ARMS_B = ("original_f64", "original_f32", "saferl_model_f64", "saferl_model_f32")
ARM_C = "saferl_env"
ARM_D = "saferl_env_own"  # part D: saferl's env from its own resets, drawing its own goals (unpaired)
ARM_LABELS = {
    "original_f64": "original XML, float64",
    "original_f32": "original XML, float32-rounded",
    "saferl_model_f64": "saferl's model, float64",
    "saferl_model_f32": "saferl's model, float32-rounded",
    ARM_C: "saferl's env (physics mujoco)",
    ARM_D: "saferl's env, its own resets and goal draws",
}
#: (name, arm, against it, what the pair tells)
PAIRS = (
    ("rounding on the original's XML", "original_f32", "original_f64", "precision"),
    ("rounding on saferl's model", "saferl_model_f32", "saferl_model_f64", "precision"),
    ("saferl's model vs the XML, float64", "saferl_model_f64", "original_f64", "model"),
    ("saferl's model vs the XML, float32", "saferl_model_f32", "original_f32", "model"),
    ("both (saferl's model, float32) vs the original", "saferl_model_f32", "original_f64", "both"),
    ("saferl's env vs pure MuJoCo on its model, float32", ARM_C, "saferl_model_f32", "env"),
    ("saferl's env vs the original's XML, float64", ARM_C, "original_f64", "both"),
    ("saferl's env: its own resets and goals vs the original's (unpaired)", ARM_D, ARM_C, "sampling"),
    ("saferl's env, its own resets and goals, vs the original's XML, float64 (unpaired)", ARM_D, "original_f64", "all"),
)
BOOT_REPS = 10_000


# --------------------------------------------------------------------------- goals


def goal_table(episode: int) -> np.ndarray:
    """The ``(GOAL_ROWS, GOAL_TRIES, 2)`` candidate goals of one episode (every arm draws the same)."""
    rng = np.random.default_rng((GOAL_SEED, episode))
    return rng.uniform(-GOAL_HALF_EXTENT, GOAL_HALF_EXTENT, (GOAL_ROWS, GOAL_TRIES, 2))


def pick_goal(xp, candidates, agent, hazards, pillars, box):
    """The first of ``candidates`` (``(n, 2)``) clear of every object's keep-out plus the goal's, else the one
    farthest inside them (``sample_goal_position``'s test: ``dist < keepout_other + margin + keepout`` rejects)."""
    objects = xp.concatenate([agent[None, :2], hazards[:, :2], pillars[:, :2], box[None, :2]])
    keep = np.concatenate(
        [[AGENT_KEEPOUT], [HAZARD_KEEPOUT] * hazards.shape[0], [PILLAR_KEEPOUT] * pillars.shape[0], [BOX_KEEPOUT]]
    )
    dist = xp.sqrt(xp.sum((candidates[:, None, :] - objects[None, :, :]) ** 2, axis=-1))
    slack = xp.min(dist - (keep + GOAL_KEEPOUT)[None, :], axis=1)
    valid = slack >= 0.0
    index = xp.where(xp.any(valid), xp.argmax(valid), xp.argmax(slack))
    return candidates[index]


#: the original's skybox: six HD images, decoded on every compile (most of a reset's second); drawn, never simulated
SKYBOX = re.compile(r"<texture[^>]*skybox[^>]*>(</texture>)?")
#: MuJoCo 4 rejects the <size> element's memory attributes of MuJoCo 2.3 (njmax, nconmax)
SIZE = re.compile(r"<size[^>]*>(</size>)?")


def physics_xml(xml: str) -> str:
    """The original's episode XML without its skybox (which only rendering reads)."""
    return SKYBOX.sub("", xml)


def yaw_of(xmat) -> float:
    """World angle of a body's x axis from its row-major rotation matrix."""
    return float(np.arctan2(xmat[3], xmat[0]))


# --------------------------------------------------------------------------- part A: the original's resets


def dump_resets(count: int, path: Path) -> dict:
    """The original's reset of seeds ``0 .. count - 1`` (runs in the fidelity venv)."""
    import warnings

    warnings.filterwarnings("ignore")
    import mujoco
    import safety_gymnasium
    import safety_gymnasium.world

    class _Compiler:
        """``world.py``'s ``mujoco`` with the episode XML compiled without its skybox (:func:`physics_xml`)."""

        class MjModel:
            from_xml_string = staticmethod(lambda xml: mujoco.MjModel.from_xml_string(physics_xml(xml)))

        def __getattr__(self, name):
            return getattr(mujoco, name)

    safety_gymnasium.world.mujoco = _Compiler()
    env = safety_gymnasium.make(ENV_ID)
    task = env.unwrapped.task
    resets = []
    start = time.perf_counter()
    for seed in range(count):
        env.reset(seed=seed)
        if (seed + 1) % 100 == 0:
            print(f"part A: {seed + 1} resets, {time.perf_counter() - start:.0f} s", flush=True)
        data = task.data
        hazards = [data.body(f"hazard{i}").xpos[:2].tolist() for i in range(2)]
        resets.append(
            {
                "seed": seed,
                "xml": task.world.xml_string,
                "qpos": data.qpos.tolist(),
                "qvel": data.qvel.tolist(),
                "qacc_warmstart": data.qacc_warmstart.tolist(),
                "goal": task.goal.pos[:2].tolist(),
                "hazards": hazards,
                "pillars": [data.body("pillar0").xpos[:2].tolist()],
                "agent": data.body("agent").xpos[:2].tolist(),
                "heading": yaw_of(data.body("agent").xmat),
                "box": data.body("push_box").xpos.tolist(),
                "box_yaw": yaw_of(data.body("push_box").xmat),
            }
        )
    from importlib.metadata import version

    meta = {n: version(n) for n in ("safety-gymnasium", "gymnasium", "mujoco", "numpy")}
    out = {"env_id": ENV_ID, "versions": meta, "python": platform.python_version(), "mujoco": mujoco.__version__}
    out.update(seconds=time.perf_counter() - start, resets=resets)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    print(f"part A: {count} resets of {ENV_ID} in {out['seconds']:.0f} s -> {path}", flush=True)
    return out


# --------------------------------------------------------------------------- part B: pure MuJoCo


class Episode:
    """One arm's MuJoCo model and data at the original's reset state."""

    def __init__(self, reset: dict, model: str, world=None):
        import mujoco

        self.mujoco = mujoco
        original = mujoco.MjModel.from_xml_string(SIZE.sub("", physics_xml(reset["xml"])))
        if model == "original":
            self.m = original
            self.d = mujoco.MjData(self.m)
            self.d.qpos[:] = reset["qpos"]
            self.d.qvel[:] = reset["qvel"]
            self.d.qacc_warmstart[:] = reset["qacc_warmstart"]
        else:
            self.m = world.model
            self.d = mujoco.MjData(self.m)
            self._from_original(reset, original, world)
        mujoco.mj_forward(self.m, self.d)

    def _from_original(self, reset: dict, original, world) -> None:
        """The original's reset state in saferl's model: its Point's slides run along the robot body's own initial
        axes (the body carries the reset yaw), saferl's along the world's (the yaw in the hinge)."""
        mujoco = self.mujoco
        data = mujoco.MjData(original)
        data.qpos[:] = reset["qpos"]
        mujoco.mj_forward(original, data)
        slides = np.array([data.xaxis[original.joint(name).id][:2] for name in ("x", "y")]).T  # world from slide
        x, y, yaw = world.planar_qpos
        vx, vy, wz = world.planar_qvel
        box = world.addresses.free_bodies["push_box"]
        obox = original.joint(original.body("push_box").jntadr[0])
        qpos = np.asarray(world.model.qpos0, np.float64).copy()
        qpos[[x, y, yaw]] = [*reset["agent"], reset["heading"]]
        qpos[box.qpos : box.qpos + 7] = reset["qpos"][obox.qposadr[0] : obox.qposadr[0] + 7]
        for field, name in ((self.d.qvel, "qvel"), (self.d.qacc_warmstart, "qacc_warmstart")):
            source = np.asarray(reset[name], np.float64)
            field[[vx, vy]] = slides @ source[[original.joint("x").dofadr[0], original.joint("y").dofadr[0]]]
            field[wz] = source[original.joint("z").dofadr[0]]
            field[box.qvel : box.qvel + 6] = source[obox.dofadr[0] : obox.dofadr[0] + 6]
        self.d.qpos[:] = qpos
        pillar = reset["pillars"][0]
        self.d.mocap_pos[world.addresses.mocap_bodies["pillar0"]] = [pillar[0], pillar[1], 0.5]

    def read(self):
        body = self.d.body
        agent = body("agent")
        return agent.xpos[:2].copy(), yaw_of(agent.xmat), body("push_box").xpos.copy()

    def step(self, action, float32: bool) -> None:
        mujoco, m, d = self.mujoco, self.m, self.d
        d.ctrl[:] = action
        for _ in range(FRAME_SKIP):
            mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)
        if float32:
            for field in (d.qpos, d.qvel, d.qacc_warmstart):
                field[:] = field.astype(np.float32)
            mujoco.mj_forward(m, d)


def run_episode(sim: Episode, reset: dict, table: np.ndarray, float32: bool) -> dict:
    """A scripted episode: the box's path (the sum of its per-step planar displacements) and the goals met."""
    goal = np.asarray(reset["goal"], np.float64)
    hazards, pillars = np.asarray(reset["hazards"]), np.asarray(reset["pillars"])
    path, goals = 0.0, 0
    pos, heading, box = sim.read()
    for _ in range(STEPS):
        action = np.clip(np.asarray(st.point_push_controller(np, pos, heading, box[:2], goal), np.float64), -1, 1)
        sim.step(action, float32)
        pos, heading, box_after = sim.read()
        path += float(np.linalg.norm(box_after[:2] - box[:2]))
        box = box_after
        if np.linalg.norm(box - np.r_[goal, GOAL_Z]) <= GOAL_RADIUS:
            goal = pick_goal(np, table[goals % GOAL_ROWS], pos, hazards, pillars, box)
            goals += 1
    return {"box_path": path, "goals": goals}


_WORLD = None


def _arm_episodes(args):
    """Part B's four arms from one reset (a worker's job)."""
    global _WORLD
    reset, index = args
    if _WORLD is None:
        from saferl.envs.safety_nav import mujoco_physics

        _WORLD = mujoco_physics.NavWorld("point", {"pillars": 1, "push_box": 1}, task="PointPush1")
    table = goal_table(index)
    out = {}
    for arm in ARMS_B:
        model, precision = arm.rsplit("_", 1)
        sim = Episode(reset, "original" if model == "original" else "saferl", _WORLD)
        out[arm] = run_episode(sim, reset, table, precision == "f32")
    return out


def part_b(resets: list, workers: int, checkpoint=None) -> dict:
    """The four arms from every reset; with ``checkpoint(partial)``, the episodes so far every 50 resets."""
    import mujoco

    start = time.perf_counter()
    jobs = [(r, i) for i, r in enumerate(resets)]

    def result(rows):
        arms = {arm: {key: [row[arm][key] for row in rows] for key in ("box_path", "goals")} for arm in ARMS_B}
        seconds = time.perf_counter() - start
        return {"mujoco": mujoco.__version__, "workers": workers, "seconds": seconds, "arms": arms}

    rows = []
    if workers > 1:
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(workers)
        done = pool.imap(_arm_episodes, jobs, chunksize=2)
    else:
        pool, done = None, map(_arm_episodes, jobs)
    for row in done:
        rows.append(row)
        if len(rows) % 50 == 0:
            print(f"part B: {len(rows)} resets, {time.perf_counter() - start:.0f} s", flush=True)
            if checkpoint is not None:
                checkpoint(result(rows))
    if pool is not None:
        pool.close()
    out = result(rows)
    print(f"part B: {len(resets)} resets x {len(ARMS_B)} arms in {out['seconds']:.0f} s", flush=True)
    return out


# --------------------------------------------------------------------------- part C: saferl's env


def part_c(resets: list, batch: int, own: bool = False) -> dict:
    """saferl's PointPush1 (physics mujoco) from the resets' layouts, the table's goals; one compiled scan.  ``own``
    (part D): from its own resets (``env.reset``, keys ``fold_in(PRNGKey(GOAL_SEED), i)``), its own goal draws."""
    import jax
    import jax.numpy as jnp

    from saferl.envs import base as envs

    env = envs.make("PointPush1")
    params = env.default_params()
    assert params.physics == "mujoco", params.physics

    def episode_start(key, layout):
        pos, heading, goal, hazards, pillars, box, box_yaw = layout
        return env.state_at(key, pos, heading, goal, hazards, pillars, box, box_yaw, params)

    def run(keys, layouts, tables):
        if own:
            states = jax.vmap(lambda k: env.reset(k, params)[0])(keys)
        else:
            states = jax.vmap(episode_start)(keys, layouts)

        def body(carry, _):
            states, path, goals = carry
            action = jax.vmap(lambda s: st.point_push_controller(jnp, s.pos, s.heading, s.box_pos, s.goal))(states)
            new, _, _, _, _, _, info = jax.vmap(env.step, in_axes=(0, 0, None))(states, action, params)
            met = info["goal_reached"] > 0
            rows = jnp.take_along_axis(tables, (goals % GOAL_ROWS)[:, None, None, None], axis=1)[:, 0]
            drawn = jax.vmap(lambda c, s: pick_goal(jnp, c, s.pos, s.hazards, s.pillars, s.box_pos))(rows, new)
            if not own:
                new = new.replace(goal=jnp.where(met[:, None], drawn, new.goal))
            path = path + jnp.linalg.norm(new.box_pos - states.box_pos, axis=-1)
            return (new, path, goals + met.astype(jnp.int32)), None

        n = keys.shape[0]
        init = (states, jnp.zeros((n,), jnp.float32), jnp.zeros((n,), jnp.int32))
        (_, path, goals), _ = jax.lax.scan(body, init, None, length=STEPS)
        return path, goals

    def layouts_of(chunk):
        f32 = lambda key: jnp.asarray(np.array([r[key] for r in chunk]), jnp.float32)  # noqa: E731
        box = jnp.asarray(np.array([r["box"][:2] for r in chunk]), jnp.float32)
        heading, box_yaw = jnp.mod(f32("heading"), 2 * math.pi), jnp.mod(f32("box_yaw"), 2 * math.pi)
        return f32("agent"), heading, f32("goal"), f32("hazards"), f32("pillars"), box, box_yaw

    compiled = jax.jit(run)
    start = time.perf_counter()
    paths, goals = [], []
    for lo in range(0, len(resets), batch):
        chunk = resets[lo : lo + batch]
        keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.PRNGKey(GOAL_SEED), i))(jnp.arange(lo, lo + len(chunk)))
        tables = jnp.asarray(np.stack([goal_table(lo + k) for k in range(len(chunk))]), jnp.float32)
        p, g = compiled(keys, layouts_of(chunk), tables)
        paths += np.asarray(p, np.float64).tolist()
        goals += np.asarray(g).tolist()
        print(f"part {'D' if own else 'C'}: {lo + len(chunk)} resets, {time.perf_counter() - start:.0f} s", flush=True)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "batch": batch, "arms": {ARM_D if own else ARM_C: {"box_path": paths, "goals": goals}}}


# --------------------------------------------------------------------------- report


def paired(x, y, seed: int = 0) -> dict:
    """Per-episode ``x - y`` and ``mean(x) / mean(y)`` with 95% percentile bootstrap intervals over episodes."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, (BOOT_REPS, x.size))
    diffs = (x - y)[idx].mean(axis=1)
    ratios = x[idx].mean(axis=1) / y[idx].mean(axis=1)
    return {
        "difference": float((x - y).mean()),
        "difference_ci95": np.percentile(diffs, [2.5, 97.5]).tolist(),
        "ratio": float(x.mean() / y.mean()),
        "ratio_ci95": np.percentile(ratios, [2.5, 97.5]).tolist(),
        "ratio_ci90": np.percentile(ratios, [5, 95]).tolist(),
        "correlation": float(np.corrcoef(x, y)[0, 1]),
    }


def unpaired(x, y, seed: int = 0) -> dict:
    """:func:`paired`'s numbers for arms that share no resets: each side resampled on its own."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    rng = np.random.default_rng(seed)
    mx = x[rng.integers(0, x.size, (BOOT_REPS, x.size))].mean(axis=1)
    my = y[rng.integers(0, y.size, (BOOT_REPS, y.size))].mean(axis=1)
    return {
        "difference": float(x.mean() - y.mean()),
        "difference_ci95": np.percentile(mx - my, [2.5, 97.5]).tolist(),
        "ratio": float(x.mean() / y.mean()),
        "ratio_ci95": np.percentile(mx / my, [2.5, 97.5]).tolist(),
        "ratio_ci90": np.percentile(mx / my, [5, 95]).tolist(),
        "correlation": None,
    }


def summary(values) -> dict:
    v = np.asarray(values, np.float64)
    return {"mean": float(v.mean()), "se": float(v.std(ddof=1) / math.sqrt(v.size)), "sd": float(v.std(ddof=1))}


#: the fidelity suite's PointPush1 scripted runs (docs/results/fidelity): file, label, whether it shares this run's
#: resets (the original's seeds 0 .. 299) or draws its own (saferl's side)
SUITE_RUNS = (
    ("suite_original.json", "the original (Safety-Gymnasium 1.0.0, MuJoCo 2.3.3)", "original_f64"),
    ("suite_original_mujoco4.json", "the original on MuJoCo 4.0.1", "original_f64"),
    ("suite_saferl.json", "saferl (its own resets)", ARM_D),
)


def suite_check(arms: dict) -> list:
    """The suite's 300-episode box paths against this run's arms: the suite's original from seeds 0 .. 299 paired
    with this run's original XML in float64 on those seeds, saferl's against this run's saferl env from its own
    resets (unpaired)."""
    rows = []
    for name, label, arm in SUITE_RUNS:
        path = ROOT / "docs/results/fidelity" / name
        if not path.exists() or arm not in arms:
            continue
        values = json.loads(path.read_text())["tasks"]["PointPush1"]["policies"]["scripted"]["extras"]
        x = values[st.EXTRAS["PointPush1"][1][0]]["values"]
        if arm == ARM_D:
            stats = unpaired(x, arms[arm]["box_path"])
        else:  # seeds 0 .. m - 1 of both
            m = min(len(x), len(arms[arm]["box_path"]))
            x, stats = x[:m], paired(x[:m], arms[arm]["box_path"][:m])
        rows.append({"run": name, "label": label, "against": arm, "n": len(x), **summary(x), **stats})
    return rows


def report(episodes: dict, out: Path, markdown: Path, command: str, note: str = "") -> dict:
    from compare import LEVEL, MARGIN

    from saferl.analysis.equivalence import equivalence_verdict

    arms = episodes["arms"]
    n = min(len(a["box_path"]) for a in arms.values())
    table = {
        arm: {key: summary(arms[arm][key][:n]) for key in ("box_path", "goals")} for arm in ARM_LABELS if arm in arms
    }
    pairs = []
    for name, a, b, kind in PAIRS:
        if a not in arms or b not in arms:
            continue
        row = {"name": name, "arm": a, "against": b, "kind": kind}
        for key in ("box_path", "goals"):
            x, y = arms[a][key][:n], arms[b][key][:n]
            v = equivalence_verdict(x, y, margin=MARGIN, level=LEVEL)
            keep = ("verdict", "scale", "ratio", "lower", "upper", "episodes_needed")
            both = unpaired(x, y) if kind in ("sampling", "all") else paired(x, y)
            row[key] = dict(both, equivalence={k: v[k] for k in keep})
        pairs.append(row)
    result = {
        "task": "PointPush1",
        "controller": "suite_tasks.point_push_controller",
        "episodes": n,
        "steps": STEPS,
        "command": command,
        "note": note,
        "original": episodes.get("original", {}),
        "timing_s": episodes.get("timing_s", {}),
        "mujoco": episodes.get("mujoco"),
        "part_B_workers": episodes.get("part_B_workers"),
        "python": platform.python_version(),
        "rule": {"margin": MARGIN, "level": LEVEL, "bootstrap_reps": BOOT_REPS},
        "arms": table,
        "pairs": pairs,
        "blocks_of_300": {
            arm: [summary(arms[arm]["box_path"][lo : lo + 300]) for lo in range(0, n - 299, 300)] for arm in table
        },
        "suite": suite_check({arm: {k: v[:n] for k, v in arms[arm].items()} for arm in arms}),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    markdown.write_text(render(result))
    print(render(result), flush=True)
    return result


def _pct(r: float) -> str:
    return f"{100 * (r - 1):+.1f}%"


def render(r: dict) -> str:
    t = r["timing_s"]
    lines = [
        "# PointPush1's box path: float32 rounding against the model",
        "",
        "Written by `benchmarks/fidelity/push_box_precision.py` (its docstring says what each arm steps and how the "
        "goals are drawn), as `make -C benchmarks/fidelity push-box` runs it:",
        "",
        f"    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/push_box_precision.py --parts A --episodes "
        f"{r['episodes']}",
        f"    JAX_PLATFORMS=cpu .venv/bin/python benchmarks/fidelity/push_box_precision.py --parts B C D report "
        f"--episodes {r['episodes']} --workers {r['part_B_workers']}",
        "",
        *([r["note"], ""] if r.get("note") else []),
        f"{r['episodes']} scripted episodes (`suite_tasks.point_push_controller`, {r['steps']} steps each) per arm, "
        f"from the resets of {ENV_ID} for seeds 0..{r['episodes'] - 1} (Safety-Gymnasium "
        f"{r['original'].get('safety-gymnasium', '?')}, MuJoCo {r['original'].get('mujoco', '?')}); the arms step "
        f"MuJoCo {r['mujoco']} from Python (part B) and saferl's env (part C); part D is saferl's env from its own "
        "resets with its own goal draws. The arms of parts B and C share each episode's reset and goal draws, so "
        "their differences are paired; part D's are not. Wall time: "
        + ", ".join(f"{k.replace('_', ' ')} {v:.0f} s" for k, v in t.items())
        + ".",
        "",
        "## Arms",
        "",
        "| arm | box path (m), mean ± SE | sd | goals reached, mean ± SE |",
        "|---|---|---|---|",
    ]
    for arm, row in r["arms"].items():
        b, g = row["box_path"], row["goals"]
        lines.append(
            f"| {ARM_LABELS[arm]} | {b['mean']:.3f} ± {b['se']:.3f} | {b['sd']:.2f} | {g['mean']:.3f} ± {g['se']:.3f} |"
        )
    lines += [
        "",
        "## Paired differences",
        "",
        "Per episode, the arm minus the one it is held against; the ratio of means with its 95% percentile "
        f"bootstrap interval ({r['rule']['bootstrap_reps']:,} resamples of the episodes). Verdict: the fidelity "
        f"suite's rule (`equivalence_verdict`, two-sample 90% BCa interval of the ratio against "
        f"[1/{1 + r['rule']['margin']:g}, {1 + r['rule']['margin']:g}]).",
        "",
        "| comparison | box path: difference (m) [95%] | ratio [95%] | verdict | goals: difference [95%] | ratio "
        "[95%] | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in r["pairs"]:
        cells = []
        for key in ("box_path", "goals"):
            q = p[key]
            lo, hi = q["difference_ci95"]
            rlo, rhi = q["ratio_ci95"]
            cells += [
                f"{q['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                f"{q['ratio']:.3f} [{rlo:.3f}, {rhi:.3f}]",
                q["equivalence"]["verdict"],
            ]
        lines.append(f"| {p['name']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## The suite's 300 episodes",
        "",
        "The fidelity suite's PointPush1 runs (300 scripted episodes a side, safety_gymnasium.md) against this run: "
        "the originals' from the same resets (seeds 0..299; their goal draws and, for MuJoCo 2.3.3, engine differ, "
        "so the pairing is by layout only), saferl's against its own resets here (unpaired). Then each arm's box "
        "path in blocks of 300 episodes (seeds 0..299, 300..599, ...): how far a 300-episode mean moves with the "
        "layouts alone.",
        "",
        "| suite run | n | box path (m), mean ± SE | held against | ratio [95%] |",
        "|---|---|---|---|---|",
    ]
    for q in r["suite"]:
        lo, hi = q["ratio_ci95"]
        lines.append(
            f"| {q['label']} | {q['n']} | {q['mean']:.3f} ± {q['se']:.3f} | {ARM_LABELS[q['against']]}"
            f"{' (seeds 0..' + str(q['n'] - 1) + ')' if q['against'] != ARM_D else ''} | {q['ratio']:.3f} "
            f"[{lo:.3f}, {hi:.3f}] |"
        )
    lines += [
        "",
        "| arm | "
        + " | ".join(
            f"episodes {300 * k}..{300 * k + 299}" for k in range(len(next(iter(r["blocks_of_300"].values()))))
        )
        + " |",
    ]
    lines += ["|---|" + "---|" * len(next(iter(r["blocks_of_300"].values())))]
    for arm, blocks in r["blocks_of_300"].items():
        lines.append(f"| {ARM_LABELS[arm]} | " + " | ".join(f"{b['mean']:.2f} ± {b['se']:.2f}" for b in blocks) + " |")
    lines += (
        ["", "## Verdicts", ""]
        + [f"* {v}" for v in verdicts(r)]
        + ["", "## Reading", "", conclusion(r), "", suite_reading(r), ""]
    )
    return "\n".join(lines)


def effect(q: dict) -> str:
    """``shorter``, ``longer`` or ``unchanged`` (the 95% interval of the ratio of means holds 1)."""
    lo, hi = q["ratio_ci95"]
    return "shorter" if hi < 1 else "longer" if lo > 1 else "unchanged"


def conclusion(r: dict) -> str:
    """Which of the two, rounding or the model, moves the box path, from the pairs' 95% intervals."""
    by_kind = {}
    for p in r["pairs"]:
        by_kind.setdefault(p["kind"], []).append(effect(p["box_path"]))
    precision = set(by_kind.get("precision", []))
    model = set(by_kind.get("model", []))
    if precision == {"shorter"} and model == {"unchanged"}:
        text = (
            "Float32 rounding, not the model, shortens the box path: it does so on both models, while the two models "
        )
        text += "at equal precision are not told apart."
    elif model == {"shorter"} and precision == {"unchanged"}:
        text = "The model, not float32 rounding, shortens the box path: saferl's model does so at both precisions, "
        text += "while rounding on either model is not told apart from no change."
    elif "shorter" in precision and "shorter" in model:
        text = "Both float32 rounding and the model shorten the box path."
    elif precision == {"unchanged"} and model == {"unchanged"}:
        text = (
            "Neither float32 rounding nor the model is told apart from no change in the box path at this many episodes."
        )
    elif "shorter" in precision and model == {"unchanged"}:
        text = "Float32 rounding shortens the box path by a few percent (its 95% interval excludes no change on one "
        text += "model, not on the other); the model at equal precision is not told apart from no change."
    else:
        text = f"Mixed: rounding's pairs read {sorted(precision)}, the model's {sorted(model)}."
    if all(p[k]["equivalence"]["verdict"] == "equivalent" for p in r["pairs"] for k in ("box_path", "goals")):
        text += " Every pair's box path and goals are equivalent by the suite's 10% rule."
    for p in r["pairs"]:
        if p["kind"] == "env":
            q = p["box_path"]
            lo, hi = q["ratio_ci95"]
            text += (
                f" saferl's env against pure MuJoCo on its model with float32 rounding: box path ratio "
                f"{q['ratio']:.3f} "
                f"[{lo:.3f}, {hi:.3f}], {q['equivalence']['verdict']} by the suite's rule (goals reached: "
                f"{p['goals']['equivalence']['verdict']})."
            )
        if p["kind"] in ("sampling", "all"):
            q = p["box_path"]
            lo, hi = q["ratio_ci95"]
            text += (
                f" {p['name'][0].upper()}{p['name'][1:]}: box path ratio {q['ratio']:.3f} [{lo:.3f}, {hi:.3f}], "
                f"{q['equivalence']['verdict']} by the suite's rule."
            )
    return text


def verdicts(r: dict) -> list:
    """The pairs' findings in words (box path; goals where the verdict differs)."""
    words = []
    for p in r["pairs"]:
        q = p["box_path"]
        lo, hi = q["ratio_ci95"]
        v = q["equivalence"]["verdict"]
        change = "shortens" if q["ratio"] < 1 else "lengthens"
        sure = "" if (lo > 1 or hi < 1) else " (the interval holds no change)"
        words.append(
            f"{p['name']}: the box path {change} by {_pct(q['ratio'])[1:]} [{_pct(lo)}, {_pct(hi)}]{sure}; by the "
            f"suite's rule {v}; goals reached ratio {p['goals']['ratio']:.3f}, {p['goals']['equivalence']['verdict']}."
        )
    return words


def suite_reading(r: dict) -> str:
    """The suite's gap against this run's numbers."""
    suite = {q["run"]: q for q in r["suite"]}
    if "suite_original.json" not in suite or "suite_saferl.json" not in suite or r["episodes"] < 300:
        return ""
    o, s = suite["suite_original.json"], suite["suite_saferl.json"]
    first = r["blocks_of_300"]["original_f64"][0]["mean"]
    whole = r["arms"]["original_f64"]["box_path"]["mean"]
    own = r["arms"][ARM_D]["box_path"]["mean"]
    return (
        f"The suite's gap ({s['mean']:.2f} against {o['mean']:.2f} m, {_pct(s['mean'] / o['mean'])}) is not "
        f"reproduced at {r['episodes']} episodes: the original's seeds 0..299 move the box {first:.2f} m in this run's "
        f"original arm against {whole:.2f} m over all {r['episodes']} resets, and saferl's env from its own resets "
        f"moves it {own:.2f} m here against the suite's {s['mean']:.2f}; the suite's two sides each lie within "
        "their 300-episode noise of this run's (the table above), in opposite directions."
    )


# --------------------------------------------------------------------------- main


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", default=["B", "C", "D", "report"], choices=("A", "B", "C", "D", "report"))
    parser.add_argument("--episodes", type=int, default=1000, help="resets (seeds 0 .. N-1) and episodes per arm")
    parser.add_argument("--resets", type=Path, default=ROOT / "runs/push_box_precision/resets.json")
    parser.add_argument("--episodes-file", type=Path, default=ROOT / "runs/push_box_precision/episodes.json")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/fidelity/push_box_precision.json")
    parser.add_argument("--markdown", type=Path, default=None, help="default: --out with .md")
    parser.add_argument(
        "--merge", type=Path, nargs="*", default=(), help="episodes files of other runs (other parts) to report with"
    )
    parser.add_argument("--note", default="", help="a paragraph for the write-up (how this run departed from make)")
    parser.add_argument("--workers", type=int, default=1, help="processes for part B")
    parser.add_argument("--batch", type=int, default=100, help="episodes per compiled call in part C")
    args = parser.parse_args(argv)
    if "A" in args.parts:
        dump_resets(args.episodes, args.resets)
    if not set(args.parts) & {"B", "C", "D", "report"}:
        return
    stored = json.loads(args.resets.read_text())
    resets = stored["resets"][: args.episodes]
    episodes = json.loads(args.episodes_file.read_text()) if args.episodes_file.exists() else {"arms": {}}
    episodes["original"] = dict(stored["versions"], episodes=len(resets))
    timing = episodes.setdefault("timing_s", {})

    def keep_b(b):
        episodes["arms"].update(b["arms"])
        timing.update(part_B=b["seconds"])
        episodes.update(mujoco=b["mujoco"], part_B_workers=b["workers"])
        args.episodes_file.parent.mkdir(parents=True, exist_ok=True)
        args.episodes_file.write_text(json.dumps(episodes))

    if "B" in args.parts:
        keep_b(part_b(resets, args.workers, keep_b))
    if "D" in args.parts:
        d = part_c(resets, args.batch, own=True)
        episodes["arms"].update(d["arms"])
        timing.update(part_D=d["seconds"])
    if "C" in args.parts:
        import mujoco

        c = part_c(resets, args.batch)
        episodes["arms"].update(c["arms"])
        episodes.setdefault("mujoco", mujoco.__version__)
        timing.update(part_C=c["seconds"])
    if {"B", "C", "D"} & set(args.parts):
        args.episodes_file.parent.mkdir(parents=True, exist_ok=True)
        args.episodes_file.write_text(json.dumps(episodes))
    for path in args.merge:
        other = json.loads(path.read_text())
        episodes["arms"].update(other["arms"])
        timing.update(other.get("timing_s", {}))
        for key in ("mujoco", "part_B_workers"):
            episodes.setdefault(key, other.get(key) or other.get("timing_s", {}).get(key))
    for key in ("mujoco", "part_B_workers"):  # older runs kept them among the timings
        if key in timing:
            episodes.setdefault(key, timing.pop(key))
    if "report" in args.parts:
        given = list(argv or sys.argv[1:])
        if "--note" in given:  # the note is written out on its own
            del given[given.index("--note") : given.index("--note") + 2]
        command = "python benchmarks/fidelity/push_box_precision.py " + " ".join(given)
        report(episodes, args.out, args.markdown or args.out.with_suffix(".md"), command, args.note)


if __name__ == "__main__":
    main()

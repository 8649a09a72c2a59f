"""MuJoCo's C physics inside a compiled JAX program, through a host callback.

The velocity tasks (:mod:`saferl.envs.velocity.locomotion`) step their robots either in MJX (``physics="mjx"``,
JAX, what an accelerator runs) or in MuJoCo's C library (``physics="mujoco"``, the default), and the navigation
tasks (:mod:`saferl.envs.safety_nav.mujoco_physics`) in MuJoCo's C library where ``physics="mujoco"``: the env step
stays a pure
function of JAX arrays, but its ``frame_skip`` calls of ``mj_step`` run on the host, reached from inside the
compiled training loop by ``jax.pure_callback``.  Nothing else changes: the task's reward, cost, termination and
observation are the same JAX code on both backends, the training loop is still one ``lax.scan`` over iterations,
and the step still ``vmap``s (over seeds and environments: ``vmap_method="broadcast_all"`` hands the callback the
whole batch at once, one call per env step of all environments).

Why: MJX is built for accelerators.  On a CPU, MuJoCo C steps the Hopper ~9,400 env steps/s on one core (four
RK4 ``mj_step``s per env step; docs/decisions/049-velocity-tasks-mujoco-on-host.md), MJX ~2,900 on two, and the
gap is larger for the Ant and the Humanoid (MJX evaluates every candidate contact, MuJoCo only those within the
margin).  It is also the engine Safety-Gymnasium runs, so it is the more faithful of the two:

* float64 physics, as the original (MJX computes in float32);
* the model file's own solver settings: iterations, tolerance, and the Humanoid's PGS solver, which MJX lacks
  (the MJX model caps Newton at 4 iterations and switches the Humanoid to Newton; ``locomotion``);
* MuJoCo's own contact frames (no MJX plane-capsule fallback, which moves the Ant's feet; ``locomotion``);
* the geom margins halved as for MJX (``gymnasium_models.match_margin_rule``): MuJoCo 4 adds a pair's two margins
  where the 2.3.3 that Safety-Gymnasium 1.0 pins takes the larger, so the halving is needed in C too.

Where it differs from the original: the state lives in JAX between env steps, in float32 (x64 is off), so every
env step starts from the float64 state rounded to float32 -- a relative perturbation of ~6e-8 per step, the size
of MJX's own round-off, and like it it makes chaotic trajectories part after some steps; the statistics are
unaffected (docs/results/fidelity).  A simulation that MuJoCo finds unstable (its ``mjWARN_BADQPOS``/``BADQVEL``/
``BADQACC`` warnings; MuJoCo then resets the data inside ``mj_step``, unseen by Gymnasium's agent) comes back as
NaN, so the task ends the episode as it does for a non-finite MJX state (``LocomotionEnv.outcome``).

Each environment of the batch is stepped by its own row of inputs only (the scratch ``MjData`` is overwritten
with the whole integration state -- ``qpos``, ``qvel``, ``qacc_warmstart``, ``ctrl``, ``time`` -- before each
row), so the results do not depend on the batch's size, order or split over threads (tested).  The rows are split
over a thread pool: ``mj_step`` releases Python's GIL, so the threads step in parallel, except for the Python
around each call (measured on the Hopper: docs/results/measurements.md, "CPO on SafetyHopperVelocity").

Threads: the rows are stepped on the pool's threads only, never on the thread that makes the callback.  XLA
calls back from its own worker threads, under a Python thread state that exists for that one call, so the
thread-local scratch ``MjData`` made there was freed when the call's thread state was torn down, and MuJoCo's
destructor then ran without a thread state: a segfault (every run with one environment, or with ``threads=1``,
crashed within 100 steps until 2026-12-02; found with gdb, tested in a fresh process).  The pool's threads are
ordinary Python threads, so each keeps its scratch for the life of the process.

On an accelerator the callback works but moves the batch to the host and back every env step; use ``mjx`` there.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs import mujoco_rk4

#: the env step's physics backends (``LocomotionParams.physics``)
PHYSICS = ("mujoco", "mjx")
#: how RK4 moves a free or ball joint's orientation: MuJoCo 2.3.3's rule (:mod:`saferl.envs.mujoco_rk4`) or MuJoCo
#: 4.0's, ``mj_step`` itself
RK4_ORIENTATIONS = ("uncorrected", "munthe-kaas")

#: the fields a task may read from the host data, and their shape as a function of the ``MjModel``
FIELD_SHAPES = {
    "qpos": lambda m: (m.nq,),
    "qvel": lambda m: (m.nv,),
    "qacc_warmstart": lambda m: (m.nv,),
    "xipos": lambda m: (m.nbody, 3),
    "cinert": lambda m: (m.nbody, 10),
    "cvel": lambda m: (m.nbody, 6),
    "qfrc_actuator": lambda m: (m.nv,),
    "cfrc_ext": lambda m: (m.nbody, 6),
    "sensordata": lambda m: (m.nsensordata,),
}
_STATE_FIELDS = ("qpos", "qvel", "qacc_warmstart")
#: inputs a step may set beyond the state and ``ctrl``: the places of mocap bodies (a layout's static objects),
#: or ``mocap_path``, their places before each of the step's ``mj_step``s (``(frame_skip, nmocap, 3)``)
MOCAP_INPUTS = ("mocap_pos", "mocap_quat", "mocap_path")
#: the simulation time a step starts from: MuJoCo's reset of an unstable simulation inside ``mj_step`` sets it to 0,
#: so a step that ends earlier than it started was reset (the models here have nothing that depends on time)
_START_TIME = 1.0e6

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def default_threads() -> int:
    """The CPU cores this process may use (its affinity mask), at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _pool(threads: int) -> ThreadPoolExecutor:
    """The shared thread pool, grown to ``threads`` workers when a stepper asks for more."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < threads:
            _POOL, _POOL_SIZE = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="saferl-mujoco"), threads
        return _POOL


class HostData:
    """The host step's result: the ``mjx.Data`` fields a task reads, as attributes (JAX arrays)."""

    def __init__(self, fields: dict):
        self.__dict__.update(fields)


class HostPhysics:
    """``frame_skip`` MuJoCo ``mj_step``s of a batch of states, callable from compiled JAX code.

    ``model`` is the ``MjModel`` to step; ``fields`` the data fields to return beyond ``qpos``, ``qvel`` and
    ``qacc_warmstart`` (names of :data:`FIELD_SHAPES`); ``contact_forces`` runs ``mj_rnePostConstraint`` after
    the step (Gymnasium's MuJoCo environments do, for ``cfrc_ext``); ``forward`` runs ``mj_forward`` after the
    steps, so that the sensors read the final state (Safety-Gymnasium's ``Underlying.simulation_forward`` does:
    ``mj_step`` leaves the sensor data of the state before its last step); ``threads`` splits the batch over that
    many threads (default :func:`default_threads`).  With ``watched_geoms`` (geom ids) and ``robot_body`` (a body
    name) the step also returns ``touches``: for each watched geom, how many contacts of the final state's contact
    list pair it with a geom of the robot's subtree (what Safety-Gymnasium's contact costs and button presses read).
    ``rk4_orientation="uncorrected"`` steps a model that MuJoCo 4.0 integrates otherwise than MuJoCo 2.3.3 (RK4 with a
    free or ball joint) with :class:`saferl.envs.mujoco_rk4.UncorrectedRK4`, 2.3.3's rule, instead of ``mj_step``;
    ``"munthe-kaas"`` keeps ``mj_step`` (MuJoCo 4.0's rule).
    """

    def __init__(
        self,
        mujoco,
        model,
        fields=(),
        contact_forces: bool = False,
        forward: bool = False,
        threads: int | None = None,
        watched_geoms=(),
        robot_body: str | None = None,
        rk4_orientation: str = "munthe-kaas",
    ):
        unknown = sorted(set(fields) - set(FIELD_SHAPES))
        if unknown:
            raise ValueError(f"unknown host data fields {unknown}; allowed: {', '.join(FIELD_SHAPES)}")
        self._mujoco, self.model = mujoco, model
        self.fields = _STATE_FIELDS + tuple(f for f in fields if f not in _STATE_FIELDS)
        self.contact_forces = bool(contact_forces)
        self.forward = bool(forward)
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.shapes = {name: FIELD_SHAPES[name](model) for name in self.fields}
        self.watched_row = None
        if len(watched_geoms):
            robot = model.body(robot_body).id
            self.robot_geom = np.asarray(model.body_rootid[model.geom_bodyid] == robot)
            self.watched_row = np.full((model.ngeom,), -1, np.int64)
            self.watched_row[np.asarray(watched_geoms, np.int64)] = np.arange(len(watched_geoms))
            self.shapes["touches"] = (len(watched_geoms),)
        if rk4_orientation not in RK4_ORIENTATIONS:
            raise ValueError(f"rk4_orientation must be one of {', '.join(RK4_ORIENTATIONS)}, got {rk4_orientation!r}")
        self.rk4 = None
        if rk4_orientation == "uncorrected" and mujoco_rk4.differs_from_mujoco(mujoco, model):
            self.rk4 = mujoco_rk4.UncorrectedRK4(mujoco, model)
        self._local = threading.local()

    # ---------------------------------------------------------------- host side

    def _scratch(self):
        """This thread's ``MjData`` and numpy views of the fields a step writes and reads (views into the C
        arrays, made once: attribute access through the bindings costs more than the copies)."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            data = self._mujoco.MjData(self.model)
            views = {name: getattr(data, name) for name in set(self.fields) | {"ctrl", "mocap_pos", "mocap_quat"}}
            work = None if self.rk4 is None else self.rk4.scratch(data)
            scratch = self._local.scratch = (data, views, work)
        return scratch

    def _touches(self, data, row) -> None:
        """``row[k]``: the contacts between watched geom ``k`` and a robot geom in ``data``'s contact list."""
        row[:] = 0.0
        pairs = data.contact.geom[: data.ncon]
        for watched, other in ((pairs[:, 0], pairs[:, 1]), (pairs[:, 1], pairs[:, 0])):
            rows = self.watched_row[watched]
            hit = (rows >= 0) & self.robot_geom[other]
            np.add.at(row, rows[hit], 1.0)

    def _step_rows(self, rows: range, inputs: dict, frame_skip: int, out: dict) -> None:
        mujoco, model = self._mujoco, self.model
        data, views, work = self._scratch()
        path = inputs.get("mocap_path")
        settings = [(views[name], source) for name, source in inputs.items() if name != "mocap_path"]
        outputs = [(out[name], views[name], self.shapes[name]) for name in self.fields]
        for i in rows:
            data.time = _START_TIME
            for view, source in settings:
                view[:] = source[i].reshape(view.shape)
            if self.rk4 is not None:  # MuJoCo 2.3.3's RK4 (velocity tasks: no mocap bodies)
                for _ in range(frame_skip):
                    self.rk4.step(data, work)
            elif path is None:
                mujoco.mj_step(model, data, nstep=frame_skip)
            else:  # the mocap bodies moved before every mj_step (Safety-Gymnasium's mocaps move per substep)
                row_path = path[i].reshape(frame_skip, *views["mocap_pos"].shape)
                for substep in range(frame_skip):
                    views["mocap_pos"][:] = row_path[substep]
                    mujoco.mj_step(model, data)
            if data.time < _START_TIME:
                # MuJoCo reset the data inside mj_step (mj_resetData sets time = 0): it found the simulation
                # unstable (mjWARN_BADQPOS / BADQVEL / BADQACC) and printed its warning
                for target in out.values():
                    target[i] = np.nan
                continue
            if self.forward:
                mujoco.mj_forward(model, data)
            if self.contact_forces:
                mujoco.mj_rnePostConstraint(model, data)
            for target, view, shape in outputs:
                target[i] = view.reshape(shape)
            if self.watched_row is not None:
                self._touches(data, out["touches"][i])

    def host_step(self, qpos, qvel, warmstart, ctrl, frame_skip: int, **mocap) -> dict:
        """NumPy in, NumPy out: every array has the same leading (batch) dimensions; ``mocap``: ``mocap_pos``
        ``(..., nmocap, 3)``, ``mocap_quat`` ``(..., nmocap, 4)`` or ``mocap_path`` ``(..., frame_skip, nmocap, 3)``,
        where given."""
        batch = np.shape(qpos)[:-1]
        named = {"qpos": qpos, "qvel": qvel, "qacc_warmstart": warmstart, "ctrl": ctrl, **mocap}
        flat = {
            name: np.asarray(a, np.float64).reshape(int(np.prod(batch, dtype=int)), -1) for name, a in named.items()
        }
        n = flat["qpos"].shape[0]
        out = {name: np.empty((n, *shape), np.float32) for name, shape in self.shapes.items()}
        # always on the pool's threads, even one job: module docstring, "Threads"
        threads = max(1, min(self.threads, n))
        bounds = np.linspace(0, n, threads + 1).astype(int)
        jobs = [
            _pool(self.threads).submit(self._step_rows, range(lo, hi), flat, frame_skip, out)
            for lo, hi in zip(bounds[:-1], bounds[1:])
        ]
        for job in jobs:
            job.result()
        return {name: value.reshape(*batch, *self.shapes[name]) for name, value in out.items()}

    # ---------------------------------------------------------------- JAX side

    def __call__(self, qpos, qvel, warmstart, ctrl, frame_skip: int, **mocap) -> HostData:
        """The data after ``frame_skip`` physics steps from each state, ``ctrl`` held (JAX arrays in and out);
        ``mocap``: the mocap bodies' ``mocap_pos`` and ``mocap_quat`` to set first, or their ``mocap_path`` to set
        before each ``mj_step``, where given."""
        unknown = sorted(set(mocap) - set(MOCAP_INPUTS))
        if unknown:
            raise ValueError(f"unknown host step inputs {unknown}; allowed: {', '.join(MOCAP_INPUTS)}")
        result_shapes = {name: jax.ShapeDtypeStruct(shape, jnp.float32) for name, shape in self.shapes.items()}
        names = tuple(mocap)

        def callback(qpos, qvel, warmstart, ctrl, *mocap_arrays):
            return self.host_step(qpos, qvel, warmstart, ctrl, frame_skip, **dict(zip(names, mocap_arrays)))

        fields = jax.pure_callback(
            callback, result_shapes, qpos, qvel, warmstart, ctrl, *mocap.values(), vmap_method="broadcast_all"
        )
        return HostData(fields)

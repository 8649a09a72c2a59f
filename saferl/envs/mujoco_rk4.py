"""RK4 as MuJoCo 2.3.3 to 3.x step it, on today's MuJoCo: the original tasks' integrator for free and ball joints.

MuJoCo 4.0.0 changed its RK4 integrator: "The RK4 integrator is now fourth-order accurate for the orientations of
ball and free joints" (MuJoCo's changelog, 4.0.0): each stage's angular velocity gets the Runge-Kutta-Munthe-Kaas
correction before it moves the quaternion.  Safety-Gymnasium 1.0 pins MuJoCo 2.3.3, whose ``mj_RungeKutta`` moved a
quaternion by the stages' Butcher-weighted body rates uncorrected, as it moves every other coordinate; saferl's MJX
RK4 (:func:`saferl.envs.velocity.mjx_physics.rk4_step`) does the same.  For a model with a free or ball joint (the
Ant's and the Humanoid's roots) every MuJoCo 4.0 step therefore differs slightly from the original's, and contacts
amplify it (docs/results/fidelity/ant_mujoco_releases.md).  No MuJoCo 4.0 option restores the old rule, so
:class:`UncorrectedRK4` takes the step itself, from MuJoCo's own forward dynamics:

1. ``mj_checkPos``, ``mj_checkVel``, ``mj_forward``, ``mj_checkAcc``, as ``mj_step`` begins (a check that finds the
   state unstable resets the data, as there);
2. three more stages, each at ``qpos0 (+) h sum_j a_ij v_j`` (``mj_integratePos``, the quaternions by the summed body
   rates), ``qvel0 + h sum_j a_ij a_j`` and time ``t0 + c_i h``, by ``mj_forwardSkip`` with the sensors skipped (as
   ``mj_RungeKutta``'s stages), Butcher tableau ``a = (1/2; 0, 1/2; 0, 0, 1)``, ``c = (1/2, 1/2, 1)``;
3. the state advanced by the ``b = (1/6, 1/3, 1/3, 1/6)``-weighted stage velocities and accelerations, the time by
   ``h``; ``qacc`` is left as the last stage's and the next step's warm start set to it, as MuJoCo 2.3.3 leaves them
   (its every ``mj_forward`` updated the warm start).

For a model without free or ball joints the two rules are one, and MuJoCo's own ``mj_step`` is faster:
:func:`differs_from_mujoco` says whether a model needs this step.  Checked against MuJoCo 2.3.3's recorded steps of
the original Ant (tests/envs/velocity/test_mujoco_rk4.py).
"""

from __future__ import annotations

import numpy as np

#: the classical RK4 tableau (``mj_RungeKutta``'s): ``a`` has one entry per row, ``a[i][i-1] = c[i]``, so stage
#: ``i + 1`` starts from the step's start along stage ``i`` alone; then the stages' times and the final weights
RK4_C = (0.5, 0.5, 1.0)
RK4_B = np.array([1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0])


def differs_from_mujoco(mujoco, model) -> bool:
    """Whether today's ``mj_step`` integrates ``model`` otherwise than MuJoCo 2.3.3 did: RK4 with a free or ball
    joint."""
    rk4 = int(model.opt.integrator) == int(mujoco.mjtIntegrator.mjINT_RK4)
    rotating = (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL))
    return bool(rk4 and np.isin(np.asarray(model.jnt_type), rotating).any())


class UncorrectedRK4:
    """One physics step of ``model`` with MuJoCo 2.3.3's RK4 (module docstring), in place on an ``MjData``.

    :meth:`scratch` makes the arrays a step works in; give each thread its own."""

    def __init__(self, mujoco, model):
        self.mujoco, self.model = mujoco, model
        self.h = float(model.opt.timestep)
        self.no_stage = mujoco.mjtStage.mjSTAGE_NONE

    def scratch(self, data) -> dict[str, np.ndarray]:
        """The arrays a step of ``data`` works in, with views of ``data``'s own (made once: attribute access through
        MuJoCo's bindings costs more than the arithmetic)."""
        nq, nv = self.model.nq, self.model.nv
        views = {name: getattr(data, name) for name in ("qpos", "qvel", "qacc", "qacc_warmstart")}
        return {
            "qpos0": np.empty(nq),
            "qvel0": np.empty(nv),
            "vel": np.empty((4, nv)),
            "acc": np.empty((4, nv)),
            **views,
        }

    def step(self, data, scratch: dict[str, np.ndarray]) -> None:
        """One physics step of ``data`` (the ``MjData`` that ``scratch`` was made for), in place."""
        mujoco, model, h = self.mujoco, self.model, self.h
        qpos, qvel, qacc = scratch["qpos"], scratch["qvel"], scratch["qacc"]
        qpos0, qvel0, vel, acc = scratch["qpos0"], scratch["qvel0"], scratch["vel"], scratch["acc"]
        mujoco.mj_checkPos(model, data)
        mujoco.mj_checkVel(model, data)
        mujoco.mj_forward(model, data)
        mujoco.mj_checkAcc(model, data)
        time0 = data.time
        qpos0[:], qvel0[:] = qpos, qvel
        vel[0], acc[0] = qvel0, qacc
        for i, c in enumerate(RK4_C):
            # the tableau's stage i + 1 moves from the start along stage i alone, for c h
            np.multiply(acc[i], c * h, out=vel[i + 1])
            vel[i + 1] += qvel0
            qpos[:] = qpos0
            mujoco.mj_integratePos(model, qpos, vel[i], c * h)
            qvel[:] = vel[i + 1]
            data.time = time0 + c * h
            mujoco.mj_forwardSkip(model, data, self.no_stage, 1)
            acc[i + 1] = qacc
        qpos[:] = qpos0
        mujoco.mj_integratePos(model, qpos, RK4_B @ vel, h)
        qvel[:] = qvel0 + h * (RK4_B @ acc)
        scratch["qacc_warmstart"][:] = acc[3]
        data.time = time0 + h

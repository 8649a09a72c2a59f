"""The MJX backend of the velocity tasks (``physics="mjx"``): importing MJX, preparing its model, stepping it.

:mod:`saferl.envs.velocity.locomotion` holds the family (reward, cost, termination, observation, reset) and what
MJX changes from the original (its float32, solver caps, contact candidates and frames); this module holds the
stepping: :func:`simulate` runs ``frame_skip`` physics steps, ``mjx.step`` for Euler and :func:`rk4_step` for RK4,
MuJoCo's ``mj_RungeKutta`` written as a ``lax.scan`` over the four stages with one ``mjx.forward`` in its body
(``mjx.step`` unrolls the stages, four copies of the forward pass to compile), and :func:`integrate_pos`, MuJoCo's
``mj_integratePos``, for the stages' positions.  The other backend, MuJoCo's C library on the host, is
:mod:`saferl.envs.mujoco_host`.

Speed
-----
Uniform random actions, episodes reset in place, one compiled ``vmap`` of a ``lax.scan`` of env steps, on the CPU
(2 cores shared with other jobs), MJX physics, load average 4-5, compile time, then env-steps/s over two runs:

==============  =========  ===============  ================
task            compile    16 envs x 1000   128 envs x 125
==============  =========  ===============  ================
HalfCheetah     22-35 s    3500-3570        6100-6400
Hopper          26-36 s    1920-2260        2550-3050
Ant             31-43 s    650              730-810
Humanoid        66-72 s    220              200-220
==============  =========  ===============  ================

The physics dominates: per env step Hopper runs 16 forward passes (4 sub-steps x 4 RK4 stages),
the Ant 20 with 25 candidate contacts, the Humanoid 20 with 138.  The same machine under heavier
load (average 12-15) measured 3-6x less and compile times of 4-8 minutes.
"""

from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jnp

from saferl.foundation.errors import require

# mjtJoint
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
# mjtIntegrator
_EULER, _RK4 = 0, 1
# RK4 stage offsets (the diagonal of MuJoCo's tableau A, with 0 for the first stage) and weights B
_RK4_OFFSET = (0.0, 0.5, 0.5, 1.0)
_RK4_WEIGHT = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)


def import_mjx(what: str):
    """``(mujoco, mujoco.mjx)``, or :class:`MissingExtraError` naming the ``mjx`` extra."""
    mujoco = require("mujoco", "mjx", what)
    # mujoco.mjx prints "Failed to import warp" when the optional Warp backend is absent; the
    # JAX backend is used here, so keep that message off stdout.
    with contextlib.redirect_stdout(io.StringIO()):
        mjx = require("mujoco.mjx", "mjx", what)
    return mujoco, mjx


def cap_solver(mj_model, asset: str, solver_iterations: int | None, ls_iterations: int | None) -> None:
    """Cap the Newton solver's and line search's iterations of the model MJX steps, in place (``None`` keeps the
    model's own); ValueError for a bad cap or what MJX stepping here does not support (activations, an integrator
    other than Euler and RK4)."""
    for name, value in (("solver_iterations", solver_iterations), ("ls_iterations", ls_iterations)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive integer (or None for the model's own), got {value!r}")
    if solver_iterations is not None:
        mj_model.opt.iterations = solver_iterations
    if ls_iterations is not None:
        mj_model.opt.ls_iterations = ls_iterations
    if mj_model.na:
        raise ValueError(f"{asset}: actuator activations (na = {mj_model.na}) are not supported")
    if int(mj_model.opt.integrator) not in (_EULER, _RK4):
        raise ValueError(f"{asset}: integrator {int(mj_model.opt.integrator)} is not supported (Euler, RK4)")


def uses_rk4(mj_model) -> bool:
    """Whether the model integrates with RK4 (else Euler)."""
    return int(mj_model.opt.integrator) == _RK4


def model_joints(mj_model, asset: str) -> list[tuple[int, int, int]]:
    """``(type, qpos address, dof address)`` of every joint, what :func:`integrate_pos` reads; ValueError for a
    ball joint."""
    joints = [(int(t), int(q), int(d)) for t, q, d in zip(mj_model.jnt_type, mj_model.jnt_qposadr, mj_model.jnt_dofadr)]
    if any(t == _BALL for t, _, _ in joints):
        raise ValueError(f"{asset}: ball joints are not supported")
    return joints


def fresh_kinematics(mjx, model, data):
    """``data`` with the kinematics, centres of mass and their velocities of its ``qpos`` and ``qvel``."""
    return mjx.com_vel(model, mjx.com_pos(model, mjx.kinematics(model, data)))


def quat_integrate(quat: jax.Array, omega: jax.Array, h) -> jax.Array:
    """MuJoCo's ``mju_quatIntegrate`` then normalise: rotate ``quat`` by the body-frame angular
    velocity ``omega`` for time ``h`` (``quat * exp(omega h / 2)``)."""
    angle = jnp.sqrt(jnp.sum(omega * omega)) * h
    axis = omega / jnp.maximum(jnp.sqrt(jnp.sum(omega * omega)), 1e-30)
    half = 0.5 * angle
    w1, v1 = quat[0], quat[1:]
    w2, v2 = jnp.cos(half), jnp.sin(half) * axis
    out = jnp.concatenate([(w1 * w2 - jnp.dot(v1, v2))[None], w1 * v2 + w2 * v1 + jnp.cross(v1, v2)])
    return out / jnp.sqrt(jnp.sum(out * out))


def integrate_pos(joints, qpos: jax.Array, qvel: jax.Array, h) -> jax.Array:
    """MuJoCo's ``mj_integratePos``: ``qpos`` moved by velocity ``qvel`` for time ``h`` (``joints`` as
    :func:`model_joints` gives them)."""
    parts = []
    for joint_type, q, d in joints:
        if joint_type == _FREE:
            parts += [
                qpos[q : q + 3] + h * qvel[d : d + 3],
                quat_integrate(qpos[q + 3 : q + 7], qvel[d + 3 : d + 6], h),
            ]
        else:  # hinge, slide
            parts.append(qpos[q : q + 1] + h * qvel[d : d + 1])
    return jnp.concatenate(parts)


def rk4_step(mjx, model, joints, h, data):
    """One ``mj_step`` with MuJoCo's RK4 (see :mod:`saferl.envs.velocity.locomotion`): one forward pass per stage,
    in a ``lax.scan`` so that the pass is compiled once."""
    qpos0, qvel0, time0 = data.qpos, data.qvel, data.time

    def stage(carry, coefficients):
        data, k_qvel, k_qacc, sum_qvel, sum_qacc = carry
        offset, weight = coefficients
        qpos = jnp.where(offset > 0.0, integrate_pos(joints, qpos0, offset * k_qvel, h), qpos0)
        data = data.replace(qpos=qpos, qvel=qvel0 + offset * h * k_qacc, time=time0 + offset * h)
        data = mjx.forward(model, data)
        carry = (data, data.qvel, data.qacc, sum_qvel + weight * data.qvel, sum_qacc + weight * data.qacc)
        return carry, None

    zeros = jnp.zeros_like(qvel0)
    coefficients = (jnp.asarray(_RK4_OFFSET, jnp.float32), jnp.asarray(_RK4_WEIGHT, jnp.float32))
    (data, _, _, sum_qvel, sum_qacc), _ = jax.lax.scan(stage, (data, zeros, zeros, zeros, zeros), coefficients)
    # mj_advance: the next step's warm start is the last stage's qacc
    return data.replace(
        qpos=integrate_pos(joints, qpos0, sum_qvel, h),
        qvel=qvel0 + h * sum_qacc,
        qacc_warmstart=data.qacc,
        time=time0 + h,
    )


def simulate(mjx, model, data, *, joints, rk4: bool, h: float, frame_skip: int, contact_forces: bool):
    """``data`` after ``frame_skip`` physics steps with its ``ctrl`` held: :func:`rk4_step` (timestep ``h``) or
    ``mjx.step`` (Euler), then the external contact forces (``mjx.rne_postconstraint``) if ``contact_forces``."""
    substep = (lambda d: rk4_step(mjx, model, joints, h, d)) if rk4 else (lambda d: mjx.step(model, d))
    data, _ = jax.lax.scan(lambda d, _: (substep(d), None), data, None, length=frame_skip)
    if contact_forces:
        data = mjx.rne_postconstraint(model, data)
    return data

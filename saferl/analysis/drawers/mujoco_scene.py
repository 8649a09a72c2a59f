"""The MuJoCo tasks' drawer (EcoAnt; the velocity tasks' ``LocomotionEnv`` by name): MuJoCo's own renderer with a
camera tracking the torso, and the check that a headless OpenGL backend works (:func:`mujoco_gl_backend`)."""

from __future__ import annotations

import copy
import os

import numpy as np

from saferl.analysis.drawers.registry import Drawing, EpisodeView, register_drawer
from saferl.envs.eco_ant import EcoAnt
from saferl.foundation.errors import MissingExtraError

_GL_HELP = (
    "start Python with MUJOCO_GL=egl (EGL: the system's libegl1, or the NVIDIA driver's libEGL) or "
    "MUJOCO_GL=osmesa (OSMesa: the libosmesa6 system package and pip install PyOpenGL)"
)


def mujoco_gl_backend() -> str | None:
    """The OpenGL backend MuJoCo renders with in this process (``MUJOCO_GL``, "glfw" when unset), or
    None when none works: a 16 x 16 ``mujoco.Renderer`` of an empty model is created and closed, with
    every error caught.  MuJoCo fixes its backend when it is first imported."""
    try:
        import mujoco

        model = mujoco.MjModel.from_xml_string("<mujoco/>")
        renderer = mujoco.Renderer(model, 16, 16)
        renderer.close()
    except Exception:  # noqa: BLE001 - any failure means: no backend here
        return None
    return os.environ.get("MUJOCO_GL", "") or "glfw"


def require_mujoco_gl():
    """A one-line error (:class:`saferl.foundation.errors.MissingExtraError`) when MuJoCo cannot render here."""
    if mujoco_gl_backend() is None:
        current = os.environ.get("MUJOCO_GL")
        setting = f"MUJOCO_GL={current!r}" if current is not None else "MUJOCO_GL unset"
        raise MissingExtraError(
            f"rendering a MuJoCo environment needs a headless OpenGL backend and none works in "
            f"this process ({setting}); {_GL_HELP}"
        )


#: the tracking camera (m, degrees): the torso seen from the side and above, the floor filling the frame
MUJOCO_CAMERA = {"distance": 4.0, "elevation": -30.0, "azimuth": 90.0}


# by class name: saferl/envs/velocity/locomotion.py
@register_drawer("LocomotionEnv", "MJX locomotion", lambda env, p: 1.0 / env.dt(p), preflight=require_mujoco_gl)
@register_drawer(EcoAnt, "EcoAnt", lambda env, p: 1.0 / env.dt(p), highlight_costs=False, preflight=require_mujoco_gl)
def draw_mujoco(ax, view: EpisodeView) -> Drawing:
    import mujoco

    width, height = view.axes_size
    model = copy.deepcopy(view.env.mj_model)  # the offscreen buffer must hold the frame
    model.vis.global_.offwidth = max(int(model.vis.global_.offwidth), width)
    model.vis.global_.offheight = max(int(model.vis.global_.offheight), height)
    renderer = mujoco.Renderer(model, height=height, width=width)
    data = mujoco.MjData(model)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    names = [model.body(i).name for i in range(model.nbody)]
    camera.trackbodyid = names.index("torso") if "torso" in names else min(1, model.nbody - 1)
    for name, value in MUJOCO_CAMERA.items():
        setattr(camera, name, value)
    image = ax.imshow(
        np.zeros((height, width, 3), np.uint8),
        extent=(0, width, 0, height),
        origin="upper",
        interpolation="nearest",
        zorder=0,
    )
    qpos = np.asarray(view.states.qpos, np.float64)

    def update(t):
        data.qpos[:] = qpos[t]
        mujoco.mj_forward(model, data)
        renderer.update_scene(data, camera=camera)
        image.set_data(renderer.render())

    return Drawing((0.0, float(width), 0.0, float(height)), update, renderer.close)

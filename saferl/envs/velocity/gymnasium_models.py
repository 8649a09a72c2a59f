"""Gymnasium's MuJoCo model files, as both physics backends of the velocity tasks load them.

:func:`gymnasium_asset` finds a robot's file in the installed ``gymnasium`` package (no model file is copied into
saferl), :func:`load_model` compiles it (applying a deprecated ``settotalmass`` the way MuJoCo 4's compiler does,
without its warning) and :func:`match_margin_rule` halves the geom margins so that MuJoCo 4's and MJX's pair margin
is MuJoCo 2.3.3's (:mod:`saferl.envs.velocity.locomotion`, "Contact margins").
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from saferl.foundation.errors import MissingExtraError


def gymnasium_asset(filename: str) -> Path:
    """The path of one of Gymnasium's MuJoCo model files (``gymnasium/envs/mujoco/assets/``),
    found without importing gymnasium."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(
            f"the velocity tasks load Gymnasium's MuJoCo model {filename!r} (module 'gymnasium' is not "
            "installed): pip install 'saferl[mjx,gym]'"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "envs" / "mujoco" / "assets" / filename
    if not path.is_file():
        raise MissingExtraError(f"the installed gymnasium has no MuJoCo model {filename!r} (looked for {path})")
    return path


def match_margin_rule(mj_model) -> None:
    """Halve every geom margin in place, so that MuJoCo 4's and MJX's pair margin (the sum of the two) is MuJoCo
    2.3.3's (the larger of the two); exact when every geom has the same margin, which ValueError demands."""
    margins = mj_model.geom_margin
    if margins.size and (margins != margins[0]).any():
        raise ValueError(
            f"geom margins differ ({sorted(set(margins.tolist()))}): halving them would not give every "
            "pair the larger of its two margins, MuJoCo 2.3.3's rule"
        )
    mj_model.geom_margin[:] = margins / 2


def load_model(mujoco, path: Path):
    """The compiled ``MjModel`` of the XML file at ``path``.  A ``<compiler settotalmass="M">`` (Gymnasium's
    half_cheetah.xml) is applied after compiling, with ``mj_setTotalmass`` and ``mj_setConst``, which is what
    MuJoCo 4's compiler does with it while printing a deprecation warning on every load; every numeric array of
    the model is the same either way (checked against ``from_xml_path`` in tests/envs/test_velocity.py)."""
    xml = Path(path).read_text()
    total = re.search(r'(<compiler\b[^>]*?)\s+settotalmass="([^"]+)"', xml)
    if total is None:
        return mujoco.MjModel.from_xml_path(str(path))
    model = mujoco.MjModel.from_xml_string(xml[: total.start()] + total.group(1) + xml[total.end() :])
    mujoco.mj_setTotalmass(model, float(total.group(2)))
    mujoco.mj_setConst(model, mujoco.MjData(model))
    return model

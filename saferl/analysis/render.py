"""Rendered episodes: one episode of a policy drawn with matplotlib and written as a GIF or an MP4.

Three functions, each usable alone:

* :func:`rollout_states` runs one episode on the host (the policy and ``env.step`` jitted as one
  program, the loop in Python, stopping when the episode ends) and returns its states, rewards and
  costs (:class:`Episode`);
* :func:`render_states` draws a sequence of states with the environment's drawer
  (:mod:`saferl.analysis.drawers`) and writes the animation;
* :func:`render_episode` does both: ``render_episode(env, params, act, key, "out.gif")``.

Frames: one per state, the initial state included, so an episode of ``T`` steps has ``T + 1``
frames (with ``frame_stride = k``: states ``0, k, 2k, ...`` and always the last).  Frame ``t``
shows state ``t``; its title gives the step, the return and the cost summed over steps
``1..t``, and the cost counter and the agent take the cost colour when step ``t`` had a positive
cost.  Every frame has exactly the requested ``size`` in pixels: a title strip on top, the drawing
below, with equal scales on both axes (the drawer's extent is widened to the drawing's aspect).

Writers: GIF with Pillow (each frame quantised to its own 256-colour palette as it is drawn, so a
frame costs ``width * height`` bytes of memory until the file is written); MP4 with matplotlib's
``FFMpegWriter``, which streams the frames to ``ffmpeg`` (needed on PATH; H.264 needs even sizes,
so matplotlib rounds an odd width or height down by one pixel).  Matplotlib is used
through ``Figure`` and ``FigureCanvasAgg`` only: no pyplot, no change to the user's backend.

Environments: a drawer is looked up by the innermost environment's class (wrappers are looked
through, their states and parameters unwrapped via their ``inner`` fields); an outermost
``AutoReset`` is removed before the rollout, so the episode stops where it ends.  The rewards and
costs drawn are the environment's own: when the stack has an ``EpisodeStatistics`` layer (every
training stack has, inside the cost augmentations of ``saferl.envs.risk`` and
``saferl.envs.cost_state``), they are the differences of its running sums, else the step's outputs.

Defaults: ``size`` 480 x 480 pixels (this module's choice); ``fps`` the environment's control
rate divided by ``frame_stride`` (real time: PointGoal1 50, the ball tasks 60 in version 0.1,
CartSafe 50, EcoAnt 20, IcyLake 4 as Gymnasium's FrozenLake), at most 50 for a GIF, whose frame
delays are whole centiseconds and are slowed down by browsers below 2.
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from saferl.analysis.drawers.canvas import COLORS
from saferl.analysis.drawers.registry import DRAWERS, DrawerEntry, EpisodeView, drawer_for, supported
from saferl.envs.base import Environment
from saferl.envs.wrappers import AutoReset
from saferl.foundation.errors import MissingExtraError

__all__ = [
    "Episode",
    "Scene",
    "check_output",
    "check_renderable",
    "innermost",
    "render_episode",
    "render_states",
    "rollout_states",
    "supported",
]

#: dots per inch of the figures: width / 64 inches is exact in binary floating point, so the Agg
#: canvas has exactly the requested pixels (matplotlib truncates width_inches * dpi)
DPI = 64
DEFAULT_SIZE = (480, 480)
#: GIF frame delays are centiseconds; browsers play delays under 2 cs at 10 cs
GIF_MAX_FPS = 50.0
#: a rollout without ``max_steps`` stops here if the episode has not ended
#: (as saferl.analysis.evaluate's MAX_EVAL_STEPS)
MAX_RENDER_STEPS = 100_000
FORMATS = (".gif", ".mp4")


class Episode(NamedTuple):
    """One episode: ``states`` stacked (every leaf has a leading axis of ``num_steps + 1``, the
    initial state first), ``rewards`` (num_steps,) and ``costs`` (num_steps,) or (num_steps, m)."""

    states: Any
    rewards: np.ndarray
    costs: np.ndarray

    @property
    def num_steps(self) -> int:
        return int(self.rewards.shape[0])


def innermost(tree):
    """The environment's own state or parameters inside wrapper layers (their ``inner`` fields)."""
    while hasattr(tree, "inner"):
        tree = tree.inner
    return tree


def _to_numpy(x) -> np.ndarray:
    """A leaf as numpy (typed PRNG keys as their raw key data)."""
    if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _stack(trees):
    return jax.tree.map(lambda *xs: np.stack([_to_numpy(x) for x in xs]), *trees)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------- rollout


def rollout_states(
    env: Environment, params, act: Callable, key, max_steps: int | None = None, *, jit_act: bool = True
) -> Episode:
    """One episode of ``act(obs, key) -> action`` on ``env``, stepped on the host.

    Stops when the episode terminates or is truncated, or after ``max_steps`` steps (None: no
    limit but the environment's own, and :data:`MAX_RENDER_STEPS`).  ``key`` is a PRNG key or an
    int seed: one part resets, the rest is split once per step for the policy.  With ``jit_act``
    (default) the policy is traced into the jitted step, as a JAX policy (``Run.policy``) can be;
    ``jit_act=False`` calls it on the host with concrete arrays (a numpy or scripted policy).
    Rewards and costs are the environment's own (see the module docstring).
    """
    if not isinstance(env, Environment):
        raise ValueError(f"render one environment (a saferl Environment), not a {type(env).__name__}")
    if isinstance(env, AutoReset):  # the episode must stop where it ends, not start again
        env = env.env
    limit = MAX_RENDER_STEPS if max_steps is None else _positive_int("max_steps", max_steps)
    key = jax.random.PRNGKey(key) if isinstance(key, (int, np.integer)) else key
    reset_key, key = jax.random.split(key)
    state, obs = jax.jit(env.reset)(reset_key, params)

    if jit_act:

        @jax.jit
        def step(state, obs, key, params):
            key, act_key = jax.random.split(key)
            return key, env.step(state, act(obs, act_key), params)
    else:
        env_step = jax.jit(env.step)

        def step(state, obs, key, params):
            key, act_key = jax.random.split(key)
            return key, env_step(state, act(obs, act_key), params)

    states, rewards, costs, running = [state], [], [], []
    for _ in range(limit):
        key, (state, obs, reward, cost, terminated, truncated, info) = step(state, obs, key, params)
        states.append(state)
        rewards.append(reward)
        costs.append(cost)
        if "episode_cost" in info:  # EpisodeStatistics' running sums: the environment's own signals
            running.append((info["episode_return"], info["episode_cost"]))
        if bool(terminated) or bool(truncated):
            break
    states = _stack(states)
    rewards, costs = np.asarray(jnp.stack(rewards), np.float64), np.asarray(jnp.stack(costs), np.float64)
    if running:
        sums = [np.asarray(jnp.stack(part), np.float64) for part in zip(*running)]
        rewards, costs = (np.diff(s, axis=0, prepend=np.zeros_like(s[:1])) for s in sums)
    return Episode(states, rewards, costs)


# --------------------------------------------------------------------------- the figure


def check_renderable(env) -> DrawerEntry:
    """The drawer of ``env``, after its checks (a GL backend for MuJoCo); one-line errors otherwise."""
    entry = drawer_for(env)
    if entry.preflight is not None:
        entry.preflight()
    return entry


def _size(size) -> tuple[int, int]:
    ok = isinstance(size, (tuple, list)) and len(size) == 2
    if not ok or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 64 <= v <= 4096 for v in size
    ):
        raise ValueError(f"size must be (width, height) in pixels, integers in [64, 4096], got {size!r}")
    return int(size[0]), int(size[1])


def _fit(extent, aspect: float):
    """Widen ``extent`` (x0, x1, y0, y1) about its centre to the width / height ``aspect``."""
    x0, x1, y0, y1 = extent
    w, h = x1 - x0, y1 - y0
    w, h = max(w, h * aspect), max(h, w / aspect)
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    return (cx - w / 2.0, cx + w / 2.0), (cy - h / 2.0, cy + h / 2.0)


def _amount(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


class Scene:
    """The figure of one episode: :meth:`frame` draws frame ``i`` and returns its pixels.

    ``axes_box`` = (left, top, width, height) of the drawing area in pixels, ``xlim`` and ``ylim``
    its data limits (equal scales); :meth:`to_pixel` maps data coordinates to (column, row).
    """

    def __init__(self, env, params, states, rewards, costs, size=DEFAULT_SIZE, frame_stride: int = 1):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.entry = check_renderable(env)
        cls = type(env.unwrapped)  # a family's drawer (registered on a base class) titles with the class name
        self.title = self.entry.name if cls in DRAWERS or cls.__name__ in DRAWERS else cls.__name__
        self.width, self.height = _size(size)
        stride = _positive_int("frame_stride", frame_stride)
        if isinstance(states, (list, tuple)):
            states = _stack(states)
        inner = jax.tree.map(_to_numpy, innermost(states))
        n = int(jax.tree.leaves(inner)[0].shape[0])
        rewards = np.asarray(rewards, np.float64).reshape(-1)
        costs = np.atleast_1d(np.asarray(costs, np.float64))
        costs = costs.reshape(costs.shape[0], int(np.prod(costs.shape[1:])))  # (steps, channels)
        if rewards.shape[0] != n - 1 or costs.shape[0] != n - 1:
            raise ValueError(
                f"an episode of {n} states needs {n - 1} rewards and costs, got {rewards.shape[0]} "
                f"rewards and {costs.shape[0]} costs"
            )
        self.costly = np.concatenate([[False], (costs > 0.0).any(axis=1)])
        self.returns = np.concatenate([[0.0], np.cumsum(rewards)])
        self.cost_sums = np.concatenate([np.zeros((1, costs.shape[1])), np.cumsum(costs, axis=0)])
        self.indices = list(range(0, n, stride)) + ([n - 1] if (n - 1) % stride else [])

        self.figure = Figure(figsize=(self.width / DPI, self.height / DPI), dpi=DPI, facecolor=COLORS["background"])
        FigureCanvasAgg(self.figure)
        strip = max(16, round(0.06 * self.height))
        self.axes_box = (0, strip, self.width, self.height - strip)
        ax = self.figure.add_axes((0.0, 0.0, 1.0, (self.height - strip) / self.height))
        ax.set_facecolor(COLORS["background"])
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(False)
        view = EpisodeView(
            env.unwrapped,
            jax.tree.map(_to_numpy, innermost(params)),
            inner,
            self.costly,
            (self.width, self.height - strip),
        )
        self.drawing = self.entry.draw(ax, view)
        self.xlim, self.ylim = _fit(self.drawing.extent, self.width / (self.height - strip))
        ax.set_xlim(*self.xlim)
        ax.set_ylim(*self.ylim)
        ax.set_autoscale_on(False)
        self.axes = ax
        font = 0.55 * strip * 72.0 / DPI
        y = 1.0 - 0.5 * strip / self.height
        self._label = self.figure.text(0.015, y, "", ha="left", va="center", fontsize=font, color=COLORS["text"])
        self._cost = self.figure.text(0.985, y, "", ha="right", va="center", fontsize=font, color=COLORS["text"])
        self.view = view

    @property
    def num_frames(self) -> int:
        return len(self.indices)

    def draw(self, i: int):
        """Move the artists to frame ``i`` (state ``indices[i]``)."""
        t = self.indices[i]
        self.drawing.update(t)
        self._label.set_text(f"{self.title}  step {t}/{self.indices[-1]}  return {self.returns[t]:.2f}")
        self._cost.set_text("cost " + " / ".join(_amount(c) for c in self.cost_sums[t]))
        costly = self.entry.highlight_costs and self.costly[t]
        self._cost.set_color(COLORS["cost"] if costly else COLORS["text"])

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as (height, width, 3) uint8 RGB."""
        self.draw(i)
        self.figure.canvas.draw()
        return np.asarray(self.figure.canvas.buffer_rgba())[..., :3].copy()

    def to_pixel(self, x: float, y: float) -> tuple[float, float]:
        """(column, row) in the frame of the data point (x, y); row 0 is the top."""
        px, py = self.axes.transData.transform((x, y))
        return float(px), float(self.height - py)

    def close(self):
        if self.drawing.close is not None:
            self.drawing.close()


# --------------------------------------------------------------------------- writing


def _ffmpeg_available() -> bool:
    from matplotlib.animation import FFMpegWriter

    return bool(FFMpegWriter.isAvailable())


def check_output(path) -> Path:
    """``path`` as a Path ending in .gif or .mp4 (and ffmpeg on PATH for .mp4); one-line errors otherwise."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"cannot write a rendered episode to {str(path)!r}: the name must end in {' or '.join(FORMATS)}"
        )
    if suffix == ".mp4" and not _ffmpeg_available():
        raise MissingExtraError(
            f"writing {str(path)!r} as MP4 needs ffmpeg on PATH, which was not found "
            "(e.g. apt-get install ffmpeg); a .gif needs only Pillow"
        )
    return path


def _frame_rate(fps, scene: Scene, path: Path, frame_stride: int) -> float:
    if fps is None:
        rate = scene.entry.steps_per_second(scene.view.env, scene.view.params) / frame_stride
        return min(rate, GIF_MAX_FPS) if path.suffix.lower() == ".gif" else rate
    if isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not 0.0 < fps <= 1000.0:
        raise ValueError(f"fps must be a number in (0, 1000], got {fps!r}")
    return float(fps)


def _write_gif(scene: Scene, path: Path, fps: float):
    from PIL import Image

    frames = [
        Image.fromarray(scene.frame(i)).convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
        for i in range(scene.num_frames)
    ]
    frames[0].save(path, format="GIF", save_all=True, append_images=frames[1:], duration=round(1000.0 / fps), loop=0)


def _write_mp4(scene: Scene, path: Path, fps: float):
    from matplotlib.animation import FFMpegWriter

    writer = FFMpegWriter(fps=fps)
    with writer.saving(scene.figure, str(path), dpi=DPI):
        for i in range(scene.num_frames):
            scene.draw(i)
            writer.grab_frame()


def render_states(
    env, params, states, rewards, costs, path, *, size=DEFAULT_SIZE, fps: float | None = None, frame_stride: int = 1
) -> Path:
    """Draw the states of an episode (stacked, or a list; wrapper states allowed) with the per-step
    ``rewards`` and ``costs`` of the steps between them, and write the animation to ``path``
    (.gif or .mp4).  Returns the path.  ``fps`` None: real time (see the module docstring)."""
    path = check_output(path)
    scene = Scene(env, params, states, rewards, costs, size=size, frame_stride=frame_stride)
    try:
        rate = _frame_rate(fps, scene, path, frame_stride)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.stem}.partial{path.suffix}")  # same suffix: ffmpeg picks the format by it
        try:
            (_write_gif if path.suffix.lower() == ".gif" else _write_mp4)(scene, partial, rate)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)  # left only by a failed write
    finally:
        scene.close()
    return path


def render_episode(
    env,
    params,
    act: Callable,
    key,
    path,
    max_steps: int | None = None,
    fps: float | None = None,
    *,
    size=DEFAULT_SIZE,
    frame_stride: int = 1,
    jit_act: bool = True,
) -> Episode:
    """Run one episode of ``act(obs, key) -> action`` (:func:`rollout_states`) and write it to
    ``path`` (:func:`render_states`).  The output name, the environment's drawer and its needs (a GL
    backend for MuJoCo, ffmpeg for .mp4) are checked before the rollout.  Returns the episode."""
    check_output(path)
    check_renderable(env)
    episode = rollout_states(env, params, act, key, max_steps, jit_act=jit_act)
    render_states(
        env, params, episode.states, episode.rewards, episode.costs, path, size=size, fps=fps, frame_stride=frame_stride
    )
    return episode

"""Rendered episodes (saferl.analysis.render): frame count and size of the GIF read back with Pillow, objects at
the pixels their state puts them (mapped with the axis limits, not matplotlib's transform), the cost
highlighting, the wrapped rollout's own costs, and the one-line errors (MuJoCo without GL, MP4
without ffmpeg, an environment without a drawer, bad arguments)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

from saferl.analysis import render
from saferl.analysis.drawers import canvas, mujoco_scene, navigation
from saferl.envs.base import Environment
from saferl.envs.bullet_ball.ball import BallCircle, BallGather
from saferl.envs.bullet_ball.physics import BallState
from saferl.envs.bullet_ball.reach import BallReach, ReachState
from saferl.envs.cartsafe import CartSafe, CartSafeState
from saferl.envs.eco_ant import EcoAnt
from saferl.envs.icy_lake import ICE, IcyLake
from saferl.envs.risk import RiskAugmentation
from saferl.envs.safety_nav.point_goal import PointGoal
from saferl.envs.wrappers import AutoReset, EpisodeStatistics
from saferl.foundation.errors import MissingExtraError

C = canvas.COLORS
PG_SIZE, PG_STEPS = (320, 280), 12
GATHER_SIZE, GATHER_STEPS = (200, 240), 10


def rgb(name):
    return np.array(to_rgb(C[name])) * 255.0


def gif_frames(path):
    im = Image.open(path)
    frames = []
    for i in range(im.n_frames):
        im.seek(i)
        frames.append(np.asarray(im.convert("RGB"), float))
    return frames, im


def is_color(pixels, name, tol=6.0):
    return np.abs(pixels - rgb(name)).max(axis=-1) <= tol


def pixel(scene, x, y):
    """(row, column) of data (x, y) from the scene's limits and drawing box alone."""
    left, top, width, height = scene.axes_box
    (x0, x1), (y0, y1) = scene.xlim, scene.ylim
    return int(top + (y1 - y) / (y1 - y0) * height), int(left + (x - x0) / (x1 - x0) * width)


def data_grid(scene):
    """Data coordinates of every pixel centre of the drawing area: (rows, cols) arrays x, y."""
    left, top, width, height = scene.axes_box
    (x0, x1), (y0, y1) = scene.xlim, scene.ylim
    cols, rows = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    return x0 + cols / width * (x1 - x0), y1 - rows / height * (y1 - y0)


def assert_discs_drawn(frame, scene, centres, radius, name):
    """The pixels of colour ``name`` are those of the discs (radius +- 1 pixel for antialiasing)."""
    left, top, width, height = scene.axes_box
    x, y = data_grid(scene)
    per_pixel = (scene.xlim[1] - scene.xlim[0]) / width
    dist = np.min([np.hypot(x - cx, y - cy) for cx, cy in centres], axis=0)
    count = is_color(frame[top : top + height, left : left + width], name).sum()
    inner, outer = (dist <= radius - per_pixel).sum(), (dist <= radius + per_pixel).sum()
    assert inner <= count <= outer, (name, inner, count, outer)
    for cx, cy in centres:  # and each centre has the colour
        assert is_color(frame[pixel(scene, cx, cy)], name), (name, cx, cy)


def background_point(scene, keep_clear):
    """A data point inside the view at least 0.5 (of the scene's width / 8) from all ``keep_clear`` points."""
    (x0, x1), (y0, y1) = scene.xlim, scene.ylim
    clear = 0.125 * (x1 - x0)
    for x in np.linspace(x0, x1, 23)[1:-1]:
        for y in np.linspace(y0, y1, 23)[1:-1]:
            if np.min(np.hypot(keep_clear[:, 0] - x, keep_clear[:, 1] - y)) > clear:
                return x, y
    raise AssertionError("no clear point in the view")


# --------------------------------------------------------------------------- PointGoal1


@pytest.fixture(scope="module")
def point_goal(tmp_path_factory):
    env = PointGoal()
    params = env.default_params().replace(max_steps=PG_STEPS)
    path = tmp_path_factory.mktemp("render") / "point_goal.gif"

    def act(obs, key):  # scripted: full thrust, turning left
        return jnp.array([1.0, 0.5])

    episode = render.render_episode(env, params, act, jax.random.PRNGKey(3), path, size=PG_SIZE)
    scene = render.Scene(env, params, episode.states, episode.rewards, episode.costs, size=PG_SIZE)
    return env, params, episode, path, scene


def test_point_goal_gif_frames_size_and_rate(point_goal):
    env, params, episode, path, scene = point_goal
    frames, im = gif_frames(path)
    # the episode ends at the environment's truncation (max_steps None); one frame per state
    assert episode.num_steps == PG_STEPS and int(episode.states.time[-1]) == PG_STEPS
    assert len(frames) == PG_STEPS + 1 == im.n_frames
    assert im.size == PG_SIZE and frames[0].shape == (PG_SIZE[1], PG_SIZE[0], 3)
    # default fps: real time, 1 / (0.002 s * 10 substeps) = 50 steps per second, 20 ms a frame
    assert im.info["duration"] == 20
    # equal scales on both axes, and matplotlib's mapping agrees with the limits
    left, top, width, height = scene.axes_box
    assert (scene.xlim[1] - scene.xlim[0]) / width == pytest.approx((scene.ylim[1] - scene.ylim[0]) / height)
    col, row = scene.to_pixel(0.3, -0.7)
    assert (int(row), int(col)) == pixel(scene, 0.3, -0.7)


def test_point_goal_rewards_follow_the_states(point_goal):
    _, _, episode, _, _ = point_goal
    s = episode.states
    dist = np.hypot(*(s.goal[0] - s.pos).T)
    reached = dist[1:] <= 0.3
    expected = dist[:-1] - dist[1:] + np.where(reached, 1.0, 0.0)  # reward_distance 1, reward_goal 1
    assert not reached.any()  # the goal never moves in this short episode
    np.testing.assert_allclose(episode.rewards, expected, atol=1e-5)
    hazard = np.hypot(*(s.hazards[0][None] - s.pos[1:, None]).transpose(2, 0, 1)).min(axis=1)
    np.testing.assert_array_equal(episode.costs, (hazard <= 0.2).astype(float))


def test_point_goal_objects_where_the_state_says(point_goal):
    env, params, episode, path, scene = point_goal
    frame = gif_frames(path)[0][0]
    s = jax.tree.map(lambda x: np.asarray(x[0]), episode.states)
    assert_discs_drawn(frame, scene, s.hazards, float(params.hazard_radius), "hazard")
    assert is_color(frame[pixel(scene, *s.goal)], "goal")
    assert is_color(frame[pixel(scene, *s.vases[0])], "vase")
    # the robot: its body behind the centre, the heading line ahead, nothing behind the body
    r, ahead = float(params.robot_radius), np.array([math.cos(s.heading), math.sin(s.heading)])
    assert is_color(frame[pixel(scene, *(s.pos - 0.6 * r * ahead))], "agent")
    row, col = pixel(scene, *(s.pos + 1.5 * r * ahead))
    assert frame[row - 1 : row + 2, col - 1 : col + 2].mean(axis=-1).min() < 90.0  # the dark heading line
    row, col = pixel(scene, *(s.pos - 1.5 * r * ahead))
    assert is_color(frame[row - 1 : row + 2, col - 1 : col + 2], "background").all()
    clear = np.concatenate([s.hazards, s.vases, s.goal[None], s.pos[None]])
    assert is_color(frame[pixel(scene, *background_point(scene, clear))], "background")
    # the last frame: the robot has moved where the last state says
    last = gif_frames(path)[0][-1]
    h = float(episode.states.heading[-1])
    body = episode.states.pos[-1] - 0.6 * r * np.array([math.cos(h), math.sin(h)])
    assert is_color(last[pixel(scene, *body)], "cost" if episode.costs[-1] > 0 else "agent")


def test_cost_steps_are_highlighted(point_goal):
    env, params, episode, _, _ = point_goal
    costs = np.zeros(PG_STEPS)
    costs[2] = 1.0  # pretend the third step (from state 2 into state 3) entered a hazard
    scene = render.Scene(env, params, episode.states, episode.rewards, costs, size=PG_SIZE)
    top = scene.axes_box[1]
    r = float(params.robot_radius)
    for t, expected in ((2, "agent"), (3, "cost"), (4, "agent")):
        frame = scene.frame(t).astype(float)
        h = float(episode.states.heading[t])
        body = episode.states.pos[t] - 0.6 * r * np.array([math.cos(h), math.sin(h)])
        assert is_color(frame[pixel(scene, *body)], expected, tol=1.0), t
        # the cost counter is red on the costly step only
        assert is_color(frame[:top], "cost", tol=40.0).any() == (t == 3), t


def test_frame_stride_and_a_subclass_drawer(point_goal):
    env, params, episode, _, _ = point_goal
    scene = render.Scene(env, params, episode.states, episode.rewards, episode.costs, size=(64, 64), frame_stride=5)
    assert scene.indices == [0, 5, 10, 12] and scene.title == "PointGoal1"

    class PointGoalVariant(PointGoal):  # a task on PointGoal1's engine without a drawer of its own
        pass

    scene = render.Scene(PointGoalVariant(), params, episode.states, episode.rewards, episode.costs, size=(64, 64))
    assert scene.entry.draw is navigation.draw_navigation and scene.title == "PointGoalVariant"


# --------------------------------------------------------------------------- a ball task


@pytest.fixture(scope="module")
def gather(tmp_path_factory):
    env = BallGather()
    params = env.default_params().replace(max_steps=50)
    path = tmp_path_factory.mktemp("render") / "gather.gif"

    def act(obs, key):  # random actions
        return jax.random.uniform(key, (2,), minval=-1.0, maxval=1.0)

    episode = render.render_episode(env, params, act, 5, path, max_steps=GATHER_STEPS, size=GATHER_SIZE)
    scene = render.Scene(env, params, episode.states, episode.rewards, episode.costs, size=GATHER_SIZE)
    return env, params, episode, path, scene


def test_gather_gif_frames_size_and_objects(gather):
    env, params, episode, path, scene = gather
    frames, im = gif_frames(path)
    assert episode.num_steps == GATHER_STEPS  # stopped by max_steps, before the truncation at 50
    assert len(frames) == GATHER_STEPS + 1 and im.size == GATHER_SIZE
    assert im.info["duration"] == 20  # 60 steps per second (1/240 s x 4), capped at 50 for a GIF
    s = jax.tree.map(lambda x: np.asarray(x[0]), episode.states)
    r = float(params.detection_distance)
    assert_discs_drawn(frames[0], scene, s.bombs, r, "bomb")
    for apple in s.apples:
        assert is_color(frames[0][pixel(scene, *apple)], "apple")
    assert is_color(frames[0][pixel(scene, *s.pos)], "agent")
    clear = np.concatenate([s.apples, s.bombs, s.pos[None]])
    assert is_color(frames[0][pixel(scene, *background_point(scene, clear))], "background")
    assert is_color(frames[-1][pixel(scene, *episode.states.pos[-1])], "cost" if episode.costs[-1] else "agent")


# --------------------------------------------------------------------------- wrapped rollout: IcyLake


def test_wrapped_rollout_gives_the_environments_own_costs(tmp_path):
    env = IcyLake(desc="4x4", max_steps=15)
    wrapped = AutoReset(RiskAugmentation(EpisodeStatistics(env), "indicator"))
    params = wrapped.env.lift_params(env.default_params(), rho=2.0)  # RiskAugmentation's rho

    def act(obs, key):
        return jax.random.randint(key, (), 0, 4)

    path = tmp_path / "lake.gif"
    episode = render.render_episode(wrapped, params, act, 1, path, size=(96, 112))
    inner = render.innermost(episode.states)
    tiles = np.asarray(env.default_params().tiles).reshape(-1)
    # AutoReset was removed: the last state is the episode's last, not a reset
    assert int(inner.time[-1]) == episode.num_steps <= 15
    # the environment's own costs (1 per step ending on ice), not the indicator surrogate's
    np.testing.assert_array_equal(episode.costs, (tiles[inner.position[1:]] == ICE).astype(float))
    assert episode.costs.sum() >= 2  # enough ice that the surrogate's costs would differ
    frames, im = gif_frames(path)
    assert im.n_frames == episode.num_steps + 1 and im.size == (96, 112)
    assert im.info["duration"] == 250  # FrozenLake's render_fps 4
    scene = render.Scene(wrapped, params, episode.states, episode.rewards, episode.costs, size=(96, 112))
    ice_cell = int(np.flatnonzero(tiles == ICE)[0])  # row 0 at the top, as FrozenLake prints the map
    corner = (ice_cell % 4 + 0.15, 4 - ice_cell // 4 - 0.85)  # inside the cell, clear of a centred agent
    assert is_color(frames[0][pixel(scene, *corner)], "ice")
    t = int(np.argmax(episode.costs > 0)) + 1 if episode.costs.any() else 0
    cell = int(inner.position[t])
    centre = (cell % 4 + 0.5, 4 - cell // 4 - 0.5)
    assert is_color(frames[t][pixel(scene, *centre)], "cost" if t else "agent")
    # the trail keeps a mark on every cell a costly step reached
    for cell in set(inner.position[1:][episode.costs > 0].tolist()) - {int(inner.position[-1])}:
        row, col = pixel(scene, cell % 4 + 0.5, 4 - cell // 4 - 0.5)
        assert is_color(frames[-1][row - 1 : row + 2, col - 1 : col + 2], "cost", tol=30.0).any(), cell


# --------------------------------------------------------------------------- drawings of hand-made states


def one_state(cls, **fields):
    return cls(**{k: np.asarray(v)[None] for k, v in fields.items()})


def test_cartsafe_side_view():
    env = CartSafe()
    states = CartSafeState(
        x=np.array([0.0, 1.5]),
        x_dot=np.zeros(2),
        theta=np.array([0.0, math.pi / 2]),
        theta_dot=np.zeros(2),
        time=np.arange(2),
    )
    scene = render.Scene(env, env.default_params(), states, [1.0], [1.0], size=(240, 160))
    first, second = scene.frame(0).astype(float), scene.frame(1).astype(float)
    assert is_color(first[pixel(scene, 0.05, -0.05)], "agent", tol=1.0)
    assert is_color(first[pixel(scene, 0.0, 0.7)], "pole", tol=1.0)  # theta 0: upright
    assert is_color(first[pixel(scene, 0.5, 0.8)], "safe", tol=1.0)  # |x| <= 1
    assert is_color(first[pixel(scene, 1.8, 0.8)], "background", tol=1.0)
    assert is_color(second[pixel(scene, 1.45, -0.05)], "cost", tol=1.0)  # the costly step, |x| > 1
    assert is_color(second[pixel(scene, 1.5 + 0.7, 0.0)], "pole", tol=1.0)  # theta pi/2 leans towards +x
    assert not is_color(second[pixel(scene, 1.5, 0.7)], "pole", tol=20.0)


def test_ball_circle_walls_and_band():
    env = BallCircle()
    p = env.default_params()
    states = one_state(BallState, pos=[0.0, -3.0], vel=[0.0, 0.0], time=0)
    scene = render.Scene(env, p, states, [], [], size=(200, 200))
    frame = scene.frame(0).astype(float)
    assert is_color(frame[pixel(scene, 9.0, 0.0)], "unsafe", tol=1.0)  # |x| > 6
    assert is_color(frame[pixel(scene, 3.0, 3.0)], "background", tol=1.0)
    for angle in (0.0, math.pi / 4, 3 * math.pi / 2):  # faces of the octagon, 11.9 from the origin
        row, col = pixel(scene, 11.9 * math.cos(angle), 11.9 * math.sin(angle))
        assert frame[row - 1 : row + 2, col - 1 : col + 2].mean(axis=-1).min() < 120.0, angle
        row, col = pixel(scene, 11.0 * math.cos(angle), 11.0 * math.sin(angle))
        assert frame[row - 1 : row + 2, col - 1 : col + 2].mean(axis=-1).min() > 200.0, angle


def test_ball_reach_box_follows_its_orbit():
    env = BallReach()
    p = env.default_params()
    spawn, phase, steps = np.array([3.0, -2.0]), 0.3, 30
    states = one_state(
        ReachState,
        pos=[-5.0, -5.0],
        vel=[0.0, 0.0],
        goal=[-4.0, 4.0],
        goal_index=0,
        box_spawn=spawn,
        box_phase=phase,
        box_yaw=0.0,
        puddles=np.array([[5.0, 5.0]] * 8),
        last_dist=1.0,
        time=steps,
        key=jax.random.PRNGKey(0),
    )
    scene = render.Scene(env, p, states, [], [], size=(240, 240))
    frame = scene.frame(0).astype(float)
    angle = steps / 60.0 + phase  # 1 rad/s at 60 steps per second (version 0.1)
    centre = spawn + 0.7 * np.array([math.sin(angle), math.cos(angle)])
    assert is_color(frame[pixel(scene, *centre)], "box", tol=1.0)
    assert not is_color(frame[pixel(scene, *(2 * centre - spawn))], "box", tol=20.0)  # 0.7 beyond: outside
    assert is_color(frame[pixel(scene, 5.0 + 1.3, 5.0)], "hazard", tol=1.0)  # puddle cost region, radius 1.5
    assert is_color(frame[pixel(scene, -4.0 + 1.2, 4.0)], "goal", tol=1.0)  # goal radius 1.3


# --------------------------------------------------------------------------- errors


def test_mujoco_without_gl_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(mujoco_scene, "mujoco_gl_backend", lambda: None)
    env = EcoAnt.__new__(EcoAnt)  # no MJX model is built

    def act(obs, key):
        raise AssertionError("the rollout must not start")

    with pytest.raises(MissingExtraError) as err:
        render.render_episode(env, None, act, 0, tmp_path / "ant.gif")
    message = str(err.value)
    assert "\n" not in message
    for words in ("MUJOCO_GL=egl", "MUJOCO_GL=osmesa", "libegl1", "libosmesa6", "PyOpenGL"):
        assert words in message


def test_gl_detection_survives_a_missing_mujoco(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "mujoco", None)  # import mujoco raises ImportError
    assert mujoco_scene.mujoco_gl_backend() is None


def test_unsupported_environment_is_one_line(tmp_path):
    class Unknown(Environment):
        pass

    for env in (Unknown(), EpisodeStatistics(Unknown())):
        with pytest.raises(ValueError) as err:
            render.render_episode(env, None, None, 0, tmp_path / "x.gif")
        message = str(err.value)
        assert "\n" not in message and "'Unknown'" in message
        for name in (
            "PointGoal1",
            "SafetyBallRun",
            "SafetyBallCircle",
            "SafetyBallGather",
            "SafetyBallReach",
            "CartSafe",
            "IcyLake",
            "EcoAnt",
        ):
            assert name in message


def test_output_and_argument_errors(monkeypatch, tmp_path):
    env = CartSafe()
    states = CartSafeState(*(np.zeros(1),) * 4, time=np.zeros(1, int))
    with pytest.raises(ValueError, match=r"\.gif or \.mp4"):
        render.render_states(env, env.default_params(), states, [], [], tmp_path / "x.png")
    monkeypatch.setattr(render, "_ffmpeg_available", lambda: False)
    with pytest.raises(MissingExtraError, match=r"ffmpeg.*\.gif"):
        render.render_states(env, env.default_params(), states, [], [], tmp_path / "x.mp4")
    for kwargs, what in (({"size": (10, 480)}, "size"), ({"fps": 0}, "fps"), ({"frame_stride": 0}, "frame_stride")):
        with pytest.raises(ValueError, match=what):
            render.render_states(env, env.default_params(), states, [], [], tmp_path / "x.gif", **kwargs)
    with pytest.raises(ValueError, match="2 states needs 1 rewards"):
        render.render_states(
            env, env.default_params(), jax.tree.map(lambda x: np.repeat(x, 2), states), [], [], tmp_path / "x.gif"
        )
    with pytest.raises(ValueError, match="max_steps"):
        render.rollout_states(env, env.default_params(), None, 0, max_steps=0)

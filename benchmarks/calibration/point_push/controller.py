"""Scripted push controller on ground-truth positions (numpy, batched): get behind the box (on
the far side from the goal), then drive through the box towards the goal."""
import numpy as np


def wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def act(pos, heading, box, goal):
    pos, box, goal = np.atleast_2d(pos), np.atleast_2d(box), np.atleast_2d(goal)
    heading = np.atleast_1d(heading)
    u = goal - box
    u = u / np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-9)
    perp = np.stack([-u[:, 1], u[:, 0]], axis=1)
    rel = pos - box
    along = np.sum(rel * u, axis=1)  # < 0: behind the box
    side = np.sum(rel * perp, axis=1)
    aligned = (along < -0.2) & (np.abs(side) < 0.1 - 0.1 * along)
    behind = box - 0.5 * u
    # the straight way to the behind point is blocked by the box: go round it first
    sgn = np.where(side >= 0, 1.0, -1.0)[:, None]
    around = box + 0.6 * sgn * perp - 0.35 * u
    blocked = (along > -0.35) & (np.abs(side) < 0.5)
    target = np.where(aligned[:, None], box + 0.5 * u + 0.8 * (box - pos - 0.0), np.where(blocked[:, None], around, behind))
    # when pushing, aim along the line robot -> box corrected towards the box -> goal line
    d = target - pos
    err = wrap(np.arctan2(d[:, 1], d[:, 0]) - heading)
    turn = np.clip(3.0 * err, -1, 1)
    thrust = np.where(np.abs(err) < 0.35, 1.0, np.where(np.abs(err) < 1.2, 0.02, 0.0))
    return np.stack([thrust, turn], axis=1)

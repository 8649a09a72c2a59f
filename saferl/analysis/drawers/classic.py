"""The drawers of the small tasks: CartSafe (side view, the cart and its pole), ToyReach (the line and the path
against time) and IcyLake (the grid, the agent and its trail)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib import patches

from saferl.analysis.drawers.canvas import COLORS, agent, scalar
from saferl.analysis.drawers.registry import Drawing, EpisodeView, register_drawer
from saferl.envs.cartsafe import CartSafe
from saferl.envs.icy_lake import GOAL, ICE, START, IcyLake
from saferl.envs.toy import ToyReach

# --------------------------------------------------------------------------- CartSafe

_CART_HALF = (0.25, 0.15)  # drawn half-width and half-height of the cart (m); CartSafe has no cart size


@register_drawer(CartSafe, "CartSafe", lambda env, p: 1.0 / float(p.tau))
def draw_cartsafe(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    limit, end, pole = scalar(p.x_constraint), scalar(p.x_threshold), 2.0 * scalar(p.length)
    ax.axvspan(-limit, limit, color=COLORS["safe"], lw=0, zorder=0)
    for edge in (end, -end):
        ax.axvline(edge, color=COLORS["cost"], lw=1.5, ls="--", zorder=0.5)
    ax.axhline(0.0, color=COLORS["wall"], lw=1.0, zorder=0.6)
    w, h = _CART_HALF
    cart = patches.Rectangle((0.0, -h), 2 * w, 2 * h, facecolor=COLORS["agent"], edgecolor="none", zorder=3)
    ax.add_patch(cart)
    (rod,) = ax.plot([], [], color=COLORS["pole"], lw=4.0, zorder=4, solid_capstyle="round")
    x, theta = np.asarray(s.x, float), np.asarray(s.theta, float)

    def update(t):
        cart.set_x(x[t] - w)
        cart.set_facecolor(COLORS["cost"] if view.costly[t] else COLORS["agent"])
        rod.set_data([x[t], x[t] + pole * math.sin(theta[t])], [0.0, pole * math.cos(theta[t])])

    reach = max(end, float(np.abs(x).max())) + 0.6
    return Drawing((-reach, reach, -pole - 0.3, pole + 0.3), update)


# --------------------------------------------------------------------------- ToyReach


@register_drawer(ToyReach, "ToyReach", lambda env, p: 10.0)  # a tutorial task without a time step: 10 frames/s
def draw_toy_reach(ax, view: EpisodeView) -> Drawing:
    """The line x in [-1, 1] with the costly region x > cost_threshold shaded; the agent moves along it and
    its trail is drawn against time (upwards), so a frame shows the whole path so far."""
    threshold = scalar(view.params.cost_threshold)
    ax.axvspan(threshold, 1.0, color=COLORS["unsafe"], lw=0, zorder=0)
    ax.axvline(threshold, color=COLORS["cost"], lw=1.0, ls="--", zorder=0.5)
    x = np.asarray(view.states.x, float)
    height = max(1.0, float(len(x) - 1))
    points = np.stack([x, np.arange(len(x)) / height * 2.0 - 1.0], 1)
    move = agent(ax, view, points, 0.05)
    return Drawing((-1.05, 1.05, -1.1, 1.1), move)


# --------------------------------------------------------------------------- IcyLake

_TILE_COLORS = {ICE: "ice", GOAL: "goal", START: "start"}  # every other tile is frozen


@register_drawer(IcyLake, "IcyLake", lambda env, p: 4.0)  # Gymnasium FrozenLake's metadata["render_fps"]
def draw_icy_lake(ax, view: EpisodeView) -> Drawing:
    tiles = np.asarray(view.params.tiles)
    n_rows, n_cols = tiles.shape
    for r in range(n_rows):
        for c in range(n_cols):
            color = COLORS[_TILE_COLORS.get(int(tiles[r, c]), "frozen")]
            ax.add_patch(
                patches.Rectangle(
                    (c, n_rows - 1 - r), 1.0, 1.0, facecolor=color, edgecolor=COLORS["arena"], lw=0.8, zorder=0.5
                )
            )
    flat = np.asarray(view.states.position, int)
    centres = np.stack([flat % n_cols + 0.5, n_rows - 1 - flat // n_cols + 0.5], 1).astype(float)
    move = agent(ax, view, centres, 0.3)
    return Drawing((0.0, float(n_cols), 0.0, float(n_rows)), move)

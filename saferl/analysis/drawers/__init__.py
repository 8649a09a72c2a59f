"""What each environment family looks like: the drawers behind :mod:`saferl.analysis.render`, one module a family.

A drawer is one function ``draw(ax, view) -> Drawing`` per family.  It draws the scene of an
episode (the :class:`EpisodeView`: the innermost environment, its parameters and its stacked
states) on a matplotlib ``Axes`` once, and returns the scene's extent in data units and an
``update(t)`` that moves the artists to state ``t``.  :func:`~.registry.register_drawer` keys a drawer by
the environment class, or by the class's name for environments a drawer module does not import; a
subclass without a drawer of its own gets its parent's.  A new environment is one drawer in its family's
module, or one registration of an existing drawer: a navigation task on PointGoal1's engine reuses
:func:`~.navigation.draw_navigation`, which draws whichever of the objects of :data:`~.navigation.NAV_OBJECTS`
its state has (a new kind of object is one row there), and an MJX task whose state carries ``qpos`` and whose
environment has ``mj_model`` reuses :func:`~.mujoco_scene.draw_mujoco`.

Modules: :mod:`.registry` (what a drawer receives and returns, the registry), :mod:`.canvas` (the colours
and the pieces the 2-D drawers share), then one module a family: :mod:`.navigation`, :mod:`.ball`,
:mod:`.classic` (CartSafe, ToyReach, IcyLake) and :mod:`.mujoco_scene`.  Importing this package registers
them all.

The pictures
------------
* Navigation (PointGoal1; PointPush1 by name): top-down; the placement square
  ``[-placement_extent, placement_extent]^2`` dashed (level 1 has no walls), hazards, vases,
  pillars and the goal as discs of their radii (hazard: the cost region of the robot's centre;
  goal: the arrival region), a push box (``box_pos``, ``box_yaw``, half-size ``box_size``) where
  the state has one, the robot as a disc of ``robot_radius`` with a line along its heading, and
  its trail.
* Ball tasks: top-down.  Run: the corridor ``|y| <= y_limit`` (outside shaded); Circle: the
  octagon's walls (inner faces at ``wall_distance``), the circle of ``circle_radius`` dashed,
  ``|x| > x_limit`` shaded; Gather: the room's walls, apples and bombs as discs of
  ``detection_distance`` (the ball's centre collects them inside), hollow once collected;
  Reach: the room, the goal disc (``goal_radius``), the puddles (``puddle_cost_distance``, the
  cost region of the ball's centre) and the moving box at its pose of each step.
* CartSafe: side view; the safe region ``|x| <= x_constraint`` shaded, the termination lines
  ``|x| = x_threshold``, the cart and its pole (length ``2 * length``, theta = 0 upright,
  positive theta leaning towards +x, as in gym's CartPole drawing).
* ToyReach: the line x in [-1, 1], the costly region x > ``cost_threshold`` shaded, the agent's path
  against time (upwards).
* IcyLake: the grid (row 0 at the top, as FrozenLake prints it), the agent and its trail.
* EcoAnt and the MJX locomotion tasks (``LocomotionEnv`` by name): MuJoCo's own renderer
  (``mujoco.Renderer``) with a camera tracking the torso (the first body where there is none);
  it needs a headless OpenGL backend (:func:`~.mujoco_scene.mujoco_gl_backend`).

Every step whose cost is positive is drawn in the cost colour: the robot, ball, cart or agent
on that frame and a mark on the trail where it happened (not for EcoAnt, whose energy cost is
positive on every step).  Colours follow Safety-Gymnasium's convention where it has one
(Ji et al., "Safety-Gymnasium: A Unified Safe Reinforcement Learning Benchmark", arXiv:2310.12567:
hazards blue, goal green, vases cyan, pillars lavender, the push box yellow); the rest are this
package's (:data:`~.canvas.COLORS`).

Compared with the originals' renderers: Safety-Gymnasium and Bullet-Safety-Gym render their 3-D
scenes (MuJoCo, PyBullet) from a camera; these are 2-D schematics of what the JAX ports simulate
(the planar state), drawn to scale, with the regions that decide reward and cost instead of the
objects' visual meshes.  Gymnasium's CartPole and FrozenLake renderers draw the same side view and
grid.  Only the MuJoCo tasks are rendered as the original would.
"""

# importing the family modules registers their drawers (in this order)
from saferl.analysis.drawers import navigation  # noqa: E402, F401, I001
from saferl.analysis.drawers import ball, classic, mujoco_scene  # noqa: E402, F401

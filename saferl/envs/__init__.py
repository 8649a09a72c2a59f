"""Environments: the functional CMDP API (:mod:`saferl.envs.base`), wrappers and the built-ins.

Importing the package registers every built-in environment: each module below runs its
``@register`` decorators when imported (the comment above an import names what it registers).  A new
environment is one module plus its name in an import here.
EcoAnt imports MuJoCo only when it is built, so this works without the ``mjx`` extra.
"""

# CartSafe, EcoAnt, IcyLake, ToyReach, ToyReach2
from saferl.envs import cartsafe, eco_ant, icy_lake, toy  # noqa: F401

# SafetyBallRun, SafetyBallCircle, SafetyBallGather; SafetyBallReach
from saferl.envs.bullet_ball import ball  # noqa: F401
from saferl.envs.bullet_ball import reach as ball_reach  # noqa: F401

# CarButton1, PointGoal1, PointPush1, RacecarCircle1
from saferl.envs.safety_nav import car_button, point_goal, point_push, racecar_circle  # noqa: F401

# SafetyAntVelocity, SafetyHalfCheetahVelocity, SafetyHopperVelocity, SafetyHumanoidVelocity
from saferl.envs.velocity import ant_velocity, half_cheetah_velocity, hopper_velocity, humanoid_velocity  # noqa: F401

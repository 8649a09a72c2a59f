"""Environments: the functional CMDP API (:mod:`saferl.envs.base`), wrappers and the built-ins.

Importing the package registers every built-in environment: each module below runs its
``@register`` decorators when imported.  A new environment is one module plus one line here.
EcoAnt imports MuJoCo only when it is built, so this works without the ``mjx`` extra.
"""

from saferl.envs import (
    cartsafe,  # noqa: F401  (CartSafe)
    eco_ant,  # noqa: F401  (EcoAnt)
    icy_lake,  # noqa: F401  (IcyLake)
    toy,  # noqa: F401  (ToyReach)
)
from saferl.envs.bullet_ball import ball  # noqa: F401  (SafetyBallRun, SafetyBallCircle, SafetyBallGather)
from saferl.envs.bullet_ball import reach as ball_reach  # noqa: F401  (SafetyBallReach)
from saferl.envs.safety_nav import (
    car_button,  # noqa: F401  (CarButton1)
    point_goal,  # noqa: F401  (PointGoal1)
    point_push,  # noqa: F401  (PointPush1)
    racecar_circle,  # noqa: F401  (RacecarCircle1)
)
from saferl.envs.velocity import (
    ant_velocity,  # noqa: F401  (SafetyAntVelocity)
    half_cheetah_velocity,  # noqa: F401  (SafetyHalfCheetahVelocity)
    hopper_velocity,  # noqa: F401  (SafetyHopperVelocity)
    humanoid_velocity,  # noqa: F401  (SafetyHumanoidVelocity)
)

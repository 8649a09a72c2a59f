"""Environments: the functional CMDP API (:mod:`saferl.envs.base`), wrappers and the built-ins.

Importing the package registers every built-in environment: each module below runs its
``@register`` decorators when imported.  A new environment is one module plus one line here.
EcoAnt imports MuJoCo only when it is built, so this works without the ``mjx`` extra.
"""

from saferl.envs.velocity import ant_velocity  # noqa: F401  (SafetyAntVelocity)
from saferl.envs.bullet_ball import ball  # noqa: F401  (SafetyBallRun, SafetyBallCircle, SafetyBallGather)
from saferl.envs.bullet_ball import reach as ball_reach  # noqa: F401  (SafetyBallReach)
from saferl.envs.safety_nav import car_button  # noqa: F401  (CarButton1)
from saferl.envs import cartsafe  # noqa: F401  (CartSafe)
from saferl.envs import eco_ant  # noqa: F401  (EcoAnt)
from saferl.envs.velocity import half_cheetah_velocity  # noqa: F401  (SafetyHalfCheetahVelocity)
from saferl.envs.velocity import hopper_velocity  # noqa: F401  (SafetyHopperVelocity)
from saferl.envs.velocity import humanoid_velocity  # noqa: F401  (SafetyHumanoidVelocity)
from saferl.envs import icy_lake  # noqa: F401  (IcyLake)
from saferl.envs.safety_nav import point_goal  # noqa: F401  (PointGoal1)
from saferl.envs.safety_nav import point_push  # noqa: F401  (PointPush1)
from saferl.envs.safety_nav import racecar_circle  # noqa: F401  (RacecarCircle1)
from saferl.envs import toy  # noqa: F401  (ToyReach)

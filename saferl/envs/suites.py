"""Named suites of registered environments: the task lists that benchmarks and paper experiments share."""

#: the eight tasks of the C-TRPO paper's benchmark ("Embedding Safety into RL: A New Take on Trust Region
#: Methods", arXiv:2411.02957, Table 1), in the order of its columns
CTRPO_BENCHMARK = (
    "SafetyAntVelocity",
    "SafetyHalfCheetahVelocity",
    "SafetyHumanoidVelocity",
    "SafetyHopperVelocity",
    "CarButton1",
    "PointGoal1",
    "RacecarCircle1",
    "PointPush1",
)

#: suite name -> its environment names (``saferl bench --env ctrpo-benchmark``)
SUITES = {"ctrpo-benchmark": CTRPO_BENCHMARK}

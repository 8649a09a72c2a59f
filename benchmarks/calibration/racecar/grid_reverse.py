# The steady turn in reverse (session 21): grid.py's columns at negative throttles, for refitting the reverse turns
# (RacecarCircle1's learners reverse at full lock, where the port and the original part: docs/design.md).
from grid import steady_turns

steady_turns([-4.0, -8.0, -12.0, -16.0, -20.0], [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.785, -0.3, -0.785],
             'grid_reverse.json')

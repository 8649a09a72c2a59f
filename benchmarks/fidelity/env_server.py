"""One original Safety-Gymnasium task served over stdin/stdout, a JSON object per line (fidelity venv, no JAX).

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/env_server.py SafetyRacecarCircle1-v0 [--unclipped]

Lets a process of the main venv (JAX, saferl, Gymnasium 1.x) act on the original task, which pins Gymnasium
0.28.1: ``policy_transfer.py`` runs saferl-trained policies here.  Requests and answers:

* ``{"spaces": true}`` -> ``{"obs_dim", "action_dim"}``
* ``{"reset": SEED}`` (``null``: unseeded) -> ``{"obs": [...]}``
* ``{"step": [a_0, ..., a_n]}`` in the harness's ``[-1, 1]^n`` (mapped onto the task's action box as
  ``SafeRescaleAction(-1, 1)`` does: :func:`suite_tasks.to_original`, clipped first unless ``--unclipped``)
  -> ``{"obs", "reward", "cost", "terminated", "truncated"}``
* ``{"close": true}`` or end of input -> the process exits.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_tasks import to_original  # noqa: E402


def serve(env_id: str, clip: bool = True) -> None:
    warnings.filterwarnings("ignore")
    out, sys.stdout = sys.stdout, sys.stderr  # what the packages print on import stays off the answers
    import safety_gymnasium

    env = safety_gymnasium.make(env_id)
    low, high = env.action_space.low, env.action_space.high
    for line in sys.stdin:
        request = json.loads(line)
        if "spaces" in request:
            answer = {"obs_dim": int(env.observation_space.shape[0]), "action_dim": int(low.shape[0])}
        elif "reset" in request:
            seed = request["reset"]
            obs, _ = env.reset(seed=None if seed is None else int(seed))
            answer = {"obs": obs.tolist()}
        elif "step" in request:
            obs, reward, cost, terminated, truncated, _ = env.step(to_original(request["step"], low, high, clip))
            answer = {
                "obs": obs.tolist(),
                "reward": float(reward),
                "cost": float(cost),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
            }
        else:
            break
        out.write(json.dumps(answer) + "\n")
        out.flush()
    env.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 2) or (len(args) == 2 and args[1] != "--unclipped"):
        sys.exit("usage: env_server.py ENV_ID [--unclipped] (a Safety-Gymnasium id, e.g. SafetyRacecarCircle1-v0)")
    serve(args[0], clip=len(args) == 1)

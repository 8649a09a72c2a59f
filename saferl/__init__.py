"""saferl: safe (constrained) reinforcement learning in JAX.

The Python API (:mod:`saferl.api`, docs/api.md)::

    run = saferl.train("ppo_lag", "ToyReach", steps=20_000, seeds=2, constraint={"type": "expected", "limit": 10})
    run = saferl.load("runs/ppo_lag-ToyReach-20260101-120000")
    env, params = saferl.make_env("ToyReach")

Importing saferl imports nothing else: the API (and JAX with it) is imported on first use.
"""

__version__ = "0.1.0"

_API = ("ConfigError", "Policy", "Run", "RunError", "load", "make_env", "train")
__all__ = list(_API)


def __getattr__(name):
    if name in _API:
        from saferl import api

        return getattr(api, name)
    raise AttributeError(f"module 'saferl' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))

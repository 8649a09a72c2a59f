"""Gymnasium bridge, environment side: Gymnasium-API environments stepped on the host.

saferl's own environments are functional and run inside the compiled loop.  A
Gymnasium environment (MuJoCo, PyBullet, ...) runs in Python, so it is stepped
here, on the host, one copy after the other; the policy and the update stay
compiled (``saferl/training/gym_trainer.py``).  :class:`HostVecEnv` does on the host what
``EpisodeStatistics``, ``AutoReset`` and ``VecEnv`` (``saferl/envs/wrappers.py``)
do in JAX, so the arrays it returns fill the same ``Trajectory`` fields.

Where the cost comes from (``cost_from``):

* ``"step"`` -- Safety-Gymnasium: ``obs, reward, cost, terminated, truncated, info = env.step(a)``;
* ``"info"`` -- Bullet-Safety-Gym: ``obs, reward, terminated, truncated, info = env.step(a)``
  with the cost in ``info["cost"]`` (``cost_key`` names another key);
* ``"auto"`` (default) -- decided on a probe step when the vector is built:
  six values mean ``"step"``, five values with ``info[cost_key]`` mean ``"info"``;
  anything else is a ``ValueError`` that names the problem.

The cost may be a scalar or a vector (one entry per constraint); its shape is
read on the probe step and checked on every step after.

Gymnasium's own wrappers expect five values from ``step``: the bridge builds environments
without the passive env checker and makes ``TimeLimit`` keep the 6-tuple (see
:func:`host_steppable`), so a 6-tuple environment registered with ``gymnasium.register``
works through ``gym:ID``.  Every host step is checked for non-finite observations,
rewards and costs (:class:`NonFiniteError`).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from saferl.envs.base import Box, Discrete
from saferl.foundation.errors import require

PREFIX = "gym:"
COST_SOURCES = ("auto", "step", "info")
#: packages whose environments return the 6-tuple, which gymnasium.make's wrappers reject:
#: "gym:MODULE:ID" builds them with MODULE.make(ID) instead
OWN_MAKE = ("safety_gymnasium",)
#: keys of the config's ``env_params`` that configure the bridge, not the environment
BRIDGE_OPTIONS = ("cost_from", "cost_key", "clip_actions")


class NonFiniteError(ValueError):
    """A host environment returned a NaN or infinite observation, reward or cost."""


def _gymnasium():
    """The ``gymnasium`` module, or :class:`~saferl.foundation.errors.MissingExtraError` naming the ``gym`` extra."""
    return require("gymnasium", "gym", "Gymnasium environments (env gym:...)")


def is_gym_id(name: Any) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


@functools.cache
def _any_tuple_time_limit():
    """A ``TimeLimit`` that sets ``truncated`` (second to last) in 5- and 6-value steps alike."""

    class AnyTupleTimeLimit(_gymnasium().wrappers.TimeLimit):
        def step(self, action):
            result = self.env.step(action)
            self._elapsed_steps += 1
            if self._elapsed_steps >= self._max_episode_steps and isinstance(result, tuple) and len(result) in (5, 6):
                result = (*result[:-2], True, result[-1])
            return result

    return AnyTupleTimeLimit


def host_steppable(env):
    """``env`` with the Gymnasium wrappers that reject a 6-value step made safe for it.

    ``PassiveEnvChecker`` layers are dropped: on the first step the checker raises for
    six values, and the bridge checks every step itself.  ``TimeLimit`` layers become a
    subclass that sets ``truncated`` in 5- and 6-value steps alike.  Layers are relinked
    in place (the wrapper above a dropped layer now wraps the one below); the outermost
    environment is returned.  Other wrappers are kept as they are.
    """
    gym = _gymnasium()
    checker, time_limit = gym.wrappers.PassiveEnvChecker, gym.wrappers.TimeLimit
    limit_cls = _any_tuple_time_limit()
    top, parent, node = env, None, env
    while isinstance(node, gym.Wrapper):
        if isinstance(node, checker):
            replacement = node.env
        elif isinstance(node, time_limit) and not isinstance(node, limit_cls):
            replacement = limit_cls(node.env, node._max_episode_steps)
            replacement._elapsed_steps = node._elapsed_steps
        else:
            parent, node = node, node.env
            continue
        if parent is None:
            top = replacement
        else:
            parent.env = replacement
        node = replacement
    return top


def env_name(env) -> str:
    """The Gymnasium id of ``env`` (its spec), else its class name."""
    spec = getattr(getattr(env, "unwrapped", env), "spec", None) or getattr(env, "spec", None)
    return str(getattr(spec, "id", None) or type(getattr(env, "unwrapped", env)).__name__)


def make_gym_env(id_or_callable: str | Callable, **kwargs):
    """Build one Gymnasium environment.

    * a callable: ``id_or_callable(**kwargs)``;
    * ``"gym:ID"`` (or plain ``"ID"``): ``gymnasium.make(ID, **kwargs)``;
      ``"gym:MODULE:ID"`` imports MODULE first, the Gymnasium convention, e.g.
      ``"gym:bullet_safety_gym:SafetyBallRun-v0"``;
    * ``"gym:safety_gymnasium:ID"``: ``safety_gymnasium.make(ID, **kwargs)`` (its own wrappers
      keep the 6-tuple step).

    ``gymnasium.make`` is called with ``disable_env_checker=True`` (unless ``kwargs`` say
    otherwise) and its ``TimeLimit`` is made 6-tuple safe (:func:`host_steppable`), so an
    environment registered with ``gymnasium.register`` may return Safety-Gymnasium's 6 values.
    """
    if callable(id_or_callable):
        return id_or_callable(**kwargs)
    if not isinstance(id_or_callable, str) or not id_or_callable.removeprefix(PREFIX):
        raise ValueError(f"expected a Gymnasium id such as 'gym:CartPole-v1' or a callable, got {id_or_callable!r}")
    env_id = id_or_callable.removeprefix(PREFIX)
    module, _, name = env_id.rpartition(":")
    if module in OWN_MAKE:
        return importlib.import_module(module).make(name, **kwargs)
    gym = _gymnasium()
    kwargs.setdefault("disable_env_checker", True)
    return host_steppable(gym.make(env_id, **kwargs))


def as_env_list(envs) -> list:
    """A list of environments from a list/tuple, a ``gymnasium.vector.SyncVectorEnv`` or one env.

    A ``SyncVectorEnv`` is taken apart: its copies are stepped (and auto-reset) here,
    which also works for 6-tuple environments the vector class could not step itself.
    """
    if isinstance(envs, (list, tuple)):
        if not envs:
            raise ValueError("need at least one environment, got an empty list")
        return list(envs)
    sub = getattr(envs, "envs", None)
    if isinstance(sub, (list, tuple)) and sub:  # SyncVectorEnv and its wrappers
        return list(sub)
    if hasattr(envs, "num_envs") and hasattr(envs, "single_action_space"):
        raise ValueError(
            f"{type(envs).__name__} does not expose its environments; pass a list of environments "
            "or a gymnasium.vector.SyncVectorEnv (AsyncVectorEnv is not supported)"
        )
    if hasattr(envs, "step") and hasattr(envs, "reset"):
        return [envs]
    raise ValueError(f"expected Gymnasium environments (a list, a SyncVectorEnv or one env), got {type(envs).__name__}")


def convert_space(space, what: str):
    """A Gymnasium ``Box``/``Discrete`` as saferl's ``Box``/``Discrete`` (Boxes flattened)."""
    spaces = _gymnasium().spaces
    if isinstance(space, spaces.Box):
        low = np.asarray(np.broadcast_to(space.low, space.shape), np.float32).reshape(-1)
        high = np.asarray(np.broadcast_to(space.high, space.shape), np.float32).reshape(-1)
        return Box(low, high, (int(np.prod(space.shape)),))
    if isinstance(space, spaces.Discrete):
        return Discrete(int(space.n))
    hint = " (wrap it in gymnasium.wrappers.FlattenObservation)" if what == "observation" else ""
    raise ValueError(f"unsupported {what} space {space}: the Gymnasium bridge takes Box or Discrete{hint}")


def _describe(result) -> str:
    return f"{len(result)} values" if isinstance(result, tuple) else f"a {type(result).__name__}"


def _old_api_hint(result) -> str:
    if isinstance(result, tuple) and len(result) == 4:
        return "; 4 values (obs, reward, done, info) is the pre-0.26 Gym API, which is not supported"
    return ""


@dataclass
class HostStep:
    """One vector step, numpy arrays with a leading ``num_envs`` axis.

    ``obs`` is the observation to act on next (the first of a new episode where one
    ended); ``final_obs`` the observation the step produced, before any reset.  The
    ``episode_*`` fields are running totals, valid where ``episode_done``.
    """

    obs: np.ndarray  # (N, D) float32
    reward: np.ndarray  # (N,) float32
    cost: np.ndarray  # (N, C) float32
    terminated: np.ndarray  # (N,) bool
    truncated: np.ndarray
    final_obs: np.ndarray
    episode_done: np.ndarray
    episode_return: np.ndarray
    episode_cost: np.ndarray  # (N, C)
    episode_discounted_cost: np.ndarray
    episode_length: np.ndarray  # (N,) int32


class HostVecEnv:
    """``N`` Gymnasium environments stepped on the host with auto-reset and episode statistics.

    ``gamma_c`` discounts ``episode_discounted_cost`` as ``EpisodeStatistics`` does.  ``clip_actions``
    (default True, as ``ClipAction`` clips before a compiled environment) clips Box actions to the action space;
    False sends the policy's sample as drawn, as the C-TRPO authors' harness does (``SafeRescaleAction`` alone):
    the environment must then accept actions outside its space, as Safety-Gymnasium's velocity tasks do.
    Building the vector probes the first environment with one step (a zero / first
    action) to find where the cost is and its shape; :meth:`reset` must follow.
    Gymnasium wrappers that reject a 6-value step are made safe (:func:`host_steppable`).

    ``name`` labels the error messages (default: the first environment's Gymnasium id, else
    its class name).  Every observation (from ``step`` and ``reset``), reward and cost is
    checked: a NaN or infinity raises :class:`NonFiniteError` naming the environment, the
    field, the vector step (counted from :meth:`reset`, 1-based) and which copy; the vector
    must then be reset before it steps again.
    """

    def __init__(
        self,
        envs,
        cost_from: str = "auto",
        cost_key: str = "cost",
        gamma_c: float = 1.0,
        probe_seed: int = 0,
        name: str | None = None,
        clip_actions: bool = True,
    ):
        if cost_from not in COST_SOURCES:
            raise ValueError(f"cost_from must be one of {', '.join(COST_SOURCES)}; got {cost_from!r}")
        if not isinstance(clip_actions, bool):
            raise ValueError(f"clip_actions must be true or false; got {clip_actions!r}")
        self.clip_actions = clip_actions
        _gymnasium()
        self.envs = [host_steppable(env) for env in as_env_list(envs)]
        self.num_envs = len(self.envs)
        self.name = str(name) if name else env_name(self.envs[0])
        self._t = 0
        self.cost_key = str(cost_key)
        self.gamma_c = float(gamma_c)
        first = self.envs[0]
        for i, env in enumerate(self.envs[1:], start=1):
            if env.observation_space != first.observation_space or env.action_space != first.action_space:
                raise ValueError(
                    f"{self.name}: environment {i} has other spaces than environment 0; all copies must match"
                )
        self._obs_space = first.observation_space
        self._act_space = first.action_space
        self.observation_space = convert_space(self._obs_space, "observation")
        self.action_space = convert_space(self._act_space, "action")
        self._one_hot = isinstance(self.observation_space, Discrete)
        if self._one_hot:
            self.obs_dim = self.observation_space.n
            self.observation_space = Box(0.0, 1.0, (self.obs_dim,))  # one-hot
        else:
            self.obs_dim = self.observation_space.shape[0]
        self.cost_from = self._requested = cost_from
        self.cost_shape = self._probe(probe_seed)
        self.cost_channels = int(np.prod(self.cost_shape)) if self.cost_shape else 1
        self._ready = False

    # ------------------------------------------------------------------ conversions
    def _obs(self, obs, i: int) -> np.ndarray:
        if self._one_hot:
            out = np.zeros((self.obs_dim,), np.float32)
            out[int(obs) - int(getattr(self._obs_space, "start", 0))] = 1.0
            return out
        out = np.asarray(obs, np.float32).reshape(-1)
        if out.shape != (self.obs_dim,):
            raise ValueError(
                f"environment {i} returned an observation of {out.size} numbers; its observation "
                f"space has {self.obs_dim}"
            )
        return out

    def _env_actions(self, actions: np.ndarray) -> list:
        """The environments' actions: Box actions clipped (as ``ClipAction``; not with ``clip_actions=False``)
        and reshaped; Discrete offset."""
        space = self._act_space
        if isinstance(self.action_space, Discrete):
            start = int(getattr(space, "start", 0))
            return [int(a) + start for a in np.asarray(actions).reshape(len(actions))]
        if self.clip_actions:
            actions = np.clip(actions, self.action_space.low, self.action_space.high)
        return [a.reshape(space.shape) for a in np.asarray(actions).astype(space.dtype)]

    def _neutral_action(self):
        if isinstance(self.action_space, Discrete):
            return self._env_actions(np.zeros((1,), np.int32))[0]
        return self._env_actions(np.zeros((1,) + self.action_space.shape, np.float32))[0]

    # ------------------------------------------------------------------ the step contract
    def _probe(self, seed: int) -> tuple[int, ...]:
        self._reset_one(0, seed)
        result = self.envs[0].step(self._neutral_action())
        if self.cost_from == "auto":
            n = len(result) if isinstance(result, tuple) else None
            if n == 6:
                self.cost_from = "step"
            elif n == 5:
                info = result[4]
                if not isinstance(info, dict) or self.cost_key not in info:
                    keys = ", ".join(map(str, info)) if isinstance(info, dict) else type(info).__name__
                    raise ValueError(
                        f"{self.name}: no cost found: looked for it as the third of 6 step values (Safety-Gymnasium) "
                        f"and in info[{self.cost_key!r}] (Bullet-Safety-Gym), but step returned 5 values (obs, reward, "
                        f"terminated, truncated, info) and info has no {self.cost_key!r} key (info keys: "
                        f"{keys or 'none'}); return the cost in one of those places, or name its info key with "
                        "cost_key (env_params.cost_key)"
                    )
                self.cost_from = "info"
            else:
                raise ValueError(
                    f"{self.name}: environment 0: step returned {_describe(result)}, expected 6 values "
                    "(obs, reward, cost, terminated, truncated, info) or 5 values "
                    f"(obs, reward, terminated, truncated, info) with info[{self.cost_key!r}]"
                    f"{_old_api_hint(result)}"
                )
        obs, reward, cost, _, _, _ = self._unpack(result, 0)
        where = "on the probe step (one step after reset, before training)"
        self._check_finite("observation", self._obs(obs, 0)[None], where)
        self._check_finite("reward", np.asarray(reward, np.float32).reshape(1, -1), where)
        self._check_finite("cost", cost.reshape(1, -1), where)
        return tuple(np.shape(cost))

    def _check_finite(self, field: str, values: np.ndarray, where) -> None:
        """Raise :class:`NonFiniteError` unless ``values`` (one row per copy) are all finite.

        ``where``: a string, or ``where(i)`` the string for copy ``i``.
        """
        if np.isfinite(values).all():
            return
        self._ready = False
        rows = np.asarray(values).reshape(len(values), -1)
        i = int(np.flatnonzero(~np.isfinite(rows).all(axis=1))[0])
        row = rows[i]
        bad = np.flatnonzero(~np.isfinite(row))
        value = row[bad[0]]
        detail = (
            f"{value}" if row.size == 1 else f"{value} at index {bad[0]} ({bad.size} of {row.size} entries not finite)"
        )
        where = where(i) if callable(where) else where
        copy = f"environment {i} of {self.num_envs}" if self.num_envs > 1 else "the environment"
        raise NonFiniteError(f"{self.name}: {copy} returned a non-finite {field} {where}: {detail}")

    def _unpack(self, result, i: int):
        """``(obs, reward, cost, terminated, truncated, info)`` from a step result, or a ValueError."""
        expected = 6 if self.cost_from == "step" else 5
        if not isinstance(result, tuple) or len(result) != expected:
            form = (
                "(obs, reward, cost, terminated, truncated, info)"
                if expected == 6
                else f"(obs, reward, terminated, truncated, info) with info[{self.cost_key!r}]"
            )
            hint = _old_api_hint(result)
            if not hint and isinstance(result, tuple) and len(result) in (5, 6):
                hint = (
                    f"; cost_from={self.cost_from!r} was given, try cost_from='auto'"
                    if self._requested != "auto"
                    else f"; the first step returned {expected}"
                )
            raise ValueError(
                f"{self.name}: environment {i}: step returned {_describe(result)}, expected {expected} "
                f"values {form}{hint}"
            )
        if expected == 6:
            obs, reward, cost, terminated, truncated, info = result
        else:
            obs, reward, terminated, truncated, info = result
            if not isinstance(info, dict) or self.cost_key not in info:
                raise ValueError(
                    f"{self.name}: environment {i}: no cost in this step's info (key {self.cost_key!r}); "
                    "cost_from='info' needs it on every step"
                )
            cost = info[self.cost_key]
        return obs, reward, np.asarray(cost, np.float32), terminated, truncated, info

    def _reset_one(self, i: int, seed: int | None = None) -> np.ndarray:
        result = self.envs[i].reset(seed=seed)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ValueError(
                f"environment {i}: reset must return (obs, info) (Gymnasium API), got {type(result).__name__}"
            )
        return self._obs(result[0], i)

    # ------------------------------------------------------------------ vector API
    def reset(self, seeds: list[int] | None = None) -> np.ndarray:
        """Reset every copy (``seeds[i]`` seeds copy ``i``); returns observations ``(N, D)``."""
        seeds = list(seeds) if seeds is not None else [None] * self.num_envs
        if len(seeds) != self.num_envs:
            raise ValueError(f"need {self.num_envs} seeds, got {len(seeds)}")
        obs = np.stack([self._reset_one(i, None if s is None else int(s)) for i, s in enumerate(seeds)])
        self._check_finite("observation", obs, "from reset()")
        self._t = 0
        n, c = self.num_envs, self.cost_channels
        self._return = np.zeros((n,), np.float32)
        self._cost = np.zeros((n, c), np.float32)
        self._discounted = np.zeros((n, c), np.float32)
        self._discount = np.ones((n,), np.float32)  # gamma_c^t
        self._length = np.zeros((n,), np.int32)
        self._ready = True
        return obs

    def step(self, actions) -> HostStep:
        """Step every copy; a finished episode is reset at once (its last observation is ``final_obs``)."""
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        actions = self._env_actions(np.asarray(actions))
        self._t += 1
        n, c = self.num_envs, self.cost_channels
        obs = np.empty((n, self.obs_dim), np.float32)
        final = np.empty((n, self.obs_dim), np.float32)
        reward = np.empty((n,), np.float32)
        cost = np.empty((n, c), np.float32)
        term = np.empty((n,), bool)
        trunc = np.empty((n,), bool)
        for i, env in enumerate(self.envs):
            o, reward[i], k, term[i], trunc[i], _ = self._unpack(env.step(actions[i]), i)
            if k.shape != self.cost_shape:
                raise ValueError(
                    f"{self.name}: environment {i}: cost of shape {k.shape}, but the probe step gave {self.cost_shape}"
                )
            cost[i] = k.reshape(c)
            final[i] = obs[i] = self._obs(o, i)
            if term[i] or trunc[i]:  # AutoReset: the next episode starts at once
                obs[i] = self._reset_one(i)
        # NaN / inf checks, one isfinite per array (the step's observation, reward, cost, then reset observations)
        t = self._t
        at_step = lambda i: f"at step {t} (episode step {self._length[i] + 1})"  # noqa: E731
        self._check_finite("observation", final, at_step)
        self._check_finite("reward", reward, at_step)
        self._check_finite("cost", cost, at_step)
        self._check_finite("observation", obs, f"from the automatic reset after step {t}")
        # EpisodeStatistics, in float32 as in JAX: running totals, reported at every step
        self._return += reward
        self._cost += cost
        self._discounted += self._discount[:, None] * cost
        self._discount *= np.float32(self.gamma_c)
        self._length += 1
        done = term | trunc
        step = HostStep(
            obs,
            reward,
            cost,
            term,
            trunc,
            final,
            done,
            self._return.copy(),
            self._cost.copy(),
            self._discounted.copy(),
            self._length.copy(),
        )
        self._return[done], self._cost[done], self._discounted[done] = 0.0, 0.0, 0.0
        self._discount[done], self._length[done] = 1.0, 0
        return step

    def close(self) -> None:
        for env in self.envs:
            env.close()

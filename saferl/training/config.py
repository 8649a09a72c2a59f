"""Run configuration: defaults, safe YAML, ``--set key=value`` overrides and validation.

A config is a plain nested dict; ``resolve`` returns it with every default
filled in, which is what ``config.yaml`` of a run directory records.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import yaml

from saferl.algos import base as algos
from saferl.core import constraints
from saferl.core.networks import ACTIVATIONS, INIT_SCHEMES
from saferl.envs import base as envs
from saferl.training import in_program_sweep, loggers

TOP_LEVEL = {
    "algo": None,
    "env": None,
    "total_steps": 1_000_000,  # environment steps per seed
    "seeds": 1,
    "seed": 0,
    "num_envs": 8,
    "rollout_steps": 256,  # steps per environment per iteration
    "iterations_per_chunk": 0,  # compiled iterations between two Python calls; 0 = automatic
    "checkpoint_every": 1,  # chunks between checkpoints
    "logger": ["csv"],  # csv (progress.csv, always written), tensorboard, wandb: saferl.training.loggers
    "normalize_observations": True,
    "reset_pool": 0,  # 0: a fresh reset every step; k: k pooled resets per env per rollout (AutoReset)
    "env_params": {},
    "network": {
        "actor_hidden": [64, 64],
        "critic_hidden": [64, 64],
        "activation": "tanh",
        "init_log_std": -0.5,
        "value_normalization": False,
        "init": "orthogonal",
        # [a, b]: a fixed (unlearned) action std a (1 - k / K) + b at iteration k of K, as RL-Safety-Algorithms'
        # exploration-noise annealing (algs/core.py MLPGaussianActor.set_log_std); None: the log-std is learned
        "action_std_anneal": None,
        # K in env steps: the length of the run the schedule belongs to (a shorter run follows the reference run's
        # schedule up to its own end); None: this run's total_steps
        "action_std_anneal_steps": None,
    },  # init: saferl.core.networks.INIT_SCHEMES
    "constraint": {"type": "expected", "limit": 25.0},
    "hparams": {},
}


class ConfigError(ValueError):
    """A bad configuration value; the message names the key and what is allowed."""


def load_yaml(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ConfigError(f"cannot read config file {str(path)!r}: {err.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {yaml_complaint(err)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping, got {type(data).__name__}")
    return _numbers(data)


def yaml_complaint(err: yaml.YAMLError) -> str:
    """The parser's complaint in one line: ``line L, column C: problem``."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = " ".join(str(getattr(err, "problem", None) or err).split())
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + problem


def _numbers(node):
    if isinstance(node, dict):
        return {key: _numbers(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_numbers(value) for value in node]
    return _yaml_float(node)


def parse_set(items: list[str]) -> dict:
    """``["hparams.actor_lr=1e-3", "constraint.limit=10"]`` -> nested dict (values parsed as YAML)."""
    out: dict = {}
    for item in items or []:
        if "=" not in item:
            raise ConfigError(f"malformed --set {item!r}: expected KEY=VALUE, e.g. constraint.limit=25")
        key, raw = item.split("=", 1)
        key = key.strip()
        if not key or any(not part for part in key.split(".")):
            raise ConfigError(f"malformed --set {item!r}: empty key")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as err:
            raise ConfigError(
                f"malformed --set {item!r}: value {raw!r} is not valid YAML ({yaml_complaint(err)})"
            ) from None
        value = _yaml_float(value)
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r} conflicts with another --set of {part!r}")
        node[parts[-1]] = value
    return out


def _yaml_float(value):
    """YAML 1.1 reads ``1e-3`` (no dot) as a string; read it as the number users mean."""
    if isinstance(value, str):
        try:
            return float(value) if value.strip().lower() not in ("nan", "inf", "-inf", "infinity") else value
        except ValueError:
            return value
    return value


def merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key not in ("env_params", "hparams"):
            out[key] = merge(out[key], value)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = copy.deepcopy(value)
    return out


def _positive_int(cfg: dict, key: str, minimum: int = 1) -> int:
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise ConfigError(f"{key} must be a whole number >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ConfigError(f"{key} must be >= {minimum}, got {value}")
    return value


def resolve(user: dict) -> dict:
    """Fill defaults (global, the algorithm's, the environment's, the algorithm's for this environment, then the
    user's) and validate."""
    user = copy.deepcopy(user)  # never change the caller's dict
    unknown = set(user) - set(TOP_LEVEL) - {"sweep"}
    if unknown:
        raise ConfigError(f"unknown config key {sorted(unknown)[0]!r}; allowed: {', '.join(TOP_LEVEL)}, sweep")
    sweep = user.pop("sweep", None)
    for key in ("algo", "env"):
        if not user.get(key):
            raise ConfigError(f"missing {key!r}: pass --{key} or set it in the config file")
    env_name = str(user["env"])
    if env_name.startswith("gym:"):
        pass  # a Gymnasium environment run through the host-side bridge (saferl.training.gym_trainer)
    elif env_name not in envs.registered():
        raise ConfigError(f"unknown environment {env_name!r}; known environments: {', '.join(envs.registered())}")
    try:
        algo_cls = algos.get(str(user["algo"]))
    except ValueError as err:
        raise ConfigError(str(err)) from None
    user_constraint = user.get("constraint")
    # defaults: global, then the algorithm's (Canary's networks), then the environment's; an
    # algorithm that fixes the constraint type (Canary: var) keeps it over the environment's
    algo_defaults = dict(algo_cls.config_defaults)
    algo_constraint = algo_defaults.pop("constraint", None)
    gym = env_name.startswith("gym:")
    cfg = merge(merge(TOP_LEVEL, algo_defaults), {} if gym else envs.config_defaults(env_name))
    # the algorithm's defaults for this environment (SCPO's per-task table), over the environment's own
    per_env = algo_cls.env_defaults.get(env_name)
    if per_env:
        unknown = sorted(set(per_env) - set(algos.ENV_DEFAULT_KEYS))
        if unknown:
            raise ConfigError(
                f"algorithm {algo_cls.name}: unknown env_defaults[{env_name!r}] key {unknown[0]!r}; "
                f"allowed: {', '.join(algos.ENV_DEFAULT_KEYS)}"
            )
        cfg = merge(cfg, per_env)
    if algo_constraint and algo_constraint.get("type") != cfg["constraint"].get("type"):
        cfg["constraint"] = dict(algo_constraint)
    if user_constraint and "type" in user_constraint and user_constraint["type"] != cfg["constraint"].get("type"):
        cfg["constraint"] = {}  # a different constraint type replaces the default section
    cfg = merge(cfg, user)
    if cfg["constraint"].get("type") == "var":
        cfg["constraint"] = {**({} if gym else envs.risk_defaults(env_name)), **cfg["constraint"]}
        cfg["constraint"].setdefault("surrogate", algo_cls.risk_surrogates[0])
    cfg["algo"] = algo_cls.name
    for key in ("total_steps", "seeds", "num_envs", "rollout_steps", "checkpoint_every"):
        cfg[key] = _positive_int(cfg, key)
    cfg["seed"] = _positive_int(cfg, "seed", minimum=0)
    cfg["reset_pool"] = _positive_int(cfg, "reset_pool", minimum=0)
    cfg["iterations_per_chunk"] = _positive_int(cfg, "iterations_per_chunk", minimum=0)
    try:
        cfg["logger"] = loggers.parse(cfg["logger"])
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if not isinstance(cfg["normalize_observations"], bool):
        raise ConfigError(f"normalize_observations must be true or false, got {cfg['normalize_observations']!r}")
    try:
        constraint = constraints.from_config(cfg["constraint"])
        horizon = constraints.finite_horizon(cfg["constraint"])
        window = constraints.window(cfg["constraint"])
        statistic = constraints.window_statistic(cfg["constraint"])
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if constraint.kind not in algo_cls.constraint_kinds:
        raise ConfigError(
            f"algorithm {algo_cls.name} takes a constraint of type {' or '.join(algo_cls.constraint_kinds)}, "
            f"not {constraint.kind!r}"
        )
    if constraint.kind == "var" and constraint.surrogate not in algo_cls.risk_surrogates:
        raise ConfigError(
            f"algorithm {algo_cls.name} takes a VaR constraint through the surrogate "
            f"{' or '.join(algo_cls.risk_surrogates)}, not {constraint.surrogate!r} (constraint.surrogate)"
        )
    cfg["constraint"] = constraints.to_config(constraint)
    if constraint.kind == "var":
        cfg["constraint"]["finite_horizon"] = horizon
    else:
        cfg["constraint"]["window"] = window
        if statistic != "window_mean":  # only then, so that earlier runs' configs resolve to themselves
            cfg["constraint"]["window_statistic"] = statistic
    try:
        cfg["hparams"] = algo_cls.resolve_hparams(cfg.get("hparams"))
    except ValueError as err:
        raise ConfigError(str(err)) from None
    _check_network(cfg["network"])
    try:
        algo_cls.check_hparams(cfg["hparams"], cfg["num_envs"] * cfg["rollout_steps"])
    except ValueError as err:
        raise ConfigError(str(err)) from None
    limit = cfg["constraint"].get("limit")
    if isinstance(limit, list) and len(limit) > algo_cls.max_constraints:
        raise ConfigError(
            f"algorithm {algo_cls.name} enforces at most {algo_cls.max_constraints} constraints; "
            f"constraint.limit has {len(limit)} entries"
        )
    if not gym:
        channels, recorded = _check_env_params(env_name, cfg["env_params"])
        # recorded, so that a run keeps its physics (and integrator) when a task's default changes
        cfg["env_params"] = {**cfg["env_params"], **recorded}
        if isinstance(limit, list) and len(limit) != channels:
            raise ConfigError(
                f"constraint.limit has {len(limit)} entries but {env_name} has {channels} cost "
                f"channel(s): give one limit per channel, or one number for all"
            )
    if sweep:
        cfg = _with_sweep(user, cfg, sweep, algo_cls)
    return cfg


def _with_sweep(user: dict, cfg: dict, sweep, algo_cls) -> dict:
    """``cfg`` with its validated ``sweep`` section (:mod:`saferl.training.in_program_sweep`); every grid value is
    checked by resolving the config at that value, and ``cfg`` holds the grid's first value of each key."""
    if cfg["logger"] != ["csv"]:
        raise ConfigError(
            f"logger {','.join(cfg['logger'])}: a swept run logs to progress.csv only (one row per grid "
            f"point and seed); use logger csv"
        )
    if str(cfg["env"]).startswith("gym:"):
        raise ConfigError(
            f"sweep: {cfg['env']} runs through the host-side Gymnasium bridge, which trains one "
            f"program per seed; sweep a registered JAX environment, or run one job per value"
        )
    try:
        sweep = in_program_sweep.validate(sweep, cfg, algo_cls)
    except in_program_sweep.SweepError as err:
        raise ConfigError(str(err)) from None
    for key, values in sweep.items():
        for value in values:
            try:
                resolve(in_program_sweep.set_value(user, key, value))
            except ConfigError as err:
                raise ConfigError(f"sweep {key}={value:g}: {err}") from None
    first = resolve(in_program_sweep.config_at(user, {key: values[0] for key, values in sweep.items()}))
    return {**first, "sweep": sweep}


def _check_network(net: dict) -> None:
    unknown = sorted(set(net) - set(TOP_LEVEL["network"]))
    if unknown:
        raise ConfigError(f"unknown network.{unknown[0]}; allowed: {', '.join(TOP_LEVEL['network'])}")
    for key in ("actor_hidden", "critic_hidden"):
        sizes = net.get(key)
        if (
            not isinstance(sizes, list)
            or not sizes
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes)
        ):
            raise ConfigError(f"network.{key} must be a non-empty list of positive integers, got {sizes!r}")
    if net["activation"] not in ACTIVATIONS:
        raise ConfigError(f"network.activation must be one of {', '.join(ACTIVATIONS)}, got {net['activation']!r}")
    log_std = net["init_log_std"]
    if isinstance(log_std, bool) or not isinstance(log_std, (int, float)) or not math.isfinite(log_std):
        raise ConfigError(f"network.init_log_std must be a finite number, got {log_std!r}")
    anneal = net["action_std_anneal"]
    if anneal is not None and not (
        isinstance(anneal, list)
        and len(anneal) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in anneal)
        and anneal[0] >= 0
        and anneal[1] > 0
    ):
        raise ConfigError(
            f"network.action_std_anneal must be null or [a, b] with a >= 0 and b > 0 (the std a (1 - k/K) + b at "
            f"iteration k of K), got {anneal!r}"
        )
    horizon = net["action_std_anneal_steps"]
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, int) or horizon <= 0):
        raise ConfigError(f"network.action_std_anneal_steps must be null or a positive integer, got {horizon!r}")
    if net["init"] not in INIT_SCHEMES:
        raise ConfigError(f"network.init must be one of {', '.join(INIT_SCHEMES)}, got {net['init']!r}")
    if not isinstance(net["value_normalization"], bool):
        raise ConfigError(f"network.value_normalization must be true or false, got {net['value_normalization']!r}")


#: environment parameters a resolved config always records, where the environment has them: a run keeps them when a
#: task's default changes (the physics backend; how RK4 moves free joints, docs/decisions/066)
RECORDED_ENV_PARAMS = ("physics", "rk4_orientation")


def _check_env_params(env_name: str, overrides: dict) -> tuple[int, dict]:
    """Build the environment's parameters with the overrides (a missing extra, e.g. MuJoCo for EcoAnt,
    is reported here, before anything is written); returns its number of cost channels and the values of
    :data:`RECORDED_ENV_PARAMS` it has."""
    if not isinstance(overrides, dict):
        raise ConfigError(f"env_params must be a mapping, got {overrides!r}")
    env = envs.make(env_name)
    try:
        params = envs.make_env_params(env, overrides)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    recorded = {name: getattr(params, name) for name in RECORDED_ENV_PARAMS if hasattr(params, name)}
    return int(np.prod(env.cost_shape)) if env.cost_shape else 1, recorded


def dump(cfg: dict) -> str:
    return yaml.safe_dump(cfg, sort_keys=False)

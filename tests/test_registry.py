"""The registries: every algorithm and environment module is imported by its package and
listed by ``saferl list``; environments' training defaults; EcoAnt without MuJoCo."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from saferl import cli
from saferl.envs import base as envs

ROOT = Path(__file__).resolve().parents[1]


def _registered_in_files(package: str) -> set[str]:
    """Modules of ``saferl/<package>`` with a class or function decorated ``@register``/``@register(...)``."""
    modules = set()
    for path in sorted((ROOT / "saferl" / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                for deco in node.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    if isinstance(target, ast.Name) and target.id == "register":
                        modules.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return modules


def _run_python(code: str, *args: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "JAX_PLATFORMS": "cpu", **env},
    )


def test_every_module_that_registers_is_imported_by_its_package():
    # a fresh interpreter, so no test module's own imports can fill the registries
    code = """if True:
        import json
        from saferl.algos import base as algos
        from saferl.envs import base as envs
        print(json.dumps({"algos": {n: algos.get(n).__module__ for n in algos.registered()},
                          "envs": {n: envs._REGISTRY[n].factory.__module__ for n in envs.registered()}}))
    """
    result = _run_python(code)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    for package in ("algos", "envs"):
        in_files = _registered_in_files(package)
        assert in_files, package
        assert in_files == set(found[package].values()), (package, in_files ^ set(found[package].values()))
    assert len(found["algos"]) >= 16 and {"ToyReach", "IcyLake", "PointGoal1", "EcoAnt"} <= set(found["envs"])


def test_saferl_list_lists_every_registered_algorithm_and_environment(capsys):
    from saferl.algos import base as algos

    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    names = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and line.strip()}
    assert set(algos.registered()) <= names
    assert {n for n, e in envs._REGISTRY.items() if e.factory.__module__.startswith("saferl.")} <= names


@pytest.mark.parametrize("name", ["PointGoal1", "IcyLake", "EcoAnt", "ToyReach"])
def test_an_environments_defaults_reach_the_resolved_config_under_the_users(name):
    from saferl.training import config

    own, risk = envs.config_defaults(name), envs.risk_defaults(name)
    cfg = config.resolve({"algo": "ppo_lag", "env": name})
    for key in ("num_envs", "rollout_steps", "total_steps", "reset_pool"):
        assert cfg[key] == own.get(key, config.TOP_LEVEL[key]), key
    assert cfg["constraint"]["limit"] == own.get("constraint", config.TOP_LEVEL["constraint"])["limit"]
    user = config.resolve({"algo": "ppo_lag", "env": name, "num_envs": 3, "constraint": {"limit": 7.0}})
    assert user["num_envs"] == 3 and user["constraint"]["limit"] == 7.0
    if risk:  # a VaR constraint takes the environment's rho, epsilon and gamma_c unless the user gives them
        var = config.resolve({"algo": "ppo_lag", "env": name, "constraint": {"type": "var", "epsilon": 0.2}})
        assert var["constraint"]["rho"] == risk["rho"] and var["constraint"]["epsilon"] == 0.2
        assert var["constraint"]["gamma_c"] == risk["gamma_c"]


def test_environment_defaults_are_copies_and_an_unknown_name_is_refused():
    envs.config_defaults("PointGoal1")["constraint"]["limit"] = -1.0
    envs.risk_defaults("PointGoal1")["rho"] = -1.0
    assert envs.config_defaults("PointGoal1")["constraint"]["limit"] > 0
    assert envs.risk_defaults("PointGoal1")["rho"] > 0
    with pytest.raises(ValueError, match="unknown environment 'Nowhere'"):
        envs.config_defaults("Nowhere")


def test_a_misspelt_default_key_fails_at_registration():
    class Typo(envs.Environment):
        config_defaults = {"num_env": 4}

    with pytest.raises(ValueError, match="unknown config_defaults key 'num_env'"):
        envs.register("TypoEnv", "never registered")(Typo)
    assert "TypoEnv" not in envs.registered()


def test_every_environments_params_are_env_params_with_its_own_time_limit():
    from saferl.envs.eco_ant import EcoAntParams  # the params need no MuJoCo

    defaults = {"ToyReach": 50, "IcyLake": 200, "PointGoal1": 1000}  # IcyLake 8x8: FrozenLake8x8-v1
    for name, max_steps in defaults.items():
        params = envs.make(name).default_params()
        assert isinstance(params, envs.EnvParams) and int(params.max_steps) == max_steps, name
    assert isinstance(EcoAntParams(), envs.EnvParams) and EcoAntParams().max_steps == 1000


_WITHOUT_MUJOCO = "import sys; sys.modules['mujoco'] = None; sys.modules['mujoco.mjx'] = None\n"


def test_eco_ant_without_mujoco_names_the_extra():
    code = (
        _WITHOUT_MUJOCO
        + """if True:
        from saferl.envs import base as envs
        from saferl.foundation.errors import MissingExtraError
        assert "EcoAnt" in envs.registered() and envs.config_defaults("EcoAnt")["num_envs"] == 16
        try:
            envs.make("EcoAnt")
        except MissingExtraError as err:
            print(err)
    """
    )
    result = _run_python(code)
    assert result.returncode == 0, result.stderr
    assert "pip install 'saferl[mjx]'" in result.stdout and "EcoAnt" in result.stdout


@pytest.mark.parametrize(
    "command",
    [["train", "--algo", "ppo", "--env", "EcoAnt", "--steps", "1000"], ["bench", "--env", "EcoAnt", "--quick"]],
)
def test_eco_ant_commands_without_mujoco_end_with_one_line(command, tmp_path):
    code = _WITHOUT_MUJOCO + "from saferl.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    out = ["--out", str(tmp_path / ("run" if command[0] == "train" else "bench.json"))]
    result = _run_python(code, *command, *out)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("saferl: error: EcoAnt"), result.stderr
    assert "saferl[mjx]" in lines[0]

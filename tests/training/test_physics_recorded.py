"""A run keeps its physics when a task's default physics changes (docs/decisions/065).

``config.resolve`` writes the physics of every environment that has one into ``env_params``; a config.yaml
written before it did reads as what its run stepped: ``planar`` for a navigation task, today's default for the
others.  So a committed run of RacecarCircle1 (trained on the planar port) is never reused as a MuJoCo run.
"""

import pytest

from saferl.training import config, reuse, run_directory


@pytest.mark.parametrize(
    ("env", "physics"),
    [("PointGoal1", "planar"), ("PointPush1", "mujoco"), ("CarButton1", "mujoco"), ("RacecarCircle1", "mujoco")],
)
def test_a_resolved_config_records_the_default_physics(env, physics):
    assert config.resolve({"algo": "ppo", "env": env})["env_params"]["physics"] == physics


def test_an_explicit_physics_is_kept_and_an_environment_without_one_gets_none():
    cfg = config.resolve({"algo": "ppo", "env": "RacecarCircle1", "env_params": {"physics": "planar"}})
    assert cfg["env_params"] == {"physics": "planar"}
    assert "physics" not in config.resolve({"algo": "ppo", "env": "ToyReach"})["env_params"]


def _written_before(tmp_path, env: str):
    """A run directory whose config.yaml predates the physics key (written by hand, as old runs have it)."""
    run_dir = tmp_path / env
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(f"algo: ppo\nenv: {env}\nenv_params: {{}}\n")
    return run_dir


@pytest.mark.parametrize("env", ["RacecarCircle1", "CarButton1", "PointGoal1"])
def test_an_older_navigation_config_reads_as_the_planar_port(tmp_path, env):
    assert run_directory.load_run_config(_written_before(tmp_path, env))["env_params"]["physics"] == "planar"


def test_an_older_velocity_config_reads_as_its_default(tmp_path):
    loaded = run_directory.load_run_config(_written_before(tmp_path, "SafetyHopperVelocity"))
    assert loaded["env_params"]["physics"] == "mujoco"


def test_an_older_planar_run_is_not_taken_for_a_mujoco_plan(tmp_path):
    run_dir = _written_before(tmp_path, "RacecarCircle1")
    with pytest.raises(run_directory.RunError, match="another config"):
        reuse.finished_summary(run_dir, config.resolve({"algo": "ppo", "env": "RacecarCircle1"}))
    planar = config.resolve({"algo": "ppo", "env": "RacecarCircle1", "env_params": {"physics": "planar"}})
    assert reuse.finished_summary(run_dir, planar) is None  # the same config, not finished


# ---------------------------------------------------------------- the RK4 rule (docs/decisions/066)


def test_a_velocity_config_records_the_rk4_rule_and_an_older_one_reads_as_mj_step(tmp_path):
    assert config.resolve({"algo": "ppo", "env": "SafetyAntVelocity"})["env_params"] == {
        "physics": "mujoco",
        "rk4_orientation": "uncorrected",
    }
    older = run_directory.load_run_config(_written_before(tmp_path, "SafetyAntVelocity"))
    assert older["env_params"]["rk4_orientation"] == "munthe-kaas"  # what MuJoCo 4.0's mj_step ran
    with pytest.raises(run_directory.RunError, match="another config"):
        reuse.finished_summary(
            tmp_path / "SafetyAntVelocity", config.resolve({"algo": "ppo", "env": "SafetyAntVelocity"})
        )
    mjx_dir = tmp_path / "mjx"
    mjx_dir.mkdir()
    (mjx_dir / "config.yaml").write_text("algo: ppo\nenv: SafetyAntVelocity\nenv_params: {physics: mjx}\n")
    assert run_directory.load_run_config(mjx_dir)["env_params"]["rk4_orientation"] == "uncorrected"  # MJX's RK4


def test_mjx_has_only_the_uncorrected_rule():
    with pytest.raises(config.ConfigError, match="rk4_orientation 'munthe-kaas' is MuJoCo 4.0's mj_step"):
        config.resolve(
            {
                "algo": "ppo",
                "env": "SafetyAntVelocity",
                "env_params": {"physics": "mjx", "rk4_orientation": "munthe-kaas"},
            }
        )
    with pytest.raises(config.ConfigError, match="rk4_orientation must be one of uncorrected, munthe-kaas"):
        config.resolve({"algo": "ppo", "env": "SafetyAntVelocity", "env_params": {"rk4_orientation": "rk45"}})

"""saferl sweep: the grid file, the jobs it gives, skip/resume/retry, and a Ray sweep killed and restarted.

The kill-and-restart test starts its own Ray cluster on the loopback address (a head with no CPU and two
one-CPU workers, each node in its own session and temp dir), kills the sweep's driver and one worker node
with SIGKILL midway, runs the sweep again and checks that the runs that had finished are reused untouched,
the interrupted one continues from its checkpoint, no file is corrupted and sweep.json lists every job.
"""

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from saferl.experiments import job_grid as sweep
from saferl.training import config, run_directory, runs

RAY_MISSING = importlib.util.find_spec("ray") is None
#: one iteration = 2 envs x 32 steps per seed; with iterations_per_chunk 1 every iteration is a chunk and a checkpoint
TINY = {
    "num_envs": 2,
    "rollout_steps": 32,
    "iterations_per_chunk": 1,
    "network": {"actor_hidden": [8], "critic_hidden": [8]},
    "hparams": {"minibatches": 1, "epochs": 1},
}
STEPS_PER_ITERATION = 64


def sweep_cli(*argv) -> int:
    parser = argparse.ArgumentParser(prog="saferl")
    sweep.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sweep", *map(str, argv)])
    return args.func(args)


def write_grid(path: Path, grid: dict) -> Path:
    path.write_text(yaml.safe_dump(grid))
    return path


# --------------------------------------------------------------------------- the grid file


def test_jobs_are_algos_by_envs_by_entries(tmp_path):
    tiny = {k: v for k, v in TINY.items() if k != "hparams"}  # trpo_lag has no epochs
    grid = sweep.load_grid(
        write_grid(
            tmp_path / "g.yaml",
            {
                "algos": ["ppo-lag", "trpo_lag"],
                "envs": ["ToyReach", "CartSafe"],
                "seeds": 3,
                "steps": 6400,
                "set": [
                    {**tiny, "constraint": {"limit": 10}},
                    {**tiny, "constraint": {"limit": 5}, "total_steps": 1280},
                ],
            },
        )
    )
    assert grid["name"] == "g" and grid["algos"] == ["ppo_lag", "trpo_lag"]  # the registry's spelling
    jobs = sweep.grid_jobs(grid, tmp_path / "out")
    names = [run_dir.name for run_dir, _ in jobs]
    # the label is what tells an entry from the others (TINY, shared by both, is left out)
    assert names == [
        f"{a}__{e}__{label}"
        for a in ("ppo_lag", "trpo_lag")
        for e in ("ToyReach", "CartSafe")
        for label in ("limit=10", "limit=5,total_steps=1280")
    ]
    assert all(run_dir.parent == tmp_path / "out" / "runs" for run_dir, _ in jobs)
    for (run_dir, cfg), (algo, env, limit, steps) in zip(
        jobs,
        [
            (a, e, lim, st)
            for a in ("ppo_lag", "trpo_lag")
            for e in ("ToyReach", "CartSafe")
            for lim, st in ((10, 6400), (5, 1280))
        ],
    ):
        assert (cfg["algo"], cfg["env"], cfg["constraint"]["limit"], cfg["total_steps"]) == (algo, env, limit, steps)
        assert cfg["seeds"] == 3 and cfg["num_envs"] == 2 and cfg["network"]["actor_hidden"] == [8]
        assert cfg == config.resolve(
            {"algo": algo, "env": env, "seeds": 3, "total_steps": steps, **tiny, "constraint": {"limit": limit}}
        )


def test_labels():
    # one entry, or entries told apart only by long or clashing values: the index
    assert sweep.entry_labels([{"seed": 1}]) == ["0"]
    assert sweep.entry_labels([{}, {"hparams": {"actor_lr": 1e-3}}]) == ["0", "actor_lr=0.001"]
    assert sweep.entry_labels([{"hparams": {"lr": 1}}, {"network": {"lr": 1}}]) == ["0", "1"]
    assert sweep.entry_labels([{"seed": 0, "network": {"actor_hidden": [8, 8]}}, {"seed": 1}]) == [
        "seed=0,actor_hidden=8+8",
        "seed=1",
    ]
    assert sweep.entry_labels([{"env_params": {"x": "a/b"}}, {"seed": "x" * 50}]) == ["x=a_b", "1"]


BAD_GRIDS = [
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "sets": {}},
        "unknown key 'sets'; allowed: name, algos, envs, seeds, steps, set",
    ),
    ({"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1}, "missing 'steps'"),
    ({"algos": ["ppo_lagg"], "envs": ["ToyReach"], "seeds": 1, "steps": 64}, "unknown algorithm 'ppo_lagg'; known: "),
    ({"algos": ["ppo_lag"], "envs": ["ToyReech"], "seeds": 1, "steps": 64}, "unknown environment 'ToyReech'; known: "),
    ({"algos": ["ppo_lag"], "envs": ["gym:CartPole-v1"], "seeds": 1, "steps": 64}, "envs entry 'gym:CartPole-v1'"),
    ({"algos": [], "envs": ["ToyReach"], "seeds": 1, "steps": 64}, "algos must be a name or a non-empty list"),
    ({"algos": ["ppo_lag", "ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64}, "lists 'ppo_lag' twice"),
    ({"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 0, "steps": 64}, "seeds must be a whole number >= 1, got 0"),
    ({"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 6.5}, "steps must be a whole number >= 1"),
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "set": [{"algo": "cpo"}]},
        "set entry 0 sets 'algo'",
    ),
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "set": [{}, 3]},
        "set entry 1 must be a mapping of overrides, got 3",
    ),
    ({"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "name": "a/b"}, "name must be letters"),
    # overrides are checked by saferl.training.config.resolve, per job
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "set": [{}, {"hparams": {"nope": 1}}]},
        "set entry 1 for ppo_lag on ToyReach: ",
    ),
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "set": {"num_envs": -2}},
        "set entry 0 for ppo_lag on ToyReach: num_envs must be >= 1, got -2",
    ),
    (
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 64, "set": [{"seed": 1}, {"seed": 1.0}]},
        "set entries 0 and 1 give ppo_lag on ToyReach the same config",
    ),
]


@pytest.mark.parametrize("grid, message", BAD_GRIDS, ids=[m.split(";")[0][:30] for _, m in BAD_GRIDS])
def test_bad_grid_is_one_line_and_writes_nothing(tmp_path, capsys, grid, message):
    out = tmp_path / "out"
    assert sweep_cli(write_grid(tmp_path / "g.yaml", grid), "--out", out, "--local") == 2
    err = capsys.readouterr().err
    assert err.startswith("saferl: error: ") and err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_bad_command_line(tmp_path, capsys, monkeypatch):
    grid = write_grid(tmp_path / "g.yaml", {"algos": "ppo_lag", "envs": "ToyReach", "seeds": 1, "steps": 64})
    assert sweep_cli(grid, "--local", "--address", "127.0.0.1:1") == 2
    assert "--local runs without Ray" in capsys.readouterr().err
    assert sweep_cli(tmp_path / "missing.yaml", "--local") == 2
    assert "cannot read config file" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # ray not installed: only --local runs
    assert sweep_cli(grid, "--out", tmp_path / "out") == 2
    assert "pip install 'saferl[ray]'" in capsys.readouterr().err and not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="retries must be a whole number >= 0, got -1"):
        sweep.run_jobs([], use_ray=False, retries=-1)


# --------------------------------------------------------------------------- skip, resume, retry (--local)


@pytest.fixture
def fake_train(monkeypatch):
    """runs.train replaced by a recorder that writes what a finished run leaves (config.yaml, summary.json): the
    jobs' final numbers are made from their first seed, so a job's sweep.json entry shows whose summary it read.
    A job with env_params.step_size 0.3 fails once, with 0.4 always."""
    calls = []
    failures: dict[str, int] = {}

    def train(cfg, run_dir, resume=False, show_progress=True, **_):
        run_dir = Path(run_dir)
        calls.append((run_dir.name, resume))
        step = cfg["env_params"].get("step_size")
        failures[run_dir.name] = failures.get(run_dir.name, 0) + 1
        if step == 0.4 or (step == 0.3 and failures[run_dir.name] == 1):
            raise RuntimeError(f"diverged at step {failures[run_dir.name]}\nsecond line")
        run_directory.write_config(run_dir, cfg)
        summary = {
            "algo": cfg["algo"],
            "env": cfg["env"],
            "seeds": cfg["seeds"],
            "env_steps": cfg["total_steps"],
            "interrupted": False,
            "wall_seconds": 1.0,
            "final": {
                "episode_return": {"per_seed": [cfg["seed"] + 0.5, cfg["seed"] + 1.5]},
                "episode_cost": {"per_seed": [-cfg["seed"], 1.0]},
            },
        }
        (run_dir / "summary.json").write_text(json.dumps(summary))
        return summary

    monkeypatch.setattr(runs, "train", train)
    return calls


def test_local_sweep_skips_finished_resumes_checkpointed_and_retries_failed(tmp_path, fake_train, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # --local needs no ray
    entries = [
        {"seed": 0},
        {"seed": 10},
        {"seed": 20},
        {"seed": 30, "env_params": {"step_size": 0.3}},
        {"seed": 40, "env_params": {"step_size": 0.4}},
    ]
    grid = write_grid(
        tmp_path / "g.yaml",
        {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 2, "steps": 640, "set": [{**TINY, **e} for e in entries]},
    )
    out = tmp_path / "out"
    jobs = sweep.grid_jobs(sweep.load_grid(grid), out)
    (done_dir, done_cfg), (ckpt_dir, ckpt_cfg) = jobs[0], jobs[1]
    run_directory.write_config(done_dir, done_cfg)
    (done_dir / "summary.json").write_text(
        json.dumps(
            {
                "interrupted": False,
                "env_steps": 640,
                "final": {"episode_return": {"per_seed": [7.0, 8.0]}, "episode_cost": {"per_seed": [0.0, 0.0]}},
            }
        )
    )
    done_mtime = (done_dir / "summary.json").stat().st_mtime_ns
    run_directory.write_config(ckpt_dir, ckpt_cfg)
    (ckpt_dir / run_directory.CHECKPOINT).parent.mkdir()
    (ckpt_dir / run_directory.CHECKPOINT).write_bytes(b"read by runs.train, which is replaced here")
    (ckpt_dir / "summary.json").write_text(json.dumps({"interrupted": True}))

    assert sweep_cli(grid, "--out", out, "--local") == 1  # one job failed
    names = [d.name for d, _ in jobs]
    assert fake_train == [
        (names[1], True),
        (names[2], False),
        (names[3], False),
        (names[3], False),
        (names[4], False),
        (names[4], False),
    ]
    assert (done_dir / "summary.json").stat().st_mtime_ns == done_mtime
    report = json.loads((out / "sweep.json").read_text())
    by_name = {Path(j["run_dir"]).name: j for j in report["jobs"]}
    assert [Path(j["run_dir"]) for j in report["jobs"]] == [Path("runs") / n for n in names]
    assert [by_name[n]["status"] for n in names] == ["skipped", "resumed", "trained", "trained", "failed"]
    assert [by_name[n]["attempts"] for n in names] == [0, 1, 1, 2, 2]
    assert by_name[names[3]]["error"] == "RuntimeError: diverged at step 1"  # the retry succeeded; said why it ran
    assert by_name[names[4]]["error"] == "RuntimeError: diverged at step 2"
    assert by_name[names[0]]["final_return"] == [7.0, 8.0]  # the finished run's own summary
    for n, seed in zip(names[1:4], (10, 20, 30)):
        assert by_name[n]["final_return"] == [seed + 0.5, seed + 1.5] and by_name[n]["final_cost"] == [-seed, 1.0]
    assert by_name[names[4]]["final_return"] is None
    assert report["counts"] == {"trained": 2, "resumed": 1, "skipped": 1, "failed": 1, "pending": 0}
    assert len({j["config_hash"] for j in report["jobs"]}) == 5  # (the Ray test checks them against summary.json)
    printed = capsys.readouterr()
    assert "sweep: 5 jobs: 2 trained, 1 resumed, 1 skipped (finished before), 1 failed" in printed.out
    assert "failed runs/" + names[4] + " after 2 attempts: RuntimeError: diverged at step 2" in printed.err

    # again, without retries: everything that finished is skipped, the failing job is tried once more
    fake_train.clear()
    assert sweep_cli(grid, "--out", out, "--local", "--retries", "0") == 1
    assert fake_train == [(names[4], False)]
    report = json.loads((out / "sweep.json").read_text())
    assert report["counts"] == {"trained": 0, "resumed": 0, "skipped": 4, "failed": 1, "pending": 0}


def test_run_directory_with_another_config_is_refused_before_anything_runs(tmp_path, fake_train, capsys):
    grid = {"algos": ["ppo_lag"], "envs": ["ToyReach"], "seeds": 1, "steps": 640, "set": [{**TINY, "seed": 0}]}
    path = write_grid(tmp_path / "g.yaml", grid)
    out = tmp_path / "out"
    [(run_dir, cfg)] = sweep.grid_jobs(sweep.load_grid(path), out)
    run_directory.write_config(run_dir, config.resolve({**cfg, "seed": 99}))
    assert sweep_cli(path, "--out", out, "--local") == 2
    assert "holds a run with another config" in capsys.readouterr().err
    assert fake_train == [] and not (out / "sweep.json").exists()


# --------------------------------------------------------------------------- a Ray sweep killed and restarted


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` (a node started with ``ray start --block`` in its own session)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class LocalCluster:
    """A Ray head (no CPU) and workers on 127.0.0.1; every node its own session and temp dir under ``root``."""

    def __init__(self, root: Path):
        self.root, self.port, self.nodes = root, _free_port(), {}
        # Ray's token authentication with this cluster's own token (the GCS listens on every interface), given
        # explicitly, so that neither an ~/.ray/auth_token nor its absence changes the test
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "JAX_PLATFORMS": "cpu", **self.auth}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, workers: int) -> None:
        common = [
            "--node-ip-address",
            "127.0.0.1",
            "--block",
            "--disable-usage-stats",
            "--object-store-memory",
            "100000000",
        ]
        self._node(
            "head",
            [
                "--head",
                "--port",
                str(self.port),
                "--num-cpus",
                "0",
                "--include-dashboard=false",
                "--ray-client-server-port",
                str(_free_port()),
                # a killed node is declared dead after ~3 s instead of ~15 s
                "--system-config",
                json.dumps({"health_check_period_ms": 1000, "health_check_failure_threshold": 3}),
            ]
            + common,
        )
        for i in range(workers):  # they wait for the head's GCS to come up
            self._node(f"worker{i}", ["--address", self.address, "--num-cpus", "1"] + common)
        self._wait_started(list(self.nodes))

    def _node(self, name: str, args: list[str]) -> None:
        with open(self.root / f"{name}.log", "w") as log:  # the node keeps its own copy of the descriptor
            self.nodes[name] = subprocess.Popen(
                [sys.executable, "-m", "ray.scripts.scripts", "start", *args, "--temp-dir", str(self.root / name)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _wait_started(self, names: list[str], timeout: float = 60.0) -> None:
        deadline = time.time() + timeout
        for name in names:
            while "Ray runtime started" not in (self.root / f"{name}.log").read_text():
                if self.nodes[name].poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"ray node {name} did not start: {(self.root / f'{name}.log').read_text()}")
                time.sleep(0.1)

    def task_processes(self, name: str | None = None) -> list[int]:
        """The processes running a sweep job (``ray::train_task``), on one node or all."""
        sids = [self.nodes[name].pid] if name else [p.pid for p in self.nodes.values()]
        return [pid for sid in sids for pid in _session(sid) if _command_line(pid).startswith("ray::train_task")]

    def kill(self, name: str) -> None:
        """SIGKILL every process of node ``name``."""
        for pid in _session(self.nodes[name].pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.nodes[name].wait(10)

    def stop(self) -> None:
        """SIGTERM every node's ``ray start --block`` (it stops the node's processes), then SIGKILL what is left."""
        for process in self.nodes.values():
            if process.poll() is None:
                process.terminate()
        deadline = time.time() + 15
        for process in self.nodes.values():
            try:
                process.wait(max(deadline - time.time(), 0.1))
            except subprocess.TimeoutExpired:
                pass
            for pid in _session(process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if process.poll() is None:
                process.wait(10)


@pytest.fixture
def cluster():
    # a short root: Ray's sockets live in TEMP_DIR/session_<date>_<pid>/sockets/, and a socket's path is at most
    # 107 bytes, which pytest's tmp_path would exceed
    root = Path(tempfile.mkdtemp(prefix="sray", dir="/tmp"))
    nodes = LocalCluster(root)
    try:
        nodes.start(workers=2)
        yield nodes
    finally:
        nodes.stop()
        shutil.rmtree(root, ignore_errors=True)


def _runs_state(out: Path) -> dict[str, str]:
    """Per run directory: finished (summary, not interrupted), checkpointed (a checkpoint, no finished summary)."""
    state = {}
    for run_dir in sorted((out / "runs").glob("*")) if (out / "runs").is_dir() else []:
        try:
            finished = not json.loads((run_dir / "summary.json").read_text()).get("interrupted")
        except (OSError, ValueError):
            finished = False
        if finished:
            state[run_dir.name] = "finished"
        elif (run_dir / run_directory.CHECKPOINT).is_file():
            state[run_dir.name] = "checkpointed"
    return state


def _checkpoint_chunk(run_dir: Path) -> int:
    with np.load(run_dir / run_directory.CHECKPOINT, allow_pickle=False) as data:
        for key in data.files:
            data[key]  # every array reads back
        return json.loads(data["manifest"].tobytes())["chunk"]


def _assert_readable(run_dir: Path) -> None:
    """Every file the run wrote reads back (config, progress, summary when there, checkpoint when there); a run
    killed before its config.yaml was written has nothing else but a write's temporary file."""
    if not (run_dir / "config.yaml").exists():
        assert all(p.name.startswith(".") for p in run_dir.iterdir()), sorted(run_dir.iterdir())
        return
    cfg = run_directory.load_run_config(run_dir)
    run_directory.read_progress(run_dir)
    if (run_dir / "summary.json").exists():
        json.loads((run_dir / "summary.json").read_text())
    if (run_dir / run_directory.CHECKPOINT).exists():
        assert 1 <= _checkpoint_chunk(run_dir) <= cfg["total_steps"] // STEPS_PER_ITERATION


@pytest.fixture
def cached_programs(tmp_path):
    """The environment of the sweep's drivers, with JAX's persistent compilation cache on (on CPU off by default,
    :mod:`saferl.foundation.jaxsetup`) and filled, while the cluster starts, by a one-iteration ``--local`` sweep of
    the test's config: the chunk program does not depend on the steps or the base seed, so the workers load it
    instead of compiling it (the compile is most of the test's time otherwise)."""
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "RAY_USAGE_STATS_ENABLED": "0",
        "SAFERL_COMPILATION_CACHE": "on",
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax_cache"),
    }
    grid = write_grid(
        tmp_path / "warm.yaml",
        {
            "algos": ["ppo_lag"],
            "envs": ["ToyReach"],
            "seeds": 2,
            "steps": STEPS_PER_ITERATION,
            "set": {**TINY, "seed": 0},
        },
    )
    warm = subprocess.Popen(
        [sys.executable, "-m", "saferl.experiments.job_grid", str(grid), "--local", "--out", str(tmp_path / "warm")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield env, warm
    finally:
        if warm.poll() is None:
            warm.kill()
        warm.communicate()


@pytest.mark.slow  # a Ray cluster killed and restarted (~20 s): the local grid's resume is tested in make test
@pytest.mark.skipif(
    RAY_MISSING, reason="ray is not installed (pip install 'saferl[ray]'): this test runs a Ray cluster"
)
def test_ray_sweep_killed_midway_resumes_without_repeating_finished_runs(tmp_path, cached_programs, cluster):
    iterations = 40
    grid = write_grid(
        tmp_path / "g.yaml",
        {
            "algos": ["ppo_lag"],
            "envs": ["ToyReach"],
            "seeds": 2,
            "steps": iterations * STEPS_PER_ITERATION,
            "set": [{**TINY, "seed": s} for s in (0, 10, 20, 30)],
        },
    )
    out = tmp_path / "out"
    # the last job fails in its worker (its run directory is a file): reported, retried once, the others unharmed;
    # it fails after the compile, which the seeds' jobs share (the program does not depend on the base seed)
    broken = out / "runs" / "ppo_lag__ToyReach__seed=30"
    broken.parent.mkdir(parents=True)
    broken.write_text("not a directory")
    env, warm = cached_programs
    env = {**env, **cluster.auth}
    warm_output = warm.communicate(timeout=240)[0]
    assert warm.returncode == 0 and "1 jobs: 1 trained" in warm_output, warm_output  # --local, real training
    command = [
        sys.executable,
        "-m",
        "saferl.experiments.job_grid",
        str(grid),
        "--address",
        cluster.address,
        "--out",
        str(out),
    ]
    with open(tmp_path / "driver1.log", "w") as log:
        driver = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 240
        while True:  # midway: a run finished, another one checkpointed at most halfway (so it cannot finish first)
            state = _runs_state(out)
            if "finished" in state.values() and any(
                s == "checkpointed" and _checkpoint_chunk(out / "runs" / n) <= iterations // 2 for n, s in state.items()
            ):
                break
            assert driver.poll() is None, (
                f"the sweep ended before it could be killed: {(tmp_path / 'driver1.log').read_text()}"
            )
            assert time.time() < deadline, f"no run finished in time: {(tmp_path / 'driver1.log').read_text()}"
            time.sleep(0.02)
        busy = [name for name in ("worker0", "worker1") if cluster.task_processes(name)]
        victim = busy[-1] if busy else "worker1"
        driver.send_signal(signal.SIGKILL)
        cluster.kill(victim)
    finally:
        driver.kill()
        driver.wait(10)
    survivor = "worker0" if victim == "worker1" else "worker1"
    deadline = time.time() + 30
    while cluster.task_processes(survivor):  # Ray stops the dead driver's tasks
        assert time.time() < deadline, "the killed sweep's task kept running"
        time.sleep(0.1)

    before = _runs_state(out)
    finished = sorted(n for n, s in before.items() if s == "finished")
    interrupted = sorted(n for n, s in before.items() if s == "checkpointed")
    assert finished and interrupted
    stamps = {
        n: (
            (out / "runs" / n / "summary.json").stat().st_mtime_ns,
            (out / "runs" / n / "summary.json").read_bytes(),
            (out / "runs" / n / run_directory.CHECKPOINT).read_bytes(),
        )
        for n in finished
    }
    chunks = {n: _checkpoint_chunk(out / "runs" / n) for n in interrupted}
    configs = {n: (out / "runs" / n / "config.yaml").stat().st_mtime_ns for n in interrupted}
    rows_before = {n: run_directory.read_progress(out / "runs" / n) for n in interrupted}
    for run_dir in (out / "runs").iterdir():
        if run_dir != broken:
            _assert_readable(run_dir)

    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert second.returncode == 1, second.stdout + second.stderr  # one job failed
    assert f"{len(finished)} skipped (finished before), 1 failed" in second.stdout, second.stdout

    report = json.loads((out / "sweep.json").read_text())
    statuses = {Path(j["run_dir"]).name: j["status"] for j in report["jobs"]}
    assert len(statuses) == 4 and report["counts"]["pending"] == 0 and report["counts"]["failed"] == 1
    [failed] = [j for j in report["jobs"] if j["status"] == "failed"]
    assert Path(failed["run_dir"]).name == broken.name and failed["attempts"] == 2, failed
    assert failed["error"].startswith("FileExistsError: ") and broken.name in failed["error"], failed
    for name in finished:  # reused untouched
        assert statuses[name] == "skipped"
        summary = out / "runs" / name / "summary.json"
        assert (
            summary.stat().st_mtime_ns,
            summary.read_bytes(),
            (out / "runs" / name / run_directory.CHECKPOINT).read_bytes(),
        ) == stamps[name]
    for name in interrupted:  # continued from the checkpoint: the rows it had are kept, none repeated
        assert statuses[name] == "resumed"
        assert (out / "runs" / name / "config.yaml").stat().st_mtime_ns == configs[name]  # a fresh start rewrites it
        rows = run_directory.read_progress(out / "runs" / name)
        kept = [r for r in rows_before[name] if r["iteration"] <= chunks[name]]
        assert len(kept) == 2 * chunks[name]
        np.testing.assert_equal(rows[: len(kept)], kept)  # NaN (no finished episode yet) equal to NaN
    for job in [j for j in report["jobs"] if j["status"] != "failed"]:
        run_dir = out / job["run_dir"]
        _assert_readable(run_dir)
        assert _checkpoint_chunk(run_dir) == iterations
        summary = json.loads((run_dir / "summary.json").read_text())
        assert not summary["interrupted"] and summary["env_steps"] == iterations * STEPS_PER_ITERATION
        assert job["config_hash"] == summary["config_hash"]
        assert job["final_return"] == summary["final"]["episode_return"]["per_seed"]
        assert job["final_cost"] == summary["final"]["episode_cost"]["per_seed"]
        rows = run_directory.read_progress(run_dir)  # every iteration exactly once per seed
        seed = run_directory.load_run_config(run_dir)["seed"]
        assert sorted((r["iteration"], r["seed"]) for r in rows) == sorted(
            (i, s) for i in range(1, iterations + 1) for s in (seed, seed + 1)
        )


def test_reproduce_ray_needs_a_target_that_declares_its_runs(capsys):
    from saferl.cli import main as cli_main

    assert cli_main(["reproduce", "svae-table1", "--scale", "smoke", "--ray", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "svae-table1 does not declare its runs" in err and "ctrpo-table1" in err

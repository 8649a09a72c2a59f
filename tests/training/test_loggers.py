"""Loggers: TensorBoard and W&B get progress.csv's scalars, per seed and as the mean, once per step.

The TensorBoard event files are read back with TensorBoard's own ``EventAccumulator``; the W&B run
is written offline and its ``run-<id>.wandb`` record log is read with W&B's own record protobuf.
"""

import glob
import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from saferl import cli
from saferl.training import config, loggers, run_directory, runs

CFG = {
    "algo": "ppo_lag",
    "env": "ToyReach",
    "total_steps": 4 * 400,
    "seeds": 2,
    "num_envs": 4,
    "rollout_steps": 100,
    "iterations_per_chunk": 1,
    "checkpoint_every": 2,  # a crash after chunk 3 leaves iteration 3 unchecked
    "hparams": {"minibatches": 2, "epochs": 1},
    "network": {"actor_hidden": [8], "critic_hidden": [8]},
    "logger": ["csv", "tensorboard", "wandb"],
}
SEEDS = [0, 1]

# The CSV holds each value to 6 significant digits (relative error <= 5e-6), TensorBoard as float32
# (<= 2**-24): together they bound how far the two may be apart.
CSV_RTOL = 5e-6 * (1 + 1e-9)
FLOAT32_RTOL = 2.0**-24

# the crashing sitting: killed (no clean-up, as a crash) once chunk 3's rows are written, before any checkpoint
_CRASH = """if True:
    import os, sys
    from saferl.training import config
    from saferl.training import runs
    from saferl.training import run_directory
    cfg = config.resolve({cfg})
    def crash(chunk, runners):
        if chunk == 3:
            sys.stdout.flush()
            os._exit(17)
    runs.train(cfg, sys.argv[1], show_progress=False, on_chunk=crash)
"""


def _read_tensorboard(directory: Path) -> dict:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(directory), size_guidance={"scalars": 0})  # 0: keep every event
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _wandb_records(path: Path) -> list:
    """The records of a ``.wandb`` file: a 7-byte header, then LevelDB-log blocks of 32 KiB whose chunks
    (crc32c, length, type: 1 full, 2 first, 3 middle, 4 last) carry ``Record`` protobufs."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    block, pos, pending, records = 32768, 7, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0:  # zero padding up to the block's end
            pos += left
            continue
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == 1:
            records.append(chunk)
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            records.append(pending + chunk)
    out = []
    for raw in records:
        record = pb.Record()
        record.ParseFromString(raw)
        out.append(record)
    return out


def _items(items) -> dict:
    return {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}


def _csv_table(run_dir: Path):
    """progress.csv as {iteration: {seed: row}}, and the metric columns."""
    rows = run_directory.read_progress(run_dir)
    table = {}
    for row in rows:
        table.setdefault(row["iteration"], {})[row["seed"]] = row
    names = [k for k in rows[0] if k not in run_directory.FIXED_COLUMNS]
    return table, names


def _expected(table, names):
    """{key: {metric: {env_steps: (value, tolerance)}}} from progress.csv, per seed and the mean over seeds."""
    out = {}
    for iteration, by_seed in sorted(table.items()):
        steps = int(by_seed[SEEDS[0]]["env_steps"])
        for name in names:
            values = [by_seed[s][name] for s in SEEDS]
            for s, v in zip(SEEDS, values):
                out.setdefault(f"seed_{s}", {}).setdefault(name, {})[steps] = (v, CSV_RTOL * abs(v))
            finite = [v for v in values if not math.isnan(v)]
            mean = sum(finite) / len(finite) if finite else math.nan
            # the mean of rounded values is off by at most the mean of their rounding errors
            tol = CSV_RTOL * sum(abs(v) for v in finite) / max(len(finite), 1)
            out.setdefault("mean", {}).setdefault(name, {})[steps] = (mean, tol)
    return out


def _close(got: float, want: float, tol: float, rtol: float = 0.0) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return abs(got - want) <= tol + rtol * abs(want)


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory):
    """A run that crashed after chunk 3 (checkpoint at chunk 2), then resumed to the end."""
    run_dir = tmp_path_factory.mktemp("logged") / "run"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "WANDB_MODE": "offline"}
    done = subprocess.run(
        [sys.executable, "-c", _CRASH.format(cfg=repr(CFG)), str(run_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 17, done.stderr[-3000:]
    assert (
        max(r["iteration"] for r in run_directory.read_progress(run_dir)) == 3
    )  # iteration 3 written, not checkpointed
    first_tb = {key: _read_tensorboard(run_dir / "tensorboard" / key) for key in ("seed_0", "mean")}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        runs.train(run_directory.load_run_config(run_dir), run_dir, resume=True, show_progress=False)
    return run_dir, first_tb


@pytest.mark.slow  # TensorBoard and W&B are extras; their shared resumed run trains twice (~20 s)
def test_tensorboard_holds_progress_csv_per_seed_and_mean(resumed_run):
    run_dir, first_tb = resumed_run
    # the crashed sitting had written iteration 3 (1200 steps) already: it is what resuming must not duplicate
    assert [step for step, _ in first_tb["seed_0"]["episode_return"]] == [400, 800, 1200]
    table, names = _csv_table(run_dir)
    assert sorted(table) == [1, 2, 3, 4]
    expected = _expected(table, names)
    keys = sorted(p.name for p in (run_dir / "tensorboard").iterdir())
    assert keys == ["mean", "seed_0", "seed_1"]
    assert len(list((run_dir / "tensorboard" / "mean").iterdir())) == 2  # one event file per sitting
    for key in keys:
        scalars = _read_tensorboard(run_dir / "tensorboard" / key)
        assert sorted(scalars) == sorted(names), key
        for name in names:
            steps = [step for step, _ in scalars[name]]
            assert steps == [400, 800, 1200, 1600], (key, name, steps)  # each step once, in order
            for step, value in scalars[name]:
                want, tol = expected[key][name][step]
                assert _close(value, want, tol, FLOAT32_RTOL), (key, name, step, value, want)


@pytest.mark.slow  # the shared resumed run above
def test_wandb_offline_run_holds_progress_csv(resumed_run):
    run_dir, _ = resumed_run
    state = json.loads((run_dir / loggers.WANDB_STATE).read_text())
    sittings = sorted(glob.glob(str(run_dir / "wandb" / f"offline-run-*-{state['id']}")))
    assert len(sittings) == 2  # one offline directory per sitting, the same run id: `wandb sync` joins them
    assert state["logged"] == {"seed_0": 4, "seed_1": 4, "mean": 4} and state["closed"] is True
    history, summary, config_items = [], {}, {}
    for sitting in sittings:
        records = _wandb_records(Path(sitting) / f"run-{state['id']}.wandb")
        kinds = [r.WhichOneof("record_type") for r in records]
        for record in records:
            kind = record.WhichOneof("record_type")
            if kind == "history":
                history.append(_items(record.history.item))
            elif kind == "summary":
                summary.update(_items(record.summary.update))
            elif kind == "run":
                config_items.update(_items(record.run.config.update))
    assert "run" in kinds and kinds[-1] == "exit"  # the resumed sitting's log (the crashed one may end anywhere)
    table, names = _csv_table(run_dir)
    expected = _expected(table, names)
    by_iteration = {}
    for row in history:
        by_iteration[int(row["iteration"])] = row  # the last one sent for each iteration
    assert sorted(by_iteration) == [1, 2, 3, 4]
    for iteration, row in by_iteration.items():
        steps = int(row["env_steps"])
        assert steps == 400 * iteration
        for key in ("seed_0", "seed_1", "mean"):
            for name in names:
                want, tol = expected[key][name][steps]
                assert _close(float(row[f"{key}/{name}"]), want, tol), (key, name, iteration)
    last = by_iteration[4]
    for name in ("episode_return", "episode_cost"):
        assert summary[f"mean/{name}"] == pytest.approx(last[f"mean/{name}"])
    assert config_items["algo"] == "ppo_lag" and config_items["logger"] == CFG["logger"]  # the resolved config


# --------------------------------------------------------------------------- without training


def _rows(iterations, seeds, value=lambda it, s: 10.0 * it + s, steps=100):
    return [
        {"iteration": it, "env_steps": it * steps, "seed": s, "episode_return": value(it, s), "cost": float(s)}
        for it in iterations
        for s in seeds
    ]


def test_progress_csv_and_summary_do_not_depend_on_the_loggers(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    base = config.resolve({"algo": "ppo", "env": "ToyReach", "seeds": 2})
    written = {}
    for names in (["csv"], ["csv", "tensorboard", "wandb"]):
        run_dir = tmp_path / "-".join(names)
        run_dir.mkdir()
        recorder = runs.Recorder(run_dir, {**base, "logger": names}, [], False, 300)
        recorder.add(_rows([1], SEEDS, value=lambda it, s: 1.0 / 3.0 + s))
        recorder.add(_rows([2, 3], SEEDS, value=lambda it, s: math.nan if (it, s) == (2, 1) else -(2.0**-it)))
        summary = recorder.finish(interrupted=False)
        written[len(names)] = (run_dir / "progress.csv").read_bytes(), summary["final"]
    assert written[1] == written[3]
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == ["progress.csv", "summary.json"]


def test_mean_waits_for_every_seed_as_the_bridge_trains_them(tmp_path):
    """The Gymnasium bridge trains seed 0 to the end, then seed 1: the mean comes with seed 1's rows."""
    cfg = {"logger": ["csv", "tensorboard"], "seeds": 2, "seed": 0}
    logs = loggers.Loggers(tmp_path, cfg, SEEDS, [], None)
    logs.add(_rows([1, 2], [0]))
    logs.add(_rows([3], [0]))
    logs.add(_rows([1, 2, 3], [1], value=lambda it, s: math.nan if it == 2 else 10.0 * it + s))
    logs.close()
    seed1 = _read_tensorboard(tmp_path / "tensorboard" / "seed_1")["episode_return"]
    assert [s for s, _ in seed1] == [100, 200, 300] and math.isnan(seed1[1][1])
    mean = _read_tensorboard(tmp_path / "tensorboard" / "mean")
    assert mean["episode_return"] == [(100, 10.5), (200, 20.0), (300, 30.5)]  # NaN seeds left out of the mean
    assert mean["cost"] == [(100, 0.5), (200, 0.5), (300, 0.5)]


def test_a_logger_added_on_resume_first_writes_the_earlier_rows(tmp_path):
    cfg = {"logger": ["csv"], "seeds": 2, "seed": 0}
    logs = loggers.Loggers(tmp_path, cfg, SEEDS, _rows([1, 2], SEEDS), "csv,tensorboard")
    logs.add(_rows([3], SEEDS))
    logs.close()
    assert [s for s, _ in _read_tensorboard(tmp_path / "tensorboard" / "mean")["episode_return"]] == [100, 200, 300]


def test_csv_alone_writes_no_logger_files(tmp_path):
    logs = loggers.Loggers(tmp_path, {"logger": ["csv"], "seeds": 2, "seed": 0}, SEEDS, [], None)
    logs.add(_rows([1], SEEDS))
    logs.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "value, names",
    [
        (None, ["csv"]),
        ("csv", ["csv"]),
        ("tensorboard", ["csv", "tensorboard"]),
        ("wandb, csv,tensorboard", ["csv", "wandb", "tensorboard"]),
        (["tensorboard", "tensorboard"], ["csv", "tensorboard"]),
        (["csv,wandb"], ["csv", "wandb"]),
    ],
)
def test_parse(value, names):
    assert loggers.parse(value) == names


def test_config_records_the_loggers():
    cfg = config.resolve({"algo": "ppo", "env": "ToyReach", "logger": "tensorboard"})
    assert cfg["logger"] == ["csv", "tensorboard"]
    assert config.resolve({"algo": "ppo", "env": "ToyReach"})["logger"] == ["csv"]
    with pytest.raises(config.ConfigError, match="unknown logger 'mlflow'.*known loggers: csv, tensorboard, wandb"):
        config.resolve({"algo": "ppo", "env": "ToyReach", "logger": ["csv", "mlflow"]})
    with pytest.raises(config.ConfigError, match="logger must be a name or a list of names"):
        config.resolve({"algo": "ppo", "env": "ToyReach", "logger": 3})


def test_wandb_mode_never_needs_a_prompt(tmp_path):
    empty = tmp_path / "netrc"
    empty.write_text("")
    base = {"NETRC": str(empty)}
    assert loggers.wandb_mode(base) == "offline"  # no key anywhere
    assert loggers.wandb_mode({**base, "WANDB_API_KEY": "k" * 40}) == "online"
    assert loggers.wandb_mode({**base, "WANDB_API_KEY": "k" * 40, "WANDB_MODE": "offline"}) == "offline"
    assert loggers.wandb_mode({**base, "WANDB_MODE": "dryrun"}) == "offline"
    assert loggers.wandb_mode({**base, "WANDB_MODE": "disabled"}) == "disabled"
    empty.write_text("machine api.wandb.ai\n  login user\n  password " + "p" * 40 + "\n")
    empty.chmod(0o600)
    assert loggers.wandb_mode(base) == "online"
    assert loggers.wandb_mode({**base, "WANDB_BASE_URL": "https://wandb.example.org"}) == "offline"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--logger", "csv,tensorbord"],
            "unknown logger 'tensorbord' (logger / --logger); known loggers: csv, tensorboard, wandb",
        ),
        (
            ["--logger", "csv", "--logger", "wandb"],
            "--logger given 2 times; name the loggers in one, separated by commas: --logger csv,wandb",
        ),
        (
            ["--set", "logger=[csv,tb]"],
            "unknown logger 'tb' (logger / --logger); known loggers: csv, tensorboard, wandb",
        ),
    ],
)
def test_bad_logger_is_one_line(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["train", "--algo", "ppo", "--env", "ToyReach", "--steps", "800", "--out", str(out), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"saferl: error: {message}", err
    assert not out.exists()


@pytest.mark.parametrize("module, extra", [("tensorboardX", "tensorboard"), ("wandb", "wandb")])
def test_missing_extra_is_one_line_before_anything_is_written(module, extra, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it raises ImportError
    out = tmp_path / "run"
    code = cli.main(
        ["train", "--algo", "ppo", "--env", "ToyReach", "--steps", "800", "--out", str(out), "--logger", f"csv,{extra}"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err == (
        f"saferl: error: the {extra} logger needs the optional extra '{extra}' (module {module!r} is not "
        f"installed): pip install 'saferl[{extra}]'"
    )
    assert not out.exists()

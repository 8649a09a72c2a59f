"""JAX's persistent compilation cache: the one place that decides whether saferl turns it on.

Used by the command line (``saferl.cli``) and the test session (``tests/conftest.py``).

On the CPU backend of jaxlib 0.9 and 0.10 the XLA:CPU AOT loader checks two LLVM tuning
flags (``+prefer-no-gather``, ``+prefer-no-scatter``) as if they were CPU features the host
must have (jax-ml/jax#38445, openxla/xla#44565).  On hosts whose CPU model sets them, every
process that reads a cache entry logs a multi-kilobyte ``E... cpu_aot_loader.cc`` error per
entry ("Machine type used for XLA:CPU compilation doesn't match ... SIGILL"), although the
entry was written on the same machine: a false alarm, and jax-ml/jax#38445 reports the
entries rejected as well.  saferl keeps the cache off there, so a second identical run prints what
the first printed, and every process compiles in full
(docs/decisions/012-compilation-cache-off-on-cpu.md has the measurement).  Accelerator backends (gpu, tpu) keep the
cache.  ``SAFERL_COMPILATION_CACHE=on`` (or ``off``) overrides the decision, e.g. to trade
the log lines for shorter compiles where the entries do load.
"""

from __future__ import annotations

import os

#: jaxlib versions whose CPU AOT loader has the defect: from (inclusive), to (exclusive;
#: None while no release has the fix).  0.9.1, 0.9.2 and 0.10.1 are reported in jax-ml/jax#38445.
CPU_CACHE_DEFECT = ((0, 9, 0), None)

#: the environment variable that overrides the decision: "on" or "off"
OVERRIDE = "SAFERL_COMPILATION_CACHE"
#: the values saferl's on/off environment variables (this one, ``SAFERL_GPU``) accept, in any case
ON_VALUES, OFF_VALUES = ("1", "on", "true", "yes"), ("0", "off", "false", "no")


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.9.2"`` -> ``(0, 9, 2)``; stops at the first part that is not a number (``"0.10.0rc1"`` -> ``(0, 10)``)."""
    parts = []
    for part in version.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def cache_wanted(backend: str, jaxlib_version: tuple[int, ...], override: str | None = None) -> bool:
    """Whether to use the persistent compilation cache on ``backend`` ("cpu", "gpu", "tpu", ...)
    with this jaxlib version; ``override`` ("on"/"off", any case; None or "" for automatic) wins."""
    if override:
        value = override.strip().lower()
        if value in ON_VALUES:
            return True
        if value in OFF_VALUES:
            return False
        raise ValueError(f"{OVERRIDE} must be on or off, got {override!r}")
    if backend != "cpu":
        return True
    first, fixed = CPU_CACHE_DEFECT
    affected = tuple(jaxlib_version) >= first and (fixed is None or tuple(jaxlib_version) < fixed)
    return not affected


def configure_compilation_cache(cache_dir: str, min_compile_secs: float) -> bool:
    """Turn JAX's persistent compilation cache on (in ``cache_dir``, for programs that take at
    least ``min_compile_secs`` to compile) or off, as :func:`cache_wanted` decides for the
    default backend; returns whether it is on.  Call before the first compile."""
    import jax
    import jaxlib

    on = cache_wanted(jax.default_backend(), version_tuple(jaxlib.__version__), os.environ.get(OVERRIDE))
    if on:
        jax.config.update("jax_enable_compilation_cache", True)
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_secs)
    else:
        jax.config.update("jax_enable_compilation_cache", False)
    return on


def accelerator_plugins() -> list[str]:
    """The names of the installed JAX accelerator plugins (``jax_plugins`` entry points: ``jax[cuda12]``'s
    ``jax_cuda12_plugin``, ROCm's, ...); none on a CPU-only install."""
    from importlib.metadata import entry_points

    return sorted(ep.name for ep in entry_points(group="jax_plugins"))


def platforms_for(saferl_gpu: str | None, plugins: list[str], driver: bool = False) -> str | None:
    """What a saferl process sets ``JAX_PLATFORMS`` to, or None to leave JAX's own choice (an accelerator when one
    works).  ``SAFERL_GPU`` decides when set; otherwise a process that only schedules Ray jobs (``driver``) stays on
    the CPU -- JAX preallocates most of a GPU's memory the moment it starts there, memory the jobs need -- and any
    other follows the installed plugins: JAX's choice with an accelerator plugin, the CPU without one (a CPU-only
    install then never probes for accelerators or warns about them)."""
    if saferl_gpu:
        value = saferl_gpu.strip().lower()
        if value in ON_VALUES:
            return None
        if value in OFF_VALUES:
            return "cpu"
        raise ValueError(f"SAFERL_GPU must be 1 or 0 (on/off), got {saferl_gpu!r}")
    if driver or not plugins:
        return "cpu"
    return None


def is_ray_driver(args) -> bool:
    """Whether the parsed command line ``args`` only schedules Ray jobs: ``sweep`` without ``--local``, ``reproduce``
    with ``--ray`` or ``--address`` (:func:`setup_process`'s ``driver``)."""
    command = getattr(args, "command", None)
    return (command == "sweep" and not getattr(args, "local", False)) or (
        command == "reproduce" and bool(getattr(args, "ray", False) or getattr(args, "address", None))
    )


_PROCESS_READY = False


def setup_process(driver: bool = False) -> None:
    """What every saferl process does before its first compile (the CLI, a Ray worker): the platform of
    :func:`platforms_for` unless ``JAX_PLATFORMS`` is set already (``driver``: a process that only schedules Ray
    jobs), and the persistent compilation cache as :func:`configure_compilation_cache` decides (in
    ``JAX_COMPILATION_CACHE_DIR`` or ``~/.cache/saferl/jax``).  Once per process."""
    global _PROCESS_READY
    if _PROCESS_READY:
        return
    from pathlib import Path

    if "JAX_PLATFORMS" not in os.environ:
        platforms = platforms_for(os.environ.get("SAFERL_GPU"), accelerator_plugins(), driver)
        if platforms is not None:
            os.environ["JAX_PLATFORMS"] = platforms
    cache = os.environ.get("JAX_COMPILATION_CACHE_DIR", str(Path.home() / ".cache" / "saferl" / "jax"))
    configure_compilation_cache(cache, min_compile_secs=1.0)
    _PROCESS_READY = True

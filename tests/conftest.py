"""Test-session settings: CPU, and JAX's persistent compilation cache to keep compiles few."""

import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_CACHE = os.environ.get("JAX_COMPILATION_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".jax_cache"))

import jax  # noqa: E402

jax.config.update("jax_compilation_cache_dir", _CACHE)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)

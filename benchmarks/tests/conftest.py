"""Settings for the tests of benchmarks/ scripts, as tests/conftest.py's: the CPU, and JAX's
persistent compilation cache where saferl uses it (:mod:`saferl.foundation.jaxsetup`)."""

import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_CACHE = os.environ.get("JAX_COMPILATION_CACHE_DIR", str(Path(__file__).resolve().parents[2] / ".jax_cache"))

from saferl.foundation import jaxsetup  # noqa: E402

jaxsetup.configure_compilation_cache(_CACHE, min_compile_secs=0.5)

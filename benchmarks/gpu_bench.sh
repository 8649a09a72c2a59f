#!/usr/bin/env bash
# One prepared accelerator check of saferl's throughput, for a machine with a GPU:
#     bash benchmarks/gpu_bench.sh OUT_DIR
# The device image has its own JAX with CUDA (0.11 at the time of writing, outside our CPU pin,
# which exists for a CPU-runtime deadlock), so the package runs from the source tree without pip.
# It times saferl bench at large batch:
#   - PPO-Lag and CPO on PointGoal1 with 64x64 networks (OmniSafe's defaults), seed scaling
#     1 vs 8 vs 32 vmapped seeds at the same environments per seed;
#   - Canary with its App. D networks (3x256 actor and critics), and with 64x64 networks.
# Each configuration prints env-steps/s, compile time and device peak memory; JSON goes to OUT_DIR.
set -euo pipefail
out=${1:-benchmarks/results/gpu}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
# the CLI leaves the platform to JAX when an accelerator plugin is installed and pins the CPU otherwise
# (saferl/foundation/jaxsetup.py platforms_for); SAFERL_GPU=1 makes it leave the choice to JAX in any case
export SAFERL_GPU=1
export JAX_COMPILATION_CACHE_DIR=${JAX_COMPILATION_CACHE_DIR:-$PWD/.jax_cache}
bench() { python3 -c "import sys; from saferl.cli import main; sys.exit(main(sys.argv[1:]))" bench "$@"; }
python3 -c "import jax; print(jax.__version__, jax.devices())"
# the backend the CLI itself will use (fails loudly if it is still the CPU)
python3 -c "from saferl.foundation.jaxsetup import setup_process; setup_process(); import jax; b = jax.default_backend(); print('saferl backend:', b); assert b != 'cpu', 'saferl would bench on the CPU'"
bench --algo ppo_lag,cpo --grid 16x1,16x8,16x32,256x1,256x8,1024x8 --env-grid 1024x1,4096x8 \
  --out "$out/ppo_lag_cpo.json"
bench --algo canary --grid 16x1,16x8,256x8 --env-grid 1024x1 --out "$out/canary_appd.json"
bench --algo canary --grid 16x1,16x8,256x8 --env-grid 1024x1 \
  --set "network.actor_hidden=[64,64]" --set "network.critic_hidden=[64,64]" --out "$out/canary_64.json"

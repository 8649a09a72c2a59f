#!/usr/bin/env bash
# Side-by-side throughput: saferl vs OmniSafe 0.5 on the same machine, measured in one run.
#
#   bash benchmarks/omnisafe_side_by_side.sh [STEPS]
#
# OmniSafe needs its own virtual environment: `pip install omnisafe==0.5.0` fails on Python 3.11 (its
# safety-gymnasium 1.0.0 pins pygame==2.1.0, which has no Python 3.11 wheel, and gymnasium-robotics 1.2.2 pins
# numpy<1.24). So: torch 2.13 (CPU), safety-gymnasium 1.0.0 and omnisafe 0.5.0 installed with --no-deps, their
# dependencies by hand with pygame>=2.1.3, and safety-gymnasium's mutable dataclass defaults patched so it imports
# on Python 3.11 (patch_safety_gymnasium.py). OmniSafe is pinned to 1 torch thread (it slows several-fold when
# it shares cores). Results go to benchmarks/results/ (omnisafe_ALGO.json|log, saferl_bench*.json); compare.py
# prints the ratios at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-20000}
OMNI=${OMNI_VENV:-.venv-omnisafe}
PY=${PYTHON:-python3.11}
mkdir -p benchmarks/results

if [ ! -x "$OMNI/bin/python" ]; then
  $PY -m venv "$OMNI"
  "$OMNI/bin/pip" install --quiet torch==2.13.0
  "$OMNI/bin/pip" install --quiet --no-deps safety-gymnasium==1.0.0 omnisafe==0.5.0
  "$OMNI/bin/pip" install --quiet gymnasium==0.28.1 gymnasium-robotics==1.2.2 mujoco==2.3.3 'numpy<1.24' \
      pandas==2.0.3 'pygame>=2.1.3' xmltodict pyyaml imageio tensorboard wandb moviepy typer seaborn matplotlib gdown
  # Python 3.11 rejects `color: np.array = COLOR[...]` dataclass defaults: use default factories instead.
  "$OMNI/bin/python" benchmarks/patch_safety_gymnasium.py
fi

echo "== OmniSafe PPOLag and CPO on SafetyPointGoal1-v0 ($STEPS steps, 1 env, 1 torch thread)"
for algo in PPOLag CPO; do
  OMP_NUM_THREADS=1 "$OMNI/bin/python" benchmarks/omnisafe_run.py "$algo" "$STEPS" | tee "benchmarks/results/omnisafe_$algo.log" \
    | grep "^{" > "benchmarks/results/omnisafe_$algo.json"
done

echo "== saferl bench (same machine, same run)"
make venv >/dev/null
.venv/bin/saferl bench --algo ppo_lag,cpo --out benchmarks/results/saferl_bench.json
# Canary with OmniSafe's network sizes (64x64, what the OmniSafe CPO above runs) and with its App. D sizes
.venv/bin/saferl bench --algo canary --grid 16x1,16x8 --env-grid 64x1 --set "network.actor_hidden=[64,64]" \
    --set "network.critic_hidden=[64,64]" --out benchmarks/results/saferl_bench_canary_64x64.json
.venv/bin/saferl bench --algo canary --grid 16x1 --env-grid 64x1 --out benchmarks/results/saferl_bench_canary_appd.json
.venv/bin/python benchmarks/compare.py benchmarks/results

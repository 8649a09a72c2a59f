#!/usr/bin/env bash
# Side-by-side throughput on the C-TRPO benchmark's tasks: OmniSafe 0.5 CPO against saferl's CPO, task by task,
# in one run on one machine.
#
#   bash benchmarks/omnisafe_tasks.sh [STEPS]
#
# For each task, OmniSafe's CPO (1 env, 1 torch thread, STEPS steps end to end, two epochs) runs first and
# `saferl bench --algo cpo` on the same task right after it, so the two sides of a ratio see the same machine
# state.  The three velocity tasks without an OmniSafe acceptance line (Ant, HalfCheetah, Humanoid) are benched
# on saferl's side only, so that every task of the benchmark has a row.  The OmniSafe venv is the one
# benchmarks/omnisafe_side_by_side.sh builds (.venv-omnisafe).  Results: benchmarks/results/tasks/*.json, and
# the table from benchmarks/compare_tasks.py in benchmarks/results/tasks/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-20000}
OMNI=${OMNI_VENV:-.venv-omnisafe}
OUT=benchmarks/results/tasks
GRID=${GRID:-16x1,16x5}
EXTRA=${EXTRA:-1}  # 0: leave out the three velocity tasks without an OmniSafe side
# the tasks with an OmniSafe side (original ids), all five by default
TASKS=${TASKS:-SafetyHopperVelocity-v1 SafetyPointGoal1-v0 SafetyPointPush1-v0 SafetyCarButton1-v0 SafetyRacecarCircle1-v0}
mkdir -p "$OUT"
if [ ! -x "$OMNI/bin/python" ]; then
  echo "no OmniSafe venv at $OMNI: run benchmarks/omnisafe_side_by_side.sh once (it builds it)" >&2
  exit 2
fi
make venv >/dev/null

# original Safety-Gymnasium id -> saferl name
declare -A SAFERL=([SafetyHopperVelocity-v1]=SafetyHopperVelocity [SafetyPointGoal1-v0]=PointGoal1
                   [SafetyPointPush1-v0]=PointPush1 [SafetyCarButton1-v0]=CarButton1
                   [SafetyRacecarCircle1-v0]=RacecarCircle1)
for task in $TASKS; do
  name=${SAFERL[$task]}
  echo "== $(date -u +%FT%TZ) OmniSafe CPO on $task ($STEPS steps, 1 env, 1 torch thread)"
  OMP_NUM_THREADS=1 "$OMNI/bin/python" benchmarks/omnisafe_run.py CPO "$STEPS" "$task" \
    | tee "$OUT/omnisafe_CPO_$name.log" | grep "^{" > "$OUT/omnisafe_CPO_$name.json"
  echo "== $(date -u +%FT%TZ) saferl bench --algo cpo --env $name"
  envgrid=64x1,256x5; case $name in Safety*) envgrid=64x1;; esac  # MuJoCo steps ~100x slower
  .venv/bin/saferl bench --algo cpo --env "$name" --grid "$GRID" --env-grid "$envgrid" \
    --out "$OUT/saferl_cpo_$name.json"
  case $name in Safety*)  # the velocity task's other physics backend, MJX (the default is MuJoCo C on the host)
    echo "== $(date -u +%FT%TZ) saferl bench --algo cpo --env $name --set env_params.physics=mjx"
    .venv/bin/saferl bench --algo cpo --env "$name" --grid "$GRID" --env-grid 64x1 --set env_params.physics=mjx \
      --out "$OUT/saferl_cpo_${name}_mjx.json";;
  esac
done
for name in $([ "$EXTRA" = 0 ] || echo SafetyAntVelocity SafetyHalfCheetahVelocity SafetyHumanoidVelocity); do
  echo "== $(date -u +%FT%TZ) saferl bench --algo cpo --env $name (no OmniSafe side)"
  .venv/bin/saferl bench --algo cpo --env "$name" --grid 16x1 --env-grid 64x1 --chunks 1 \
    --out "$OUT/saferl_cpo_$name.json"
done
uptime > "$OUT/load_after.txt"
.venv/bin/python benchmarks/compare_tasks.py "$OUT" | tee "$OUT/table.md"

#!/bin/bash
# docs/results/fidelity/cross_eval.md: for each task of the C-TRPO benchmark, ctrpo-table1's cpu-scale CPO run on
# saferl's port (its default physics) and the same configuration trained on the original through the Gymnasium
# bridge, each run's policies played on both (benchmarks/fidelity/cross_eval.py). Resumable: finished runs and
# evaluations are kept, an interrupted run continues from its checkpoint.
#   bash benchmarks/fidelity/cross_eval_all.sh [port|original|report] [TASK ...]
# Without a phase: port, then original, then report; without tasks: the eight (the cheap velocity tasks first).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
SCRIPT=benchmarks/fidelity/cross_eval.py
OUT=${CROSS_EVAL_OUT:-runs/cross_eval}
PHASES="port original report"
case "${1:-}" in port|original|report) PHASES=$1; shift ;; esac
TASKS=${*:-SafetyHopperVelocity SafetyHalfCheetahVelocity SafetyAntVelocity SafetyHumanoidVelocity PointGoal1 PointPush1 CarButton1 RacecarCircle1}
mkdir -p "$OUT/eval"
for phase in $PHASES; do
  for task in $TASKS; do
    case $phase in
      port)
        $PY $SCRIPT train-port "$task" --out "$OUT/port/$task"
        [ -f "$OUT/eval/port-$task.json" ] || $PY $SCRIPT evaluate "$OUT/port/$task" --max-episodes "${MAX_EPISODES:-100}" --json "$OUT/eval/port-$task.json" ;;
      original)
        $PY $SCRIPT train-original "$OUT/port/$task" --out "$OUT/original/$task"
        [ -f "$OUT/eval/original-$task.json" ] ||
          $PY $SCRIPT evaluate "$OUT/original/$task" --max-episodes "${MAX_EPISODES:-100}" --json "$OUT/eval/original-$task.json" ;;
      report) ;;
    esac
  done
done
if [[ " $PHASES " == *" report "* ]]; then
  $PY $SCRIPT report "$OUT"/eval/*.json > docs/results/fidelity/cross_eval.md
  $PY -c "import json,sys; print(json.dumps([r for p in sys.argv[1:] for r in json.load(open(p), \
    parse_float=lambda x: round(float(x), 4))], separators=(',', ':')))" \
    "$OUT"/eval/*.json > docs/results/fidelity/cross_eval.json
  echo "wrote docs/results/fidelity/cross_eval.md and .json"
fi

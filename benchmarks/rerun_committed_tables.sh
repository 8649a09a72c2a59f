#!/usr/bin/env bash
# Rerun the committed reproduce tables with the checked-out code, resumably:
# every target trains into runs/reproduce/TARGET-SCALE (finished runs are reused, interrupted ones resumed),
# and its results.json and figures replace docs/results/TARGET-SCALE.  Run from the repository root:
#     nohup bash benchmarks/rerun_committed_tables.sh > runs/rerun.log 2>&1 &
# Arguments (optional): TARGET:SCALE[:OUT] ... (default: all of them, cheapest first); OUT names the directory under
# runs/reproduce when it is not TARGET-SCALE, e.g. ctrpo-fig3:cpu:ctrpo-table1-cpu reuses ctrpo-table1's runs.
set -euo pipefail
BIN=${BIN:-.venv/bin}
TABLES=("$@")
if [ ${#TABLES[@]} -eq 0 ]; then
  TABLES=(canary-fig2:cpu canary-theorem42:cpu canary-fig5:demo foundation-pointgoal:cpu canary-table1:cpu
          ctrpo-pointgoal:cpu)
fi
for entry in "${TABLES[@]}"; do
  IFS=: read -r target scale outname <<< "$entry"
  out=runs/reproduce/${outname:-$target-$scale}
  echo "== $(date -u +%FT%TZ) $target --scale $scale -> $out"
  "$BIN/saferl" reproduce "$target" --scale "$scale" --out "$out"
  "$BIN/python" - "$out" "docs/results/$target-$scale" <<'PY'
import json, shutil, sys
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
result = json.loads((src / "results.json").read_text())
dst.mkdir(parents=True, exist_ok=True)
for old in sorted(dst.rglob("*"), reverse=True):  # the previous table's files, figures in folders included
    if old == dst / "README.md":  # the write-up beside the table is kept
        continue
    if old.is_file():
        old.unlink()
    elif old.is_dir() and not any(old.iterdir()):
        old.rmdir()
for name in ["results.json", *result["figures"]]:
    (dst / name).parent.mkdir(parents=True, exist_ok=True)  # a figure may sit in a task's folder
    shutil.copy2(src / name, dst / name)
print(f"copied {src} -> {dst}")
PY
done
echo "== $(date -u +%FT%TZ) done"

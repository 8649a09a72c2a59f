#!/usr/bin/env bash
# Everything the C-TRPO benchmark's cpu tables are judged with, regenerated from one pinned training:
#     bash benchmarks/ctrpo_cpu_report.sh PIN MIRROR
# PIN: the clone, checked out at one commit, that trained and tabulated the tables (runs/reproduce/ctrpo-table1-cpu
# and docs/results/ctrpo-*-cpu inside it, written by benchmarks/rerun_committed_tables.sh); MIRROR: a git clone of
# milosen/ctrpo (the C-TRPO authors' runs).  Run from the repository root of the checkout whose docs/ it updates,
# with its venv.  Writes, under docs/:
#   results/ctrpo-{table1,fig3,phi,hysteresis,beta,cost-noise}-cpu  PIN's tables (copied; tabulated by PIN's commit)
#   results/ctrpo-authors-runs/ours-at-equal-steps-cpu.md            ours against the authors' runs per seed, rank tests
#   results/ctrpo-authors-runs/ours-beside-theirs-cpu.md             IQM intervals side by side, claims (authors_at_budget)
#   results/ctrpo-authors-runs/fig3-without-{racecar,racecar-carbutton}-cpu.{md,json}
#                                                                    Fig. 3 with the ports that differ left out
#   results/ctrpo-table1-cpu-job-rates.md                            measured job rates and the paper's budget at them
set -euo pipefail
PIN=${1:?the pinned clone that trained the tables}
MIRROR=${2:?a git clone of milosen/ctrpo}
PY=${PY:-.venv/bin/python}
OUT="$PIN/runs/reproduce/ctrpo-table1-cpu"
for target in ctrpo-table1 ctrpo-fig3 ctrpo-phi ctrpo-hysteresis ctrpo-beta ctrpo-cost-noise; do
  if [ -f "$PIN/docs/results/$target-cpu/results.json" ]; then
    # the tables are PIN's; the write-up beside them (README.md) is this checkout's and stays
    find "docs/results/$target-cpu" -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} + 2>/dev/null || true
    mkdir -p "docs/results/$target-cpu"
    (cd "$PIN/docs/results/$target-cpu" && find . -mindepth 1 -maxdepth 1 ! -name README.md -exec cp -r {} \
      "$OLDPWD/docs/results/$target-cpu/" \;)
    echo "copied $target-cpu"
  else
    echo "not tabulated yet: $target-cpu"
  fi
done
DEST=docs/results/ctrpo-authors-runs
"$PY" benchmarks/authors_runs.py "$MIRROR" "$OUT" > "$DEST/ours-at-equal-steps-cpu.md"
"$PY" benchmarks/authors_at_budget.py "$MIRROR" --ours docs/results/ctrpo-table1-cpu/results.json \
  > "$DEST/ours-beside-theirs-cpu.md"
"$PY" benchmarks/fig3_leave_out.py "$MIRROR" "$OUT" --leave-out RacecarCircle1 --reps 10000 \
  --json "$DEST/fig3-without-racecar-cpu.json" > "$DEST/fig3-without-racecar-cpu.md"
"$PY" benchmarks/fig3_leave_out.py "$MIRROR" "$OUT" --leave-out RacecarCircle1 --leave-out CarButton1 --reps 10000 \
  --json "$DEST/fig3-without-racecar-carbutton-cpu.json" > "$DEST/fig3-without-racecar-carbutton-cpu.md"
"$PY" benchmarks/job_rates.py "$OUT" > docs/results/ctrpo-table1-cpu-job-rates.md
echo "done: review git status"

"""Print the saferl / OmniSafe throughput ratios from benchmarks/results/*.json."""

import json
import sys
from pathlib import Path

results = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
best = {}
for name, suffix in (
    ("saferl_bench.json", ""),
    ("saferl_bench_canary_64x64.json", " (64x64)"),
    ("saferl_bench_canary_appd.json", " (App. D 3x256)"),
):
    if not (results / name).is_file():
        continue
    for row in json.loads((results / name).read_text())["training"]:
        key = row["algo"] + suffix
        best[key] = max(best.get(key, 0.0), row["steps_per_second"])
# Canary has no OmniSafe counterpart: it is compared with OmniSafe's CPO, the method it extends
for algo, ours in (
    ("PPOLag", "ppo_lag"),
    ("CPO", "cpo"),
    ("CPO", "canary"),
    ("CPO", "canary (64x64)"),
    ("CPO", "canary (App. D 3x256)"),
):
    path = results / f"omnisafe_{algo}.json"
    if not path.is_file() or ours not in best:
        continue
    line = [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")][-1]
    ratio = best[ours] / line["steps_per_second"]
    print(
        f"{ours:22s} vs {algo:7s} omnisafe {line['steps_per_second']:8.0f} steps/s   "
        f"saferl {best[ours]:10.0f} steps/s   x{ratio:,.0f}"
    )

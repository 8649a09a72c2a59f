"""Time one OmniSafe training run end to end; prints JSON with env-steps/s and peak RSS."""

import json
import resource
import sys
import time

import torch

torch.set_num_threads(1)
import omnisafe  # noqa: E402

algo, steps = sys.argv[1], int(sys.argv[2])
custom = {
    "train_cfgs": {"total_steps": steps, "vector_env_nums": 1, "torch_threads": 1},
    "algo_cfgs": {"steps_per_epoch": steps // 2},
    "logger_cfgs": {"use_wandb": False, "use_tensorboard": False},
}
start = time.time()
agent = omnisafe.Agent(algo, "SafetyPointGoal1-v0", custom_cfgs=custom)
agent.learn()
elapsed = time.time() - start
print(json.dumps({"library": "omnisafe", "algo": algo, "env": "SafetyPointGoal1-v0", "steps": steps,
                  "steps_per_second": steps / elapsed,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))

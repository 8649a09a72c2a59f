"""Time one OmniSafe training run end to end; prints JSON with env-steps/s and peak RSS.

python omnisafe_run.py ALGO STEPS [ENV_ID]      (ENV_ID default SafetyPointGoal1-v0)
"""

import json
import resource
import sys
import time

import torch

torch.set_num_threads(1)
import omnisafe  # noqa: E402

algo, steps = sys.argv[1], int(sys.argv[2])
env_id = sys.argv[3] if len(sys.argv) > 3 else "SafetyPointGoal1-v0"
custom = {
    "train_cfgs": {"total_steps": steps, "vector_env_nums": 1, "torch_threads": 1},
    "algo_cfgs": {"steps_per_epoch": steps // 2},
    "logger_cfgs": {"use_wandb": False, "use_tensorboard": False},
}
start = time.time()
agent = omnisafe.Agent(algo, env_id, custom_cfgs=custom)
agent.learn()
elapsed = time.time() - start
print(
    json.dumps(
        {
            "library": "omnisafe",
            "algo": algo,
            "env": env_id,
            "steps": steps,
            "steps_per_second": steps / elapsed,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    )
)

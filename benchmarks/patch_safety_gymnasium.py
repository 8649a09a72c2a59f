"""Make safety-gymnasium 1.0.0 importable on Python 3.11 (mutable dataclass defaults -> default factories)."""

import importlib.util
import re
from pathlib import Path

spec = importlib.util.find_spec("safety_gymnasium")
root = Path(spec.submodule_search_locations[0])
pattern = re.compile(r"^(\s+color: np\.array = )(COLOR\[[^\]]+\])\s*$", re.M)
patched = 0
for path in (root / "assets").rglob("*.py"):
    text = path.read_text()
    new, n = pattern.subn(
        lambda m: f"{m.group(1).replace(' = ', ' = field(default_factory=lambda: ')}{m.group(2)})", text
    )
    if n:
        if (
            "from dataclasses import" in new
            and "field" not in new.split("from dataclasses import", 1)[1].split("\n")[0]
        ):
            new = new.replace("from dataclasses import dataclass", "from dataclasses import dataclass, field", 1)
        path.write_text(new)
        patched += n
print(f"patched {patched} dataclass colour defaults")

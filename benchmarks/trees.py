"""The YAML files of a tree, in a fixed order (the baselines read what meshlint reads)."""

from __future__ import annotations

import os


def yaml_files(top: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith((".yaml", ".yml", ".json")))
    return found

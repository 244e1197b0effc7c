"""The baseline: compose every YAML file of a tree with ruamel.yaml's C-accelerated composer, nothing else.

    python benchmarks/compose_only.py TREE

This is the cost of only parsing the files with the library meshlint uses (`YAML(typ='safe',
pure=False)` with ruamel.yaml.clib; nodes carry line and column), as the spec and issue 6 define it.
It prints the number of documents composed.
"""

from __future__ import annotations

import os
import sys

from ruamel.yaml import YAML


def yaml_files(top: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith((".yaml", ".yml", ".json")))
    return found


def main() -> None:
    yaml = YAML(typ="safe", pure=False)
    documents = 0
    for path in yaml_files(sys.argv[1]):
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
        try:
            for node in yaml.compose_all(text):
                documents += node is not None
        except Exception:
            continue
    print(documents)


if __name__ == "__main__":
    main()

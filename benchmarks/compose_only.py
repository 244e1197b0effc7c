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
from trees import yaml_files


def main() -> None:
    yaml = YAML(typ="safe", pure=False)
    documents = 0
    target = sys.argv[1]
    for path in [target] if os.path.isfile(target) else yaml_files(target):
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

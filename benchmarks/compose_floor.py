"""The floor: compose every YAML file of a tree with PyYAML's C loader (libyaml), nothing else.

    python benchmarks/compose_floor.py TREE_OR_FILE

`yaml.compose_all(text, Loader=yaml.CSafeLoader)`: libyaml's parser with PyYAML's composer, nodes with
line and column, the cheapest way Python has to get YAML with positions. It prints the number of
documents composed. PyYAML comes with the `bench` extra (and is a runtime dependency of meshlint).
"""

from __future__ import annotations

import os
import sys

import yaml
from trees import yaml_files


def main() -> None:
    target = sys.argv[1]
    files = [target] if os.path.isfile(target) else yaml_files(target)
    documents = 0
    for path in files:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
        try:
            for node in yaml.compose_all(text, Loader=yaml.CSafeLoader):
                documents += node is not None
        except yaml.YAMLError:
            continue
    print(documents)


if __name__ == "__main__":
    main()

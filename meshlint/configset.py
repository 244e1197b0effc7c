"""Which configuration governs each file of a run: found once per folder, loaded once per file."""

from __future__ import annotations

import os
from collections.abc import Callable

from meshlint.config import Config, find_config, load_config
from meshlint.source import inputs


class ConfigSet:
    """Which config governs each file (wave-2 spec §W2.5): the nearest `.meshlint.yaml`, `.meshlint.yml`
    or `pyproject.toml [tool.meshlint]` at or above its folder, as ruff does; a config named on the
    command line governs every file. `top` (the working directory's) decides what belongs to the run
    as a whole: formats, outputs, the exit code, the baseline. `adjust` applies the command line's
    options to each config it loads."""

    def __init__(self, top: Config, forced: bool = False, adjust: Callable[[Config], None] | None = None) -> None:
        self.top = top
        self.forced = forced
        self._adjust = adjust
        self._by_path: dict[str, Config] = {os.path.abspath(top.path): top} if top.path else {}
        self._by_folder: dict[str, Config] = {}
        self._by_head: dict[tuple[str, str], Config] = {}

    def for_file(self, path: str) -> Config:
        if self.forced or path == "-":
            return self.top
        # A run asks for each of its files twice, mostly in folders of many (making each path absolute
        # was a large share of the parent's serial work on a big tree).
        head = (inputs.cwd(), inputs.head(path))
        config = self._by_head.get(head)
        if config is None:
            folder = os.path.dirname(inputs.absolute(path))
            config = self._by_folder.get(folder)
            if config is None:
                found = find_config(folder)
                config = self._load(found) if found is not None else self.top
                self._by_folder[folder] = config
            self._by_head[head] = config
        return config

    def _load(self, path: str) -> Config:
        key = os.path.abspath(path)
        config = self._by_path.get(key)
        if config is None:
            config = self._by_path[key] = load_config(path)
            if self._adjust is not None:
                self._adjust(config)
        return config

    def all(self) -> list[Config]:
        """Every config met so far, the top one first, the others in path order."""
        others = sorted((c for c in self._by_path.values() if c is not self.top), key=lambda c: c.path or "")
        return [self.top, *others]

"""Reporters: pure functions from a report to text. Each format is one module, imported on demand."""

from __future__ import annotations

import importlib

FORMATS = ("text", "json", "sarif", "github", "junit")


def render(fmt: str, report, *, color: bool = False, statistics: bool = False) -> str:
    module = importlib.import_module(f"meshlint.reporters.{fmt}_report")
    if fmt == "text":
        return module.render(report, color=color, with_statistics=statistics)
    return module.render(report, color=color)

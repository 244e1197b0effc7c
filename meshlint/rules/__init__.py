"""Stage 4: the built-in rules, one module each (`mlNNN_name.py` defining `RULE`).

Every module here is a rule: adding one is its module and its fixtures (`testdata/<CODE>/`). The set is
registered once, through the same `meshlint.rules` entry-point group that plugins use (see
`meshlint.registry`), so the plugin path is always exercised.
"""

from __future__ import annotations

import importlib
import os
import re

from meshlint.rule import Rule

_MODULE = re.compile(r"^(ml[0-9]{3,4}_[a-z0-9_]+)\.py$")


def _discover() -> tuple[Rule, ...]:
    """The `RULE` of every rule module in this package, in file-name order."""
    here = os.path.dirname(os.path.abspath(__file__))
    found: list[Rule] = []
    for name in sorted(os.listdir(here)):
        match = _MODULE.match(name)
        if match:
            module = importlib.import_module(f"{__name__}.{match.group(1)}")
            found.append(module.RULE)  # a module without RULE is a rule that does not register
    return tuple(found)


BUILTIN = _discover()

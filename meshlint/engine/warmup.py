"""What checking files loads on first use, loaded once before the workers that check them fork.

A check loads much of its code lazily, so that a pre-commit run of a few files pays only for what its
files need. A forked worker inherits what its parent loaded, and loads the rest itself: each worker of
a big tree paid again for the same modules, the shell parser and OpenSSL (most of what a worker's
first files cost beyond their second reading). Loaded by the parent while the first pass's workers
read, they are paid once, at a time the parent would only wait for them.
"""

from __future__ import annotations

import importlib

# Loaded lazily by a file check (each where it is first needed). tests/test_parallel.py checks that
# checking every fixture under testdata/ loads nothing of meshlint's beyond these and RARE.
MODULES = (
    "hashlib",
    "packaging.version",
    "meshlint.source.readers.native",
    "meshlint.fix.annotation",
    "meshlint.fix.edits",
    "meshlint.fix.mapping",
    "meshlint.fix.proxy_config",
    "meshlint.fix.shell",
    "meshlint.fix.text",
    "meshlint.mesh.facts.addresses",
    "meshlint.mesh.facts.authorization",
    "meshlint.mesh.facts.bashtree",
    "meshlint.mesh.facts.environment",
    "meshlint.mesh.facts.evidence",
    "meshlint.mesh.facts.linkerdcalls",
    "meshlint.mesh.facts.prestop",
    "meshlint.mesh.facts.probes",
    "meshlint.mesh.facts.quitcalls",
    "meshlint.mesh.facts.shell",
)

# Loaded only for files that need them, and left to the worker that meets one: the screen of a file
# read part by part after a syntax problem, and the readers of what meshlint's own C reader leaves.
RARE = ("meshlint.source.screen", "meshlint.source.readers.events", "meshlint.source.readers.plain")


def load_for_checks() -> None:
    """Import what file checks load lazily, and make the shell parser (its grammar is a shared library)."""
    for name in MODULES:
        importlib.import_module(name)
    from meshlint.mesh.facts import bashtree

    bashtree.parser()

"""Autofix (`meshlint check --fix`, wave-2 spec §W8): fixes are text edits that rules attach to their
findings, computed from the positions the loader keeps; applying them never re-dumps a file.

- `edits`: what a fix is (edits with 1-based positions, safe or unsafe) and how edits are applied;
- `text`: where things stand in the source lines (scalar spans, entry extents, indentation, quoting);
- `mapping`, `annotation`, `shell`: the edits the rules ask for, built from a finding's nodes;
- `rounds`: applying fixes run after run, each checked by linting again; `files`: diffs and writes.

Rules import from here only inside the function that builds a fix, so a clean run loads none of it.
"""

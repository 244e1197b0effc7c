"""The baseline: findings a repository already had when it adopted meshlint, recorded by fingerprint
so that the gate fails only on new ones.

The file is JSON, versioned, one entry a line, sorted by path, rule and place, so that it diffs well
and a reviewer can read what was accepted:

    {
      "meshlint-baseline": 1,
      "findings": [
        {"path": "apps/checkout.yaml", "code": "ML301", "resource": "Deployment shop/checkout", "at": "spec.template.spec.terminationGracePeriodSeconds", "fingerprint": "..."}
      ]
    }

A finding matches the entry with its `fingerprint`. The fingerprint holds the file's path, so a file
renamed (`git mv`) or a resource moved to another file would bring its findings back as new: a finding
the fingerprints leave new therefore also matches an entry of another file with the same resource,
rule and place (`resource`, `code`, `at`: kind, namespace, name, code, field) that matched nothing
where it was, one entry for one finding. An entry is stale when no finding matches it although its
rule ran on its file (or its file is gone): it was fixed, and can be pruned by writing the baseline
again.
"""

import json
import os
from collections import defaultdict
from typing import NamedTuple

from meshlint.config import ConfigError
from meshlint.engine.results import Report
from meshlint.findings import Finding
from meshlint.fingerprint import repo_path

VERSION = 1
_KEY = "meshlint-baseline"


class BaselineError(ConfigError):
    """A baseline that cannot be read or written: exit 2 with this one-line message."""


class Entry(NamedTuple):
    path: str  # repository-relative
    code: str
    resource: str
    at: str  # the finding's place in its resource
    fingerprint: str

    def as_dict(self) -> dict[str, str]:
        return self._asdict()

    def __str__(self) -> str:
        return f"{self.code} {self.path} {self.resource or '(file)'} at {self.at or '(resource)'}"

    @property
    def identity(self) -> tuple[str, str, str]:
        """What a finding is wherever its file is: resource (kind, namespace, name), rule and place."""
        return self.resource, self.code, self.at


def entry(finding: Finding, root: str) -> Entry:
    resource = str(finding.resource) if finding.resource is not None else ""
    return Entry(repo_path(finding.path, root), finding.code, resource, finding.node_path, finding.fingerprint)


def write(path: str, findings: list[Finding], root: str) -> list[Entry]:
    entries = sorted({entry(f, root) for f in findings})
    lines = ",\n".join("    " + json.dumps(e.as_dict(), ensure_ascii=False) for e in entries)
    text = f'{{\n  "{_KEY}": {VERSION},\n  "findings": [\n{lines}\n  ]\n}}\n' if entries else f'{{\n  "{_KEY}": {VERSION},\n  "findings": []\n}}\n'
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise BaselineError(f"{path}: cannot write the baseline: {err.strerror or err}") from err
    return entries


def read(path: str) -> list[Entry]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as err:
        raise BaselineError(f"{path}: cannot read the baseline: {err.strerror or err}") from err
    except ValueError as err:
        raise BaselineError(f"{path}: not a meshlint baseline: invalid JSON ({err})") from err
    if not isinstance(data, dict) or data.get(_KEY) != VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f'{path}: not a meshlint baseline (expected {{"{_KEY}": {VERSION}, "findings": [...]}}); write one with --write-baseline')
    entries = []
    for item in data["findings"]:
        if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str):
            raise BaselineError(f"{path}: every baseline entry needs a fingerprint; write the file again with --write-baseline")
        entries.append(Entry(*(str(item.get(name, "")) for name in Entry._fields)))
    return entries


def apply(report: Report, entries: list[Entry]) -> None:
    """Leave out the findings the baseline holds (counted as baselined); list its stale entries."""
    known = {e.fingerprint for e in entries}
    new = [f for f in report.findings if f.fingerprint not in known]
    matched = {f.fingerprint for f in report.findings} & known
    checked = {repo_path(p, report.root) for p in report.files}
    active = {rule.code for rule in report.rules}
    unmatched = [
        e for e in entries
        if e.fingerprint not in matched and e.code in active
        and (e.path in checked or not os.path.exists(os.path.join(report.root, e.path)))
    ]
    moved = _moved(new, unmatched, report.root)
    kept = [f for f in new if f.fingerprint not in moved]
    taken = set(moved.values())
    stale = [e for e in unmatched if e not in taken]
    report.summary.baselined = len(report.findings) - len(kept)
    report.summary.stale_baseline = [e.as_dict() for e in stale]
    report.findings = kept
    report.summary.count(kept, report.fix_reachable)


def _moved(new: list[Finding], unmatched: list[Entry], root: str) -> dict[str, Entry]:
    """The entry each new finding takes over from another file (by fingerprint), one for one, in
    report order: a finding of a resource can only have moved with it (a finding of no resource, a
    file's own, stays new)."""
    waiting: dict[tuple[str, str, str], list[Entry]] = defaultdict(list)
    for e in unmatched:
        if e.resource:
            waiting[e.identity].append(e)
    moved: dict[str, Entry] = {}
    for f in new:
        if f.resource is None:
            continue
        candidates = waiting.get((str(f.resource), f.code, f.node_path))
        if not candidates:
            continue
        path = repo_path(f.path, root)
        taken = next((e for e in candidates if e.path != path), None)
        if taken is not None:
            candidates.remove(taken)
            moved[f.fingerprint] = taken
    return moved

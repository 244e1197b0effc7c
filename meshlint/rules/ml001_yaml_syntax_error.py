"""A document that does not parse as YAML, has a duplicate key, or is not valid UTF-8.

## What it does
Reports YAML the way `kubectl apply` would refuse it: syntax errors (a tab in indentation, an unclosed
bracket), duplicate mapping keys (reported at the second key; when a document's own `kind` repeats
with its `apiVersion` or `metadata`, it holds two objects, and one finding names the `---` that went
missing), bytes that are not UTF-8, aliases that
refer to themselves, and nesting too deep to read. Also the YAML that Istio reads out of a string: the
`istio` ConfigMap's `data.mesh` and the `istio-sidecar-injector` ConfigMap's `data.values`, reported
at the broken line inside the string. The other documents of the file, and the other files, are
still linted.

## Why is this bad?
Kubernetes rejects the object, so nothing in it is deployed; and every other rule is blind to the
broken document. A duplicate key is worse than it looks: YAML libraries that accept it keep one of
the two values silently, so what you review is not what runs.

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
  mode: safe  # expect: ML001:error
```

## Use instead
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: safe
```

## References
- YAML 1.1 specification, section 3.2.1.1 (mapping keys are unique)
- kubernetes/kubernetes#89303: the API server accepts a manifest with duplicate keys and keeps the last value
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.sources import MeshSource
from meshlint.rule import FILE, MESH_CONFIG, RuleContext, rule
from meshlint.source.loader import LoadedFile
from meshlint.source.syntax import SyntaxProblem
from meshlint.wording import listing


@rule(code="ML001", name="yaml-syntax-error", severity=Severity.ERROR, scope=(FILE, MESH_CONFIG))
def check(subject: LoadedFile | MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    # A mesh source's problems are YAML held in a string (data.mesh, data.values) that does not parse.
    path = subject.path if isinstance(subject, LoadedFile) else subject.resource.path
    merged = _lost_separators(subject) if isinstance(subject, LoadedFile) else {}
    for problem in subject.problems:
        if problem in merged:
            first, second = merged[problem]
            if problem is first:
                yield Issue(
                    Position(path, problem.line, problem.column),
                    f"two objects in one document: {second} repeat from line {problem.line}; a missing `---`?",
                    f"put `---` on a line of its own before line {problem.line}, where the second object begins: "
                    "without it, kubectl apply keeps one object made of the two, without a word",
                )
            continue
        yield Issue(Position(path, problem.line, problem.column), problem.message, _help(problem.message))


_DUPLICATE = re.compile(r"^duplicate key '([^']*)' \(first at line (\d+)\)")
_OBJECT_KEYS = ("apiVersion", "kind", "metadata", "spec", "data")


def _lost_separators(loaded: LoadedFile) -> dict[SyntaxProblem, tuple[SyntaxProblem, str]]:
    """The repeated top-level keys of each document that holds two objects (`kind` again, with
    `apiVersion` or `metadata`): said once, as the `---` that went missing (wave-3 spec V2.5). Each
    of them maps to the first of its document's and the keys that repeat."""
    starts = sorted((d.line, d.column) for d in loaded.documents)
    by_document: dict[int, list[tuple[SyntaxProblem, str]]] = {}
    for problem in loaded.problems:
        found = _DUPLICATE.match(problem.message)
        if found is None or problem.parse:
            continue
        index = bisect.bisect_right(starts, (problem.line, problem.column)) - 1
        if index >= 0 and problem.column == starts[index][1]:  # a key of the document's own mapping
            by_document.setdefault(index, []).append((problem, found.group(1)))
    merged: dict[SyntaxProblem, tuple[SyntaxProblem, str]] = {}
    for repeated in by_document.values():
        keys = [k for _, k in repeated]
        if "kind" not in keys or not ({"apiVersion", "metadata"} & set(keys)):
            continue
        first = min((p for p, _ in repeated), key=lambda p: (p.line, p.column))
        named = listing([k for k in _OBJECT_KEYS if k in keys] + sorted(k for k in set(keys) if k not in _OBJECT_KEYS))
        for problem, _ in repeated:
            merged[problem] = (first, named)
    return merged


def _help(message: str) -> str:
    if message.startswith(("data.mesh ", "data.values ")):
        return "fix the YAML inside the string at this point: Kubernetes stores the ConfigMap as it is, and only Istio reads the string"
    if message.startswith("duplicate key"):
        return "keep the one key whose value you mean and delete the other"
    if "UTF-8" in message:
        return "save the file as UTF-8"
    if "recursive alias" in message or "nests more than" in message:
        return "write the structure out without self-referencing aliases or extreme nesting"
    return "fix the YAML at this point; `kubectl apply --dry-run=client -f FILE` shows how Kubernetes reads it"


RULE = check

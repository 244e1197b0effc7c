"""A document that does not parse as YAML, has a duplicate key, or is not valid UTF-8.

## What it does
Reports YAML the way `kubectl apply` would refuse it: syntax errors (a tab in indentation, an unclosed
bracket), duplicate mapping keys (reported at the second key), bytes that are not UTF-8, aliases that
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

from collections.abc import Iterator

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.sources import MeshSource
from meshlint.rule import FILE, MESH_CONFIG, RuleContext, rule
from meshlint.source.loader import LoadedFile


@rule(code="ML001", name="yaml-syntax-error", severity=Severity.ERROR, scope=(FILE, MESH_CONFIG))
def check(subject: LoadedFile | MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    # A mesh source's problems are YAML held in a string (data.mesh, data.values) that does not parse.
    path = subject.path if isinstance(subject, LoadedFile) else subject.resource.path
    for problem in subject.problems:
        yield Issue(Position(path, problem.line, problem.column), problem.message, _help(problem.message))


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

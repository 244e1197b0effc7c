"""What a rule is: a pure check function plus metadata. Its module docstring is its documentation.

A rule checks subjects of one or more scopes:

- `file`: the loaded file (`LoadedFile`: its syntax problems);
- `resource`: a resource as written (`Resource`);
- `workload`: a workload's view against the mesh context (`WorkloadView`);
- `mesh-config`: what a mesh-config resource says (`MeshSource`: IstioOperator, Helm values, ConfigMaps);
- `run`: the run as a whole (`MeshRun`: mesh-wide sources that disagree), once, after every file.

A rule with several scopes sees each resource once, as the most specific subject it takes: a
workload's view before its resource, a mesh source before its resource. `kinds` limits the resources.
"""

import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, NamedTuple, TypeVar, overload

from meshlint.findings import Issue, Severity
from meshlint.mesh.options import MeshOptions

if TYPE_CHECKING:
    from meshlint.findings import Finding, Position
    from meshlint.mesh.context import MeshContext
    from meshlint.mesh.scope import MeshRun
    from meshlint.mesh.sources import MeshSource
    from meshlint.mesh.workload import WorkloadView
    from meshlint.model.resource import Resource
    from meshlint.source.loader import LoadedFile

Subject = TypeVar("Subject")
Other = TypeVar("Other")


class Scope(str, Generic[Subject]):
    """A scope's name, typed with the subject its checks are given: `rule(scope=WORKLOAD)` on a check
    whose first parameter is not a `WorkloadView` is an error for mypy, not a surprise at run time."""

    __slots__ = ()


# What `meshlint check --fix` can do about a rule's findings (the rule's doc says when, under `## Fix
# safety`): "safe" fixes apply with --fix, "unsafe" ones only with --unsafe-fixes too, "mixed" rules
# offer either, finding by finding; "" means the rule has no fix.
FIX_KINDS = ("", "safe", "unsafe", "mixed")
CODE_PATTERN = re.compile(r"^[A-Z]{1,8}[0-9]{3,4}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
FILE: "Final[Scope[LoadedFile]]" = Scope("file")
RESOURCE: "Final[Scope[Resource]]" = Scope("resource")
WORKLOAD: "Final[Scope[WorkloadView]]" = Scope("workload")
MESH_CONFIG: "Final[Scope[MeshSource]]" = Scope("mesh-config")
RUN: "Final[Scope[MeshRun]]" = Scope("run")
SCOPES = (FILE, RESOURCE, WORKLOAD, MESH_CONFIG, RUN)

Check = Callable[[Any, "RuleContext"], Iterable[Issue]]
Combine = Callable[
    [Sequence["Finding"], Callable[["Finding"], list[str]], Callable[["Position"], Any], Callable[["Finding"], Mapping[str, Any]]],
    list["Issue | Finding"],
]


class RuleContext(NamedTuple):
    """What a check may read besides its subject: the mesh context, its own options and the `mesh:`
    options (target versions among them) of the config that governs the file (read-only)."""

    mesh: "MeshContext"
    options: Mapping[str, Any]
    mesh_options: MeshOptions = MeshOptions()


class Rule:
    """A registered rule: its code, name and default severity, the scopes it checks, its check."""

    code: Final[str]
    name: Final[str]
    severity: Final[Severity]
    scopes: Final[tuple[str, ...]]
    check: Final[Check]
    doc: Final[str]
    kinds: Final[frozenset[str] | None]
    options: Final[dict[str, dict[str, Any]]]  # JSON Schema per option, with "default"
    fix: Final[str]  # one of FIX_KINDS
    # False: an opt-in rule, run only when a `select`/`extend-select` entry names it (code, name,
    # prefix or ALL), never by default (a finding most repositories should not get unasked).
    default_enabled: Final[bool]
    # A rule whose findings are said once per group, at the end of the run: given them all (with the
    # deployment units of a file, the mesh-wide source written at a place, and the rule's options where a
    # finding is), what to say instead. A finding it says nothing of is left to the summary (`unheld`).
    combine: Combine | None = None

    def __init__(
        self,
        code: str,
        name: str,
        severity: Severity,
        scopes: tuple[str, ...],
        check: Check,
        doc: str,
        kinds: frozenset[str] | None = None,
        options: dict[str, dict[str, Any]] | None = None,
        fix: str = "",
        default_enabled: bool = True,
    ) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.scopes = scopes
        self.check = check
        self.doc = doc
        self.kinds = kinds
        self.options = {} if options is None else options
        self.fix = fix
        self.default_enabled = default_enabled

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.name

    def section(self, heading: str) -> str:
        """The text under `## heading` in the documentation."""
        match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", self.doc, re.M | re.S)
        return match.group(1).strip() if match else ""

    def default_options(self) -> dict[str, Any]:
        return {key: spec.get("default") for key, spec in self.options.items()}


@overload
def rule(
    *, code: str, name: str, severity: Severity, scope: Scope[Subject], kinds: Iterable[str] | None = None,
    options: dict[str, dict[str, Any]] | None = None, fix: str = "", default_enabled: bool = True,
) -> Callable[[Callable[[Subject, RuleContext], Iterable[Issue]]], Rule]: ...


@overload
def rule(
    *, code: str, name: str, severity: Severity, scope: tuple[Scope[Subject], Scope[Other]], kinds: Iterable[str] | None = None,
    options: dict[str, dict[str, Any]] | None = None, fix: str = "", default_enabled: bool = True,
) -> Callable[[Callable[[Subject | Other, RuleContext], Iterable[Issue]]], Rule]: ...


@overload
def rule(  # a plugin's rule that names its scopes as text: its subject is not checked
    *, code: str, name: str, severity: Severity, scope: str | tuple[str, ...], kinds: Iterable[str] | None = None,
    options: dict[str, dict[str, Any]] | None = None, fix: str = "", default_enabled: bool = True,
) -> Callable[[Callable[[Any, RuleContext], Iterable[Issue]]], Rule]: ...


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    scope: str | tuple[str, ...],
    kinds: Iterable[str] | None = None,
    options: dict[str, dict[str, Any]] | None = None,
    fix: str = "",
    default_enabled: bool = True,
) -> Callable[[Callable[[Any, RuleContext], Iterable[Issue]]], Rule]:
    """Declare a check function as a rule; the documentation is the docstring of its module. Its
    subject's type follows from its scopes (`Scope`); mypy holds the check's first parameter to it."""

    def wrap(check: Callable[[Any, RuleContext], Iterable[Issue]]) -> Rule:
        module = sys.modules.get(check.__module__)
        doc = (module.__doc__ if module is not None else None) or check.__doc__ or ""
        return Rule(
            code=code,
            name=name,
            severity=severity,
            scopes=(scope,) if isinstance(scope, str) else tuple(scope),
            check=check,
            doc=doc,
            kinds=frozenset(kinds) if kinds is not None else None,
            options=dict(options or {}),
            fix=fix,
            default_enabled=default_enabled,
        )

    return wrap

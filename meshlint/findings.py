"""Values that flow out of the rules: positions, severities and findings."""

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
else:
    # The NamedTuples below evaluate their annotations when made, and typing compiles a quoted one:
    # at run time Fix stands for any value, and the fixing code is not loaded for a type.
    Fix = Any


class Severity(enum.IntEnum):
    """Ordered so that `severity >= fail_on` reads naturally."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        return cls[text.upper()]

    def __str__(self) -> str:
        return self.name.lower()


class Position(NamedTuple):
    """A 1-based place in an input file."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class ResourceId(NamedTuple):
    kind: str
    name: str
    namespace: str

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


class FixRecipe(NamedTuple):
    """How a finding's fix is made: the rule's builder and what it builds from. The engine makes it
    only when something of the run reads fixes (`Plan.fixes`), so the fixing code loads only then."""

    build: Callable[..., Fix | None]
    args: tuple[Any, ...]

    def made(self) -> Fix | None:
        return self.build(*self.args)


def recipe(build: Callable[..., Fix | None], *args: Any) -> FixRecipe:
    """`fix=recipe(builder, *args)` in an Issue: the fix `builder(*args)` makes, when asked for."""
    return FixRecipe(build, args)


class Issue(NamedTuple):
    """What a rule yields: where, what, how to fix; the engine adds the rule's identity."""

    position: Position
    message: str
    help: str
    severity: Severity | None = None  # None: the rule's configured severity
    related: tuple[Position, ...] = ()  # the origins the message cites (a mesh-wide drain, a Service)
    fix: FixRecipe | None = None  # how to make the text edits that settle it (meshlint.fix), when the rule can


class Finding(NamedTuple):
    """A reported finding. Sorted by path, line, column and code; equal only when every field is."""

    path: str
    line: int
    column: int
    code: str
    name: str
    severity: Severity
    message: str
    help: str
    resource: ResourceId | None = None
    source: str | None = None  # the line it points at, as written, for reports that show it
    rendered_from: str | None = None  # the file a rendered stream says this object came from
    related: tuple[Position, ...] = ()  # cited origins other than `position` (SARIF relatedLocations)
    node_path: str = ""  # where in its resource it points (`spec.template.metadata`); "" for the root
    fingerprint: str = ""  # stable across line shifts and path spellings (meshlint.fingerprint)
    fix: Fix | None = None  # its edits use the file's own line breaks

    def fixable(self, unsafe: bool = False) -> bool:
        """`--fix` would apply its fix (with `unsafe`: `--fix --unsafe-fixes` would)."""
        return self.fix is not None and (unsafe or self.fix.safe)

    @property
    def position(self) -> Position:
        return Position(self.path, self.line, self.column)


SaidKey = tuple[str, int, int, str, str]


def said_key(finding: Finding) -> SaidKey:
    """What makes findings one when several overlays find them: the place, the rule and the words."""
    return (finding.path, finding.line, finding.column, finding.code, finding.message)

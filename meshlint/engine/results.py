"""What a run gives: the findings, sorted, and a summary of what was read."""

from collections.abc import Callable
from typing import Any, NamedTuple

from meshlint.findings import Finding, SaidKey, Severity, said_key
from meshlint.mesh.scope import Conflict
from meshlint.rule import Rule


class SkippedInput(NamedTuple):
    """An input file passed over whole: a Helm template, or a file that is not a manifest."""

    path: str
    reason: str


_COUNTS = ("files", "resources", "suppressed", "skipped_documents", "skipped_files", "assumed_meshed", "assumed_by_sign", "not_checked", "on_defaults")


class Summary:
    """What a run (or one file) read and found, in counts: the text report's last line."""

    files: int
    resources: int
    by_severity: dict[str, int]
    suppressed: int
    skipped_documents: int
    skipped_files: int
    assumed_meshed: int
    assumed_by_sign: int  # of those, assumed because the run shows Istio (not in JSON: the text names the sign)
    not_checked: int  # workloads nothing meshes, in a run without any sign of Istio
    # Istio workloads of named files judged on Istio's defaults alone: no mesh-wide source on their
    # paths, and none named in mesh.context; the rest of the tree was not read (§W2.7).
    on_defaults: int
    # Workloads that start without holdApplicationUntilProxyStarts where the run holds no mesh-wide
    # configuration to set it in: ML100 leaves them to this count (set by the run).
    unheld: int
    test_folders: int  # `testdata` folders the walks passed over (set by the run)
    skipped_inputs: list[SkippedInput]
    # Set by the gate after the run: None when no baseline (no --diff-base) was in use.
    baselined: int | None
    stale_baseline: list[dict[str, str]]  # baseline entries no finding matched
    outside_diff: int | None
    fixed: int | None  # set by --fix: findings of the run before the fixes that are gone
    fixable: int  # findings with a safe fix
    unsafe_fixable: int  # findings with an unsafe fix (applied only with --unsafe-fixes)
    # What showed that the run is about Istio (§W1), for the text summary when workloads were assumed
    # meshed: a run over several repositories learns there why all of them count as Istio's.
    istio_sign: str | None
    units: int | None  # the deployment units the run's files are in (set by the run when there are any)
    # The root kustomizations built, with what, and those not built and why (set by the run).
    rendered: dict[str, Any] | None
    # The signs of Istio that made this run's (or file's) workloads assumed meshed: (path, line, column, text).
    signs_seen: set[tuple[str, int, int, str]]

    def __init__(
        self,
        files: int = 0,
        resources: int = 0,
        by_severity: dict[str, int] | None = None,
        suppressed: int = 0,
        skipped_documents: int = 0,
        skipped_files: int = 0,
        assumed_meshed: int = 0,
        assumed_by_sign: int = 0,
        not_checked: int = 0,
        on_defaults: int = 0,
        skipped_inputs: list[SkippedInput] | None = None,
        baselined: int | None = None,
        stale_baseline: list[dict[str, str]] | None = None,
        outside_diff: int | None = None,
        fixed: int | None = None,
        fixable: int = 0,
        unsafe_fixable: int = 0,
        istio_sign: str | None = None,
    ) -> None:
        self.files = files
        self.resources = resources
        self.by_severity = {"error": 0, "warning": 0, "info": 0} if by_severity is None else by_severity
        self.suppressed = suppressed
        self.skipped_documents = skipped_documents
        self.skipped_files = skipped_files
        self.assumed_meshed = assumed_meshed
        self.assumed_by_sign = assumed_by_sign
        self.not_checked = not_checked
        self.on_defaults = on_defaults
        self.skipped_inputs = [] if skipped_inputs is None else skipped_inputs
        self.baselined = baselined
        self.stale_baseline = [] if stale_baseline is None else stale_baseline
        self.outside_diff = outside_diff
        self.fixed = fixed
        self.fixable = fixable
        self.unsafe_fixable = unsafe_fixable
        self.istio_sign = istio_sign
        self.unheld = 0
        self.test_folders = 0
        self.units = None
        self.rendered = None
        self.signs_seen = set()

    def add(self, other: "Summary") -> None:
        mine, theirs = vars(self), vars(other)  # one a file of a big tree: no getattr and setattr a count
        for name in _COUNTS:
            mine[name] += theirs[name]
        self.skipped_inputs.extend(other.skipped_inputs)
        self.signs_seen |= other.signs_seen

    def count(self, findings: list[Finding], reachable: Callable[[Finding], bool] = lambda f: True) -> None:
        """Findings by severity, counted afresh (after the run, and after the gate drops some); the
        fixable ones among those whose file `--fix` can reach (`Report.fix_reachable`)."""
        self.by_severity = {"error": 0, "warning": 0, "info": 0}
        self.fixable = self.unsafe_fixable = 0
        for finding in findings:
            self.by_severity[str(finding.severity)] += 1
            if finding.fix is not None and reachable(finding):
                if finding.fix.safe:
                    self.fixable += 1
                else:
                    self.unsafe_fixable += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "resources": self.resources,
            "findings": dict(self.by_severity),
            "suppressed": self.suppressed,
            "skipped_documents": self.skipped_documents,
            "skipped_files": self.skipped_files,
            "assumed_meshed": self.assumed_meshed,
            "not_checked": self.not_checked,
            "on_defaults": self.on_defaults,
            "unheld": self.unheld,
            "test_folders": self.test_folders,
            "skipped_inputs": [{"path": s.path, "reason": s.reason} for s in self.skipped_inputs],
            "baselined": self.baselined or 0,
            "stale_baseline": list(self.stale_baseline),
            "outside_diff": self.outside_diff or 0,
            "fixed": self.fixed or 0,
            "fixable": self.fixable,
            "unsafe_fixable": self.unsafe_fixable,
            **({"rendering": self.rendered} if self.rendered is not None else {}),
        }


class Report:
    """A whole run: its findings in report order, the summary, and what the gate and `--fix` need."""

    findings: list[Finding]
    summary: Summary
    rules: list[Rule]
    notes: list[str]  # for stderr: skipped inputs, unreadable files found in a walk, unknown rules in suppressions
    files: list[str]  # every input read, as findings name it
    root: str  # the repository root (meshlint.fingerprint)
    fail_on: Severity | None  # None: never
    writable: frozenset[str]  # inputs `--fix` may write: named or walked, not stdin, not widened
    unsafe_fixes: bool  # `--unsafe-fixes`: unsafe fixes count as fixable too
    broken: frozenset[str]  # inputs with a syntax problem (FileResult.unparsed): `--fix` never writes them
    trees: frozenset[str]  # the named folders and named files' folders, resolved: `--fix` writes only inside them
    linked_out: frozenset[str]  # inputs reached through a symbolic link out of `trees`: read, never written

    def __init__(
        self,
        findings: list[Finding],
        summary: Summary,
        rules: list[Rule],
        notes: list[str],
        files: list[str] | None = None,
        root: str = ".",
        fail_on: Severity | None = Severity.WARNING,
        writable: frozenset[str] = frozenset(),
        unsafe_fixes: bool = False,
        broken: frozenset[str] = frozenset(),
        trees: frozenset[str] = frozenset(),
        linked_out: frozenset[str] = frozenset(),
    ) -> None:
        self.findings = findings
        self.summary = summary
        self.rules = rules
        self.notes = notes
        self.files = [] if files is None else files
        self.root = root
        self.fail_on = fail_on
        self.writable = writable
        self.unsafe_fixes = unsafe_fixes
        self.broken = broken
        self.trees = trees
        self.linked_out = linked_out
        self.units: Callable[[str], frozenset[str]] | None = None  # the deployment units of a finding's file, set by the run
        # The units a finding found by rendering holds in, by (path, line, column, code, message): fewer,
        # maybe, than its file is in (a base that one overlay fixes).
        self.held_in: dict[SaidKey, list[str]] = {}

    def units_of(self, finding: Finding) -> list[str]:
        """The deployment units the finding's file is in (wave-3 spec V1), sorted; none for a file in none."""
        if self.units is None or finding.path.startswith("<"):
            return []
        held = self.held_in.get(said_key(finding))
        return held if held is not None else sorted(self.units(finding.path))

    def fix_reachable(self, finding: Finding) -> bool:
        """The finding's file is one `--fix` writes: an input it may write that parses. A fix elsewhere
        (stdin, a widened file, a file through a symbolic link out of the named paths, a file with a
        syntax problem) stays in JSON and SARIF for other tools, but is neither marked [*] nor counted
        as fixable: `--fix` would not make it."""
        path = finding.path
        return path in self.writable and path not in self.broken and path not in self.linked_out

    def fix_offered(self, finding: Finding) -> bool:
        """`--fix` (with `--unsafe-fixes` when this run has it) would try this finding's fix."""
        return finding.fixable(self.unsafe_fixes) and self.fix_reachable(finding)


class FileResult:
    """What checking one file gives; results of many files merge in file order."""

    path: str
    findings: list[Finding]
    summary: Summary
    notes: list[str]
    # Mesh-wide sources that disagree where this file's workloads are, with how many workloads met each.
    conflicts: dict[tuple[Any, ...], tuple[Conflict, int]]
    # Set when the result may be kept for the next run (engine/cache.py): the file's key, and whether
    # it came from the cache (then there is nothing to keep).
    cache_key: str | None
    cached: bool
    # The file has a syntax problem (whether or not ML001 is selected): `--fix` never writes it.
    unparsed: bool

    def __init__(
        self,
        path: str,
        findings: list[Finding] | None = None,
        summary: Summary | None = None,
        notes: list[str] | None = None,
        conflicts: dict[tuple[Any, ...], tuple[Conflict, int]] | None = None,
        cache_key: str | None = None,
        cached: bool = False,
        unparsed: bool = False,
    ) -> None:
        self.path = path
        self.findings = [] if findings is None else findings
        self.summary = Summary() if summary is None else summary
        self.notes = [] if notes is None else notes
        self.conflicts = {} if conflicts is None else conflicts
        self.cache_key = cache_key
        self.cached = cached
        self.unparsed = unparsed

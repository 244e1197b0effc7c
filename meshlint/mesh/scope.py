"""Which mesh-wide source applies where (wave-2 spec §W2): nearest on the workload's own path first,
then the rest of the run only if it agrees; ties and disagreements are conflicts, never settled by the
order in which files were read.

A workload at `apps/web.yaml` looks, for each field, at the sources in the same file, then in `apps/`,
then in each parent folder. The first of those places that sets the field decides, provided the sources
there agree. When nothing on its path sets the field, the sources elsewhere in the run decide if they all
agree. A conflict leaves the field to its built-in default and is reported (ML006).
"""

import os
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from meshlint.mesh.setting import Setting
from meshlint.source import inputs


class Place(NamedTuple):
    """Where a source or a workload is: its file and that file's folder, both absolute."""

    file: str
    folder: str

    @classmethod
    def of(cls, path: str, folder: str | None = None) -> "Place":
        """The place of a file as named (stdin keeps its name); `folder` overrides where it counts as
        located (a `mesh.context` file counts as located beside the config that names it)."""
        full = inputs.absolute(path) if path and not path.startswith("<") else path
        return cls(full, folder if folder is not None else os.path.dirname(full) if os.path.isabs(full) else inputs.cwd())


def distance(source: Place, workload: Place) -> int | None:
    """0 in the same file, 1 in the same folder, 2 and more in each parent folder; None elsewhere."""
    if source.file == workload.file:
        return 0
    if source.folder == workload.folder:
        return 1
    if workload.folder.startswith(source.folder.rstrip(os.sep) + os.sep):
        return 1 + workload.folder[len(source.folder.rstrip(os.sep)) :].count(os.sep)
    return None


class Claim(NamedTuple):
    """What one source says of one field (the value is a Setting, so it knows its file and line)."""

    setting: Setting[Any]
    place: Place


class Conflict(NamedTuple):
    """Sources that disagree on a field where a workload looks, and so decide nothing for it."""

    field: str
    claims: tuple[Claim, ...]
    # True: none is on the workload's path; False: they tie at the same distance; None: some
    # workloads met them one way, some the other (conflicts merged across workloads).
    elsewhere: bool | None


class MeshRun(NamedTuple):
    """The subject of rules about the run as a whole: each conflict between mesh-wide sources, with how
    many workloads it left undecided."""

    conflicts: list[tuple[Conflict, int]]


def conflict_key(conflict: Conflict) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    """One conflict, however many workloads met it: its field and the sources that disagree."""
    return conflict.field, tuple(_sort_key(c) for c in conflict.claims)


def met(known: tuple[Conflict, int] | None, conflict: Conflict, count: int) -> tuple[Conflict, int]:
    """The same conflict met by more workloads: counts add up, and how they met it merges, whatever the
    order in which files were checked."""
    if known is None:
        return conflict, count
    first, total = known
    elsewhere = first.elsewhere if first.elsewhere == conflict.elsewhere else None
    return first._replace(elsewhere=elsewhere), total + count


def _agree(claims: Iterable[Claim]) -> bool:
    values = {_comparable(c.setting.value) for c in claims}
    return len(values) <= 1


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _comparable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_comparable(v) for v in value)
    return value


def _first(claims: Iterable[Claim]) -> Claim:
    """The claim a message cites when several agree: the first in path order, whatever the reading order."""
    return min(claims, key=lambda c: (c.setting.origin.path, c.setting.origin.line, c.setting.origin.column) if c.setting.origin else ("", 0, 0))


UnitsOf = Callable[[str], frozenset[str]]  # the deployment units a file is in (source/units.py)


def visible(source: Place, place: Place, units_of: UnitsOf | None) -> bool:
    """May a source at `source` decide for a workload at `place` (wave-3 spec V1)? One on its path
    always may; else one in a unit of the workload's, or one in no unit (a platform folder's install
    governs the apps beside it). A sibling overlay's or a sibling chart's never does."""
    if units_of is None or distance(source, place) is not None:
        return True
    theirs = units_of(source.file)
    return not theirs or bool(theirs & units_of(place.file))


def considered(claims: list[Claim], place: Place, units_of: UnitsOf | None = None, everywhere: bool = False) -> tuple[list[Claim], bool]:
    """The claims that decide a field at `place`: the nearest on its path, else the rest of those it may
    see (and whether they are elsewhere). Changing any of them can change what applies there."""
    nearest: list[Claim] = []
    best: int | None = None
    for claim in claims:
        d = distance(claim.place, place)
        if d is None:
            continue
        if best is None or d < best:
            nearest, best = [claim], d
        elif d == best:
            nearest.append(claim)
    if nearest:
        return nearest, False
    if units_of is None or everywhere:
        return claims, True
    # Off its path: its own units' sources first, then those in no unit; never another unit's.
    mine = units_of(place.file)
    shared = [c for c in claims if mine & units_of(c.place.file)] if mine else []
    return shared or [c for c in claims if not units_of(c.place.file)], True


def resolve(
    field: str, claims: list[Claim], place: Place, units_of: UnitsOf | None = None, everywhere: bool = False, same_object: bool = False
) -> tuple[Setting[Any] | None, Conflict | None]:
    """The setting that applies to a workload at `place`, or None (built-in default), with the conflict
    that left it undecided, if any. Sources elsewhere that disagree but are never applied together
    (different units, or folders neither on the other's path) are alternatives: they decide nothing
    there, and are no conflict. `everywhere`: a fact of the cluster (a Namespace), which any unit's
    definition gives, not only the workload's own units'. `same_object`: the claims are versions of one
    object (a kind, namespace and name written in several files), never applied together: when they
    disagree they decide nothing, and are no conflict (wave-3 spec V2.5)."""
    if not claims:
        return None, None
    deciding, elsewhere = considered(claims, place, units_of, everywhere)
    if not deciding:
        return None, None
    if _agree(deciding):
        return _first(deciding).setting, None
    if same_object:
        return None, None
    if elsewhere and units_of is not None:
        deciding = _clashing(deciding, units_of)
        if not deciding:
            return None, None  # alternatives, never applied together: no conflict
    return None, Conflict(field, tuple(sorted(deciding, key=_sort_key)), elsewhere=elsewhere)


def _clashing(claims: list[Claim], units_of: UnitsOf) -> list[Claim]:
    """The claims that disagree with one applied together with them (in a common unit, or one's folder
    holding the other's), linked through any chain of such; those only ever applied apart from every
    claim that disagrees with them (two vendored installs, two overlays of one app) are alternatives."""
    group = list(range(len(claims)))
    units = [units_of(c.place.file) for c in claims]

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, a in enumerate(claims):
        for j in range(i + 1, len(claims)):
            b = claims[j]
            if units[i] & units[j] or distance(a.place, b.place) is not None or distance(b.place, a.place) is not None:
                group[root(i)] = root(j)
    values: dict[int, set[Any]] = {}
    for i, claim in enumerate(claims):
        values.setdefault(root(i), set()).add(_comparable(claim.setting.value))
    return [c for i, c in enumerate(claims) if len(values[root(i)]) > 1]


def _sort_key(claim: Claim) -> tuple[str, int, int]:
    origin = claim.setting.origin
    return (origin.path, origin.line, origin.column) if origin else (claim.place.file, 0, 0)

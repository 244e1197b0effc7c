"""Suppressions: the `meshlint.io/ignore` annotation and `# meshlint: disable=` comments (spec §6).

Entries are rule codes, rule names or `all`, in any case. The engine asks which suppression silences
a finding, records the entry that did, and at the end of each file lists the entries that name no
rule (always) and those that silenced nothing (`--report-unused-suppressions`).
"""

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.pod import PodTemplate
from meshlint.model.resource import Resource
from meshlint.rule import Rule

ANNOTATION = "meshlint.io/ignore"
_COMMENT = re.compile(r"#\s*meshlint:\s*disable=([A-Za-z0-9_,\s-]+?)(?:\s+--\s+.*)?\s*$")


class Suppression(NamedTuple):
    position: Position  # the comment's `#`, or the annotation's value
    entries: frozenset[str]  # as written
    kind: str  # "comment" or "annotation", for messages

    def entry_for(self, rule: Rule) -> str | None:
        """The entry that silences `rule`, if one does."""
        for entry in sorted(self.entries):
            if entry_matches(rule, entry):
                return entry
        return None


def parse_list(text: str) -> frozenset[str]:
    """`"ML101,job-never-completes -- reason"` → the codes and names; the reason is for people."""
    body = text.split(" -- ", 1)[0]
    return frozenset(part.strip() for part in body.split(",") if part.strip())


def entry_matches(rule: Rule, entry: str) -> bool:
    return entry.upper() in (rule.code, "ALL") or entry.lower() == rule.name


def annotation_suppression(resource: Resource | None, templates: list[PodTemplate], rule: Rule) -> Suppression | None:
    """The annotation on the object itself, or on the pod template the finding is about."""
    if resource is None:
        return None
    for suppression in _annotations(resource, templates):
        if suppression.entry_for(rule) is not None:
            return suppression
    return None


def comment_suppression(lines: Sequence[str], position: Position, rule: Rule) -> Suppression | None:
    """A comment on the flagged line or on the line above it."""
    for number in (position.line, position.line - 1):
        if 1 <= number <= len(lines) and "meshlint:" in lines[number - 1]:
            suppression = _comment(lines[number - 1], position.path, number)
            if suppression is not None and suppression.entry_for(rule) is not None:
                return suppression
    return None


def suppressions_in(path: str, lines: Sequence[str], resources: Iterable[tuple[Resource, list[PodTemplate]]]) -> Iterator[Suppression]:
    """Every suppression a file holds: its comments, then its objects' and pod templates' annotations."""
    for number, text in enumerate(lines, start=1):
        if "meshlint:" in text and (suppression := _comment(text, path, number)) is not None:
            yield suppression
    for resource, templates in resources:
        yield from _annotations(resource, templates)


def _comment(text: str, path: str, number: int) -> Suppression | None:
    match = _COMMENT.search(text)
    if match is None:
        return None
    return Suppression(Position(path, number, match.start() + 1), parse_list(match.group(1)), "comment")


def _annotations(resource: Resource, templates: list[PodTemplate]) -> Iterator[Suppression]:
    for metadata in [resource.metadata] + [template.metadata for template in templates]:
        node = metadata.path("annotations", ANNOTATION)
        if node.exists and node.text:
            yield Suppression(node.pos, parse_list(node.text), f"{ANNOTATION} annotation")

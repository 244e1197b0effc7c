"""Suppressions: the `meshlint.io/ignore` annotation and `# meshlint: disable=` comments (spec §6)."""

from __future__ import annotations

import re

from meshlint.model.pod import PodTemplate
from meshlint.model.resource import Resource
from meshlint.rule import Rule

ANNOTATION = "meshlint.io/ignore"
_COMMENT = re.compile(r"#\s*meshlint:\s*disable=([A-Za-z0-9_,\s-]+?)(?:\s+--\s+.*)?\s*$")


def parse_list(text: str) -> frozenset[str]:
    """`"ML101,job-never-completes -- reason"` → the codes and names; the reason is for people."""
    body = text.split(" -- ", 1)[0]
    return frozenset(part.strip() for part in body.split(",") if part.strip())


def _matches(rule: Rule, entries: frozenset[str]) -> bool:
    return rule.code in entries or rule.name in entries or "all" in entries


def annotation_suppresses(resource: Resource | None, templates: list[PodTemplate], rule: Rule) -> bool:
    """The annotation on the object itself, or on the pod template the finding is about."""
    if resource is None:
        return False
    places = [resource.metadata] + [template.metadata for template in templates]
    for metadata in places:
        value = metadata.path("annotations", ANNOTATION).text
        if value and _matches(rule, parse_list(value)):
            return True
    return False


def comment_suppresses(lines: list[str], line: int, rule: Rule) -> bool:
    """A comment on the flagged line or on the line above it."""
    for number in (line, line - 1):
        if 1 <= number <= len(lines):
            text = lines[number - 1]
            if "meshlint:" not in text:
                continue
            match = _COMMENT.search(text)
            if match and _matches(rule, parse_list(match.group(1))):
                return True
    return False

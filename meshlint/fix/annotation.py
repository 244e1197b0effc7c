"""Edits to a pod template's own metadata: add an annotation or a label, creating `annotations:` (or
`labels:`) and `metadata:` when the template has none."""

from __future__ import annotations

from meshlint.fix import mapping
from meshlint.fix import text as src
from meshlint.fix.mapping import Change, Content
from meshlint.model.pod import PodTemplate


def add_to_pod(template: PodTemplate, content: Content, field: str = "annotations") -> Change | None:
    """Add an annotation (or a label) to the pod template's own metadata, creating `annotations:` and
    `metadata:` when they are missing."""
    metadata = template.metadata
    if not metadata.exists:  # metadata goes first, where readers look for it
        return mapping.add(template.node, content, ("metadata", field), first=True)
    if not metadata.is_map:
        return None
    target = metadata.get(field)
    if not target.exists:
        return mapping.add(metadata, content, (field,))
    if target.value is None:  # `annotations:` with nothing (or only a comment) under it
        return mapping.fill(metadata, field, content)
    return mapping.add(target, content) if target.is_map else None


def pod_quote(template: PodTemplate) -> str:
    """The quote this pod template's annotations and labels use."""
    metadata = template.metadata
    return src.preferred_quote(metadata.get("annotations"), metadata.get("labels"), template.owner.metadata.get("labels"))

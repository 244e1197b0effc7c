"""Edits to a pod template's own metadata: add an annotation or a label, creating `annotations:` (or
`labels:`) and `metadata:` when the template has none."""

from __future__ import annotations

from meshlint.fix import mapping
from meshlint.fix import text as src
from meshlint.fix.edits import Edit
from meshlint.fix.mapping import Change, Content
from meshlint.model.pod import PodTemplate, pod_templates
from meshlint.model.resource import Resource
from meshlint.source.document import Node


def add_to_pod(template: PodTemplate, content: Content, field: str = "annotations") -> Change | None:
    """Add an annotation (or a label) to the pod template's own metadata, creating `annotations:` and
    `metadata:` when they are missing."""
    metadata = template.metadata
    if not metadata.exists:  # metadata goes first, where readers look for it
        return mapping.add(template.node, content, ("metadata", field), first=True)
    return add_to_metadata(metadata, content, field)


def add_to_metadata(metadata: Node, content: Content, field: str = "annotations") -> Change | None:
    """Add an annotation (or a label) to an object's `metadata`, creating `annotations:` when missing."""
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


def move_to_pod(resource: Resource, key: str, field: str = "annotations", to: str | None = None, metadata: Node | None = None) -> Change | None:
    """Move `key` from the controller's own metadata `field` (or from `metadata`, such as a CronJob's
    `jobTemplate.metadata`) to its pod template's `to` (the same field by default), as written (its
    comments and quoting); the emptied field goes. When the template already has the same value only
    the ignored copy goes; when it says otherwise, or the kind has several pod templates, no change:
    which was meant is for a person to say."""
    templates = pod_templates(resource)
    if len(templates) != 1 or templates[0].argo:
        return None
    template, target = templates[0], to or field
    metadata = resource.metadata if metadata is None else metadata
    source = metadata.get(field)
    there = template.metadata.get(target).get(key) if template.metadata.is_map else None
    removal = mapping.remove(source, key, metadata, field)
    if there is not None and there.exists:
        return removal if there.text == source.get(key).text else None
    content = mapping.lift(source, key)
    return mapping.merged(add_to_pod(template, content, target), removal) if content is not None else None


def label_to_annotation(metadata: Node, key: str) -> Change | None:
    """Make the label `key` of this metadata an annotation of the same metadata, as written."""
    labels = metadata.get("labels")
    content = mapping.lift(labels, key)
    if content is None:
        return None
    if not metadata.get("annotations").exists and not src.is_flow(metadata) and not src.is_flow(labels) and len(labels.value) > 1:
        # The label written last in the metadata: where it was, the new `annotations:` goes (an
        # insertion after the metadata's last line would fall inside the lines that go).
        last = src.last_entry(metadata)
        node = labels.get(key)
        lines = mapping.entry_lines(node) if node.key_pos is not None else None
        if last is not None and last.key_pos is not None and lines is not None and src.entry_last_line(last) == lines[1]:
            indent = " " * (last.key_pos.column - 1)
            block = mapping.nested(("annotations",), content, src.indent_step(metadata)).block
            body = "".join("\n" + (indent + line if line else "") for line in block)
            before, end = lines[0] - 1, lines[1]  # from the end of the line above to the end of its last line
            edit = Edit(before, len(src.line_text(metadata, before)) + 1, end, len(src.line_text(metadata, end)) + 1, body)
            return Change((edit,), frozenset({src.start_of(labels), src.start_of(metadata)}))
    return mapping.merged(mapping.remove(labels, key, metadata, "labels"), add_to_metadata(metadata, content))

"""Kubernetes label selectors (`matchLabels` and `matchExpressions`), as the API machinery reads them."""

from __future__ import annotations

from typing import Any


def selects(selector: Any, labels: dict[str, str]) -> bool:
    """Does a LabelSelector match these labels? Every matchLabels pair and every expression must hold;
    an empty selector matches everything. A selector that is not a mapping matches nothing."""
    if not isinstance(selector, dict):
        return False
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict) or any(labels.get(str(k)) != str(v) for k, v in match_labels.items()):
        return False
    for expression in selector.get("matchExpressions") or ():
        if not isinstance(expression, dict) or not _holds(expression, labels):
            return False
    return True


def _holds(expression: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator = str(expression.get("key", "")), expression.get("operator")
    values = [str(v) for v in expression.get("values") or ()]
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False

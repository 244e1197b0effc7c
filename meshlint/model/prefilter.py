"""The first pass's cheap look at a document's text: could it be a mesh-context resource?

Only documents that say yes are composed before the run's main pass; anything that says no here is
read once, in the main pass. Only ConfigMaps named istio* configure the mesh; Lists may hold anything.
"""

from __future__ import annotations

import re

from meshlint.model.kinds import HELM_VALUES_KEYS

_CONTEXT_KIND = re.compile(
    r"^[\"']?kind[\"']?:[ \t]*[\"']?(Namespace|Service|PeerAuthentication|IstioOperator|List|[A-Za-z]+List)[\"']?[ \t]*(#.*)?$", re.M
)
_CONFIGMAP = re.compile(r"^[\"']?kind[\"']?:[ \t]*[\"']?ConfigMap\b", re.M)
_ISTIO_NAME = re.compile(r"\bname:[ \t]*[\"']?istio")
_TOP_KIND = re.compile(r"^[\"']?kind[\"']?:", re.M)
_HELM_KEY = re.compile(r"^(" + "|".join(sorted(HELM_VALUES_KEYS)) + r"):", re.M)


def might_hold_context(text: str) -> bool:
    """False only when the document surely holds no mesh-context resource (top-level keys at column 0)."""
    if _CONTEXT_KIND.search(text):
        return True
    if _CONFIGMAP.search(text):
        return bool(_ISTIO_NAME.search(text))
    if not _TOP_KIND.search(text):
        return bool(_HELM_KEY.search(text)) or text.lstrip().startswith(("{", "["))
    return False

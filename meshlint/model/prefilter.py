"""The first pass's cheap look at a document's text: could it be a mesh-context resource?

Only documents that say yes are composed before the run's main pass; anything that says no here is
read once, in the main pass. Only ConfigMaps named istio* configure the mesh, and of Deployments only
istiod's when its env sets a pilot setting; Lists may hold anything.
"""

from __future__ import annotations

import re

from meshlint.model.kinds import HELM_VALUES_KEYS, LINKERD_HELM_VALUES_KEYS
from meshlint.source.toplevel import key_lines

# Each pattern is matched against one line that `kind_lines` gives, from its start.
_CONTEXT_KIND = re.compile(
    r"[\"']?kind[\"']?:[ \t]*[\"']?(Namespace|Service|Server|PeerAuthentication|Sidecar|IstioOperator|MutatingWebhookConfiguration|ValidatingWebhookConfiguration|Application|Cluster|KubeadmControlPlane|ClusterConfig|List|[A-Za-z]+List)[\"']?[ \t]*(#.*)?\r?$"
)  # `\r?`: a file with CRLF line ends says `kind: Namespace\r`
_CONFIGMAP = re.compile(r"[\"']?kind[\"']?:[ \t]*[\"']?ConfigMap\b")
_DEPLOYMENT = re.compile(r"[\"']?kind[\"']?:[ \t]*[\"']?Deployment[\"']?[ \t]*(#.*)?\r?$")
_ISTIOD_NAME = re.compile(r"\bname:[ \t]*[\"']?istiod\b")
# The pilot setting the rules read from istiod's env (mesh.istio.NATIVE_ENV).
_PILOT_ENV = "ENABLE_NATIVE_SIDECARS"
_PILOT_IMAGE = "/pilot:"  # istiod's image, whose tag is the Istio release (mesh.sources)
_ISTIO_NAME = re.compile(r"\bname:[ \t]*[\"']?istio")
_KIND_KEY = re.compile(r"kind[\"']?:")
_HELM_KEY = re.compile(r"^(" + "|".join(sorted(HELM_VALUES_KEYS | LINKERD_HELM_VALUES_KEYS)) + r"):", re.M)


def kind_lines(text: str) -> list[str]:
    """The lines that hold a top-level `kind:` key (at column 0, its name perhaps quoted), each from
    its start to its end: what `^["']?kind["']?:` finds with re.M."""
    return key_lines(text, _KIND_KEY)


def might_hold_context(text: str, lines: list[str] | None = None) -> bool:
    """False only when the document surely holds no mesh-context resource (top-level keys at column 0).
    `lines`: its `kind_lines`, when the caller has them."""
    lines = kind_lines(text) if lines is None else lines
    if any(_CONTEXT_KIND.match(line) for line in lines):
        return True
    if any(_CONFIGMAP.match(line) for line in lines):
        return "istio" in text and bool(_ISTIO_NAME.search(text))  # (a `\b` first: the literal is found faster)
    if (_PILOT_ENV in text or _PILOT_IMAGE in text) and any(_DEPLOYMENT.match(line) for line in lines):
        return bool(_ISTIOD_NAME.search(text))  # istiod's own Deployment: its env sets pilot settings, its image the release
    if not lines:
        return bool(_HELM_KEY.search(text)) or text.lstrip().startswith(("{", "["))
    return False


# Where a document could show that the run is about an Istio mesh without being mesh context: an
# Istio API group, an injected istio-proxy, or an Istio key on a pod template.
_ISTIO_HINT = re.compile(
    r"sidecar\.istio\.io/|proxy\.istio\.io/|istio\.io/rev|\bistio-proxy\b|^[\"']?apiVersion[\"']?:[ \t]*[\"']?[\w.-]*istio\.io/", re.M
)


def might_show_istio(text: str) -> bool:
    """False only when the document surely holds no sign that Istio is in use."""
    # Every alternative holds "istio": looking for it first spares a 10 MB ConfigMap the full scan.
    return "istio" in text and bool(_ISTIO_HINT.search(text))


# A pod template that opts out of Istio's injection: the Services selecting it lead outside the mesh
# (mesh context: `leads_outside_mesh`).
_INJECT_KEY = "sidecar.istio.io/inject"


def might_opt_out(text: str) -> bool:
    """False only when the document surely holds no `sidecar.istio.io/inject: "false"` (a plain search,
    not a pattern: compiling one would cost every run's start, for a key most trees never write)."""
    at = text.find(_INJECT_KEY)
    while at >= 0:
        at += len(_INJECT_KEY)
        if text[at : at + 40].lstrip("\"': \t\r\n").startswith("false"):
            return True
        at = text.find(_INJECT_KEY, at)
    return False

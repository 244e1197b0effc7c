"""meshlint's view held against what the injectors really produce (reference §18.3).

tests/injector_goldens/ holds pairs distilled from the injectors' own test data (each file names its
source and commit): Istio's inputs with the `.injected` output its injector test harness wrote for them,
and `linkerd inject` outputs. For each, the facts meshlint derives for a pod must be the facts the
injector's output shows: who meshes it, whether its proxy is a native sidecar, whether traffic is
captured, whether the app is held until the proxy is ready, and Linkerd's skip lists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions, Versions, parse_linkerd_version, parse_version
from meshlint.mesh.workload import WorkloadView
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.pod import Container, pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

GOLDENS = Path(__file__).parent / "injector_goldens"
# Istio's harness runs with native sidecars on (`auto` on a recent Kubernetes), as 1.28 on 1.33 does;
# its pods are injected whatever their namespace, as `default-injection: enabled` assumes.
ISTIO = MeshOptions(versions=Versions(parse_version("1.28"), parse_version("1.33")), default_injection="enabled")
LINKERD = MeshOptions(versions=Versions(linkerd=parse_linkerd_version("2.19")))
CAPTURE_INIT = ("istio-init", "istio-validation")
LINKERD_OWN_OUTBOUND = ("443",)  # proxy-init's own outbound skip under the harness values


def views(*paths: Path, options: MeshOptions) -> list[WorkloadView]:
    resources = []
    for path in paths:
        for document in load_text(str(path), path.read_text(encoding="utf-8")).documents:
            resources.extend(resources_of(document))
    mesh = MeshContext(resources, options)
    return [build_view(mesh, t) for r in resources if r.is_workload for t in pod_templates(r)]


def istio_view_facts(view: WorkloadView) -> tuple[object, ...]:
    if not view.istio_sidecar:
        return ("not meshed",)
    native = bool(view.native.value)
    return ("sidecar", native, view.no_capture is None, None if native else bool(view.hold.value))


def istio_output_facts(view: WorkloadView) -> tuple[object, ...]:
    """The same facts read off the injector's output itself."""
    template = view.template
    proxy = next((c for c in template.all_containers if c.name == "istio-proxy"), None)
    if proxy is None:
        return ("not meshed",)
    capture = any(c.name in CAPTURE_INIT for c in template.init_containers)
    native = proxy.is_native_sidecar
    return ("sidecar", native, capture, None if native else _runs(proxy, "postStart", "pilot-agent", "wait"))


def _runs(container: Container, hook: str, *words: str) -> bool:
    command = " ".join(n.text or "" for n in container.node.path("lifecycle", hook, "exec", "command").elements())
    return all(w in command for w in words)


ISTIO_CASES = sorted(p.name[len("istio.") : -len(".injected.yaml")] for p in GOLDENS.glob("istio.*.injected.yaml"))


@pytest.mark.parametrize("case", ISTIO_CASES)
def test_istio_input_is_read_as_its_injected_output_shows(case):
    extra = [p for p in (GOLDENS / f"istio.{case}.iop.yaml",) if p.exists()]
    output = views(GOLDENS / f"istio.{case}.injected.yaml", *extra, options=ISTIO)
    expected = [istio_output_facts(v) for v in output]
    assert expected, "the output holds no workload"
    assert [istio_view_facts(v) for v in views(GOLDENS / f"istio.{case}.yaml", *extra, options=ISTIO)] == expected
    assert [istio_view_facts(v) for v in output] == expected  # the committed output reads the same


def test_the_istio_goldens_cover_each_correction():
    # A pod's own istio-proxy (18.3.1), the templates (18.3.2), DeploymentConfig (18.3.3), a CronJob's
    # record on its jobTemplate, re-injection of kube-inject output.
    assert set(ISTIO_CASES) >= {
        "proxy-override-args", "grpc-simple", "grpc-agent", "custom-template", "deploymentconfig", "cronjob", "reinjected",
    }


def linkerd_view_facts(view: WorkloadView) -> tuple[object, ...]:
    if not view.linkerd:
        return ("not meshed",)
    proxy = view.linkerd_proxy
    return ("linkerd", bool(proxy.native.value), proxy.await_disabled is None, _ports(proxy.skip_inbound.value), _ports(proxy.skip_outbound.value))


def linkerd_output_facts(view: WorkloadView) -> tuple[object, ...]:
    """Read off `linkerd inject` output: the proxy, its hook or probe, proxy-init's skip arguments (less
    the proxy's own ports, which it always skips). Without a proxy, the annotation is for the webhook."""
    template = view.template
    proxy = next((c for c in template.all_containers if c.name == "linkerd-proxy"), None)
    if proxy is None:
        annotation = template.annotations().get("linkerd.io/inject")
        return linkerd_view_facts(view) if annotation is not None and annotation.text == "enabled" else ("not meshed",)
    init = next((c for c in template.init_containers if c.name == "linkerd-init"), None)
    own = {str(p) for p in view.linkerd_proxy.own_ports} if view.linkerd else set()
    inbound = {p for p in _ports(_arg(init, "--inbound-ports-to-ignore")).split(",") if p and p not in own}
    outbound = {p for p in _ports(_arg(init, "--outbound-ports-to-ignore")).split(",") if p and p not in LINKERD_OWN_OUTBOUND}
    awaits = _runs(proxy, "postStart", "linkerd-await") or proxy.has_startup_probe
    return ("linkerd", proxy.is_native_sidecar, awaits, ",".join(sorted(inbound)), ",".join(sorted(outbound)))


def _arg(container: Container | None, flag: str) -> str:
    words = [n.text or "" for n in container.node.get("args").elements()] if container is not None else []
    return next((words[i + 1] for i, w in enumerate(words[:-1]) if w == flag), "")


def _ports(text: str | None) -> str:
    return ",".join(sorted(p.strip() for p in (text or "").split(",") if p.strip()))


LINKERD_CASES = sorted(p.name for p in GOLDENS.glob("linkerd.*.injected.yaml"))


@pytest.mark.parametrize("case", LINKERD_CASES)
def test_linkerd_inject_output_is_read_as_it_shows(case):
    output = views(GOLDENS / case, options=LINKERD)
    expected = [linkerd_output_facts(v) for v in output]
    assert expected and all(f[0] == "linkerd" for f in expected)
    assert [linkerd_view_facts(v) for v in output] == expected


def test_the_linkerd_goldens_cover_each_correction():
    # Skips kept in the output (18.3.5), the CNI plugin's empty defaults (18.3.7), an overridden admin
    # port that proxy-init skips, native and classic proxies, an annotation left for the webhook.
    assert set(LINKERD_CASES) >= {
        f"linkerd.{n}.injected.yaml"
        for n in ("deployment", "deployment_proxyignores", "deployment_no_init_container", "deployment_config_overrides", "deployment_native_sidecar", "cronjob")
    }

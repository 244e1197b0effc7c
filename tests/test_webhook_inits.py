"""Init containers other webhooks add (Vault agent, bank-vaults), read from the pod's annotations
(reference §18.2 H1): whole ML102 findings, and the facts behind them."""

from __future__ import annotations

import pytest

from helpers import lint
from meshlint.mesh.facts.webhookinit import _port
from meshlint.source.loader import load_text

POD = """apiVersion: v1
kind: Pod
metadata:
  name: ledger
  namespace: payments
  labels: {{sidecar.istio.io/inject: "true"}}
  annotations:
    vault.hashicorp.com/agent-inject: "true"
    vault.hashicorp.com/service: "{service}"
spec:
  containers: [{{name: ledger, image: ledger:2}}]
"""
CNI = "istio_cni:\n  enabled: true\n"


def ml102(tmp_path, *texts):
    for n, text in enumerate(texts):
        (tmp_path / f"values{n}.yaml" if n else tmp_path / "manifest.yaml").write_text(text, encoding="utf-8")
    report = lint([tmp_path], base=str(tmp_path))
    return [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code == "ML102"]


HELP = (
    'enable native sidecars so init containers start after the proxy (sidecar.istio.io/nativeSidecar: "true" on Istio 1.24+); '
    "or have the agent run as the proxy's UID 1337, which the proxy does not capture"
)


def test_vault_agent_init_before_a_classic_istio_proxy_is_unmeshed_without_cni(tmp_path):
    assert ml102(tmp_path, POD.format(service="http://vault.vault.svc:8200")) == [
        (
            "ML102", "warning", 8, 39,
            "vault.hashicorp.com/agent-inject: \"true\" makes the Vault agent injector add init container 'vault-agent-init', which "
            "logs in to Vault (port 8200) before the classic istio-proxy sidecar starts: appended after istio-init when the Vault "
            "agent injector runs after the mesh's webhook (configurations run in name order, and the usual names put the mesh's "
            "first), its login is refused and the pod never starts; placed before it, the login goes out unmeshed (no mTLS)",
            HELP,
        )
    ]


def test_vault_agent_init_first_goes_out_unmeshed(tmp_path):
    text = POD.format(service="vault:8200").replace("    vault.hashicorp.com/service", '    vault.hashicorp.com/agent-init-first: "true"\n    vault.hashicorp.com/service')
    [finding] = ml102(tmp_path, text)
    assert finding[4].endswith("before the classic istio-proxy sidecar starts: it runs before istio-init sets up the redirect, so it goes out unmeshed (no mTLS), and is refused under CNI")


def test_vault_agent_init_under_istio_cni_is_blackholed(tmp_path):
    assert ml102(tmp_path, POD.format(service="https://vault.example.com"), CNI) == [
        (
            "ML102", "error", 8, 39,
            "vault.hashicorp.com/agent-inject: \"true\" makes the Vault agent injector add init container 'vault-agent-init', which "
            "logs in to Vault (port 443) before the classic istio-proxy sidecar starts: the redirect is in place before any proxy "
            f"listens ({tmp_path / 'values1.yaml'}:2), so the login is refused and the pod never starts",
            HELP,
        )
    ]


@pytest.mark.parametrize(
    "text, port",
    [("", 8200), ("http://vault.vault.svc:8200", 8200), ("https://vault.example.com", 443), ("vault:8300", 8300), ("http://[::1", 8200)],
)
def test_the_port_the_agent_calls(text, port):
    node = load_text("a.yaml", f"service: '{text}'\n").documents[0].root.get("service") if text else None
    assert _port(node) == port

"""Init containers that another admission webhook adds to a pod, and which need the network: they are
not in the manifest, only the annotations that ask for them are (reference §18.2 H1).

- HashiCorp's Vault agent injector: `vault.hashicorp.com/agent-inject: "true"` adds `vault-agent-init`,
  which logs in to Vault and renders the secrets before the app starts, unless
  `vault.hashicorp.com/agent-pre-populate: "false"`. It runs as `agent-run-as-user` (default 100) and
  talks to `vault.hashicorp.com/service` (the injector's default address otherwise; Vault listens on 8200).
  It is appended after the pod's init containers unless `agent-init-first: "true"` puts it first.
- bank-vaults' vault-secrets-webhook: `vault.security.banzaicloud.io/vault-ct-configmap` (consul-template)
  or `vault.security.banzaicloud.io/vault-agent: "true"` prepend a `vault-agent` init container that logs
  in to Vault (bank-vaults/vault-secrets-webhook `pkg/webhook/pod.go` `getInitContainers`).
"""

from typing import NamedTuple
from urllib.parse import urlsplit

from meshlint import numbers
from meshlint.model.pod import PodTemplate
from meshlint.source.document import Node

VAULT_INJECT = "vault.hashicorp.com/agent-inject"
VAULT_PRE_POPULATE = "vault.hashicorp.com/agent-pre-populate"
VAULT_RUN_AS_USER = "vault.hashicorp.com/agent-run-as-user"
VAULT_SERVICE = "vault.hashicorp.com/service"
VAULT_INIT_FIRST = "vault.hashicorp.com/agent-init-first"
BANK_VAULTS_CT = "vault.security.banzaicloud.io/vault-ct-configmap"
BANK_VAULTS_AGENT = "vault.security.banzaicloud.io/vault-agent"
BANK_VAULTS_ADDR = "vault.security.banzaicloud.io/vault-addr"
VAULT_PORT = 8200
GO_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))  # strconv.ParseBool
GO_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))


class WebhookInit(NamedTuple):
    """An init container a webhook will add: its name, who adds it, the annotation that asks for it,
    the port it calls out on, and the UID it runs as (None: the webhook's default, never a proxy's)."""

    container: str
    webhook: str
    key: str
    asked_by: Node
    port: int
    run_as: int | None
    first: bool  # prepended before the pod's other init containers (else appended after them)

    @property
    def asked_by_text(self) -> str:
        """`vault.hashicorp.com/agent-inject: "true"`, as the message quotes it."""
        return f'{self.key}: "{self.asked_by.text}"'


def webhook_inits(template: PodTemplate) -> list[WebhookInit]:
    """The network-using init containers the pod's annotations ask other webhooks for."""
    annotations = template.annotations()
    found = []
    inject = annotations.get(VAULT_INJECT)
    pre_populate = annotations.get(VAULT_PRE_POPULATE)
    if inject is not None and inject.text in GO_TRUE and not (pre_populate is not None and pre_populate.text in GO_FALSE):
        user = annotations.get(VAULT_RUN_AS_USER)
        run_as = numbers.whole(user.text or "") if user is not None else None
        first = annotations.get(VAULT_INIT_FIRST)
        found.append(
            WebhookInit(
                "vault-agent-init", "the Vault agent injector", VAULT_INJECT, inject, _port(annotations.get(VAULT_SERVICE)), run_as,
                first is not None and first.text in GO_TRUE,
            )
        )
    for key in (BANK_VAULTS_CT, BANK_VAULTS_AGENT):
        node = annotations.get(key)
        if node is not None and ((key == BANK_VAULTS_CT and (node.text or "").strip()) or node.text in GO_TRUE):
            found.append(WebhookInit("vault-agent", "bank-vaults' webhook", key, node, _port(annotations.get(BANK_VAULTS_ADDR)), None, True))
            break
    return found


def _port(address: Node | None) -> int:
    """The port of a Vault address annotation (`https://vault.vault:8200`); Vault's 8200 otherwise."""
    text = (address.text or "").strip() if address is not None else ""
    try:
        parts = urlsplit(text if "//" in text else f"//{text}")
        port = parts.port
    except ValueError:
        return VAULT_PORT
    if port is not None:
        return port
    return {"https": 443, "http": 80}.get(parts.scheme, VAULT_PORT) if parts.scheme else VAULT_PORT

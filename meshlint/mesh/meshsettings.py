"""The mesh-wide settings that hold at one place of a run (wave-2 spec §W2): each field from the source
nearest on the workload's path, else from its units, else from the agreeing rest of the run, with the
conflicts that left fields undecided, and the releases the tree states apart from them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint.findings import Position
from meshlint.mesh.clusterversion import KUBERNETES_VERSION
from meshlint.mesh.contextfacts import origin_key
from meshlint.mesh.istio import (
    NATIVE_ENV,
)
from meshlint.mesh.linkerd import LINKERD_FIELD_PREFIX
from meshlint.mesh.scope import Claim, Conflict, Place, UnitsOf, considered
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import (
    DISCOVERY_SELECTORS,
    ISTIO_CNI_FIELDS,
    ISTIO_VERSION,
    OUTBOUND_POLICY,
    REWRITE_PROBES,
)

if TYPE_CHECKING:
    pass


HOLD = "holdApplicationUntilProxyStarts"


def own_claim(claims: list[Claim], place: Place, units: UnitsOf | None) -> bool:
    """Some claim lies on the workload's path or in one of its units (wave-3 spec V2.6: the release
    its own unit states)."""
    deciding, elsewhere = considered(claims, place, units)
    if not elsewhere:
        return True
    mine = units(place.file) if units is not None else frozenset()
    return bool(mine) and any(mine & units(c.place.file) for c in deciding if units is not None)


class MeshSettings:
    """The mesh-wide settings that apply at one place, for one revision (wave-2 spec §W2), and the
    conflicts that left fields there undecided."""

    def __init__(self, resolved: dict[str, Setting[Any]], conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        # The releases a source states are facts about what runs, not settings it gives: a source that
        # states only a release (istiod's image tag) is no mesh-wide configuration to set a field in.
        self.istio_version: Setting[Any] | None = resolved.get(ISTIO_VERSION)  # the release the tree installs
        self.kubernetes_version: Setting[Any] | None = resolved.get(KUBERNETES_VERSION)  # the release its cluster runs
        if self.istio_version is not None or self.kubernetes_version is not None:
            resolved = {k: v for k, v in resolved.items() if k not in (ISTIO_VERSION, KUBERNETES_VERSION)}
        self._resolved = resolved
        self.sourced = bool(resolved) or bool(conflicts)  # False: every field is Istio's built-in default
        self.default_config: dict[str, Setting[Any]] = {}
        self.default_proxy_metadata: dict[str, Setting[Any]] = {}
        self.helm_proxy: dict[str, Setting[Any]] = {}
        self.linkerd_helm: dict[str, Setting[Any]] = {}  # Linkerd control-plane values: `proxy.await`
        for key, setting in resolved.items():
            if setting.value is None:
                continue  # a complete MeshConfig that leaves the field to its default
            group, _, name = key.partition(".")
            if key.startswith(LINKERD_FIELD_PREFIX):
                self.linkerd_helm[key[len(LINKERD_FIELD_PREFIX) :]] = setting
            elif group == "proxy":
                self.default_config[name] = setting
            elif group == "proxyMetadata":
                self.default_proxy_metadata[name] = setting
            elif key.startswith("helm.proxy."):
                self.helm_proxy[key[len("helm.proxy.") :]] = setting
        self.native_env: Setting[Any] | None = resolved.get(f"env.{NATIVE_ENV}")
        self.rewrite_probes: Setting[Any] | None = resolved.get(REWRITE_PROBES)
        self.compatibility_version: Setting[Any] | None = resolved.get("compatibilityVersion")
        self.proxy_variant: Setting[Any] | None = resolved.get("helm.variant")

    def helm_value(self, key: str) -> Setting[Any] | None:
        """A Helm `global.proxy` value that is set (empty values are unset); "true"/"false" strings
        read as the booleans the template sees."""
        setting = self.helm_proxy.get(key)
        if setting is None or setting.value in (None, "", {}, []):
            return None
        if isinstance(setting.value, str) and setting.value.lower() in ("true", "false"):
            return setting.derived(setting.value.lower() == "true")
        return setting

    @property
    def proxy_lifecycle(self) -> Setting[Any] | None:
        """Helm global.proxy.lifecycle when it is set: it replaces the injected hold hook (reference §1.3)."""
        setting = self.helm_proxy.get("lifecycle")
        return setting if setting is not None and setting.value else None

    @property
    def outbound_traffic_policy(self) -> Setting[Any] | None:
        """MeshConfig outboundTrafficPolicy.mode when a source sets it (ALLOW_ANY by default)."""
        setting = self._resolved.get(OUTBOUND_POLICY)
        return setting if setting is not None and isinstance(setting.value, str) else None

    @property
    def discovery_selectors(self) -> Setting[Any] | None:
        """MeshConfig discoverySelectors when a source sets a non-empty list (empty: every namespace)."""
        setting = self._resolved.get(DISCOVERY_SELECTORS)
        return setting if setting is not None and isinstance(setting.value, list) and setting.value else None

    @property
    def istio_cni(self) -> Setting[Any] | None:
        """Istio CNI switched on for the injector (Helm `istio_cni.enabled` or `pilot.cni.enabled`)."""
        for key in ISTIO_CNI_FIELDS:
            setting = self._resolved.get(key)
            if setting is not None and (setting.value is True or str(setting.value).lower() == "true"):
                return setting
        return None

    @property
    def istio_source(self) -> Position | None:
        """Where the mesh-wide Istio source these settings come from is written: the one that sets the
        proxies' defaults (defaultConfig, Helm global.proxy) first, else any that decides a field here;
        None when every field is Istio's default. Where a mesh-wide hold would be set (ML100)."""
        found = [(not k.startswith(("proxy.", "helm.proxy.")), origin_key(v), v.origin) for k, v in self._resolved.items()
                 if not k.startswith(LINKERD_FIELD_PREFIX) and v.origin is not None]
        return min(found)[2] if found else None

    @property
    def mesh_wide_hold(self) -> Setting[Any] | None:
        """holdApplicationUntilProxyStarts switched on for the whole mesh (defaultConfig or Helm)."""
        for setting in (self.default_config.get(HOLD), self.helm_proxy.get(HOLD)):
            if setting is not None and setting.value is True:
                return setting
        return None

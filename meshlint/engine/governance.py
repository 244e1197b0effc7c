"""What each configuration makes of a run (wave-2 spec §W2.5): a file is governed by the nearest config
at or above its folder, and that config decides its rules, their severities and options, and the
`mesh:` options its workloads are judged with. Made once per config, before any file is checked."""

from __future__ import annotations

import os

from meshlint.config import Config
from meshlint.configset import ConfigSet
from meshlint.engine.selection import active_rules, rule_options, severity_for
from meshlint.findings import Severity
from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions, Versions, parse_linkerd_version, parse_version
from meshlint.rule import Rule, RuleContext
from meshlint.source.inputs import STDIN
from meshlint.source.walk import Excluder


class Governance:
    """One config's verdicts: the rules it runs, each rule's context and severity, its mesh options."""

    config: Config
    rules: list[Rule]
    options: MeshOptions
    contexts: dict[str, RuleContext]
    severities: dict[str, Severity | None]
    # What file checks work out once a config from its rules (engine/filecheck.py: the rules each
    # kind dispatches to, the documents read for syntax only). Kept here, it goes with the config's
    # run: a table keyed by config held every run's configs and mesh context for the process's life.
    made: dict[object, object]

    def __init__(
        self,
        config: Config,
        rules: list[Rule],
        options: MeshOptions,
        contexts: dict[str, RuleContext],
        severities: dict[str, Severity | None],
    ) -> None:
        self.config = config
        self.rules = rules
        self.options = options
        self.contexts = contexts
        self.severities = severities
        self.made = {}

    @property
    def root(self) -> str:
        """The folder the config governs (its tree), absolute; without a config file, the working directory."""
        return self.config.base if self.config.path else os.getcwd()


def mesh_options(config: Config) -> MeshOptions:
    return MeshOptions(
        default_injection=config.default_injection,
        injected_namespaces=config.injected_namespaces,
        root_namespace=config.root_namespace,
        versions=Versions(parse_version(config.istio_version), parse_version(config.kubernetes_version), parse_linkerd_version(config.linkerd_version)),
    )


def governance(config: Config, rules: list[Rule]) -> Governance:
    """What `config` decides, before the mesh context exists (`bind` adds it to the rule contexts)."""
    active = active_rules(rules, config)
    options = mesh_options(config)
    contexts = {rule.code: RuleContext(mesh=MeshContext(), options=rule_options(rule, config), mesh_options=options) for rule in active}
    return Governance(config, active, options, contexts, {rule.code: severity_for(rule, config) for rule in active})


def bind(governed: Governance, mesh: MeshContext) -> None:
    governed.contexts = {code: ctx._replace(mesh=mesh) for code, ctx in governed.contexts.items()}


class Governing:
    """Which `Governance` each file has: the top config's for stdin and for files no nearer config governs."""

    def __init__(self, configs: ConfigSet, rules: list[Rule]) -> None:
        self.configs = configs
        self._rules = rules
        self._made: dict[int, Governance] = {}
        self._excluders: dict[int, Excluder] = {}
        self.top = self._of(configs.top)

    def _of(self, config: Config) -> Governance:
        made = self._made.get(id(config))
        if made is None:
            made = self._made[id(config)] = governance(config, self._rules)
        return made

    def of(self, path: str) -> Governance:
        return self.top if path == STDIN else self._of(self.configs.for_file(path))

    def all(self) -> list[Governance]:
        """Every config's, the top one first, then in path order: what `bind` and the report see."""
        return [self._of(config) for config in self.configs.all()]

    def excluded(self, path: str) -> bool:
        """Left out by the `exclude` of a nested config that governs it (the top one's applies in the walk)."""
        config = self.configs.for_file(path) if path != STDIN else self.configs.top
        if config is self.configs.top or not config.exclude:
            return False
        excluder = self._excluders.get(id(config))
        if excluder is None:
            excluder = self._excluders[id(config)] = Excluder(config.exclude, config.base)
        return excluder.excludes(path)

    def rules(self) -> list[Rule]:
        """The rules any config runs, in the registry's order (a report's rule list)."""
        active = {rule.code for governed in self.all() for rule in governed.rules}
        return [rule for rule in self._rules if rule.code in active]

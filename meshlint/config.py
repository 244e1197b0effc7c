"""The configuration file: found upward from the working directory, validated, merged with the CLI."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from meshlint.findings import Severity
from meshlint.schemas import fits, read_schema
from meshlint.source import inputs
from meshlint.source.inputs import CONFIG_NAMES
from meshlint.wording import closest

if TYPE_CHECKING:
    import jsonschema

    from meshlint.source.document import Node

_FOLDERS = "\0context-folders"  # not a setting: where each resolved mesh.context file was named
_ORIGINS = "\0origins"  # not a setting: where each setting was written (see Config.origins)
_MERGED = ("mesh", "rules", "severity")  # an extending file's tables merge key by key into the extended one's


class ConfigError(Exception):
    """An unusable configuration: exit 2 with this one-line message."""


class Config:
    """One `.meshlint.yaml` as read (or the defaults): what to check, how, and where it governs."""

    path: str | None
    base: str
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    extend_select: tuple[str, ...]
    extend_ignore: tuple[str, ...]
    severity: dict[str, Severity]
    fail_on: Severity | None  # None: never fail on findings
    format: str
    baseline: str | None  # relative to the working directory (a config's is made so)
    exclude: tuple[str, ...]
    kubernetes_version: str | None
    istio_version: str | None
    linkerd_version: str | None
    mesh_context: tuple[str, ...]
    # Where each mesh.context file counts as located: the folder of the config that names it (§W2.1).
    context_folders: dict[str, str]
    default_injection: str
    injected_namespaces: tuple[str, ...]
    root_namespace: str
    rule_options: dict[str, dict[str, Any]]
    fail_on_skipped: bool
    stdin_filename: str | None
    report_unused_suppressions: bool
    docs_url: str | None  # where the rules page (docs/rules.md) is published: SARIF links each rule's section
    max_file_size: int  # bytes: a larger input is reported and passed over, unread
    render: str  # "auto": build root kustomizations with the real tool when one is found; "never"
    # Where each setting was written, by its dotted key (`mesh.context`, a list item as `mesh.context.0`):
    # `file:line`, or the file alone where lines are not known (pyproject.toml), for errors to name.
    origins: dict[str, str]

    def __init__(
        self,
        path: str | None = None,
        base: str = ".",
        select: tuple[str, ...] | None = None,
        ignore: tuple[str, ...] = (),
        extend_select: tuple[str, ...] = (),
        extend_ignore: tuple[str, ...] = (),
        severity: dict[str, Severity] | None = None,
        fail_on: Severity | None = Severity.WARNING,
        format: str = "text",
        baseline: str | None = None,
        exclude: tuple[str, ...] = (),
        kubernetes_version: str | None = None,
        istio_version: str | None = None,
        linkerd_version: str | None = None,
        mesh_context: tuple[str, ...] = (),
        context_folders: dict[str, str] | None = None,
        default_injection: str = "auto",
        injected_namespaces: tuple[str, ...] = (),
        root_namespace: str = "istio-system",
        rule_options: dict[str, dict[str, Any]] | None = None,
        fail_on_skipped: bool = False,
        stdin_filename: str | None = None,
        report_unused_suppressions: bool = False,
        docs_url: str | None = None,
        max_file_size: int = inputs.MAX_FILE_SIZE,
        render: str = "auto",
        origins: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.base = base
        self.select = select
        self.ignore = ignore
        self.extend_select = extend_select
        self.extend_ignore = extend_ignore
        self.severity = {} if severity is None else severity
        self.fail_on = fail_on
        self.format = format
        self.baseline = baseline
        self.exclude = exclude
        self.kubernetes_version = kubernetes_version
        self.istio_version = istio_version
        self.linkerd_version = linkerd_version
        self.mesh_context = mesh_context
        self.context_folders = {} if context_folders is None else context_folders
        self.default_injection = default_injection
        self.injected_namespaces = injected_namespaces
        self.root_namespace = root_namespace
        self.rule_options = {} if rule_options is None else rule_options
        self.fail_on_skipped = fail_on_skipped
        self.stdin_filename = stdin_filename
        self.report_unused_suppressions = report_unused_suppressions
        self.docs_url = docs_url
        self.max_file_size = max_file_size
        self.render = render
        self.origins = {} if origins is None else origins

    def at(self, key: str, item: int | None = None) -> str:
        """`file:line: key` for an error about the setting `key` (or one `item` of its list): where it
        was written, else the config file, else `config` for the defaults."""
        place = self.origins.get(f"{key}.{item}") if item is not None else None
        return f"{place or self.origins.get(key) or self.path or 'config'}: {key}"


def find_config(start: str = ".") -> str | None:
    """The nearest `.meshlint.yaml`/`.yml`, else a `pyproject.toml` with `[tool.meshlint]`, going up."""
    directory = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return os.path.relpath(candidate)
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(pyproject) and _pyproject_section(pyproject) is not None:
            return os.path.relpath(pyproject)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(path: str | None) -> Config:
    if path is None:
        return Config()
    return _build(_resolved(path, ()), path)


def _resolved(path: str, seen: tuple[str, ...]) -> dict[str, Any]:
    """The file's settings over those of the file it `extends` (recursively); paths are made absolute
    against the file that names them, so an extended file's `mesh.context` keeps pointing where it did."""
    real = os.path.realpath(path)
    if real in seen:
        raise ConfigError(f"{path}: extends: comes back to this file (through {' -> '.join(os.path.relpath(s) for s in (*seen, real))})")
    raw, origins = _read(path)
    validate_config(raw, path, origins)
    _check_versions(raw, path, origins)
    base = os.path.dirname(os.path.abspath(path))
    raw = dict(raw)
    mesh = dict(raw.get("mesh", {}))
    if "context" in mesh:
        mesh["context"] = [os.path.normpath(os.path.join(base, p)) for p in _strings(mesh["context"])]
        raw["mesh"] = mesh
        raw[_FOLDERS] = dict.fromkeys(mesh["context"], base)
    if "baseline" in raw:
        raw["baseline"] = os.path.normpath(os.path.join(base, raw["baseline"]))
    parent = raw.pop("extends", None)
    raw[_ORIGINS] = origins
    if parent is None:
        return raw
    parent_path = os.path.join(base, parent)
    if not os.path.isfile(parent_path):
        raise ConfigError(f"{_place(path, origins, 'extends')}: extends: {parent}: no such file")
    merged = _resolved(parent_path, (*seen, real))
    merged[_ORIGINS] = _merged_origins(merged[_ORIGINS], raw)
    for key, value in raw.items():
        if key in (*_MERGED, _FOLDERS) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        elif key != _ORIGINS:
            merged[key] = value
    return merged


def _merged_origins(extended: dict[str, str], raw: dict[str, Any]) -> dict[str, str]:
    """The extended file's origins less those of what `raw` replaces (a whole setting, or one key of a
    table that merges), then raw's own."""
    replaced: list[str] = []
    for key, value in raw.items():
        if not key.startswith("\0"):
            replaced += [f"{key}.{sub}" for sub in value] if key in _MERGED else [key]
    kept = {k: v for k, v in extended.items() if not any(k == r or k.startswith(r + ".") for r in replaced)}
    return {**kept, **raw[_ORIGINS]}


def _place(path: str, origins: dict[str, str], key: str) -> str:
    """`file:line` of the setting `key`, or the file alone where its line is not known."""
    return origins.get(key, path)


def _check_versions(raw: dict[str, Any], path: str, origins: dict[str, str]) -> None:
    """The version settings, read as the command line reads them (meshlint/mesh/options.py)."""
    from meshlint.mesh.options import version_problem

    for key in ("kubernetes-version", "istio-version", "linkerd-version"):
        problem = version_problem(key, raw[key]) if key in raw else None
        if problem:
            raise ConfigError(f"{_place(path, origins, key)}: {key}: {problem}")


def _read(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The file's settings, and where each was written (`file:line` by dotted key; none for TOML)."""
    if os.path.basename(path) == "pyproject.toml":
        section = _pyproject_section(path)
        return (section if section is not None else {}), {}
    from meshlint.source.loader import decode, load_text

    try:
        with open(path, "rb") as handle:
            text, _ = decode(handle.read())
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config: {err.strerror or err}") from err
    loaded = load_text(path, text)
    if loaded.problems:
        problem = loaded.problems[0]
        raise ConfigError(f"{path}:{problem.line}:{problem.column}: invalid YAML: {problem.message}")
    if not loaded.documents or loaded.documents[0].data is None:
        return {}, {}
    data = loaded.documents[0].data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of settings")
    return data, _origins(loaded.documents[0].root, os.path.relpath(path))


def _origins(node: Node, path: str, prefix: str = "") -> dict[str, str]:
    """`file:line` of each setting below `node` by dotted key; a list's items by their index."""
    found: dict[str, str] = {}
    entries = [(str(k), v, v.key_pos) for k, v in node.items()] if node.is_map else [(str(i), v, v.pos) for i, v in enumerate(node.elements())]
    for name, value, position in entries:
        key = prefix + name
        found[key] = f"{path}:{(position or value.pos).line}"
        found.update(_origins(value, path, key + "."))
    return found


def _pyproject_section(path: str) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read: {err}") from err
    section = data.get("tool", {}).get("meshlint")
    return section if isinstance(section, dict) else None


@lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    return read_schema("config.schema.json")


def validate_config(raw: dict[str, Any], path: str, origins: dict[str, str] | None = None) -> None:
    """Exit-2 errors name the file, the line where known, and the key: `file:line: key: what is wrong`."""
    schema = config_schema()
    if fits(raw, schema):
        return  # the common case, without importing jsonschema (a costly part of a pre-commit run's start-up)
    import jsonschema  # the schema's own validator words the error

    schema = config_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        error = errors[0]
        key = ".".join(str(p) for p in error.absolute_path)
        unknown = _unknown_setting(error)
        if unknown is not None:
            key = f"{key}.{unknown}" if key else unknown
        raise ConfigError(f"{_place(path, origins or {}, key)}: {key or '(top level)'}: {_expectation(error)}")


def _unknown_setting(error: jsonschema.ValidationError) -> str | None:
    """The first key (in the file's order) that an `additionalProperties: false` table does not know."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict) or not isinstance(error.schema, dict):
        return None
    known = error.schema.get("properties", {})
    return next((str(k) for k in error.instance if k not in known), None)


def _expectation(error: jsonschema.ValidationError) -> str:
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    unknown = _unknown_setting(error)
    if unknown is not None:
        allowed = sorted(schema.get("properties", {}))
        meant = closest(unknown, allowed)
        return f"unknown setting; did you mean {meant}?" if meant else f"unknown setting; expected one of: {', '.join(allowed)}"
    description = schema.get("description")
    if error.validator == "enum":
        return f"{error.instance!r} is not allowed; expected one of: {', '.join(map(str, schema['enum']))}"
    if description:
        return f"{error.instance!r} is not valid; expected {description}"
    return str(error.message)


def parse_fail_on(text: str) -> Severity | None:
    return None if text == "never" else Severity.parse(text)


def _strings(value: str | list[str]) -> tuple[str, ...]:
    """A list setting; a lone string is a list of one, as for the selectors (and unlike them, never
    split on commas: a path or a pattern may hold one)."""
    return (value,) if isinstance(value, str) else tuple(value)


def _selectors(value: Any) -> tuple[str, ...]:
    parts = value.split(",") if isinstance(value, str) else [part for item in value for part in item.split(",")]
    return tuple(part.strip() for part in parts if part.strip())


def _build(raw: dict[str, Any], path: str) -> Config:
    base = os.path.dirname(os.path.abspath(path))
    mesh = raw.get("mesh", {})
    config = Config(path=path, base=base, origins=raw.get(_ORIGINS, {}))
    if "select" in raw:
        config.select = _selectors(raw["select"])
    config.ignore = _selectors(raw.get("ignore", ()))
    config.extend_select = _selectors(raw.get("extend-select", ()))
    config.extend_ignore = _selectors(raw.get("extend-ignore", ()))
    config.severity = {k: Severity.parse(v) for k, v in raw.get("severity", {}).items()}
    config.fail_on = parse_fail_on(raw.get("fail-on", "warning"))
    config.format = raw.get("format", "text")
    if "baseline" in raw:
        config.baseline = os.path.relpath(os.path.join(base, raw["baseline"]))  # absolute when extended
    config.exclude = _strings(raw.get("exclude", ()))
    config.kubernetes_version = raw.get("kubernetes-version")
    config.istio_version = raw.get("istio-version")
    config.linkerd_version = raw.get("linkerd-version")
    config.mesh_context = tuple(os.path.normpath(os.path.join(base, p)) for p in _strings(mesh.get("context", ())))
    folders = raw.get(_FOLDERS, {})
    config.context_folders = {p: folders.get(p, base) for p in config.mesh_context}
    config.default_injection = mesh.get("default-injection", "auto")
    config.injected_namespaces = _strings(mesh.get("injected-namespaces", ()))
    config.root_namespace = mesh.get("root-namespace", "istio-system")
    config.fail_on_skipped = bool(raw.get("fail-on-skipped", False))
    config.docs_url = raw.get("docs-url")
    config.rule_options = {str(k): dict(v) for k, v in raw.get("rules", {}).items()}
    config.max_file_size = inputs.parse_size(raw.get("max-file-size", inputs.MAX_FILE_SIZE)) or inputs.MAX_FILE_SIZE
    config.render = raw.get("render", "auto")
    return config

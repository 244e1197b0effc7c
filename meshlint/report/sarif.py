"""SARIF 2.1.0 for code scanning; every rule is described, fingerprints are stable across runs."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from meshlint import __version__

if TYPE_CHECKING:
    from meshlint.engine.results import Report
    from meshlint.findings import Finding

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _fingerprint(f: Finding) -> str:
    resource = str(f.resource) if f.resource else ""
    key = "\x00".join((f.code, f.path, resource, f.message))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def render(report: Report, *, color: bool = False) -> str:
    rules = report.rules
    index = {rule.code: i for i, rule in enumerate(rules)}
    driver = {
        "name": "meshlint",
        "version": __version__,
        "informationUri": "https://github.com/meshlint/meshlint",
        "rules": [
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.section("Why is this bad?") or rule.summary},
                "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
                "defaultConfiguration": {"level": _LEVEL[str(rule.severity)]},
            }
            for rule in rules
        ],
    }
    results = []
    for f in report.findings:
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _LEVEL[str(f.severity)],
            "message": {"text": f"{f.message}\nhelp: {f.help}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path.replace("\\", "/")},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }
            ],
            "partialFingerprints": {"meshlintFinding/v1": _fingerprint(f)},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }
    return json.dumps(log, indent=2) + "\n"

"""SARIF 2.1.0 output of a lint report, for code-scanning UIs.

Contracts:
- One run whose driver lists every rule in `registry.RULES` order, with its summary as shortDescription and
  its documentation paragraph as fullDescription and help; `ruleIndex` points into that list.
- One result per finding, tools in catalog order then server-level ones; levels error, warning and note (info).
- Pure: builds a dict, writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optimizer.lint.engine import LintReport
from optimizer.lint.findings import Rule
from optimizer.lint.registry import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL: Mapping[str, str] = {"error": "error", "warning": "warning", "info": "note"}
TOOL_NAME = "mcp-tool-optimizer lint"


def to_sarif(report: LintReport, *, artifacts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run. `artifacts` maps tool name -> URI of the file that defines it (when
    linting a directory of definitions); each result then has a physical location too."""
    rules = [_sarif_rule(RULES[rule_id]) for rule_id in RULES]
    index = {rule_id: i for i, rule_id in enumerate(RULES)}
    results = []
    for finding in report.findings:
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": SARIF_LEVEL[finding.severity],
            "message": {"text": finding.message},
        }
        name = finding.tool or report.server_name
        logical = {"name": name, "fullyQualifiedName": f"{name}.{finding.field}",
                   "kind": "function" if finding.tool is not None else "module"}
        location: dict[str, Any] = {"logicalLocations": [logical]}
        uri = (artifacts or {}).get(finding.tool or "")
        if uri:
            location["physicalLocation"] = {"artifactLocation": {"uri": uri}}
        result["locations"] = [location]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "rules": rules}},
            "results": results,
        }],
    }


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.id.replace("-", " ").title().replace(" ", ""),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc},
        "help": {"text": rule.doc},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"group": rule.group},
    }

"""The types every lint rule module shares: severities, a rule's description, and one finding.

Contracts:
- `SEVERITIES` runs from most to least severe; reports list findings in that order.
- A `Rule`'s `doc` is one paragraph with its whitespace collapsed (`rule()` does that), the exact text
  docs/lint.md shows for the rule and SARIF output uses as the rule's help.
- `finding(rule, ...)` gives a finding the rule's default severity unless the check names another one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from optimizer.definitions import ToolDef

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One problem. `rule` is an id in RULES; `tool` is None for a server-level finding; `field` says
    where ("description", "name", "parameters.email", "annotations", "tools"); `message` says how to fix it."""

    rule: str
    severity: Severity
    tool: str | None
    field: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "tool": self.tool, "field": self.field,
                "message": self.message}


@dataclass(frozen=True)
class Rule:
    """A rule's stable id, its group (one of the issue's ten checks), default severity, one-line
    summary and documentation paragraph."""

    id: str
    group: str
    severity: Severity
    summary: str
    doc: str


def rule(id: str, group: str, severity: Severity, summary: str, doc: str) -> Rule:
    """A Rule whose doc paragraph is written as an indented triple-quoted string (whitespace is collapsed)."""
    return Rule(id, group, severity, summary, " ".join(doc.split()))


def finding(rule: Rule, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    """A finding about one tool, at the rule's default severity unless `severity` is given."""
    return Finding(rule.id, severity or rule.severity, tool.name, field, message)

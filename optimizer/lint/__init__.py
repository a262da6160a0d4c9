"""Static checks of tool definitions — what can be judged without calling a model.

The public API; see each module for its contracts:
- `engine`: `lint`, `lint_tools`, `new_errors`, `findings_as_evidence`, the report types and the scores.
- `sarif`: `to_sarif`.
- `registry`: `RULES`, every rule in its fixed order; `findings`: `Finding`, `Rule`, `Severity`.
- The rules themselves, by topic: `rules_description` (trigger, returns, mechanics, size), `rules_parameters`,
  `rules_annotations`, `rules_names`, `rules_catalog` (boundary, overlap, mixed name styles, overload), with
  the helpers they share in `vocabulary`, `schema` and `similarity`; `rules_text` (glossary lists, copied
  text, promotion, unknown tools, with the shapes in `text_shapes`) and `added_text_problems`, what optimize's
  screening rejects a candidate for.

Nothing in this package opens a run, prints, or talks to a model or the network.
"""

from __future__ import annotations

from optimizer.lint.engine import (
    DEFAULT_MAX_TOOLS,
    PENALTY,
    LintReport,
    ToolReport,
    findings_as_evidence,
    lint,
    lint_tools,
    new_errors,
)
from optimizer.lint.findings import Finding, Rule, Severity
from optimizer.lint.registry import RULES
from optimizer.lint.rules_text import Observed, added_text_problems
from optimizer.lint.sarif import to_sarif

__all__ = ["DEFAULT_MAX_TOOLS", "PENALTY", "RULES", "Finding", "LintReport", "Observed", "Rule", "Severity",
           "ToolReport", "added_text_problems", "findings_as_evidence", "lint", "lint_tools", "new_errors", "to_sarif"]

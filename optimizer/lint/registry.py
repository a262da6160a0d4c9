"""Every lint rule, in one fixed order: the order docs/lint.md documents them and SARIF lists them.

Contracts:
- `RULES` maps each rule id to its `Rule`; ids are stable, and the order never depends on import order.
- Each rule is declared (id, severity, summary, doc) in the `rules_*` module whose checks report it; a
  rule declared there but missing from `ORDER` (or the reverse) fails at import.
- The order findings are reported in is set by `engine.lint_tools`, not here.
"""

from __future__ import annotations

from optimizer.lint import (
    rules_annotations,
    rules_catalog,
    rules_description,
    rules_names,
    rules_parameters,
    rules_security,
    rules_text,
)
from optimizer.lint.findings import Rule

ORDER: tuple[str, ...] = (
    "trigger", "boundary",
    "param-description", "param-enum", "param-format", "param-name", "param-required", "param-nesting",
    "returns", "mechanics-open-world", "mechanics-recovery",
    "annotations-missing", "annotations-implausible",
    "name-invalid", "name-style", "name-length", "name-mixed-styles",
    "size-empty", "size-thin", "size-long", "size-tokens",
    "overlap", "overload",
    "text-glossary", "text-copied", "text-promotion", "text-unknown-tool",
    "security-invisible-unicode", "security-homoglyph-name", "security-hidden-instruction",
    "security-cross-server-reference", "security-exfiltration", "security-untrusted-and-destructive",
)

_DECLARED: dict[str, Rule] = {**rules_description.DECLARED, **rules_parameters.DECLARED,
                              **rules_annotations.DECLARED, **rules_names.DECLARED, **rules_catalog.DECLARED,
                              **rules_text.DECLARED, **rules_security.DECLARED}
if set(ORDER) != set(_DECLARED) or len(ORDER) != len(set(ORDER)):
    raise RuntimeError(f"lint rules declared {sorted(_DECLARED)} but listed {list(ORDER)}")

RULES: dict[str, Rule] = {rule_id: _DECLARED[rule_id] for rule_id in ORDER}

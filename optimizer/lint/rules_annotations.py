"""Rules on a tool's annotations: annotations-missing and annotations-implausible.

Contracts:
- Checks read the annotations, the name's verb (`vocabulary.action_verb`) and the description only.
- annotations-implausible reports at error or warning level, as its documentation says, whatever its default.
"""

from __future__ import annotations

import re

from optimizer.definitions import ToolDef
from optimizer.lint.findings import Finding, Rule, Severity, finding, rule
from optimizer.lint.vocabulary import DESTRUCTIVE_VERBS, WRITE_VERBS, action_verb, vocab

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("annotations-missing", "annotations", "warning", "Tool annotations are declared.", """
        Clients decide what to confirm, retry or block from readOnlyHint, destructiveHint, idempotentHint and
        openWorldHint, and assume the worst when they are missing. No annotations at all is a warning; a partial
        set is info naming the missing hints (destructiveHint and idempotentHint are only needed when the tool
        is not read-only). Fix: declare all four, and make them true."""),
    rule("annotations-implausible", "annotations", "error", "Declared hints agree with what the tool does.", """
        Hints are promises clients act on. It is an error when a tool whose name starts with a writing verb
        (delete, remove, drop, revoke, send, create, update, write, refund, charge…) is marked readOnlyHint:
        true, or when readOnlyHint and destructiveHint are both true. It is a warning when a
        destructive-sounding tool (delete, remove, drop, revoke, destroy, purge, cancel, close…, or a
        description saying "permanently" or "cannot be undone") lacks destructiveHint: true, and when a tool
        that sends, pays, charges or creates is marked idempotentHint: true (a retry repeats it). A leading
        namespace word is skipped when finding the verb."""),
)}

REPEATING_VERBS = vocab("send charge pay refund transfer purchase buy create post submit publish email notify")
_DESTRUCTIVE_TEXT = re.compile(r"\bpermanent(?:ly)?\b|\birreversibl|\bcannot\s+be\s+undone\b|\bcan't\s+be\s+undone\b",
                               re.IGNORECASE)


def _finding(rule_id: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return finding(DECLARED[rule_id], tool, field, message, severity)


def check_annotations(tool: ToolDef) -> list[Finding]:
    """annotations-missing, annotations-implausible."""
    out: list[Finding] = []
    hints = dict(tool.annotations or {})
    known = {k: hints.get(k) for k in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")}
    if all(v is None for v in known.values()):
        out.append(_finding("annotations-missing", tool, "annotations",
                            "no annotations: declare readOnlyHint, destructiveHint, idempotentHint and "
                            "openWorldHint (clients assume the worst when they are missing)."))
    else:
        needed = ["readOnlyHint", "openWorldHint"]
        if known["readOnlyHint"] is not True:
            needed += ["destructiveHint", "idempotentHint"]
        missing = [k for k in needed if known[k] is None]
        if missing:
            out.append(_finding("annotations-missing", tool, "annotations",
                                f"annotations lack {', '.join(missing)}; declare them (clients fall back to the "
                                "most cautious defaults).", "info"))
    verb = action_verb(tool.name) or ""
    read_only, destructive = known["readOnlyHint"] is True, known["destructiveHint"] is True
    if read_only and verb in WRITE_VERBS:
        out.append(_finding("annotations-implausible", tool, "annotations",
                            f"marked readOnlyHint: true but its name's verb {verb!r} changes state; set "
                            "readOnlyHint: false (and destructiveHint if it deletes or revokes).", "error"))
    elif read_only and destructive:
        out.append(_finding("annotations-implausible", tool, "annotations",
                            "readOnlyHint and destructiveHint are both true, which contradict each other; a read-only "
                            "tool is never destructive.", "error"))
    sounds_destructive = verb in DESTRUCTIVE_VERBS or bool(_DESTRUCTIVE_TEXT.search(tool.description))
    if sounds_destructive and not destructive and not (read_only and verb in WRITE_VERBS):
        why = f"its name's verb is {verb!r}" if verb in DESTRUCTIVE_VERBS else "its description says it is permanent"
        out.append(_finding("annotations-implausible", tool, "annotations",
                            f"sounds destructive ({why}) but lacks destructiveHint: true; mark it so clients ask "
                            "before calling it.", "warning"))
    if known["idempotentHint"] is True and verb in REPEATING_VERBS:
        out.append(_finding("annotations-implausible", tool, "annotations",
                            f"marked idempotentHint: true but {verb!r} repeats its effect on every call (a retry "
                            "would send or charge twice); set idempotentHint: false.", "warning"))
    return out

"""Rules on a tool's parameters: param-description, param-enum, param-format, param-name, param-required
and param-nesting.

Contracts:
- Checks read the input schema only, through `schema.iter_params` (nested objects, array items,
  anyOf/oneOf/allOf, local $refs); a malformed schema is reported as far as it can be read, never raised on.
- Findings' fields are `parameters.PATH` (dotted, `[]` for array items), or `parameters` for the input schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from optimizer.definitions import ToolDef
from optimizer.lint.findings import Finding, Rule, Severity, finding, rule
from optimizer.lint.schema import Param, has_format, is_closed, iter_params, object_schemas, value_types
from optimizer.lint.vocabulary import name_words, vocab
from optimizer.text.tokens import words

MAX_DEPTH = 2

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("param-description", "parameters", "warning", "Every parameter has a description.", """
        A parameter without a description leaves its meaning, format and constraints to guesswork (the
        auto-generated title does not count). It fires once per undocumented property, nested ones included,
        with the field parameters.NAME (dotted when nested). Fix: one short sentence with what the value is, its
        format and an example."""),
    rule("param-enum", "parameters", "warning", "Closed sets of values are enums.", """
        A parameter whose description lists its allowed values ("one of returns, shipping, warranty", "low,
        normal, high or urgent") but whose schema has no enum (or const) lets the model send anything. It fires
        on a "one of" phrase or on a list of three or more single-word values joined by commas and "or". Fix:
        declare "enum": [...] in the schema and keep the description for what each value means."""),
    rule("param-format", "parameters", "warning", "Ids, dates and money state their format or unit.", """
        Identifiers, dates and amounts are where plausible but wrong arguments come from. A parameter looks like
        an id when its name ends in id/ids/uuid or the first five words of its description say id; like a date
        when its name has date, time, timestamp, since, until, before, after, deadline, due or an _at suffix, or
        those words say date; like money when its name or those words have amount, price, cost, fee, balance,
        budget, salary, payment or charge. It is satisfied by a schema format, pattern, enum, examples or a
        non-empty string default, or by a description that shows the format: for ids an example value, the word
        format, or where the id comes from (integer ids pass); for dates ISO 8601/YYYY-MM-DD, RFC 3339, epoch or
        HH:MM; for money the unit or currency (cents, dollars, USD, a currency sign, decimal)."""),
    rule("param-name", "parameters", "warning", "Parameter names say what they hold.", """
        Generic parameter names (user, data, value, input, info, item, payload, params, args, q, x and the like)
        force the model to infer the meaning from elsewhere. Fix: name the thing and its form, e.g. user_email
        instead of user, ticket_id instead of id. A bare id is reported as info, because the tool name often
        says what it identifies."""),
    rule("param-required", "parameters", "info", "Required parameters are listed explicitly.", """
        An object schema with properties but no "required" list leaves it implicit which arguments may be left
        out; it fires for the input schema and for nested objects. A "required" entry that is not a property is
        a warning. Fix: add "required": [...] (an empty list when everything is optional)."""),
    rule("param-nesting", "parameters", "warning", "Parameters are at most two levels deep.", """
        Argument errors grow with depth: filters.date_range.start fails more often than start_date. It fires
        once per tool, naming the deepest property path, when any property sits more than two levels deep
        (properties of array items count like nested properties; local $ref definitions are followed). Fix:
        flatten to top-level parameters with precise names."""),
)}

GENERIC_PARAMS = vocab("""user data value val input info item obj object payload params param args arg thing stuff
    misc x q s str string""")

_ONE_OF = re.compile(r"\bone\s+of\b", re.IGNORECASE)
_VALUE = r"[\"'`]?[\w.+-]+[\"'`]?"
_VALUE_LIST = re.compile(rf"(?<![\w(]){_VALUE}(?:\s*,\s*{_VALUE}){{1,}}\s*,?\s+or\s+{_VALUE}(?![\w(])")
_ID_FORMAT = re.compile(
    r"\d|#|\b(?:format|formatted|uuid|guid|like|e\.g|eg|example|such\s+as|prefix|prefixed|pattern|slug|returned"
    r"|from|as\s+shown)\b", re.IGNORECASE)
_DATE_FORMAT = re.compile(
    r"\biso\b|8601|yyyy|rfc\s?3339|\bepoch\b|\bunix\b|hh:mm|\d{4}-\d{2}-\d{2}|date-?time\s+string|seconds\s+since"
    r"|milliseconds\s+since|\bformat\b", re.IGNORECASE)
_MONEY_FORMAT = re.compile(
    r"\bcents?\b|\bdollars?\b|\busd\b|\beur\b|\bgbp\b|\bcurrency\b|\bminor\s+units?\b|\bdecimal\b|[$€£¥]"
    r"|iso\s?4217|\bpence\b|\bsmallest\s+unit\b", re.IGNORECASE)
ID_WORDS = frozenset({"id", "ids", "uuid", "guid"})
DATE_WORDS = frozenset({"date", "dates", "datetime", "time", "timestamp", "since", "until", "before", "after",
                        "deadline", "due", "birthday"})
MONEY_WORDS = frozenset({"amount", "price", "cost", "fee", "balance", "budget", "salary", "payment", "charge"})


def _finding(rule_id: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return finding(DECLARED[rule_id], tool, field, message, severity)


def check_parameters(tool: ToolDef) -> list[Finding]:
    """param-description, param-enum, param-format, param-name, param-required, param-nesting."""
    out: list[Finding] = []
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    params = list(iter_params(schema))
    for param in params:
        field = f"parameters.{param.path}"
        text = param.description
        if not text:
            out.append(_finding("param-description", tool, field,
                                f"{param.path} has no description; say what the value is, its format and an example."))
        if text and not is_closed(param.node) and value_types(param.node) <= {"string"} and (
                _ONE_OF.search(text) or _VALUE_LIST.search(text)):
            out.append(_finding("param-enum", tool, field,
                                f"{param.path}'s description lists allowed values but the schema has no enum; declare "
                                "\"enum\": [...] so the model cannot send anything else."))
        out.extend(_format_findings(tool, param, field))
        leaf = param.name.lower()
        if leaf in GENERIC_PARAMS:
            out.append(_finding("param-name", tool, field,
                                f"the parameter name {param.name!r} is generic; name what it holds and in which form "
                                "(e.g. user_email, ticket_id, search_text)."))
        elif leaf == "id":
            out.append(_finding("param-name", tool, field,
                                "the parameter name 'id' does not say what it identifies; e.g. ticket_id or order_id.",
                                "info"))
    out.extend(_required_findings(tool, schema, params))
    deep = [p for p in params if p.depth > MAX_DEPTH]
    if deep:
        worst = max(deep, key=lambda p: p.depth)
        out.append(_finding("param-nesting", tool, f"parameters.{worst.path}",
                            f"{worst.path} is {worst.depth} levels deep (at most {MAX_DEPTH}); flatten it into "
                            "top-level parameters such as start_date and end_date."))
    return out


def _format_findings(tool: ToolDef, param: Param, field: str) -> list[Finding]:
    types = value_types(param.node)
    if types and not types & {"string", "integer", "number"}:
        return []
    if has_format(param.node):
        return []
    parts = name_words(param.name)
    lowered = set(parts)
    desc_words = set(words(param.description)[:5])
    text = param.description
    if (parts and parts[-1] in ID_WORDS) or desc_words & {"id", "identifier", "uuid"}:
        if types & {"integer", "number"} or _ID_FORMAT.search(text):
            return []
        return [_finding("param-format", tool, field,
                         f"{param.path} is an identifier but nothing shows its format; give an example "
                         "(like C-1004 or #10007) or say which tool returns it.")]
    at_suffix = len(parts) > 1 and parts[-1] == "at"
    if lowered & DATE_WORDS or at_suffix or desc_words & {"date", "timestamp", "datetime"}:
        if _DATE_FORMAT.search(text):
            return []
        return [_finding("param-format", tool, field,
                         f"{param.path} is a date or time but its format is not stated; say e.g. 'ISO date "
                         "YYYY-MM-DD' or 'RFC 3339 timestamp', or set \"format\": \"date\".")]
    if lowered & MONEY_WORDS or desc_words & (MONEY_WORDS | {"money"}):
        if _MONEY_FORMAT.search(text):
            return []
        return [_finding("param-format", tool, field,
                         f"{param.path} is an amount of money but its unit is not stated; say e.g. 'in cents "
                         "(2500 = $25.00)' or 'decimal USD'.")]
    return []


def _required_findings(tool: ToolDef, schema: Mapping[str, Any], params: Sequence[Param]) -> list[Finding]:
    out: list[Finding] = []
    objects: list[tuple[str, Mapping[str, Any]]] = [("", schema)]
    objects += [(p.path + suffix, obj) for p in params
                for obj, suffix, _ in object_schemas(p.node, schema, frozenset())]
    done: set[int] = set()
    for path, obj in objects:
        props = obj.get("properties")
        if not isinstance(props, Mapping) or not props or id(obj) in done:
            continue
        done.add(id(obj))
        field = f"parameters.{path}" if path else "parameters"
        where = path or "the input schema"
        required = obj.get("required")
        if required is None:
            out.append(_finding("param-required", tool, field,
                                f"{where} has no \"required\" list; list the required parameters (or [] when all are "
                                "optional)."))
        elif isinstance(required, list):
            unknown = [str(r) for r in required if r not in props]
            if unknown:
                out.append(_finding("param-required", tool, field,
                                    f"{where} requires {', '.join(unknown)}, which "
                                    f"{'is' if len(unknown) == 1 else 'are'} not a property; fix the name or add the "
                                    "property.", "warning"))
    return out

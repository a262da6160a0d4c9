"""The lint rules: stable ids, default severities, their documentation paragraphs, and the checks.

Contracts:
- Every check reads tool definitions only (name, description, schemas, annotations): no model, no
  network, deterministic for the same input.
- A check never raises on a malformed schema; it reports what it can and skips what it cannot read.
- `RULES[id].doc` is the paragraph `docs/lint.md` shows for the rule (a test keeps the two equal);
  SARIF output uses it as the rule's help text.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from optimizer.definitions import MCP_NAME, ToolDef, canonical_json
from optimizer.text import STOPWORDS, estimate_tokens, first_sentence, stem, terms, words

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

THIN_CHARS = 80
LONG_CHARS = 1000
LONG_TOKENS = 250
HEAVY_TOKENS = 500
LONG_NAME = 40
NEIGHBOUR_SIMILARITY = 0.25
"""Two tools at least this similar are neighbours: each should say where its boundary is."""
OVERLAP_SIMILARITY = 0.5
"""Two tools at least this similar are too alike to tell apart."""
MAX_DEPTH = 2


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


def _rule(id: str, group: str, severity: Severity, summary: str, doc: str) -> Rule:
    return Rule(id, group, severity, summary, " ".join(doc.split()))


RULES: dict[str, Rule] = {r.id: r for r in (
    _rule("trigger", "trigger", "warning", "The first sentence says when to use the tool.", """
        The first sentence is what a model weighs most when it picks a tool, so it must name the task the tool
        is for. It fires when the first sentence opens with a preamble ("This tool allows you to…", "A tool
        that…", "Used to…"), when it only restates the tool's name with filler words ("Get customer info" on
        get_customer), or when it has fewer than three content words. Fix: start with the task and the
        situation, e.g. "Look up a customer account by email, phone or customer ID to verify who is asking." """),
    _rule("boundary", "boundary", "warning", "A tool with a look-alike says what it is not for.", """
        When another tool in the same server is similar (a Jaccard index of at least 0.25 over name and
        description, or an overlap, see overlap), the description must draw the line: what this tool is not for,
        or which neighbour to use instead. It is satisfied by phrases such as "not for", "instead", "rather
        than", "only for", "unlike", or by naming another tool of the server. The message names the closest
        neighbours. Fix: add one sentence such as "Not for billing questions; use get_account instead." """),
    _rule("param-description", "parameters", "warning", "Every parameter has a description.", """
        A parameter without a description leaves its meaning, format and constraints to guesswork (the
        auto-generated title does not count). It fires once per undocumented property, nested ones included,
        with the field parameters.NAME (dotted when nested). Fix: one short sentence with what the value is, its
        format and an example."""),
    _rule("param-enum", "parameters", "warning", "Closed sets of values are enums.", """
        A parameter whose description lists its allowed values ("one of returns, shipping, warranty", "low,
        normal, high or urgent") but whose schema has no enum (or const) lets the model send anything. It fires
        on a "one of" phrase or on a list of three or more single-word values joined by commas and "or". Fix:
        declare "enum": [...] in the schema and keep the description for what each value means."""),
    _rule("param-format", "parameters", "warning", "Ids, dates and money state their format or unit.", """
        Identifiers, dates and amounts are where plausible but wrong arguments come from. A parameter looks like
        an id when its name ends in id/ids/uuid or the first five words of its description say id; like a date
        when its name has date, time, timestamp, since, until, before, after, deadline, due or an _at suffix, or
        those words say date; like money when its name or those words have amount, price, cost, fee, balance,
        budget, salary, payment or charge. It is satisfied by a schema format, pattern, enum, examples or a
        non-empty string default, or by a description that shows the format: for ids an example value, the word
        format, or where the id comes from (integer ids pass); for dates ISO 8601/YYYY-MM-DD, RFC 3339, epoch or
        HH:MM; for money the unit or currency (cents, dollars, USD, a currency sign, decimal)."""),
    _rule("param-name", "parameters", "warning", "Parameter names say what they hold.", """
        Generic parameter names (user, data, value, input, info, item, payload, params, args, q, x and the like)
        force the model to infer the meaning from elsewhere. Fix: name the thing and its form, e.g. user_email
        instead of user, ticket_id instead of id. A bare id is reported as info, because the tool name often
        says what it identifies."""),
    _rule("param-required", "parameters", "info", "Required parameters are listed explicitly.", """
        An object schema with properties but no "required" list leaves it implicit which arguments may be left
        out; it fires for the input schema and for nested objects. A "required" entry that is not a property is
        a warning. Fix: add "required": [...] (an empty list when everything is optional)."""),
    _rule("param-nesting", "parameters", "warning", "Parameters are at most two levels deep.", """
        Argument errors grow with depth: filters.date_range.start fails more often than start_date. It fires
        once per tool, naming the deepest property path, when any property sits more than two levels deep
        (properties of array items count like nested properties; local $ref definitions are followed). Fix:
        flatten to top-level parameters with precise names."""),
    _rule("returns", "returns", "warning", "The tool says what comes back.", """
        A model plans its next step from what a tool returns. It is satisfied by an output schema or by a
        description sentence that says what comes back ("Returns…", "responds with…", "the result lists…"). Fix:
        declare an outputSchema, or add a sentence naming the fields that are always present and what an empty
        result looks like."""),
    _rule("mechanics-open-world", "mechanics", "warning", "Open-world tools state latency, cost or retries.", """
        A tool marked openWorldHint: true talks to something outside the server (a carrier, a payment provider,
        the web), so it can be slow, cost money or fail transiently. Its description must mention at least one
        of latency (seconds, slow, timeout, "takes up to"), cost (billed, per call, paid API, credits, quota,
        rate limit) or retries (retry, idempotent, cached). Fix: e.g. "Takes up to 10 s; safe to retry once
        after a timeout." """),
    _rule("mechanics-recovery", "mechanics", "warning", "Tools that can fail in several ways say how to recover.",
          """
        A heuristic decides which tools can fail in more than one way: tools not declared read-only (they write
        or may write), tools with two or more required parameters, and open-world tools. Their descriptions must
        give a path after a failure other than "call again": they must mention errors, failure, retries,
        timeouts, invalid or rejected input, not found or unavailable. Fix: e.g. "If the order is not delivered
        yet the call is rejected; cancel it instead." """),
    _rule("annotations-missing", "annotations", "warning", "Tool annotations are declared.", """
        Clients decide what to confirm, retry or block from readOnlyHint, destructiveHint, idempotentHint and
        openWorldHint, and assume the worst when they are missing. No annotations at all is a warning; a partial
        set is info naming the missing hints (destructiveHint and idempotentHint are only needed when the tool
        is not read-only). Fix: declare all four, and make them true."""),
    _rule("annotations-implausible", "annotations", "error", "Declared hints agree with what the tool does.", """
        Hints are promises clients act on. It is an error when a tool whose name starts with a writing verb
        (delete, remove, drop, revoke, send, create, update, write, refund, charge…) is marked readOnlyHint:
        true, or when readOnlyHint and destructiveHint are both true. It is a warning when a
        destructive-sounding tool (delete, remove, drop, revoke, destroy, purge, cancel, close…, or a
        description saying "permanently" or "cannot be undone") lacks destructiveHint: true, and when a tool
        that sends, pays, charges or creates is marked idempotentHint: true (a retry repeats it). A leading
        namespace word is skipped when finding the verb."""),
    _rule("name-invalid", "names", "error", "Tool names use MCP's allowed characters.", """
        MCP clients accept tool names of 1 to 64 characters made of letters, digits, underscore, hyphen and dot;
        other names are rejected or mangled by some clients. Two tools with the same name are an error too. Fix:
        rename the tool within those characters."""),
    _rule("name-style", "names", "warning", "Names are verb_object snake_case.", """
        A name like search_customers says the action and its object, and snake_case is what models complete most
        reliably. It fires when a name is camelCase, PascalCase, kebab-case or mixed (suggesting the snake_case
        form), when it is a single word (search, customers), or when the verb comes last (invoice_create). A
        leading word is taken as a namespace prefix, not an object, when it is the server's name (asana_search
        on the asana server) or when a verb and an object follow it (asana_search_tasks)."""),
    _rule("name-length", "names", "warning", "Names are short.", """
        Names longer than 40 characters are hard to tell apart at a glance, get truncated in client interfaces
        and leave no room for a namespace prefix within MCP's 64-character limit. Fix: drop words that the
        description can carry."""),
    _rule("name-mixed-styles", "names", "warning", "One naming style per server.", """
        A server-level finding when multi-word tool names mix styles (snake_case, kebab-case, camelCase,
        PascalCase): the inconsistency itself becomes a signal models misread. A dotted namespace prefix is
        ignored when classifying. Fix: rename to one style, preferably snake_case."""),
    _rule("size-empty", "size", "error", "Every tool has a description.", """
        With no description a model sees only the name and the schema, so every call is a guess. Fix: write one
        to three sentences: when to use the tool, what it returns, and what it is not for."""),
    _rule("size-thin", "size", "warning", "Descriptions are not too thin.", """
        A description under 80 characters cannot say when to use the tool, what it returns and what it is not
        for. Aim for 200 to 400 characters. Fix: add the trigger, the inputs' formats and the boundary with the
        nearest look-alike."""),
    _rule("size-long", "size", "warning", "Descriptions are not too long.", """
        A description over 1,000 characters or about 250 tokens costs tokens in every request and buries the
        trigger; multi-paragraph descriptions are the top source of wasted context. Fix: keep the first sentence
        as the trigger, move parameter details into parameter descriptions and cut repetition."""),
    _rule("size-tokens", "size", "info", "A whole definition stays within about 500 tokens.", """
        The estimated size of the whole definition (name, description, input and output schemas, annotations, as
        canonical JSON) is over 500 tokens. Every tool definition is sent with every request. Fix: shorten
        parameter descriptions, drop redundant titles and defaults, and split tools that take many parameters."""),
    _rule("overlap", "overlap", "warning", "Tools are distinguishable from each other.", """
        Two tools whose names and descriptions share most of their words are hard to tell apart, and a model
        then picks one at random. Similarity is the larger of two Jaccard indices over content words (stemmed,
        stopwords dropped, common verbs folded: get/fetch/check/read, search/find/query, create/add/make,
        update/edit/change, delete/remove/drop, list): one over name plus description, one over the descriptions
        alone. Clauses that draw a boundary ("not for…", "…instead") and mentions of other tools' names are left
        out, since they describe the neighbour. A pair that shares only common verbs counts only when one of the
        two says nothing but the verb. Pairs at 0.5 or more fire, once per tool, naming the other tools and the
        shared words. Fix: say what only this tool does, and add "for X use Y instead" lines."""),
    _rule("overload", "overload", "warning", "A server does not expose too many tools.", """
        A server-level finding when the server lists more tools than --max-tools (default 20). Beyond a handful
        of overlapping choices, selection degrades from sheer number, and rewriting descriptions will not fix
        that. Fix: namespace the tools by service, split the server, consolidate tools, or expose a tool-search
        tool that loads definitions on demand."""),
)}


# ---------------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------------

def _vocab(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VERB_CLASSES = {
    "get": "get fetch retrieve read check show view lookup look describe display obtain load",
    "search": "search find query locate browse discover",
    "create": "create add make insert register",
    "update": "update edit modify change set patch alter amend",
    "delete": "delete remove drop destroy erase purge",
    "list": "list enumerate",
}


def _inflections(word: str) -> set[str]:
    return {word, stem(word), stem(word + "s"), stem(word + "ed"), stem(word + "ing"), stem(word + "es")}


VERB_CLASS = {form: canon for canon, verbs in _VERB_CLASSES.items() for w in _vocab(verbs) for form in _inflections(w)}
"""Stemmed verb -> canonical verb; similar verbs count as the same word in the overlap measure."""
CANONICAL_VERBS = frozenset(_VERB_CLASSES)
SIMILARITY_STOP = frozenset(stem(w) for w in _vocab("use used instead tool call e g eg like example optional return"))
FILLER = frozenset(stem(w) for w in _vocab("""info information detail details data record records item items entry
    entries thing stuff object result results given specific specified process handle manage perform run execute do
    tool function new existing current"""))
DESTRUCTIVE_VERBS = _vocab("""delete remove drop revoke destroy purge erase wipe truncate overwrite reset kill terminate
    cancel close archive unlink uninstall disable ban block evict rm del""")
WRITE_VERBS = DESTRUCTIVE_VERBS | _vocab("""send create update write set post publish put patch insert upload submit
    refund charge pay transfer move rename edit modify assign escalate schedule book invite approve reject merge
    deploy""")
REPEATING_VERBS = _vocab("send charge pay refund transfer purchase buy create post submit publish email notify")
KNOWN_VERBS = WRITE_VERBS | _vocab("""get list search find fetch retrieve read lookup look query check show view
    describe count validate verify compare calculate compute convert analyze analyse summarize extract parse format
    render generate translate echo ping track watch monitor resolve explain estimate preview download export import
    sync add run execute start stop open load save store record log notify email print test trigger call process
    handle manage apply request ask answer reply respond review score rank sort filter match plan predict recommend
    suggest select pick choose clear refresh reload fix build compile install configure login logout authenticate
    authorize sign subscribe unsubscribe enable toggle annotate tag label comment share fork clone copy encode decode
    hash encrypt decrypt lock unlock grant upsert sum multiply divide subtract diff navigate click scroll capture fill
    wait sleep sample take make issue identify inspect measure lint evaluate go""")
GENERIC_PARAMS = _vocab("""user data value val input info item obj object payload params param args arg thing stuff
    misc x q s str string""")

_PREAMBLE = re.compile(
    r"^\s*(?:(?:this|the)\s+(?:is\s+an?\s+)?(?:tool|function|endpoint|method|api|command|action|operation)\b"
    r"|an?\s+(?:tool|function|endpoint|method|helper|utility)\b"
    r"|(?:tool|function|endpoint|method|helper)\s+(?:to|for|that|which)\b"
    r"|(?:is\s+)?used\s+(?:to|for)\b"
    r"|(?:allows|lets)\b"
    r"|provides\s+(?:a\s+way|access|the\s+ability)\b)"
    r"|\b(?:allows|lets|enables|helps)\s+(?:you|users?|the\s+(?:user|model|agent|assistant|caller))\s+to\b",
    re.IGNORECASE,
)
_BOUNDARY = re.compile(
    r"\bnot\s+(?:for|to\s+be\s+used|meant|intended|suitable|used)\b|\binstead\b|\bdo(?:es)?\s*n[o']t\s+use\b"
    r"|\brather\s+than\b|\bunlike\b|\bonly\s+(?:for|when|use)\b|\bnever\s+(?:for|use)\b|\bprefer\b",
    re.IGNORECASE,
)
_RETURNS = re.compile(
    r"\b(?:returns?|returning|responds?\s+with|replies\s+with|gives\s+back|comes?\s+back|yields|outputs?"
    r"|the\s+(?:result|response|answer|output)\s+(?:is|are|contains?|includes?|lists?|has))\b",
    re.IGNORECASE,
)
_MECHANICS = re.compile(
    r"latenc|\bslow|\bseconds?\b|\bminutes?\b|\bms\b|\btime\s?outs?\b|\btimed\s+out\b"
    r"|\btakes\s+(?:up\s+to|about|around|a\s+few|several)\b|\bper\s+(?:call|request)\b|\bbill(?:ed|able)\b"
    r"|\bpaid\s+(?:call|api|request|service)|\bcosts?\s+(?:money|credits?|\$|a\s+fee|nothing)|\bcredits?\b"
    r"|\bquota|\brate[\s-]limit|\bretr(?:y|ies|ying)\b|idempot|\bcach(?:e|ed|ing)\b",
    re.IGNORECASE,
)
_RECOVERY = re.compile(
    r"\b(?:errors?|fails?|failed|failure|failing|retry|retries|retrying|time\s?outs?|timed\s+out|not\s+found"
    r"|invalid|rejected|rejects|unavailable|refused|denied|recover|otherwise)\b",
    re.IGNORECASE,
)
_DESTRUCTIVE_TEXT = re.compile(r"\bpermanent(?:ly)?\b|\birreversibl|\bcannot\s+be\s+undone\b|\bcan't\s+be\s+undone\b",
                               re.IGNORECASE)
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
_NAME_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")
_CLAUSE_END = re.compile(r"[.;!?:]\s+|\s[—–]\s|\s-\s|\n")


# ---------------------------------------------------------------------------------------------------
# Schema walking
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """One property of an input schema: dotted path (`[]` marks array items), its own schema with local
    $refs resolved, and its depth (1 for a top-level parameter)."""

    path: str
    name: str
    node: Mapping[str, Any]
    depth: int

    @property
    def description(self) -> str:
        text = self.node.get("description")
        return text.strip() if isinstance(text, str) else ""


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str]) -> tuple[Mapping[str, Any],
                                                                                            frozenset[str]]:
    for _ in range(16):
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            return node, seen
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return node, seen
        seen = seen | {ref}
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node, seen


def _variants(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        options = node.get(key)
        if isinstance(options, list):
            out.extend(o for o in options if isinstance(o, Mapping))
    return out


def iter_params(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, prefix: str = "", depth: int = 1,
                seen: frozenset[str] = frozenset()) -> Iterator[Param]:
    """Every property of an object schema, depth first, through nested objects, array items (`name[].child`),
    anyOf/oneOf/allOf and local $refs (each $ref is followed once per branch, so recursive schemas end)."""
    root = schema if root is None else root
    for obj, suffix, refs in _objects(schema, root, seen):
        for name, raw in obj["properties"].items():
            if not isinstance(raw, Mapping):
                continue
            node, node_refs = _resolve(raw, root, refs)
            path = f"{prefix}{suffix}.{name}" if prefix else f"{suffix}{name}"
            yield Param(path, str(name), node, depth)
            yield from iter_params(node, root, path, depth + 1, node_refs)


def _objects(node: Mapping[str, Any], root: Mapping[str, Any],
             seen: frozenset[str]) -> list[tuple[Mapping[str, Any], str, frozenset[str]]]:
    """The object schemas that hold `node`'s properties: itself, its anyOf/oneOf/allOf variants and its array
    items (path suffix `[]`), each with the $refs followed to reach it."""
    out: list[tuple[Mapping[str, Any], str, frozenset[str]]] = []
    for variant in _variants(node):
        variant, refs = _resolve(variant, root, seen)
        if isinstance(variant.get("properties"), Mapping) and not any(o is variant for o, _, _ in out):
            out.append((variant, "", refs))
        items = variant.get("items")
        if isinstance(items, Mapping) and items is not node:
            out.extend((obj, "[]" + suffix, r) for obj, suffix, r in _objects(items, root, refs)
                       if not any(o is obj for o, _, _ in out))
    return out


def _types(node: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    for variant in _variants(node):
        kind = variant.get("type")
        if isinstance(kind, str):
            out.add(kind)
        elif isinstance(kind, list):
            out.update(k for k in kind if isinstance(k, str))
    return out - {"null"}


def _closed(node: Mapping[str, Any]) -> bool:
    """The schema itself lists the allowed values (enum or const, on the value or its array items)."""
    for variant in _variants(node):
        if any(k in variant for k in ("enum", "const")):
            return True
        items = variant.get("items")
        if isinstance(items, Mapping) and any(k in items for k in ("enum", "const")):
            return True
    return False


def _has_format(node: Mapping[str, Any]) -> bool:
    """The schema shows the format itself: enum/const, format, pattern, examples, or a non-empty string default."""
    if _closed(node) or any(k in v for v in _variants(node) for k in ("format", "pattern", "examples", "example")):
        return True
    default = node.get("default")
    return isinstance(default, str) and bool(default.strip())


# ---------------------------------------------------------------------------------------------------
# Per-tool checks
# ---------------------------------------------------------------------------------------------------

def _finding(rule: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return Finding(rule, severity or RULES[rule].severity, tool.name, field, message)


def name_words(name: str) -> list[str]:
    return words(name.replace(".", " "))


def action_verb(name: str) -> str | None:
    """The verb a tool name starts with, skipping one namespace word (`asana_delete_task` -> delete)."""
    parts = name_words(name)
    if not parts:
        return None
    if parts[0] in KNOWN_VERBS or len(parts) == 1:
        return parts[0]
    return parts[1] if parts[1] in KNOWN_VERBS else parts[0]


def check_description(tool: ToolDef) -> list[Finding]:
    """size-empty, size-thin, size-long, trigger."""
    text = tool.description.strip()
    if not text:
        return [_finding("size-empty", tool, "description",
                         "no description: the model sees only the name. Write one to three sentences: when to use "
                         "it, what it returns, and what it is not for.")]
    out: list[Finding] = []
    tokens = estimate_tokens(text)
    if len(text) < THIN_CHARS:
        out.append(_finding("size-thin", tool, "description",
                            f"description is {len(text)} characters; under {THIN_CHARS} it cannot say when to use the "
                            "tool, what it returns and what it is not for (aim for 200-400)."))
    elif len(text) > LONG_CHARS or tokens > LONG_TOKENS:
        out.append(_finding("size-long", tool, "description",
                            f"description is {len(text)} characters (~{tokens} tokens); keep it under {LONG_CHARS} "
                            "characters: the trigger first, parameter details in parameter descriptions."))
    first = first_sentence(text)
    content = [_canon(t) for t in terms(first)]
    own = {_canon(t) for t in terms(" ".join(name_words(tool.name)))}
    if _PREAMBLE.search(first):
        out.append(_finding("trigger", tool, "description",
                            f"the first sentence starts with a preamble ({_clip(first, 50)!r}); start with the task "
                            "and when to use the tool, e.g. 'Look up … when …'."))
    elif content and not set(content) - own - FILLER:
        out.append(_finding("trigger", tool, "description",
                            f"the first sentence {_clip(first, 50)!r} only restates the name {tool.name}; say which "
                            "task or question it is for and with which inputs."))
    elif len(content) < 3:
        out.append(_finding("trigger", tool, "description",
                            f"the first sentence {_clip(first, 50)!r} is too short to say when to use the tool; "
                            "name the task, the inputs it starts from and what it answers."))
    return out


def check_returns(tool: ToolDef) -> list[Finding]:
    if tool.output_schema or _RETURNS.search(tool.description):
        return []
    return [_finding("returns", tool, "description",
                     "nothing says what comes back: add a sentence like 'Returns the matching records with id, "
                     "title and status; an empty list when nothing matches.', or declare an outputSchema.")]


def check_mechanics(tool: ToolDef) -> list[Finding]:
    """mechanics-open-world, mechanics-recovery (heuristic: not read-only, 2+ required, or open-world)."""
    out: list[Finding] = []
    text = tool.description
    open_world = tool.hint("openWorldHint") is True
    if open_world and not _MECHANICS.search(text):
        out.append(_finding("mechanics-open-world", tool, "description",
                            "marked openWorldHint: true but says nothing about latency, cost or retries; e.g. "
                            "'Calls an external API: up to 10 s; safe to retry once after a timeout.'"))
    reasons = []
    if tool.hint("readOnlyHint") is not True:
        reasons.append("it is not declared read-only")
    if len(tool.required) >= 2:
        reasons.append(f"it takes {len(tool.required)} required parameters")
    if open_world:
        reasons.append("it is open-world")
    if reasons and not _RECOVERY.search(text):
        out.append(_finding("mechanics-recovery", tool, "description",
                            f"it can fail in more than one way ({', '.join(reasons)}) but does not say what to do "
                            "after a failure; name the likely errors and the next step, e.g. 'An unknown id fails "
                            "with not found: look it up with search_… first.'"))
    return out


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


_STYLES = (
    ("snake_case", re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")),
    ("kebab-case", re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")),
    ("camelCase", re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")),
    ("PascalCase", re.compile(r"(?:[A-Z][a-z0-9]*)+")),
    ("SCREAMING_CASE", re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")),
)


def name_style(name: str) -> str | None:
    """The naming style of a multi-word name (ignoring a dotted namespace prefix); None for one plain word."""
    base = name.rsplit(".", 1)[-1] if "." in name else name
    if re.fullmatch(r"[a-z0-9]+", base):
        return None
    for style, pattern in _STYLES:
        if pattern.fullmatch(base):
            return style
    return "mixed"


def check_name(tool: ToolDef, server_name: str = "") -> list[Finding]:
    """name-invalid, name-length, name-style (`server_name` marks a namespace prefix)."""
    name = tool.name
    out: list[Finding] = []
    if not MCP_NAME.match(name):
        bad = sorted({c for c in name if not re.match(r"[A-Za-z0-9_\-.]", c)})
        why = f"it has {len(name)} characters (at most 64)" if len(name) > 64 else (
            "it is empty" if not name else f"it contains {' '.join(repr(c) for c in bad)}")
        out.append(_finding("name-invalid", tool, "name",
                            f"{name!r} is not a valid MCP tool name: {why}; use letters, digits, '_', '-' and '.' "
                            "only, at most 64 characters."))
    elif len(name) > LONG_NAME:
        out.append(_finding("name-length", tool, "name",
                            f"the name has {len(name)} characters; keep it under {LONG_NAME} so it stays readable and "
                            "leaves room for a namespace prefix."))
    parts = name_words(name)
    snake = "_".join(parts)
    style = name_style(name)
    if style not in (None, "snake_case") and snake:
        out.append(_finding("name-style", tool, "name",
                            f"{name} is {style}; use verb_object snake_case ({snake})."))
    elif len(parts) == 1:
        hint = f"{parts[0]}_<object>" if parts[0] in KNOWN_VERBS else f"<verb>_{parts[0]}"
        out.append(_finding("name-style", tool, "name",
                            f"{name} is a single word; name the action and what it acts on ({hint})."))
    elif parts and parts[0] not in KNOWN_VERBS and parts[-1] in KNOWN_VERBS and not _namespaced(parts, server_name):
        suggestion = "_".join([parts[-1], *parts[:-1]])
        out.append(_finding("name-style", tool, "name",
                            f"{name} puts the verb last; use verb_object order ({suggestion})."))
    return out


def _namespaced(parts: Sequence[str], server_name: str) -> bool:
    """The first word is a namespace prefix: the server's name, or followed by a verb and an object."""
    server = words(server_name)
    if server and parts[: len(server)] == server:
        return True
    return len(parts) >= 3 and parts[1] in KNOWN_VERBS


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
        if text and not _closed(param.node) and _types(param.node) <= {"string"} and (
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
    types = _types(param.node)
    if types and not types & {"string", "integer", "number"}:
        return []
    if _has_format(param.node):
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
    objects += [(p.path + suffix, obj) for p in params for obj, suffix, _ in _objects(p.node, schema, frozenset())]
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


def check_tokens(tool: ToolDef, tokens: int) -> list[Finding]:
    if tokens <= HEAVY_TOKENS:
        return []
    return [_finding("size-tokens", tool, "definition",
                     f"the whole definition is ~{tokens} tokens (over {HEAVY_TOKENS}), sent with every request; "
                     "shorten parameter descriptions and drop redundant titles and defaults.")]


def definition_tokens(tool: ToolDef) -> int:
    """Local estimate of what the definition costs a model: `estimate_tokens` over its canonical JSON."""
    return estimate_tokens(canonical_json(tool.canonical()))


# ---------------------------------------------------------------------------------------------------
# Catalog-wide checks: overlap, boundary, names, overload
# ---------------------------------------------------------------------------------------------------

def _canon(term: str) -> str:
    return VERB_CLASS.get(term, term)


def _mentionable(names: Sequence[str]) -> frozenset[str]:
    """Tool names distinctive enough to be recognised as mentions inside prose (not plain words)."""
    return frozenset(n for n in names if re.search(r"[_.\-]|[a-z][A-Z]", n))


def _similarity_text(description: str, mentionable: frozenset[str]) -> str:
    """The description without clauses that draw a boundary (they describe the neighbour) and without
    mentions of other tools' names."""
    kept = [c for c in _CLAUSE_END.split(description) if c.strip() and not _BOUNDARY.search(c)]
    text = " ".join(kept)
    if mentionable:
        text = _NAME_TOKEN.sub(lambda m: "" if m.group(0).strip(".-") in mentionable else m.group(0), text)
    return text


def _term_words(text: str) -> dict[str, str]:
    """Content terms (stemmed, verbs folded) -> the first word they came from."""
    out: dict[str, str] = {}
    for word in words(text):
        if word in STOPWORDS or len(word) < 2:
            continue
        term = _canon(stem(word))
        if term not in SIMILARITY_STOP:
            out.setdefault(term, term if term in CANONICAL_VERBS else word)
    return out


@dataclass(frozen=True)
class TermSets:
    """Per tool: name + description terms, description terms, and a display word for every term."""

    full: list[frozenset[str]]
    desc: list[frozenset[str]]
    shown: list[dict[str, str]]


def similarity_sets(tools: Sequence[ToolDef]) -> TermSets:
    """The overlap measure's inputs: verbs folded, boundary clauses and other tools' names removed."""
    mentionable = _mentionable([t.name for t in tools])
    sets = TermSets([], [], [])
    for tool in tools:
        desc = _term_words(_similarity_text(tool.description, mentionable))
        name = _term_words(" ".join(name_words(tool.name)))
        sets.desc.append(frozenset(desc))
        sets.full.append(frozenset(desc) | frozenset(name))
        sets.shown.append({**desc, **name})
    return sets


def similar_pairs(sets: Sequence[frozenset[str]], threshold: float) -> dict[tuple[int, int], float]:
    """Pairs (i < j) whose Jaccard index is at least `threshold` (> 0), exactly. Prefix filtering over an
    inverted index: with every set's terms ordered rarest first, two sets that reach the threshold share a term
    among their first |s| - ceil(threshold * |s|) + 1, so only those are indexed and probed, and the cost grows
    with shared rare terms rather than with n squared."""
    freq = Counter(t for s in sets for t in s)
    rank = {t: k for k, t in enumerate(sorted(freq, key=lambda t: (freq[t], t)))}
    sizes = [len(s) for s in sets]
    index: dict[str, list[int]] = defaultdict(list)
    out: dict[tuple[int, int], float] = {}
    for i, s in enumerate(sets):
        n = sizes[i]
        if not n:
            continue
        prefix = sorted(s, key=rank.__getitem__)[: n - math.ceil(threshold * n - 1e-9) + 1]
        candidates: set[int] = set()
        for term in prefix:
            candidates.update(index[term])
        low, high = threshold * n, n / threshold
        for j in candidates:
            m = sizes[j]
            if m < low or m > high:
                continue
            shared = len(s & sets[j])
            if shared >= threshold * (n + m - shared) - 1e-9:
                out[(j, i)] = shared / (n + m - shared)
        for term in prefix:
            index[term].append(i)
    return out


class Neighbour(NamedTuple):
    """Another tool's position in the catalog and its similarity to this one."""

    index: int
    similarity: float


class Similarity:
    """The overlap measure over one catalog: `near[i]` lists tool i's neighbours, most similar first, with
    their similarity (the larger of the name + description and the description-only Jaccard index). Neighbours
    are at least NEIGHBOUR_SIMILARITY similar over name + description, or OVERLAP_SIMILARITY over descriptions
    alone (a lower description-only match between differently named tools is not a confusion signal)."""

    def __init__(self, tools: Sequence[ToolDef]) -> None:
        self.sets = similarity_sets(tools)
        full, desc = self.sets.full, self.sets.desc
        best = similar_pairs(full, NEIGHBOUR_SIMILARITY)
        for pair, score in similar_pairs(desc, OVERLAP_SIMILARITY).items():
            if score > best.get(pair, 0.0):
                best[pair] = score
        verbs = CANONICAL_VERBS
        only_verbs = [s <= verbs for s in full]
        near: dict[int, list[Neighbour]] = defaultdict(list)
        for (i, j), score in best.items():
            if not (only_verbs[i] or only_verbs[j]) and (full[i] & full[j] or desc[i] & desc[j]) <= verbs:
                continue  # they share only a common verb and both say something else
            near[i].append(Neighbour(j, -score))
            near[j].append(Neighbour(i, -score))
        self.near: dict[int, list[Neighbour]] = {}
        for i, items in near.items():
            items.sort(key=lambda n: (n.similarity, n.index))  # most similar first
            self.near[i] = [Neighbour(n.index, -n.similarity) for n in items]

    def shared(self, i: int, j: int) -> list[str]:
        """The words tools i and j have in common, as tool i wrote them."""
        full, desc, shown = self.sets.full, self.sets.desc, self.sets.shown[i]
        return sorted(shown[t] for t in (full[i] & full[j] or desc[i] & desc[j]))


def check_neighbours(tools: Sequence[ToolDef], similarity: Similarity) -> dict[int, list[Finding]]:
    """boundary and overlap findings by tool position."""
    names = [t.name for t in tools]
    others = set(names)
    out: dict[int, list[Finding]] = defaultdict(list)
    for i, items in similarity.near.items():
        tool = tools[i]
        close = [n for n in items if n.similarity >= OVERLAP_SIMILARITY]
        if close:
            pairs = "; ".join(f"{names[n.index]} ({n.similarity:.2f}, shared: "
                              f"{', '.join(similarity.shared(i, n.index)[:6])})" for n in close[:3])
            more = f" and {len(close) - 3} more" if len(close) > 3 else ""
            out[i].append(_finding("overlap", tool, "description",
                                   f"{tool.name} is hard to tell apart from {pairs}{more}; say what only this tool "
                                   f"does, and when to use {names[close[0].index]} instead."))
        text = tool.description
        if _BOUNDARY.search(text):
            continue
        mentioned = {m.group(0).strip(".-") for m in _NAME_TOKEN.finditer(text)}
        if mentioned & (others - {tool.name}):
            continue
        nearest = ", ".join(names[n.index] for n in items[:2])
        out[i].append(_finding("boundary", tool, "description",
                               f"{tool.name} has look-alikes ({nearest}) but does not say what it is not for; add e.g. "
                               f"'Not for …; use {names[items[0].index]} instead.'"))
    return out


def check_server(server: str, tools: Sequence[ToolDef], max_tools: int) -> list[Finding]:
    """name-mixed-styles, overload, name-invalid for duplicates (server-level findings)."""
    out: list[Finding] = []
    styles: dict[str, list[str]] = defaultdict(list)
    for tool in tools:
        style = name_style(tool.name)
        if style is not None:
            styles[style].append(tool.name)
    if len(styles) > 1:
        listing = "; ".join(f"{style}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}"
                            for style, names in sorted(styles.items(), key=lambda kv: (-len(kv[1]), kv[0])))
        out.append(Finding("name-mixed-styles", "warning", None, "names",
                           f"tool names mix {len(styles)} styles ({listing}); rename them to one style, preferably "
                           "snake_case."))
    if len(tools) > max_tools:
        out.append(Finding("overload", "warning", None, "tools",
                           f"{server} lists {len(tools)} tools (more than {max_tools}); rewriting descriptions will "
                           "not fix choice overload: namespace them by service, split the server, consolidate tools, "
                           "or expose a tool-search tool that loads definitions on demand."))
    counts = Counter(t.name for t in tools)
    for name in sorted(n for n, c in counts.items() if c > 1):
        out.append(Finding("name-invalid", "error", None, "names",
                           f"{counts[name]} tools are named {name!r}; give each tool a unique name."))
    return out


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

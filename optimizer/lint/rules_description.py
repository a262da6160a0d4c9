"""Rules on what a description says and how big a definition is: trigger, returns, mechanics-open-world,
mechanics-recovery, size-empty, size-thin, size-long and size-tokens.

Contracts:
- Checks read one tool definition only; no model, no network, deterministic.
- `definition_tokens` is the local token estimate of what a request carries for a tool (`estimate_tokens` over the
  compact JSON of its name, description and input schema, as the Messages API's `tools` entries hold them; titles,
  annotations and output schemas are not sent to the model); the engine passes it to `check_tokens` and reports it
  per tool.
"""

from __future__ import annotations

import json
import re

from optimizer.definitions import ToolDef
from optimizer.lint.findings import Finding, Rule, Severity, finding, rule
from optimizer.lint.vocabulary import canon, name_words, vocab
from optimizer.text.tokens import estimate_tokens, first_sentence, stem, terms

THIN_CHARS = 80
LONG_CHARS = 1000
LONG_TOKENS = 250
HEAVY_TOKENS = 500

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("trigger", "trigger", "warning", "The first sentence says when to use the tool.", """
        The first sentence is what a model weighs most when it picks a tool, so it must name the task the tool
        is for. It fires when the first sentence opens with a preamble ("This tool allows you to…", "A tool
        that…", "Used to…"), when it only restates the tool's name with filler words ("Get customer info" on
        get_customer), or when it has fewer than three content words. Fix: start with the task and the
        situation, e.g. "Look up a customer account by email, phone or customer ID to verify who is asking." """),
    rule("returns", "returns", "warning", "The tool says what comes back.", """
        A model plans its next step from what a tool returns. It is satisfied by an output schema or by a
        description sentence that says what comes back ("Returns…", "responds with…", "the result lists…"). Fix:
        declare an outputSchema, or add a sentence naming the fields that are always present and what an empty
        result looks like."""),
    rule("mechanics-open-world", "mechanics", "warning", "Open-world tools state latency, cost or retries.", """
        A tool marked openWorldHint: true talks to something outside the server (a carrier, a payment provider,
        the web), so it can be slow, cost money or fail transiently. Its description must mention at least one
        of latency (seconds, slow, timeout, "takes up to"), cost (billed, per call, paid API, credits, quota,
        rate limit) or retries (retry, idempotent, cached). Fix: e.g. "Takes up to 10 s; safe to retry once
        after a timeout." """),
    rule("mechanics-recovery", "mechanics", "warning", "Tools that can fail in several ways say how to recover.",
          """
        A heuristic decides which tools can fail in more than one way: tools not declared read-only (they write
        or may write), tools with two or more required parameters, and open-world tools. Their descriptions must
        give a path after a failure other than "call again": they must mention errors, failure, retries,
        timeouts, invalid or rejected input, not found or unavailable. Fix: e.g. "If the order is not delivered
        yet the call is rejected; cancel it instead." """),
    rule("size-empty", "size", "error", "Every tool has a description.", """
        With no description a model sees only the name and the schema, so every call is a guess. Fix: write one
        to three sentences: when to use the tool, what it returns, and what it is not for."""),
    rule("size-thin", "size", "warning", "Descriptions are not too thin.", """
        A description under 80 characters cannot say when to use the tool, what it returns and what it is not
        for. Aim for 200 to 400 characters. Fix: add the trigger, the inputs' formats and the boundary with the
        nearest look-alike."""),
    rule("size-long", "size", "warning", "Descriptions are not too long.", """
        A description over 1,000 characters or about 250 tokens costs tokens in every request and buries the
        trigger; multi-paragraph descriptions are the top source of wasted context. Fix: keep the first sentence
        as the trigger, move parameter details into parameter descriptions and cut repetition."""),
    rule("size-tokens", "size", "info", "A whole definition stays within about 500 tokens.", """
        The estimated size of the whole definition (name, description, input and output schemas, annotations, as
        canonical JSON) is over 500 tokens. Every tool definition is sent with every request. Fix: shorten
        parameter descriptions, drop redundant titles and defaults, and split tools that take many parameters."""),
)}

FILLER = frozenset(stem(w) for w in vocab("""info information detail details data record records item items entry
    entries thing stuff object result results given specific specified process handle manage perform run execute do
    tool function new existing current"""))
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


def _finding(rule_id: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return finding(DECLARED[rule_id], tool, field, message, severity)


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
    content = [canon(t) for t in terms(first)]
    own = {canon(t) for t in terms(" ".join(name_words(tool.name)))}
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


def check_tokens(tool: ToolDef, tokens: int) -> list[Finding]:
    if tokens <= HEAVY_TOKENS:
        return []
    return [_finding("size-tokens", tool, "definition",
                     f"the whole definition is ~{tokens} tokens (over {HEAVY_TOKENS}), sent with every request; "
                     "shorten parameter descriptions and drop redundant titles and defaults.")]


def definition_tokens(tool: ToolDef) -> int:
    """Local estimate of what the definition costs every request: `estimate_tokens` over the compact JSON of the
    name, description and input schema a request's `tools` entry holds."""
    sent = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    return estimate_tokens(json.dumps(sent, ensure_ascii=False, separators=(",", ":")))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

"""The shapes the security-* rules look for: hidden characters, look-alike letters, orders hidden from the user,
references to other servers, and directions to move data out or to read secrets.

Contracts:
- Everything here is a pure function of its text; patterns are English and general, never keyed to one server.
- `AGENT_AIMED` and `LINK` are shared with optimize's safety screen (`optimizer.propose.safety`), which adds its
  own stricter patterns for text a candidate writes: changing them changes what both reject.
- Functions that find phrases return the exact text they matched, in text order, each stretch of text once.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from optimizer.lint.vocabulary import KNOWN_VERBS, name_words, vocab

# --- hidden characters ---------------------------------------------------------------------------------------------

_ALLOWED_CONTROLS = frozenset("\t\n\r")
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
"""Hangul fillers: letters that render as blanks."""


def _is_selector(char: str) -> bool:
    return "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"


def hidden_characters(text: str) -> list[str]:
    """The distinct characters of `text` a reader cannot see or that reorder it, in order of first appearance:
    format characters (category Cf: zero-width U+200B–U+200D, U+2060, U+FEFF; bidi controls U+202A–U+202E,
    U+2066–U+2069, U+200E, U+200F, U+061C; soft hyphen…), Unicode tag characters U+E0000–U+E007F, private-use
    characters, control characters other than tab and line breaks, the Hangul fillers that render as blanks, and
    variation selectors in a run of two or more (one after an emoji is how emoji are written)."""
    seen: dict[str, None] = {}
    for i, char in enumerate(text):
        if char in _ALLOWED_CONTROLS:
            continue
        category = unicodedata.category(char)
        if (category in ("Cf", "Co", "Cc") or "\U000e0000" <= char <= "\U000e007f"
                or char in _BLANK_LETTERS
                or (_is_selector(char) and ((i > 0 and _is_selector(text[i - 1]))
                                            or (i + 1 < len(text) and _is_selector(text[i + 1]))))):
            seen[char] = None
    return list(seen)


def character_name(char: str) -> str:
    """"U+202E RIGHT-TO-LEFT OVERRIDE"; characters without a Unicode name are named by their kind."""
    if "\U000e0000" <= char <= "\U000e007f":
        kind = "TAG CHARACTER"
    else:
        kind = {"Co": "PRIVATE-USE CHARACTER", "Cc": "CONTROL CHARACTER"}.get(unicodedata.category(char),
                                                                             "FORMAT CHARACTER")
    return f"U+{ord(char):04X} {unicodedata.name(char, kind)}"


def visible(text: str) -> str:
    """`text` with every hidden character written as ⟨U+XXXX⟩, so a message can show where it is."""
    hidden = set(hidden_characters(text))
    return "".join(f"⟨U+{ord(c):04X}⟩" if c in hidden else c for c in text)


def without_hidden(text: str) -> str:
    """`text` with its hidden characters removed: what the patterns below read, so that a zero-width space cannot
    split a phrase out of their sight."""
    hidden = set(hidden_characters(text))
    return "".join(c for c in text if c not in hidden) if hidden else text


def tag_text(text: str) -> str:
    """The ASCII that Unicode tag characters in `text` spell (U+E0020–U+E007E mirror ASCII), hidden from a reader but
    not from a model."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if "\U000e0020" <= c <= "\U000e007e")


# --- look-alike letters --------------------------------------------------------------------------------------------

_CONFUSABLES: dict[str, str] = {
    **dict(zip("аеорсухіјѕԁӏһԛԝ", "aeopcyxijsdlhqw", strict=True)),  # Cyrillic small letters
    **dict(zip("АВЕКМНОРСТХУІЈЅӀҮԜ", "ABEKMHOPCTXYIJSIYW", strict=True)),  # Cyrillic capitals
    **dict(zip("οανρτικυχ", "oavptikux", strict=True)),  # Greek small letters
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),  # Greek capitals
    **dict(zip("ıȷɑɡɩօսհ", "ijagiouh", strict=True)),  # other Latin letters, Armenian
}
"""Letters of other scripts that look like an ASCII letter. Fullwidth, mathematical and ligature forms are found by
NFKD decomposition instead (`ｒ`, `𝐫` → r, `ﬁ` → fi)."""
_ASCII_CONFUSABLES = (("rn", "m"), ("vv", "w"), ("I", "l"), ("1", "l"), ("|", "l"), ("0", "O"))
"""ASCII sequences that look like another ASCII letter; only two names are compared with them."""


def ascii_lookalike(char: str) -> str | None:
    """The ASCII letters or digits a non-ASCII character looks like, or None. Accented letters are not look-alikes
    (their decomposition keeps the accent), nor are superscripts and other number forms."""
    if char.isascii():
        return None
    if char in _CONFUSABLES:
        return _CONFUSABLES[char]
    decomposed = unicodedata.normalize("NFKD", char)
    category = unicodedata.category(char)
    if (category.startswith("L") or category == "Nd") and decomposed.isascii() and decomposed.isalnum():
        return decomposed
    return None


def lookalikes(name: str) -> list[tuple[str, str]]:
    """(character, the ASCII it looks like) for each distinct non-ASCII look-alike in `name`, when the name mixes
    them with ASCII letters or is made of look-alikes and ASCII only (an all-Cyrillic word is not reported)."""
    found = {c: ascii_lookalike(c) for c in name}
    pairs = [(c, a) for c, a in found.items() if a is not None]
    if not pairs or not (any(c.isascii() and c.isalpha() for c in name) or skeleton(name).isascii()):
        return []
    return pairs


def skeleton(name: str) -> str:
    """`name` with every non-ASCII look-alike replaced by the ASCII it looks like."""
    return "".join(ascii_lookalike(c) or c for c in name)


def confusable_form(name: str) -> str:
    """The skeleton with look-alike ASCII sequences folded too (rn → m, I and 1 → l, 0 → O): two names with the same
    form look the same."""
    out = skeleton(name)
    for seq, to in _ASCII_CONFUSABLES:
        out = out.replace(seq, to)
    return out


# --- orders hidden from the user -----------------------------------------------------------------------------------

def _compile(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


OVERRIDE = _compile(
    # "ignore (all) previous instructions", "disregard the above prompt", "override system rules",
    # "takes precedence over your guidelines"; bare "override"/"ignore" (e.g. `force: override the file`) pass
    r"\b(?:ignore|disregard|forget|overrides?|bypass|supersedes?|takes?\s+precedence\s+over)\s+(?:all\s+|any\s+)?"
    r"(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?(?:(?:previous|prior|above|earlier|preceding|former|original"
    r"|system|other|existing)\s+)*(?:instructions?|prompts?|guidelines|directives?)\b",
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier"
    r"|preceding|system)\s+(?:rules|context|messages?|constraints)\b",
    # "disregard everything", "forget what you were told"
    r"\b(?:disregard|forget)\s+(?:everything|anything|all\b|the\s+above|above|what(?:ever)?\b|previous|prior|earlier"
    r"|your\b)",
    # "new instructions:", "IMPORTANT instructions:", "instructions for the assistant"
    r"\b(?:new|updated|additional|important|hidden|secret|real|true)\s+(?:system\s+)?instructions?\s*:"
    r"|\binstructions?\s+(?:for|to)\s+(?:the\s+)?(?:assistant|ai|agent|model|llm|claude)\b",
)
"""Text that tries to replace the agent's instructions."""
CONCEAL = _compile(
    # "do not tell the user", "without informing the user", "never mention these instructions" (not "the user's …")
    r"\b(?:do\s+not|don'?t|never|without)\s+(?:(?:tell|inform|mention|reveal|show|notify|alert)(?:ing)?"
    r"|disclos(?:e|ing)|let(?:ting)?)\s+"
    r"(?:this\s+to\s+|it\s+to\s+|anything\s+to\s+)?(?:(?:the\s+)?user\b(?!['’]s)|(?:this|these|that)\s+instructions?\b)",
    # "hide this from the user", "keep it secret from the user"
    r"\b(?:hide|conceal|keep)\b[^.\n]{0,30}\bfrom\s+the\s+user\b(?!['’]s)",
)
"""Text that asks the agent to keep something from the user."""
ROLE_MARKERS = _compile(
    # chat-template and role markers: <|im_start|>, [INST], <<SYS>>, </system>, <IMPORTANT>, "Human:" on a line
    r"<\||\[/?inst\]|<</?sys>>|</?\s*(?:system|assistant|user|human|im_start|im_end|instructions?|important"
    r"|function_calls|function_results|tool_use|tool_result)\s*>|(?:^|\n)[ \t]*(?:system|assistant|human)[ \t]*:",
)
"""Chat-template markers and pseudo tags that make text look like it comes from the system or the user."""
AGENT_AIMED: tuple[re.Pattern[str], ...] = (*OVERRIDE, *CONCEAL, *ROLE_MARKERS)
"""The orders to the agent both lint and optimize's safety screen reject."""

_SECRET_KEEPING = _compile(
    r"\bkeep\s+(?:this|these|that|it|them)(?:\s+(?:instructions?|information|note|step|request|message|part))?\s+"
    r"(?:a\s+)?(?:secret|confidential)\b",
    r"\b(?:this|these)\s+(?:instructions?|notes?|steps?|messages?)\s+(?:is|are|must\s+(?:stay|remain|be\s+kept))\s+"
    r"(?:secret|confidential|hidden)\b",
)
_PSEUDO_TAGS = _compile(
    r"</?\s*(?:hidden|secret|admin|critical|urgent|override|priority|note[_-]?to[_-]?(?:ai|model|assistant|agent))"
    r"\s*>",
)
_PRECONDITIONS = _compile(
    # "before using this tool, read ~/.cursor/mcp.json"; "before using this tool, call list_tables" is a workflow
    r"\bbefore\s+(?:using|calling|invoking|running)\s+(?:this|the)\s+(?:tool|function)\b[\s,]*(?:(?:you\s+(?:must"
    r"|should|need\s+to|have\s+to)|please|first|always)\s+)*(?:read|open|cat|load|access|fetch|include|pass|send"
    r"|upload|copy|print|look\s+at|check\s+the\s+contents?\s+of)\b",
    r"\byou\s+(?:must|need\s+to|have\s+to|are\s+required\s+to|should)\s+(?:always\s+)?first\s+(?:call|read|open|run"
    r"|invoke|use|fetch|load|access|execute|send|pass)\b",
    r"\bfirst\s*,?\s+you\s+(?:must|need\s+to|have\s+to)\s+(?:call|read|open|run|invoke|fetch|load|access|execute"
    r"|send|pass)\b",
)
HIDDEN_INSTRUCTIONS: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = (
    ("tries to override the agent's instructions", OVERRIDE),
    ("asks the agent to keep something from the user", (*CONCEAL, *_SECRET_KEEPING)),
    ("fakes a system, role or priority marker", (*ROLE_MARKERS, *_PSEUDO_TAGS)),
    ("orders the agent to read or call something before it uses the tool", _PRECONDITIONS),
)
"""What the security-hidden-instruction rule looks for, by why it is wrong."""


def hidden_instructions(text: str) -> list[tuple[str, str]]:
    """(phrase, why) for each order to the agent in `text`; see HIDDEN_INSTRUCTIONS."""
    return _first_matches((m, why) for why, patterns in HIDDEN_INSTRUCTIONS for p in patterns for m in p.finditer(text))


def _first_matches(hits: Iterable[tuple[re.Match[str], str]]) -> list[tuple[str, str]]:
    """Matches in text order, the longest where two start together, leaving out those inside an earlier one."""
    out: list[tuple[str, str]] = []
    end = -1
    for m, why in sorted(hits, key=lambda h: (h[0].start(), -len(h[0].group(0)))):
        if m.start() >= end:
            out.append((m.group(0).strip(), why))
            end = m.end()
    return out


# --- references to other servers -----------------------------------------------------------------------------------

_GENERIC_SERVERS = vocab("""this that same current local remote main target connected upstream downstream given
    specified configured default your our its their my mcp api web http https smtp imap pop ftp sftp ssh file files
    database db sql dns proxy mail email application app backend origin host language lsp dev development production
    staging test other another different separate second external""")
"""Words that name a kind of server, not another MCP server: "the SMTP server", "the remote server"."""
_IDENT = r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"
_TOOL_WORD = r"(?:tools?|functions?)"
_Q = r"[`'\"]?"
MCP_REFERENCE = re.compile(r"\bmcp__(?P<server>[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__(?P<tool>[A-Za-z0-9][\w-]*)")
"""A client's name for another server's tool: mcp__<server>__<tool>."""
_OTHER_SERVER = re.compile(
    rf"\b{_TOOL_WORD}\s+(?:from|of|on|in|provided\s+by|exposed\s+by|belonging\s+to)\s+(?:an?\s+|the\s+|any\s+)?"
    r"(?:other|another|different|separate|second|third[-\s]party|external)\s+(?:mcp\s+)?servers?\b"
    rf"|\b(?:another|other|a\s+different)\s+(?:mcp\s+)?servers?['’]s?\s+{_TOOL_WORD}\b", re.IGNORECASE)
_KIND_OF_SERVER = re.compile(
    rf"\b{_TOOL_WORD}\s+(?:from|of|on|in|provided\s+by|exposed\s+by)\s+the\s+{_Q}(?P<a>[\w.-]+){_Q}\s+(?:mcp\s+)?"
    r"server\b"
    rf"|\b(?:call|invoke|use|run)\s+{_Q}[\w.-]+{_Q}\s+(?:on|from|of|in|via)\s+the\s+{_Q}(?P<b>[\w.-]+){_Q}\s+"
    r"(?:mcp\s+)?server\b", re.IGNORECASE)
"""Tools of "the X server": X may be a kind of server ("the remote server"), which does not count."""
_SERVERS_TOOL = re.compile(
    rf"\b(?P<c>[\w.-]+){_Q}(?:\s+mcp)?\s+server['’]s\s+(?:{_Q}[A-Za-z][\w.-]*{_Q}\s+)?{_TOOL_WORD}\b"
    rf"|\b(?P<d>[\w.-]+){_Q}(?:\s+mcp)?\s+server['’]s\s+{_Q}(?:{_IDENT})\b"
    rf"|\b(?P<e>[A-Za-z][\w-]*[_-](?:server|mcp)){_Q}(?:['’]s)?\s+(?:{_Q}[\w.-]+{_Q}\s+)?{_TOOL_WORD}\b"
    rf"|\b{_TOOL_WORD}\s+(?:from|of|on|in)\s+(?:the\s+)?{_Q}(?P<f>[A-Za-z][\w-]*[_-](?:server|mcp))\b",
    re.IGNORECASE)
"""A server's own tools: "the mail server's send_email tool", "whatsapp_server tools"."""
_THIS = vocab("this that the same current our its my your their a an")
_NAMESPACED = (
    re.compile(rf"\b(?:call|calling|invoke|invoking)\s+(?:the\s+)?{_Q}(?<![\w./@-])(?P<ns>[A-Za-z][A-Za-z0-9-]*)"
               rf"(?P<sep>[.:/])(?P<tool>{_IDENT})(?![\w@/-]|\.\w)"
               rf"|(?<![\w./@-])(?P<ns2>[A-Za-z][A-Za-z0-9-]*)(?P<sep2>[.:/])(?P<tool2>{_IDENT}){_Q}\s+{_TOOL_WORD}\b",
               re.IGNORECASE),
    re.compile(rf"(?:\b(?:use|using|try|via|with|then|see)\s+(?:the\s+)?{_Q}|`)(?<![\w./@-])"
               rf"(?P<ns>[A-Za-z][A-Za-z0-9-]*)(?P<sep>[:/])(?P<tool>{_IDENT})(?![\w@/-]|\.\w)", re.IGNORECASE),
)
"""server.tool, server:tool or server/tool after call or invoke or before "tool" (any tool name); server:tool or
server/tool after use, via, with and the like or in backticks (a verb-led tool name only: dotted names there are
mostly code, `pandas.read_csv`)."""


def server_references(text: str) -> Iterator[tuple[str, str | None, str | None]]:
    """(phrase, server, tool) for each reference to a tool of another server; server or tool is None when the text
    does not name it. Names the caller knows (this server, its tools) are for the caller to leave out."""
    for m in MCP_REFERENCE.finditer(text):
        yield m.group(0), m.group("server"), m.group("tool")
    for m in _OTHER_SERVER.finditer(text):
        yield m.group(0), None, None
    for pattern, ignored in ((_KIND_OF_SERVER, _GENERIC_SERVERS), (_SERVERS_TOOL, _THIS)):
        for m in pattern.finditer(text):
            name = next(g for g in m.groups() if g)
            if name.lower() not in ignored:
                yield m.group(0), name, None
    for strong, pattern in zip((True, False), _NAMESPACED, strict=True):
        for m in pattern.finditer(text):
            ns, sep, tool = (m.group("ns"), m.group("sep"), m.group("tool")) if m.group("ns") else \
                (m.group("ns2"), m.group("sep2"), m.group("tool2"))
            if strong or _verb_led(tool):
                yield ns + sep + tool, ns, tool


def _verb_led(name: str) -> bool:
    parts = name_words(name)
    return len(parts) >= 2 and parts[0] in KNOWN_VERBS


# --- moving data out, reading secrets ------------------------------------------------------------------------------

_WEB_TLDS = "com|net|org|io|ai|co|dev|app|xyz|info|biz|me|ly|gg|ru|cn|tk|top|site|online|click|link|us|uk|de"
LINK = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s\"'`<>)\]]+"
    r"|\bwww\.[^\s\"'`<>)\]]+"
    r"|(?<![\w@./-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
    rf"(?:[a-z]{{2,24}}/[^\s\"'`<>)\]]*|(?:{_WEB_TLDS})\b(?![\w-]|\.\w))",
    re.IGNORECASE,
)
"""A link: a scheme link (`https://…`, `ftp://…`), a `www.` link, or a bare domain such as `evil.com/x`. A bare
domain counts when a path follows it or its top-level domain is a common web one, so file names (`runbook.md`),
parameter paths (`filters.start`), emails and `e.g.` are not links."""
_EMAIL = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
_LEAD = r"(?:^|(?<=[.!?:;,(>])\s*|\b(?:and|then|also|please|always|first|must|should|need\s+to|have\s+to)\s+)"
"""Where an order to the agent starts: a sentence or clause start, or after and, then, please, must and the like."""
_MOVE = (r"(?:send|post|upload|forward|include|transmit|e-?mail|mail|copy|exfiltrate|leak|deliver|append|attach"
         r"|pipe|write|put|paste|pass|relay|push|provide|add|fill|give)")
_READ = (r"(?:read|open|cat|load|access|print|dump|reveal|get|fetch|grab|extract|collect|gather|copy|look\s+(?:at|up"
         r"|in)|check|view|list|find|retrieve|output|show|display)")
_SEND = r"(?:send|post|upload|forward|transmit|e-?mail|mail|exfiltrate|leak|deliver|pipe|relay|push)"
_SEND_OUT = re.compile(
    rf"{_LEAD}{_SEND}\b[^.!?\n]{{0,100}}?\b(?:(?:to|into|in|via|through)\s+(?:the\s+)?(?:(?:address|url|endpoint"
    rf"|webhook)\s+)?[<`'\"]?(?:{LINK.pattern}|{_EMAIL})|(?:to|at)\s+[<`'\"]?{_EMAIL})"
    rf"|{_LEAD}b?cc\s+(?:to\s+)?[<`'\"]?{_EMAIL}",
    re.IGNORECASE)
"""An order to send something to a link or an e-mail address (at: only an e-mail address), or to cc one."""
SECRET_FILES = re.compile(
    r"\.ssh/(?![\w.-]*\.pub\b)[\w.-]+|\.ssh\b(?!/)|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
    r"|(?<![\w./-])\.env\b(?![\w.-])|\.aws/(?:credentials|config)\b|(?<![\w-])\.(?:netrc|npmrc|pypirc|git-credentials|bash_history|zsh_history"
    r"|gnupg)\b|\.docker/config\.json|\.kube/config\b|/etc/(?:passwd|shadow|sudoers)\b|\bmcp\.json\b"
    r"|\bclaude_desktop_config\.json\b|\bwallet\.dat\b",
    re.IGNORECASE)
"""Files that hold keys, tokens or passwords (a public key, `id_rsa.pub`, is not one)."""
_SECRET_NOUN = (r"(?:api[\s_-]?keys?|(?:access|auth|authentication|bearer|session|refresh|oauth|api|secret|github"
                r"|slack|aws)[\s_-]?tokens?|secret[\s_-]?keys?|private[\s_-]?keys?|passwords?|passphrases?"
                r"|credentials|session[\s_-]?cookies|seed[\s_-]?phrases?|ssh[\s_-]?keys?|secrets)")
_SCOPED_SECRET = re.compile(r"\b(?:the\s+user['’]s|the\s+user|your|their|all|any|every|stored|saved|local"
                            rf"|environment)\s+(?:\w+\s+)?{_SECRET_NOUN}\b", re.IGNORECASE)
_MOVE_ORDER = re.compile(rf"{_LEAD}{_MOVE}\b", re.IGNORECASE)
_READ_ORDER = re.compile(rf"{_LEAD}(?:{_READ}|{_MOVE})\b", re.IGNORECASE)
_AGENT_READ = re.compile(rf"\b(?:you\s+(?:must|should|need\s+to|have\s+to|are\s+required\s+to)|please|first)\s+"
                         rf"(?:also\s+|first\s+|always\s+)?{_READ}\b", re.IGNORECASE)
_ONLY_A_PATH = re.compile(r"\b(?:path|paths|filename|file\s+name|location|directory|folder|default|defaults|e\.g\."
                          r"|for\s+example|such\s+as|like)\b", re.IGNORECASE)
_CONTENTS = re.compile(r"\b(?:contents?|text|body|data|what\s+it\s+(?:says|contains)|its)\b", re.IGNORECASE)
_CONVERSATION = re.compile(
    r"\beverything\s+you\s+(?:know|have\s+(?:seen|read|learned|been\s+told)|remember)\b"
    r"|\ball\s+(?:the\s+)?(?:information|context|data|details)\s+you\s+(?:have|know|can\s+(?:find|access|see))\b"
    r"|\b(?:the\s+)?(?:entire|full|whole|complete)\s+(?:conversation|chat)(?:\s+history)?\s+(?:so\s+far|verbatim"
    r"|until\s+now|up\s+to\s+now)\b"
    r"|\b(?:all|every)\s+(?:previous|prior|earlier|past)\s+(?:messages|turns|user\s+messages|conversations?)\b"
    r"|\b(?:the|this|our)\s+conversation\s+(?:so\s+far|history|verbatim|transcript)\b"
    r"|\b(?:transcript|history)\s+of\s+(?:this|the\s+current|our)\s+(?:conversation|chat)\b"
    r"|\byour\s+(?:system\s+prompt|instructions|context\s+window|hidden\s+(?:prompt|instructions))\b"
    r"|\bcontents?\s+of\s+(?:every|all|any|each)\s+(?:files?|documents?)\s+(?:you|the\s+user)\b",
    re.IGNORECASE)
"""What a parameter must never be filled with: the conversation, everything the agent knows, its instructions,
files it has read."""


def exfiltration(text: str, *, parameter: bool, takes_credentials: bool) -> list[tuple[str, str]]:
    """(phrase, why) for each direction to move data out or to read secrets, sentence by sentence: an order to send
    something to a link or e-mail address (the phrase is the order); an order to read a secrets file (with an order
    to pass it on, or addressed to the agent), unless the file is only named as a path or an example; an order to
    pass on a user's keys, tokens or passwords (not when the tool takes credentials itself: `takes_credentials`);
    and a request for the conversation, everything the agent knows or its instructions, in a parameter's
    description (`parameter`) or, in a tool's description, with an order to put it somewhere. For all but the
    first the phrase is the sentence."""
    out: list[tuple[str, str]] = []
    for sentence in _sentences(text):
        hits = [(m, "sends data to an outside address") for m in _SEND_OUT.finditer(sentence)]
        secret = SECRET_FILES.search(sentence)
        if secret and _reads_secret(sentence, secret):
            hits.append((secret, f"reads a secrets file ({secret.group(0)})"))
        scoped = _SCOPED_SECRET.search(sentence)
        if scoped and not takes_credentials and _MOVE_ORDER.search(sentence):
            hits.append((scoped, "passes on secrets"))
        hits += [(m, "asks for the conversation or what the agent knows") for m in _CONVERSATION.finditer(sentence)
                 if parameter or _MOVE_ORDER.search(sentence)]
        for phrase, why in _first_matches(hits):
            out.append((phrase.rstrip(".,;:!?") if why.startswith("sends") else sentence.strip(), why))
    return list(dict.fromkeys(out))


def _reads_secret(sentence: str, secret: re.Match[str]) -> bool:
    """An order to read or pass on the file (an order to pass something on in the sentence, or one addressed to the
    agent), unless the sentence only names it as a path, a default or an example."""
    before = sentence[: secret.start()]
    if _ONLY_A_PATH.search(before) and not _CONTENTS.search(sentence):
        return False
    return bool(_AGENT_READ.search(sentence) or (_READ_ORDER.search(before) and _MOVE_ORDER.search(sentence)))


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]

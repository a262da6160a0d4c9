"""TypeScript/JavaScript tool declarations for `source_patch`, found with a small tokenizer.

The tokenizer tells strings, template literals, comments and regex literals apart (enough to find
literals and match brackets, not a parser). Recognised declarations:
- `x.tool("name", "description", schema?, handler)` — the MCP TypeScript SDK's `server.tool`;
- `x.registerTool("name", { description: "...", inputSchema: {...} }, handler)`;
- object literals with `name: "..."` and `description` or `inputSchema` — low-level tool lists.
Names and descriptions match by exact decoded value. A parameter description is located when the
listed text stands exactly once inside the declaration as `.describe("...")` or `description: "..."`.
Template literals with `${...}` are never rewritten. New literals keep the old quote character and
are checked by decoding them back.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from optimizer.source.sites import Edit, Outcome, Site, StringAt

MISMATCH = "the text in source is not what the server lists (built or changed at run time?); not rewritten"
_REGEX_AFTER_PUNCT = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_AFTER_WORD = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield",
                     "await", "instanceof"}
_WORD = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
_NUMBER = re.compile(r"\.?\d[\w.]*")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v"}
_PAIRS = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Token:
    """`kind`: "str" (a quoted string or a template without `${}`; `text` is its decoded value),
    "opaque" (a template with `${}` or an undecodable string), "word", "punct" (one character) or "other"."""

    kind: str
    start: int
    end: int
    text: str


def scan_js(rel: str, text: str) -> tuple[list[Site], list[StringAt]]:
    """Tool declarations and all string literals of one TS/JS file. Never raises for odd syntax: what it
    cannot read is simply not a declaration."""
    src = _JsSource(rel, text)
    tokens, closers = src.tokens, src.closers
    sites: list[Site] = []
    for k, tok in enumerate(tokens):
        if (tok.kind == "word" and tok.text in ("tool", "registerTool") and _is(tokens, k - 1, ".")
                and _is(tokens, k + 1, "(")):
            args = _items(tokens, k + 1, closers.get(k + 1, len(tokens)))
            if not args:
                continue
            desc: Token | str | None = None
            if tok.text == "tool" and len(args) >= 3:
                desc = _single(tokens, args[1])
                desc = desc if desc is None or desc.kind in ("str", "opaque") else None
            elif tok.text == "registerTool" and len(args) >= 2 and _is(tokens, args[1][0], "{"):
                props = _props(tokens, args[1][0], closers.get(args[1][0], len(tokens)))
                desc = _value(tokens, props.get("description"))
            end = args[-2][1] if len(args) > 1 else args[0][1]
            sites.append(src.site(tok, _single(tokens, args[0]), desc, (args[0][0], end), list_entry=False))
        elif tok.kind == "punct" and tok.text == "{":
            props = _props(tokens, k, closers.get(k, len(tokens)))
            name = _single(tokens, props.get("name"))
            if name is not None and name.kind == "str" and ("description" in props or "inputSchema" in props):
                desc = _value(tokens, props.get("description"))
                sites.append(src.site(tok, name, desc, (k, closers.get(k, len(tokens))), list_entry=True))
    strings = [StringAt(rel, src.line_of(t.start), t.start, t.text) for t in tokens if t.kind == "str"]
    return sites, strings


class _JsSource:
    """One TS/JS file: its tokens, matching brackets (opener index -> closer index) and literal rewriting."""

    def __init__(self, rel: str, text: str) -> None:
        self.rel, self.text = rel, text
        self.tokens = tokenize(text)
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self.closers: dict[int, int] = {}
        stack: list[int] = []
        for k, tok in enumerate(self.tokens):
            if tok.kind != "punct":
                continue
            if tok.text in _PAIRS:
                stack.append(k)
            elif tok.text in ")]}" and stack and _PAIRS[self.tokens[stack[-1]].text] == tok.text:
                self.closers[stack.pop()] = k

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def rewrite(self, tok: Token, new: str) -> Outcome:
        quote = self.text[tok.start]
        form = render(new, quote, physical=quote == "`" and "\n" in self.text[tok.start:tok.end])
        if decode(form[1:-1], template=quote == "`") != new:
            return "the new text cannot be written exactly in this literal"
        return Edit(self.rel, tok.start, tok.end, form)

    def site(self, at: Token, name: Token | None, desc: Token | str | None, span: tuple[int, int],
             list_entry: bool) -> Site:
        """A Site for a declaration at token `at`; `span` (token indices) bounds the parameter search."""

        def describes(listed: str) -> bool:
            if desc is None:
                return listed == ""
            return isinstance(desc, Token) and desc.kind == "str" and desc.text == listed

        def describe(listed: str, new: str) -> Outcome:
            if desc is None:
                return "no description literal in this declaration to rewrite (adding one is new code)"
            if isinstance(desc, str):
                return desc
            if desc.kind != "str":
                return "the description is a template literal with ${...} (or an undecodable string); not rewritten"
            return self.rewrite(desc, new) if desc.text == listed else MISMATCH

        def rename(new: str) -> Outcome:
            return self.rewrite(name, new) if name is not None else "the name is not a literal here"

        def parameter(path: str, listed: str, new: str) -> Outcome:
            own = desc.start if isinstance(desc, Token) else -1
            hits = [t for k, t in enumerate(self.tokens[span[0]:span[1]], start=span[0])
                    if t.kind == "str" and t.text == listed and t.start != own and self._describes_param(k)]
            if len(hits) == 1:
                return self.rewrite(hits[0], new)
            if hits:
                return f"its description stands {len(hits)} times in this declaration; not rewritten"
            return "its description is not a .describe(\"...\") or description: \"...\" literal in this declaration"

        named = name.text if name is not None and name.kind == "str" else None
        return Site(self.rel, self.line_of(at.start), named, describes, describe, rename, parameter,
                    name_start=name.start if name is not None and named is not None else None, list_entry=list_entry)

    def _describes_param(self, k: int) -> bool:
        before = self.tokens[k - 2:k]
        if len(before) < 2:
            return False
        if before[1].text == "(" and before[0].kind == "word" and before[0].text == "describe":
            return _is(self.tokens, k + 1, ")")
        return before[1].text == ":" and before[0].kind in ("word", "str") and before[0].text == "description"


def _is(tokens: list[Token], k: int, punct: str) -> bool:
    return 0 <= k < len(tokens) and tokens[k].kind == "punct" and tokens[k].text == punct


def _items(tokens: list[Token], opener: int, closer: int) -> list[tuple[int, int]]:
    """Token ranges of the top-level comma-separated items between an opener and its closer."""
    items, depth, start = [], 0, opener + 1
    for k in range(opener + 1, closer):
        tok = tokens[k]
        if tok.kind != "punct":
            continue
        if tok.text in _PAIRS:
            depth += 1
        elif tok.text in ")]}":
            depth -= 1
        elif tok.text == "," and depth == 0:
            items.append((start, k))
            start = k + 1
    if start < closer:
        items.append((start, closer))
    return items


def _props(tokens: list[Token], opener: int, closer: int) -> dict[str, tuple[int, int]]:
    """`key: value` entries of an object literal: key -> the value's token range."""
    out = {}
    for a, b in _items(tokens, opener, closer):
        if b - a >= 3 and tokens[a].kind in ("word", "str") and _is(tokens, a + 1, ":"):
            out[tokens[a].text] = (a + 2, b)
    return out


def _single(tokens: list[Token], span: tuple[int, int] | None) -> Token | None:
    return tokens[span[0]] if span is not None and span[1] - span[0] == 1 else None


def _value(tokens: list[Token], span: tuple[int, int] | None) -> Token | str | None:
    """The literal token of a property value; a reason when the property holds an expression; None when absent."""
    if span is None:
        return None
    tok = _single(tokens, span)
    if tok is not None and tok.kind in ("str", "opaque"):
        return tok
    return "the description here is an expression (a variable or concatenation); not rewritten"


def tokenize(text: str) -> list[Token]:
    """Strings, template literals, words and one-character punctuation; comments, regex literals and
    numbers are skipped or kept as "other"."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("//", i) or text.startswith("/*", i):
            i = _comment_end(text, i)
        elif ch in "'\"`":
            end, has_expr = _template_end(text, i) if ch == "`" else (_quoted_end(text, i), False)
            tokens.append(_literal(text, i, end, has_expr))
            i = end
        elif ch == "/" and _regex_allowed(tokens) and (regex_end := _regex_end(text, i)):
            tokens.append(Token("other", i, regex_end, text[i:regex_end]))
            i = regex_end
        elif match := _WORD.match(text, i):
            tokens.append(Token("word", i, match.end(), match[0]))
            i = match.end()
        elif match := _NUMBER.match(text, i):
            tokens.append(Token("other", i, match.end(), match[0]))
            i = match.end()
        else:
            tokens.append(Token("punct", i, i + 1, ch))
            i += 1
    return tokens


def _literal(text: str, start: int, end: int, has_expr: bool) -> Token:
    quote = text[start]
    if has_expr or end - start < 2 or text[end - 1] != quote:
        return Token("opaque", start, end, "")
    try:
        return Token("str", start, end, decode(text[start + 1:end - 1], template=quote == "`"))
    except ValueError:
        return Token("opaque", start, end, "")


def _comment_end(text: str, i: int) -> int:
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    end = text.find("*/", i + 2)
    return len(text) if end < 0 else end + 2


def _quoted_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == text[i]:
            return j + 1
        elif text[j] in "\r\n":
            return j
        else:
            j += 1
    return len(text)


def _template_end(text: str, i: int) -> tuple[int, bool]:
    """End of a template literal starting at `i`, and whether it has `${...}` (skipped with nesting)."""
    j, has_expr = i + 1, False
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == "`":
            return j + 1, has_expr
        elif text.startswith("${", j):
            has_expr, depth, j = True, 1, j + 2
            while j < len(text) and depth:
                ch = text[j]
                if ch in "'\"`":
                    j = _template_end(text, j)[0] if ch == "`" else _quoted_end(text, j)
                    continue
                if text.startswith("//", j) or text.startswith("/*", j):
                    j = _comment_end(text, j)
                    continue
                depth += {"{": 1, "}": -1}.get(ch, 0)
                j += 1
        else:
            j += 1
    return len(text), has_expr


def _regex_allowed(tokens: list[Token]) -> bool:
    if not tokens:
        return True
    last = tokens[-1]
    return (last.kind == "punct" and last.text in _REGEX_AFTER_PUNCT) or (
        last.kind == "word" and last.text in _REGEX_AFTER_WORD)


def _regex_end(text: str, i: int) -> int | None:
    j, in_class = i + 1, False
    while j < len(text) and text[j] not in "\r\n":
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "/" and not in_class:
            j += 1
            while j < len(text) and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            return j
        in_class = (in_class and ch != "]") or ch == "["
        j += 1
    return None


def decode(body: str, template: bool = False) -> str:
    """The value of a JS string literal's body (between the quotes). Raises ValueError on a bad escape."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            if template and ch == "\r":  # template literals read CR LF and CR as LF
                i += 2 if body.startswith("\r\n", i) else 1
                out.append("\n")
                continue
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if not nxt or (nxt.isdigit() and (nxt != "0" or body[i + 2:i + 3].isdigit())):
            raise ValueError("dangling or legacy octal escape")
        if nxt in _SIMPLE or nxt == "0":
            out.append(_SIMPLE.get(nxt, "\0"))
            i += 2
        elif nxt in "xu":
            braced = nxt == "u" and body[i + 2:i + 3] == "{"
            digits = body[i + 3:body.find("}", i)] if braced else body[i + 2:i + (4 if nxt == "x" else 6)]
            if not re.fullmatch(r"[0-9A-Fa-f]+", digits) or (not braced and len(digits) != (2 if nxt == "x" else 4)):
                raise ValueError(f"bad \\{nxt} escape")
            out.append(chr(int(digits, 16)))
            i += len(digits) + (4 if braced else 2)
        elif nxt in "\r\n\u2028\u2029":  # line continuation
            i += 3 if body.startswith("\r\n", i + 1) else 2
        else:
            out.append(nxt)
            i += 2
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def render(new: str, quote: str, physical: bool = False) -> str:
    """A JS literal in `quote` whose value is `new`; a template keeps physical newlines when `physical`."""
    out = []
    for k, ch in enumerate(new):
        if ch in ("\\", quote):
            out.append("\\" + ch)
        elif quote == "`" and ch == "$" and new[k + 1:k + 2] == "{":
            out.append("\\$")
        elif ch == "\n":
            out.append("\n" if physical else "\\n")
        elif ch in "\r\t":
            out.append("\\r" if ch == "\r" else "\\t")
        elif not ch.isprintable():
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote

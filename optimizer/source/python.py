"""Python tool declarations for `source_patch`: where a tool's name, description and parameter
descriptions stand in a Python server, and how to rewrite them in place.

Recognised: functions under a `<x>.tool` / `<x>.tool(...)` decorator (name from `name="..."`, a first
positional string, or the function name; description from `description="..."` or the docstring;
parameter descriptions from `Field(description=...)` as a default or inside `Annotated[...]`, nested
through pydantic models defined in the same file) and `Tool(...)` / `types.Tool(...)` constructions
(`name=`, `description=`, `inputSchema=` dict literal). Spans come from `ast`, so only the literal (or
the insertion point) changes; everything else in the file stays byte for byte.
"""

from __future__ import annotations

import ast
import inspect
import re
import warnings
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import TypeGuard

from optimizer.source.sites import Edit, Outcome, Site, StringAt

Normaliser = Callable[[str], str]
MISMATCH = "the text in source is not what the server lists (built or changed at run time?); not rewritten"


def _dedent_313(doc: str) -> str:
    """What Python 3.13+ stores as `__doc__`: common indentation of later lines removed, first line lstripped."""
    lines = doc.expandtabs().split("\n")
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines[1:] if line.strip(" ")), default=0)
    return "\n".join([lines[0].lstrip(" ")] + [line[margin:] for line in lines[1:]])


AS_WRITTEN: tuple[Normaliser, ...] = (str,)
DOCSTRING: tuple[Normaliser, ...] = (str, inspect.cleandoc, _dedent_313)
"""How frameworks read a docstring: `fn.__doc__` as is (mcp's MCPServer on Python < 3.13), `inspect.getdoc`
(cleandoc), or Python 3.13's compile-time dedent."""


def scan_python(rel: str, text: str) -> tuple[list[Site], list[StringAt]]:
    """Tool declarations and all string literals of one Python file.

    Raises SyntaxError (or ValueError) for a file that does not parse; warnings about the file's own
    code (invalid escapes, …) are not raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text.removeprefix("\ufeff"), filename=rel)
    src = _PySource(rel, text)
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            counts[node.name] = counts.get(node.name, 0) + 1
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and counts[n.name] == 1}
    strings = [StringAt(rel, n.lineno, src.span(n)[0], n.value) for n in ast.walk(tree) if _is_str(n)]
    quotes = [text[s.start:s.start + 4].lstrip("rRuU")[:1] for s in strings]
    quote = "'" if quotes.count("'") > quotes.count('"') else '"'
    sites: list[Site] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorator = next((d for d in node.decorator_list if _callee(d) == "tool"
                              and isinstance(d.func if isinstance(d, ast.Call) else d, ast.Attribute)), None)
            if decorator is not None:
                sites.append(_function_site(src, node, decorator, classes, quote))
        elif isinstance(node, ast.Call) and _callee(node) == "Tool":
            sites.append(_tool_call_site(src, node))
    return sites, strings


class _PySource:
    """A Python file: character offsets from ast's (line, UTF-8 byte column) positions, literal rewriting."""

    def __init__(self, rel: str, text: str) -> None:
        self.rel, self.text = rel, text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.bom = 1 if text.startswith("\ufeff") else 0  # ast reads the file without it

    def offset(self, line: int, col: int) -> int:
        start = self.starts[line - 1] + (self.bom if line == 1 else 0)
        return start + len(self.text[start:start + col].encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int]:
        """Character offsets of a parsed node (parsed nodes always carry their end position)."""
        end_line, end_col = node.end_lineno, node.end_col_offset
        assert end_line is not None and end_col is not None
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_col)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def indent_before(self, offset: int) -> str | None:
        """The whitespace from the start of the line to `offset`, or None when code stands there."""
        before = self.text[self.starts[self.line_of(offset) - 1]:offset]
        return before if not before.strip() else None

    def rewrite(self, node: ast.expr, new: str, norms: tuple[Normaliser, ...], docstring: bool = False) -> Outcome:
        """Replace the string literal `node` so that every normaliser in `norms` reads `new` from it."""
        start, end = self.span(node)
        match = re.match(r"([A-Za-z]*)('''|\"\"\"|'|\")", self.text[start:end])
        if not match or set(match[1].lower()) & {"f", "b"}:
            return f"{self.rel}:{self.line_of(start)}: not a plain string literal"
        indent = self.indent_before(start) if docstring else None
        old = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
        for form in _forms(new, match[1], match[2], old, indent):
            if all(norm(ast.literal_eval(form)) == new for norm in norms):
                return Edit(self.rel, start, end, form)
        return ("the new text cannot stand in this docstring unchanged (frameworks strip a docstring's leading "
                "and trailing blank lines, indentation and tabs)")


def _forms(new: str, prefix: str, quote: str, old: str, indent: str | None) -> Iterator[str]:
    """Candidate literals for `new`, preferred first: a docstring's own layout (indented continuation
    lines, quotes on their own lines if they were), physical lines in other triple-quoted strings, then
    one line with escapes."""
    plain = _escape(new, quote, physical=False)
    prefix = prefix if plain == new else prefix.replace("r", "").replace("R", "")
    if len(quote) == 3 and indent is not None:
        lead = "\n" + indent if old.startswith("\n") else ""
        trail = "\n" + indent if "\n" in old and not old.rsplit("\n", 1)[1].strip() else ""
        lines = _escape(new, quote, physical=True).split("\n")
        body = "\n".join(lines[:1] + [indent + line if line else "" for line in lines[1:]])
        yield f"{prefix}{quote}{lead}{body}{trail}{quote}"
    elif len(quote) == 3 and "\n" in new:
        yield f"{prefix}{quote}{_escape(new, quote, physical=True)}{quote}"
    yield f"{prefix}{quote}{plain}{quote}"


def _escape(text: str, quote: str, physical: bool) -> str:
    """The body of a Python literal in `quote` whose value is `text` (newlines kept physical on request)."""
    out = []
    for k, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\n" if physical else "\\n")
        elif ch == quote[0] and (len(quote) == 1 or text[k + 1:k + 2] == ch or k == len(text) - 1):
            out.append("\\" + ch)
        elif not ch.isprintable():
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


class StrConstant(ast.Constant):
    """A string literal node (for the type checker: `_is_str` narrows to it)."""

    value: str


def _is_str(node: ast.AST | None) -> TypeGuard[StrConstant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _callee(node: ast.AST | None) -> str | None:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _function_site(src: _PySource, fn: ast.FunctionDef | ast.AsyncFunctionDef, decorator: ast.expr,
                   classes: dict[str, ast.ClassDef], quote: str) -> Site:
    call = decorator if isinstance(decorator, ast.Call) else None
    keywords = {k.arg: k.value for k in call.keywords if k.arg} if call else {}
    splat = call is not None and any(k.arg is None for k in call.keywords)
    name_node = keywords.get("name") or (call.args[0] if call and call.args and _is_str(call.args[0]) else None)
    desc_node = keywords.get("description")
    if isinstance(desc_node, ast.Constant) and desc_node.value is None:
        desc_node = None
    doc = fn.body[0].value if isinstance(fn.body[0], ast.Expr) and _is_str(fn.body[0].value) else None
    name: str | None = None if splat else fn.name
    if name_node is not None:
        name = name_node.value if _is_str(name_node) else None

    def describes(listed: str) -> bool:
        if desc_node is not None:
            return _is_str(desc_node) and desc_node.value == listed
        if doc is not None:
            return any(norm(doc.value) == listed for norm in DOCSTRING)
        return listed == "" and not splat

    def describe(listed: str, new: str) -> Outcome:
        if desc_node is not None:
            if not _is_str(desc_node):
                return "description= is an expression here; not rewritten"
            return src.rewrite(desc_node, new, AS_WRITTEN) if describes(listed) else MISMATCH
        if doc is not None:
            norms = tuple(norm for norm in DOCSTRING if norm(doc.value) == listed)
            return src.rewrite(doc, new, norms, docstring=True) if norms else MISMATCH
        if listed or splat:
            return MISMATCH
        return _add_docstring(src, fn, new)

    def rename(new: str) -> Outcome:
        if name_node is not None:
            return src.rewrite(name_node, new, AS_WRITTEN)
        return _add_name(src, decorator, f"name={quote}{new}{quote}")

    def parameter(path: str, listed: str, new: str) -> Outcome:
        node = _field_description(fn, path, classes)
        if isinstance(node, str):
            return node
        if not _is_str(node):
            return "its Field description is an expression; not rewritten"
        return src.rewrite(node, new, AS_WRITTEN) if node.value == listed else MISMATCH

    start = src.span(name_node)[0] if _is_str(name_node) else None
    return Site(src.rel, decorator.lineno, name, describes, describe, rename, parameter, name_start=start)


def _add_docstring(src: _PySource, fn: ast.FunctionDef | ast.AsyncFunctionDef, new: str) -> Outcome:
    """A new first statement: the docstring, at the body's indentation, on its own line."""
    start = src.span(fn.body[0])[0]
    indent = src.indent_before(start)
    if indent is None:
        return "the function body starts on the def line; no docstring added"
    form = f'"""{_escape(new, chr(34) * 3, physical=False)}"""'
    if not all(norm(ast.literal_eval(form)) == new for norm in DOCSTRING):
        return "the new text cannot stand in a docstring unchanged (leading or trailing blank lines or tabs)"
    return Edit(src.rel, start - len(indent), start - len(indent), indent + form + src.newline)


def _add_name(src: _PySource, decorator: ast.expr, keyword: str) -> Edit:
    """`name=...` added to the decorator call (`@x.tool` becomes `@x.tool(name=...)`); the function keeps its name."""
    if not isinstance(decorator, ast.Call):
        end = src.span(decorator)[1]
        return Edit(src.rel, end, end, f"({keyword})")
    if decorator.args:
        end = src.span(decorator.args[-1])[1]
        return Edit(src.rel, end, end, f", {keyword}")
    paren = src.text.index("(", src.span(decorator.func)[1]) + 1
    return Edit(src.rel, paren, paren, f"{keyword}, " if decorator.keywords else keyword)


Fields = dict[str, tuple[ast.expr | None, ast.Call | None]]
"""schema property name -> (annotation, the Field(...) call or None)"""


def _field_description(fn: ast.FunctionDef | ast.AsyncFunctionDef, path: str,
                       classes: dict[str, ast.ClassDef]) -> ast.expr | str:
    """The `description=` node of the Field behind a parameter path, or why there is none to rewrite."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    fields = _fields((arg.arg, arg.annotation, default) for arg, default in pairs)
    parts = path.split(".")
    for depth, part in enumerate(parts):
        if part not in fields:
            return f"{'.'.join(parts[:depth + 1])} is not declared in this signature or model"
        annotation, field = fields[part]
        if depth < len(parts) - 1:
            model = classes.get(_type_name(annotation) or "")
            if model is None:
                return f"the type of {part} is not a class defined in the same file"
            fields = _fields((s.target.id, s.annotation, s.value) for s in model.body
                             if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
    description = next((k.value for k in (field.keywords if field else []) if k.arg == "description"), None)
    if description is None:
        return "has no Field(description=...) in source to rewrite (adding one is new code)"
    return description


def _fields(entries: Iterator[tuple[str, ast.expr | None, ast.expr | None]]) -> Fields:
    out: Fields = {}
    for name, annotation, default in entries:
        field = default if isinstance(default, ast.Call) and _callee(default) == "Field" else None
        if (field is None and isinstance(annotation, ast.Subscript) and _callee(annotation.value) == "Annotated"
                and isinstance(annotation.slice, ast.Tuple)):
            field = next((m for m in annotation.slice.elts[1:] if isinstance(m, ast.Call) and _callee(m) == "Field"),
                         None)
        aliases = {k.arg: k.value.value for k in (field.keywords if field else []) if _is_str(k.value)}
        out[aliases.get("validation_alias") or aliases.get("alias") or name] = (annotation, field)
    return out


def _type_name(annotation: ast.expr | None) -> str | None:
    """The class a parameter's annotation names, through Annotated[...], Optional[...] and `X | None`."""
    node = annotation
    while True:
        if isinstance(node, ast.Subscript) and _callee(node.value) in ("Annotated", "Optional"):
            node = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
            if len(sides) != 1:
                return None
            node = sides[0]
        else:
            return node.value if _is_str(node) else _callee(node)


def _tool_call_site(src: _PySource, call: ast.Call) -> Site:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    name_node, desc_node = keywords.get("name"), keywords.get("description")
    schema = keywords.get("inputSchema", keywords.get("input_schema"))

    def describes(listed: str) -> bool:
        if desc_node is None:
            return listed == ""
        return _is_str(desc_node) and desc_node.value == listed

    def describe(listed: str, new: str) -> Outcome:
        if desc_node is None or not _is_str(desc_node):
            return "this Tool(...) has no description= string literal to rewrite"
        return src.rewrite(desc_node, new, AS_WRITTEN) if describes(listed) else MISMATCH

    def rename(new: str) -> Outcome:
        if name_node is None:
            return "this Tool(...) has no name= literal to rewrite"
        return src.rewrite(name_node, new, AS_WRITTEN)

    def parameter(path: str, listed: str, new: str) -> Outcome:
        node: ast.expr | None = schema
        for part in path.split("."):
            node = _dict_value(_dict_value(node, "properties"), part)
        description = _dict_value(node, "description")
        if not _is_str(description):
            return "no description string for it in an inputSchema dict literal here"
        return src.rewrite(description, new, AS_WRITTEN) if description.value == listed else MISMATCH

    name = name_node.value if _is_str(name_node) else None
    start = src.span(name_node)[0] if _is_str(name_node) else None
    return Site(src.rel, call.lineno, name, describes, describe, rename, parameter, name_start=start, list_entry=True)


def _dict_value(node: ast.expr | None, key: str) -> ast.expr | None:
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if _is_str(k) and k.value == key:
                return v
    return None

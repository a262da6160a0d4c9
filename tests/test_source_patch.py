"""source_patch: the patch applies with real `git apply`, the patched servers list exactly what `apply()`
promises for every located edit, and everything else is listed as unlocated instead of guessed."""

from __future__ import annotations

import ast
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, ToolEdit, apply
from optimizer.files.patch import load_definitions
from optimizer.source import NAMESPACE_NOTE, source_patch
from optimizer.source.typescript import decode, render, tokenize

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "source"
NO_FIELD = "has no description in source to rewrite"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _repo(src: Path, dest: Path) -> Path:
    """A copy of a server's source in a fresh git work tree (example task sets left out)."""
    if src.is_dir():
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("tasks", "__pycache__"))
    else:
        dest.mkdir(parents=True)
        shutil.copy(src, dest / src.name)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def _git_apply(repo: Path, patch: str) -> None:
    for args in (["--check"], []):
        proc = subprocess.run(["git", "apply", *args, "-"], cwd=repo, input=patch, text=True, capture_output=True)
        assert proc.returncode == 0, f"git apply {' '.join(args)} failed:\n{proc.stderr}\n{patch}"


def _dump(run_cli: Callable[..., subprocess.CompletedProcess[str]], server: Path, out: Path) -> Catalog:
    proc = run_cli("dump", "--server", f"{shlex.quote(sys.executable)} {shlex.quote(str(server))}", "--out-dir", out)
    assert proc.returncode == 0, proc.stderr
    return Catalog(server.parent.name, tuple(load_definitions(out)))


def _without_parameters(candidate: Candidate) -> Candidate:
    edits = {name: ToolEdit(name=e.name, description=e.description) for name, e in candidate.edits.items()}
    return Candidate(edits=edits, scheme=candidate.scheme, word=candidate.word)


def _tool(name: str, description: str, props: dict[str, dict[str, str]] | None = None) -> ToolDef:
    return ToolDef(name=name, description=description, input_schema={"type": "object", "properties": props or {}})


SUPPORT = Candidate(edits={
    "get_customer": ToolEdit(
        description="Look up one customer by email, phone like +1-555-0104 or id like C-1004 (never a name).\n"
                    "For billing, use get_account instead.",
        parameters={"query": "An email, a phone like +1-555-0104 or an id like C-1004."}),
    "get_account": ToolEdit(name="get_billing_account",
                            description="Billing account of a customer id like C-1004: plan, balance, next invoice."),
    "lookup_order": ToolEdit(
        description='Order details for an order number like "#10007" (not a path like C:\\orders).'),
    "escalate": ToolEdit(description="Escalate a ticket like T-507 to a supervisor; give a reason."),
    "refund_order": ToolEdit(description="Refund an order. amount is in CENTS: $25.00 is 2500.",
                             parameters={"amount": "Amount in cents, e.g. 2500 for $25.00."}),
    "check_refund": ToolEdit(name="check_refund_status"),
})

WORKSPACE = Candidate(edits={
    "search": ToolEdit(description="Search wiki documents by words in their title or text; for tracker issues "
                                   "use query instead."),
    "query": ToolEdit(name="search_issues", parameters={"q": "Words to find in issue titles and text."}),
    "list": ToolEdit(name="list_pages", description="List the wiki's folders, or the pages under one folder."),
    "get_item": ToolEdit(description="Get one tracker issue by its key, e.g. ENG-142 (upper case)."),
    "availability": ToolEdit(description='Free and busy times of one person on one day.\n'
                                         'user is an e-mail like "priya@acme.dev"; value is an ISO date.',
                             parameters={"value": "A date, YYYY-MM-DD."}),
})


@pytest.mark.parametrize(("example", "candidate"), [("support", SUPPORT), ("workspace", WORKSPACE)])
@pytest.mark.slow
def test_example_server_patched_lists_what_apply_promises(
    tmp_path: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]], example: str, candidate: Candidate,
) -> None:
    repo = _repo(ROOT / "examples" / example, tmp_path / example)
    catalog = _dump(run_cli, repo / "server.py", tmp_path / "before")

    patch = source_patch(repo, catalog, candidate)

    wanted = sorted(n for n, e in candidate.edits.items() if e.name or e.description)
    assert sorted(patch.changed) == wanted
    params = [f"{name} parameter {path}" for name, e in candidate.edits.items() for path in e.parameters]
    assert len(patch.unlocated) == len(params)
    for line, label in zip(sorted(patch.unlocated), sorted(params), strict=True):
        assert line.startswith(f"{label} (server.py:") and NO_FIELD in line
    _git_apply(repo, patch.text)
    after = _dump(run_cli, repo / "server.py", tmp_path / "after")
    expected = {t.name: t.canonical() for t in apply(catalog, _without_parameters(candidate)).tools}
    assert {t.name: t.canonical() for t in after.tools} == expected
    if example == "support":  # renames add name= and keep the function; a missing docstring is added in place
        text = (repo / "server.py").read_text(encoding="utf-8")
        assert '@server.tool(name="check_refund_status", structured_output=False)\ndef check_refund(id: str)' in text
        assert 'def escalate(id: str, reason: str = "") -> str:\n    """Escalate a ticket like T-507' in text
        assert '"""Get account"""' not in text and "def get_account(id: str)" in text


def test_fields_server_rewrites_field_descriptions_and_serves_them(
    tmp_path: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    repo = _repo(FIXTURES / "python" / "fields_server.py", tmp_path / "fields")
    catalog = _dump(run_cli, repo / "fields_server.py", tmp_path / "before")
    candidate = Candidate(edits={
        "find_rooms": ToolEdit(name="search_rooms", description="Find free rooms; it's \"fast\".\nNot C:\\rooms.",
                               parameters={"building": "Building code like 'B1'",
                                           "floor": "Floor; 0 is the ground floor", "seats": "How many seats"}),
        "book": ToolEdit(name="book_room", description="Book a room for one hour.\n\nReturns the booking id."),
        "cancel": ToolEdit(name="cancel_booking", description="Cancel a booking by its id."),
    })

    patch = source_patch(repo, catalog, candidate)

    assert sorted(patch.changed) == ["book", "cancel", "find_rooms"]
    assert len(patch.unlocated) == 1 and patch.unlocated[0].startswith("find_rooms parameter seats")
    _git_apply(repo, patch.text)
    text = (repo / "fields_server.py").read_text(encoding="utf-8")
    assert r"""@server.tool(name="search_rooms", description='Find free rooms; it\'s "fast".\nNot C:\\rooms.'""" in text
    assert "floor: int = Field(0, description='Floor; 0 is the ground floor')" in text
    assert "def rooms(" in text and "def book(room: str)" in text
    after = _dump(run_cli, repo / "fields_server.py", tmp_path / "after")
    located = Candidate(edits={**candidate.edits, "find_rooms": ToolEdit(
        name="search_rooms", description=candidate.edits["find_rooms"].description,
        parameters={k: v for k, v in candidate.edits["find_rooms"].parameters.items() if k != "seats"})})
    expected = {t.name: t.canonical() for t in apply(catalog, located).tools}
    assert {t.name: t.canonical() for t in after.tools} == expected


def test_cleaned_docstring_keeps_its_layout(tmp_path: Path) -> None:
    """A framework that lists `inspect.cleandoc(__doc__)` gets an indented multi-line docstring back."""
    repo = _repo(FIXTURES / "python" / "fields_server.py", tmp_path / "fields")
    catalog = Catalog("fields", (_tool("book", "Book a room.\n\nBooks it for an hour."),))
    patch = source_patch(repo, catalog, Candidate(edits={
        "book": ToolEdit(description="Book a room for one hour.\n\nReturns the booking id.")}))
    assert patch.changed == ["book"] and patch.unlocated == []
    _git_apply(repo, patch.text)
    text = (repo / "fields_server.py").read_text(encoding="utf-8")
    assert '    """\n    Book a room for one hour.\n\n    Returns the booking id.\n    """\n' in text


NESTED = '''from typing import Annotated

from pydantic import BaseModel, Field


class Window(BaseModel):
    start: str = Field(description="First day")
    end: Annotated[str, Field(alias="until", description='Last day')]


@mcp.tool
def rooms(window: Window | None = None, q: str = Field("", validation_alias="query", description="Words")) -> str:
    return ""
'''


def test_nested_model_fields_aliases_and_a_bare_decorator(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(NESTED, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    window = {"type": "object", "properties": {"start": {"type": "string", "description": "First day"},
                                               "until": {"type": "string", "description": "Last day"}}}
    query = {"type": "string", "description": "Words"}
    catalog = Catalog("x", (_tool("rooms", "", {"window": window, "query": query}),))
    candidate = Candidate(edits={"rooms": ToolEdit(name="find_rooms", parameters={
        "window.start": "First day, YYYY-MM-DD", "window.until": "Last day, inclusive", "query": "Words to match"})})
    patch = source_patch(tmp_path, catalog, candidate)
    assert patch.changed == ["rooms"] and patch.unlocated == []
    _git_apply(tmp_path, patch.text)
    text = (tmp_path / "server.py").read_text(encoding="utf-8")
    for line in ('start: str = Field(description="First day, YYYY-MM-DD")',
                 "end: Annotated[str, Field(alias=\"until\", description='Last day, inclusive')]",
                 '@mcp.tool(name="find_rooms")\ndef rooms(', 'validation_alias="query", description="Words to match")'):
        assert line in text


TS_CATALOG = Catalog("weather", (
    _tool("get_weather", "Get weather", {"city": {"type": "string", "description": "City name"},
                                         "units": {"type": "string"}}),
    _tool("get_forecast", "Get the forecast", {"days": {"type": "integer", "description": "Number of days"}}),
    _tool("list_alerts", "List alerts"),
    _tool("ping", "Ping api.example.com"),
    _tool("echo", "Echo text", {"text": {"type": "string", "description": "Text to echo"}}),
))
TS_CANDIDATE = Candidate(scheme="prefix", edits={
    "get_weather": ToolEdit(name="current_weather", description='Current weather; "now" only.\nNot C:\\tmp.',
                            parameters={"city": 'City, e.g. "Paris"', "units": "c or f"}),
    "get_forecast": ToolEdit(description="Forecast; it's daily.", parameters={"days": "Days ahead, 1-7"}),
    "list_alerts": ToolEdit(description="List alerts `now`, not ${later}.\nSecond line."),
    "ping": ToolEdit(description="Ping the host."),
    "echo": ToolEdit(name="echo_text", description="Echo the text back.", parameters={"text": "The text to echo."}),
})


def test_typescript_patch_keeps_quotes_and_lists_what_it_cannot_place(tmp_path: Path) -> None:
    repo = _repo(FIXTURES / "ts", tmp_path / "ts")
    patch = source_patch(repo, TS_CATALOG, TS_CANDIDATE)

    assert patch.changed == ["get_weather", "get_forecast", "list_alerts", "echo"]
    assert patch.unlocated[0] == NAMESPACE_NOTE and patch.unlocated.count(NAMESPACE_NOTE) == 1
    reasons = dict(line.split(": ", 1) for line in patch.unlocated[1:])
    assert set(reasons) == {"get_weather parameter units (src/server.ts:11)", "ping description (src/server.ts:30)",
                            "echo name (src/server.ts:34)"}
    assert "${" in reasons["ping description (src/server.ts:30)"]
    assert "src/server.ts:47" in reasons["echo name (src/server.ts:34)"]  # the switch's case "echo"
    _git_apply(repo, patch.text)
    text = (repo / "src" / "server.ts").read_text(encoding="utf-8")
    for line in ('  "current_weather",', '  "Current weather; \\"now\\" only.\\nNot C:\\\\tmp.",',
                 '.describe("City, e.g. \\"Paris\\""), units: z.enum(["c", "f"]).optional() },',
                 "    description: 'Forecast; it\\'s daily.',", ".int().describe('Days ahead, 1-7') },",
                 "server.tool(`list_alerts`, `List alerts \\`now\\`, not \\${later}.\\nSecond line.`, {},",
                 '    name: "echo",', '    description: "Echo the text back.",',
                 'description: "The text to echo." } },', 'server.tool("ping", `Ping ${HOST}`, {},',
                 '// server.tool("get_weather", "Get weather") in a comment is not a declaration.'):
        assert line in text
    wanted = [TS_CANDIDATE.edits[n].description for n in ("get_weather", "get_forecast", "list_alerts")]
    literals = {t.text: text[t.start:t.end] for t in tokenize(text) if t.kind == "str"}
    assert all(w in literals for w in wanted)
    evaluated = _node_eval([literals[w] for w in wanted])
    assert evaluated is None or evaluated == wanted


def _node_eval(literals: list[str]) -> list[str] | None:
    """What node makes of JS literals (None when node is not installed)."""
    node = shutil.which("node")
    if node is None:
        return None
    script = f"process.stdout.write(JSON.stringify([{', '.join(literals)}]))"
    proc = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)


def test_python_tool_list_rewrites_literals_but_not_a_dispatched_name(tmp_path: Path) -> None:
    repo = _repo(FIXTURES / "python" / "lowlevel_server.py", tmp_path / "low")
    catalog = Catalog("low", (
        _tool("add", "Add numbers", {"a": {"type": "number", "description": "First number"}, "b": {"type": "number"}}),
        _tool("negate", "Negate a number"),
    ))
    candidate = Candidate(edits={
        "add": ToolEdit(name="sum", description="Add two numbers a and b.",
                        parameters={"a": "The first", "b": "Second"}),
        "negate": ToolEdit(name="flip", description="Negate x; it's -x."),
    })
    patch = source_patch(repo, catalog, candidate)
    assert patch.changed == ["add", "negate"]
    assert [line.split(" (")[0] for line in patch.unlocated] == ["add name", "add parameter b"]
    assert "lowlevel_server.py:19" in patch.unlocated[0]  # `if name == "add":`
    _git_apply(repo, patch.text)
    text = (repo / "lowlevel_server.py").read_text(encoding="utf-8")
    assert "types.Tool(name='flip', description='Negate x; it\\'s -x.', inputSchema" in text
    assert 'name="add",\n        description="Add two numbers a and b.",' in text
    assert '{"a": {"type": "number", "description": "The first"}, "b": {"type": "number"}}' in text


TRICKY = ['He said "hi" and it\'s fine', "back\\slash and \\n (not a newline)", "line one\nline two",
          'ends with a quote"', "ends with a quote'", 'triple """ and \'\'\' inside', "unicode: é — ✓ 日本",
          "tab\there", "zero\u200bwidth"]
ESCAPES = '''from mcp.server.mcpserver import MCPServer

server = MCPServer("esc")


@server.tool(description='single')
def one() -> str:
    return ""


@server.tool(description="double")
def two() -> str:
    return ""


@server.tool(description=r"raw \\d")
def three() -> str:
    return ""


@server.tool()
def four() -> str:
    """doc four"""
    return ""


@server.tool()
def five() -> str:
    \'\'\'doc five\'\'\'
    return ""
'''


@pytest.mark.parametrize("new", TRICKY)
def test_python_literals_round_trip(tmp_path: Path, new: str) -> None:
    repo = tmp_path / "esc"
    repo.mkdir()
    (repo / "server.py").write_text(ESCAPES, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    listed = {"one": "single", "two": "double", "three": "raw \\d", "four": "doc four", "five": "doc five"}
    catalog = Catalog("esc", tuple(_tool(name, text) for name, text in listed.items()))
    patch = source_patch(repo, catalog, Candidate(edits={name: ToolEdit(description=new) for name in listed}))

    docstrings_ok = "\t" not in new  # a docstring reader expands tabs: never written into a docstring
    assert patch.changed == (list(listed) if docstrings_ok else ["one", "two", "three"])
    assert len(patch.unlocated) == (0 if docstrings_ok else 2)
    _git_apply(repo, patch.text)
    tree = ast.parse((repo / "server.py").read_text(encoding="utf-8"))
    values = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            keywords = {k.arg: k.value for k in fn.decorator_list[0].keywords}  # type: ignore[attr-defined]
            node = keywords.get("description") or fn.body[0].value  # type: ignore[attr-defined]
            values[fn.name] = ast.literal_eval(ast.get_source_segment(
                (repo / "server.py").read_text(encoding="utf-8"), node))
    assert {k: v for k, v in values.items() if v == new} == {k: new for k in patch.changed}


@pytest.mark.parametrize("quote", ["'", '"', "`"])
@pytest.mark.parametrize("new", TRICKY + ["${x} and $ {y}", "\r\n and \x00"])
def test_js_literals_round_trip(quote: str, new: str) -> None:
    literal = render(new, quote)
    assert "\n" not in literal and decode(literal[1:-1], template=quote == "`") == new
    assert [t.kind for t in tokenize(f"f({literal});")] == ["word", "punct", "str", "punct", "punct"]


def test_js_literals_agree_with_node() -> None:
    literals = [render(new, quote) for new in TRICKY for quote in "'\"`"]
    evaluated = _node_eval(literals)
    if evaluated is None:
        pytest.skip("node is not installed")
    assert evaluated == [new for new in TRICKY for _ in range(3)]


def test_duplicate_declarations_are_ambiguous_not_guessed(tmp_path: Path) -> None:
    repo = _repo(ROOT / "examples" / "support", tmp_path / "support")
    shutil.copy(repo / "server.py", repo / "server_copy.py")
    catalog = Catalog("support", (_tool("get_customer", "Get customer info"), _tool("escalate", "")))
    candidate = Candidate(edits={"get_customer": ToolEdit(name="find_customer", description="Find a customer."),
                                 "escalate": ToolEdit(description="Escalate a ticket.")})
    patch = source_patch(repo, catalog, candidate)
    assert patch.text == "" and patch.changed == []
    assert len(patch.unlocated) == 3
    for line in patch.unlocated:
        assert "more than one place" in line and "server.py:" in line and "server_copy.py:" in line


def test_anonymous_declarations_with_one_description_are_ambiguous(tmp_path: Path) -> None:
    for name in ("a.ts", "b.ts"):
        (tmp_path / name).write_text('server.tool(TOOL_NAME, "Shared words", {}, async () => ({ content: [] }));\n',
                                     encoding="utf-8")
    catalog = Catalog("x", (_tool("lookup", "Shared words"), _tool("other", "Other words")))
    patch = source_patch(tmp_path, catalog, Candidate(edits={"lookup": ToolEdit(description="New words."),
                                                             "other": ToolEdit(description="More words.")}))
    assert patch.text == "" and patch.changed == []
    assert patch.unlocated[0].startswith("lookup description: its description stands in more than one place (a.ts:1")
    assert patch.unlocated[1].startswith("other description: not found in source")


def test_crlf_file_without_final_newline(tmp_path: Path) -> None:
    repo = tmp_path / "crlf"
    repo.mkdir()
    source = "from x import server\r\n\r\n\r\n@server.tool\r\ndef ping() -> str:\r\n    return 'pong'"
    (repo / "server.py").write_bytes(source.encode("utf-8"))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    patch = source_patch(repo, Catalog("x", (_tool("ping", ""),)),
                         Candidate(edits={"ping": ToolEdit(name="ping_host", description="Ping the host.")}))
    assert patch.changed == ["ping"] and patch.unlocated == []
    _git_apply(repo, patch.text)
    assert (repo / "server.py").read_bytes().decode("utf-8") == (
        "from x import server\r\n\r\n\r\n@server.tool(name='ping_host')\r\ndef ping() -> str:\r\n"
        '    """Ping the host."""\r\n    return \'pong\'')


def test_nothing_to_place_and_bad_directory(tmp_path: Path) -> None:
    catalog = Catalog("x", (_tool("ping", "Ping"),))
    assert source_patch(tmp_path, catalog, Candidate()).text == ""
    with pytest.raises(DefinitionError, match="not a directory"):
        source_patch(tmp_path / "missing", catalog, Candidate())

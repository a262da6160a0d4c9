"""Context servers and client naming: the `mcpServers` file as clients write it, the tools the agent sees beside
the server under test, which context calls run, how a client names tools, and `eval` alone vs in context."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import small_tasks

from optimizer.definitions import Candidate, Catalog, ToolDef, apply
from optimizer.run.context import Context, ContextError, ContextServer, client_names, context_specs, open_context
from optimizer.servers import ServerSpec

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
WORKSPACE = f"{sys.executable} {ROOT / 'examples/workspace/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
Cli = Callable[..., Any]


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- the mcpServers file ---------------------------------------------------------------------------------------------

def test_reads_stdio_and_http_entries_in_the_order_context_names_them(tmp_path: Path) -> None:
    config = write(tmp_path, json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-files", "/tmp"], "env": {"TOKEN": "t0k3n"}},
        "tickets": {"type": "http", "url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer x"}},
    }}, indent=2))
    specs = context_specs(config, ["tickets", "files"], [f"{sys.executable} other/server.py"])
    assert [name for name, _ in specs] == ["tickets", "files", "other"]
    tickets, files = specs[0][1], specs[1][1]
    assert tickets.url == "https://tickets.example/mcp" and tickets.headers == {"Authorization": "Bearer x"}
    assert files.argv == ("npx", "-y", "server-files", "/tmp") and files.env == {"TOKEN": "t0k3n"}


@pytest.mark.parametrize(("text", "names", "message"), [
    ('{"mcpServers": {\n  "a": {"command": "x",}\n}}', ["a"], "mcp.json:2:"),
    ('{"servers": {}}', [], "mcpServers"),
    ('{"mcpServers": {\n\n  "a": {"args": ["x"]}\n}}', ["a"], "mcp.json:3: server 'a': needs \"command\""),
    ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', ["a"], "\"args\" must be a list"),
    ('{"mcpServers": {"a": {"command": "x"}}}', ["b"], "no server named 'b' under mcpServers (it has: a)"),
])
def test_a_bad_file_or_name_is_an_error_with_the_file_and_line(tmp_path: Path, text: str, names: list[str],
                                                                message: str) -> None:
    with pytest.raises(ContextError, match=None) as caught:
        context_specs(write(tmp_path, text), names, [])
    assert message in str(caught.value)


def test_context_names_need_the_file_and_two_servers_need_two_names() -> None:
    with pytest.raises(ContextError, match="--mcp-config"):
        context_specs(None, ["workspace"], [])
    with pytest.raises(ContextError, match="both named 'server'"):
        context_specs(None, [], ["python a/server/main.py", "python b/server/main.py"])


# --- what the agent sees, and which calls run ---------------------------------------------------------------------

def test_context_tools_follow_the_targets_unchanged_and_only_read_only_ones_run() -> None:
    async def scenario() -> None:
        specs = [("workspace", ServerSpec.parse(WORKSPACE))]
        async with open_context(specs, log_dir=Path("/tmp"), tool_timeout=30, connect_timeout=60) as context:
            server = context.servers[0]
            target = Catalog("support", (ToolDef("get_customer", "Look up a customer."),
                                         ToolDef("search", "Our own search.")))
            exposed, notes = context.expose(apply(target, Candidate()))
            names = [t.name for t in exposed.tools]
            assert names[:2] == ["get_customer", "search"]
            assert names[2:] == [t.name for t in server.catalog.tools if t.name != "search"]
            assert exposed.original("get_item") == "workspace:get_item"
            assert notes and "search is left out" in notes[0]
            workspace_tools = {t.name: t for t in server.catalog.tools}
            assert exposed.tools[names.index("get_item")] == workspace_tools["get_item"]  # unchanged

            async def target_call(name: str, arguments: dict) -> object:
                return ("target", name, arguments)

            route = context.call(target_call)  # type: ignore[arg-type]
            assert await route("get_customer", {"email": "a@b.c"}) == ("target", "get_customer", {"email": "a@b.c"})
            read = await route("workspace:get_item", {"id": "ENG-118"})
            assert server.read_only("get_item") and not read.is_error and "ENG-118" in read.text
            write_tool = next(t.name for t in server.catalog.tools if not server.read_only(t.name))
            refused = await route(f"workspace:{write_tool}", {})
            assert refused.is_error and "not available in this evaluation" in refused.text

    asyncio.run(scenario())


def test_claude_code_names_every_tool_after_its_server() -> None:
    target = Catalog("support", (ToolDef("get_customer", "Look up a customer."),))
    context = Context([ContextServer("work space", None, Catalog("ws", (ToolDef("search", "Find."),)))])  # type: ignore[arg-type]
    exposed, _ = context.expose(apply(target, Candidate()))
    shown = client_names(exposed, "claude-code", "support")
    assert [t.name for t in shown.tools] == ["mcp__support__get_customer", "mcp__work_space__search"]
    assert shown.original("mcp__work_space__search") == "work space:search"
    assert client_names(exposed, "plain", "support") is exposed


def test_claude_code_naming_shows_tools_of_the_same_name_from_every_server() -> None:
    target = Catalog("support", (ToolDef("search", "Our own search."),))
    context = Context([ContextServer(name, None, Catalog(name, (ToolDef("search", f"Find in {name}."),)))  # type: ignore[arg-type]
                       for name in ("docs", "wiki")])
    shown, notes = context.expose(apply(target, Candidate()), "claude-code", "support")
    assert [t.name for t in shown.tools] == ["mcp__support__search", "mcp__docs__search", "mcp__wiki__search"]
    assert [shown.original(t.name) for t in shown.tools] == ["search", "docs:search", "wiki:search"]
    assert notes == []
    plain, notes = context.expose(apply(target, Candidate()))
    assert [t.name for t in plain.tools] == ["search"] and len(notes) == 2


# --- eval in context ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_eval_beside_another_server_reports_accuracy_alone_and_the_cross_server_confusions(
    run_cli: Cli, tmp_path: Path
) -> None:
    result = run_cli("eval", "--server", SUPPORT, "--tasks", TASKS, "--context-server", WORKSPACE, "--models",
                     "sim:lexical", "--server-instances", "1", "--runs-dir", str(tmp_path), "--run-id", "beside",
                     "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["context"] == ["workspace"] and report["client_naming"] == "plain"
    assert report["episodes"]["run"] == 2 * 66  # every task, in context and alone
    assert set(report["alone"]["results"]) == set(report["results"]) == {"sim:lexical"}
    assert report["cross_server"], "no episode went to a workspace tool"
    for row in report["cross_server"]:
        assert row["chosen"].startswith("workspace:") and ":" not in row["expected"] and row["count"] >= 1
        chosen_in_matrix = report["confusion"][row["model"]][row["expected"]][row["chosen"]]
        assert chosen_in_matrix == row["count"]
    text = run_cli("eval", "--resume", "beside", "--runs-dir", str(tmp_path))
    assert text.returncode == 0, text.stderr[-3000:]
    assert "beside workspace" in text.stdout and "Cross-server confusions" in text.stdout
    assert "alone" in text.stdout and "change" in text.stdout


def test_a_context_server_that_does_not_start_is_a_clear_error(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("eval", "--server", SUPPORT, "--tasks", TASKS, "--context-server", "no-such-program-xyz",
                     "--offline", "--server-instances", "1", "--runs-dir", str(tmp_path))
    assert result.returncode == 2
    assert "context server 'no-such-program-xyz'" in result.stderr


@pytest.mark.slow
def test_optimize_in_context_chooses_there_and_reports_the_schemes_and_the_winner_alone(
    run_cli: Cli, tmp_path: Path
) -> None:
    result = run_cli("--server", SUPPORT, "--tasks", small_tasks(tmp_path), "--context-server", WORKSPACE,
                     "--offline", "--models", "sim:lexical,sim:skim", "--rounds", "1", "--trials", "6",
                     "--server-instances", "1", "--heldout-candidates", "1", "--runs-dir", str(tmp_path),
                     "--run-id", "ctx", "--json", script="optimize")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["context"] == ["workspace"] and summary["client_naming"] == "plain"
    (round_one,) = summary["rounds"]
    assert set(round_one["scheme_accuracy"]) == set(round_one["schemes"]) and round_one["scheme_accuracy"]
    assert max(round_one["scheme_accuracy"].values()) == round_one["best_accuracy"]
    for side in ("baseline", "winner"):
        alone = summary["alone"][side]
        heldout = summary["splits"]["heldout"]
        assert set(alone) == {"sim:lexical", "sim:skim"} and all(row["n"] == heldout for row in alone.values())
    report = (tmp_path / "ctx" / "report.md").read_text(encoding="utf-8")
    assert "## In context" in report and "beside workspace" in report and "winner alone" in report


@pytest.mark.slow
def test_regress_in_context_says_so(run_cli: Cli, tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(ROOT / "examples/workspace/server.py")]}
    result = run_cli("regress", "--server", SUPPORT, "--tasks", TASKS, "--models", "sim:lexical", "--candidate",
                     str(ROOT / "examples/support/reference-overlay.json"), "--mcp-config",
                     write(tmp_path, json.dumps({"mcpServers": {"ws": entry}})), "--context", "ws",
                     "--client-naming", "claude-code", "--server-instances", "1",
                     "--runs-dir", str(tmp_path), "--json")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["context"] == ["ws"] and report["client_naming"] == "claude-code"
    transcript = next((tmp_path / report["run_id"] / "transcripts").glob("*.jsonl")).read_text(encoding="utf-8")
    assert '"name": "mcp__support__' in transcript or '"name": "mcp__ws__' in transcript


def test_credentials_in_an_entrys_env_are_secrets_to_scrub_and_other_values_are_not(tmp_path: Path) -> None:
    config = write(tmp_path, json.dumps({"mcpServers": {"gh": {"command": "gh-mcp", "env": {
        "GITHUB_TOKEN": "ghx-not-a-real-token-123", "LOG_LEVEL": "debug"}}}}))
    ((_, spec),) = context_specs(config, ["gh"], [])
    assert "ghx-not-a-real-token-123" in spec.secrets and "debug" not in spec.secrets


@pytest.mark.slow
def test_an_http_entry_with_headers_stands_beside_over_streamable_http(
    run_cli: Cli, tmp_path: Path, background: Callable[..., Any], free_port: Callable[[], int]
) -> None:
    port = free_port()
    entry = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Team": "support"}}
    config = write(tmp_path, json.dumps({"mcpServers": {"ws": entry}}))
    with background([sys.executable, str(ROOT / "examples/workspace/server.py"), "--http", str(port)], port=port):
        result = run_cli("eval", "--server", SUPPORT, "--tasks", TASKS, "--models", "sim:lexical", "--mcp-config",
                         config, "--context", "ws", "--server-instances", "1", "--runs-dir", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["context"] == ["ws"] and any(r["chosen"].startswith("ws:") for r in report["cross_server"])

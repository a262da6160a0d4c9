"""Why episodes failed: counts per failure mode, and a sentence only for the modes behind half the failures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from optimizer.files.store import StoredEpisode
from optimizer.optimize.diagnosis import failure_modes
from optimizer.optimize.report_md import _diagnosis_section


def call(tool: str, arguments: dict[str, Any], result: str, error: bool) -> dict[str, Any]:
    return {"name": tool, "original": tool, "arguments": arguments, "result": result, "is_error": error}


def episode(n: int, passed: bool, expected: list[str], *calls: dict[str, Any]) -> StoredEpisode:
    return StoredEpisode(f"k{n}", "sim:lexical", f"t{n}", "train", "c", 0, "completed", passed,
                         {"expected_tools": expected, "calls": list(calls)})


BAD_PATH = call("read_file", {"path": "notes.txt", "encoding": "utf-8"},
                "Error: path must be absolute, got 'notes.txt'", True)


def test_argument_errors_on_one_parameter_dominate_and_say_so() -> None:
    eps = [episode(i, False, ["read_file"], BAD_PATH) for i in range(3)]
    eps += [episode(3, False, ["list_dir"], call("read_file", {"path": "/a"}, "contents", False)),
            episode(4, True, ["read_file"], call("read_file", {"path": "/b"}, "contents", False))]
    modes = failure_modes(eps)
    assert (modes.episodes, modes.failed, modes.all_errors, modes.missed_tool) == (5, 4, 3, 1)
    assert modes.argument_errors == {"read_file.path": 3} and modes.never_called == ("list_dir",)
    assert modes.sentences() == ["every tool call returned an error in 3 of 4 failed episodes",
                                 "3 of 4 failed episodes got an error about the `path` argument of read_file",
                                 "every expected tool was called in 3 of 4 failed episodes: they failed on the "
                                 "arguments or the answer, not on the choice of tool"]


def test_an_error_naming_several_arguments_is_not_pinned_on_one() -> None:
    both = call("search", {"query": "x", "limit": 5}, "Error: query and limit conflict", True)
    assert failure_modes([episode(0, False, ["search"], both)]).argument_errors == {}


def test_no_tool_called_and_nothing_dominant() -> None:
    silent = [episode(i, False, ["get_time"]) for i in range(2)]
    assert failure_modes(silent).sentences()[0] == "no tool was called in 2 of 2 failed episodes"
    spread = [episode(0, False, ["c"], call("c", {}, "fine", False)),
              episode(1, False, ["b"], call("c", {}, "ok", False)), episode(2, False, ["a"]),
              episode(3, False, ["read_file"], BAD_PATH),
              episode(4, False, [], call("c", {}, "fine", False))]  # expects no tool: neither missed nor right
    modes = failure_modes(spread)
    assert (modes.failed, modes.no_call, modes.missed_tool, modes.right_tools, modes.all_errors) == (5, 1, 2, 2, 1)
    assert modes.sentences() == []


def test_failures_with_every_expected_tool_called_say_the_choice_was_right() -> None:
    wrong_answers = [episode(i, False, ["lookup", "refund"], call("lookup", {"id": "1"}, "found", False),
                             call("refund", {"amount": 5}, "refunded", False)) for i in range(3)]
    modes = failure_modes([*wrong_answers, episode(3, False, ["lookup"], call("refund", {}, "ok", False))])
    assert (modes.failed, modes.right_tools, modes.missed_tool) == (4, 3, 1)
    assert modes.sentences() == ["every expected tool was called in 3 of 4 failed episodes: they failed on the "
                                 "arguments or the answer, not on the choice of tool"]
    assert failure_modes([episode(0, True, ["a"], call("a", {}, "ok", False))]).sentences() == []


def test_the_report_section_appears_only_with_something_to_say() -> None:
    quiet = {"sentences": []}
    assert _diagnosis_section({"diagnosis": {"train_baseline": quiet, "heldout_winner": quiet}}) == []
    loud = failure_modes([episode(0, False, ["read_file"], BAD_PATH)]).to_json()
    section = _diagnosis_section({"diagnosis": {"train_baseline": quiet, "heldout_winner": loud}})
    assert section[0] == "## Why episodes failed"
    assert "- Winner on held-out: every tool call returned an error in 1 of 1 failed episodes." in section


SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("files", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def read_file(path: str) -> str:
    """Read a file."""
    raise ToolError(f"path must be an absolute path inside /srv, got {path!r}")


server.run()
'''


@pytest.mark.slow
def test_a_run_that_improves_nothing_says_why(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    tasks = [{"id": f"t{i}", "prompt": f"What does the file notes{i}.txt say?", "expect": {"answer": "hello",
              "tools": ["read_file"]}, "split": "heldout" if i % 3 == 0 else "train"} for i in range(9)]
    (tmp_path / "tasks.yaml").write_text(yaml.safe_dump(tasks), encoding="utf-8")
    result = run_cli("--server", f"{sys.executable} {tmp_path / 'server.py'}", "--tasks", str(tmp_path / "tasks.yaml"),
                     "--offline", "--models", "sim:lexical,sim:skim", "--rounds", "1", "--trials", "2",
                     script="optimize")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "why: every tool call returned an error in 6 of 6 failed episodes" in result.stdout
    assert "got an error about the `path` argument of read_file" in result.stdout

"""Server failures: start-up errors a user can act on, crashes and servers that stop answering, which restart the
server and count as infrastructure faults, slow tools that count as the model's failure, and `optimizer dump`."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from optimizer.servers.connections import (
    PING_DEADLINE,
    CallOutcome,
    Connection,
    ServerCrashed,
    ServerError,
    ServerHung,
    ServerPool,
    ServerSpec,
    python_command,
)

REPO = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
TOY = python_command(str(SERVERS / "toy_server.py"))
EXITS = python_command(str(SERVERS / "exits_at_once.py"))
SILENT = python_command(str(SERVERS / "goes_silent.py"))
MCP1_PYTHON = REPO / ".ci" / "cache" / "mcp1-venv" / "bin" / "python"
STDERR_LINE = "fatal: DATABASE_URL is not set; refusing to start"


def start_error(spec: ServerSpec, **kwargs: Any) -> tuple[str, float]:
    """Open a pool that must fail; return the ServerError message and the seconds it took."""

    async def go() -> None:
        async with ServerPool(spec, **kwargs):
            pass

    started = time.monotonic()
    with pytest.raises(ServerError) as info:
        asyncio.run(go())
    return str(info.value), time.monotonic() - started


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


# --- start-up failures -----------------------------------------------------------------------------


def test_command_not_found() -> None:
    message, _ = start_error(ServerSpec.parse("no-such-mcp-server-xyz --stdio"))
    assert "no-such-mcp-server-xyz" in message
    assert "not found" in message
    assert ".." not in message


def test_server_that_exits_at_once_shows_its_stderr(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "server.log"
    message, elapsed = start_error(ServerSpec.parse(EXITS), log_path=log, connect_timeout=20)
    assert elapsed < 15  # noticed when it exits, not at the handshake timeout
    assert "exited" in message
    assert STDERR_LINE in message.splitlines()[-1]
    assert "toy-config: loading settings" in message
    assert STDERR_LINE in log.read_text(encoding="utf-8")


def test_program_that_is_not_mcp_is_named_with_its_first_lines_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pidfile = tmp_path / "not_mcp.pid"
    spec = ServerSpec(argv=(sys.executable, str(SERVERS / "not_mcp.py"), str(pidfile)))
    message, elapsed = start_error(spec, connect_timeout=30, log_path=tmp_path / "server.log")
    assert elapsed < 10  # it gives up soon after the first non-MCP line, not at the connect timeout
    assert "lines on stdout that are not MCP" in message and "'hello 0', 'hello 1'" in message
    assert not alive(int(pidfile.read_text(encoding="utf-8")))  # the client stopped it
    assert "Traceback" not in capsys.readouterr().err


def test_a_silent_program_fails_at_the_connect_timeout(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text("import sys\nsys.stdin.read()\n", encoding="utf-8")
    message, elapsed = start_error(ServerSpec(argv=(sys.executable, str(script))), connect_timeout=2)
    assert elapsed < 10 and "handshake within 2 s" in message


def test_unreachable_url(free_port: Callable[[], int]) -> None:
    port = free_port()  # nothing listens there
    message, elapsed = start_error(ServerSpec.parse(f"http://127.0.0.1:{port}/mcp"), connect_timeout=10)
    assert elapsed < 10
    assert f"URL `http://127.0.0.1:{port}/mcp`" in message


def test_failed_instance_stops_the_instances_that_did_start(tmp_path: Path) -> None:
    """A server that allows one instance at a time: opening a pool of two fails, and the first is stopped."""
    lock = tmp_path / "lock"
    script = tmp_path / "single.py"
    script.write_text(
        "import os, runpy, sys\n"
        "try:\n"
        f"    fd = os.open({str(lock)!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n"
        "except FileExistsError:\n"
        "    sys.exit('another instance holds the lock')\n"
        "os.write(fd, str(os.getpid()).encode())\n"
        f"runpy.run_path({str(SERVERS / 'toy_server.py')!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    spec = ServerSpec(argv=(sys.executable, str(script)))

    async def go() -> tuple[str, bool]:
        with pytest.raises(ServerError) as info:
            async with ServerPool(spec, instances=2, log_path=tmp_path / "server.log"):
                pass
        first = int(lock.read_text(encoding="utf-8"))
        deadline = time.monotonic() + 5
        while alive(first) and time.monotonic() < deadline:  # still inside the event loop that opened it
            await asyncio.sleep(0.05)
        return str(info.value), alive(first)

    message, first_alive = asyncio.run(go())
    assert "another instance holds the lock" in message
    assert not first_alive


# --- crashes and restarts --------------------------------------------------------------------------


def test_crash_raises_server_crashed_and_the_pool_restarts_the_server(tmp_path: Path) -> None:
    log = tmp_path / "server.log"

    async def go() -> tuple[str, int, CallOutcome, CallOutcome]:
        async with ServerPool(ServerSpec.parse(TOY), log_path=log) as pool:
            before = await pool.call("pid", {})
            with pytest.raises(ServerCrashed):
                await pool.call("crash", {})
            restarts = pool.restarts
            after = await pool.call("pid", {})
            echo = await pool.call("echo", {"text": "back again"})
            return before.text, restarts, after, echo

    before, restarts, after, echo = asyncio.run(go())
    assert restarts == 1
    assert not after.is_error and after.text != before  # a new server process answers
    assert (echo.text, echo.is_error) == ("back again", False)
    assert "restarting (restart 1)" in log.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_server_that_stops_answering_is_restarted_and_the_call_is_an_infrastructure_fault(tmp_path: Path) -> None:
    """`freeze` blocks the server's loop: the process lives, answers nothing and ignores the cancel. The call times
    out, the ping after it gets no answer, and the pool restarts the server: ServerHung, an infrastructure fault,
    not a timeout the agent would be scored on. (The unencodable result is the CLI test below.)"""
    log = tmp_path / "server.log"

    async def go() -> tuple[str, float, int, CallOutcome]:
        async with ServerPool(ServerSpec.parse(SILENT), log_path=log, tool_timeout=0.5) as pool:
            started = time.monotonic()
            with pytest.raises(ServerHung) as info:
                await pool.call("freeze", {})
            elapsed = time.monotonic() - started
            return str(info.value), elapsed, pool.restarts, await pool.call("echo", {"text": "back again"})

    message, elapsed, restarts, echo = asyncio.run(go())
    assert issubclass(ServerHung, ServerCrashed)  # the episode runner records it as an infrastructure fault
    assert message == (f"the server stopped answering: freeze timed out after 0.5 s, then a ping got no answer "
                       f"within {PING_DEADLINE:g} s")
    assert elapsed < 0.5 + PING_DEADLINE + 8  # the timeout, the ping's deadline at most, a restart
    assert restarts == 1 and (echo.text, echo.is_error) == ("back again", False)
    assert f"[optimizer] {message}; restarting (restart 1)" in log.read_text(encoding="utf-8")


def test_a_slow_tool_on_a_server_that_answers_one_request_at_a_time_is_cancelled_not_restarted(tmp_path: Path) -> None:
    """The serial server answers nothing, a ping neither, while its tool sleeps. The SDK's notifications/cancelled
    frees it, so the ping after the timeout is answered: the timeout is the tool's, within milliseconds of it."""
    log = tmp_path / "server.log"

    async def go() -> tuple[CallOutcome, int, CallOutcome]:
        async with ServerPool(ServerSpec.parse(python_command(str(SERVERS / "serial_server.py"))), log_path=log,
                              tool_timeout=1) as pool:
            slow = await pool.call("hang", {"seconds": 30})
            return slow, pool.restarts, await pool.call("echo", {"text": "free again"})

    slow, restarts, echo = asyncio.run(go())
    assert slow.is_error and slow.text == "The tool hang did not answer within 1 s and was abandoned."
    assert 1 <= slow.duration_s < 2.5  # the ping adds a round trip (milliseconds; room left for a loaded machine)
    assert restarts == 0 and echo.text == "free again"
    assert "cancelled request" in log.read_text(encoding="utf-8")  # the server got notifications/cancelled


# --- end to end through the CLI --------------------------------------------------------------------


def test_eval_against_a_server_that_exits_at_once(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "Echo banana",
                                                    "expect": {"answer": "banana"}}])
    result = run_cli("eval", "--server", EXITS, "--tasks", tasks, "--models", "sim:lexical",
                     "--runs-dir", tmp_path / "runs")
    assert result.returncode == 2, result.stderr
    message = result.stderr.strip()
    assert message.startswith("error: Could not connect to the MCP server"), message
    assert message.count("error:") == 1
    assert message.endswith(STDERR_LINE)  # the message closes with the tail of the server's stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def eval_report(run_cli: Callable[..., Any], tmp_path: Path, tasks: Path, *options: str) -> tuple[dict[str, Any],
                                                                                                  list[dict[str, Any]]]:
    result = run_cli("eval", "--server", TOY, "--tasks", tasks, "--models", "sim:lexical", "--runs-dir",
                     tmp_path / "runs", "--run-id", "r1", "--json", *options)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    run_dir = tmp_path / "runs" / "r1"
    assert json.loads((run_dir / "eval.json").read_text(encoding="utf-8")) == report
    lines = [json.loads(line) for path in sorted((run_dir / "transcripts").glob("*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines()]
    return report, lines


@pytest.mark.slow
def test_an_eval_that_scores_no_episode_exits_2_and_says_why(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "crash-it", "prompt": "Crash the server", "expect": {"tools": ["crash"]}, "split": "train"}])
    result = run_cli("eval", "--server", TOY, "--tasks", tasks, "--models", "sim:lexical", "--runs-dir",
                     tmp_path / "runs", "--run-id", "r1", "--json", "--server-instances", "1")
    assert result.returncode == 2, result.stderr
    assert "no episode was scored: all 1 ended in an infrastructure error" in result.stderr
    report = json.loads(result.stdout)  # the report is still written and printed
    assert report["episodes"]["infra_errors"] == 1 and report["episodes"]["run"] == 0
    assert (tmp_path / "runs" / "r1" / "eval.json").exists()


@pytest.mark.slow
def test_eval_crash_is_an_infrastructure_error_retried_and_never_scored(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "echo-banana", "prompt": "Echo the text banana", "expect": {"answer": "banana", "tools": ["echo"]},
         "split": "train"},
        {"id": "crash-it", "prompt": "Crash the server", "expect": {"tools": ["crash"]}, "split": "train"},
        {"id": "echo-cherry", "prompt": "Echo the text cherry", "expect": {"answer": "cherry", "tools": ["echo"]},
         "split": "heldout"},
    ])
    # Two server connections: a call is never sent to the connection that is being restarted, so only the task
    # that crashes the server is affected (with one connection, episodes running beside it fail too and retry).
    report, transcripts = eval_report(run_cli, tmp_path, tasks, "--server-instances", "2", "--max-connections", "1")
    assert report["episodes"] == {"run": 2, "cached": 0, "infra_errors": 1, "infra_retried": 1,
                                  "changed_state": 0}
    assert report["server_restarts"] == 3  # the first attempt and two retries each crashed it
    results = report["results"]["sim:lexical"]
    assert (results["train"]["n"], results["train"]["passed"]) == (1, 1)  # crash-it is not scored
    assert (results["heldout"]["n"], results["heldout"]["passed"]) == (1, 1)
    assert sorted(t["task_id"] for t in transcripts) == ["echo-banana", "echo-cherry"]
    assert {t["status"] for t in transcripts} == {"completed"}


def test_eval_slow_tool_is_the_models_failure_not_an_infra_error(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "hang-long", "prompt": "Hang for 30 seconds", "expect": {"answer": "slept", "tools": ["hang"]},
         "split": "train"},
    ])
    started = time.monotonic()
    report, transcripts = eval_report(run_cli, tmp_path, tasks, "--tool-timeout", "1", "--server-instances", "1")
    assert time.monotonic() - started < 60
    assert report["episodes"] == {"run": 1, "cached": 0, "infra_errors": 0, "infra_retried": 0, "changed_state": 0}
    assert report["server_restarts"] == 0
    cell = report["results"]["sim:lexical"]["train"]
    assert (cell["n"], cell["passed"], cell["accuracy"]) == (1, 0, 0.0)
    assert cell["failed_calls_per_task"] >= 1  # the call that timed out failed, and counts as the model's
    (episode,) = transcripts
    assert episode["status"] == "completed" and episode["passed"] is False
    (call,) = [c for c in episode["calls"] if c["name"] == "hang"][:1]
    assert call["is_error"] and "did not answer within 1 s" in call["result"]


def test_eval_slow_tool_on_a_one_request_at_a_time_server_is_scored_once_without_a_restart(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "hang-long", "prompt": "Hang for 30 seconds", "expect": {"answer": "slept", "tools": ["hang"]},
         "split": "train"}])
    result = run_cli("eval", "--server", python_command(str(SERVERS / "serial_server.py")), "--tasks", tasks,
                     "--models", "sim:lexical", "--runs-dir", tmp_path / "runs", "--run-id", "r1", "--json",
                     "--tool-timeout", "1", "--server-instances", "1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["episodes"] == {"run": 1, "cached": 0, "infra_errors": 0, "infra_retried": 0, "changed_state": 0}
    assert report["server_restarts"] == 0
    assert report["results"]["sim:lexical"]["train"]["n"] == 1  # scored: the agent saw a slow tool
    (transcript,) = (tmp_path / "runs" / "r1" / "transcripts").glob("*.jsonl")
    (episode,) = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    assert [c["result"] for c in episode["calls"]] == ["The tool hang did not answer within 1 s and was abandoned."]
    assert "cancelled request" in (tmp_path / "runs" / "r1" / "server.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_eval_unencodable_result_is_an_infrastructure_error_never_scored_nor_lost(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Issue 16: a result the server cannot encode kills its writer. Every episode that meets it is an
    infrastructure error (retried, then counted apart), never a timeout scored against the model, and none is lost:
    stored + infrastructure errors = expected."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "name", "prompt": "What name does the legacy system store for the customer?",
         "expect": {"answer": "Jos", "tools": ["legacy_name"]}, "split": "train"},
        {"id": "echo-banana", "prompt": "Echo the text banana", "expect": {"answer": "banana", "tools": ["echo"]},
         "split": "train"},
    ])
    result = run_cli("eval", "--server", SILENT, "--tasks", tasks, "--models", "sim:lexical", "--runs-dir",
                     tmp_path / "runs", "--run-id", "r1", "--json", "--tool-timeout", "0.5", "--server-instances", "1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    episodes = report["episodes"]
    assert (episodes["run"], episodes["cached"], episodes["infra_errors"]) == (1, 0, 1)
    assert episodes["infra_retried"] >= 1  # the echo episode beside it may have been caught in the restart too
    cell = report["results"]["sim:lexical"]["train"]
    assert (cell["n"], cell["passed"], cell["accuracy"]) == (1, 1, 1.0)  # only echo-banana is scored
    run_dir = tmp_path / "runs" / "r1"
    (transcript,) = (run_dir / "transcripts").glob("*.jsonl")
    assert [json.loads(line)["task_id"] for line in transcript.read_text(encoding="utf-8").splitlines()] == [
        "echo-banana"]
    with sqlite3.connect(run_dir / "run.db") as db:
        faults = db.execute("SELECT error FROM faults WHERE task_id = 'name' ORDER BY id").fetchall()
    # The first attempt and two retries. The retries run alone and end as ServerHung; the first may instead see
    # the server exit (ServerCrashed), when the echo episode beside it sent the input that lets it die.
    assert len(faults) == 3 and all(e.startswith(("ServerHung: ", "ServerCrashed: ")) for (e,) in faults)
    hung = "ServerHung: the server stopped answering: legacy_name timed out after 0.5 s, then "
    assert all(e.startswith(hung) for (e,) in faults[1:]), faults
    assert "the server stopped answering: legacy_name" in (run_dir / "server.log").read_text(encoding="utf-8")


# --- optimizer dump --------------------------------------------------------------------------------


def test_dump_writes_one_canonical_file_per_tool(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "defs"
    result = run_cli("dump", "--server", TOY, "--out-dir", out)
    assert result.returncode == 0, result.stderr
    files = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    assert set(files) == {f"{n}.json" for n in ("echo", "add", "fail", "hang", "crash", "pid", "big")}
    for name, text in files.items():
        data = json.loads(text)
        assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", name
        assert data["name"] == name.removesuffix(".json")
    add = json.loads(files["add.json"])
    assert add["output_schema"]["properties"]["result"]["type"] == "integer"
    assert add["annotations"]["readOnlyHint"] is True


def test_dump_with_an_overlay_writes_the_renamed_tool(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps({"tools": {"echo": {"name": "repeat_text", "description": "Repeat the text."}}}),
                       encoding="utf-8")
    out = tmp_path / "defs"
    result = run_cli("dump", "--server", TOY, "--out-dir", out, "--overlay", overlay)
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in out.iterdir())
    assert "repeat_text.json" in names and "echo.json" not in names
    renamed = json.loads((out / "repeat_text.json").read_text(encoding="utf-8"))
    assert renamed["name"] == "repeat_text"
    assert renamed["description"] == "Repeat the text."
    assert renamed["input_schema"]["required"] == ["text"]


def test_dump_against_a_missing_command_exits_2(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    result = run_cli("dump", "--server", "no-such-mcp-server-xyz", "--out-dir", tmp_path / "defs")
    assert result.returncode == 2
    assert "no-such-mcp-server-xyz" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "defs").exists()


# --- a server written for mcp 1.x ------------------------------------------------------------------


@pytest.mark.legacy
def test_legacy_mcp1_server_lists_and_answers(tmp_path: Path) -> None:
    if not MCP1_PYTHON.exists():
        pytest.skip(f"needs the mcp 1.x virtualenv at {MCP1_PYTHON} (made by tests/installs.py: pip install 'mcp<2')")
    spec = ServerSpec(argv=(str(MCP1_PYTHON), str(SERVERS / "legacy_server.py")))

    async def go() -> tuple[list[str], CallOutcome, CallOutcome]:
        async with ServerPool(spec, log_path=tmp_path / "server.log") as pool:
            catalog = await pool.list_tools()
            return catalog.names, await pool.call("shout", {"text": "hi"}), await pool.call("multiply",
                                                                                           {"a": 6, "b": 7})

    names, shout, multiply = asyncio.run(go())
    assert sorted(names) == ["multiply", "shout"]
    assert (shout.text, shout.is_error) == ("HI", False)
    assert multiply.text == "42" and multiply.structured == {"result": 42}


def test_environment_reaches_the_server() -> None:
    """`ServerSpec.env` is added to the (scrubbed) environment the stdio server starts with."""
    code = "import os, sys; sys.path.insert(0, os.environ['TOY_DIR']); import toy_server; toy_server.server.run()"
    spec = ServerSpec(argv=(sys.executable, "-c", code), env={"TOY_DIR": str(SERVERS)})

    async def go() -> CallOutcome:
        async with ServerPool(spec) as pool:
            return await pool.call("echo", {"text": os.pathsep})

    assert asyncio.run(go()).text == os.pathsep


def test_a_reply_with_bytes_that_are_not_utf8_still_reaches_the_agent(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "name", "prompt": "What name does the legacy system store for the customer?",
         "expect": {"answer": "Jos", "tools": ["latin1_name"]}, "split": "train"}])
    result = run_cli("eval", "--server", f"{sys.executable} {SERVERS / 'bad_utf8.py'}", "--tasks", tasks, "--models",
                     "sim:lexical", "--runs-dir", tmp_path / "runs", "--server-instances", "1", "--tool-timeout", "5",
                     "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["results"]["sim:lexical"]["train"]["passed"] == 1  # not a timeout scored against the model
    (transcript,) = (tmp_path / "runs").glob("*/transcripts/*.jsonl")
    assert "Jos\ufffd" in transcript.read_text(encoding="utf-8")  # the bad byte shows as U+FFFD, as clients show it


def test_stopping_a_connection_never_swallows_the_callers_own_cancellation() -> None:
    # Ctrl-C cancels the run while a restart waits for the old connection to close: the run must still stop
    async def main() -> None:
        conn = Connection(ServerSpec.parse(TOY), None, 1.0)
        conn._stop = asyncio.Event()
        conn._task = asyncio.ensure_future(asyncio.sleep(10))  # an old connection slow to close
        conn.client = object()  # type: ignore[assignment]  # connected, so stop() waits rather than cancels
        stopping = asyncio.ensure_future(conn.stop())
        await asyncio.sleep(0.05)
        stopping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stopping
        conn._task.cancel()

    asyncio.run(main())

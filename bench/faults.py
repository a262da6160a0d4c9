"""Benchmark: the fault matrix. Each row injects one fault into a small eval (or an optimize start) and shows what
the user gets: the exit code, the episodes expected / stored / scored / infrastructure errors, and whether an
episode was scored against the model for a fault of the server or the API. The fault table of docs/figures.md is this
script's output.

    python bench/faults.py [--json]

Every case runs the real CLI (in this process, or in a child process where a kill or a file size limit is the point)
against the test servers in tests/servers/ and the fake Messages API in tests/fakes/. The agents are OFFLINE simulated
stand-ins, except in the API rows, where the real anthropic SDK talks to the fake. A row passes when no episode the
fault hit is scored against the model and none is lost (stored + infrastructure errors = expected).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]
import sim_agents  # noqa: E402, F401 - registers the simulated agents (test doubles)
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy  # noqa: E402
from helpers.cli import cli_command  # noqa: E402
from helpers.run_db import count_episodes  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from optimizer.cli import app, optimize_app  # noqa: E402

SERVERS = ROOT / "tests" / "servers"
TOY = f"{sys.executable} {SERVERS / 'toy_server.py'}"
SILENT = f"{sys.executable} {SERVERS / 'goes_silent.py'}"
SERIAL = f"{sys.executable} {SERVERS / 'serial_server.py'}"
SUPPORT = f"{sys.executable} {ROOT / 'examples' / 'support' / 'server.py'}"
TOY_TASKS = [
    {"id": "echo-banana", "prompt": "Echo the text banana", "expect": {"answer": "banana", "tools": ["echo"]}},
    {"id": "echo-cherry", "prompt": "Echo the text cherry", "expect": {"answer": "cherry", "tools": ["echo"]}},
    {"id": "add", "prompt": "Add 2 and 3", "expect": {"answer": "5", "tools": ["add"]}},
]
ECHO_TASKS = TOY_TASKS[:2]


@dataclass
class Row:
    case: str
    exit: int
    expected: int
    stored: int | None
    scored: int | None
    infra: int | None
    against_model: int
    """episodes scored against the model because of the injected fault (must be 0)"""
    note: str
    told: bool = True
    """the user was told what happened (checked where a row says what the message must hold)"""

    @property
    def ok(self) -> bool:
        lost = self.stored is not None and self.infra is not None and self.stored + self.infra != self.expected
        return self.against_model == 0 and not lost and self.told


def cli(*args: str, script: str = "optimizer", env: dict[str, str] | None = None) -> tuple[int, str, str]:
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        result = CliRunner().invoke(app if script == "optimizer" else optimize_app, list(args))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return result.exit_code, result.stdout, result.stderr


def tasks_file(work: Path, extra: list[dict[str, Any]], base: list[dict[str, Any]] | None = None) -> Path:
    path = work / f"tasks-{len(list(work.glob('tasks-*')))}.jsonl"
    tasks = [*(TOY_TASKS if base is None else base), *extra]
    path.write_text("".join(json.dumps({**t, "split": "train"}) + "\n" for t in tasks), encoding="utf-8")
    return path


def eval_row(case: str, work: Path, server: str, extra: list[dict[str, Any]], faulty: set[str], *options: str,
             note: str = "", base: list[dict[str, Any]] | None = None) -> Row:
    """An eval of `base` (the toy tasks by default) plus `extra`; `faulty`: the task ids the fault hits (they must
    not be scored as failures of the model)."""
    base = TOY_TASKS if base is None else base
    tasks = tasks_file(work, extra, base)
    code, out, err = cli("eval", "--server", server, "--tasks", str(tasks), "--models", "sim:lexical", "--runs-dir",
                         str(work / "runs"), "--json", *options)
    if code != 0:
        return Row(case, code, len(base) + len(extra), None, None, None, 0, err.strip()[-120:])
    report = json.loads(out)
    episodes = report["episodes"]
    run_dir = Path(report["run_dir"])
    failed = [json.loads(line) for path in (run_dir / "transcripts").glob("*.jsonl")
              for line in path.read_text(encoding="utf-8").splitlines()]
    against = sum(1 for t in failed if t["task_id"] in faulty and not t["passed"])
    scored = sum(c["n"] for c in report["results"]["sim:lexical"].values())
    return Row(case, code, len(base) + len(extra), episodes["run"] + episodes["cached"], scored,
               episodes["infra_errors"], against, note)


class Refusing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def rows(work: Path) -> list[Row]:
    out = [
        eval_row("server crashes during a call", work, TOY,
                 [{"id": "crash-it", "prompt": "Crash the server", "expect": {"tools": ["crash"]}}], {"crash-it"},
                 "--server-instances", "2", "--max-connections", "1",
                 note="restarted and retried; never scored"),
        eval_row("a tool hangs (--tool-timeout 1)", work, TOY,
                 [{"id": "hang", "prompt": "Hang for 30 seconds", "expect": {"answer": "slept", "tools": ["hang"]}}],
                 set(), "--tool-timeout", "1", "--server-instances", "1",
                 note="by design the agent gets the tool's timeout error and the episode is scored (a tool fault, "
                      "not the server's)"),
        eval_row("reply with bytes that are not UTF-8", work, f"{sys.executable} {SERVERS / 'bad_utf8.py'}", [],
                 {"name"}, "--server-instances", "1", "--tool-timeout", "5", note="U+FFFD, as clients show it",
                 base=[{"id": "name", "prompt": "What name does the legacy system store for the customer?",
                        "expect": {"answer": "Jos", "tools": ["latin1_name"]}}]),
        eval_row("slow tool on a server that answers one request at a time (--tool-timeout 1)", work, SERIAL,
                 [{"id": "hang", "prompt": "Hang for 30 seconds", "expect": {"answer": "slept", "tools": ["hang"]}}],
                 set(), "--tool-timeout", "1", "--server-instances", "1", "--max-connections", "1", base=[],
                 note="the SDK cancels the call, the server answers the ping after it: a slow tool, scored by "
                      "design; no restart"),
        eval_row("server stops answering, process alive (--tool-timeout 1)", work, SILENT,
                 [{"id": "freeze", "prompt": "Freeze the server", "expect": {"tools": ["freeze"]}}], {"freeze"},
                 "--tool-timeout", "1", "--server-instances", "2", "--max-connections", "1", base=ECHO_TASKS,
                 note="no answer to the ping after the timeout: hung, restarted and retried; never scored"),
        eval_row("result the server cannot encode (lone surrogate)", work, SILENT,
                 [{"id": "name", "prompt": "What name does the legacy system store for the customer?",
                   "expect": {"answer": "Jos", "tools": ["legacy_name"]}},
                  {"id": "name-2", "prompt": "Which customer name does the legacy system store?",
                   "expect": {"answer": "Jos", "tools": ["legacy_name"]}}], {"name", "name-2"},
                 "--tool-timeout", "1", "--server-instances", "1", base=ECHO_TASKS,
                 note="its writer dies: hung (or crashed), restarted and retried; never scored, none lost"),
    ]
    started = time.monotonic()
    code, _, err = cli("dump", "--server", f"{sys.executable} {SERVERS / 'not_mcp.py'}", "--out-dir",
                       str(work / "dump"))
    out.append(Row("server prints non-MCP text", code, 0, None, None, None, 0,
                   f"{time.monotonic() - started:.0f} s; " + ("first lines quoted" if "'hello 0'" in err else err)))
    server = HTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    code, _, err = cli("eval", "--server", f"http://127.0.0.1:{server.server_port}/mcp", "--tasks",
                       str(tasks_file(work, [])), "--offline", "--runs-dir", str(work / "runs"))
    server.shutdown()
    out.append(Row("HTTP server answers 401", code, 3, None, None, None, 0,
                   "names 401 and --header" if "HTTP 401" in err and "--header" in err else err.strip()[-120:]))
    runs = work / "storage-runs"
    code, _, err = cli("--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"), "--offline",
                       "--runs-dir", str(runs), "--storage", "sqlite:///no/such/dir/x.db", script="optimize")
    out.append(Row("optimize --storage that cannot open", code, 0, 0, 0, 0, 0,
                   "before the baseline; no run directory" if not list(runs.glob("*")) else "a directory was left"))
    out.append(_killed(work))
    out.append(_disk_full(work))
    out += _api(work)
    return out


def _killed(work: Path) -> Row:
    """kill -9 halfway through an eval, then --resume: nothing finished is lost or run twice."""
    runs = work / "kill"
    command = [*cli_command("optimizer", sim=True), "eval", "--server", SUPPORT, "--tasks",
               str(ROOT / "examples/support/tasks"), "--models", "sim:lexical?latency_ms=20", "--runs-dir", str(runs),
               "--run-id", "k", "--max-connections", "1", "--server-instances", "1"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    while count_episodes(runs / "k" / "run.db") < 20 and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = count_episodes(runs / "k" / "run.db")
    code, out, _ = cli("eval", "--resume", "k", "--runs-dir", str(runs), "--json")
    report = json.loads(out)
    episodes = report["episodes"]
    scored = sum(c["n"] for model in report["results"].values() for c in model.values())
    return Row("kill -9 halfway, then --resume", code, 66, episodes["run"] + episodes["cached"], scored,
               episodes["infra_errors"], 0, f"{before} kept from before the kill, {episodes['run']} run after")


def _limit_writes() -> None:
    """In the child: a write taking any one file past 200 kB fails with EFBIG, as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def _disk_full(work: Path) -> Row:
    """The run directory fills up halfway through an eval, then --resume once there is room: nothing stored is lost,
    and every task ends as in an uninterrupted run (a task that does not is counted against the model)."""
    runs = work / "full"
    args = ["eval", "--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"), "--models", "sim:lexical",
            "--runs-dir", str(runs), "--server-instances", "1"]
    full = subprocess.run([sys.executable, "-c", "from optimizer.cli import main; main()", *args, "--run-id", "f"],
                          cwd=ROOT, capture_output=True, text=True, preexec_fn=_limit_writes)
    before = count_episodes(runs / "f" / "run.db")
    told = (full.returncode == 2 and f"cannot write to the run directory {runs / 'f'}: disk full" in full.stderr
            and "--resume f" in full.stderr and "Traceback" not in full.stderr)
    code, out, _ = cli("eval", "--resume", "f", "--runs-dir", str(runs), "--json")
    _, whole, _ = cli(*args, "--run-id", "w", "--json")
    report = json.loads(out)
    episodes = report["episodes"]
    scored = sum(c["n"] for model in report["results"].values() for c in model.values())
    differ = sum(a != b for a, b in zip(_passed(runs / "f"), _passed(runs / "w"), strict=True))
    return Row("disk full on the run directory, then --resume", full.returncode, 66,
               episodes["run"] + episodes["cached"], scored, episodes["infra_errors"], differ,
               f"stops at {before} stored: 'disk full', the run directory, how to resume; --resume finished it "
               f"(exit {code}), as an uninterrupted run" + ("" if told else f"; said: {full.stderr.strip()[-120:]}"),
               told)


def _passed(run_dir: Path) -> list[tuple[str, bool]]:
    lines = [json.loads(line) for path in (run_dir / "transcripts").glob("*.jsonl")
             for line in path.read_text(encoding="utf-8").splitlines()]
    return sorted((t["task_id"], t["passed"]) for t in lines)


def _api(work: Path) -> list[Row]:
    """The Messages API failing (429 storm, 529, 500, a cut-off body) under a Claude agent through the real SDK."""
    out = []
    faults: list[tuple[str, Callable[[FakeAnthropicAPI], None]]] = [
        ("API 429 storm (retry-after)", lambda api: api.inject(status=429, retry_after=0.1, times=6)),
        ("API 529 overloaded", lambda api: api.inject(status=529, times=3)),
        ("API 500s", lambda api: api.inject(status=500, times=3)),
        ("API body cut off", lambda api: api.inject(malformed=True, times=2)),
    ]
    for case, inject in faults:
        with FakeAnthropicAPI(SimPolicy("lexical")) as api:
            inject(api)
            tasks = tasks_file(work, [])
            code, text, err = cli("eval", "--server", TOY, "--tasks", str(tasks), "--models", "claude-haiku-5-5",
                                  "--runs-dir", str(work / "api"), "--json", "--server-instances", "1",
                                  env={"ANTHROPIC_API_KEY": "sk-bench-faults", "ANTHROPIC_BASE_URL": api.base_url,
                                       "OPTIMIZER_CONFIRM_USD": "1000000"})  # the fake API charges nothing
        if code != 0:
            out.append(Row(case, code, 3, None, None, None, 0, err.strip()[-120:]))
            continue
        report = json.loads(text)
        episodes = report["episodes"]
        scored = sum(c["n"] for c in report["results"]["claude-haiku-5-5"].values())
        passed = sum(c["passed"] for c in report["results"]["claude-haiku-5-5"].values())
        out.append(Row(case, code, 3, episodes["run"] + episodes["cached"], scored, episodes["infra_errors"],
                       scored - passed, f"{episodes.get('infra_retried', 0)} retried after the fault"))
    return out


def markdown(rows: list[Row]) -> str:
    lines = ["| fault | exit | episodes expected | stored | scored | infra errors | scored against the model | "
             "what the user sees |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = ["–" if v is None else str(v) for v in (r.stored, r.scored, r.infra)]
        lines.append(f"| {r.case} | {r.exit} | {r.expected} | {' | '.join(cells)} | "
                     f"{r.against_model}{'' if r.ok else ' ✗'} | {r.note} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        measured = rows(Path(tmp))
    if args.json:
        print(json.dumps([vars(r) | {"ok": r.ok} for r in measured], indent=2))
        return
    print("Fault matrix (OFFLINE simulated agents, except the API rows: the real SDK against the fake Messages API)")
    print(markdown(measured))


if __name__ == "__main__":
    main()

"""Benchmark: `optimizer tasks generate --offline` on every server of the test bed (the bundled examples and the
published servers), measured side by side in one run: tasks written and their mix, tools with a task that has
an answer (not only a tool-choice request), whether `optimizer tasks check --replay` accepts the set, and the
baseline findability of the OFFLINE readers on it (`optimizer eval --offline`: top hit is the expected tool).
The generated-tasks table of docs/figures.md is this script's output (`--write docs/figures.md` rewrites it).

    python bench/generate_offline.py [--only NAME,…] [--json] [--write docs/figures.md]
    python bench/generate_offline.py --before REV [--only NAME,…] [--json] [--write docs/figures.md]

With --before REV it compares the generator of commit REV (its `optimizer` package, taken with `git archive`) with
the working tree's, on the same servers (and on examples/clinic, blind and with its known.txt), one server at a
time, each side in a fresh process: tasks written, dropped (of which because the answer is not a value of the
field the question asks for), tasks that use an error result's text as a value (`error_sourced`) and exploration
calls that pass one on (`error_fed`), tools with a task and with an answered task (the "before → after" table of
docs/figures.md). It exits 1 when a task the working tree wrote uses an error's text.

Each server is generated for with the defaults (seed 0: only read-only tools are called); check and eval get
--allow-destructive where the server's README optimize command has it. A row
`+explore` also lets the generator call the tools that server leaves unannotated but that only read (named with
--explore, as a user would after reading the tool list). The generator is the OFFLINE stand-in, not a model.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figures import add_write_option, refuse_only, write
from testbed import OFFLINE_MODELS, ROOT, servers
from typer.testing import CliRunner

from optimizer.cli import app
from optimizer.servers import ServerPool, ServerSpec
from optimizer.text.results import says_error
from optimizer.text.values import find_values

EXPLORE = {"support": "get_policy,check_refund", "published/sqlite": "list_tables,describe_table,read_query"}
"""Read-only tools each server does not annotate (read from its tool list), for the +explore rows."""
CLINIC = ROOT / "examples" / "clinic"
"""The server whose records no tool lists (no task set, so not a test-bed row): blind, and with its known.txt."""


@dataclass(frozen=True)
class Row:
    name: str
    launcher: Path
    allow_destructive: bool
    explore: str = ""
    known: Path | None = None

    @property
    def label(self) -> str:
        return self.name + (" +explore" if self.explore else "") + (" --known" if self.known else "")

    def generate_args(self, out: Path, runs: Path) -> list[str]:
        """`optimizer tasks generate --offline` for this row, with the defaults (seed 0, --n 40)."""
        return ["tasks", "generate", "--offline", "--server", f"{sys.executable} {self.launcher}", "--out", str(out),
                "--runs-dir", str(runs), "--json", *(["--explore", self.explore] if self.explore else []),
                *(["--known", str(self.known)] if self.known else [])]


def test_bed_rows(wanted: set[str]) -> list[Row]:
    """Every test-bed server with the defaults, and with --explore where it leaves read-only tools unannotated."""
    rows: list[Row] = []
    for server in servers():
        if wanted and server.name not in wanted:
            continue
        rows.append(Row(server.name, server.launcher, server.allow_destructive))
        if server.name in EXPLORE:
            rows.append(Row(server.name, server.launcher, server.allow_destructive, EXPLORE[server.name]))
    return rows


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def measure(row: Row, work: Path) -> dict[str, Any]:
    server = f"{sys.executable} {row.launcher}"
    out = work / row.label.replace("/", "-").replace(" ", "")
    flags = ["--allow-destructive"] if row.allow_destructive else []
    started = time.perf_counter()
    code, stdout = cli(*row.generate_args(out, work / "runs"))
    if code not in (0, 1):
        return {"server": row.label, "skipped": f"generate exited {code}"}
    summary = json.loads(stdout)
    generated = time.perf_counter() - started
    code, stdout = cli("tasks", "check", str(out), "--server", server, "--replay", "--json", *flags)
    check = json.loads(stdout)
    code_eval, stdout = cli("eval", "--server", server, "--tasks", str(out), "--offline", "--runs-dir",
                            str(work / "runs"), "--json", *flags)
    results = json.loads(stdout)["results"] if code_eval == 0 else {}
    tools = len(check["per_tool"])
    answered = {tool for task in _tasks(out) if task["expect"].get("answer") for tool in task["expect"]["tools"]}
    return {"server": row.label, "written": summary["written"], "mix": summary["mix"], "tools": tools,
            "tools_covered": tools - len(summary["tools_without_tasks"]), "tools_with_answer": len(answered),
            "dropped": len(summary["dropped"]), "calls": summary["calls"], "check_passed": check["passed"],
            "accuracy": {m: _both(results.get(m, {})) for m in OFFLINE_MODELS}, "generate_s": round(generated, 1)}


def _tasks(folder: Path) -> list[dict[str, Any]]:
    import yaml  # only here: the bench reads what a user would read

    path = folder / "generated.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else []


def _both(splits: dict[str, Any]) -> str:
    passed = sum(s["passed"] for s in splits.values())
    n = sum(s["n"] for s in splits.values())
    return f"{passed}/{n}" if n else "-"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| server | tasks (lookup / multi-step / tool-choice) | tools with a task | tools with an answered task | "
             "dropped | check --replay | " + " | ".join(f"{m} baseline" for m in OFFLINE_MODELS) + " | generate s |",
             "|---" * (7 + len(OFFLINE_MODELS)) + "|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['server']} | skipped: {r['skipped']} |" + " |" * (5 + len(OFFLINE_MODELS)))
            continue
        mix = r["mix"]
        lines.append(f"| {r['server']} | {r['written']} ({mix['lookup']} / {mix['multi_step']} / "
                     f"{mix['tool_choice']}) | {r['tools_covered']}/{r['tools']} | {r['tools_with_answer']}/"
                     f"{r['tools']} | {r['dropped']} | {'accepted' if r['check_passed'] else 'REJECTED'} | "
                     + " | ".join(r["accuracy"][m] for m in OFFLINE_MODELS) + f" | {r['generate_s']} |")
    return "\n".join(lines)


def code_at(rev: str, into: Path) -> Path:
    """The `optimizer` package (and its prompts) as commit `rev` has them, extracted into `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "optimizer", "prompts"], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def definitions(row: Row) -> str:
    """The server's tool definitions and the row's known facts, as text: where a value is known before any call."""
    async def listed() -> str:
        async with ServerPool(ServerSpec.parse(f"{sys.executable} {row.launcher}"), instances=1) as pool:
            catalog = await pool.list_tools()
        return json.dumps([tool.canonical() for tool in catalog.tools], ensure_ascii=False)

    return asyncio.run(listed()) + (row.known.read_text(encoding="utf-8") if row.known else "")


def generated(code: Path, row: Row, work: Path, known: str) -> dict[str, Any]:
    """One offline generation with the `optimizer` package under `code`, in a process of its own; `known`: the
    text of what was known before any call (`definitions`)."""
    work.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", "from optimizer.cli import main; main()",
                           *row.generate_args(work / "out", work / "runs")], capture_output=True, text=True,
                          cwd=work, env={**os.environ, "PYTHONPATH": str(code)}, stdin=subprocess.DEVNULL)
    if done.returncode not in (0, 1):
        return {"skipped": f"generate exited {done.returncode}: {done.stderr.strip()[-200:]}"}
    summary = json.loads(done.stdout)
    calls = [json.loads(line) for line in (Path(summary["run_dir"]) / "calls.jsonl").read_text(
        encoding="utf-8").splitlines()]
    tasks = _tasks(work / "out")
    sourced = {task["id"]: found for task in tasks if (found := error_sourced(task, calls, known))}
    tools = summary["coverage"]["tools"]
    return {"written": summary["written"], "dropped": len(summary["dropped"]),
            "not_the_field": summary.get("not_the_field"), "error_sourced": sourced,
            "calls": len(calls), "error_fed": error_fed(calls, known), "tools": tools,
            "with_task": tools - len(summary["tools_without_tasks"]), "answered": summary["coverage"]["answered"]}


def error_sourced(task: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], known: str = "") -> list[str]:
    """The values of a task (its answer, its calls' argument values, the ids, dates, quoted text … its prompt
    shows; three characters or more) that only an error result had shown (`only_an_error_showed`)."""
    expect = task.get("expect") or {}
    values = [str(expect["answer"])] if expect.get("answer") is not None else []
    values += [v for call in expect.get("calls") or [] for v in _strings(call.get("arguments"))]
    values += [f.value for f in find_values(str(task.get("prompt", "")), 2, precise=True)]
    return sorted({v for v in values if len(v.strip()) >= 3 and only_an_error_showed(v, calls, known)})


def error_fed(calls: Sequence[Mapping[str, Any]], known: str = "") -> int:
    """The exploration calls with an argument value (three characters or more) that only an error result had shown
    when it was first sent: an error's text passed on as a value."""
    return sum(any(len(v.strip()) >= 3 and only_an_error_showed(v, calls[:number + 1], known)
                   for v in _strings(call.get("arguments"))) for number, call in enumerate(calls))


def only_an_error_showed(value: str, calls: Sequence[Mapping[str, Any]], known: str) -> bool:
    """Whether, by the first call that sent `value` (by the last call, for a value never sent), error results had
    shown it and nothing else had: not `known` (the tool definitions and the known facts), no successful result.
    An error's example the server then accepted counts, even when later results echo it."""
    if value in known:
        return False
    shown = False
    for call in calls:
        if any(value in sent for sent in _strings(call.get("arguments"))):
            return shown
        if value in str(call.get("result") or ""):
            if not _failed(call):
                return False
            shown = True
    return shown


def _failed(call: Mapping[str, Any]) -> bool:
    return bool(call.get("is_error")) or says_error(str(call.get("result") or ""))


def _strings(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return [] if data is None or isinstance(data, bool) else [str(data)]


def compare(rev: str, rows: Sequence[Row], work: Path) -> list[dict[str, Any]]:
    """Each row generated by commit `rev`'s code and by the working tree's, one server at a time."""
    before = code_at(rev, work / "before-code")
    out = []
    for number, row in enumerate(rows):
        known = definitions(row)
        sides = {side: generated(code, row, work / f"{number}-{side}", known) for side, code in (("before", before),
                                                                                                 ("after", ROOT))}
        out.append({"server": row.label, **sides})
    return out


def _pair(row: Mapping[str, Any], cell: Any) -> str:
    before, after = row["before"], row["after"]
    if "skipped" in before or "skipped" in after:
        return "skipped"
    return f"{cell(before)} → {cell(after)}"


def compared_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    columns: list[tuple[str, Any]] = [
        ("tasks written", lambda s: s["written"]),
        ("dropped", lambda s: s["dropped"]),
        ("of which not the field", lambda s: "-" if s["not_the_field"] is None else s["not_the_field"]),
        ("tasks using an error's text", lambda s: len(s["error_sourced"])),
        ("exploration calls passing an error's text", lambda s: f"{s['error_fed']} of {s['calls']}"),
        ("tools with a task", lambda s: f"{s['with_task']}/{s['tools']}"),
        ("tools with an answered task", lambda s: f"{s['answered']}/{s['tools']}"),
    ]
    lines = ["| server | " + " | ".join(name for name, _ in columns) + " |", "|---" * (1 + len(columns)) + "|"]
    lines += [f"| {r['server']} | " + " | ".join(_pair(r, cell) for _, cell in columns) + " |" for r in rows]
    return "\n".join(lines)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated server names (e.g. support,clinic)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--before", metavar="REV", help="compare the generator of commit REV with the working tree's")
    add_write_option(parser)
    args = parser.parse_args()
    args.wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    refuse_only(parser, args.write, args.wanted)
    return args


def main() -> None:
    args = arguments()
    if args.before:
        rows = test_bed_rows(args.wanted)
        if not args.wanted or "clinic" in args.wanted:
            rows += [Row("clinic", CLINIC / "server.py", False), Row("clinic", CLINIC / "server.py", False,
                                                                     known=CLINIC / "known.txt")]
        with tempfile.TemporaryDirectory() as tmp:
            compared = compare(args.before, rows, Path(tmp))
        write(args.write, "generate-offline-before-after", compared_markdown(compared))
        print(json.dumps(compared, indent=2) if args.json else f"OFFLINE — stand-in generator (no model), seed 0, "
              f"defaults; before: commit {args.before}, after: the working tree\n\n{compared_markdown(compared)}")
        used = [f"{r['server']}: {task} uses {values}" for r in compared
                for task, values in r["after"].get("error_sourced", {}).items()]
        if used:
            raise SystemExit("tasks of the working tree that use an error's text:\n  " + "\n  ".join(used))
        return
    with tempfile.TemporaryDirectory() as tmp:
        measured = [measure(row, Path(tmp)) for row in test_bed_rows(args.wanted)]
    write(args.write, "generate-offline", markdown(measured))
    if args.json:
        print(json.dumps(measured, indent=2))
        return
    print("OFFLINE — stand-in generator (no model), seed 0; baseline findability of the OFFLINE readers (top "
          "hit) on the generated set, train and held-out together")
    print(markdown(measured))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    main()

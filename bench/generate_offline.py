"""Benchmark: `optimizer tasks generate --offline` on every server of the test bed (the bundled examples and the
published servers), measured side by side in one run: tasks written and their mix, tools with a task that has
an answer (not only a tool-choice request), whether `optimizer tasks check --replay` accepts the set, and the
baseline findability of the OFFLINE readers on it (`optimizer eval --offline`: top hit is the expected tool).
The generated-tasks table of docs/figures.md is this script's output (`--write docs/figures.md` rewrites it).

    python bench/generate_offline.py [--only NAME,…] [--json] [--write docs/figures.md]

Each server is generated for with the defaults (seed 0: only read-only tools are called); check and eval get
--allow-destructive where the server's README optimize command has it. A row
`+explore` also lets the generator call the tools that server leaves unannotated but that only read (named with
--explore, as a user would after reading the tool list). The generator is the OFFLINE stand-in, not a model.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figures import write
from testbed import OFFLINE_MODELS, ROOT, bench_arguments, chosen_write, servers
from typer.testing import CliRunner

from optimizer.cli import app

EXPLORE = {"support": "get_policy,check_refund", "published/sqlite": "list_tables,describe_table,read_query"}
"""Read-only tools each server does not annotate (read from its tool list), for the +explore rows."""


@dataclass(frozen=True)
class Row:
    name: str
    launcher: Path
    allow_destructive: bool
    explore: str = ""

    @property
    def label(self) -> str:
        return self.name + (" +explore" if self.explore else "")


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def measure(row: Row, work: Path) -> dict[str, Any]:
    server = f"{sys.executable} {row.launcher}"
    out = work / row.label.replace("/", "-").replace(" ", "")
    flags = ["--allow-destructive"] if row.allow_destructive else []
    started = time.perf_counter()
    code, stdout = cli("tasks", "generate", "--offline", "--server", server, "--out", str(out), "--runs-dir",
                       str(work / "runs"), "--json", *(["--explore", row.explore] if row.explore else []))
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


def main() -> None:
    wanted, as_json = bench_arguments(__doc__, figures=True)
    rows: list[Row] = []
    for server in servers():
        if wanted and server.name not in wanted:
            continue
        rows.append(Row(server.name, server.launcher, server.allow_destructive))
        if server.name in EXPLORE:
            rows.append(Row(server.name, server.launcher, server.allow_destructive, EXPLORE[server.name]))
    with tempfile.TemporaryDirectory() as tmp:
        measured = [measure(row, Path(tmp)) for row in rows]
    write(chosen_write(), "generate-offline", markdown(measured))
    if as_json:
        print(json.dumps(measured, indent=2))
        return
    print("OFFLINE — stand-in generator (no model), seed 0; baseline findability of the OFFLINE readers (top "
          "hit) on the generated set, train and held-out together")
    print(markdown(measured))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    main()

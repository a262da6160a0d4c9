"""Benchmark: a server learned whole — the default `--rounds auto` beside `--rounds 2`, from real-model recordings.

Replays (no key, no network) the payroll and freight `optimize` runs whose every model request a Claude model
answered (the agent's first call read blind per definition set, the proposer's requests answered whole; each
recording's provenance says so), made with the defaults (`--rounds auto`), each twice: as recorded, and with
`--rounds 2` (the same answers: the rounds setting is no part of what a model is asked). Per
run: the rounds run and why they stopped, the refused calls left in the winner's failed train episodes, the probes
made, held-out passed and failed calls per task (baseline → winner), and the definition tokens. Last, whether the
proposer's request of the last round still held what round 1's episodes showed: the values round 1's ledger says
the server refused, found in the last round's ledger.

Then the same loop on every server of the test bed, bundled and published, with the simulated agents as callers
(test doubles: readers call nothing, so only callers give the ledger anything): the mechanism and its cost, never a
quality figure — rounds run and why they stopped, the refused calls left, the probes made and their calls, and how
many probe calls went to a tool not annotated read-only (expected 0 but with --allow-destructive, which the servers
whose README runs them that way have).

    python bench/learning_rounds.py [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import sim_agents  # noqa: F401 - registers the simulated agents (test doubles)
from figures import add_write_option, replace_section
from recorded_runs import replay
from testbed import servers

from optimizer.optimize import OptimizeConfig, run_optimize

ROOT = Path(__file__).resolve().parent.parent
SERVERS = {"payroll": ROOT / "examples/payroll", "freight": ROOT / "examples/freight"}
RUNS = [(name, setting) for name in SERVERS for setting in ("auto", "2")]


def argv(name: str, setting: str) -> list[str]:
    home = SERVERS[name]
    return ["optimize", "--server", f"{sys.executable} {home / 'server.py'}", "--tasks", str(home / "tasks"),
            "--replay", str(home / "recorded/optimize"), "--trials", "8", "--heldout-candidates", "2",
            "--rounds", setting]


def refused_values(run_dir: Path, number: int) -> set[tuple[str, str, str]]:
    """(tool, parameter, value) the ledger of round `number` holds as refused."""
    with sqlite3.connect(run_dir / "run.db") as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (f"ledger:r{number}",)).fetchone()
    tools = json.loads(row[0])["ledger"]["tools"] if row else {}
    return {(tool, name, value) for tool, params in tools.items() for name, rec in params.items()
            for value in rec["refused"]}


def cell(summary: dict[str, Any], side: str, key: str) -> Any:
    return next(iter(summary[side]["heldout"].values()))[key]


def row(name: str, setting: str, run_dir: Path) -> str:
    s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    n = len(s["rounds"])
    left = sum(v for per in s["refused_left"].values() for v in per.values())
    probes = [p for r in s["rounds"] for p in r["probes"]]
    calls = sum(len(p["calls"]) for p in probes)
    first, last = refused_values(run_dir, 1), refused_values(run_dir, n)
    kept = f"{len(first & last)}/{len(first)}" if n > 1 else "–"
    return (f"| {name} | {setting} | {n} | {s['stop']['rule']} | {left} | {len(probes)} ({calls} calls) | "
            f"{cell(s, 'baseline', 'passed')}/{cell(s, 'baseline', 'n')} → {cell(s, 'winner', 'passed')}/"
            f"{cell(s, 'winner', 'n')} | {cell(s, 'baseline', 'failed_calls_per_task'):.2f} → "
            f"{cell(s, 'winner', 'failed_calls_per_task'):.2f} | {s['definition_tokens']['baseline']:,} → "
            f"{s['definition_tokens']['winner']:,} | {kept} |")


def mechanism(runs: Path) -> str:
    """The loop on every test-bed server with the simulated agents as callers and the rules proposer."""
    rows = ["| server | rounds run | stopped | refused calls left (train) | probes (calls) | probe calls to tools not "
            "annotated read-only | wall s |", "|---|---|---|---|---|---|---|"]
    for server in servers():
        config = OptimizeConfig(server=f"{sys.executable} {server.launcher}", tasks=str(server.tasks),
                                models=("sim:lexical", "sim:skim"), allow_destructive=server.allow_destructive)
        started = time.perf_counter()
        s = asyncio.run(run_optimize(config, runs_dir=runs, run_id=server.name.replace("/", "-")))
        wall = time.perf_counter() - started
        probes = [p for r in s["rounds"] for p in r["probes"]]
        calls = sum(len(p["calls"]) for p in probes)
        writers = sum(len(p["calls"]) for p in probes if p["tool"] in _not_read_only(Path(s["run_dir"])))
        left = sum(v for per in s["refused_left"].values() for v in per.values())
        note = " (--allow-destructive)" if server.allow_destructive else ""
        rows.append(f"| {server.name} | {len(s['rounds'])} | {s['stop']['rule']} | {left} | {len(probes)} ({calls}) | "
                    f"{writers}{note} | {wall:.1f} |")
    return "\n".join(rows)


def _not_read_only(run_dir: Path) -> set[str]:
    """The run's tools not annotated readOnlyHint: true (from the catalog the run stored)."""
    with sqlite3.connect(run_dir / "run.db") as db:
        (row,) = db.execute("SELECT value FROM meta WHERE key = 'catalog'").fetchone()
    return {t["name"] for t in json.loads(row) if (t.get("annotations") or {}).get("readOnlyHint") is not True}


def measure() -> str:
    rows = ["| server | --rounds | rounds run | stopped | refused calls left (train) | probes | held-out passed | "
            "held-out failed calls / task | definition tokens | round 1's refusals in the last round's ledger |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, setting) in enumerate(RUNS):
            run_id = f"r{number}"
            replay(argv(name, setting), Path(tmp), run_id)
            rows.append(row(name, setting, Path(tmp) / run_id))
        loop = mechanism(Path(tmp) / "testbed")
    return ("\n".join(rows) + "\n\nThe loop on the test bed, the simulated agents as callers (OFFLINE test doubles: "
            "mechanism and cost, not quality):\n\n" + loop + f"\n\n(measured {date.today().isoformat()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_write_option(parser)
    args = parser.parse_args()
    table = measure()
    print("REPLAY of real-model recordings (first-call agent; every answer written by a Claude model)\n")
    print(table)
    if args.write:
        replace_section(args.write, "learning-rounds", table)


if __name__ == "__main__":
    main()

"""Benchmark: offline `optimize` on every server of the test bed — the bundled examples and the published
servers in examples/published/ — measured side by side in one run: held-out accuracy baseline → winner per
offline agent, definition tokens baseline → winner, how many tools the winner changes, the text-rule findings
it adds (lint's text-* rules; expected 0), the gate, the winner's failed held-out episodes split into a missed
expected tool (what a definition can still fix) and every expected tool called (arguments, or what the agent would
have to know), the episodes that changed the server's state (later episodes on that process saw it; see
bench/isolation.py for `--isolate`), and the wall time. README's test-bed table is this script's output.

    python bench/testbed.py [--only NAME,…] [--json]

Each row runs the same command README gives for that server (default settings, seed 0), in-process. The
agents are OFFLINE simulated stand-ins (sim:lexical, sim:skim), not real models. Published servers need the
installs `.ci/run` makes (.ci/cache/npm, .ci/cache/mcp1-venv, mcp-server-time); a server whose binary is
missing is listed as skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.config import RunError
from optimizer.lint.rules_text import added_text_problems
from optimizer.models import OFFLINE_DEFAULT as OFFLINE_MODELS
from optimizer.optimize import OptimizeConfig, run_optimize
from optimizer.optimize.diagnosis import failure_modes
from optimizer.review import load_review
from optimizer.store import RunStore

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Server:
    name: str
    launcher: Path
    tasks: Path
    allow_destructive: bool = False

    @property
    def command(self) -> str:
        flags = " --allow-destructive" if self.allow_destructive else ""
        return (f'optimize --server "python {self.launcher.relative_to(ROOT)}" '
                f"--tasks {self.tasks.relative_to(ROOT)} --offline{flags}")


def servers() -> list[Server]:
    """The bundled examples, then every published server folder with a launcher (serve.py) and tasks."""
    found = [Server(name, ROOT / "examples" / name / "server.py", ROOT / "examples" / name / "tasks")
             for name in ("support", "workspace", "payroll")]
    for folder in sorted((ROOT / "examples" / "published").glob("*/")):
        if (folder / "serve.py").exists() and (folder / "tasks").is_dir():
            destructive = "--allow-destructive" in readme_command(folder / "README.md")
            found.append(Server(f"published/{folder.name}", folder / "serve.py", folder / "tasks", destructive))
    return found


def readme_command(readme: Path) -> str:
    """The first `optimize --server …` command in a README (backslash continuations joined): the bench runs
    what the README tells a user to run."""
    text = readme.read_text(encoding="utf-8").replace("\\\n", " ")
    match = re.search(r"^optimize --server .*$", text, re.MULTILINE)
    if match is None:
        raise SystemExit(f"{readme}: no `optimize --server …` command")
    return " ".join(match.group(0).split())


def measure(server: Server, runs: Path, *, isolate: bool = False) -> dict[str, Any]:
    """One server's row; with `isolate`, the run gives every episode a fresh server (`--isolate`)."""
    config = OptimizeConfig(server=f"{sys.executable} {server.launcher}", tasks=str(server.tasks),
                            models=OFFLINE_MODELS, allow_destructive=server.allow_destructive, isolate=isolate)
    started = time.perf_counter()
    run_id = server.name.replace("/", "-") + ("-isolated" if isolate else "")
    try:
        summary = asyncio.run(run_optimize(config, runs_dir=runs, run_id=run_id))
    except RunError as exc:
        return {"server": server.name, "command": server.command, "skipped": str(exc).splitlines()[0]}
    wall = time.perf_counter() - started
    heldout = {model: {"baseline": summary["baseline"]["heldout"][model], "winner": summary["winner"]["heldout"][model]}
               for model in OFFLINE_MODELS}
    tokens = summary["definition_tokens"]
    review = load_review(Path(summary["run_dir"]))
    return {"server": server.name, "command": server.command, "splits": summary["splits"], "heldout": heldout,
            "tokens": {"baseline": tokens["baseline"], "winner": tokens["winner"],
                       "ratio": round(tokens["winner"] / max(1, tokens["baseline"]), 2)},
            "gate": "PASSED" if summary["gate"]["passed"] else "FAILED", "wall_s": round(wall, 1),
            "changed_state": summary["state"]["changed"], "episodes_run": summary["episodes"]["run"],
            "changed_tools": len(review.changes),
            "text_findings_added": added_text_problems(review.catalog, review.winner),
            "heldout_failures": failure_kinds(Path(summary["run_dir"]), summary["winner"]["candidate"])}


def failure_kinds(run_dir: Path, winner: str) -> dict[str, int]:
    """The winner's failed held-out episodes (both agents): `wrong_tool` missed a tool the task expects (what a
    definition can still fix); `right_tools` called every expected tool and still failed (the arguments, or what
    the agent would have to know: no description changes that)."""
    store = RunStore.open_existing(run_dir.parent, run_dir.name)
    try:
        modes = failure_modes(e for e in store.episodes(candidate=winner) if e.split == "heldout")
    finally:
        store.close()
    return {"failed": modes.failed, "wrong_tool": modes.missed_tool, "right_tools": modes.failed - modes.missed_tool}


def _cell(side: dict[str, Any]) -> str:
    return f"{side['passed']}/{side['n']}"


def markdown(rows: list[dict[str, Any]]) -> str:
    head = "| server | tasks (train/held-out) | " + " | ".join(f"{m} held-out" for m in OFFLINE_MODELS)
    lines = [head + " | definition tokens | tools changed | text findings added | gate | held-out failures: wrong "
                    "tool / right tools | episodes that changed state | wall s |",
             "|---" * (len(OFFLINE_MODELS) + 9) + "|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['server']} | skipped: {row['skipped']} |" + " |" * (len(OFFLINE_MODELS) + 7))
            continue
        cells = [f"{_cell(row['heldout'][m]['baseline'])} → {_cell(row['heldout'][m]['winner'])}"
                 for m in OFFLINE_MODELS]
        t = row["tokens"]
        lines.append(f"| {row['server']} | {row['splits']['train']}/{row['splits']['heldout']} | "
                     f"{' | '.join(cells)} | {t['baseline']:,} → {t['winner']:,} ({t['ratio']:.2f}×) | "
                     f"{row['changed_tools']} | {len(row['text_findings_added'])} | {row['gate']} | "
                     f"{row['heldout_failures']['wrong_tool']} / {row['heldout_failures']['right_tools']} | "
                     f"{row['changed_state']} of {row['episodes_run']} | {row['wall_s']} |")
    return "\n".join(lines)


def bench_arguments(doc: str) -> tuple[set[str], bool]:
    """The servers asked for with --only (empty: all) and whether --json was given, for a test-bed bench."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated server names (e.g. support,published/time)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    return {n.strip() for n in args.only.split(",") if n.strip()}, args.json


def main() -> None:
    wanted, as_json = bench_arguments(__doc__)
    chosen = [s for s in servers() if not wanted or s.name in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(server, Path(tmp)) for server in chosen]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print("OFFLINE — simulated agents (sim:lexical, sim:skim), rules proposer, default settings, seed 0")
    print(markdown(rows))
    print()
    for row in rows:
        print(f"- {row['server']}: {row['command']}")


if __name__ == "__main__":
    main()

"""Benchmark: offline `optimize` on every server of the test bed — the bundled examples and the published
servers in examples/published/ — measured side by side in one run: per offline reader (reader:bm25, the Messages
API's tool search; reader:embed, a trained embedding router), held-out findability baseline → winner (its top hit
is the first expected tool; the first expected tool is among its top 5), definition tokens baseline → winner, how
many tools the winner changes, the text-rule findings it adds (lint's text-* rules; expected 0), the gate, and the
wall time. The test-bed table of docs/figures.md is this script's output (`--write docs/figures.md` rewrites it;
with --goal shrink, the shrink table).

    python bench/testbed.py [--only NAME,…] [--goal accuracy|shrink] [--json] [--write docs/figures.md]
    python bench/testbed.py --replay [--only published/NAME,…] [--json] [--write docs/figures.md]

With --replay it runs no offline reader: it replays the published servers' real-model recordings instead
(`testbed_real.py`: held-out, clean first calls, failed calls, tokens, the gate, what ships, the shrink, the cost,
and held-out in whole conversations where recorded; the "test bed under a real model" table).

Each row runs the same command README gives for that server (default settings, seed 0), in-process. Readers
measure findability, not agent accuracy (bench/calibration.py gives their agreement with a real model). They call
nothing, so the rules proposer, which writes only what calls showed, has nothing to write there: the winner is the
baseline unless something grounded turns up. Published servers need the installs `.ci/run` makes (.ci/cache/npm,
.ci/cache/mcp1-venv, mcp-server-time); a server whose binary is missing is listed as skipped.
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

from figures import add_write_option, refuse_only, write

from optimizer.lint.rules_text import added_text_problems
from optimizer.models import OFFLINE_DEFAULT as OFFLINE_MODELS
from optimizer.models import offline_banner
from optimizer.optimize import OptimizeConfig, run_optimize
from optimizer.review import load_review
from optimizer.run.config import RunError

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
             for name in ("support", "workspace", "payroll", "freight")]
    for folder in sorted((ROOT / "examples" / "published").glob("*/")):
        if (folder / "serve.py").exists() and (folder / "tasks").is_dir() and (folder / "README.md").exists():
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


def measure(server: Server, runs: Path, *, isolate: bool = False,
            models: tuple[str, ...] = OFFLINE_MODELS, goal: str = "accuracy") -> dict[str, Any]:
    """One server's row; with `isolate`, the run gives every episode a fresh server (`--isolate`)."""
    config = OptimizeConfig(server=f"{sys.executable} {server.launcher}", tasks=str(server.tasks),
                            models=models, allow_destructive=server.allow_destructive, isolate=isolate, goal=goal)
    started = time.perf_counter()
    run_id = server.name.replace("/", "-") + ("-isolated" if isolate else "")
    try:
        summary = asyncio.run(run_optimize(config, runs_dir=runs, run_id=run_id))
    except RunError as exc:
        return {"server": server.name, "command": server.command, "skipped": str(exc).splitlines()[0]}
    wall = time.perf_counter() - started
    heldout = {model: {"baseline": summary["baseline"]["heldout"][model], "winner": summary["winner"]["heldout"][model]}
               for model in models}
    recall = {model: {side: summary["readers"][side][model] for side in ("baseline", "winner")}
              for model in models if model in summary.get("readers", {}).get("baseline", {})}
    tokens = summary["definition_tokens"]
    review = load_review(Path(summary["run_dir"]))
    return {"server": server.name, "command": server.command, "splits": summary["splits"], "heldout": heldout,
            "recall_at_5": recall, "tokens": {"baseline": tokens["baseline"], "winner": tokens["winner"],
                                             "ratio": round(tokens["winner"] / max(1, tokens["baseline"]), 2)},
            "gate": "PASSED" if summary["gate"]["passed"] else "FAILED", "wall_s": round(wall, 1),
            "changed_tools": len(review.changes), "stop_reason": summary["stop_reason"],
            "rounds": f"{len(summary['rounds'])} ({summary['stop']['rule']})",
            "changed_state": summary["state"]["changed"], "episodes_run": summary["episodes"]["run"],
            "text_findings_added": added_text_problems(review.catalog, review.winner)}


def _cell(side: dict[str, Any]) -> str:
    return f"{side['passed']}/{side['n']}" if "passed" in side else f"{side['found']}/{side['n']}"


def markdown(rows: list[dict[str, Any]]) -> str:
    readers = [f"{m} held-out top 1 | {m} top 5" for m in OFFLINE_MODELS]
    lines = ["| server | tasks (train/held-out) | " + " | ".join(readers) + " | definition tokens | tools changed | "
             "text findings added | rounds (stop) | gate | wall s |", "|---" * (2 * len(OFFLINE_MODELS) + 8) + "|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['server']} | skipped: {row['skipped']} |" + " |" * (2 * len(OFFLINE_MODELS) + 6))
            continue
        cells = [f"{_cell(row[key][m]['baseline'])} → {_cell(row[key][m]['winner'])}"
                 for m in OFFLINE_MODELS for key in ("heldout", "recall_at_5")]
        t = row["tokens"]
        lines.append(f"| {row['server']} | {row['splits']['train']}/{row['splits']['heldout']} | "
                     f"{' | '.join(cells)} | {t['baseline']:,} → {t['winner']:,} ({t['ratio']:.2f}×) | "
                     f"{row['changed_tools']} | {len(row['text_findings_added'])} | {row['rounds']} | {row['gate']} | "
                     f"{row['wall_s']} |")
    return "\n".join(lines)


def bench_arguments(doc: str, *, goal: bool = False, figures: bool = False) -> tuple[set[str], bool]:
    """The servers asked for with --only (empty: all) and whether --json was given, for a test-bed bench; with
    `goal`, --goal accuracy|shrink too (read back with `chosen_goal`); with `figures`, --write FILE (read back with
    `chosen_write`)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated server names (e.g. support,published/time)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--replay", action="store_true", help="replay the published servers' real-model recordings")
    if goal:
        parser.add_argument("--goal", choices=("accuracy", "shrink"), default="accuracy", help="optimize's --goal")
    if figures:
        add_write_option(parser)
    args = parser.parse_args()
    _GOAL[0] = getattr(args, "goal", "accuracy")
    _REPLAY[0] = bool(args.replay)
    _WRITE[0] = getattr(args, "write", None)
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    refuse_only(parser, _WRITE[0], wanted)
    return wanted, args.json


_GOAL = ["accuracy"]
_REPLAY = [False]
_WRITE: list[Path | None] = [None]


def chosen_goal() -> str:
    return _GOAL[0]


def chosen_write() -> Path | None:
    return _WRITE[0]


def main() -> None:
    wanted, as_json = bench_arguments(__doc__, goal=True, figures=True)
    if _REPLAY[0]:
        replayed(wanted, as_json)
        return
    chosen = [s for s in servers() if not wanted or s.name in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(server, Path(tmp), goal=chosen_goal()) for server in chosen]
    write(chosen_write(), "testbed" if chosen_goal() == "accuracy" else "testbed-shrink", markdown(rows))
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print(offline_banner(OFFLINE_MODELS) + f" Rules proposer, goal {chosen_goal()}, default settings, seed 0.")
    print(markdown(rows))
    print()
    for row in rows:
        print(f"- {row['server']}: {row['command']}")


def replayed(wanted: set[str], as_json: bool) -> None:
    """--replay: the published servers under a real model, from their recordings (testbed_real.py)."""
    from testbed_real import markdown as real_markdown
    from testbed_real import replay_all

    with tempfile.TemporaryDirectory() as tmp:
        rows = replay_all(Path(tmp), wanted)
    table = real_markdown(rows)
    disagreeing = [d for row in rows for d in row.get("disagreements", [])]
    if disagreeing:  # a replay that differs from its recording is no figure: say what differs, write nothing
        raise SystemExit("replays that differ from their recordings' outcome.json (re-record, docs/replay.md):\n  "
                         + "\n  ".join(disagreeing))
    write(chosen_write(), "testbed-real", table)
    print(json.dumps(rows, indent=2) if as_json else "REPLAY of real-model recordings (first-call agent; every "
          "answer written by a Claude model)\n\n" + table)


if __name__ == "__main__":
    main()

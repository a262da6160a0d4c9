"""Benchmark: the bundled real-model recordings, replayed (no key, no network), and what their agents did.

Replays README's first command (payroll `optimize`) and the support `eval`s in whole conversations
(docs/replay.md), then reads every held-out episode of the replayed runs: passed, and per task the tool calls, the
failed calls (an error result), the turns and the agent's tokens. Every answer was written by a Claude model
(the recordings' provenance says how); the replay only re-runs the server, the scoring, the search and the gate.
Last, `regress` of the reference overlay against the server's definitions on the two support recordings together
(their answers in one folder): the gate's paired view of the same episodes, failed calls included.

    python bench/recorded_runs.py [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from figures import add_write_option, replace_section

from optimizer.files.store import RunStore
from optimizer.stats.efficiency import EpisodeCost, efficiency_cell

ROOT = Path(__file__).resolve().parent.parent
PAYROLL, SUPPORT = ROOT / "examples/payroll", ROOT / "examples/support"
RUNS: list[tuple[str, str, list[str]]] = [
    ("payroll optimize", "first call, read blind per definition set", [
        "optimize", "--server", f"{sys.executable} {PAYROLL / 'server.py'}", "--tasks", str(PAYROLL / "tasks"),
        "--replay", str(PAYROLL / "recorded/optimize"), "--trials", "8", "--heldout-candidates", "2"]),
    ("support eval, the server's definitions", "whole conversations, a fresh reader per turn", [
        "optimizer", "eval", "--server", f"{sys.executable} {SUPPORT / 'server.py'}", "--tasks", str(SUPPORT / "tasks"),
        "--split", "heldout", "--isolate", "--replay", str(SUPPORT / "recorded/eval-original")]),
    ("support eval, reference-overlay.json", "whole conversations, a fresh reader per turn", [
        "optimizer", "eval", "--server", f"{sys.executable} {SUPPORT / 'server.py'}", "--tasks", str(SUPPORT / "tasks"),
        "--split", "heldout", "--isolate", "--overlay", str(SUPPORT / "reference-overlay.json"), "--replay",
        str(SUPPORT / "recorded/eval-reference")]),
]


def replay(argv: list[str], runs: Path, run_id: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    done = subprocess.run([*argv, "--runs-dir", str(runs), "--run-id", run_id], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:2])}: exit {done.returncode}\n{done.stderr[-2000:]}")


def held_out(run_dir: Path, candidate: str) -> dict[str, Any]:
    """Per task on held-out for one candidate: passed, calls, failed calls, turns, agent tokens."""
    store = RunStore.open_existing(run_dir.parent, run_dir.name)
    try:
        episodes = [e for e in store.episodes(candidate) if e.split == "heldout" and e.status != "infra_error"]
    finally:
        store.close()
    paid = efficiency_cell(EpisodeCost.of(e.data) for e in episodes)
    return {"passed": sum(bool(e.passed) for e in episodes), "n": len(episodes), "calls": paid["calls_per_task"],
            "failed": paid["failed_calls_per_task"], "turns": paid["turns_per_task"],
            "tokens": paid["tokens_per_task"]}


def measure() -> str:
    """The table of every recorded run, then the support regress line."""
    rows = ["| run | agent seat | definitions | held-out passed | tool calls / task | failed calls / task | "
            "turns / task | agent tokens / task |", "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for number, (label, seat, argv) in enumerate(RUNS):
            run_id = f"r{number}"
            replay(argv, Path(tmp), run_id)
            run_dir = Path(tmp) / run_id
            if argv[0] == "optimize":
                summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
                sides = [("the server's own", summary["baseline"]["candidate"]),
                         ("the winner", summary["winner"]["candidate"])]
            else:
                sides = [("as run", json.loads((run_dir / "eval.json").read_text(encoding="utf-8"))["candidate"])]
            for name, candidate in sides:
                f = held_out(run_dir, candidate)
                rows.append(f"| {label} | {seat} | {name} | {f['passed']}/{f['n']} | {f['calls']:.1f} | "
                            f"{f['failed']:.1f} | {f['turns']:.1f} | {f['tokens']:,.0f} |")
        return "\n".join(rows) + "\n\n" + support_regress(Path(tmp))


def support_regress(tmp: Path) -> str:
    """`regress --candidate reference-overlay.json` replayed from both support recordings: the paired changes."""
    merged = tmp / "support-both"
    merged.mkdir()
    folders = [SUPPORT / "recorded/eval-original", SUPPORT / "recorded/eval-reference"]
    (merged / "answers.jsonl").write_text("".join((f / "answers.jsonl").read_text(encoding="utf-8") for f in folders),
                                          encoding="utf-8")
    (merged / "provenance.json").write_text((folders[0] / "provenance.json").read_text(encoding="utf-8"),
                                            encoding="utf-8")
    replay(["optimizer", "regress", "--server", f"{sys.executable} {SUPPORT / 'server.py'}", "--tasks",
            str(SUPPORT / "tasks"), "--isolate", "--models", "claude-sonnet-5-5", "--candidate",
            str(SUPPORT / "reference-overlay.json"), "--replay", str(merged), "-o", str(tmp / "regress.json")],
           tmp, "regress")
    report = json.loads((tmp / "regress.json").read_text(encoding="utf-8"))
    lines = []
    for model, row in report["results"].items():
        calls = row["failed_calls"]
        lines.append(f"`regress --candidate reference-overlay.json` on the support recordings, {model}: held-out "
                     f"{row['before']:.0%} → {row['after']:.0%} (Holm p={row['p_holm']:.3g}, {row['verdict']}); "
                     f"failed calls per task {calls['before']:.2f} → {calls['after']:.2f} ({calls['delta']:+.2f}, 95% "
                     f"CI {calls['ci'][0]:+.2f} to {calls['ci'][1]:+.2f}, Holm p={calls['p_holm']:.3g}).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_write_option(parser)
    args = parser.parse_args()
    table = measure()
    print("REPLAY of the bundled recordings (every answer written by a Claude model; docs/replay.md)\n")
    print(table)
    if args.write:
        replace_section(args.write, "recorded-runs", table)


if __name__ == "__main__":
    main()

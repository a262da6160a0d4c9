"""Benchmark: every offline reader held against a real model's first calls (bench/calibration/).

For every calibration file (one read of one definition set by a Claude model, README there) and every offline
reader, on the same tools and task prompts:
- the real model's first-tool accuracy (its first call's tool is the task's first expected tool);
- the reader's first-tool accuracy, and its agreement with the real model (the same first tool);
- for the rankers, recall at 5 (the expected first tool among the top five).

Readers: `bm25` (the Messages API's tool search over names, descriptions and parameter descriptions, the prompt as
the query) and `embed` (wordllama's trained embeddings, as a semantic router ranks tools) — real systems, the
project's offline readers — and the simulated agents `sim:lexical` and `sim:skim`, which are test doubles, shown
for comparison only.

    python bench/calibration.py [--json] [--write docs/figures.md]

`--write` also rewrites optimizer/data/reader_agreement.json, the readers' agreement that every offline banner
states (`optimizer.models.offline_banner`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

from figures import add_write_option, write
from sim_agents import SimAgent

from optimizer.definitions import ToolDef
from optimizer.files.atomic import atomic_write
from optimizer.models import AGREEMENT_FILE
from optimizer.models.base import Message
from optimizer.readers import READERS, load_reader
from optimizer.tasks import Task, load_tasks

ROOT = Path(__file__).resolve().parent.parent
CALIBRATION = ROOT / "bench" / "calibration"
SIMS = ("sim:lexical", "sim:skim")


def tasks_of(server: str) -> dict[str, Task]:
    """The task set a calibration file's server name stands for (examples/<name>, examples/published/<name>)."""
    folder = ROOT / "examples" / server.replace("published-", "published/", 1) / "tasks"
    return {t.id: t for t in load_tasks(folder).tasks}


def first_tools(reader: str, tools: list[ToolDef], prompts: list[str]) -> list[tuple[str | None, list[str]]]:
    """Per prompt, the reader's first tool and its ranking (empty for the simulated agents, which do not rank)."""
    if reader in SIMS:
        agent = SimAgent(reader.removeprefix("sim:"))
        out: list[tuple[str | None, list[str]]] = []
        for prompt in prompts:
            turn = asyncio.run(agent.turn("", tools, [Message("user", prompt)]))
            out.append((turn.tool_calls[0].name if turn.tool_calls else None, []))
        return out
    ranker = load_reader(reader)
    ranked = [ranker.rank(tools, prompt) for prompt in prompts]
    return [(r[0] if r else None, r) for r in ranked]


def measure(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    tasks = tasks_of(data["server"])
    tools = [ToolDef(t["name"], t.get("description") or "", t["input_schema"]) for t in data["tools"]]
    calls = [c for c in data["calls"] if c["task"] in tasks and c["expected_tools"]]
    routing = {c["tool"]: c["original_tool"] for c in data["calls"] if c["original_tool"]}
    routing.update({t.name: t.name for t in tools if t.name not in routing})
    exposed = {v: k for k, v in routing.items()}
    real = [c["tool"] for c in calls]
    wanted = [exposed.get(c["expected_tools"][0], c["expected_tools"][0]) for c in calls]
    row: dict[str, Any] = {"file": path.name, "server": data["server"], "definitions": data["definitions"],
                           "tasks": len(calls), "real": sum(r == w for r, w in zip(real, wanted, strict=True))}
    for reader in (*READERS, *SIMS):
        chosen = first_tools(reader, tools, [tasks[c["task"]].prompt for c in calls])
        row[reader] = {"accuracy": sum(f == w for (f, _), w in zip(chosen, wanted, strict=True)),
                       "agreement": sum(f == r for (f, _), r in zip(chosen, real, strict=True))}
        if reader in READERS:
            row[reader]["recall_at_5"] = sum(w in ranked[:5] for (_, ranked), w in zip(chosen, wanted, strict=True))
    return row


def agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What AGREEMENT_FILE holds: per offline reader, its agreement with the real model over every file's tasks."""
    tasks = sum(r["tasks"] for r in rows)
    return {"measured": date.today().isoformat(), "tasks": tasks,
            "agreement": {f"reader:{reader}": round(sum(r[reader]["agreement"] for r in rows) / tasks, 2)
                          for reader in READERS},
            "how": "python bench/calibration.py --write docs/figures.md: per reader, the share of the calibration "
                   "tasks (bench/calibration/) on which its first tool is a real model's first call's tool"}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| file | tasks | real model | "
            + " | ".join(f"{r}: accuracy / agreement{' / recall@5' if r in READERS else ''}" for r in (*READERS, *SIMS))
            + " |")
    lines = [head, "|---" * (3 + len(READERS) + len(SIMS)) + "|"]
    for row in rows:
        cells = []
        for reader in (*READERS, *SIMS):
            cell = row[reader]
            extra = f" / {cell['recall_at_5']}" if "recall_at_5" in cell else ""
            cells.append(f"{cell['accuracy']} / {cell['agreement']}{extra}")
        lines.append(f"| {row['file'].removesuffix('.json')} | {row['tasks']} | {row['real']} | " + " | ".join(cells)
                     + " |")
    total = {"tasks": sum(r["tasks"] for r in rows), "real": sum(r["real"] for r in rows)}
    cells = []
    for reader in (*READERS, *SIMS):
        acc = sum(r[reader]["accuracy"] for r in rows)
        agree = sum(r[reader]["agreement"] for r in rows)
        extra = (f" / {sum(r[reader]['recall_at_5'] for r in rows) / total['tasks']:.0%}" if reader in READERS else "")
        cells.append(f"{acc / total['tasks']:.0%} / {agree / total['tasks']:.0%}{extra}")
    lines.append(f"| all | {total['tasks']} | {total['real'] / total['tasks']:.0%} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_write_option(parser)
    args = parser.parse_args()
    rows = [measure(path) for path in sorted(CALIBRATION.glob("*.json"))]
    write(args.write, "calibration", table(rows))
    if args.write is not None:
        atomic_write(AGREEMENT_FILE, json.dumps(agreement(rows), indent=2) + "\n")
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("Each cell: of the tasks, how many first tools match the expected one (accuracy) and the real model's first "
          "tool (agreement). bm25 and embed are the offline readers (real systems: findability); sim:* are test "
          "doubles, for comparison only.")
    print(table(rows))


if __name__ == "__main__":
    main()

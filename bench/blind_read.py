"""A real model's blind read of one definition set: what it is asked, and its first calls executed, in the format of
the calibration files (a Claude model given only the tool list and the task prompts, one definition set at a time).

    python bench/blind_read.py ask --server CMD --tasks DIR [--overlay FILE] [--split heldout] --out REQUEST.md
    python bench/blind_read.py run --server CMD --tasks DIR [--overlay FILE] --calls CALLS.json \\
        --definitions NAME --out READ.json

`ask` writes what the reader is given: the tool list exactly as the Messages API passes tools (the server's
definitions, or the overlay applied), the task prompts by id, and the one sentence that asks for the first call to
each. Give it to a Claude model with nothing else, and save its answer, a JSON list of {task, tool, arguments}.

`run` executes every answered call on a fresh server process (one per call, so no call sees another's writes), routes
it to the tool's original name, and writes the calibration record: per task its split, expected tools, the tool as
named in that set and its original, the arguments, whether the first tool is the first expected one, and the
server's answer (cut at 300 characters). It prints the first-tool and clean-first-call counts, per split.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from optimizer.definitions import Candidate, apply
from optimizer.files.patch import load_overlay
from optimizer.servers import ServerSpec, list_tools_once, one_connection
from optimizer.tasks import Task, load_tasks

ASK = ("For each task prompt below, give the first tool call you would make with these tools: the tool's name and "
       "its arguments. Answer with one JSON list of objects {\"task\": id, \"tool\": name, \"arguments\": {...}}, one "
       "per task, in the order given.")
READER = ("a Claude model, blind: it was given only this tool list (as the API passes tools) and the task prompts, "
          "and asked for the first call it would make to each; every call was then executed on a fresh server process")


def exposed_tools(server: str, overlay: Path | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The tools as the Messages API passes them (name, description, input_schema) and exposed name -> original."""
    catalog = asyncio.run(list_tools_once(ServerSpec.parse(server)))
    candidate = load_overlay(overlay, catalog) if overlay else Candidate()
    exposed = apply(catalog, candidate)
    tools = [{"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
             for t in exposed.tools]
    return tools, dict(exposed.routing)


def server_name(tasks: Path) -> str:
    """The name calibration files give the server of a task folder: `support` for examples/support/tasks,
    `published-git` for examples/published/git/tasks."""
    folder = tasks.resolve().parent
    return f"published-{folder.name}" if folder.parent.name == "published" else folder.name


def chosen_tasks(tasks: Path, split: str | None) -> list[Task]:
    return [t for t in load_tasks(tasks).tasks if split is None or t.split == split]


def command_ask(args: argparse.Namespace) -> None:
    tools, _ = exposed_tools(args.server, args.overlay)
    prompts = [{"task": t.id, "prompt": t.prompt} for t in chosen_tasks(args.tasks, args.split)]
    text = "\n\n".join([ASK, "Tools (JSON, as the Messages API passes them):", json.dumps(tools, indent=1),
                        "Task prompts:", json.dumps(prompts, indent=1, ensure_ascii=False)])
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(tools)} tools, {len(prompts)} prompts")


async def execute(server: str, routing: dict[str, str], tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    original = routing.get(tool)
    if original is None:
        return True, f"no tool named {tool!r} in this definition set"
    async with one_connection(ServerSpec.parse(server)) as pool:
        outcome = await pool.call(original, arguments)
    return outcome.is_error, outcome.text[:300]


def command_run(args: argparse.Namespace) -> None:
    tools, routing = exposed_tools(args.server, args.overlay)
    answered = {c["task"]: c for c in json.loads(args.calls.read_text(encoding="utf-8"))}
    calls = []
    for task in chosen_tasks(args.tasks, args.split):
        call = answered.get(task.id)
        if call is None:
            continue
        is_error, result = asyncio.run(execute(args.server, routing, call["tool"], call.get("arguments") or {}))
        expected = list(task.expect.tools)
        original = routing.get(call["tool"])
        calls.append({"task": task.id, "split": task.split, "expected_tools": expected, "tool": call["tool"],
                      "original_tool": original, "arguments": call.get("arguments") or {},
                      "first_tool_expected": bool(expected) and original == expected[0], "is_error": is_error,
                      "result": result})
    record = {"server": args.name or server_name(Path(args.tasks)), "definitions": args.definitions,
              "measured": date.today().isoformat(), "reader": READER, "tools": tools, "calls": calls}
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(summary(calls))


def summary(calls: list[dict[str, Any]]) -> str:
    """First tool as expected and clean first calls (that, and no error), in all and per split."""
    lines = []
    for split in (None, *sorted({c["split"] for c in calls if c["split"]})):
        part = [c for c in calls if split is None or c["split"] == split]
        counts = Counter(c["first_tool_expected"] for c in part)
        clean = sum(c["first_tool_expected"] and not c["is_error"] for c in part)
        lines.append(f"{split or 'all':>8}: {len(part)} tasks, first tool as expected {counts[True]}, "
                     f"clean first call {clean}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("ask", "run"):
        one = sub.add_parser(name)
        one.add_argument("--server", required=True)
        one.add_argument("--tasks", type=Path, required=True)
        one.add_argument("--overlay", type=Path)
        one.add_argument("--split", choices=["train", "heldout"], help="only the tasks of this split")
        one.add_argument("--out", type=Path, required=True)
    run = sub.choices["run"]
    run.add_argument("--calls", type=Path, required=True, help="the reader's answer: [{task, tool, arguments}]")
    run.add_argument("--definitions", required=True, help="what the set is (original, reference overlay, …)")
    run.add_argument("--name", help="the server's name in the record (default: the task folder's parent, "
                                    "published-NAME under examples/published/)")
    args = parser.parse_args()
    command_ask(args) if args.command == "ask" else command_run(args)


if __name__ == "__main__":
    main()

"""Benchmark: what lean schemas drop on every server of the test bed, and on any other server given with --server:
per server its tools, definition tokens as listed and with lean schemas on every tool (lint's local estimate of
what every request pays), and what went, by keyword. No model, no task: the schemas alone.

    python bench/lean_schemas.py [--server "CMD" …] [--json] [--write docs/figures.md]

Lean schemas (`optimizer.schema_metadata`) drop `$schema`, titles made of the name they title and JavaScript's
safe-integer bounds; `--goal shrink` puts them on every candidate. `--write` rewrites the test bed's table only
(servers given with --server are printed, not written).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

from figures import add_write_option, write
from testbed import servers

from optimizer.definitions import Candidate
from optimizer.optimize.tokens import definition_tokens
from optimizer.propose.lean import leaned
from optimizer.schema_metadata import lean_schema
from optimizer.servers import ServerError, ServerSpec, list_tools_once


def measure(name: str, command: str) -> dict[str, Any]:
    """One server's row: tools, tokens as listed and lean, and the dropped keywords counted."""
    try:
        catalog = asyncio.run(list_tools_once(ServerSpec.parse(command)))
    except ServerError as exc:
        return {"server": name, "skipped": str(exc).splitlines()[0]}
    dropped = Counter(entry.split(" at ")[0] for tool in catalog.tools
                      for entry in lean_schema(tool.name, dict(tool.input_schema)).dropped)
    return {"server": name, "tools": len(catalog.tools), "tokens": definition_tokens(catalog, Candidate()),
            "lean_tokens": definition_tokens(catalog, leaned(catalog, Candidate())),
            "dropped": dict(sorted(dropped.items()))}


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| server | tools | definition tokens → with lean schemas | saved | what goes |", "|---|---|---|---|---|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['server']} | skipped: {row['skipped']} | | | |")
            continue
        saved = 1 - row["lean_tokens"] / max(1, row["tokens"])
        what = ", ".join(f"{keyword} ×{n}" for keyword, n in row["dropped"].items()) or "nothing"
        lines.append(f"| {row['server']} | {row['tools']} | {row['tokens']:,} → {row['lean_tokens']:,} | {saved:.0%} | "
                     f"{what} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", action="append", default=[], metavar="CMD",
                        help="another server to measure (a command line), beside the test bed; repeatable")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_write_option(parser)
    args = parser.parse_args()
    bed = [measure(s.name, f"python {s.launcher}") for s in servers()]
    others = [measure(Path(command.split()[0]).name, command) for command in args.server]
    write(args.write, "lean-schemas", markdown(bed))
    if args.json:
        print(json.dumps(bed + others, indent=2))
        return
    print(markdown(bed + others))


if __name__ == "__main__":
    main()

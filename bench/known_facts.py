"""Benchmark: what `optimizer tasks generate --known FILE` adds, measured side by side in one run: the OFFLINE
generator on the same server without and with a file of facts a user knows (five or six records, one a line), on
examples/clinic (made for it: no tool lists a record, every wrong value gets "invalid value") and on test-bed
servers. Per row: tools with a task that has an answer (its calls replayed), tasks written, exploration calls, and
how many uncovered tools the output sends to --known or --explore. The known-facts table of docs/figures.md is this
script's output (`--write docs/figures.md` rewrites it).

    python bench/known_facts.py [--only NAME,…] [--json] [--write docs/figures.md]

The facts files are examples/clinic/known.txt and bench/known/<server>.txt: records a person who works with the
server would know, written once from the server's data, not tuned to a figure. published/git needs the installs
`.ci/run` makes. The generator is the OFFLINE
stand-in, not a model; seed 0; the row marked "Claude, recorded" replays two generations whose every turn a Claude
model answered (examples/clinic/recorded/, with their provenance): no key, no API call.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figures import write
from testbed import ROOT, bench_arguments, chosen_write
from typer.testing import CliRunner

from optimizer.cli import app


@dataclass(frozen=True)
class Row:
    name: str
    launcher: Path
    known: Path
    explore: str = ""
    recorded: Path | None = None
    """A folder with the recordings `generate-blind` and `generate-known`: Claude's answers, replayed."""

    @property
    def label(self) -> str:
        return self.name + (" +explore" if self.explore else "") + (" (Claude, recorded)" if self.recorded else "")


ROWS = (
    Row("clinic", ROOT / "examples/clinic/server.py", ROOT / "examples/clinic/known.txt"),
    Row("clinic", ROOT / "examples/clinic/server.py", ROOT / "examples/clinic/known.txt",
        recorded=ROOT / "examples/clinic/recorded"),
    Row("support", ROOT / "examples/support/server.py", ROOT / "bench/known/support.txt"),
    Row("support", ROOT / "examples/support/server.py", ROOT / "bench/known/support.txt", "get_policy,check_refund"),
    Row("workspace", ROOT / "examples/workspace/server.py", ROOT / "bench/known/workspace.txt"),
    Row("published/git", ROOT / "examples/published/git/serve.py", ROOT / "bench/known/git.txt"),
)


def generate(row: Row, work: Path, known: bool) -> dict[str, Any]:
    side = "known" if known else "blind"
    out = work / f"{row.label.replace(' ', '').replace('(', '').replace(')', '').replace(',', '')}-{side}"
    answers = ["--replay", str(row.recorded / f"generate-{side}")] if row.recorded else ["--offline"]
    args = ["tasks", "generate", *answers, "--server", f"{sys.executable} {row.launcher}", "--out", str(out),
            "--runs-dir", str(work / "runs"), "--json"]
    args += ["--known", str(row.known)] if known else []
    args += ["--explore", row.explore] if row.explore else []
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    if result.exit_code not in (0, 1):
        raise SystemExit(f"{row.label}: tasks generate exited {result.exit_code}: {result.stderr[-2000:]}")
    summary = json.loads(result.stdout)
    hints = [e["help"].split()[0] for e in summary["uncovered"]]
    return {"answered": summary["coverage"]["answered"], "tools": summary["coverage"]["tools"],
            "written": summary["written"], "calls": summary["calls"], "known_hints": hints.count("--known"),
            "explore_hints": sum(h in ("--explore", "--allow-destructive,") for h in hints),
            "facts": summary["known"]}


def measure(row: Row, work: Path) -> dict[str, Any]:
    return {"server": row.label, "without": generate(row, work, False), "with": generate(row, work, True)}


def _cell(side: dict[str, Any]) -> str:
    share = side["answered"] / side["tools"] if side["tools"] else 0.0
    return f"{side['answered']}/{side['tools']} ({share:.0%})"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| server | facts | tools with an answered task: without → with | tasks written | exploration calls | "
             "uncovered tools pointed to --known / --explore (without → with) |", "|---|---|---|---|---|---|"]
    for r in rows:
        blind, known = r["without"], r["with"]
        lines.append(f"| {r['server']} | {known['facts']} | {_cell(blind)} → **{_cell(known)}** | {blind['written']} "
                     f"→ {known['written']} | {blind['calls']} → {known['calls']} | {blind['known_hints']} / "
                     f"{blind['explore_hints']} → {known['known_hints']} / {known['explore_hints']} |")
    return "\n".join(lines)


def main() -> None:
    wanted, as_json = bench_arguments(__doc__, figures=True)
    chosen = [row for row in ROWS if not wanted or row.name in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(row, Path(tmp)) for row in chosen]
    write(chosen_write(), "known-facts", markdown(rows))
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print("OFFLINE — stand-in generator (no model), seed 0, except the rows marked Claude, recorded (REPLAY of a "
          "Claude model's answers); without and with --known")
    print(markdown(rows))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    main()

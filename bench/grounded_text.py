"""Benchmark: does the offline rules proposer write only what it can ground? For every server of the test bed (and
any server given with --server/--tasks), one offline `optimize` with the simulated agents as callers (test doubles
whose calls and errors make the evidence; readers call nothing, so with them there is nothing to read) and the rules
proposer. Every text the winner adds is then held against the run's own successful tool results and train prompts:

- values: ids, emails, dates, amounts, codes the results or prompts hold (`values.find_values`);
- names: capitalised words or runs the results hold that the server's own definitions do not (people, places,
  titles: "Ana", "Dune");
- leaked phrases: what the leakage guard finds of the train prompts.

    python bench/grounded_text.py [--only NAME,…] [--server CMD --tasks DIR] [--json] [--write docs/figures.md]

The same check runs on every text of every candidate the rules proposer writes from the run's baseline episodes
(round one's proposals, most of which the simulated agents cannot tell from the baseline, so they seldom win).
Printed per server: tools the winner changes, texts it adds, texts proposed, and how many hold a value, a name or
a leaked phrase (expected 0 each), with the proposed texts themselves for a reader to judge.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sim_agents  # noqa: E402, F401 - registers the simulated agents (test doubles)
from figures import add_write_option, refuse_only, write  # noqa: E402
from testbed import Server, servers  # noqa: E402

from optimizer.definitions import Candidate, Catalog, ToolEdit  # noqa: E402
from optimizer.files.store import RunStore, StoredEpisode  # noqa: E402
from optimizer.optimize import OptimizeConfig, run_optimize  # noqa: E402
from optimizer.propose.evidence import build_evidence  # noqa: E402
from optimizer.propose.leakage import leaked_phrases  # noqa: E402
from optimizer.propose.rules import RulesProposer  # noqa: E402
from optimizer.propose.safety import catalog_strings  # noqa: E402
from optimizer.review import load_review  # noqa: E402
from optimizer.tasks import load_tasks  # noqa: E402
from optimizer.text.values import find_values  # noqa: E402

AGENTS = ("sim:lexical", "sim:skim")
_CAPITALISED = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+\b")
"""A capitalised word that does not open the text or a sentence."""


def added_texts(catalog: Catalog, winner: Candidate) -> list[tuple[str, str]]:
    """(where, text) for each description or parameter description the winner sets, without the server's own
    words it keeps in front."""
    out = []
    for name, edit in sorted(winner.edits.items()):
        tool = catalog.get(name)
        pairs = [(f"{name}", edit.description, tool.description)] if edit.description else []
        pairs += [(f"{name}.{p}", text, str(tool.properties.get(p, {}).get("description") or ""))
                  for p, text in sorted((edit or ToolEdit()).parameters.items())]
        out += [(where, text.removeprefix(old).lstrip(". ").strip()) for where, text, old in pairs if text]
    return out


def baseline_episodes(run_dir: Path, candidate: str) -> list[StoredEpisode]:
    store = RunStore.open_existing(run_dir.parent, run_dir.name)
    try:
        return list(store.episodes(candidate=candidate))
    finally:
        store.close()


def proposed(catalog: Catalog, episodes: list[StoredEpisode], tasks_dir: Path) -> list[tuple[str, str]]:
    """Every text of every candidate the rules proposer writes from these episodes (round one's evidence)."""
    evidence = build_evidence(episodes, {t.id: t for t in load_tasks(tasks_dir).tasks})
    candidates = asyncio.run(RulesProposer().propose(catalog, Candidate(), evidence, k=8, seed=0))
    return sorted({pair for candidate in candidates for pair in added_texts(catalog, candidate)})


def measure(server: Server, runs: Path) -> dict[str, Any]:
    config = OptimizeConfig(server=f"{sys.executable} {server.launcher}", tasks=str(server.tasks), models=AGENTS,
                            allow_destructive=server.allow_destructive)
    summary = asyncio.run(run_optimize(config, runs_dir=runs, run_id=server.name.replace("/", "-")))
    run_dir = Path(summary["run_dir"])
    review = load_review(run_dir)
    strings = catalog_strings(review.catalog)
    episodes = baseline_episodes(run_dir, summary["baseline"]["candidate"])
    results = [str(c.get("result") or "") for e in episodes for c in e.data.get("calls") or ()
               if isinstance(c, dict) and not c.get("is_error")]
    prompts = [t.prompt for t in load_tasks(server.tasks).split("train")]
    seen_values = {f.value for text in [*results, *prompts] for f in find_values(text, 0) if f.kind != "number"}
    names = ({w for text in results for w in _CAPITALISED.findall(text)}
             - {w for text in strings for w in _CAPITALISED.findall(text)})
    def judged(texts: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [{"where": where, "text": text, "values": sorted(v for v in seen_values if v in text),
                 "names": sorted(w for w in names if re.search(rf"\b{re.escape(w)}\b", text)),
                 "leaked": leaked_phrases(text, prompts, known_text=strings)} for where, text in texts]

    rows = judged(added_texts(review.catalog, review.winner))
    offered = judged(proposed(review.catalog, episodes, server.tasks))
    return {"server": server.name, "tools_changed": len(review.changes), "texts": rows, "proposed": offered,
            **{f"with_{kind}": sum(bool(r[key]) for r in [*rows, *offered])
               for kind, key in (("value", "values"), ("name", "names"), ("leak", "leaked"))},
            "stop_reason": summary["stop_reason"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated server names (e.g. support,published/time)")
    parser.add_argument("--server", help="a server command to add (with --tasks)")
    parser.add_argument("--tasks", type=Path, help="its task folder")
    parser.add_argument("--json", action="store_true")
    add_write_option(parser)
    args = parser.parse_args()
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    refuse_only(parser, args.write, wanted)
    chosen = [s for s in servers() if not wanted or s.name in wanted]
    if args.server:
        launcher = Path(args.server.split()[-1]).resolve()
        chosen.append(Server(launcher.parent.name or "server", launcher, args.tasks.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(server, Path(tmp)) for server in chosen]
    table = ["| server | tools the winner changes | texts it adds | texts proposed | with a value from results or "
             "prompts | with a name from results | with a leaked phrase |", "|---|---|---|---|---|---|---|"]
    table += [f"| {row['server']} | {row['tools_changed']} | {len(row['texts'])} | {len(row['proposed'])} | "
              f"{row['with_value']} | {row['with_name']} | {row['with_leak']} |" for row in rows]
    write(args.write, "grounded-text", "\n".join(table))
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    print("\n".join(table))
    for row in rows:
        print(f"\n{row['server']} (proposed; the winner's are among them):")
        for text in row["proposed"]:
            flags = " ".join(f"[{k}: {', '.join(text[k])}]" for k in ("values", "names", "leaked") if text[k])
            print(f"  {text['where']}: {text['text']} {flags}".rstrip())


if __name__ == "__main__":
    main()

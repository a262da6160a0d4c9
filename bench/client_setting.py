"""Benchmark: the support example in a client's setting, measured side by side in one run (offline agents, seed 0).

    python bench/client_setting.py [--json]

1. `eval` alone and beside the workspace example (`--context-server`), plain and Claude Code naming: held-out
   and train accuracy per agent, and the cross-server confusions (episodes whose first call went to a workspace
   tool where a support tool was expected).
2. `optimize` beside the workspace example: the best train accuracy per namespace scheme in round 1 (chosen in
   context), and held-out baseline → winner in context and alone.
3. `--tool-search bm25`: every tool deferred behind a search; held-out recall (episodes whose searches found the
   expected tool) and accuracy, baseline → winner of `optimize --tool-search bm25`.
4. The same `optimize --tool-search bm25` on every other server of the test bed (workspace and the published
   servers in examples/published/, with the settings their READMEs give): held-out recall and passed, baseline
   → winner, side by side.

The models are the OFFLINE readers (reader:bm25, reader:embed): what they measure is findability — whether a tool
search or a router finds the support tool among the tools of both servers — not agent accuracy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from optimizer.config import EvalConfig
from optimizer.evaluation import run_eval
from optimizer.models import OFFLINE_DEFAULT as OFFLINE_MODELS
from optimizer.optimize import OptimizeConfig, run_optimize

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
WORKSPACE = f"{sys.executable} {ROOT / 'examples/workspace/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")


def passed(table: dict[str, Any], model: str, split: str) -> str:
    row = table[model][split]
    return f"{row['passed']}/{row['n']}"


async def measure(runs: Path) -> dict[str, Any]:
    base = {"server": SUPPORT, "tasks": TASKS, "models": tuple(OFFLINE_MODELS)}
    out: dict[str, Any] = {"eval": {}, "optimize_in_context": {}, "tool_search": {}}
    for naming in ("plain", "claude-code"):
        report = await run_eval(EvalConfig(**base, context_servers=(WORKSPACE,), client_naming=naming),
                                runs_dir=runs, run_id=f"eval-{naming}")
        out["eval"][naming] = {
            "in_context": report["results"], "alone": report["alone"]["results"],
            "cross_server": sum(r["count"] for r in report["cross_server"]),
            "top_cross_server": report["cross_server"][:3],
        }
    started = time.perf_counter()
    summary = await run_optimize(OptimizeConfig(**base, context_servers=(WORKSPACE,)), runs_dir=runs,
                                 run_id="optimize-context")
    out["optimize_in_context"] = {
        "scheme_accuracy": summary["rounds"][0]["scheme_accuracy"], "namespace": summary["winner"]["namespace"],
        "heldout": {"baseline": summary["baseline"]["heldout"], "winner": summary["winner"]["heldout"]},
        "alone": summary["alone"], "seconds": round(time.perf_counter() - started, 1),
    }
    searched = await run_optimize(OptimizeConfig(**base, tool_search="bm25"), runs_dir=runs, run_id="optimize-search")
    out["tool_search"] = {
        "recall": searched["search"],
        "heldout": {"baseline": searched["baseline"]["heldout"], "winner": searched["winner"]["heldout"]},
        "gate": searched["gate"]["passed"],
    }
    out["test_bed"] = {}
    for name, launcher, tasks, destructive in test_bed():
        summary = await run_optimize(OptimizeConfig(server=f"{sys.executable} {launcher}", tasks=str(tasks),
                                                    models=tuple(OFFLINE_MODELS), tool_search="bm25",
                                                    allow_destructive=destructive),
                                     runs_dir=runs, run_id=f"search-{name.replace('/', '-')}")
        out["test_bed"][name] = {"recall": summary["search"], "gate": summary["gate"]["passed"],
                                 "heldout": {"baseline": summary["baseline"]["heldout"],
                                             "winner": summary["winner"]["heldout"]}}
    return out


def test_bed() -> list[tuple[str, Path, Path, bool]]:
    """(name, launcher, tasks, allow destructive) of workspace and each published server of the test bed."""
    found = [("workspace", ROOT / "examples/workspace/server.py", ROOT / "examples/workspace/tasks", False)]
    for folder in sorted((ROOT / "examples/published").glob("*/")):
        if (folder / "serve.py").exists() and (folder / "tasks").is_dir():
            readme = (folder / "README.md").read_text(encoding="utf-8")
            found.append((f"published/{folder.name}", folder / "serve.py", folder / "tasks",
                          "--allow-destructive" in readme))
    return found


def show(data: dict[str, Any]) -> None:
    models = list(OFFLINE_MODELS)
    print("OFFLINE — readers (findability, not agent accuracy): " + ", ".join(models) + "; rules proposer, seed 0; "
          "support example\n")
    print("1. eval beside workspace (held-out / train passed)\n")
    print("| naming | model | alone | in context | cross-server first calls |")
    print("|---|---|---|---|---|")
    for naming, row in data["eval"].items():
        for model in models:
            alone = f"{passed(row['alone'], model, 'heldout')} / {passed(row['alone'], model, 'train')}"
            beside = f"{passed(row['in_context'], model, 'heldout')} / {passed(row['in_context'], model, 'train')}"
            print(f"| {naming} | {model} | {alone} | {beside} | {row['cross_server'] if model == models[0] else ''} |")
    opt = data["optimize_in_context"]
    schemes = ", ".join(f"{k} {v:.0%}" for k, v in sorted(opt["scheme_accuracy"].items()))
    print(f"\n2. optimize beside workspace: best train per scheme (round 1): {schemes}; winner's namespace: "
          f"{opt['namespace']} ({opt['seconds']} s)\n")
    print("| model | held-out in context, baseline → winner | held-out alone, baseline → winner |")
    print("|---|---|---|")
    for model in models:
        ctx, alone = opt["heldout"], opt["alone"]
        print(f"| {model} | {ctx['baseline'][model]['passed']}/20 → {ctx['winner'][model]['passed']}/20 | "
              f"{alone['baseline'][model]['passed']}/20 → {alone['winner'][model]['passed']}/20 |")
    search = data["tool_search"]
    print("\n3. --tool-search bm25 (optimize searched too): held-out, baseline → winner\n")
    print("| model | recall (expected tool found) | passed |")
    print("|---|---|---|")
    for model in models:
        before, after = search["recall"]["baseline"][model], search["recall"]["winner"][model]
        print(f"| {model} | {before['found']}/{before['n']} ({before['recall']:.0%}) → {after['found']}/{after['n']} "
              f"({after['recall']:.0%}) | {search['heldout']['baseline'][model]['passed']}/20 → "
              f"{search['heldout']['winner'][model]['passed']}/20 |")
    print(f"\ngate with tool search: {'PASSED' if search['gate'] else 'FAILED'}")
    print("\n4. --tool-search bm25 across the test bed: held-out recall and passed, baseline → winner\n")
    print("| server | " + " | ".join(f"{m} recall | {m} passed" for m in models) + " | gate |")
    print("|---|" + "---|---|" * len(models) + "---|")
    for name, row in data["test_bed"].items():
        cells = []
        for model in models:
            before, after = row["recall"]["baseline"][model], row["recall"]["winner"][model]
            n = before["n"]
            cells += [f"{before['found']}/{n} → {after['found']}/{n}",
                      f"{row['heldout']['baseline'][model]['passed']} → {row['heldout']['winner'][model]['passed']}"]
        print(f"| {name} | " + " | ".join(cells) + f" | {'PASSED' if row['gate'] else 'FAILED'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = asyncio.run(measure(Path(tmp)))
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        show(data)


if __name__ == "__main__":
    main()

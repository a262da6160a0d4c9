"""Benchmark: the support example in a client's setting, measured side by side in one run (offline readers, seed 0).

    python bench/client_setting.py [--json] [--write docs/figures.md]

1. `eval` alone and beside the workspace example (`--context-server`), plain and Claude Code naming: held-out
   and train findability per reader, and the cross-server confusions (tasks whose top hit was a workspace tool
   where a support tool was expected).
2. `optimize` beside the workspace example: the best train accuracy per namespace scheme in round 1 (chosen in
   context), and held-out baseline → winner in context and alone.

A tool search itself is what `reader:bm25` is; agents behind one (`--tool-search bm25`) need a model to measure.

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

from figures import add_write_option, write

from optimizer.evaluation import run_eval
from optimizer.models import OFFLINE_DEFAULT as OFFLINE_MODELS
from optimizer.models import offline_banner
from optimizer.optimize import OptimizeConfig, run_optimize
from optimizer.run.config import EvalConfig

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
WORKSPACE = f"{sys.executable} {ROOT / 'examples/workspace/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")


def passed(table: dict[str, Any], model: str, split: str) -> str:
    row = table[model][split]
    return f"{row['passed']}/{row['n']}"


async def measure(runs: Path) -> dict[str, Any]:
    base = {"server": SUPPORT, "tasks": TASKS, "models": tuple(OFFLINE_MODELS)}
    out: dict[str, Any] = {"eval": {}, "optimize_in_context": {}}
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
    return out


def show(data: dict[str, Any]) -> str:
    models = list(OFFLINE_MODELS)
    out: list[str] = []
    say = out.append
    say(offline_banner(models) + " Rules proposer, seed 0; support example.\n")
    say("1. eval beside workspace (held-out / train passed)\n")
    say("| naming | model | alone | in context | cross-server first calls |")
    say("|---|---|---|---|---|")
    for naming, row in data["eval"].items():
        for model in models:
            alone = f"{passed(row['alone'], model, 'heldout')} / {passed(row['alone'], model, 'train')}"
            beside = f"{passed(row['in_context'], model, 'heldout')} / {passed(row['in_context'], model, 'train')}"
            say(f"| {naming} | {model} | {alone} | {beside} | {row['cross_server'] if model == models[0] else ''} |")
    opt = data["optimize_in_context"]
    schemes = ", ".join(f"{k} {v:.0%}" for k, v in sorted(opt["scheme_accuracy"].items()))
    say(f"\n2. optimize beside workspace: best train per scheme (round 1): {schemes}; winner's namespace: "
        f"{opt['namespace']} ({opt['seconds']} s)\n")
    say("| model | held-out in context, baseline → winner | held-out alone, baseline → winner |")
    say("|---|---|---|")
    for model in models:
        ctx, alone = opt["heldout"], opt["alone"]
        say(f"| {model} | {ctx['baseline'][model]['passed']}/20 → {ctx['winner'][model]['passed']}/20 | "
            f"{alone['baseline'][model]['passed']}/20 → {alone['winner'][model]['passed']}/20 |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_write_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = asyncio.run(measure(Path(tmp)))
    write(args.write, "client-setting", show(data))
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(show(data))


if __name__ == "__main__":
    main()

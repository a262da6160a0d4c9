"""Benchmark: what the search costs against evaluating every combination, the cache on a re-run, and
the wall time of the offline example runs — measured side by side in one run.

For each example, `optimize --offline --models sim:lexical,sim:skim` runs with the default settings: the simulated
agents are the callers here (test doubles whose calls and errors give the rules proposer something to write, so a
search happens); what they pass is no quality figure and is not printed. From the stored studies it
reports the episodes the search spent until its best trial finished, against the episodes a full
grid over the same pool would need (every combination × train tasks × models, ignoring that some
combinations expose identical definitions). It then re-runs the finished run (`--resume`) and
reports the share of episodes served from the cache (target 100%).

    python bench/optimize_search.py [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import sim_agents  # noqa: F401 - registers the simulated agents (test doubles)
from figures import add_write_option, write

from optimizer.optimize import OptimizeConfig, run_optimize
from optimizer.search.pool import combinations
from optimizer.search.study import load_trials, study_setup

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("sim:lexical", "sim:skim")


def round_costs(storage: str, run_id: str, rounds: int, episodes_per_candidate: int) -> list[dict[str, int]]:
    rows = []
    for number in range(1, rounds + 1):
        study = f"optimize-{run_id}-r{number}"
        try:
            pool, _ = study_setup(storage, study)
        except Exception:  # noqa: BLE001 - a round that never ran (the loop stopped early)
            continue
        trials = [t for t in load_trials(storage, study) if t["state"] in ("COMPLETE", "PRUNED")]
        complete = [t for t in trials if t["state"] == "COMPLETE"]
        best = max(complete, key=lambda t: (t["values"][0], -t["number"]))
        to_best = sum(t["user_attrs"].get("episodes", 0) for t in trials if t["number"] <= best["number"])
        total = sum(t["user_attrs"].get("episodes", 0) for t in trials)
        grid = combinations(pool) * episodes_per_candidate
        rows.append({"round": number, "trials": len(trials), "to_best": to_best, "total": total, "grid": grid,
                     "combinations": combinations(pool)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_write_option(parser)
    args = parser.parse_args()
    table = ["| example | wall time | round | trials | pool combinations | episodes to best trial | "
             "episodes in the search | full grid | re-run cached |", "|---|---|---|---|---|---|---|---|---|"]
    print("simulated agents as callers (test doubles: sim:lexical, sim:skim), rules proposer, default settings")
    print(f"{'example':>10} {'wall s':>7} {'round':>5} {'trials':>6} {'combos':>8} {'to best':>8} {'search':>7} "
          f"{'full grid':>10} {'grid/search':>11} {'re-run cached':>13}")
    for example in ("support", "workspace"):
        with tempfile.TemporaryDirectory() as tmp:
            runs = Path(tmp)
            config = OptimizeConfig(server=f"{sys.executable} {ROOT / 'examples' / example / 'server.py'}",
                                    tasks=str(ROOT / "examples" / example / "tasks"), models=AGENTS)
            started = time.perf_counter()
            summary = asyncio.run(run_optimize(config, runs_dir=runs, run_id=example))
            wall = time.perf_counter() - started
            again = asyncio.run(run_optimize(None, runs_dir=runs, resume=example))
            done = again["episodes"]
            cached = done["cached"] / max(1, done["cached"] + done["run"])
            per_candidate = summary["splits"]["train"] * len(summary["models"])
            storage = f"sqlite:///{runs / example / 'run.db'}"
            for i, row in enumerate(round_costs(storage, example, config.rounds, per_candidate)):
                ratio = row["grid"] / max(1, row["total"])
                print(f"{example:>10} {wall:>7.1f} {row['round']:>5} {row['trials']:>6} {row['combinations']:>8} "
                      f"{row['to_best']:>8} {row['total']:>7} {row['grid']:>10} {ratio:>11.1f} {cached:>13.0%}")
                table.append(f"| {example} | {'' if i else f'{wall:.1f} s'} | {row['round']} | "
                             f"{row['trials']} | {row['combinations']:,} | {row['to_best']:,} | {row['total']:,} | "
                             f"{row['grid']:,} | {cached:.0%} |")
    write(args.write, "optimize-search", "\n".join(table))


if __name__ == "__main__":
    main()

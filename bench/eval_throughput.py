"""Benchmark: eval throughput, tool-call round trip and memory, measured side by side in one run.

Runs about 400 episodes of `sim:lexical?latency_ms=50` (an offline agent that sleeps like an API
call) against the support example over stdio, once at --max-connections 1 and once at 16, and
prints: wall time against the ideal (total model latency ÷ connections), the median tool-call
round trip, harness CPU per episode excluding model latency, and peak memory.

    python bench/eval_throughput.py [--episodes 400] [--latency-ms 50] [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sim_agents  # noqa: F401 - registers the simulated agents (test doubles)
from figures import add_write_option, write

from optimizer.evaluation import run_eval
from optimizer.files.store import RunStore
from optimizer.run.config import EvalConfig
from optimizer.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = ROOT / "examples/support/tasks"


def measure(connections: int, episodes: int, latency_ms: float, runs_dir: Path) -> dict[str, float]:
    n_tasks = len(load_tasks(TASKS).tasks)
    epochs = math.ceil(episodes / n_tasks)
    config = EvalConfig(server=SERVER, tasks=str(TASKS), models=(f"sim:lexical?latency_ms={latency_ms:g}",),
                        epochs=epochs, max_connections=connections)
    run_id = f"bench-{connections}"
    marks: dict[str, float] = {}

    def started(_run: object, _total: int) -> None:
        marks["cpu"], marks["wall"] = time.process_time(), time.perf_counter()

    def finished(_outcome: object) -> None:
        marks["end_cpu"], marks["end"] = time.process_time(), time.perf_counter()

    begin = time.perf_counter()
    asyncio.run(run_eval(config, runs_dir=runs_dir, run_id=run_id, on_start=started, progress=finished))
    wall, cpu = marks["end"] - marks["wall"], marks["end_cpu"] - marks["cpu"]
    store = RunStore.open_existing(runs_dir, run_id)
    eps = list(store.episodes())
    store.close()
    turns = sum(e.data["turns"] for e in eps)
    ideal = turns * latency_ms / 1000 / connections
    calls = [c["duration_s"] for e in eps for c in e.data["calls"]]
    return {
        "episodes": len(eps), "turns": turns, "wall_s": wall, "ideal_s": ideal, "fraction": ideal / wall,
        "median_call_ms": statistics.median(calls) * 1000 if calls else 0.0,
        "cpu_ms_per_episode": cpu * 1000 / max(1, len(eps)), "startup_s": marks["wall"] - begin,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    add_write_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = {c: measure(c, args.episodes, args.latency_ms, Path(tmp)) for c in (1, 16)}
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"offline agent sim:lexical (simulated; {args.latency_ms:g} ms per turn), support example over stdio")
    print("wall time runs from the first episode's start to the last one's end (server start-up apart)")
    print(f"{'connections':>11} {'episodes':>8} {'turns':>6} {'start s':>7} {'wall s':>8} {'ideal s':>8} "
          f"{'of ideal':>8} {'call p50 ms':>11} {'cpu ms/ep':>9}")
    for c, r in rows.items():
        print(f"{c:>11} {r['episodes']:>8} {r['turns']:>6} {r['startup_s']:>7.2f} {r['wall_s']:>8.2f} "
              f"{r['ideal_s']:>8.2f} {r['fraction']:>8.2f} {r['median_call_ms']:>11.2f} "
              f"{r['cpu_ms_per_episode']:>9.2f}")
    print(f"speed-up 16 vs 1: {rows[1]['wall_s'] / rows[16]['wall_s']:.1f}x")
    print(f"peak memory: harness {peak_mb:.0f} MB, largest server process {child_mb:.0f} MB")
    table = ["| connections | episodes | model turns | wall s | ideal s | of ideal | tool call p50 | "
             "harness CPU / episode |", "|---|---|---|---|---|---|---|---|"]
    table += [f"| {c} | {r['episodes']} | {r['turns']} | {r['wall_s']:.2f} | {r['ideal_s']:.2f} | "
              f"{r['fraction']:.2f} | {r['median_call_ms']:.1f} ms | {r['cpu_ms_per_episode']:.1f} ms |"
              for c, r in rows.items()]
    table += ["", f"Offline agent sim:lexical with {args.latency_ms:g} ms simulated latency per turn, support "
              f"example over stdio. Starting the server pool took {rows[1]['startup_s']:.1f} s and "
              f"{rows[16]['startup_s']:.1f} s more, shown apart. Speed-up from 1 to 16 connections: "
              f"{rows[1]['wall_s'] / rows[16]['wall_s']:.1f}×. Peak memory: {peak_mb:.0f} MB for the harness, "
              f"{child_mb:.0f} MB for the largest server process."]
    write(args.write, "eval-throughput", "\n".join(table))


if __name__ == "__main__":
    main()

"""Benchmark: Claude models through the real `anthropic` SDK against the local fake Messages API.

Starts the fake (tests/fakes/anthropic_api.py) as its own process with a fixed reply latency and the
offline agent's choices as its policy, then measures side by side in one run:
- eval throughput at --max-connections 16: wall time against the ideal (turns × latency ÷ 16);
- the share of input tokens read from the prompt cache, for that eval and for an optimize run
  (Claude task models, the rules proposer);
- tokens and dollars per episode as the report prices them (list prices from optimizer/cost/prices.json).

Every figure comes from the fake, not from Claude: it shows what the harness does with a real API's
latency, caching and wire format, not how well Claude chooses tools.

    python bench/claude_fake.py [--latency-ms 200] [--connections 16] [--epochs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from optimizer.evaluation import run_eval
from optimizer.files.store import RunStore
from optimizer.optimize import OptimizeConfig, run_optimize
from optimizer.optimize.outputs import cost
from optimizer.run.config import EvalConfig

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
MODEL = "claude-haiku-5-5"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_fake(latency_ms: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.anthropic_api", "--port", str(port),
                             "--latency-ms", str(latency_ms), "--policy", "sim"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the fake API did not start")


def stored(runs_dir: Path, run_id: str) -> list[Any]:
    store = RunStore.open_existing(runs_dir, run_id)
    try:
        return list(store.episodes())
    finally:
        store.close()


def cache_share(episodes: list[Any]) -> float:
    read = sum(e.data["usage"]["cache_read_tokens"] for e in episodes)
    total = read + sum(e.data["usage"]["input_tokens"] + e.data["usage"]["cache_write_tokens"] for e in episodes)
    return read / total if total else 0.0


def throughput(runs_dir: Path, connections: int, epochs: int, latency_ms: float) -> dict[str, float]:
    config = EvalConfig(server=SERVER, tasks=TASKS, models=(MODEL,), epochs=epochs, max_connections=connections)
    marks: dict[str, float] = {}

    def started(_run: object, _total: int) -> None:
        marks["start"] = time.perf_counter()

    def finished(_outcome: object) -> None:
        marks["end"] = time.perf_counter()

    asyncio.run(run_eval(config, runs_dir=runs_dir, run_id="eval", on_start=started, progress=finished))
    episodes = stored(runs_dir, "eval")
    turns = sum(e.data["turns"] for e in episodes)
    wall = marks["end"] - marks["start"]
    ideal = turns * latency_ms / 1000 / connections
    priced = cost(episodes)
    return {"episodes": len(episodes), "turns": turns, "wall_s": wall, "ideal_s": ideal, "fraction": ideal / wall,
            "cache_share": cache_share(episodes), "usd": priced["usd"],
            "tokens": priced["input_tokens"] + priced["cache_read_tokens"] + priced["cache_write_tokens"]
            + priced["output_tokens"]}


def optimize_cache(runs_dir: Path, connections: int) -> dict[str, float]:
    config = OptimizeConfig(server=SERVER, tasks=TASKS, models=(MODEL, "claude-sonnet-5-5"), proposer="rules",
                            rounds=1, trials=6, max_connections=connections)
    summary = asyncio.run(run_optimize(config, runs_dir=runs_dir, run_id="optimize"))
    episodes = stored(runs_dir, "optimize")
    return {"episodes": len(episodes), "cache_share": cache_share(episodes), "usd": summary["cost"]["usd"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=7, help="7 x 66 tasks = 462 episodes, as in eval_throughput")
    args = parser.parse_args()
    proc, base_url = start_fake(args.latency_ms)
    os.environ.update({"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "bench-not-a-real-key"})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = Path(tmp)
            t = throughput(runs, args.connections, args.epochs, args.latency_ms)
            o = optimize_cache(runs, args.connections)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"Claude through the fake Messages API ({args.latency_ms:g} ms per reply; figures are the harness's, "
          "not Claude's)")
    print(f"eval, {MODEL}, {t['episodes']} episodes / {t['turns']} turns at {args.connections} connections: "
          f"{t['wall_s']:.2f} s vs ideal {t['ideal_s']:.2f} s -> {t['fraction']:.2f} of ideal (target >= 0.85)")
    print(f"prompt cache: eval {t['cache_share']:.1%} of input tokens read from cache; optimize "
          f"({o['episodes']} episodes, 2 models) {o['cache_share']:.1%} (target >= 70%)")
    print(f"per episode: {t['tokens'] / t['episodes']:,.0f} tokens, USD {t['usd'] / t['episodes']:.5f} "
          f"({MODEL} list prices); optimize run USD {o['usd']:.4f} in all")


if __name__ == "__main__":
    main()

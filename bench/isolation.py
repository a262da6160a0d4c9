"""Benchmark: what `--isolate` costs and changes, measured side by side in one run. For every server of the test
bed whose tools may change state (the published servers run with --allow-destructive), offline `optimize` twice:
episodes sharing server processes (the default: later episodes see earlier writes), then `--isolate` (an episode
about to write waits to have its process alone, which is restarted after it). Printed per server: the episodes
that changed state and the wall times with their ratio. Isolation is about agents that call tools, so the callers
here are the simulated agents (test doubles: what they pass is no quality figure and is not printed).

    python bench/isolation.py [--only NAME,…] [--json]

OFFLINE: simulated agents and the rules proposer, seed 0, default settings otherwise.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from testbed import bench_arguments, measure, servers  # noqa: E402

AGENTS = ("sim:lexical", "sim:skim")


def main() -> None:
    wanted, as_json = bench_arguments(__doc__ or "")
    chosen = [s for s in servers() if s.allow_destructive and (not wanted or s.name in wanted)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for server in chosen:
            shared = measure(server, Path(tmp), models=AGENTS)
            isolated = measure(server, Path(tmp), isolate=True, models=AGENTS)
            rows.append({"server": server.name, "shared": shared, "isolated": isolated})
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print("OFFLINE — simulated agents, rules proposer, seed 0: shared server processes vs --isolate")
    print("| server | episodes that changed state | wall s shared | wall s isolated | ratio |")
    print("|---" * 5 + "|")
    for row in rows:
        shared, isolated = row["shared"], row["isolated"]
        if "skipped" in shared or "skipped" in isolated:
            print(f"| {row['server']} | skipped: {shared.get('skipped') or isolated.get('skipped')} |")
            continue
        print(f"| {row['server']} | {shared['changed_state']} of {shared['episodes_run']} | "
              f"{shared['wall_s']} | {isolated['wall_s']} | {isolated['wall_s'] / max(0.1, shared['wall_s']):.1f}× |")


if __name__ == "__main__":
    main()

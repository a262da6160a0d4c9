"""Benchmark: the cost estimate beside what runs cost — every bundled real-model recording.

For each recording (README's first command on payroll, freight's optimize, the support evals, and every recording of
the published servers' test bed), the command it was made with runs again with `--dry-run --json` (the server
answers, the tasks are checked, nothing is sent to a model) and its estimate — as sent, the recordings' endpoint
having reported no cache use — is set beside the recorded run's actual cost: the `cost.usd` its outcome holds, or,
for an eval (whose report has none), its recorded answers priced one by one. The actual must fall inside the range.

    python bench/estimates.py [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from figures import add_write_option, write

from optimizer.cost.prices import PriceTable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from recorded_runs import RUNS  # noqa: E402
from testbed_real import FLAGS, PUBLISHED, command  # noqa: E402

FREIGHT = ROOT / "examples/freight"


def recordings() -> list[tuple[str, Path, list[str]]]:
    """(label, recording folder, the command that replays it) for every bundled recording."""
    found = [(label, Path(argv[argv.index("--replay") + 1]), argv) for label, _, argv in RUNS]
    found.append(("freight optimize", FREIGHT / "recorded/optimize", [
        "optimize", "--server", f"{sys.executable} {FREIGHT / 'server.py'}", "--tasks", str(FREIGHT / "tasks"),
        "--replay", str(FREIGHT / "recorded/optimize"), "--trials", "8", "--heldout-candidates", "2"]))
    for name in sorted(FLAGS):
        for folder in ("optimize", "optimize-shrink", "eval-original", "eval-winner"):
            if (PUBLISHED / name / "recorded" / folder / "answers.jsonl").is_file():
                found.append((f"published/{name} {folder}", PUBLISHED / name / "recorded" / folder,
                              command(name, folder)))
    return found


def estimated(argv: list[str], runs: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    done = subprocess.run([*argv, "--dry-run", "--json", "--runs-dir", str(runs)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:2])} --dry-run: exit {done.returncode}\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout)["estimate"])


def actual(recording: Path) -> float:
    """What the recorded run cost at list prices: its outcome's cost, else its answers priced one by one."""
    outcome = json.loads((recording / "outcome.json").read_text(encoding="utf-8"))
    if isinstance(outcome.get("cost"), dict):
        return float(outcome["cost"]["usd"])
    prices = PriceTable.default()
    total = 0.0
    for line in (recording / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        usage = entry["reply"].get("usage") or {}
        total += prices.usd(entry["about"]["model"], {
            "input_tokens": usage.get("input_tokens"), "output_tokens": usage.get("output_tokens"),
            "cache_read_tokens": usage.get("cache_read_input_tokens"),
            "cache_write_tokens": usage.get("cache_creation_input_tokens")}) or 0.0
    return total


def measure() -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, recording, argv in recordings():
            found = estimated(argv, Path(tmp))
            low, high = found["usd"]
            cost = actual(recording)
            rows.append({"run": label, "episodes": found["episodes"], "low": low, "high": high, "actual": cost,
                         "cached": found["usd_cached"], "inside": low <= cost <= high})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| recording | episodes estimated | estimate USD (as sent) | actual USD | inside | with prompt caching |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['run']} | {r['episodes'][0]:,} – {r['episodes'][1]:,} | {r['low']:.2f} – {r['high']:.2f} "
                     f"| {r['actual']:.2f} | {'yes' if r['inside'] else '**no**'} | {r['cached'][0]:.2f} – "
                     f"{r['cached'][1]:.2f} |")
    inside = sum(r["inside"] for r in rows)
    lines += ["", f"{inside} of {len(rows)} actual costs inside their estimate."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_write_option(parser)
    args = parser.parse_args()
    rows = measure()
    table = markdown(rows)
    write(args.write, "estimates", table)
    print(table)
    if not all(r["inside"] for r in rows):
        raise SystemExit("an actual cost fell outside its estimate")


if __name__ == "__main__":
    main()

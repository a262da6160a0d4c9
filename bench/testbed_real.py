"""The test bed under a real model: the published servers' recorded `optimize` runs (and whole-conversation evals),
replayed with no key — `python bench/testbed.py --replay`.

Each folder `examples/published/NAME/recorded/` may hold `optimize/` (the default goal), `optimize-shrink/`
(`--goal shrink`) and `eval-original/`, `eval-winner/` (held-out in whole conversations, the server's own
definitions and the shipped winner's). Every answer in them was written by a Claude model (their provenance says
how); the replay re-runs the servers, the scoring, the search, the gate and the report. Per server:

- held-out passed, baseline → what ships; clean first calls (the first call is the first expected tool and the server
  answered it without an error); failed calls per task (a first-call agent's: the share of first calls refused);
- definition tokens, baseline → what ships; the gate's verdict; what shipped (the winner, or the server's own
  definitions when the winner only added tokens, or nothing to fix);
- the shrink: tokens saved at non-inferior held-out accuracy (its gate's verdict);
- what the recorded run would have cost at list prices: as recorded (the answering endpoint reported no cache use),
  and with the prompt caching the product asks for (`with_caching`: every request's tool definitions and system
  prompt read from the cache but the first of its model and definition set, which writes it);
- with whole-conversation evals: calls and failed calls per task, the server's own definitions → the winner's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from optimizer.cost.prices import PriceTable
from optimizer.files.store import RunStore, StoredEpisode
from optimizer.stats.efficiency import EpisodeCost, efficiency_cell

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "examples" / "published"
FLAGS = {"filesystem": ["--allow-destructive", "--isolate"], "memory": ["--allow-destructive", "--isolate"],
         "sqlite": ["--isolate"], "time": [], "git": ["--isolate"], "excel": ["--allow-destructive", "--isolate"]}
"""The flags each server's runs were recorded with (its README gives the same commands)."""
RECORDED = ("--models", "claude-sonnet-5-5", "--proposer", "claude-opus-5-5")


def command(name: str, folder: str) -> list[str]:
    """The command a recording was made with, replaying it."""
    server = f"{sys.executable} {PUBLISHED / name / 'serve.py'}"
    tasks = str(PUBLISHED / name / "tasks")
    replay = ["--replay", str(PUBLISHED / name / "recorded" / folder)]
    if folder.startswith("eval-"):
        overlay = ["--overlay", str(PUBLISHED / name / "recorded" / "winner-overlay.json")] if folder == "eval-winner" \
            else []
        return ["optimizer", "eval", "--server", server, "--tasks", tasks, "--split", "heldout", "--models",
                "claude-sonnet-5-5", *FLAGS[name], *overlay, *replay]
    goal = ["--goal", "shrink"] if folder == "optimize-shrink" else []
    return ["optimize", "--server", server, "--tasks", tasks, *RECORDED, *FLAGS[name], *goal,
            *rounds_flag(PUBLISHED / name / "recorded" / folder), *replay]


def rounds_flag(recording: Path) -> list[str]:
    """`--rounds N` when the recording was made with a fixed number of rounds (its outcome's `rounds_setting`), else
    nothing: the default, `auto`."""
    outcome = recording / "outcome.json"
    setting = json.loads(outcome.read_text(encoding="utf-8")).get("rounds_setting", "auto") if outcome.is_file() \
        else "auto"
    return [] if setting == "auto" else ["--rounds", str(setting)]


COMPARED = {"optimize": ("baseline", "winner", "candidates", "definition_tokens", "stop", "refused_left"),
            "eval": ("results", "confusion")}
"""What a replay must give as its recording's outcome.json holds it (a recording keeps the figures of the release
that made it; later releases may add keys, never change these)."""


def differences(replayed: Any, recorded: Any, where: str = "") -> list[str]:
    """Where `replayed` differs from `recorded`, as dotted paths: every key `recorded` holds, lists item by item."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        return [d for key, value in recorded.items()
                for d in differences(replayed.get(key, _MISSING), value, f"{where}.{key}".lstrip("."))]
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        pairs = enumerate(zip(replayed, recorded, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{where}[{i}]")]
    return [] if replayed == recorded else [f"{where}: recorded {recorded!r}, replayed {replayed!r}"[:300]]


_MISSING = object()


def disagreements(folder: str, replayed: dict[str, Any], recording: Path) -> list[str]:
    """What of a replay's results (summary.json or eval.json) differs from its recording's outcome.json."""
    outcome = json.loads((recording / "outcome.json").read_text(encoding="utf-8"))
    keys = COMPARED["eval" if folder.startswith("eval-") else "optimize"]
    found = [d for key in keys if key in outcome for d in differences(replayed.get(key), outcome[key], key)]
    if "gate" in outcome and replayed["gate"]["passed"] != outcome["gate"]["passed"]:
        found.append(f"gate.passed: recorded {outcome['gate']['passed']}, replayed {replayed['gate']['passed']}")
    return found


def run(argv: list[str], runs: Path, run_id: str) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    done = subprocess.run([*argv, "--runs-dir", str(runs), "--run-id", run_id], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:2])} {run_id}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return runs / run_id


def episodes(run_dir: Path) -> list[StoredEpisode]:
    store = RunStore.open_existing(run_dir.parent, run_dir.name)
    try:
        return list(store.episodes())
    finally:
        store.close()


def clean_first(episode: StoredEpisode) -> bool:
    calls = episode.data.get("calls") or []
    expected = episode.data.get("expected_tools") or []
    return bool(calls and expected) and calls[0].get("original") == expected[0] and not calls[0].get("is_error")


def heldout_of(all_episodes: list[StoredEpisode], candidate: str) -> dict[str, Any]:
    mine = [e for e in all_episodes if e.split == "heldout" and e.candidate == candidate and e.status != "infra_error"]
    paid = efficiency_cell(EpisodeCost.of(e.data) for e in mine)
    return {"passed": sum(e.passed for e in mine), "n": len(mine), "clean": sum(clean_first(e) for e in mine),
            "calls": paid["calls_per_task"], "failed": paid["failed_calls_per_task"]}


def costs(summary: dict[str, Any], all_episodes: list[StoredEpisode],
          catalog_tokens: dict[str, int]) -> dict[str, float]:
    """USD as recorded, and with the definitions cached (see the module docstring). `catalog_tokens`: candidate key
    -> its definition tokens."""
    prices = PriceTable.default()
    recorded = float(summary["cost"]["usd"])
    saved = 0.0
    groups: dict[tuple[str, str], list[StoredEpisode]] = defaultdict(list)
    for episode in all_episodes:
        groups[(episode.model, episode.candidate)].append(episode)
    for (model, candidate), members in groups.items():
        cacheable = catalog_tokens.get(candidate, 0)
        requests = sum(int(e.data.get("turns") or 0) for e in members)
        if not cacheable or requests < 2:
            continue
        plain = prices.usd(model, {"input_tokens": cacheable * requests}) or 0.0
        cached = prices.usd(model, {"cache_write_tokens": cacheable, "cache_read_tokens": cacheable * (requests - 1)})
        saved += plain - (cached or 0.0)
    return {"recorded": round(recorded, 2), "with_caching": round(recorded - saved, 2)}


def replay(name: str, folder: str, runs: Path, row: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """Replay one recording; its results (summary.json or eval.json), with what differs from the recording's outcome
    added to row["disagreements"]."""
    run_dir = run(command(name, folder), runs, f"{name}-{folder}")
    results = json.loads((run_dir / ("eval.json" if folder.startswith("eval-") else "summary.json"))
                         .read_text(encoding="utf-8"))
    row.setdefault("disagreements", []).extend(
        f"{folder}: {d}" for d in disagreements(folder, results, PUBLISHED / name / "recorded" / folder))
    return run_dir, results


def shipped_tokens(summary: dict[str, Any]) -> int:
    tokens = summary["definition_tokens"]
    return int(tokens["winner"] if summary["shipped"]["candidate"] == summary["winner"]["candidate"]
               else tokens["baseline"])


def shipped_label(summary: dict[str, Any]) -> str:
    """What the run ships: nothing to fix (the baseline passed every train task), the server's own definitions (no
    candidate did better, or the winner only added tokens), or the winner."""
    if summary["shipped"]["nothing_to_fix"]:
        return "nothing to fix"
    return "own definitions" if summary["shipped"]["candidate"] == summary["baseline"]["candidate"] else "winner"


def measure(name: str, runs: Path) -> dict[str, Any] | None:
    home = PUBLISHED / name / "recorded"
    if not (home / "optimize").is_dir():
        return None
    row: dict[str, Any] = {"server": f"published/{name}"}
    run_dir, summary = replay(name, "optimize", runs, row)
    found = episodes(run_dir)
    row["before"] = heldout_of(found, summary["baseline"]["candidate"])
    row["after"] = heldout_of(found, summary["shipped"]["candidate"])
    row["tokens"] = (summary["definition_tokens"]["baseline"], shipped_tokens(summary))
    row["gate"] = "PASSED" if summary["gate"]["passed"] else "FAILED"
    row["shipped"] = shipped_label(summary)
    row["rounds"] = f"{len(summary['rounds'])} ({summary['stop']['rule']})"
    tokens = {summary["baseline"]["candidate"]: summary["definition_tokens"]["baseline"],
              summary["winner"]["candidate"]: summary["definition_tokens"]["winner"]}
    tokens.update({c["id"]: c["tokens"] for c in summary.get("candidates", [])})
    row["cost"] = costs(summary, found, tokens)
    if (home / "optimize-shrink").is_dir():
        shrink_dir, shrink = replay(name, "optimize-shrink", runs, row)
        shrunk = episodes(shrink_dir)
        was, now = (heldout_of(shrunk, shrink[side]["candidate"]) for side in ("baseline", "shipped"))
        row["shrink"] = {"tokens": (shrink["definition_tokens"]["baseline"], shipped_tokens(shrink)),
                         "heldout": (was["passed"], now["passed"], now["n"]),
                         "gate": "PASSED" if shrink["gate"]["passed"] else "FAILED",
                         "rounds": rounds_flag(home / "optimize-shrink")}
    if (home / "eval-original").is_dir() and (home / "eval-winner").is_dir():
        row["conversations"] = {}
        for side in ("original", "winner"):
            eval_dir, data = replay(name, f"eval-{side}", runs, row)
            row["conversations"][side] = heldout_of(episodes(eval_dir), data["candidate"])
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| server | held-out passed | clean first calls | failed calls / task | definition tokens | gate | "
             "ships | rounds (stop) | shrink: tokens (held-out, gate) | cost USD (with caching) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        b, a, t = row["before"], row["after"], row["tokens"]
        cells = [row["server"], f"{b['passed']}/{b['n']} → {a['passed']}/{a['n']}", f"{b['clean']} → {a['clean']}",
                 f"{b['failed']:.2f} → {a['failed']:.2f}", f"{t[0]:,} → {t[1]:,}", row["gate"], row["shipped"],
                 row["rounds"], _shrunk(row.get("shrink")),
                 f"{row['cost']['recorded']:.2f} ({row['cost']['with_caching']:.2f})"]
        lines.append("| " + " | ".join(cells) + " |")
    conversations = [r for r in rows if r.get("conversations")]
    if conversations:
        lines += ["", "Held-out in whole conversations (a fresh reader per turn), the server's own definitions → the "
                  "winner's (shipped, or held back by do no harm):", "",
                  "| server | winner | passed | calls / task | failed calls / task |", "|---|---|---|---|---|"]
        for row in conversations:
            o, w = row["conversations"]["original"], row["conversations"]["winner"]
            held = "shipped" if row["shipped"] == "winner" else "held back"
            lines.append(f"| {row['server']} | {held} | {o['passed']}/{o['n']} → {w['passed']}/{w['n']} | "
                         f"{o['calls']:.2f} → {w['calls']:.2f} | {o['failed']:.2f} → {w['failed']:.2f} |")
    return "\n".join(lines)


def _shrunk(shrink: dict[str, Any] | None) -> str:
    if not shrink:
        return "–"
    (t0, t1), (h0, h1, n) = shrink["tokens"], shrink["heldout"]
    fixed = f", {' '.join(shrink['rounds'])}" if shrink.get("rounds") else ""
    return f"{t0:,} → {t1:,} ({h0}/{n} → {h1}/{n}, {shrink['gate']}{fixed})"


def replay_all(runs: Path, wanted: set[str]) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(FLAGS):
        if wanted and f"published/{name}" not in wanted:
            continue
        row = measure(name, runs)
        if row is not None:
            rows.append(row)
    return rows

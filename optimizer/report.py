"""The outputs of an optimization run: summary.json (stable keys, machine-readable), report.md (for
people), overlay.json and winning.patch — all written atomically into the run directory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from optimizer.definitions import Candidate
from optimizer.evaluate import EvalResult
from optimizer.loop import Outcome, Scored
from optimizer.patch import definitions_diff, save_overlay
from optimizer.scoring import accuracy_table, confusion
from optimizer.store import StoredEpisode, atomic_write

OFFLINE_BANNER = "OFFLINE — results from simulated agents (sim:*), stand-ins for real models."


def split_table(result: EvalResult, models: Iterable[str]) -> dict[str, dict[str, Any]]:
    """model -> {accuracy, passed, n} over one evaluation (one split)."""
    table = accuracy_table((o.model, o.split, o.passed) for o in result.outcomes)
    out = {}
    for model in models:
        rows = table.get(model, {})
        passed = sum(r["passed"] for r in rows.values())
        n = sum(r["n"] for r in rows.values())
        out[model] = {"accuracy": round(passed / n, 4) if n else 0.0, "passed": passed, "n": n}
    return out


def _side(scored: Scored, heldout: EvalResult, models: list[str]) -> dict[str, Any]:
    return {
        "candidate": scored.candidate.key,
        "namespace": scored.candidate.scheme,
        "train": split_table(scored.result, models),
        "heldout": split_table(heldout, models),
    }


def cost(episodes: Iterable[StoredEpisode]) -> dict[str, Any]:
    totals = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    for ep in episodes:
        for key in totals:
            totals[key] += int(ep.data.get("usage", {}).get(key, 0))
    return {**totals, "usd": 0.0}


def summary(outcome: Outcome) -> dict[str, Any]:
    run, config = outcome.run, outcome.config
    models = [m.id for m in run.models]
    return {
        "run_id": run.store.run_id,
        "server": run.pool.spec.display,
        "models": models,
        "offline": run.offline,
        "proposer": config.proposer,
        "splits": run.taskset.counts(),
        "baseline": _side(outcome.baseline, outcome.heldout_before, models),
        "winner": _side(outcome.winner, outcome.heldout_after, models),
        "gate": {"passed": outcome.gate_passed, "max_drop": config.max_drop, "alpha": config.alpha,
                 "models": {v.model: v.to_json() for v in outcome.verdicts}},
        "definition_tokens": {"baseline": outcome.baseline.tokens, "winner": outcome.winner.tokens},
        "episodes": outcome.episodes,
        "cost": cost(run.store.episodes()),
        "rounds": [vars(r) for r in outcome.rounds],
        "schemes_tried": sorted({s for r in outcome.rounds for s in r.schemes}),
        "stop_reason": outcome.stop_reason,
        "patch": "winning.patch",
        "overlay": "overlay.json",
    }


def write_outputs(outcome: Outcome) -> dict[str, Any]:
    """Write overlay.json, winning.patch, summary.json and report.md; return the summary."""
    run = outcome.run
    directory = run.store.dir
    save_overlay(directory / "overlay.json", outcome.winner.candidate)
    patch = definitions_diff(run.catalog, outcome.winner.candidate)
    atomic_write(directory / "winning.patch", patch)
    data = summary(outcome)
    run.store.write_json("summary.json", data)
    atomic_write(directory / "report.md", report_markdown(outcome, data, patch))
    run.store.export_transcripts()
    return data


def report_markdown(outcome: Outcome, data: dict[str, Any], patch: str) -> str:
    lines = [f"# Optimization run {data['run_id']}", ""]
    if data["offline"]:
        lines += [f"**{OFFLINE_BANNER}**", ""]
    lines += [f"Server: `{data['server']}` · models: {', '.join(data['models'])} · proposer: {data['proposer']}",
              f"Tasks: {data['splits'].get('train', 0)} train, {data['splits'].get('heldout', 0)} held-out · "
              f"stopped: {data['stop_reason']}", ""]
    lines += _accuracy_section(data) + _gate_section(data) + _rounds_section(data)
    lines += _confusion_section(outcome)
    lines += ["## Definition changes", "",
              f"Definition tokens: {data['definition_tokens']['baseline']} → {data['definition_tokens']['winner']}"
              f" (estimated). Namespace: {data['winner']['namespace']}.", ""]
    lines += ["```diff", patch.rstrip("\n") or "(no changes)", "```", ""]
    c = data["cost"]
    lines += ["## Cost", "", f"Input tokens {c['input_tokens']:,}, output {c['output_tokens']:,}, "
              f"cache reads {c['cache_read_tokens']:,}; {data['episodes']['run']} episodes run, "
              f"{data['episodes']['cached']} cached, {data['episodes']['infra_errors']} infrastructure errors; "
              f"USD {c['usd']:.2f}" + (" (offline agents cost nothing)" if data["offline"] else ""), ""]
    return "\n".join(lines)


def _accuracy_section(data: dict[str, Any]) -> list[str]:
    lines = ["## Accuracy before and after", "",
             "| model | split | baseline | winner | change |", "|---|---|---|---|---|"]
    for model in data["models"]:
        for split in ("train", "heldout"):
            b, w = data["baseline"][split][model], data["winner"][split][model]
            lines.append(f"| {model} | {split} | {b['passed']}/{b['n']} ({b['accuracy']:.0%}) | "
                         f"{w['passed']}/{w['n']} ({w['accuracy']:.0%}) | {w['accuracy'] - b['accuracy']:+.0%} |")
    return lines + [""]


def _gate_section(data: dict[str, Any]) -> list[str]:
    gate = data["gate"]
    lines = ["## Gate: " + ("PASSED" if gate["passed"] else "FAILED"), "",
             f"Held-out, paired per task; fails on a drop over {gate['max_drop']:.0%} or a significant drop "
             f"(alpha {gate['alpha']}).", "",
             "| model | tasks | before | after | change | p | test | verdict | flipped up | flipped down |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for model, v in gate["models"].items():
        lines.append(f"| {model} | {v['n_tasks']} | {v['before']:.0%} | {v['after']:.0%} | {v['delta']:+.0%} | "
                     f"{v['p_value']:.3g} | {v['method']} | {'pass' if v['passed'] else 'FAIL'} | "
                     f"{', '.join(v['flipped_up']) or '–'} | {', '.join(v['flipped_down']) or '–'} |")
    return lines + [""]


def _rounds_section(data: dict[str, Any]) -> list[str]:
    lines = ["## Search", "", "| round | proposed | rejected | trials | pruned | best train | schemes | episodes |",
             "|---|---|---|---|---|---|---|---|"]
    for r in data["rounds"]:
        lines.append(f"| {r['round']} | {r['proposed']} | {len(r['rejected'])} | {r['trials']} | {r['pruned']} | "
                     f"{r['best_accuracy']:.0%} | {', '.join(r['schemes'])} | {r['episodes']} |")
    rejected = [(r["round"], x) for r in data["rounds"] for x in r["rejected"]]
    if rejected:
        lines += ["", "Rejected before any eval:", ""]
        lines += [f"- round {n}: {x.get('candidate', '?')} — {x.get('reason', '')}" for n, x in rejected]
    return lines + [""]


def _confusion_section(outcome: Outcome) -> list[str]:
    lines = ["## Tool selection on train (expected first tool → chosen first tool, wrong picks only)", ""]
    for model in [m.id for m in outcome.run.models]:
        for label, result in (("baseline", outcome.baseline.result), ("winner", outcome.winner.result)):
            matrix = confusion((o.expected_first, o.chosen_first) for o in result.outcomes
                               if o.model == model and o.expected_first)
            wrong = [(e, c, n) for e, row in matrix.items() for c, n in row.items() if c != e]
            text = ", ".join(f"{e} → {c} ×{n}" for e, c, n in sorted(wrong)) or "none"
            lines.append(f"- {model}, {label}: {text}")
    return lines + [""]


def candidate_label(candidate: Candidate) -> str:
    return f"{candidate.key} ({len(candidate.edits)} tool edits, namespace {candidate.scheme})"

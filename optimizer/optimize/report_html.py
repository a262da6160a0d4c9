"""The optimize run's report.html (`optimizer.html_report`), gathered from the outcome and summary.json's data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optimizer.files.atomic import atomic_write
from optimizer.gate import gate_rule
from optimizer.html_report import Bar, Page, changes_of, render
from optimizer.models import banners
from optimizer.optimize.rounds import Outcome
from optimizer.run.evaluate import first_tool_confusion
from optimizer.search.study import SearchError, load_trials
from optimizer.stats.efficiency import KEYS, cost_change


def write_report_html(outcome: Outcome, data: dict[str, Any]) -> Path:
    """Write runs/<id>/report.html; return its path."""
    run = outcome.run
    models = data["models"]
    bars = [Bar(model, split, side, data[side][split][model]["passed"], data[side][split][model]["n"])
            for model in models for split in ("train", "heldout") for side in ("baseline", "winner")]
    facts = [f"server: {data['server']}", f"models: {', '.join(models)}; proposer: {data['proposer']}",
             f"tasks: {data['splits'].get('train', 0)} train, {data['splits'].get('heldout', 0)} held-out; "
             f"stopped: {data['stop_reason']}",
             f"gate: {'PASSED' if data['gate']['passed'] else 'FAILED'}; definition tokens "
             f"{data['definition_tokens']['baseline']:,} → {data['definition_tokens']['winner']:,}",
             *(_paid(model, data["baseline"]["heldout"][model], data["winner"]["heldout"][model]) for model in models)]
    storage = outcome.config.storage or f"sqlite:///{run.store.dir / 'run.db'}"
    banner = " ".join(banners(data)) or None
    page = Page(
        title=f"Optimization run {data['run_id']}", offline=banner, facts=facts, bars=bars,
        gate_rule=gate_rule(data["gate"]), gate_rows=data["gate"]["models"],
        rounds=[_trials(storage, f"optimize-{run.store.run_id}-r{r['round']}") for r in data["rounds"]],
        points=_points(data), confusion={"baseline": first_tool_confusion(outcome.heldout_before.outcomes),
                                         "winner": first_tool_confusion(outcome.heldout_after.outcomes)},
        changes=changes_of(run.catalog, outcome.winner.candidate),
        flipped={m: {"up": v["flipped_up"], "down": v["flipped_down"]} for m, v in data["gate"]["models"].items()})
    path = run.store.dir / "report.html"
    atomic_write(path, render(page))
    return path


def _paid(model: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """What a model's agents paid per held-out task, baseline → winner."""
    names = {"calls_per_task": "calls", "failed_calls_per_task": "failed calls", "turns_per_task": "turns",
             "tokens_per_task": "tokens"}
    return f"{model}, per held-out task (baseline → winner): " + ", ".join(
        f"{names[key]} {cost_change(before, after, key)}" for key in KEYS)


def _trials(storage: str, study: str) -> list[dict[str, Any]]:
    try:
        return load_trials(storage, study)
    except SearchError:  # a round that proposed nothing valid has no study
        return []


def _points(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Train accuracy of every front member of every round, and the scored candidates on held-out (mean over
    models)."""
    points = [{"label": f"round {r['round']}: {m['candidate']}", "tokens": m["tokens"], "accuracy": m["accuracy"],
               "split": "train"} for r in data["rounds"] for m in r.get("front") or []]
    for c in data.get("candidates") or []:
        cells = list(c["heldout"].values())
        points.append({"label": c["id"] + (" (winner)" if c["selected"] else ""), "tokens": c["tokens"],
                       "accuracy": sum(x["accuracy"] for x in cells) / max(1, len(cells)), "split": "heldout"})
    return points

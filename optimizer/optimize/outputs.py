"""The outputs of an optimization run: summary.json (stable keys, machine-readable), report.md (for
people), overlay.json and winning.patch — all written atomically into the run directory."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from optimizer.cost.estimate import caching_saves, sent_tokens
from optimizer.cost.prices import PriceTable, load_prices
from optimizer.definitions import Catalog, apply
from optimizer.evaluation import reading_recall
from optimizer.files.atomic import atomic_write
from optimizer.files.patch import definitions_diff, save_overlay
from optimizer.files.pin import write_lock
from optimizer.files.store import StoredEpisode
from optimizer.models.reader import ToolRanker
from optimizer.models.tape import keep_outcome
from optimizer.optimize.config import gate_settings
from optimizer.optimize.diagnosis import failure_modes
from optimizer.optimize.report_html import write_report_html
from optimizer.optimize.report_md import report_markdown
from optimizer.optimize.rounds import Outcome, Scored
from optimizer.optimize.tokens import tokens_per_tool
from optimizer.run.evaluate import EvalResult, search_recall, unfound_queries
from optimizer.scoring import accuracy_table
from optimizer.servers.leases import state_report
from optimizer.source import source_patch
from optimizer.stats.efficiency import efficiency_cell
from optimizer.text.tokens import estimate_tokens


def split_table(result: EvalResult, models: Iterable[str]) -> dict[str, dict[str, Any]]:
    """model -> {accuracy, passed, n, and the efficiency figures (`efficiency.KEYS`)} over one evaluation (one
    split)."""
    table = accuracy_table((o.model, o.split, o.passed) for o in result.outcomes)
    out = {}
    for model in models:
        rows = table.get(model, {})
        passed = sum(r["passed"] for r in rows.values())
        n = sum(r["n"] for r in rows.values())
        costs = efficiency_cell(o.cost for o in result.outcomes if o.model == model)
        out[model] = {"accuracy": round(passed / n, 4) if n else 0.0, "passed": passed, "n": n, **costs}
    return out


def _side(scored: Scored, heldout: EvalResult, models: list[str]) -> dict[str, Any]:
    return {
        "candidate": scored.candidate.key,
        "namespace": scored.candidate.scheme,
        "train": split_table(scored.result, models),
        "heldout": split_table(heldout, models),
    }


TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def cost(episodes: Iterable[StoredEpisode], prices: PriceTable | None = None) -> dict[str, Any]:
    """Tokens and USD over `episodes`, each priced by its own model from `prices` (the built-in table when None).

    Returns {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, usd, by_model, unpriced_models,
    batch_episodes, prices}: token totals by kind; `usd` the total (rounded to 6 decimals); `by_model`
    {model: {the four token kinds, usd, priced}} sorted by model; `unpriced_models` the sorted models with no price,
    whose tokens are counted but whose usd is 0 (and `priced` false); `batch_episodes` how many episodes had
    `batch: true` in their data and got the table's batch discount; `prices` where the prices came from.
    Offline `sim:*` models are priced at 0.
    """
    table = prices if prices is not None else PriceTable.default()
    by_model: dict[str, dict[str, Any]] = {}
    batch_episodes = 0
    for ep in episodes:
        usage = ep.data.get("usage") or {}
        batch = ep.data.get("batch") is True
        batch_episodes += batch
        row = by_model.setdefault(ep.model, {**dict.fromkeys(TOKEN_KINDS, 0), "usd": 0.0, "priced": True})
        for kind in TOKEN_KINDS:
            row[kind] += int(usage.get(kind) or 0)
        usd = table.usd(ep.model, usage, batch=batch)
        if usd is None:
            row["priced"] = False
        else:
            row["usd"] += usd
    totals = {kind: sum(row[kind] for row in by_model.values()) for kind in TOKEN_KINDS}
    total_usd = sum(row["usd"] for row in by_model.values())
    for row in by_model.values():
        row["usd"] = round(row["usd"], 6)
    return {**totals, "usd": round(total_usd, 6), "by_model": dict(sorted(by_model.items())),
            "unpriced_models": sorted(m for m, row in by_model.items() if not row["priced"]),
            "batch_episodes": batch_episodes, "prices": table.source}


def _tokens_by_tool(outcome: Outcome) -> dict[str, dict[str, int]]:
    """Original tool name -> estimated definition tokens under the baseline and under the winner."""
    catalog = outcome.run.catalog
    before = tokens_per_tool(catalog, outcome.baseline.candidate)
    after = tokens_per_tool(catalog, outcome.winner.candidate)
    return {tool: {"baseline": before[tool], "winner": after[tool]} for tool in before}


def run_cost(outcome: Outcome) -> dict[str, Any]:
    """`cost` over the run's episodes, plus what the proposer spent (from the rounds' reports, priced at the
    proposer's model) and the judge (meta `judge_usage`), both folded into the totals."""
    config = outcome.config
    table = load_prices(Path(config.prices)) if config.prices else PriceTable.default()
    out = cost(outcome.run.store.episodes(), table)
    repairs = [r.proposer.get("screening_repair") or {} for r in outcome.rounds]
    extras = {"proposer": (config.proposer, [*(r.proposer.get("usage") or {} for r in outcome.rounds),
                                             *(repair.get("usage") or {} for repair in repairs)]),
              "judge": (outcome.run.store.get_meta("judge_model"), [outcome.run.store.get_meta("judge_usage") or {}])}
    for role, (model, usages) in extras.items():
        usage = {kind: sum(int(u.get(kind) or 0) for u in usages) for kind in TOKEN_KINDS}
        if not any(usage.values()):
            continue
        usd = table.usd(str(model), usage) if model else None
        out[role] = {**usage, "model": model, "usd": round(usd or 0.0, 6), "priced": usd is not None}
        if role == "proposer":
            out[role]["requests"] = sum(1 + int(r.proposer.get("repair_requests") or 0) for r in outcome.rounds
                                        if r.proposer.get("usage")) + sum(int(x.get("requests") or 0) for x in repairs)
            out[role]["screening_repairs"] = sum(int(x.get("requests") or 0) for x in repairs)
        for kind in TOKEN_KINDS:
            out[kind] += usage[kind]
        out["usd"] = round(out["usd"] + (usd or 0.0), 6)
    out["cache_reported"] = bool(out["cache_read_tokens"] or out["cache_write_tokens"])
    if not out["cache_reported"] and not outcome.run.offline:
        out["usd_with_caching"] = round(out["usd"] - caching_saves(_cacheable(outcome), table), 6)
    return out


def _cacheable(outcome: Outcome) -> list[tuple[str, int, int]]:
    """(model, cacheable prefix, requests) per model and definition set of the run's agent episodes: the prefix is
    the definitions and the system prompt, the definitions the candidate's where the run knows them (baseline,
    winner, the held-out candidates), else the baseline's."""
    known = {outcome.baseline.candidate.key: outcome.baseline.tokens, outcome.winner.candidate.key:
             outcome.winner.tokens, **{c["id"]: c["tokens"] for c in outcome.candidates}}
    system = estimate_tokens(outcome.run.episode.system_prompt or "")
    return cacheable_groups(outcome.run.store.episodes(),
                            lambda candidate: known.get(candidate, outcome.baseline.tokens) + system)


def cacheable_groups(episodes: Iterable[StoredEpisode], prefix_of: Callable[[str], int]) -> list[tuple[str, int, int]]:
    """(model, cacheable prefix, requests) per model and candidate of `episodes`: the prefix is `prefix_of(candidate)`,
    capped at the smallest mean input per request the endpoint counted for that group's episodes, since a cache
    holds no more than a request sent (a search's smaller candidates would otherwise save more than they cost)."""
    requests: dict[tuple[str, str], int] = defaultdict(int)
    sent: dict[tuple[str, str], float] = {}
    for episode in episodes:
        turns = int(episode.data.get("turns") or 0)
        group = (episode.model, episode.candidate)
        requests[group] += turns
        usage = episode.data.get("usage") or {}
        per_request = sent_tokens(usage) / turns if turns else 0
        if per_request:
            sent[group] = min(sent.get(group, per_request), per_request)
    return [(model, int(min(prefix_of(candidate), sent.get((model, candidate), float("inf")))), n)
            for (model, candidate), n in requests.items()]


def summary(outcome: Outcome) -> dict[str, Any]:
    run, config = outcome.run, outcome.config
    models = [m.id for m in run.models]
    return {
        "run_id": run.store.run_id,
        "server": run.pool.spec.display,
        "models": models,
        "offline": run.offline,
        "replay": run.providers.replaying,
        "proposer": config.proposer,
        "splits": run.taskset.counts(),
        "baseline": _side(outcome.baseline, outcome.heldout_before, models),
        "winner": _side(outcome.winner, outcome.heldout_after, models),
        "goal": config.goal,
        "gate": {"passed": outcome.gate_passed, "max_drop": gate_settings(config)[0], "alpha": config.alpha,
                 "margin": gate_settings(config)[1], "fail_on": config.fail_on,
                 "models": {v.model: v.to_json() for v in outcome.verdicts}},
        "definition_tokens": {"baseline": outcome.baseline.tokens, "winner": outcome.winner.tokens,
                              "saved_per_1000_requests": (outcome.baseline.tokens - outcome.winner.tokens) * 1000,
                              "per_tool": _tokens_by_tool(outcome)},
        "episodes": outcome.episodes,
        "state": state_report(outcome.episodes.get("changed_state", 0), outcome.episodes["run"],
                              isolate=config.isolate),
        "cost": run_cost(outcome),
        "estimate": run.store.get_meta("estimate"),
        "rounds": [vars(r) for r in outcome.rounds],
        "candidates": outcome.candidates,
        "schemes_tried": sorted({s for r in outcome.rounds for s in r.schemes}),
        "context": run.context.names,
        "client_naming": config.client_naming,
        **({"tool_search": config.tool_search,
            "search": {"baseline": search_recall(outcome.heldout_before.outcomes),
                       "winner": search_recall(outcome.heldout_after.outcomes)},
            "unfound": unfound_queries(outcome.heldout_after.episodes)}
           if config.tool_search != "off" else {}),
        **({"readers": {"baseline": reading_recall(run.models, outcome.heldout_before.outcomes),
                        "winner": reading_recall(run.models, outcome.heldout_after.outcomes)}}
           if any(isinstance(m, ToolRanker) for m in run.models) else {}),
        **({"alone": {"baseline": split_table(outcome.alone[0], models),
                      "winner": split_table(outcome.alone[1], models)}} if outcome.alone else {}),
        "shipped": _shipped(outcome),
        "stop_reason": outcome.stop_reason,
        "stop": outcome.stop.to_json() if outcome.stop else {"rule": "?", "text": outcome.stop_reason},
        "rounds_setting": config.rounds,
        "refused_left": outcome.refused_left,
        "diagnosis": {"train_baseline": failure_modes(outcome.baseline.result.episodes).to_json(),
                      "heldout_winner": failure_modes(outcome.heldout_after.episodes).to_json()},
        "patch": "winning.patch",
        "overlay": "overlay.json",
    }


CANDIDATE_OVERLAY = "candidate-overlay.json"
"""The winner's overlay when it does not ship (shipping.py), to evaluate or ship by hand."""


def _shipped(outcome: Outcome) -> dict[str, Any]:
    """What the overlay and the patch hold: {candidate, reason (why not the winner, or null), nothing_to_fix (the
    server's own definitions passed every train task without a failed call, so no round ran), candidate_overlay
    (the held-back winner's overlay file, or null)}."""
    shipped = outcome.shipped.scored if outcome.shipped else outcome.winner
    held_back = shipped.candidate.key != outcome.winner.candidate.key
    return {"candidate": shipped.candidate.key, "reason": outcome.shipped.reason if outcome.shipped else None,
            "nothing_to_fix": outcome.stop is not None and outcome.stop.rule == "perfect" and not outcome.rounds,
            "candidate_overlay": str(outcome.run.store.dir / CANDIDATE_OVERLAY) if held_back else None}


def write_outputs(outcome: Outcome) -> dict[str, Any]:
    """Write overlay.json, winning.patch and winner.lock.json (its definitions pinned, for `optimizer serve --pin` and
    `lint --against`) of what ships (`shipping.py`: the winner, or the server's own definitions when the winner only
    adds tokens), summary.json, report.md and report.html; return the summary."""
    run = outcome.run
    directory = run.store.dir
    shipped = outcome.shipped.scored if outcome.shipped else outcome.winner
    save_overlay(directory / "overlay.json", shipped.candidate)
    if shipped.candidate.key != outcome.winner.candidate.key:  # held back: kept to try, or to ship deliberately
        save_overlay(directory / CANDIDATE_OVERLAY, outcome.winner.candidate)
    patch = definitions_diff(run.catalog, shipped.candidate)
    atomic_write(directory / "winning.patch", patch)
    write_lock(directory / "winner.lock.json",
               Catalog(run.catalog.server_name, apply(run.catalog, shipped.candidate).tools))
    data = summary(outcome)
    data["source_patch"] = _source_patch(outcome)
    data["report_html"] = str(directory / "report.html")
    run.store.write_json("summary.json", data)
    keep_outcome(run.config.record, data)
    atomic_write(directory / "report.md", report_markdown(outcome, data, patch))
    write_report_html(outcome, data)
    run.store.export_transcripts()
    return data


def _source_patch(outcome: Outcome) -> dict[str, Any] | None:
    """With --source DIR: source.patch rewriting the winner's texts where they stand in the server's code, and
    what could not be located (listed, never guessed)."""
    if not outcome.config.source:
        return None
    result = source_patch(Path(outcome.config.source), outcome.run.catalog, outcome.winner.candidate)
    path = outcome.run.store.dir / "source.patch"
    atomic_write(path, result.text)
    return {"path": str(path), "changed": result.changed, "unlocated": result.unlocated}

"""The outputs of an optimization run: summary.json (stable keys, machine-readable), report.md (for
people), overlay.json and winning.patch — all written atomically into the run directory."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optimizer.definitions import Candidate, Catalog, apply
from optimizer.evaluate import EvalResult, first_tool_confusion, search_recall, unfound_queries
from optimizer.files import atomic_write
from optimizer.gate import gate_rule, power_text, underpowered_note, verdict_text
from optimizer.models import offline_banner
from optimizer.optimize.diagnosis import failure_modes
from optimizer.optimize.report_html import write_report_html
from optimizer.optimize.rounds import Outcome, Scored
from optimizer.optimize.tokens import tokens_per_tool
from optimizer.patch import definitions_diff, save_overlay
from optimizer.pin import write_lock
from optimizer.prices import PriceTable, load_prices
from optimizer.scoring import accuracy_table
from optimizer.server_leases import state_report
from optimizer.source import source_patch
from optimizer.store import StoredEpisode
from optimizer.text import points


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
    return out


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
                 "margin": config.margin, "fail_on": config.fail_on,
                 "models": {v.model: v.to_json() for v in outcome.verdicts}},
        "definition_tokens": {"baseline": outcome.baseline.tokens, "winner": outcome.winner.tokens,
                              "per_tool": _tokens_by_tool(outcome)},
        "episodes": outcome.episodes,
        "state": state_report(outcome.episodes.get("changed_state", 0), outcome.episodes["run"],
                              isolate=config.isolate),
        "cost": run_cost(outcome),
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
        **({"alone": {"baseline": split_table(outcome.alone[0], models),
                      "winner": split_table(outcome.alone[1], models)}} if outcome.alone else {}),
        "stop_reason": outcome.stop_reason,
        "diagnosis": {"train_baseline": failure_modes(outcome.baseline.result.episodes).to_json(),
                      "heldout_winner": failure_modes(outcome.heldout_after.episodes).to_json()},
        "patch": "winning.patch",
        "overlay": "overlay.json",
    }


def write_outputs(outcome: Outcome) -> dict[str, Any]:
    """Write overlay.json, winning.patch, winner.lock.json (the winner's definitions pinned, for `optimizer serve
    --pin` and `lint --against`), summary.json, report.md and report.html; return the summary."""
    run = outcome.run
    directory = run.store.dir
    save_overlay(directory / "overlay.json", outcome.winner.candidate)
    patch = definitions_diff(run.catalog, outcome.winner.candidate)
    atomic_write(directory / "winning.patch", patch)
    write_lock(directory / "winner.lock.json",
               Catalog(run.catalog.server_name, apply(run.catalog, outcome.winner.candidate).tools))
    data = summary(outcome)
    data["source_patch"] = _source_patch(outcome)
    data["report_html"] = str(directory / "report.html")
    run.store.write_json("summary.json", data)
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


def report_markdown(outcome: Outcome, data: dict[str, Any], patch: str) -> str:
    lines = [f"# Optimization run {data['run_id']}", ""]
    if data["offline"]:
        lines += [f"**{offline_banner(data['models'])}**", ""]
    lines += [f"Server: `{data['server']}` · models: {', '.join(data['models'])} · proposer: {data['proposer']}",
              f"Tasks: {data['splits'].get('train', 0)} train, {data['splits'].get('heldout', 0)} held-out · "
              f"stopped: {data['stop_reason']}", ""]
    lines += [data["state"]["note"], ""] if data["state"]["note"] else []
    lines += _accuracy_section(data) + _context_section(data) + _search_section(data) + _gate_section(data)
    lines += _candidates_section(data)
    lines += _diagnosis_section(data)
    lines += _rounds_section(data)
    lines += _confusion_section(outcome)
    lines += ["## Definition changes", "",
              f"Definition tokens: {data['definition_tokens']['baseline']} → {data['definition_tokens']['winner']}"
              f" (estimated). Namespace: {data['winner']['namespace']}.", ""]
    lines += _tokens_section(data)
    lines += ["```diff", patch.rstrip("\n") or "(no changes)", "```", ""]
    if data.get("source_patch"):
        sp = data["source_patch"]
        lines += [f"Source patch: `source.patch` changes {', '.join(sp['changed']) or 'nothing'}; "
                  "apply it with `git apply` in the source directory.", ""]
        lines += [f"- not located: {_quoted(item)}" for item in sp["unlocated"]] + ([""] if sp["unlocated"] else [])
    lines += _cost_section(data)
    return "\n".join(lines)


def _cost_section(data: dict[str, Any]) -> list[str]:
    """Totals, USD to 4 decimals, a line per model when there are several, unpriced models and the price source."""
    c, episodes = data["cost"], data["episodes"]
    offline = " (offline agents cost nothing)" if data["offline"] else ""
    estimated = " (estimated: offline models send no real request)" if data["offline"] else ""
    total = episodes["run"] + episodes["cached"]
    lines = ["## Cost", "", f"Input tokens {c['input_tokens']:,}, output {c['output_tokens']:,}, "
             f"cache reads {c['cache_read_tokens']:,}, cache writes {c.get('cache_write_tokens', 0):,}{estimated}; "
             f"episodes: {episodes['run']} run now, {episodes['cached']} from cache, {total} in all, "
             f"{episodes['infra_errors']} infrastructure errors; USD {c['usd']:.4f}{offline}", ""]
    by_model = c.get("by_model", {})
    if len(by_model) > 1:
        for model, row in by_model.items():
            usd = f"USD {row['usd']:.4f}" if row["priced"] else "no price"
            lines.append(f"- {model}: input {row['input_tokens']:,}, output {row['output_tokens']:,}, "
                         f"cache reads {row['cache_read_tokens']:,}, cache writes {row['cache_write_tokens']:,}; {usd}")
        lines.append("")
    for role in ("proposer", "judge"):
        if role in c:
            row = c[role]
            usd = f"USD {row['usd']:.4f}" if row["priced"] else "no price"
            asked = (f"{row['requests']} requests ({row['screening_repairs']} sending rejected edits back), "
                     if "requests" in row else "")
            lines += [f"- {role} ({row['model']}): {asked}input {row['input_tokens']:,}, "
                      f"output {row['output_tokens']:,}; {usd}", ""]
    notes = []
    if c.get("unpriced_models"):
        notes.append(f"No price for {', '.join(c['unpriced_models'])}: their tokens are counted, their cost is not "
                     "in the USD total (counted as 0).")
    if c.get("batch_episodes"):
        notes.append(f"{c['batch_episodes']} episodes ran through the batch API at the batch discount.")
    if not data["offline"] and c.get("prices"):
        notes.append(f"Prices: {c['prices']}, USD per million tokens; list prices, check them.")
    return lines + ([" ".join(notes), ""] if notes else [])


def _accuracy_section(data: dict[str, Any]) -> list[str]:
    lines = ["## Accuracy before and after", "",
             "| model | split | baseline | winner | change |", "|---|---|---|---|---|"]
    for model in data["models"]:
        for split in ("train", "heldout"):
            b, w = data["baseline"][split][model], data["winner"][split][model]
            lines.append(f"| {model} | {split} | {b['passed']}/{b['n']} ({b['accuracy']:.0%}) | "
                         f"{w['passed']}/{w['n']} ({w['accuracy']:.0%}) | {points(w['accuracy'] - b['accuracy'])} |")
    return lines + [""]


def _gate_section(data: dict[str, Any]) -> list[str]:
    gate = data["gate"]
    lines = ["## Gate: " + ("PASSED" if gate["passed"] else "FAILED"), "",
             f"Held-out, paired per task; {gate_rule(gate)}.", "",
             "| model | tasks | before | after | change | p | p (Holm) | test | can see | verdict | flipped up | "
             "flipped down |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model, v in gate["models"].items():
        lines.append(f"| {model} | {v['n_tasks']} | {v['before']:.0%} | {v['after']:.0%} | {points(v['delta'])} | "
                     f"{v['p_value']:.3g} | {v['p_holm']:.3g} | {v['method']} | {power_text(v)} | {verdict_text(v)} | "
                     f"{', '.join(v['flipped_up']) or '–'} | {', '.join(v['flipped_down']) or '–'} |")
    return lines + [underpowered_note(gate["models"]), ""]


def _candidates_section(data: dict[str, Any]) -> list[str]:
    """The winner and the best front members, train beside held-out: held-out was not used to select them."""
    candidates = data.get("candidates") or []
    if len(candidates) < 2:
        return []
    models = data["models"]
    lines = ["## Candidates on train and held-out", "",
             "The winner and the best other members of the search's accuracy-vs-tokens fronts. Selection read train "
             "only; held-out is shown to reveal overfitting (a candidate far better on train than on held-out).", "",
             "| candidate | tokens | " + " | ".join(f"{m} train | {m} held-out" for m in models) + " | selected |",
             "|---|---|" + "---|---|" * len(models) + "---|"]
    for c in candidates:
        cells = [f"{c[split][m]['passed']}/{c[split][m]['n']}" for m in models for split in ("train", "heldout")]
        lines.append(f"| {c['id']} | {c['tokens']:,} | " + " | ".join(cells) + f" | {'yes' if c['selected'] else ''} |")
    return lines + [""]


def _tokens_section(data: dict[str, Any]) -> list[str]:
    """Estimated definition tokens per tool, baseline → winner (what every request pays)."""
    rows = data["definition_tokens"]["per_tool"]
    lines = ["| tool | baseline tokens | winner tokens | change |", "|---|---|---|---|"]
    lines += [f"| {tool} | {t['baseline']} | {t['winner']} | {t['winner'] - t['baseline']:+d} |"
              for tool, t in rows.items()]
    return lines + [""]


def _search_section(data: dict[str, Any]) -> list[str]:
    """With a tool search: how often the agents' searches found the expected tool on held-out, before and after."""
    if not data.get("search"):
        return []
    lines = ["## Tool search", "", f"Every tool was deferred behind a {data['tool_search']} search (top 5 loaded). "
             "Held-out episodes whose searches found the expected tool:", "",
             "| model | baseline | winner |", "|---|---|---|"]
    for model in data["models"]:
        empty = {"found": 0, "n": 0, "recall": 0.0}
        cells = [data["search"][side].get(model, empty) for side in ("baseline", "winner")]
        lines.append(f"| {model} | " + " | ".join(f"{c['found']}/{c['n']} ({c['recall']:.0%})" for c in cells) + " |")
    if data.get("unfound"):
        lines += ["", "Searches that did not find the expected tool (winner, held-out):", ""]
        lines += [f"- {tool}: " + ", ".join(_quoted(q) for q in queries) for tool, queries in data["unfound"].items()]
    return [*lines, ""]


def _context_section(data: dict[str, Any]) -> list[str]:
    """Which servers stood beside this one, and baseline and winner on held-out without them."""
    if not data.get("context"):
        return []
    lines = ["## In context", "", f"Every evaluation above ran beside {', '.join(data['context'])} (client naming: "
             f"{data['client_naming']}); the search chose the namespace scheme and the descriptions there (best train "
             "per scheme: see Search). Held-out without them, not used for any choice:", "",
             "| model | baseline alone | winner alone | baseline in context | winner in context |",
             "|---|---|---|---|---|"]
    for model in data["models"]:
        cells = [data["alone"]["baseline"][model], data["alone"]["winner"][model],
                 data["baseline"]["heldout"][model], data["winner"]["heldout"][model]]
        lines.append(f"| {model} | " + " | ".join(f"{c['passed']}/{c['n']}" for c in cells) + " |")
    return [*lines, ""]


def _diagnosis_section(data: dict[str, Any]) -> list[str]:
    """Why episodes failed, when one way of failing covers at least half of them (see `diagnosis.py`)."""
    parts = {"train_baseline": "Baseline on train", "heldout_winner": "Winner on held-out"}
    lines = [f"- {label}: {sentence}." for key, label in parts.items()
             for sentence in data["diagnosis"][key]["sentences"]]
    return ["## Why episodes failed", "", *lines, ""] if lines else []


def _rounds_section(data: dict[str, Any]) -> list[str]:
    lines = ["## Search", "", "| round | proposed | rejected | edits dropped | trials | pruned | best train | "
             "schemes | episodes |", "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rounds"]:
        schemes = ", ".join(f"{s} {r['scheme_accuracy'][s]:.0%}" if s in r.get("scheme_accuracy", {}) else s
                            for s in r["schemes"])
        whole = sum("tool" not in x and x.get("outcome") != "trimmed" for x in r["rejected"])
        dropped = sum("tool" in x for x in r["rejected"])
        lines.append(f"| {r['round']} | {r['proposed']} | {whole} | {dropped} | {r['trials']} | "
                     f"{r['pruned']} | "
                     f"{r['best_accuracy']:.0%} | {schemes} | {r['episodes']} |")
    rejected = [(r["round"], x) for r in data["rounds"] for x in r["rejected"]]
    if rejected:
        lines += ["", "Rejected before any eval (why the proposal failed as written first, then each edit dropped):",
                  ""]
        lines += [_rejection_line(n, x) for n, x in rejected]
    unfit = [(r["round"], x) for r in data["rounds"] for x in r.get("unfit", [])]
    if unfit:
        lines += ["", "Made by the search from several proposals and not shipped (screened whole once more):", ""]
        lines += [f"- round {n}: {x['candidate']} — {_quoted(x['reason'])}" for n, x in unfit]
    lines += _proposer_lines(data["rounds"]) + _front_lines(data["rounds"])
    return lines + [""]


def _rejection_line(round_: int, entry: dict[str, Any]) -> str:
    """One rejection of the round log (`Screened.rejections`): a proposal's own line, or an edit's line under it."""
    repaired = " after the repair" if entry.get("after_repair") else ""
    if entry.get("tool"):
        return f"  - edit of {entry['tool']} dropped{repaired} — {_quoted(entry.get('reason', ''))}"
    outcome = ("searched without the edits below" if entry.get("outcome") == "trimmed" else "rejected")
    then = f"; then {_quoted(entry['then'])}" if entry.get("then") else ""
    return (f"- round {round_}: {entry.get('candidate', '?')} {outcome}{repaired} — "
            f"{_quoted(entry.get('reason', ''))}{then}")


def _front_lines(rounds: list[dict[str, Any]]) -> list[str]:
    """Each round's accuracy-vs-tokens front on train and which member was picked: the smallest within the noise
    of the most accurate (see `rounds.select`)."""
    rows = [f"| {r['round']} | {f['candidate']}{' (current)' if f.get('current') else ''} | {f['accuracy']:.0%} | "
            f"{f['tokens']:,} | "
            f"{ {True: 'yes', False: 'no', None: '–'}[f['within_noise']] } | {'✓' if f['selected'] else ''} |"
            for r in rounds for f in r.get("front", [])]
    if not rows:
        return []
    return ["", "Accuracy vs definition tokens (train; the smallest candidate within the noise of the most accurate, "
            "--token-tolerance standard errors of the paired difference, is picked):", "",
            "| round | candidate | train | tokens | within noise | picked |",
            "|---|---|---|---|---|---|", *rows]


def _proposer_lines(rounds: list[dict[str, Any]]) -> list[str]:
    """What a model proposer reported per round: failures, invalid output dropped, and its rationales (model-written
    text, shown quoted and on one line)."""
    lines: list[str] = []
    for r in rounds:
        p = r.get("proposer") or {}
        if p.get("error"):
            lines.append(f"- round {r['round']}: {_quoted(p['error'])}")
        if p.get("dropped") or p.get("repair_requests"):
            lines.append(f"- round {r['round']}: proposer asked for {p.get('requested', 0)}, received "
                         f"{p.get('received', 0)}, repaired {p.get('repaired', 0)}, dropped {p.get('dropped', 0)}")
        for item in p.get("rejected", []):
            lines.append(f"- round {r['round']}: dropped proposal — {_quoted(item.get('reason', ''))}")
        fix = p.get("screening_repair")
        if fix:
            lines.append(f"- round {r['round']}: rejected edits sent back once: " + (
                _quoted(fix["error"]) if fix.get("error") else
                f"{fix.get('returned', 0)} candidate(s) returned, {fix.get('repaired_edits', 0)} edit(s) now pass"))
        for key, why in (p.get("rationales") or {}).items():
            lines.append(f"- round {r['round']}: {key} — proposer's rationale: {_quoted(why)}")
    return ["", "Proposer:", "", *lines] if lines else []


def _quoted(text: str, limit: int = 300) -> str:
    """Untrusted text for Markdown: one line, no backticks or HTML, cut to `limit` characters, in code quotes."""
    flat = " ".join(str(text).split()).replace("`", "'").replace("<", "‹").replace(">", "›")
    return f"`{flat[:limit]}{'…' if len(flat) > limit else ''}`"


def _confusion_section(outcome: Outcome) -> list[str]:
    lines = ["## Tool selection on train (expected first tool → chosen first tool, wrong picks only)", ""]
    for model in [m.id for m in outcome.run.models]:
        for label, result in (("baseline", outcome.baseline.result), ("winner", outcome.winner.result)):
            matrix = first_tool_confusion(result.outcomes, model)
            wrong = [(e, c, n) for e, row in matrix.items() for c, n in row.items() if c != e]
            text = ", ".join(f"{e} → {c} ×{n}" for e, c, n in sorted(wrong)) or "none"
            lines.append(f"- {model}, {label}: {text}")
    return lines + [""]


def candidate_label(candidate: Candidate) -> str:
    return f"{candidate.key} ({len(candidate.edits)} tool edits, namespace {candidate.scheme})"

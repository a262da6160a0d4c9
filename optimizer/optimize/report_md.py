"""report.md: the run for people, built from summary.json's data (and the run's catalog for the diff's labels)."""

from __future__ import annotations

from typing import Any

from optimizer.definitions import Candidate
from optimizer.files.patch import definitions_diff
from optimizer.gate import gate_rule, power_text, underpowered_note, verdict_text
from optimizer.models import banners
from optimizer.optimize.report_learning import learning_section, shipped_lines
from optimizer.optimize.rounds import Outcome
from optimizer.run.evaluate import first_tool_confusion
from optimizer.stats.call_change import calls_cell
from optimizer.stats.efficiency import KEYS, cost_change
from optimizer.text.tokens import points


def report_markdown(outcome: Outcome, data: dict[str, Any], patch: str) -> str:
    lines = [f"# Optimization run {data['run_id']}", ""]
    for banner in banners(data):
        lines += [f"**{banner}**", ""]
    lines += [f"Server: `{data['server']}` · models: {', '.join(data['models'])} · proposer: {data['proposer']}",
              f"Tasks: {data['splits'].get('train', 0)} train, {data['splits'].get('heldout', 0)} held-out · "
              f"goal: {data.get('goal', 'accuracy')} · stopped: {data['stop_reason']}", ""]
    lines += [f"**{line}**\n" for line in shipped_lines(data)]
    lines += [data["state"]["note"], ""] if data["state"]["note"] else []
    lines += _accuracy_section(data) + _readers_section(data) + _context_section(data) + _search_section(data)
    lines += _gate_section(data)
    lines += _candidates_section(data)
    lines += _diagnosis_section(data)
    lines += _rounds_section(data)
    lines += learning_section(data)
    lines += _confusion_section(outcome)
    lines += ["## Definition changes", "",
              f"Definition tokens: {data['definition_tokens']['baseline']} → {data['definition_tokens']['winner']}"
              f" (estimated; {_saved(data['definition_tokens'])}). Namespace: {data['winner']['namespace']}.", ""]
    lines += _tokens_section(data)
    lines += ["```diff", patch.rstrip("\n") or "(no changes)", "```", ""]
    if data.get("shipped", {}).get("reason"):
        lines += ["The best candidate, which did not ship (see above):", "", "```diff",
                  definitions_diff(outcome.run.catalog, outcome.winner.candidate).rstrip("\n"), "```", ""]
    if data.get("source_patch"):
        sp = data["source_patch"]
        lines += [f"Source patch: `source.patch` changes {', '.join(sp['changed']) or 'nothing'}; "
                  "apply it with `git apply` in the source directory.", ""]
        lines += [f"- not located: {_quoted(item)}" for item in sp["unlocated"]] + ([""] if sp["unlocated"] else [])
    lines += _cost_section(data)
    return "\n".join(lines)


def _saved(tokens: dict[str, Any]) -> str:
    """Tokens saved (or added) per 1,000 requests, in words."""
    saved = tokens.get("saved_per_1000_requests", (tokens["baseline"] - tokens["winner"]) * 1000)
    return f"{abs(saved):,} tokens {'saved' if saved >= 0 else 'added'} per 1,000 requests"


def _cost_section(data: dict[str, Any]) -> list[str]:
    """Totals, USD to 4 decimals, a line per model when there are several, unpriced models and the price source."""
    c, episodes = data["cost"], data["episodes"]
    offline = " (offline agents cost nothing)" if data["offline"] else (
        " that the run would have cost: its answers were replayed, and none was paid for" if data.get("replay") else "")
    estimated = " (estimated: offline models send no real request)" if data["offline"] else ""
    total = episodes["run"] + episodes["cached"]
    lines = ["## Cost", "", f"Input tokens {c['input_tokens']:,}, output {c['output_tokens']:,}, "
             f"cache reads {c['cache_read_tokens']:,}, cache writes {c.get('cache_write_tokens', 0):,}{estimated}; "
             f"episodes: {episodes['run']} run now, {episodes['cached']} from cache, {total} in all, "
             f"{episodes['infra_errors']} infrastructure errors; USD {c['usd']:.4f}{offline}", ""]
    if "usd_with_caching" in c:
        lines += [f"The endpoint reported no cache use. With the prompt caching the product asks for (each "
                  "request's definitions and system prompt written to the cache once per model and definition set, "
                  f"then read from it), the run would have cost about USD {c['usd_with_caching']:.4f}.", ""]
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
             "What the agents paid on the way, per task (baseline → winner): tool calls, failed calls (an error "
             "result), turns and the agent's tokens.", "",
             "| model | split | baseline | winner | change | calls | failed calls | turns | tokens |",
             "|---|---|---|---|---|---|---|---|---|"]
    for model in data["models"]:
        for split in ("train", "heldout"):
            b, w = data["baseline"][split][model], data["winner"][split][model]
            paid = " | ".join(cost_change(b, w, key) for key in KEYS)
            lines.append(f"| {model} | {split} | {b['passed']}/{b['n']} ({b['accuracy']:.0%}) | "
                         f"{w['passed']}/{w['n']} ({w['accuracy']:.0%}) | {points(w['accuracy'] - b['accuracy'])} | "
                         f"{paid} |")
    return lines + [""]


def _gate_section(data: dict[str, Any]) -> list[str]:
    gate = data["gate"]
    lines = ["## Gate: " + ("PASSED" if gate["passed"] else "FAILED"), "",
             f"Held-out, paired per task; {gate_rule(gate)}.", "",
             "| model | tasks | before | after | change | p | p (Holm) | test | can see | failed calls / task | "
             "verdict | flipped up | flipped down |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model, v in gate["models"].items():
        lines.append(f"| {model} | {v['n_tasks']} | {v['before']:.0%} | {v['after']:.0%} | {points(v['delta'])} | "
                     f"{v['p_value']:.3g} | {v['p_holm']:.3g} | {v['method']} | {power_text(v)} | "
                     f"{calls_cell(v.get('failed_calls'))} | {verdict_text(v)} | "
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
             "Held-out episodes whose searches found the expected tool:", "", *_recall_rows(data["search"])]
    if data.get("unfound"):
        lines += ["", "Searches that did not find the expected tool (winner, held-out):", ""]
        lines += [f"- {tool}: " + ", ".join(_quoted(q) for q in queries) for tool, queries in data["unfound"].items()]
    return [*lines, ""]


def _readers_section(data: dict[str, Any]) -> list[str]:
    """With offline readers: on held-out, how often the first expected tool was among each reader's top five."""
    if not data.get("readers"):
        return []
    return ["## Findability", "", "Held-out tasks whose first expected tool was among the reader's top 5 (recall at "
            "5; accuracy above counts its top hit):", "", *_recall_rows(data["readers"]), ""]


def _recall_rows(sides: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    rows = ["| model | baseline | winner |", "|---|---|---|"]
    for model in sides["baseline"]:
        cells = [sides[side].get(model, {"found": 0, "n": 0, "recall": 0.0}) for side in ("baseline", "winner")]
        rows.append(f"| {model} | " + " | ".join(f"{c['found']}/{c['n']} ({c['recall']:.0%})" for c in cells) + " |")
    return rows


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
    lines += _proposer_lines(data["rounds"]) + _front_lines(data["rounds"], data.get("goal", "accuracy"))
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


def _front_lines(rounds: list[dict[str, Any]], goal: str = "accuracy") -> list[str]:
    """Each round's accuracy-vs-tokens front on train and which member was picked: the smallest within the noise
    of the most accurate (`rounds.select`), or for a shrink of the baseline for every model (`rounds.select_smaller`),
    the smallest mix of the proposals' edits and the current texts with lean schemas marked."""
    def label(r: dict[str, Any], f: dict[str, Any]) -> str:
        notes = [*(["current"] if f.get("current") else []),
                 *(["smallest mix"] if f["candidate"] == r.get("smallest_mix") else []),
                 *(["lean schemas only"] if f["candidate"] == r.get("lean_only") else [])]
        return f"{f['candidate']}{' (' + ', '.join(notes) + ')' if notes else ''}"

    rows = [f"| {r['round']} | {label(r, f)} | {f['accuracy']:.0%} | {f['tokens']:,} | "
            f"{ {True: 'yes', False: 'no', None: '–'}[f['within_noise']] } | {'✓' if f['selected'] else ''} |"
            for r in rounds for f in r.get("front", [])]
    if not rows:
        return []
    rule = ("the smallest candidate whose train results are within the noise of the baseline's for every model"
            if goal == "shrink" else "the smallest candidate within the noise of the most accurate")
    return ["", f"Accuracy vs definition tokens (train; {rule}, --token-tolerance standard errors of the paired "
            "difference, is picked):", "",
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
        if p.get("groups"):
            sizes = ", ".join(str(len(g)) for g in p["groups"])
            lines.append(f"- round {r['round']}: the request would pass its token budget, so it was split into "
                         f"{len(p['groups'])} requests by groups of tools, those agents confused kept together "
                         f"({sizes} tools)")
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

"""The offline rules proposer on a hand-built catalog and hand-built episodes, and once on the support
example's real baseline episodes (evaluated end to end with both offline agents)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from optimizer.config import EvalConfig
from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.evaluation import run_eval
from optimizer.lint.vocabulary import KNOWN_VERBS
from optimizer.optimize.tokens import definition_tokens
from optimizer.patch import save_overlay
from optimizer.pool import candidate_from, pool_from
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.evidence import build_evidence
from optimizer.propose.formats import invent as synthesise
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.rules import RulesProposer, Variant
from optimizer.store import RunStore, StoredEpisode
from optimizer.tasks import Expect, Task, load_tasks
from optimizer.text import first_sentence, sentences, words

ROOT = Path(__file__).resolve().parent.parent


def tool(name: str, description: str, params: dict[str, str], required: Sequence[str] | None = None) -> ToolDef:
    props = {p: {"type": kind, "title": p.title()} for p, kind in params.items()}
    return ToolDef(name, description, {"type": "object", "properties": props,
                                       "required": list(params if required is None else required)})


CATALOG = Catalog("shop", (
    tool("get_customer", "Get customer info", {"query": "string"}),
    tool("lookup_order", "Get order details", {"order_id": "string"}),
    tool("track_shipment", "Get status", {"number": "string"}),
    tool("refund_order", "Process refund", {"order": "string", "amount": "integer"}),
    tool("list_orders", "List orders", {"customer": "string", "since": "string"}, required=["customer"]),
    tool("search", "Search", {"q": "string"}),
    tool("get_policy", "Get policy", {"topic": "string"}),
))
PROMPTS = {
    "track1": ("Where is my parcel for order #10007 right now?", ["track_shipment"]),
    "track2": ("Has the courier picked up the parcel for order #10020 yet?", ["track_shipment"]),
    "track3": ("When will the parcel with order #10016 arrive at my door?", ["track_shipment"]),
    "total1": ("How much was I charged for order #10007?", ["lookup_order"]),
    "total2": ("What did order #10023 cost and when was it charged?", ["lookup_order"]),
    "cust1": ("What membership level does jane.doe@example.com have?", ["get_customer"]),
    "cust2": ("Which phone number is on file for jane.doe@example.com?", ["get_customer"]),
    "refund1": ("Refund $25.00 on order #10012 for the broken hinge.", ["refund_order"]),
    "refund2": ("Give the customer their money back for order #10021, the whole $42.50.", ["refund_order"]),
    "since1": ("Which orders has C-1008 placed since March 10, 2026?", ["list_orders"]),
    "docs1": ("Find the runbook about database failover in the wiki.", ["search"]),
    "docs2": ("Search the wiki for the deploy runbook and its owner.", ["search"]),
}
TASKS = {tid: Task(tid, prompt, Expect(tools=tuple(tools)), "train") for tid, (prompt, tools) in PROMPTS.items()}
TASKS["held"] = Task("held", "HELDOUT parcel courier question for #10099", Expect(tools=("track_shipment",)), "heldout")


def call(name: str, arguments: dict[str, Any], result: str, error: bool = False) -> dict:
    return {"id": "c1", "name": name, "original": name, "arguments": arguments, "result": result, "is_error": error}


def episode(task_id: str, calls: Sequence[dict], passed: bool = False, model: str = "sim:lexical") -> StoredEpisode:
    t = TASKS[task_id]
    data = {"prompt": t.prompt, "answer": "", "verdict": {"passed": passed, "reason": ""},
            "expected_tools": list(t.expect.tools), "calls": list(calls)}
    return StoredEpisode(f"{task_id}-{model}", model, task_id, t.split, "base", 0, "completed", passed, data)


DOCS = "3 documents match '{q}' (searched 16 documents):\n- eng/runbooks/x.md (DOC-101): Runbook on {q}. Owner: Ann."
EPISODES = [
    *(episode(t, [call("lookup_order", {"order_id": "#10007"}, "Order #10007: total $219.40, placed 2026-03-01.")],
              model=m) for t in ("track1", "track2", "track3") for m in ("sim:lexical", "sim:skim")),
    episode("total1", [call("lookup_order", {"order_id": "#10007"}, "Order #10007: total $219.40.")], passed=True),
    episode("total2", [call("lookup_order", {"order_id": "C-1008"}, "Error executing tool lookup_order: validation: "
                            "order_id must be an order number like #10042 (got 'C-1008').", error=True)]),
    episode("since1", [call("list_orders", {"customer": "C-1008", "since": "March 10, 2026"},
                            "Error executing tool list_orders: validation: since must be an ISO date YYYY-MM-DD, "
                            "e.g. 2026-03-01 (got 'March 10, 2026').", error=True)]),
    episode("refund1", [call("refund_order", {"order": "#10012", "amount": 25},
                             "Refund RF-1a2b3c submitted: $0.25 on order #10012; it posts in 5-7 days.")]),
    episode("refund2", [call("get_customer", {"query": "#10021"}, "Error executing tool get_customer: validation: "
                             "query must be an email address or a customer id like C-1042 (got '#10021').", True)]),
    episode("docs1", [call("search", {"q": "runbook failover"}, DOCS.format(q="runbook failover"))], passed=True),
    episode("docs2", [call("search", {"q": "deploy runbook"}, DOCS.format(q="deploy runbook"))], passed=True),
    episode("cust1", [call("get_customer", {"query": "jane.doe@example.com"}, "Customer C-1004: tier gold.")]),
    episode("held", [call("lookup_order", {"order_id": "#10099"}, "HELDOUT result")]),
]
FORMAT_WORDS = frozenset(("iso", "date", "yyyy", "mm", "dd", "e", "g", "hh"))
LITERALS = ("jane.doe@example.com", "#10007", "#10012", "C-1008", "10021", "42.50", "25.00", "2026-03-01",
            "#10042", "C-1042", "broken hinge")


def evidence(episodes: Sequence[StoredEpisode] = EPISODES) -> Evidence:
    return build_evidence(episodes, TASKS)


def propose(
    current: Candidate | None = None, *, k: int = 4, seed: int = 0, ev: Evidence | None = None
) -> list[Candidate]:
    result = RulesProposer().propose(CATALOG, current or Candidate(), ev or evidence(), k=k, seed=seed)
    return list(asyncio.run(result))


def test_it_is_an_offline_proposer() -> None:
    proposer = RulesProposer()
    assert isinstance(proposer, Proposer) and proposer.name == "rules" and proposer.offline is True


def test_k_distinct_candidates_never_the_current_one() -> None:
    candidates = propose(k=4)
    assert len(candidates) == 4
    assert len({c.key for c in candidates}) == 4
    assert Candidate().key not in {c.key for c in candidates}
    for candidate in candidates:
        apply(CATALOG, candidate)  # valid names, no clashes
    assert propose(candidates[0], k=4)[0].key != candidates[0].key


def test_each_candidate_says_how_it_was_written() -> None:
    proposer = RulesProposer()
    candidates = asyncio.run(proposer.propose(CATALOG, Candidate(), evidence(), k=8, seed=0))
    reasons = [proposer.rationale(c.key) or "" for c in candidates]
    assert reasons[0] == ("rules: 3 result fields, inputs named, up to 2 boundary lines, generic names renamed, "
                          "up to 2 asked phrases")
    assert "rules: parameter descriptions only" in reasons and len(set(reasons)) == len(reasons)


def test_deterministic_for_a_seed() -> None:
    first = [json.dumps(c.to_json(), sort_keys=True) for c in propose(seed=3)]
    assert first == [json.dumps(c.to_json(), sort_keys=True) for c in propose(seed=3)]
    assert first != [json.dumps(c.to_json(), sort_keys=True) for c in propose(seed=4)]


def test_boundary_sentence_names_the_tool_that_was_expected() -> None:
    with_boundaries = [c for c in propose(k=8) if "instead" in (c.edits["lookup_order"].description or "")]
    assert len(with_boundaries) >= 4
    for candidate in with_boundaries:
        text = candidate.edits["lookup_order"].description or ""
        boundary = next(s for s in sentences(text) if "instead" in s)
        assert boundary == "Not for tracking a shipment; use track_shipment instead."  # the neighbour's job
    quiet = RulesProposer([Variant(boundaries=0)]).propose(CATALOG, Candidate(), evidence(), k=1, seed=0)
    assert "instead" not in (asyncio.run(quiet)[0].edits["lookup_order"].description or "")


def test_first_sentence_says_what_the_tool_does_its_inputs_and_what_comes_back() -> None:
    edits = propose(k=1)[0].edits
    assert first_sentence(edits["get_customer"].description or "") == \
        "Look up a customer by email address or customer id."
    assert first_sentence(edits["lookup_order"].description or "") == \
        "Look up an order by order number; returns its total and placed date."
    assert first_sentence(edits["list_orders"].description or "") == "List orders by customer, optionally by ISO date."


def test_parameter_formats_are_paraphrased_with_invented_examples() -> None:
    edits = propose(k=1)[0].edits
    assert edits["lookup_order"].parameters["order_id"] == "An order number, e.g. #24680."
    assert edits["list_orders"].parameters["since"] == "Optional. An ISO date, YYYY-MM-DD, e.g. 2031-05-17."
    assert edits["refund_order"].parameters["amount"] == "An amount in cents, e.g. 2468 for $24.68."
    assert edits["get_customer"].parameters["query"] == \
        "An email address or customer id, e.g. C-2468."


def test_a_bare_generic_verb_gets_the_object_its_results_name() -> None:
    renamed = propose(k=1)[0].edits["search"]
    assert renamed.name == "search_documents"
    assert (renamed.description or "").startswith("Search documents by keywords; returns each document's owner")
    assert any(c.edits.get("search", ToolEdit()).name is None for c in propose(k=8))  # some keep the name


def test_descriptions_are_one_to_three_sentences_verb_first_and_short() -> None:
    texts = [edit.description for c in propose(k=8) for edit in c.edits.values() if edit.description]
    assert texts
    for text in texts:
        parts = sentences(text)
        assert len(text) <= 400 and 1 <= len(parts) <= 3, text
        assert all(words(p)[0] in KNOWN_VERBS or p.startswith("Not for ") for p in parts), text
        assert words(parts[0])[0] in KNOWN_VERBS, text


def test_no_vocabulary_lists_or_promotion() -> None:
    for candidate in propose(k=8):
        for edit in candidate.edits.values():
            for text in [edit.description or "", *edit.parameters.values()]:
                assert not re.search(r"\([^)]*(?:,| or )[^)]*\)", text), text  # no parenthesised lists
                assert not re.search(r"also fits|typical requests|use it for|best|always|most reliable", text, re.I)


def test_nothing_from_the_prompts_errors_or_arguments_leaks_into_definitions() -> None:
    prompts = [t.prompt for t in TASKS.values() if t.split == "train"]
    sent = {str(v) for e in EPISODES for c in e.data["calls"] for v in c["arguments"].values()}
    errors = [c["result"] for e in EPISODES for c in e.data["calls"] if c["is_error"]]
    for candidate in propose(k=8):
        text = json.dumps(candidate.to_json())
        assert leaked_phrases(text, prompts) == []
        assert not [literal for literal in LITERALS if literal in text]
        assert not [value for value in sent if value in text]
        for error in errors:  # no run of five words from an error message, format notation aside
            said = [w for w in words(error) if w not in FORMAT_WORDS]
            grams = {" ".join(said[i : i + 5]) for i in range(len(said) - 4)}
            assert not [g for g in grams if g in " ".join(w for w in words(text) if w not in FORMAT_WORDS)], error
        assert "HELDOUT" not in text


def test_leaked_phrases_finds_values_and_phrases() -> None:
    prompts = ["Refund $25.00 on order #10012 for jane@x.org, the broken hinge on C-1008.", "Order 123456 is late."]
    assert leaked_phrases("Write to jane@x.org about C-1008 and #10012.", prompts) == [
        "#10012", "10012", "1008", "C-1008", "jane@x.org"]
    assert leaked_phrases("Amounts like $25.00 or 123456.", prompts) == ["$25.00", "123456"]
    assert leaked_phrases("Use for the broken hinge on a door.", prompts) == []  # common English words: not copying
    assert leaked_phrases("About broken, hinge or order; refunds of 25 cents.", prompts) == []
    assert synthesise("prefixed_id", "C-1008", prompts) == "C-2468"
    assert synthesise("hash_id", "#10042", prompts) == "#24680"
    assert synthesise("prefixed_id", "C-2468", [*prompts, "C-2468"]) == "C-4680"  # never a value a prompt holds


def test_builds_on_the_current_candidate() -> None:
    current = Candidate(edits={
        "get_policy": ToolEdit(description="Read store policy text for general questions."),
        "search": ToolEdit(name="find_docs"),
        "track_shipment": ToolEdit(parameters={"number": "A tracking number or an order number."}),
    })
    for candidate in propose(current, k=4):
        assert candidate.edits["get_policy"] == current.edits["get_policy"]  # no tasks, no failures: kept
        assert candidate.edits["search"].name == "find_docs"  # not renamed again
        assert candidate.edits["track_shipment"].parameters["number"] == "A tracking number or an order number."


def test_boundaries_survive_a_round_that_no_longer_shows_the_confusion() -> None:
    first = Candidate(edits={"lookup_order": ToolEdit(description="Look up an order. Not for parcels; use "
                                                                  "track_shipment instead.")})
    fixed = [e for e in EPISODES if e.task_id not in ("track1", "track2", "track3")]
    proposer = RulesProposer([Variant(), Variant(fields=0, boundary_fields=0)])
    later = asyncio.run(proposer.propose(CATALOG, first, evidence(fixed), k=2, seed=0))
    assert len(later) == 2
    assert all("use track_shipment instead" in (c.edits["lookup_order"].description or "") for c in later)


def test_boundaries_name_tools_that_exist_whatever_edits_are_mixed() -> None:
    """The search mixes per-tool edits of several candidates and picks the scheme: a boundary line names the
    other tool by its original name, which `apply` turns into the name it is exposed under."""
    candidates = propose(k=8)
    pool = pool_from(Candidate(), candidates)
    for number in range(24):
        choice = {tool: (number * (i + 3)) % len(options) for i, (tool, options) in enumerate(pool.edits.items())}
        mixed = candidate_from(pool, choice, ("none", "prefix", "suffix")[number % 3])
        exposed = apply(CATALOG, mixed)
        names = {t.name for t in exposed.tools}
        for tool in exposed.tools:
            for named in re.findall(r"use (\S+) instead", tool.description):
                assert named in names, (named, tool.description)


def test_renames_follow_the_namespace_scheme() -> None:
    current = Candidate(scheme="prefix")
    candidate = propose(current, k=1)[0]
    assert candidate.scheme == "prefix" and candidate.edits["search"].name == "search_documents"
    exposed = apply(CATALOG, candidate)
    assert "shop_search_documents" in [t.name for t in exposed.tools]
    lookup = next(t for t in exposed.tools if t.name == "shop_lookup_order")
    assert "use shop_track_shipment instead" in lookup.description


def test_nothing_to_say_gives_no_candidates() -> None:
    assert propose(k=4, ev=build_evidence([], {})) == []


@pytest.mark.slow
def test_improves_the_support_example_for_both_offline_agents(tmp_path: Path) -> None:
    """Real baseline episodes of examples/support, then each proposal evaluated like the loop does."""
    server = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
    tasks_dir = str(ROOT / "examples/support/tasks")
    models = ("sim:lexical", "sim:skim")

    def evaluate(run_id: str, overlay: Path | None = None) -> dict[str, int]:
        config = EvalConfig(server=server, tasks=tasks_dir, models=models, overlay=str(overlay) if overlay else None,
                            max_connections=8, server_instances=1)  # each server process costs a second to start
        report = asyncio.run(run_eval(config, runs_dir=tmp_path, run_id=run_id))
        return {model: report["results"][model]["train"]["passed"] for model in models}

    baseline = evaluate("base")
    store = RunStore.open_existing(tmp_path, "base")
    try:
        catalog = Catalog("support", tuple(ToolDef.from_canonical(t) for t in store.get_meta("catalog")))
        episodes = list(store.episodes())
    finally:
        store.close()
    tasks = {t.id: t for t in load_tasks(tasks_dir).tasks}
    ev = build_evidence(episodes, tasks)
    assert {e.task_id for e in ev.failures} <= {t.id for t in tasks.values() if t.split == "train"}
    candidates = asyncio.run(RulesProposer().propose(catalog, Candidate(), ev, k=2, seed=0))
    prompts = [t.prompt for t in tasks.values() if t.split == "train"]
    scores = []
    for index, candidate in enumerate(candidates):
        assert leaked_phrases(json.dumps(candidate.to_json()), prompts) == []
        save_overlay(tmp_path / f"c{index}.json", candidate)
        scores.append(evaluate(f"c{index}", tmp_path / f"c{index}.json"))
    best = max(scores, key=lambda s: sum(s.values()))
    for model in models:
        assert best[model] >= baseline[model] + 4, (model, baseline, best)
    for candidate in candidates:  # honest text costs little: at most 1.4 times the thin originals
        assert definition_tokens(catalog, candidate) <= 1.4 * definition_tokens(catalog, Candidate())


@pytest.mark.parametrize("budget", [2_000, 12_000])
def test_works_from_evidence_cut_to_any_budget(budget: int) -> None:
    ev = build_evidence(EPISODES, TASKS, token_budget=budget)
    assert len(propose(k=2, ev=ev)) == 2


# --- a server the proposer has never seen: errors that ask for nothing nameable, an id taken for prose ---------

CLUB = Catalog("club", (
    tool("get_member", "Get member", {"member": "string"}),
    tool("book_class", "", {"member": "string", "data": "string", "when": "string"}),
))
CLUB_TASKS = {
    "m1": Task("m1", "What plan is member L-2001 on?", Expect(tools=("get_member",)), "train"),
    "m2": Task("m2", "How many visits has L-2002 made?", Expect(tools=("get_member",)), "train"),
    "b1": Task("b1", "Book yoga for L-2001 on 2031-02-03 and send it to ana@club.example.",
               Expect(tools=("book_class",)), "train"),
}


def club_episode(task_id: str, calls: Sequence[dict], passed: bool = False) -> StoredEpisode:
    t = CLUB_TASKS[task_id]
    data = {"prompt": t.prompt, "answer": "", "verdict": {"passed": passed, "reason": ""},
            "expected_tools": list(t.expect.tools), "calls": list(calls)}
    return StoredEpisode(f"{task_id}-lex", "sim:lexical", task_id, "train", "base", 0, "completed", passed, data)


CLUB_EPISODES = [
    club_episode("m1", [call("get_member", {"member": "L-1234"}, "Bad member value 'L-1234'.", error=True)]),
    club_episode("m2", [call("get_member", {"member": "L-2002"}, "Member L-2002: Bo Lin, plan silver, joined "
                                                                 "2023-05-06, visits 14.")], passed=True),
    club_episode("m1", [call("get_member", {"member": "L-2001"}, "Member L-2001: Ana Ruiz, plan gold, joined "
                                                                 "2024-01-02, visits 3.")], passed=True),
    club_episode("b1", [call("get_member", {"member": "ana@club.example"}, "Member L-2001: Ana Ruiz, plan gold, "
                                                                           "joined 2024-01-02, visits 3.")]),
    club_episode("b1", [call("book_class", {"member": "yoga", "data": "ana@club.example", "when": "2031-02-03"},
                             "Bad member value 'yoga'.", error=True)]),
]


def test_on_an_unseen_server_no_error_text_no_sent_value_no_guessed_prose() -> None:
    ev = build_evidence(CLUB_EPISODES, CLUB_TASKS)
    candidates = asyncio.run(RulesProposer().propose(CLUB, Candidate(), ev, k=8, seed=0))
    assert candidates
    for candidate in candidates:
        text = json.dumps(candidate.to_json())
        assert "Bad member" not in text and "L-1234" not in text and "yoga" not in text
        assert "ana@club.example" not in text and "short title" not in text
        for edit in candidate.edits.values():
            for hint in edit.parameters.values():
                assert not re.search(r"L-\d{4}", hint) or "L-2468" in hint  # invented, never L-2001/L-2002
    described = [c.edits["get_member"].description for c in candidates if c.edits["get_member"].description]
    assert "Look up a member by email address or member id; returns its plan, visits and joined date." in [
        first_sentence(d or "") for d in described]
    assert candidates[0].edits["get_member"].parameters["member"] == \
        "An email address or member id, e.g. L-2468."  # the shapes it accepted


def test_a_tool_nobody_called_takes_the_noun_of_the_records_its_requests_name() -> None:
    """No call of get_item in the evidence, but its requests carry PRJ-… ids, which open the records another
    tool lists and counts as "tasks"."""
    catalog = Catalog("work", (tool("get_item", "", {"id": "string"}), tool("find", "Find", {"q": "string"})))
    tasks = {
        "g1": Task("g1", "Who owns PRJ-12?", Expect(tools=("get_item",)), "train"),
        "g2": Task("g2", "Is PRJ-40 done yet?", Expect(tools=("get_item",)), "train"),
        "f1": Task("f1", "Anything about the launch checklist?", Expect(tools=("find",)), "train"),
    }
    listing = "2 tasks match 'launch':\nPRJ-3 [open] Launch checklist\nPRJ-9 [done] Launch retro"

    def ep(task_id: str, calls: Sequence[dict]) -> StoredEpisode:
        data = {"prompt": tasks[task_id].prompt, "answer": "", "verdict": {"passed": False, "reason": ""},
                "expected_tools": list(tasks[task_id].expect.tools), "calls": list(calls)}
        return StoredEpisode(f"{task_id}-x", "sim:lexical", task_id, "train", "base", 0, "completed", False, data)

    episodes = [ep("g1", [call("find", {"q": "PRJ-12"}, listing)]), ep("g2", [call("find", {"q": "PRJ-40"}, listing)]),
                ep("f1", [call("find", {"q": "launch checklist"}, listing)])]
    candidate = asyncio.run(RulesProposer().propose(catalog, Candidate(), build_evidence(episodes, tasks), k=1,
                                                    seed=0))[0]
    assert candidate.edits["get_item"].name == "get_task"
    assert candidate.edits["find"].name == "find_tasks"
    assert (candidate.edits["find"].description or "").startswith("Find tasks by keywords")
    assert "Not for looking up a task; use get_item instead." in (candidate.edits["find"].description or "")

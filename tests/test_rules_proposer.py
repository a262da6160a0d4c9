"""The offline rules proposer on hand-built catalogs and episodes: it states only what errors, results' units and
the schema showed, with invented examples, leaves names and the server's descriptions alone, and proposes nothing
when nothing is grounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.files.store import StoredEpisode
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.evidence import build_evidence
from optimizer.propose.formats import invent as synthesise
from optimizer.propose.formats import read_message
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.rules import RulesProposer, replacements
from optimizer.tasks import Expect, Task
from optimizer.text.tokens import words


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


def episode(task_id: str, calls: Sequence[dict], passed: bool = False, model: str = "sim:lexical",
            tasks: Mapping[str, Task] | None = None) -> StoredEpisode:
    """A train episode of `tasks` (TASKS unless given) with these calls."""
    t = (TASKS if tasks is None else tasks)[task_id]
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
    candidates = propose(k=4)  # every grounded tool failed here: "failing tools only" adds nothing new
    assert len(candidates) == 2 and len(propose(k=1)) == 1
    assert len({c.key for c in candidates}) == 2
    assert Candidate().key not in {c.key for c in candidates}
    for candidate in candidates:
        apply(CATALOG, candidate)
    assert all(c.key != candidates[0].key for c in propose(candidates[0], k=4))


def test_each_candidate_says_how_it_was_written() -> None:
    proposer = RulesProposer()
    candidates = asyncio.run(proposer.propose(CATALOG, Candidate(), evidence(), k=4, seed=0))
    reasons = [proposer.rationale(c.key) or "" for c in candidates]
    assert reasons[0] == "rules: grounded facts, with invented examples, on every tool"
    assert reasons[1:] == ["rules: grounded facts, without examples, on every tool"]


def test_deterministic_for_a_seed() -> None:
    first = [json.dumps(c.to_json(), sort_keys=True) for c in propose(seed=3)]
    assert first == [json.dumps(c.to_json(), sort_keys=True) for c in propose(seed=3)]


def test_it_states_what_errors_and_results_showed_with_invented_examples() -> None:
    edits = propose(k=1)[0].edits
    assert edits["lookup_order"].parameters == {"order_id": "An order number, e.g. #24680."}
    assert edits["list_orders"].parameters == {"since": "An ISO date, YYYY-MM-DD, e.g. 2031-05-17."}
    assert edits["refund_order"].parameters == {"amount": "An amount in cents, e.g. 2468 for $24.68."}
    assert edits["get_customer"].parameters == {"query": "An email address or customer id, e.g. C-2468."}


def test_without_examples_it_states_the_facts_alone() -> None:
    proposer = RulesProposer()
    candidates = asyncio.run(proposer.propose(CATALOG, Candidate(), evidence(), k=4, seed=0))
    bare = next(c for c in candidates if proposer.rationale(c.key) == "rules: grounded facts, without examples, "
                                                                      "on every tool")
    assert bare.edits["refund_order"].parameters == {"amount": "An amount in cents."}
    assert bare.edits["list_orders"].parameters == {"since": "An ISO date, YYYY-MM-DD."}


def test_names_and_the_servers_descriptions_are_left_alone() -> None:
    for candidate in propose(k=4):
        for edit in candidate.edits.values():
            assert edit.name is None and edit.description is None


def test_nothing_from_successful_results_prompts_errors_or_arguments() -> None:
    prompts = [t.prompt for t in TASKS.values() if t.split == "train"]
    sent = {str(v) for e in EPISODES for c in e.data["calls"] for v in c["arguments"].values()}
    errors = [c["result"] for e in EPISODES for c in e.data["calls"] if c["is_error"]]
    for candidate in propose(k=4):
        text = json.dumps(candidate.to_json())
        assert leaked_phrases(text, prompts) == []
        assert not [literal for literal in LITERALS if literal in text]
        assert not [value for value in sent if value in text]
        for error in errors:  # no run of five words from an error message, format notation aside
            said = [w for w in words(error) if w not in FORMAT_WORDS]
            grams = {" ".join(said[i : i + 5]) for i in range(len(said) - 4)}
            assert not [g for g in grams if g in " ".join(w for w in words(text) if w not in FORMAT_WORDS)], error
        lowered = text.lower()
        for word in ("runbook", "owner", "tier", "gold", "total", "placed", "documents", "posts"):
            assert word not in lowered, word  # words of the successful results
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
        "lookup_order": ToolEdit(parameters={"order_id": "The order's number, such as #24680."}),
    })
    for candidate in propose(current, k=4):
        assert candidate.edits["get_policy"] == current.edits["get_policy"]
        assert candidate.edits["search"] == current.edits["search"]
        assert candidate.edits["lookup_order"].parameters["order_id"] == "The order's number, such as #24680."


def test_a_fact_follows_the_parameters_own_description_and_is_not_repeated() -> None:
    catalog = Catalog("shop", (
        tool("list_orders", "List orders", {"customer": "string", "since": "string"}, required=["customer"]),))
    described = Catalog("shop", (ToolDef("list_orders", "List orders", {
        "type": "object", "required": ["customer"], "properties": {
            "customer": {"type": "string"}, "since": {"type": "string", "description": "Earliest order date"}}}),))
    ev = evidence([e for e in EPISODES if e.task_id == "since1"])
    plain = asyncio.run(RulesProposer().propose(catalog, Candidate(), ev, k=1, seed=0))[0]
    after = asyncio.run(RulesProposer().propose(described, Candidate(), ev, k=1, seed=0))[0]
    assert plain.edits["list_orders"].parameters["since"] == "An ISO date, YYYY-MM-DD, e.g. 2031-05-17."
    assert after.edits["list_orders"].parameters["since"] == \
        "Earliest order date. An ISO date, YYYY-MM-DD, e.g. 2031-05-17."
    again = asyncio.run(RulesProposer().propose(described, after, ev, k=4, seed=0))
    assert all(c.edits["list_orders"].parameters["since"] == after.edits["list_orders"].parameters["since"]
               for c in again)  # already said: not said twice


def test_nothing_to_say_gives_no_candidates() -> None:
    assert propose(k=4, ev=build_evidence([], {})) == []
    succeeded = [e for e in EPISODES if e.task_id in ("docs1", "docs2", "total1", "cust1")]
    assert propose(k=4, ev=evidence(succeeded)) == []  # results alone ground nothing


@pytest.mark.parametrize("budget", [2_000, 12_000])
def test_works_from_evidence_cut_to_any_budget(budget: int) -> None:
    ev = build_evidence(EPISODES, TASKS, token_budget=budget)
    assert len(propose(k=2, ev=ev)) == 2


def test_a_retired_tool_whose_errors_name_its_replacement_points_to_it() -> None:
    catalog = Catalog("ledger", (tool("submit_claim", "Submit an expense claim.", {"amount": "integer"}),
                                 tool("file_claim", "File an expense claim.", {"amount": "integer"})))
    tasks = {f"c{n}": Task(f"c{n}", f"Claim {n} pounds for a taxi.", Expect(tools=("file_claim",)), "train")
             for n in (3, 4)}
    refused = "Error executing tool submit_claim: business: this ledger is closed; file claims with file_claim."
    episodes = [episode(t, [call("submit_claim", {"amount": 300}, refused, True)], tasks=tasks) for t in tasks]

    candidate = asyncio.run(RulesProposer().propose(catalog, Candidate(), build_evidence(episodes, tasks),
                                                    k=1, seed=0))[0]
    assert candidate.edits["submit_claim"].description == "Submit an expense claim. Use file_claim instead."
    assert "file_claim" not in candidate.edits


def test_a_tool_whose_errors_ask_for_another_tool_first_is_not_retired() -> None:
    catalog = Catalog("vcs", (tool("show_log", "Show the history.", {"repo": "string"}),
                              tool("open_repo", "Open a repository for this session.", {"repo": "string"})))
    tasks = {f"l{n}": Task(f"l{n}", f"Show the last {n} commits.", Expect(tools=("show_log",)), "train")
             for n in (3, 4)}
    refused = "Error: no repository is open. Pass repo, or call open_repo first."

    evidence = build_evidence([episode(t, [call("show_log", {}, refused, True)], tasks=tasks) for t in tasks], tasks)
    assert replacements(catalog, [*evidence.failures, *evidence.successes]) == {}


@pytest.mark.parametrize("message", ["Either names must be provided, or all must be true.", "force must be true",
                                     "a label must be given"])
def test_a_message_that_asks_for_a_value_to_be_there_names_no_kind_of_value(message: str) -> None:
    assert read_message(message, []).text([]) == ""


# --- a server the proposer has never seen -----------------------------------------------------------------

CLUB = Catalog("club", (
    tool("get_member", "Get member", {"member": "string"}),
    tool("book_class", "", {"member": "string", "data": "string", "when": "string"}),
    tool("list_fines", "Fines", {"member": "string"}),
))
CLUB_TASKS = {
    "m1": Task("m1", "What plan is member L-2001 on?", Expect(tools=("get_member",)), "train"),
    "m2": Task("m2", "How many visits has L-2002 made?", Expect(tools=("get_member",)), "train"),
    "b1": Task("b1", "Book yoga for L-2001 on 2031-02-03 and send it to ana@club.example.",
               Expect(tools=("book_class",)), "train"),
    "f1": Task("f1", "Which fines does L-2002 owe?", Expect(tools=("list_fines",)), "train"),
}


def club_episode(task_id: str, calls: Sequence[dict], passed: bool = False) -> StoredEpisode:
    return episode(task_id, calls, passed, tasks=CLUB_TASKS)


FINES = "Fines:\n- ana: 2.50 overdue\n- chen: 1.00 damaged"
CLUB_EPISODES = [
    club_episode("m1", [call("get_member", {"member": "L-1234"}, "Bad member value 'L-1234'.", error=True)]),
    club_episode("m2", [call("get_member", {"member": "L-2002"}, "Member L-2002: Bo Lin, plan silver, joined "
                                                                 "2023-05-06, visits 14.")], passed=True),
    club_episode("m1", [call("get_member", {"member": "L-2001"}, "Member L-2001: Ana Ruiz, plan gold, joined "
                                                                 "2024-01-02, visits 3.")], passed=True),
    club_episode("b1", [call("book_class", {"member": "yoga", "data": "ana@club.example", "when": "2031-02-03"},
                             "Bad member value 'yoga'.", error=True)]),
    club_episode("f1", [call("list_fines", {"member": "L-2002"}, FINES)]),
    club_episode("f1", [call("list_fines", {"member": "L-2001"}, FINES)]),
]


def test_on_an_unseen_server_no_error_text_no_sent_value_no_result_word() -> None:
    ev = build_evidence(CLUB_EPISODES, CLUB_TASKS)
    candidates = asyncio.run(RulesProposer().propose(CLUB, Candidate(), ev, k=8, seed=0))
    assert candidates
    for candidate in candidates:
        text = json.dumps(candidate.to_json())
        for banned in ("Bad member", "L-1234", "L-2001", "L-2002", "yoga", "ana", "chen", "plan", "visits",
                       "overdue", "damaged", "silver"):
            assert banned not in text, banned
    member = candidates[0].edits["get_member"].parameters["member"]
    assert member == "A member id, e.g. L-2468."  # the one shape it accepted, invented

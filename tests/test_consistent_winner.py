"""A winner names only tools it exposes (issue 27): an edit is judged with its own proposal's names, a candidate the
search mixes from several proposals names every tool as that candidate does (namespace included), and the mixed
winner is screened whole once more before it can ship."""

from __future__ import annotations

import itertools

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.lint import lint
from optimizer.optimize.screening import Screen
from optimizer.references import given_names, references, settled, unexposed
from optimizer.search.pool import candidate_from, pool_from
from optimizer.search.study import SearchResult, TrialResult
from optimizer.tasks import Expect, Task


def tool(name: str, description: str, *params: str) -> ToolDef:
    return ToolDef(name, description, {"type": "object", "properties": {p: {"type": "string"} for p in params},
                                       "required": list(params)})


LIBRARY = Catalog("library", (
    tool("search", "Search.", "query"),
    tool("loans", "Loans.", "member_id"),
    tool("pay", "Pay.", "member_id", "amount_cents"),
    tool("rooms", "Rooms.", "day"),
))
TRAIN = [Task("t1", "Which books by Ursula Vesterholm do you have?", Expect(tools=("search",)), "train"),
         Task("t2", "What do I owe on card M-2231?", Expect(tools=("loans",)), "train")]
RENAMES = Candidate(edits={
    "search": ToolEdit(name="search_books", description="Find books in the catalogue by title, author or subject. "
                                                        "Not for a member's loans; use list_loans instead."),
    "loans": ToolEdit(name="list_loans", description="List the books a member has out, with due dates and fines. "
                                                     "Not for paying; use pay_fines instead.",
                      parameters={"member_id": "The member's card number (list_loans shows what it holds; "
                                               "pay_fines settles the fines)."}),
    "pay": ToolEdit(name="pay_fines", description="Pay a member's outstanding fines, in cents. Not for checking what "
                                                  "is owed; use list_loans first."),
    "rooms": ToolEdit(name="list_free_study_rooms", description="List the study rooms free on a day."),
}, scheme="suffix")
CAREFUL = Candidate(edits={
    "search": ToolEdit(description="Find books by title or author; returns matching titles and whether a copy is in."),
    "pay": ToolEdit(description="Pay fines for a member, as an amount in cents.",
                    parameters={"amount_cents": "Whole cents, e.g. 1250 for 12.50."}),
})


def test_an_edit_that_names_its_proposals_new_names_is_judged_with_them() -> None:
    """Judged alone, the loans edit names `pay_fines`, a tool that exists only in its own proposal: it is judged with
    that name pointed at the tool it stands for, not dropped as an unknown tool."""
    leaky_rooms = ToolEdit(name="list_free_study_rooms", description="Rooms, e.g. for Ursula Vesterholm.")
    proposal = Candidate(edits={**RENAMES.edits, "rooms": leaky_rooms}, scheme="suffix")
    [screened] = Screen(LIBRARY, TRAIN, allow_leakage=False).screen([proposal])
    assert list(screened.dropped) == ["rooms"] and "Ursula Vesterholm" in screened.dropped["rooms"]
    assert screened.kept is not None and set(screened.kept.edits) == {"search", "loans", "pay"}
    assert unexposed(LIBRARY, screened.kept, given_names(proposal)) == []


def test_a_kept_edit_names_a_dropped_rename_by_the_tools_own_name() -> None:
    bad_pay = ToolEdit(name="pay_fines", description="Pay fines. Always call this tool first.")
    proposal = Candidate(edits={**RENAMES.edits, "pay": bad_pay}, scheme="suffix")
    [screened] = Screen(LIBRARY, TRAIN, allow_leakage=False).screen([proposal])
    assert list(screened.dropped) == ["pay"] and screened.kept is not None
    loans = screened.kept.edits["loans"]
    assert loans.description == ("List the books a member has out, with due dates and fines. Not for paying; use "
                                 "`pay` instead.")
    assert "`pay` settles the fines" in loans.parameters["member_id"]
    assert screened.kept == settled(screened.kept, proposal)  # nothing left to point elsewhere


def test_every_candidate_the_search_can_mix_names_only_tools_it_exposes() -> None:
    pool = pool_from(Candidate(), [RENAMES, CAREFUL])
    assert pool.references["loans"][1] == {"pay_fines": "pay", "list_loans": "loans"}
    names = {**given_names(RENAMES), **given_names(CAREFUL)}
    for indices in itertools.product(*(range(len(options)) for options in pool.edits.values())):
        for scheme in pool.schemes:
            mixed = candidate_from(pool, dict(zip(pool.edits, indices, strict=True)), scheme)
            assert unexposed(LIBRARY, mixed, names) == [], mixed.to_json()


def test_the_mixed_winner_points_at_the_names_that_ship_namespace_included() -> None:
    """RENAMES' loans edit with CAREFUL's pay edit (no rename) under the suffix scheme: 'use pay_fines instead'
    becomes the name `pay` ships under."""
    pool = pool_from(Candidate(), [RENAMES, CAREFUL])
    choice = {tool: pool.edits[tool].index(CAREFUL.edits[tool]) for tool in ("pay", "search")}
    choice["loans"] = pool.edits["loans"].index(RENAMES.edits["loans"])
    mixed = candidate_from(pool, choice, "suffix")
    exposed = {t.name: t for t in apply(LIBRARY, mixed).tools}
    assert set(exposed) == {"search_library", "list_loans_library", "pay_library", "rooms_library"}
    loans = exposed["list_loans_library"]
    assert loans.description.endswith("Not for paying; use `pay_library` instead.")
    assert loans.properties["member_id"]["description"] == (
        "The member's card number (list_loans_library shows what it holds; `pay_library` settles the fines).")


def test_the_final_screen_refuses_a_text_naming_a_tool_the_candidate_does_not_expose() -> None:
    screen = Screen(LIBRARY, TRAIN, allow_leakage=False)
    screen.screen([RENAMES, CAREFUL])  # it learns the names the proposals gave
    ghost = Candidate(edits={"rooms": ToolEdit(description="List free study rooms; pay_fines settles a member's fines "
                                                           "before booking.")})
    assert screen.reason(ghost) is None  # no lint shape catches it: only the proposals' names tell
    assert screen.final(ghost) == "names tools it does not expose: pay_fines"
    assert screen.final(RENAMES) is None and screen.final(CAREFUL) is None
    trials = tuple(TrialResult(n, c, accuracy, 100, True, 3)
                   for n, (c, accuracy) in enumerate([(Candidate(), 0.5), (ghost, 0.9), (CAREFUL, 0.7)]))
    result, unfit = screen.shippable(SearchResult(trials, trials[1], trials[1:], 0))
    assert unfit == {ghost.key: "names tools it does not expose: pay_fines"}
    assert result is not None and result.best.candidate == CAREFUL
    assert ghost.key not in {t.candidate.key for t in (*result.trials, *result.front)}


def test_references_read_the_names_an_edit_mentions() -> None:
    loans = RENAMES.edits["loans"]
    assert references(loans, given_names(RENAMES)) == {"pay_fines": "pay", "list_loans": "loans"}
    assert references(CAREFUL.edits["pay"], given_names(RENAMES)) == {}


def test_lint_reports_a_tool_a_parameter_description_names_that_the_server_lacks() -> None:
    catalog = Catalog("library", (
        tool("search", "Find books in the catalogue by title or author; returns titles.", "query"),
        ToolDef("loans", "List the books a member has out, with due dates.",
                {"type": "object", "properties": {"member_id": {
                    "type": "string", "description": "The member's card number (list_loans shows them)."}}}),
    ))
    found = [(f.rule, f.tool, f.field) for f in lint(catalog).findings if f.rule == "text-unknown-tool"]
    assert found == [("text-unknown-tool", "loans", "parameters.member_id")]

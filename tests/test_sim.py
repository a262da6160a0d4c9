"""The simulated agents (`sim:lexical`, `sim:skim`) driven turn by turn on hand-built catalogs.

They are test doubles for the harness, not quality evidence. These tests pin the behaviour the harness tests rely
on: tools chosen by word overlap (boundary sentences, skim's first sentence and positional name weights included),
arguments filled from the values in the text and from earlier results, errors with a format hint retried once, an
answer made of the results, and everything reproducible from a seed.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence

import pytest
from fakes.sim import SimAgent

from optimizer.definitions import Candidate, Catalog, ToolDef, apply
from optimizer.models import load_model, parse_models
from optimizer.models.base import AgentModel, Message, ModelSpecError, ToolCall, ToolResult, Turn

ORDER_ID = {"order_id": {"type": "string", "description": "The order number."}}
EMAIL = {"email": {"type": "string", "description": "The customer's email address."}}
GOOD_TRACK = ("Track a package's delivery: carrier, tracking number and delivery date for an order #NNNNN. "
              "Not for order totals or items; use lookup_order instead.")


def tool(name: str, description: str, params: dict | None = None, required: Sequence[str] | None = None) -> ToolDef:
    props = params or {}
    return ToolDef(name, description, {"type": "object", "properties": props,
                                       "required": list(props if required is None else required)})


THIN = (
    tool("get_customer", "Get customer info", EMAIL),
    tool("lookup_order", "Get order details", ORDER_ID),
    tool("track_shipment", "Get status", ORDER_ID),
)
GOOD = (*THIN[:2], tool("track_shipment", GOOD_TRACK, ORDER_ID))


def take_turn(agent: AgentModel, tools: Sequence[ToolDef], messages: Sequence[Message] | str, seed: int = 0) -> Turn:
    if isinstance(messages, str):
        messages = [Message("user", messages)]
    return asyncio.run(agent.turn("You are a support agent.", tools, messages, seed=seed))  # type: ignore[call-arg]


def first_tool(agent: AgentModel, tools: Sequence[ToolDef], prompt: str, seed: int = 0) -> str:
    calls = take_turn(agent, tools, prompt, seed).tool_calls
    assert calls, "the agent made no call"
    return calls[0].name


Responder = Callable[[ToolCall], tuple[str, bool]]


def converse(agent: AgentModel, tools: Sequence[ToolDef], prompt: str, respond: Responder,
             max_turns: int = 8) -> tuple[list[Turn], list[Message]]:
    """Run the agent loop with a fake tool executor; returns every turn and the final history."""
    messages = [Message("user", prompt)]
    turns: list[Turn] = []
    for _ in range(max_turns):
        turn = take_turn(agent, tools, messages)
        turns.append(turn)
        messages.append(Message("assistant", turn.text, turn.tool_calls))
        if not turn.tool_calls:
            return turns, messages
        results = []
        for call in turn.tool_calls:
            text, is_error = respond(call)
            results.append(ToolResult(call.id, text, is_error))
        messages.append(Message("tool", tool_results=tuple(results)))
    raise AssertionError(f"no answer after {max_turns} turns: {turns}")


def lexical(**options: float) -> SimAgent:
    return SimAgent("lexical", **options)  # type: ignore[arg-type]


def skim(**options: float) -> SimAgent:
    return SimAgent("skim", **options)  # type: ignore[arg-type]


# --- when no tool shares a word with the request ------------------------------------------------

UNRELATED = (
    tool("create_records", "Create several records at once.", {"records": {"type": "array"}}),
    tool("delete_names", "Delete entries by name.", {"names": {"type": "array", "items": {"type": "string"}}}),
    tool("open_names", "Open entries by name.", {"names": {"type": "array", "items": {"type": "string"}}}),
)


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_question_that_matches_no_tool_goes_to_a_tool_that_does_not_write(habit: str) -> None:
    # no word of the question is in any definition: every tool scores zero
    calls = take_turn(SimAgent(habit), UNRELATED, "Who does Yuki Tanaka work for these days?").tool_calls
    assert calls and calls[0].name == "open_names"


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_an_instruction_that_matches_no_tool_takes_the_tool_listed_first(habit: str) -> None:
    calls = take_turn(SimAgent(habit), UNRELATED, "The old intranet has moved on. Deal with it.").tool_calls
    assert calls and calls[0].name == "create_records"


TICKETS = (
    tool("get_customer", "Get customer info", EMAIL),
    tool("create_ticket", "Create a ticket, for requests that mention a complaint.",
         {"subject": {"type": "string"}}),
)


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_question_never_goes_to_a_tool_that_writes_even_when_only_it_shares_a_word(habit: str) -> None:
    assert first_tool(SimAgent(habit), TICKETS, "Is there already a complaint about a broken hinge?") == "get_customer"
    assert first_tool(SimAgent(habit), TICKETS, "Open a complaint about a broken hinge.") == "create_ticket"


ACCOUNTS = (
    tool("update_customer", "Update a field of a customer record.",
         {"customer_id": {"type": "string"}, "field": {"type": "string"}, "value": {"type": "string"}}),
    tool("get_balance", "Get the amount outstanding on a customer's subscription.", {"id": {"type": "string"}}),
)


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_statement_is_read_with_the_question_it_sets_up_not_acted_on(habit: str) -> None:
    # alone, "C-1006 says her customer record is wrong" reads as a request to update the record
    prompt = "C-1006 says her customer record is wrong. How much is outstanding on her subscription?"
    calls = take_turn(SimAgent(habit), ACCOUNTS, prompt).tool_calls
    assert [c.name for c in calls] == ["get_balance"] and calls[0].arguments == {"id": "C-1006"}


# --- (a) thin versus good definitions ------------------------------------------------------------


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_thin_definitions_send_a_package_question_to_the_order_tool(habit: str) -> None:
    calls = take_turn(SimAgent(habit), THIN, "Where is my package? Order #10007").tool_calls
    assert [c.name for c in calls] == ["lookup_order"]
    assert calls[0].arguments == {"order_id": "#10007"}


def test_thin_definitions_give_no_signal_so_noise_makes_the_choice_arbitrary() -> None:
    prompt = "When will my package #10007 be delivered?"
    agent = lexical(noise=0.5)
    thin = Counter(first_tool(agent, THIN, prompt, seed) for seed in range(120))
    good = Counter(first_tool(agent, GOOD, prompt, seed) for seed in range(120))
    # thin: "Get status" says nothing about packages, so at least two tools are picked often
    assert sum(1 for n in thin.values() if n >= 20) >= 2, thin
    assert thin["track_shipment"] < 90, thin
    # good: the description names packages and delivery, so the right tool dominates
    assert good["track_shipment"] >= 85, good
    assert good["track_shipment"] > thin["track_shipment"] + 20


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_good_description_makes_the_choice_without_noise(habit: str) -> None:
    assert first_tool(SimAgent(habit), GOOD, "When will my package #10007 be delivered?") == "track_shipment"
    assert first_tool(SimAgent(habit), GOOD, "What was the total of order #10007?") == "lookup_order"


# --- (b) boundary sentences ----------------------------------------------------------------------


def test_a_boundary_sentence_moves_the_choice_to_the_named_alternative() -> None:
    prompt = "Where is my package from order #10007 right now?"
    assert first_tool(lexical(), THIN, prompt) == "lookup_order"
    bounded = (THIN[0], tool("lookup_order", "Get order details. Not for package delivery or shipping status; "
                                             "use track_shipment instead.", ORDER_ID), THIN[2])
    assert first_tool(lexical(), bounded, prompt) == "track_shipment"
    # text the exclusion does not mention is unaffected
    assert first_tool(lexical(), bounded, "What was the total of order #10007?") == "lookup_order"


def test_an_exclusion_does_not_penalise_words_the_tool_claims_itself() -> None:
    # GOOD_TRACK says "for an order" and "Not for order totals": the shared word "order" is not an exclusion
    # (before the fix the exclusion's "order" cost track_shipment 1.5 x the query weight and lookup_order won)
    agent = lexical()
    for prompt in ("What's the tracking number of my order #10007?", "Track delivery of order #10007"):
        assert first_tool(agent, GOOD, prompt) == "track_shipment", prompt
        without_boundary = (*THIN[:2], tool("track_shipment", GOOD_TRACK.split(" Not for")[0], ORDER_ID))
        assert first_tool(agent, without_boundary, prompt) == "track_shipment", prompt


def test_the_boundary_raises_the_alternative_when_the_prompt_hits_the_exclusion() -> None:
    prompt = "Which items and totals are on #10007?"
    thin_scores = Counter(first_tool(lexical(noise=0.3), THIN, prompt, s) for s in range(60))
    good_scores = Counter(first_tool(lexical(noise=0.3), GOOD, prompt, s) for s in range(60))
    assert good_scores["lookup_order"] > thin_scores["lookup_order"], (thin_scores, good_scores)
    assert good_scores["track_shipment"] < thin_scores["track_shipment"], (thin_scores, good_scores)


# --- (c) skim: first sentence only, positional name weights -------------------------------------


def test_skim_reads_only_the_first_sentence() -> None:
    tools = (
        tool("get_status", "Get status. Tracks a package and says when it will be delivered.", ORDER_ID),
        tool("get_details", "Get details about a package.", ORDER_ID),
    )
    prompt = "When will my package #10007 be delivered?"
    assert first_tool(lexical(), tools, prompt) == "get_status"
    assert first_tool(skim(), tools, prompt) == "get_details"
    # moving the decisive words into the first sentence brings skim along
    front = (tool("get_status", "Tracks a package and says when it will be delivered. Get status.", ORDER_ID),
             tools[1])
    assert first_tool(skim(), front, prompt) == "get_status"


def test_skim_ignores_a_boundary_in_the_second_sentence() -> None:
    prompt = "Where is my package from order #10007 right now?"
    bounded = (THIN[0], tool("lookup_order", "Get order details. Not for package delivery or shipping status; "
                                             "use track_shipment instead.", ORDER_ID), THIN[2])
    assert first_tool(lexical(), bounded, prompt) == "track_shipment"
    assert first_tool(skim(), bounded, prompt) == "lookup_order"


def test_skim_weights_name_tokens_by_position_so_the_namespace_scheme_matters() -> None:
    catalog = Catalog("support", (
        tool("lookup_order", "Get details.", ORDER_ID),
        tool("track_shipment", "Package tracking for an order.", ORDER_ID),
        tool("get_customer", "Get customer info.", EMAIL),
    ))
    prompt = "Where is the package for order #10007?"
    chosen = {}
    for scheme in ("prefix", "suffix"):
        exposed = apply(catalog, Candidate(scheme=scheme, word="support"))
        names = [t.name for t in exposed.tools]
        assert ("support_lookup_order" if scheme == "prefix" else "lookup_order_support") in names
        for habit in ("lexical", "skim"):
            chosen[habit, scheme] = exposed.original(first_tool(SimAgent(habit), exposed.tools, prompt))
    # in support_lookup_order "order" is the third token and weighs less than in lookup_order_support
    assert chosen["skim", "prefix"] == "track_shipment"
    assert chosen["skim", "suffix"] == "lookup_order"
    # lexical does not weight by position: the scheme changes nothing
    assert chosen["lexical", "prefix"] == chosen["lexical", "suffix"] == "lookup_order"


# --- (d) argument filling ------------------------------------------------------------------------


def only_call(tools: Sequence[ToolDef] | ToolDef, prompt: str, agent: AgentModel | None = None) -> ToolCall:
    tools = (tools,) if isinstance(tools, ToolDef) else tuple(tools)
    calls = take_turn(agent or lexical(), tools, prompt).tool_calls
    assert len(calls) == 1, calls
    return calls[0]


def test_fills_an_email() -> None:
    call = only_call(tool("get_customer", "Find a customer.", EMAIL), "Look up the customer jane@x.com please")
    assert call.arguments == {"email": "jane@x.com"}


def test_fills_hash_ids_and_prefixed_ids_by_their_described_shapes() -> None:
    refund = tool("check_refund", "Check refunds.", {
        "order": {"type": "string", "description": "Order number like #12345."},
        "customer": {"type": "string", "description": "Customer id like C-1004."},
    })
    call = only_call(refund, "Did C-1042 get money back on #10007?")
    assert call.arguments == {"order": "#10007", "customer": "C-1042"}


def test_prefers_the_id_a_description_asks_for_over_an_email() -> None:
    account = tool("get_account", "Get an account.", {"customer_id": {"type": "string",
                                                                      "description": "Customer id like C-1004."}})
    assert only_call(account, "Show the account of jane@x.com, that is C-1042").arguments == {"customer_id": "C-1042"}


def test_fills_iso_dates_into_date_parameters() -> None:
    invoices = tool("list_invoices", "List invoices.", {
        "customer_id": {"type": "string", "description": "Customer id like C-1004."},
        "since": {"type": "string", "description": "First day, YYYY-MM-DD."},
        "until": {"type": "string", "format": "date"},
    }, required=["customer_id"])
    call = only_call(invoices, "List invoices for C-1042 from 2024-01-05 to 2024-03-31")
    assert call.arguments == {"customer_id": "C-1042", "since": "2024-01-05", "until": "2024-03-31"}


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        ({"type": "integer", "description": "Amount to refund in cents."}, 2550),
        ({"type": "integer", "description": "Amount in minor units."}, 2550),
        ({"type": "number", "description": "Amount to refund in dollars."}, 25.5),
        ({"type": "integer"}, 25),
    ],
)
def test_money_becomes_cents_only_when_the_description_says_so(amount: dict, expected: object) -> None:
    refund = tool("refund_order", "Refund an order.", {
        "order_id": {"type": "string", "description": "Order number like #12345."}, "amount": amount})
    call = only_call(refund, "Refund $25.50 on order #10007.")
    assert call.arguments == {"order_id": "#10007", "amount": expected}
    assert type(call.arguments["amount"]) is type(expected)


def test_picks_the_enum_value_named_in_the_text() -> None:
    priority = tool("set_priority", "Set a ticket priority.", {
        "ticket": {"type": "string", "description": "Ticket id like T-507."},
        "priority": {"type": "string", "enum": ["low", "normal", "urgent"]},
    })
    assert only_call(priority, "Make ticket T-507 urgent").arguments == {"ticket": "T-507", "priority": "urgent"}
    # an optional enum with no value in the text stays out; a required one falls back to its first value
    assert only_call(priority, "Bump ticket T-507").arguments == {"ticket": "T-507", "priority": "low"}
    optional = tool("set_priority", "Set a ticket priority.", priority.input_schema["properties"], required=["ticket"])
    assert only_call(optional, "Bump ticket T-507").arguments == {"ticket": "T-507"}


def test_a_free_text_parameter_takes_the_quoted_string() -> None:
    search = tool("search_docs", "Search the docs.", {"query": {"type": "string", "description": "What to find."}})
    assert only_call(search, 'Search the docs for "rate limits" please').arguments == {"query": "rate limits"}
    unquoted = only_call(search, "Search the docs for rate limits on uploads").arguments["query"]
    assert "rate limits" in unquoted and "the" not in unquoted.split()


def test_optional_parameters_without_a_value_are_left_out() -> None:
    orders = tool("list_orders", "List a customer's orders.", {
        "customer_id": {"type": "string", "description": "Customer id like C-1004."},
        "since": {"type": "string", "description": "YYYY-MM-DD"},
        "limit": {"type": "integer"},
    }, required=["customer_id"])
    assert only_call(orders, "List the orders of C-1042").arguments == {"customer_id": "C-1042"}


# --- (e) several steps, and waiting for a result ------------------------------------------------

CUSTOMER_FLOW = (
    tool("get_customer", "Find a customer by email.", EMAIL),
    tool("list_orders", "List a customer's orders.", {"customer_id": {"type": "string",
                                                                      "description": "Customer id like C-1004."}}),
    tool("lookup_order", "Get order details.", {"order_id": {"type": "string",
                                                             "description": "Order number like #12345."}}),
)


def fake_backend(call: ToolCall) -> tuple[str, bool]:
    if call.name == "get_customer":
        return '{"id": "C-1042", "name": "Jane Doe"}', False
    if call.name == "list_orders":
        if call.arguments.get("customer_id") != "C-1042":
            return "validation: customer_id must look like C-1234", True
        return "Orders of C-1042: #10007, #10008", False
    if call.name == "lookup_order":
        return f"Order {call.arguments.get('order_id')}: total $54.20, shipped", False
    return f"Error: unknown tool {call.name}", True


def test_two_clauses_two_steps_and_the_second_waits_for_the_first_result() -> None:
    turns, _ = converse(lexical(), CUSTOMER_FLOW, "Find the customer jane@x.com, then list their orders.",
                        fake_backend)
    assert [[(c.name, c.arguments) for c in t.tool_calls] for t in turns] == [
        [("get_customer", {"email": "jane@x.com"})],
        [("list_orders", {"customer_id": "C-1042"})],  # the id came from the first result
        [],
    ]
    assert turns[0].stop_reason == "tool_use"
    assert turns[-1].stop_reason == "end_turn"


def test_independent_steps_are_called_together_in_one_turn() -> None:
    turns, _ = converse(lexical(), CUSTOMER_FLOW, "Look up order #10007 and then find the customer jane@x.com.",
                        fake_backend)
    assert [(c.name, c.arguments) for c in turns[0].tool_calls] == [
        ("lookup_order", {"order_id": "#10007"}), ("get_customer", {"email": "jane@x.com"})]
    assert len({c.id for c in turns[0].tool_calls}) == 2
    assert len(turns) == 2


def test_a_single_request_is_one_call() -> None:
    turns, _ = converse(lexical(), CUSTOMER_FLOW, "What is in order #10007?", fake_backend)
    assert [len(t.tool_calls) for t in turns] == [1, 0]


# --- (f) errors and retries ----------------------------------------------------------------------

ACCOUNT = (tool("get_account", "Get a customer's billing account.",
                {"customer": {"type": "string", "description": "The customer."}}),)
ACCOUNT_PROMPT = "Show the billing account of jane@x.com (customer C-1042)"


def failing(first_error: str, later: str = "Plan Pro, balance $0.00") -> Responder:
    seen: list[ToolCall] = []

    def respond(call: ToolCall) -> tuple[str, bool]:
        seen.append(call)
        return (first_error, True) if len(seen) == 1 else (later, False)

    return respond


def test_retries_once_with_the_shape_the_error_asks_for() -> None:
    turns, _ = converse(lexical(), ACCOUNT, ACCOUNT_PROMPT, failing("validation: customer must look like C-1234"))
    calls = [c for t in turns for c in t.tool_calls]
    assert [c.arguments for c in calls] == [{"customer": "jane@x.com"}, {"customer": "C-1042"}]
    assert [c.id for c in calls] == ["call_0_0", "call_0_1"]
    assert "Plan Pro" in turns[-1].text


def test_retries_only_once() -> None:
    always = failing("validation: customer must look like C-1234", later="validation: customer must look like C-1234")
    turns, _ = converse(lexical(), ACCOUNT, ACCOUNT_PROMPT, lambda c: (always(c)[0], True))
    assert sum(len(t.tool_calls) for t in turns) == 2
    assert not turns[-1].tool_calls


def test_the_example_in_an_error_is_not_taken_as_data() -> None:
    turns, _ = converse(lexical(), ACCOUNT, "Show the billing account of jane@x.com",
                        failing("validation: customer must look like C-1234"))
    calls = [c for t in turns for c in t.tool_calls]
    assert all(c.arguments["customer"] != "C-1234" for c in calls)


@pytest.mark.parametrize("error", [
    "business: the account C-1042 is closed",
    "permission: billing records are restricted to the billing team",
])
def test_no_retry_after_business_or_permission_errors(error: str) -> None:
    turns, _ = converse(lexical(), ACCOUNT, ACCOUNT_PROMPT, failing(error))
    assert [len(t.tool_calls) for t in turns] == [1, 0]
    assert error in turns[-1].text


# --- (g) the answer ------------------------------------------------------------------------------


def test_the_final_turn_has_no_calls_and_reports_every_result() -> None:
    turns, messages = converse(lexical(), CUSTOMER_FLOW, "Find the customer jane@x.com, then list their orders.",
                               fake_backend)
    final = turns[-1]
    assert final.tool_calls == ()
    assert final.stop_reason == "end_turn"
    assert '{"id": "C-1042", "name": "Jane Doe"}' in final.text
    assert "Orders of C-1042: #10007, #10008" in final.text
    assert final.usage.input_tokens > turns[0].usage.input_tokens > 0
    assert final.usage.output_tokens > 0
    assert messages[-1].role == "assistant"


def test_no_tools_means_an_answer_without_calls() -> None:
    turn = take_turn(lexical(), (), "Where is my package?")
    assert turn.tool_calls == ()
    assert "could not find a tool" in turn.text


# --- (h) determinism and noise -------------------------------------------------------------------


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_same_inputs_same_turns(habit: str) -> None:
    def run() -> list[Turn]:
        return converse(SimAgent(habit, seed=3, noise=0.4), CUSTOMER_FLOW,  # type: ignore[arg-type]
                        "Find the customer jane@x.com, then list their orders.", fake_backend)[0]

    assert run() == run()


def test_noise_varies_the_choice_across_episode_seeds_but_not_within_one() -> None:
    agent = lexical(noise=0.5)
    prompt = "Where is my package #10007?"
    by_seed = {seed: first_tool(agent, THIN, prompt, seed) for seed in range(60)}
    assert len(set(by_seed.values())) >= 2, by_seed
    for seed in (0, 7, 59):
        assert first_tool(agent, THIN, prompt, seed) == by_seed[seed]
        assert first_tool(lexical(noise=0.5), THIN, prompt, seed) == by_seed[seed]


def test_the_agent_seed_changes_the_draws_too() -> None:
    prompt = "Where is my package #10007?"
    a = [first_tool(SimAgent("lexical", seed=1, noise=0.5), THIN, prompt, s) for s in range(40)]
    b = [first_tool(SimAgent("lexical", seed=2, noise=0.5), THIN, prompt, s) for s in range(40)]
    assert a != b


def test_without_noise_the_episode_seed_does_not_matter() -> None:
    prompt = "Where is my package #10007?"
    assert {first_tool(lexical(), GOOD, prompt, seed) for seed in range(20)} == {"track_shipment"}


# --- (i) model strings ---------------------------------------------------------------------------


def test_load_model_parses_options() -> None:
    model = load_model("sim:lexical?seed=3&noise=0.2&latency_ms=5")
    assert isinstance(model, SimAgent)
    assert isinstance(model, AgentModel)
    assert (model.habit, model.seed, model.noise, model.latency_ms) == ("lexical", 3, 0.2, 5.0)
    assert model.id == "sim:lexical?seed=3&noise=0.2&latency_ms=5"
    assert model.settings == {"seed": 3, "noise": 0.2}
    assert model.offline is True
    plain = load_model("sim:skim")
    assert (plain.id, plain.habit, plain.seed, plain.noise) == ("sim:skim", "skim", 0, 0.0)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("claude-sonnet", "unknown model"),
        ("gpt:4o", "unknown model"),
        ("sim:fancy", "unknown offline agent sim:fancy"),
        ("sim:lexical?temperature=1", "unknown option(s) temperature"),
        ("sim:lexical?seed=abc", "bad option value"),
        ("sim:lexical?noise=lots", "bad option value"),
        ("sim:lexical?noise=1.5", "noise must be between 0 and 1"),
        ("sim:lexical?latency_ms=", "bad option value"),
    ],
)
def test_load_model_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_model(spec)


def test_parse_models_splits_and_dedupes() -> None:
    assert parse_models(" sim:lexical, sim:skim ,sim:lexical,") == ["sim:lexical", "sim:skim"]
    with pytest.raises(ModelSpecError):
        parse_models(" , ")


def test_latency_really_delays_each_turn() -> None:
    agent = load_model("sim:lexical?latency_ms=60")
    started = time.perf_counter()
    take_turn(agent, GOOD, "Where is my package #10007?")
    assert time.perf_counter() - started >= 0.06


FILES = (
    tool("read_file", "Read the contents of a file.", {"path": {"type": "string"}}),
    tool("write_file", "Write new content to a file at a path.",
         {"path": {"type": "string"}, "content": {"type": "string"}}),
)


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_question_never_writes_under_a_namespace_of_several_words(habit: str) -> None:
    # the verb follows the namespace "secure_files_server_", not its first word; the writing tool shares more
    # words with the question
    exposed = apply(Catalog("secure-files-server", FILES), Candidate(scheme="prefix"))
    assert first_tool(SimAgent(habit), exposed.tools, "What new content is in notes/todo.md?") == (
        "secure_files_server_read_file")


def test_a_file_path_reads_as_a_file_and_a_trailing_slash_as_a_folder() -> None:
    from optimizer.text.values import describe_values

    assert describe_values("what docs/setup.md says").split() == ["what", "file", "path", "says"]
    assert describe_values("everything in web/").split() == ["everything", "in", "folder", "path"]
    assert describe_values("the repo at /srv/repo").split() == ["the", "repo", "at", "path"]


CLOCKS = (  # the same words: only the parameters tell them apart
    tool("current_time", "Tell the time in a zone.", {"timezone": {"type": "string"}}),
    tool("convert_time", "Tell the time in a zone.",
         {"source_timezone": {"type": "string"}, "time": {"type": "string"}, "target_timezone": {"type": "string"}}),
)
READERS = (
    tool("read_text_file", "Read a file's contents.", {"path": {"type": "string"}}),
    tool("read_multiple_files", "Read files' contents at once.",
         {"paths": {"type": "array", "items": {"type": "string"}}}),
)


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_clock_time_in_the_request_goes_to_the_tool_that_takes_a_time(habit: str) -> None:
    assert first_tool(SimAgent(habit), CLOCKS, "Quarter to nine in Darwin: what is the time in UTC?") == (
        "convert_time")


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_two_paths_go_to_the_tool_that_takes_a_list_of_paths(habit: str) -> None:
    assert first_tool(SimAgent(habit), READERS, "Read docs/setup.md and docs/archive/setup.md.") == (
        "read_multiple_files")
    assert first_tool(SimAgent(habit), READERS, "Read docs/setup.md.") == "read_text_file"


def test_fit_factors_count_the_values_each_tool_can_take() -> None:
    from fakes.sim.fit import UNUSED, capacity, fit_factors

    takes = {t.name: capacity(t, read_descriptions=True) for t in (*CLOCKS, *READERS)}
    assert takes["read_multiple_files"]["path"] > 2 and takes["read_text_file"] == {"path": 1}
    two = fit_factors("Compare a/b.md with c/d.md", takes)
    assert two["read_multiple_files"] == 1.0 and two["read_text_file"] == pytest.approx(UNUSED + (1 - UNUSED) / 2)
    assert two["convert_time"] == UNUSED
    assert set(fit_factors("Hello there", takes).values()) == {1.0}  # no value given: nothing to tell apart


RETIRED = (
    tool("read_file", "Read the contents of a file. DEPRECATED: Use read_text_file instead.",
         {"path": {"type": "string"}}),
    tool("read_text_file", "Read a text document.", {"path": {"type": "string"}}),
)


def test_a_deprecated_tool_sends_the_reader_to_its_replacement() -> None:
    # read_file shares "file" and "contents" with the request; read_text_file shares nothing but "read"
    prompt = "Read the contents of the file notes/todo.md."
    assert first_tool(SimAgent("lexical"), RETIRED, prompt) == "read_text_file"
    assert first_tool(SimAgent("skim"), RETIRED, prompt) == "read_file"  # the notice is past its first sentence
    leading = (tool("read_file", "DEPRECATED: Use read_text_file instead. Read the contents of a file.",
                    {"path": {"type": "string"}}), RETIRED[1])
    assert first_tool(SimAgent("skim"), leading, prompt) == "read_text_file"


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_when_no_word_matches_the_tool_that_takes_the_given_value_wins_the_tie(habit: str) -> None:
    tools = (tool("zone_now", "Zone clock.", {"timezone": {"type": "string"}}),
             tool("zone_shift", "Zone shift.", {"timezone": {"type": "string"}, "time": {"type": "string"}}))
    assert first_tool(SimAgent(habit), tools, "When it's 08:00 in Nairobi, is it already afternoon in Tokyo?") == (
        "zone_shift")
    assert first_tool(SimAgent(habit), tools, "Is it already afternoon in Tokyo?") == "zone_now"  # listed first


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_question_after_a_lead_in_never_writes(habit: str) -> None:
    # "python" and "version" are only in the writing tool's words
    tools = (tool("read_text_file", "Read a text document.", {"path": {"type": "string"}}),
             tool("write_file", "Write Python version notes to a file.",
                  {"path": {"type": "string"}, "content": {"type": "string"}}))
    prompt = "According to docs/setup.md, which Python version do I need?"
    assert first_tool(SimAgent(habit), tools, prompt) == "read_text_file"


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_change_reads_as_update_and_remove_as_delete(habit: str) -> None:
    tools = (tool("get_customer", "Look up a customer by phone number.", {"phone": {"type": "string"}}),
             tool("update_customer", "Update a customer.", {"id": {"type": "string"}, "value": {"type": "string"}}),
             tool("delete_customer", "Delete a customer.", {"id": {"type": "string"}}))
    assert first_tool(SimAgent(habit), tools, "Change the phone number of customer C-1012.") == "update_customer"
    assert first_tool(SimAgent(habit), tools, "Remove customer C-1012 by phone number.") == "delete_customer"


@pytest.mark.parametrize("habit", ["lexical", "skim"])
def test_a_complaint_with_a_question_never_writes(habit: str) -> None:
    # "Where is the delivery now?" is too short to stand alone and is read with the complaint before it
    tools = (tool("refund_order", "Refund an order by order number.", {"order": {"type": "string"}}),
             tool("track_shipment", "Track a shipment.", {"order": {"type": "string"}}))
    prompt = "My air purifier (order #10029) hasn't come. Where is the delivery now?"
    assert first_tool(SimAgent(habit), tools, prompt) == "track_shipment"

"""The offline readers that are real systems (`optimizer.readers`): a BM25 tool search and wordllama's trained
embeddings rank a server's tools for a request; the top hit is the reader's choice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from optimizer.definitions import Candidate, ToolDef
from optimizer.models import offline_banner, reader_agreement
from optimizer.readers import EmbeddingReader, SearchReader, load_reader, tool_text

TOOLS = [
    ToolDef("track_shipment", "Track a parcel with the courier: where it is now and when it should arrive.",
            {"type": "object", "properties": {"number": {"type": "string", "description": "Tracking number."}}}),
    ToolDef("refund_order", "Refund money for an order to the original payment method.",
            {"type": "object", "properties": {"order": {"type": "string"}}}),
    ToolDef("get_policy", "Read the store policy on returns, warranty or shipping costs.",
            {"type": "object", "properties": {"topic": {"type": "string"}}}),
]


def test_bm25_ranks_the_tools_that_share_words_with_the_request_and_finds_nothing_for_none() -> None:
    reader = SearchReader()
    assert reader.rank(TOOLS, "Where is my parcel? When will it arrive?")[0] == "track_shipment"
    assert reader.rank(TOOLS, "Please refund order 5")[0] == "refund_order"
    assert reader.rank(TOOLS, "xyzzy") == []


def test_the_embedding_reader_ranks_every_tool_by_meaning_and_is_deterministic() -> None:
    reader = EmbeddingReader()
    ranked = reader.rank(TOOLS, "I want my money back for the broken kettle")
    assert sorted(ranked) == sorted(t.name for t in TOOLS) and ranked[0] == "refund_order"
    assert reader.rank(TOOLS, "I want my money back for the broken kettle") == ranked
    assert reader.rank([], "anything") == []


def test_a_tools_text_is_its_name_as_words_its_description_and_its_parameters() -> None:
    assert tool_text(TOOLS[0]) == ("track shipment. Track a parcel with the courier: where it is now and when it "
                                   "should arrive. number: Tracking number.")


def test_readers_by_name() -> None:
    assert isinstance(load_reader("bm25"), SearchReader) and isinstance(load_reader("embed"), EmbeddingReader)
    with pytest.raises(ValueError, match="unknown reader"):
        load_reader("sim:lexical")


def test_a_readers_episode_ranks_the_tools_calls_nothing_and_passes_on_the_expected_first_tool() -> None:
    import asyncio

    from optimizer.definitions import Catalog, apply
    from optimizer.models import load_model
    from optimizer.run.episode import EpisodeConfig, run_episode
    from optimizer.scoring import choice_verdict
    from optimizer.tasks import Expect, Task

    async def never(name: str, arguments: dict[str, object]) -> object:
        raise AssertionError("a reader called a tool")

    exposed = apply(Catalog("shop", tuple(TOOLS)), Candidate(scheme="prefix"))
    task = Task("parcel", "Where is my parcel? When will it arrive?", Expect(tools=("track_shipment",)), "train")
    episode = asyncio.run(run_episode(task, load_model("reader:bm25"), exposed, never, EpisodeConfig()))
    assert episode.status == "completed" and episode.reading and episode.reading[0] == "track_shipment"
    assert [(c.name, c.original) for c in episode.calls] == [("shop_track_shipment", "track_shipment")]
    assert choice_verdict(task.expect, episode.called_tools[0]).passed
    assert not choice_verdict(Expect(tools=("refund_order",)), episode.called_tools[0]).passed
    assert choice_verdict(Expect(), None).passed  # a task that expects no tool: nothing found is right


def test_reader_models_by_name_take_no_turns() -> None:
    import asyncio

    from optimizer.models import load_model
    from optimizer.models.base import ModelSpecError

    reader = load_model("reader:embed")
    assert reader.id == "reader:embed" and reader.offline and reader.settings == {}
    with pytest.raises(NotImplementedError, match="takes no turns"):
        asyncio.run(reader.turn("", TOOLS, []))
    with pytest.raises(ModelSpecError, match="reader:bm25, reader:embed"):
        load_model("reader:sim")


def test_every_offline_banner_states_the_readers_measured_agreement_as_the_figures_page_has_it() -> None:
    measured = reader_agreement()
    banner = offline_banner(["reader:bm25", "reader:embed"])
    for reader in ("reader:bm25", "reader:embed"):
        assert f"{reader} on {measured['agreement'][reader]:.0%}" in banner
    assert f"of {measured['tasks']:,} calibration tasks" in banner
    assert "agree" not in offline_banner(["sim:lexical"]) and "calibration" not in offline_banner(["sim:lexical"])
    figures = (Path(__file__).resolve().parent.parent / "docs" / "figures.md").read_text(encoding="utf-8")
    row = re.search(r"^\| all \| (\d+) \| \d+% \| \d+% / (\d+)% / \d+% \| \d+% / (\d+)% / \d+% \|", figures, re.M)
    assert row is not None, "docs/figures.md has no calibration summary row"
    assert (int(row[1]), int(row[2]), int(row[3])) == (  # both written by one `bench/calibration.py --write`
        measured["tasks"], round(100 * measured["agreement"]["reader:bm25"]),
        round(100 * measured["agreement"]["reader:embed"]))

"""The shrink goal: the offline proposer removes only text it can prove redundant; `optimize --goal shrink` picks
the smallest candidate within the noise of the baseline for every model, tests non-inferiority on held-out and
reports the tokens saved per tool and per 1,000 requests."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.optimize.config import SHRINK_MARGIN, OptimizeConfig, gate_settings
from optimizer.optimize.rounds import smallest_mix
from optimizer.optimize.tokens import definition_tokens
from optimizer.propose.evidence import build_evidence
from optimizer.propose.lean import LEAN_ONLY, LeanSchemas
from optimizer.propose.shrink import ShrinkProposer, kept_sentences, redundant_parameter
from optimizer.text.tokens import sentences

CAVEAT = "Only works within allowed directories."


def tool(name: str, description: str, **params: dict[str, Any]) -> ToolDef:
    return ToolDef(name, description, {"type": "object", "properties": params, "required": list(params)[:1]})


CATALOG = Catalog("files", (
    tool("read_file", f"Read a file as text. Reads the file. Returns its lines. {CAVEAT}",
         path={"type": "string", "description": "The path of the file"}),
    tool("list_directory", f"List the entries of a folder, files and folders marked. {CAVEAT}",
         path={"type": "string", "description": "Folder to list, relative to the project root"}),
    tool("move_file", f"Move or rename a file; fails when the target exists. {CAVEAT}",
         source={"type": "string"}, destination={"type": "string", "description": "Destination path"}),
    tool("search_files", f"Find files whose names match a glob, recursively. {CAVEAT}",
         pattern={"type": "string", "description": "A glob such as *.md"},
         mode={"type": "string", "enum": ["fast", "full"], "description": "One of fast or full, a string value"}),
))


def propose(current: Candidate = Candidate(), k: int = 4) -> tuple[ShrinkProposer, list[Candidate]]:
    proposer = ShrinkProposer()
    return proposer, asyncio.run(proposer.propose(CATALOG, current, build_evidence([], {}), k=k, seed=0))


def test_sentences_that_repeat_the_name_or_another_sentence_go_and_the_first_stays() -> None:
    read = CATALOG.get("read_file")
    assert kept_sentences(read) == f"Read a file as text. Returns its lines. {CAVEAT}"  # "Reads the file." repeats
    lone = tool("read_file", "Read file.")
    assert kept_sentences(lone) == "Read file."  # the first sentence is never cut


def test_parameter_descriptions_that_repeat_the_name_or_the_schema_go_others_stay() -> None:
    read, search = CATALOG.get("read_file"), CATALOG.get("search_files")
    assert redundant_parameter(read, "path", read.properties["path"])
    assert redundant_parameter(search, "mode", search.properties["mode"])
    assert not redundant_parameter(search, "pattern", search.properties["pattern"])  # "glob" says more
    listing = CATALOG.get("list_directory")
    assert not redundant_parameter(listing, "path", listing.properties["path"])


def test_candidates_cut_only_redundant_text_and_are_smaller() -> None:
    proposer, candidates = propose()
    assert len(candidates) == 4 and len({c.key for c in candidates}) == 4
    base = definition_tokens(CATALOG, Candidate())
    for candidate in candidates:
        assert definition_tokens(CATALOG, candidate) < base
        assert all(edit.name is None for edit in candidate.edits.values())  # no renames for a shrink
        exposed = {t.name: t for t in apply(CATALOG, candidate).tools}
        for original in CATALOG.tools:  # what stays is the server's own sentences, the first always
            kept = sentences(exposed[original.name].description)
            assert kept[0] == sentences(original.description)[0]
            assert set(kept) <= set(sentences(original.description))
    widest = candidates[0]
    assert proposer.rationale(widest.key).endswith("a caveat every tool repeats, kept once")
    shown = [t.description for t in apply(CATALOG, widest).tools]
    assert sum(CAVEAT in d for d in shown) == 1
    assert "description" not in apply(CATALOG, widest).tools[0].input_schema["properties"]["path"]


def test_nothing_redundant_gives_no_candidate_and_a_cut_is_not_proposed_twice() -> None:
    lean = Catalog("lean", (tool("get_weather", "Current weather for a city.",
                                 city={"type": "string", "description": "A city name in English, e.g. Lisbon"}),))
    assert asyncio.run(ShrinkProposer().propose(lean, Candidate(), build_evidence([], {}), k=4, seed=0)) == []
    _, first = propose(k=1)
    _, again = propose(first[0], k=4)
    assert first[0].key not in {c.key for c in again}


GENERATED = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
             "properties": {"city": {"type": "string", "title": "City", "description": "A city name, e.g. Lisbon"}}}


def test_a_shrink_proposer_leans_every_tool_of_every_candidate_and_offers_lean_schemas_alone() -> None:
    evidence = build_evidence([], {})
    thin = Catalog("weather", (ToolDef("get_weather", "Current weather for a city.", GENERATED),))
    proposer = LeanSchemas(ShrinkProposer())
    only = asyncio.run(proposer.propose(thin, Candidate(), evidence, k=4, seed=0))
    assert [c.to_json() for c in only] == [{"tools": {"get_weather": {"lean_schema": True}}}]
    assert proposer.rationale(only[0].key) == LEAN_ONLY
    assert asyncio.run(proposer.propose(thin, only[0], evidence, k=4, seed=0)) == []  # nothing more to drop

    catalog = Catalog("files", (*CATALOG.tools, ToolDef("get_weather", "Current weather for a city.", GENERATED)))
    inner = ShrinkProposer()
    written = asyncio.run(inner.propose(catalog, Candidate(), evidence, k=2, seed=0))
    proposer = LeanSchemas(ShrinkProposer())
    leaned = asyncio.run(proposer.propose(catalog, Candidate(), evidence, k=2, seed=0))
    assert len(leaned) == 2  # k at most: no room left for lean schemas alone
    for plain, lean in zip(written, leaned, strict=True):
        assert lean.edits["get_weather"] == ToolEdit(lean_schema=True)  # untouched by the cut, leaned all the same
        assert {t: e for t, e in lean.edits.items() if t != "get_weather"} == plain.edits  # no metadata there
        assert proposer.rationale(lean.key) == inner.rationale(plain.key)


class Rewrites:
    """A repairing proposer double: its repair rewrites get_weather's description, built on `current`."""

    name, offline = "rewrites", False

    async def propose(self, *args: Any, **kwargs: Any) -> list[Candidate]:
        return []

    async def repair(self, catalog: Catalog, current: Candidate, evidence: Any, rejected: Any) -> list[Candidate]:
        return [Candidate(edits={**current.edits, "get_weather": ToolEdit(description="Weather now, by city.")})]

    def last_report(self) -> dict[str, Any]:
        return {}

    def rationale(self, key: str) -> str | None:
        return None


def test_a_shrink_repair_leans_only_the_tools_it_rewrites() -> None:
    catalog = Catalog("weather", (ToolDef("get_weather", "Current weather for a city.", GENERATED),
                                  ToolDef("get_forecast", "Forecast for a city.", GENERATED)))
    current = Candidate(edits={"get_forecast": ToolEdit(description="Five-day forecast for a city.")})
    repaired = asyncio.run(LeanSchemas(Rewrites()).repair(catalog, current, build_evidence([], {}), []))
    assert repaired == [Candidate(edits={  # get_forecast as current has it: the caller reads it as not rewritten
        "get_forecast": ToolEdit(description="Five-day forecast for a city."),
        "get_weather": ToolEdit(description="Weather now, by city.", lean_schema=True)})]


def test_the_gate_of_a_shrink_tests_non_inferiority() -> None:
    base = {"server": "x", "tasks": "t", "models": ("reader:bm25",)}
    assert gate_settings(OptimizeConfig(**base, goal="shrink")) == (None, SHRINK_MARGIN)
    assert gate_settings(OptimizeConfig(**base, goal="shrink", margin=0.05, max_drop=0.2)) == (0.2, 0.05)
    assert gate_settings(OptimizeConfig(**base)) == (0.0, None)


def test_the_smallest_mix_takes_each_tools_smallest_edit_from_any_proposal() -> None:
    catalog = Catalog("notes", (ToolDef("read_note", "Read a note by its id. " * 4),
                                ToolDef("list_notes", "List every note with its id. " * 4)))
    short_read = {"read_note": ToolEdit(description="Read a note by id.")}
    short_list = {"list_notes": ToolEdit(description="List notes.")}
    longer = {"read_note": ToolEdit(description="Read one note by its id, with its text. " * 5)}
    first, second = Candidate(edits=short_read), Candidate(edits={**short_list, **longer})
    mix = smallest_mix(catalog, Candidate(), [first, second])
    assert mix is not None and mix.edits == {**short_read, **short_list}
    assert definition_tokens(catalog, mix) < min(definition_tokens(catalog, c) for c in (first, second))
    assert smallest_mix(catalog, Candidate(), [mix]) is None  # already proposed
    assert smallest_mix(catalog, Candidate(), [Candidate(edits=longer)]) is None  # nothing smaller than current


VERBOSE = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("notes", log_level="WARNING")
CAVEAT = " Works only on the notes of the current user. This tool is useful for working with notes."
NOTES = {"N-1": "buy milk", "N-2": "call the plumber"}

@server.tool(description="Read a note by its id. Reads the note." + CAVEAT)
def read_note(note_id: str) -> str:
    return NOTES.get(note_id, "no such note")

@server.tool(description="List every note with its id. Lists the notes." + CAVEAT)
def list_notes() -> str:
    return "\\n".join(f"{k}: {v}" for k, v in NOTES.items())

@server.tool(description="Search the notes for a word. Searches notes." + CAVEAT)
def search_notes(word: str) -> str:
    return "\\n".join(k for k, v in NOTES.items() if word in v) or "nothing found"

if __name__ == "__main__":
    server.run()
'''


@pytest.mark.slow
def test_optimize_goal_shrink_offline_cuts_tokens_and_reports_the_saving(run_cli: Any, tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(VERBOSE, encoding="utf-8")
    tasks = [{"id": f"t{i}", "prompt": prompt, "expect": {"tools": [name]}, "split": "heldout" if i % 3 == 0 else
              "train"} for i, (prompt, name) in enumerate([
                  ("Show me note N-1.", "read_note"), ("What notes do I have?", "list_notes"),
                  ("Which note mentions the plumber?", "search_notes"), ("Open N-2 for me.", "read_note"),
                  ("List all my notes.", "list_notes"), ("Find notes about milk.", "search_notes")] * 2)]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks), encoding="utf-8")
    result = run_cli("--server", f"{sys.executable} {tmp_path / 'server.py'}", "--tasks", str(tmp_path / "tasks.jsonl"),
                     "--offline", "--goal", "shrink", "--rounds", "2", "--server-instances", "1", "--runs-dir",
                     str(tmp_path / "runs"), "--run-id", "s", "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    tokens = summary["definition_tokens"]
    assert summary["goal"] == "shrink" and tokens["winner"] < tokens["baseline"]
    assert tokens["saved_per_1000_requests"] == (tokens["baseline"] - tokens["winner"]) * 1000
    assert set(tokens["per_tool"]) == {"read_note", "list_notes", "search_notes"}
    assert summary["gate"]["margin"] == SHRINK_MARGIN and summary["gate"]["max_drop"] is None
    assert "smallest_mix" in summary["rounds"][0] and "lean_only" in summary["rounds"][0]
    for model, verdict in summary["gate"]["models"].items():
        assert verdict["p_noninferior"] is not None, model  # the non-inferiority test ran
    overlay = json.loads((tmp_path / "runs" / "s" / "overlay.json").read_text(encoding="utf-8"))
    assert overlay["tools"] and all("name" not in edit for edit in overlay["tools"].values())
    assert all(edit.get("lean_schema") for edit in overlay["tools"].values())  # FastMCP titles every parameter
    report = (tmp_path / "runs" / "s" / "report.md").read_text(encoding="utf-8")
    assert "per 1,000 requests" in report and "goal: shrink" in report

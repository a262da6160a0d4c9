"""Recorded real proposals (issue 27): for every bundled example and test-bed server, a Claude model's answer to the
proposer request the project sends (tests/fixtures/proposals/, made with bench/real_proposals.py). Replayed through
the real SDK and the local fake Messages API, none is rejected but for a reason a reviewer would give too, and no
candidate the search can mix from them names a tool it does not expose."""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy
from fakes.recorded_proposals import RecordedProposals, exchanges, submitted_tools

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.files.patch import overlay_from_json
from optimizer.models.anthropic import AnthropicClient
from optimizer.optimize.screening import Screen, accepted_of
from optimizer.propose.base import Evidence
from optimizer.propose.claude import ClaudeProposer
from optimizer.propose.groups import sub_catalog
from optimizer.references import unexposed
from optimizer.search.pool import candidate_from, pool_from
from optimizer.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "proposals").glob("*.json") if p.stem != "reviewed")
REVIEWED = json.loads((ROOT / "tests" / "fixtures" / "proposals" / "reviewed.json").read_text(encoding="utf-8"))


def struck_by_a_reviewer(server: str, tool: str, why: str) -> bool:
    """The reason screening gave is one `reviewed.json` lists: every phrase it says was copied is a reviewed leak of
    this server, or the whole edit is one the reviewer strikes."""
    copied = re.fullmatch(r"copies text from train prompts: (.+)", why)
    if copied:
        return set(re.findall(r"'([^']+)'", copied.group(1))) <= set(REVIEWED["leaks"].get(server, {}))
    return tool in REVIEWED["edits"].get(server, {})


def fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def catalog_of(data: dict[str, Any], only: frozenset[str] | None = None) -> Catalog:
    """The fixture's catalog (with `only`, those of its tools)."""
    tools = tuple(ToolDef.from_canonical(t) for t in data["catalog"]["tools"])
    catalog = Catalog(data["catalog"]["server_name"], tools)
    return catalog if only is None else sub_catalog(catalog, sorted(only))


def replayed(exchange: dict[str, Any], catalog: Catalog) -> list[Candidate]:
    """The candidates ClaudeProposer reads from the recorded answer, fetched over HTTP from the fake API."""
    async def go(api: FakeAnthropicAPI) -> list[Candidate]:
        model = exchange["request"]["model"]
        proposer = ClaudeProposer(model, AnthropicClient(api_key="replay", base_url=api.base_url))
        try:
            return await proposer.propose(catalog, Candidate(), Evidence("", (), (), {}), k=4, seed=0)
        finally:
            await proposer.client.close()

    with FakeAnthropicAPI(RecordedProposals([exchange])) as api:
        return asyncio.run(go(api))


CASES = [(path, group) for path in FIXTURES for group in range(len(exchanges(fixture(path))))]


@pytest.mark.parametrize(("path", "group"), CASES,
                         ids=[p.stem + (f"-group{g + 1}" if "groups" in fixture(p) else "") for p, g in CASES])
def test_a_real_proposal_passes_screening_and_mixes_into_consistent_candidates(path: Path, group: int) -> None:
    """Each recorded answer (each group's, when the request was split), over the tools its request asked about."""
    data = fixture(path)
    exchange = exchanges(data)[group]
    assert data["provenance"]["how"] and len(exchange["answer"]["candidates"]) == 4
    proposals = replayed(exchange, catalog_of(data, submitted_tools(exchange["request"])))
    malformed = REVIEWED["invalid"].get(path.stem + (f"-group{group + 1}" if "groups" in data else ""), {})
    assert len(proposals) == 4 - len(malformed)  # every other candidate the model wrote is structurally valid
    catalog = catalog_of(data)  # a group's edits may name tools of other groups: screened as optimize does
    train = load_tasks(ROOT / data["tasks"]).split("train")
    screen = Screen(catalog, train, allow_leakage=False)
    screened = screen.screen(proposals)
    for s in screened:
        assert s.kept is not None, s.rejections()  # no proposal is rejected whole
        for tool, why in s.dropped.items():
            assert struck_by_a_reviewer(path.stem, tool, why), (tool, why)
    accepted = accepted_of(screened)
    pool = pool_from(Candidate(), accepted)
    rng = random.Random(path.stem)
    mixed = [*accepted, *(candidate_from(pool, {tool: rng.randrange(len(options))
                                                for tool, options in pool.edits.items()}, rng.choice(pool.schemes))
                          for _ in range(40))]
    for candidate in mixed:
        assert unexposed(catalog, candidate, screen.names) == [], candidate.to_json()
    for candidate in mixed[:12]:
        assert screen.final(candidate) is None


SUPPORT = ROOT / "tests" / "fixtures" / "proposals" / "support.json"


def replay(data: dict[str, Any]) -> RecordedProposals:
    """Agent turns go to the offline agent; a proposer request gets the recorded answer to the request over the same
    tools, once; any other (the request that sends rejected edits back) an error, since no model answered it."""
    return RecordedProposals(exchanges(data), agent=SimPolicy("lexical"))


@pytest.mark.slow
def test_optimize_ships_a_consistent_winner_from_a_real_proposal(run_cli: Any, tmp_path: Path) -> None:
    """End to end on the bundled support server: the recorded proposal goes through `optimize` (offline agents,
    Claude proposer via the fake API), and the shipped overlay names only tools it exposes."""
    data = fixture(SUPPORT)
    source = tmp_path / "support"
    shutil.copytree(ROOT / "examples" / "support", source, ignore=shutil.ignore_patterns("tasks", "__pycache__"))
    with FakeAnthropicAPI(replay(data)) as api:
        result = run_cli("optimize", "--server", f"{sys.executable} {source / 'server.py'}", "--source", str(source),
                         "--tasks", str(ROOT / "examples/support/tasks"), "--models", "sim:lexical,sim:skim",
                         "--proposer", "claude-opus-5-5", "--rounds", "1", "--trials", "6", "--heldout-candidates", "1",
                         "--runs-dir", str(tmp_path), "--run-id", "real", "--json", cwd=tmp_path,
                         env={"ANTHROPIC_API_KEY": "sk-ant-replay", "ANTHROPIC_BASE_URL": api.base_url})
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["rounds"][0]["proposed"] == 4 and summary["rounds"][0]["rejected"] == []  # all four pass whole
    overlay = json.loads((tmp_path / "real" / "overlay.json").read_text(encoding="utf-8"))
    assert overlay.get("tools"), "the winner changes definitions"
    names = {t["name"] for c in data["answer"]["candidates"] for t in c["tools"] if t.get("name")}
    assert unexposed(catalog_of(data), overlay_from_json(overlay), names) == []
    placed = summary["source_patch"]  # the winner, written into the server's own code
    assert placed["changed"] and Path(placed["path"]).read_text(encoding="utf-8").startswith("diff --git")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=source, check=True)
        applied = subprocess.run(["git", "apply", "--check", placed["path"]], cwd=source, capture_output=True,
                                 text=True)
        assert applied.returncode == 0, applied.stderr


FILESYSTEM_SHRINK = ROOT / "tests" / "fixtures" / "proposals" / "published-filesystem.shrink.json"
FILESYSTEM_SERVER = ROOT / ".ci" / "cache" / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"


@pytest.mark.slow
@pytest.mark.published
def test_a_recorded_shrink_proposal_ships_smaller_definitions_behind_a_non_inferiority_gate(
    run_cli: Any, tmp_path: Path
) -> None:
    """`optimize --goal shrink` on the published filesystem server with the offline readers and the recorded
    answer to its shrink request: the winner cuts at least 30% of the definition tokens (a real model's texts, lean
    schemas), names no tool it lacks, and passes the gate's non-inferiority test; report.md gives the tokens per
    tool."""
    if not FILESYSTEM_SERVER.exists():
        pytest.skip(f"{FILESYSTEM_SERVER} is not installed (tests/installs.py installs it)")
    data = fixture(FILESYSTEM_SHRINK)
    folder = ROOT / "examples" / "published" / "filesystem"
    with FakeAnthropicAPI(replay(data)) as api:
        result = run_cli("optimize", "--server", f"{sys.executable} {folder / 'serve.py'}", "--tasks",
                         str(folder / "tasks"), "--offline", "--allow-destructive", "--goal", "shrink",
                         "--proposer", "claude-opus-5-5", "--rounds", "1", "--heldout-candidates", "1",
                         "--runs-dir", str(tmp_path), "--run-id", "shrink", "--json", cwd=tmp_path,
                         env={"ANTHROPIC_API_KEY": "sk-ant-replay", "ANTHROPIC_BASE_URL": api.base_url})
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads(result.stdout)
    tokens = summary["definition_tokens"]
    assert summary["goal"] == "shrink" and tokens["winner"] <= 0.7 * tokens["baseline"]
    assert summary["gate"]["passed"] and all(v["p_noninferior"] is not None
                                             for v in summary["gate"]["models"].values())
    overlay = json.loads((tmp_path / "shrink" / "overlay.json").read_text(encoding="utf-8"))
    assert all("name" not in edit for edit in overlay["tools"].values())  # a shrink renames nothing
    assert all(edit.get("lean_schema") for edit in overlay["tools"].values())
    report = (tmp_path / "shrink" / "report.md").read_text(encoding="utf-8")
    assert "| tool | baseline tokens | winner tokens | change |" in report
    assert all(f"| {tool} | {before} | {tokens['per_tool'][tool]['winner']}" in report
               for tool, before in ((t, tokens["per_tool"][t]["baseline"]) for t in tokens["per_tool"]))
    assert unexposed(catalog_of(data), overlay_from_json(overlay), set()) == []

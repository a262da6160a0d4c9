"""A careful, natural-language rewrite passes screening and wins; leaky and instruction-carrying proposals are
rejected with their reasons; a proposal with one bad edit keeps its other edits, and the bad edit goes back to the
proposer once (issue 17). End to end: `optimize` of the published memory server with the offline agents and the
Claude proposer through the real SDK and the local fake Messages API, which returns scripted proposals
(tests/fixtures/memory_proposals.json)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, tool_use_reply

from optimizer.definitions import Candidate
from optimizer.files.patch import overlay_from_json

pytestmark = [pytest.mark.published, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
MEMORY = REPO / "examples" / "published" / "memory"
PROGRAM = REPO / ".ci" / "cache" / "npm" / "node_modules" / ".bin" / "mcp-server-memory"
SCRIPT = json.loads((REPO / "tests" / "fixtures" / "memory_proposals.json").read_text(encoding="utf-8"))
KEY = "sk-ant-test-0123456789abcdef"


def candidate(name: str) -> Candidate:
    """A scripted proposal as the proposer reads it (built on the baseline)."""
    entry = SCRIPT[name]
    tools = {t["tool"]: {k: v for k, v in t.items() if k != "tool"} for t in entry["tools"]}
    return overlay_from_json({"tools": tools})


class Proposals:
    """The proposer's first request gets the four scripted proposals; the request that sends rejected edits back
    gets the repair. Nothing else may reach the API: the agents are offline."""

    def __init__(self) -> None:
        self.first = self.repairs = 0
        self.repair_text = ""

    def __call__(self, request: dict[str, Any]) -> Any:
        assert (request.get("tool_choice") or {}).get("name") == "submit_candidates", request
        texts = [b["text"] for b in request["messages"][0]["content"] if b.get("type") == "text"]
        if len(texts) == 1:
            self.first += 1
            return tool_use_reply("submit_candidates", {"candidates": [
                SCRIPT[name] for name in ("careful", "leaky", "instructing", "mixed")]})
        self.repairs += 1
        self.repair_text = texts[-1]
        return tool_use_reply("submit_candidates", {"candidates": [SCRIPT["repair"]]})


def test_a_careful_rewrite_wins_and_bad_proposals_and_edits_are_screened_out(tmp_path: Path) -> None:
    """One optimize, then a resume of it (the three checks below read the same run)."""
    run = memory_run(tmp_path)
    careful_rewrite_is_searched_and_wins(run)
    leaky_and_instructing_proposals_are_rejected_whole_with_reasons(run)
    one_bad_edit_is_dropped_sent_back_once_and_the_repair_screened_again(run)


def memory_run(tmp_path: Path) -> tuple[dict[str, Any], Path, Proposals]:
    if not PROGRAM.exists() or shutil.which("node") is None:
        pytest.skip(f"{PROGRAM} or node is missing (tests/installs.py installs them)")
    from conftest import _invoke

    runs = tmp_path
    proposals = Proposals()
    with FakeAnthropicAPI(proposals) as api:
        result = _invoke(["--server", f"{sys.executable} {MEMORY / 'serve.py'}", "--tasks", MEMORY / "tasks",
                          "--models", "sim:lexical,sim:skim", "--proposer", "claude-opus-5-5", "--allow-destructive",
                          "--rounds", "1", "--trials", "8", "--heldout-candidates", "1", "--runs-dir", runs,
                          "--run-id", "memory", "--json"], cwd=runs, script="optimize",
                         env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        assert result.returncode in (0, 1), result.stderr[-3000:]
        again = _invoke(["--resume", "memory", "--runs-dir", runs, "--json"], cwd=runs, script="optimize",
                        env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
    assert again.returncode == result.returncode, again.stderr[-3000:]
    assert json.loads(again.stdout)["winner"] == json.loads(result.stdout)["winner"]
    return json.loads(result.stdout), runs / "memory", proposals


def careful_rewrite_is_searched_and_wins(memory_run: tuple[dict[str, Any], Path, Proposals]) -> None:
    """The search mixes the accepted proposals tool by tool (`pool.pool_from`): the winner is made of the careful
    rewrite's edits and the repaired one, none of the rejected text; it is chosen on train, where it lifts one agent
    and lowers none. (Held-out is the gate's business: these agents now route most look-ups right unaided.)"""
    summary, run_dir, _ = memory_run
    careful, repaired = candidate("careful").edits, candidate("repair").edits
    winner = overlay_from_json(json.loads((run_dir / "overlay.json").read_text(encoding="utf-8")))
    for tool, edit in winner.edits.items():
        assert edit in (careful.get(tool), repaired.get(tool)), tool
    assert sum(edit == careful.get(tool) for tool, edit in winner.edits.items()) >= 2
    train = {m: (summary["baseline"]["train"][m]["passed"], summary["winner"]["train"][m]["passed"])
             for m in summary["models"]}
    assert all(after >= before for before, after in train.values()), train
    assert any(after > before for before, after in train.values()), train


def leaky_and_instructing_proposals_are_rejected_whole_with_reasons(
        memory_run: tuple[dict[str, Any], Path, Proposals]) -> None:
    summary, run_dir, _ = memory_run
    entries = summary["rounds"][0]["rejected"]
    rejected = {r["candidate"]: r for r in entries if "tool" not in r}
    leaky, instructing = rejected[candidate("leaky").key], rejected[candidate("instructing").key]
    assert leaky["outcome"] == instructing["outcome"] == "rejected"
    assert leaky["reason"].startswith("copies text from train prompts")  # the whole proposal's reason first
    leaky_edits = [r for r in entries if r["candidate"] == leaky["candidate"] and "tool" in r]
    assert leaky_edits and any("Priya Raman" in r["reason"] for r in leaky_edits)  # then each edit's
    assert instructing["reason"].startswith("unsafe text: read_graph description: instruction aimed at the agent")
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    for key in (candidate("leaky").key, candidate("instructing").key):
        assert f"- round 1: {key} rejected — " in report


def one_bad_edit_is_dropped_sent_back_once_and_the_repair_screened_again(
        memory_run: tuple[dict[str, Any], Path, Proposals]) -> None:
    summary, run_dir, proposals = memory_run
    mixed = candidate("mixed").key
    trimmed = [r["candidate"] for r in summary["rounds"][0]["rejected"] if r.get("outcome") == "trimmed"]
    dropped = [r for r in summary["rounds"][0]["rejected"] if r.get("tool") and r["candidate"] in trimmed]
    assert [(r["candidate"], r["tool"]) for r in dropped] == [(mixed, "delete_observations")]
    assert "+351 912 000 417" in dropped[0]["reason"]
    assert proposals.first == 1 and proposals.repairs == 1  # the resumed run asked neither again
    assert "delete_observations" in proposals.repair_text and "+351 912 000 417" in proposals.repair_text
    repair = summary["rounds"][0]["proposer"]["screening_repair"]
    assert repair["requests"] == 1 and repair["returned"] == 1 and repair["repaired_edits"] == 1
    assert summary["cost"]["proposer"]["requests"] == 2 and summary["cost"]["proposer"]["screening_repairs"] == 1
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert f"- round 1: {mixed} searched without the edits below — " in report
    assert "  - edit of delete_observations dropped — " in report
    assert "rejected edits sent back once: 1 candidate(s) returned, 1 edit(s) now pass" in report
    assert "2 requests (1 sending rejected edits back)" in report

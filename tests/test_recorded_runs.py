"""The bundled real-model recordings, replayed: README's first command (payroll `optimize`) and the support `eval`s
in whole conversations. No key, no network: every answer comes from the recording, and each replay must give the
recorded run's own results (`outcome.json`). A change to what the product asks (a task prompt, a tool definition, the
evidence, a request's data) stops a replay with exit 2 naming the request: re-record it, do not loosen the match
(docs/replay.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NO_API = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None}
PAYROLL = ROOT / "examples/payroll"
SUPPORT = ROOT / "examples/support"
README_FLAGS = ("--trials", "8", "--heldout-candidates", "2")
"""The flags of README's first command beyond the recording: the recorded run's search settings."""
Cli = Callable[..., Any]


def outcome(recording: Path) -> dict[str, Any]:
    return dict(json.loads((recording / "outcome.json").read_text(encoding="utf-8")))


def recorded_figures(replayed: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """The replayed results restricted to the figures the recording's outcome holds (a recording keeps the figures
    of the release that made it; later releases add to them)."""
    return {key: (recorded_figures(replayed[key], value) if isinstance(value, dict) else replayed[key])
            for key, value in recorded.items()}


def void_message(result: Any) -> str:
    """What a failed replay says, for the assertion message: the product's requests changed, re-record."""
    return ("the replay did not finish: if the product's requests changed on purpose, record again "
            "(docs/replay.md) rather than loosen the match.\n" + result.stderr[-3000:])


def test_readme_first_command_replays_the_payroll_recording(run_cli: Cli, tmp_path: Path) -> None:
    recording = PAYROLL / "recorded/optimize"
    result = run_cli("--server", f"{sys.executable} {PAYROLL / 'server.py'}", "--tasks", str(PAYROLL / "tasks"),
                     "--replay", str(recording), *README_FLAGS, "--runs-dir", str(tmp_path), "--run-id", "replay",
                     script="optimize", env=NO_API)
    assert result.returncode == 0, void_message(result)
    assert result.stdout.startswith("REPLAY — every model answer comes from the recording")
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text(encoding="utf-8"))
    recorded = outcome(recording)
    assert summary["models"] == recorded["models"] and summary["proposer"] == recorded["proposer"]
    for side in ("baseline", "winner"):
        for split in ("train", "heldout"):
            assert recorded_figures(summary[side][split], recorded[side][split]) == recorded[side][split]
    assert summary["gate"]["passed"] and summary["winner"]["candidate"] == recorded["winner"]["candidate"]
    for model in summary["models"]:
        gain = summary["winner"]["heldout"][model]["accuracy"] - summary["baseline"]["heldout"][model]["accuracy"]
        assert gain >= 0.5, f"{model} gained {gain:.0%} on held-out"
    assert summary["cost"]["usd"] > 0 and summary["offline"] is False
    for model in summary["models"]:  # what the agent paid: the baseline's first calls mostly failed, the winner's none
        assert summary["baseline"]["heldout"][model]["failed_calls_per_task"] > 0.5
        assert summary["winner"]["heldout"][model]["failed_calls_per_task"] == 0
    report = (tmp_path / "replay" / "report.md").read_text(encoding="utf-8")
    assert "**REPLAY —" in report and "would have cost" in report
    assert summary["rounds_setting"] == "auto" and summary["stop"]["rule"] == "nothing-refused"
    assert summary["refused_left"] == {}  # learned whole: no refused call left that a later round could have seen
    html = (tmp_path / "replay" / "report.html").read_text(encoding="utf-8")
    assert "REPLAY —" in html and "per held-out task (baseline → winner): calls 1 → 1, failed calls 0.9 → 0" in html


def test_the_freight_recording_replays_its_rounds_probes_and_stop(run_cli: Cli, tmp_path: Path) -> None:
    """A server whose errors name no argument, learned under the default --rounds auto: the probes of refused calls
    are made again on replay (the server answers as it did), and the rounds stop on a rule the summary names."""
    freight = ROOT / "examples/freight"
    recording = freight / "recorded/optimize"
    result = run_cli("--server", f"{sys.executable} {freight / 'server.py'}", "--tasks", str(freight / "tasks"),
                     "--replay", str(recording), *README_FLAGS, "--runs-dir", str(tmp_path), "--run-id", "replay",
                     script="optimize", env=NO_API)
    assert result.returncode == 0, void_message(result)
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text(encoding="utf-8"))
    recorded = outcome(recording)
    assert summary["winner"]["candidate"] == recorded["winner"]["candidate"]
    assert summary["stop"] == recorded["stop"] and summary["refused_left"] == {}
    probes = [p for r in summary["rounds"] for p in r["probes"]]
    assert probes == [p for r in recorded["rounds"] for p in r["probes"]] and probes
    model = summary["models"][0]
    assert summary["winner"]["heldout"][model]["passed"] > summary["baseline"]["heldout"][model]["passed"]


@pytest.mark.parametrize("definitions", ["original", "reference"])
def test_the_support_evals_in_whole_conversations_replay_to_their_recorded_results(
        run_cli: Cli, tmp_path: Path, definitions: str) -> None:
    recording = SUPPORT / "recorded" / f"eval-{definitions}"
    overlay = ("--overlay", str(SUPPORT / "reference-overlay.json")) if definitions == "reference" else ()
    result = run_cli("eval", "--server", f"{sys.executable} {SUPPORT / 'server.py'}", "--tasks",
                     str(SUPPORT / "tasks"), "--split", "heldout", "--isolate", *overlay, "--replay", str(recording),
                     "--runs-dir", str(tmp_path), "--json", env=NO_API)
    assert result.returncode == 0, void_message(result)
    report, recorded = json.loads(result.stdout), outcome(recording)
    for model, splits in recorded["results"].items():
        assert recorded_figures(report["results"][model], splits) == splits
    assert report["confusion"] == recorded["confusion"]
    assert report["replay"]["agents"] == recorded["models"] and report["episodes"]["infra_errors"] == 0
    if definitions == "original":
        evidence_of_real_conversations(Path(report["run_dir"]))


def evidence_of_real_conversations(run_dir: Path) -> None:
    """What a proposer would read of these real conversations, were they train episodes: those that passed after
    failed calls rank right after the failures, and the agents' own feedback reaches it."""
    from dataclasses import replace

    from optimizer.files.store import RunStore
    from optimizer.propose.evidence import build_evidence
    from optimizer.tasks import load_tasks

    store = RunStore.open_existing(run_dir.parent, run_dir.name)
    try:
        episodes = [replace(e, split="train") for e in store.episodes()]
    finally:
        store.close()
    tasks = {t.id: replace(t, split="train") for t in load_tasks(SUPPORT / "tasks").tasks}
    evidence = build_evidence(episodes, tasks, token_budget=40_000, success_sample=0)  # none sampled away
    assert [e.task_id for e in evidence.recovered] == ["track-carrier-down-10029"]  # after three transient errors
    assert len(evidence.failures) == 3 and 'source="agent feedback"' in evidence.text
    text = evidence.text
    assert text.index("## Failed train episodes") < text.index("## Train episodes that passed after failed calls")

"""`optimizer review` on a real offline optimize run of the support example: flag decisions, the rendered
comparison, renames flagged as breaking, the namespace rule, and terminal sessions driven through a pty."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from optimizer.cli.review import render_change
from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.files.patch import definitions_diff, load_overlay, save_overlay
from optimizer.review import BREAKING, load_review

ROOT = Path(__file__).resolve().parent.parent
Review = Callable[..., tuple[int, str, str]]
PROMPT = re.compile(r"([A-Za-z0-9_.-]+): \[a\]ccept, \[r\]eject, \[e\]dit description, \[s\]kip\? ")


@pytest.fixture
def run_dir(optimized: Callable[[str], Path], tmp_path: Path) -> Path:
    """A private copy of the session's offline optimize run of the support example, so files a test writes (or
    hand edits) never leak into another test."""
    return Path(shutil.copytree(optimized("support"), tmp_path / "support"))


@pytest.fixture
def review(run_cli: Callable[..., Any]) -> Callable[..., tuple[int, str, str]]:
    """`review(ARGS...)`: `optimizer review ARGS` in process (stdin is not a terminal here); returns (exit code,
    stdout, stderr)."""

    def run(*args: str | Path) -> tuple[int, str, str]:
        result = run_cli("review", *args)
        return result.returncode, result.stdout, result.stderr

    return run


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_accept_all_reproduces_the_winner(run_dir: Path, review: Review) -> None:
    code, out, err = review(run_dir, "--accept", "all", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["accepted"] == sorted(load_review(run_dir).names)
    assert report["rejected"] == report["skipped"] == report["undecided"] == report["edited"] == []
    assert read_json(run_dir / "reviewed-overlay.json") == read_json(run_dir / "overlay.json")
    assert (run_dir / "reviewed.patch").read_text(encoding="utf-8") == \
        (run_dir / "winning.patch").read_text(encoding="utf-8")
    assert report["files"] == {"overlay": str(run_dir / "reviewed-overlay.json"),
                               "patch": str(run_dir / "reviewed.patch"), "lock": str(run_dir / "reviewed.lock.json")}
    assert read_json(run_dir / "reviewed.lock.json") == read_json(run_dir / "winner.lock.json")  # the same winner


def test_accept_one_reject_another(run_dir: Path, review: Review) -> None:
    first, second, *rest = load_review(run_dir).names
    code, out, err = review(run_dir, "--accept", first, "--reject", second, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["accepted"], report["rejected"], report["undecided"]) == ([first], [second], rest)
    overlay = read_json(run_dir / "reviewed-overlay.json")
    assert overlay == {"tools": {first: read_json(run_dir / "overlay.json")["tools"][first]}}
    patch = (run_dir / "reviewed.patch").read_text(encoding="utf-8")
    assert re.findall(r"^diff --git a/(\S+)\.json", patch, flags=re.M) == [first]

    code, out, _ = review(run_dir, "--accept", first, "--reject", second)
    assert code == 0
    assert f"accepted: {first}" in out and f"rejected: {second}" in out and "undecided" in out
    for change in load_review(run_dir).changes:  # the comparison comes first, one lint line per tool
        assert f"lint score {change.lint_before} → {change.lint_after}" in out


def test_unknown_tool_exits_2_listing_the_valid_ones(run_dir: Path, review: Review) -> None:
    code, _, err = review(run_dir, "--accept", f"{load_review(run_dir).names[0]},no_such_tool")
    assert code == 2
    assert "no_such_tool" in err and all(name in err for name in load_review(run_dir).names)
    code, _, err = review(run_dir, "--reject", "nope")
    assert code == 2 and "nope" in err
    assert not (run_dir / "reviewed-overlay.json").exists() and not (run_dir / "reviewed.patch").exists()


def test_no_terminal_and_no_flags_exits_2(run_dir: Path, review: Review) -> None:
    code, _, err = review(run_dir)
    assert code == 2 and "--accept" in err and "--reject" in err
    assert not (run_dir / "reviewed-overlay.json").exists()


def test_not_a_run_directory_exits_2(run_dir: Path, tmp_path: Path, review: Review) -> None:
    code, _, err = review(tmp_path / "nowhere", "--accept", "all")
    assert code == 2 and "not a run directory" in err
    (run_dir / "overlay.json").unlink()
    code, _, err = review(run_dir, "--accept", "all")
    assert code == 2 and "overlay.json" in err


def test_comparison_shows_lint_and_flipped_tasks(run_dir: Path) -> None:
    data = load_review(run_dir)
    gate = read_json(run_dir / "summary.json")["gate"]["models"]
    flipped = set()
    for index, change in enumerate(data.changes, 1):
        console = Console(width=240, no_color=True, file=io.StringIO())
        console.print(render_change(change, index, len(data.changes), markers=True))
        text = console.file.getvalue()  # type: ignore[attr-defined]
        assert f"lint score {change.lint_before} → {change.lint_after}" in text
        for row in change.evals:
            assert f"{row.before}/{row.episodes}" in text and f"{row.after}/{row.episodes}" in text
            assert all(task in text for task in row.flipped_up + row.flipped_down)
            if row.split == "heldout":  # one epoch: a tool's held-out flips are the gate's flips
                assert set(row.flipped_up) <= set(gate[row.model]["flipped_up"])
                assert set(row.flipped_down) <= set(gate[row.model]["flipped_down"])
            flipped |= set(row.flipped_up + row.flipped_down)
    assert flipped, "the winner flipped no task of any changed tool"
    assert any(c.lint_after > c.lint_before for c in data.changes)


def test_renames_are_flagged_breaking(run_dir: Path, review: Review) -> None:
    first, second, *_ = load_review(run_dir).names
    overlay = read_json(run_dir / "overlay.json")
    overlay["tools"][first]["name"] = f"{first}_renamed"
    (run_dir / "overlay.json").write_text(json.dumps(overlay), encoding="utf-8")
    change = load_review(run_dir).change(first)
    assert change.renamed and change.after.name == f"{first}_renamed"
    code, out, err = review(run_dir, "--accept", first, "--reject", second)
    assert code == 0, err
    assert BREAKING in out and f"{first}_renamed" in out
    assert "not the run's winner" in out  # the hand edit is noticed
    patch = (run_dir / "reviewed.patch").read_text(encoding="utf-8")
    assert f"rename from {first}.json\nrename to {first}_renamed.json" in patch


def test_namespace_scheme_is_kept_only_with_accept_all(run_dir: Path, review: Review) -> None:
    """A winner with a prefix scheme and no word: the word comes back from winning.patch, so --accept all still
    reproduces the patch; any narrower decision drops the scheme."""
    tools = tuple(ToolDef.from_canonical(t) for t in _catalog(run_dir))
    catalog = Catalog("Acme Support", tools)
    winner = load_overlay(run_dir / "overlay.json", catalog)
    winner = Candidate(edits=winner.edits, scheme="prefix")
    save_overlay(run_dir / "overlay.json", winner)
    (run_dir / "winning.patch").write_text(definitions_diff(catalog, winner), encoding="utf-8")
    code, out, err = review(run_dir, "--accept", "all", "--json")
    assert code == 0, err
    assert json.loads(out)["namespace"] == {"scheme": "prefix", "kept": True}
    first = load_review(run_dir).names[0]
    assert f"acme_support_{first}.json" in (run_dir / "reviewed.patch").read_text(encoding="utf-8")
    assert (run_dir / "reviewed.patch").read_text(encoding="utf-8") == \
        (run_dir / "winning.patch").read_text(encoding="utf-8")
    code, out, _ = review(run_dir, "--accept", "all", "--reject", first, "--json")
    assert code == 0 and json.loads(out)["namespace"]["kept"] is False
    assert "namespace" not in read_json(run_dir / "reviewed-overlay.json")


def test_source_patch_rewrites_only_accepted_tools(run_dir: Path, tmp_path: Path, review: Review) -> None:
    code, _, err = review(run_dir, "--accept", "all", "--source", tmp_path / "missing")
    assert code == 2 and "not a directory" in err
    source_patch = pytest.importorskip("optimizer.source").source_patch
    source = Path(shutil.copytree(ROOT / "examples" / "support", tmp_path / "src"))
    overlay = read_json(run_dir / "overlay.json")  # the offline winner writes parameter facts: describe two tools
    accepted, rejected = sorted(overlay["tools"])[:2]
    for name in (accepted, rejected):
        overlay["tools"][name]["description"] = f"Rewritten by hand for {name}: what it does and when."
    (run_dir / "overlay.json").write_text(json.dumps(overlay), encoding="utf-8")
    data = load_review(run_dir)
    code, out, err = review(run_dir, "--accept", accepted, "--reject", rejected, "--source", source, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["files"]["source_patch"] == str(run_dir / "source.patch")
    expected = source_patch(source, data.catalog, Candidate(edits={accepted: data.change(accepted).edit}))
    text = (run_dir / "source.patch").read_text(encoding="utf-8")
    assert text == expected.text and report["unlocated"] == list(expected.unlocated)
    assert data.change(accepted).proposed_description[:40] in text
    assert data.change(rejected).proposed_description[:40] not in text


def _catalog(run_dir: Path) -> list[dict]:
    """The server's original definitions as the run stored them."""
    with contextlib.closing(sqlite3.connect(run_dir / "run.db")) as db:
        return json.loads(db.execute("SELECT value FROM meta WHERE key = 'catalog'").fetchone()[0])


def spawn(run_dir: Path, env: dict[str, str]):  # noqa: ANN201 - pexpect.spawn, imported lazily
    pexpect = pytest.importorskip("pexpect")
    argv = ["-c", "from optimizer.cli import main; main()", "review", str(run_dir)]
    with warnings.catch_warnings():  # Python 3.12+ warns about forkpty() when the test process has threads
        warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
        return pexpect.spawn(sys.executable, argv, cwd=str(ROOT), encoding="utf-8", timeout=60,
                             dimensions=(60, 200), env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **env})


def answer_all(child, answers: list[str]) -> list[str]:  # noqa: ANN001 - a pexpect.spawn
    """Answer each prompt in turn ('s' once the list runs out); return the tool names asked about."""
    import pexpect

    asked = []
    while child.expect([PROMPT, pexpect.EOF]) == 0:
        asked.append(child.match.group(1))
        child.sendline(answers[len(asked) - 1] if len(asked) <= len(answers) else "s")
    child.close()
    assert child.exitstatus == 0, child.before
    return asked


def test_interactive_session_through_a_terminal(run_dir: Path) -> None:
    child = spawn(run_dir, {})
    asked = answer_all(child, ["a", "r"])
    names = load_review(run_dir).names
    assert asked == names
    overlay = read_json(run_dir / "reviewed-overlay.json")
    assert overlay == {"tools": {names[0]: read_json(run_dir / "overlay.json")["tools"][names[0]]}}
    assert f"rejected: {names[1]}" in child.before and "skipped (left out, like rejected)" in child.before


def test_edit_uses_the_text_from_the_editor(run_dir: Path, tmp_path: Path) -> None:
    seen, editor = tmp_path / "seen.txt", tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\ncp \"$1\" '{seen}'\nprintf 'Find a customer by email or phone.\\n' > \"$1\"\n",
                      encoding="utf-8")
    editor.chmod(0o755)
    child = spawn(run_dir, {"EDITOR": str(editor), "VISUAL": ""})
    answer_all(child, ["e"])
    first = load_review(run_dir).changes[0]
    assert seen.read_text(encoding="utf-8").strip() == first.proposed_description
    edit = read_json(run_dir / "reviewed-overlay.json")["tools"][first.original]
    assert edit["description"] == "Find a customer by email or phone."
    assert edit.get("parameters") == first.edit.to_json().get("parameters")
    assert f"accepted: {first.original} (edited)" in child.before

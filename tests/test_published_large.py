"""The two large servers of the test bed, `@cyanheads/git-mcp-server` (examples/published/git) and
`excel-mcp-server` (examples/published/excel): each fixture builds the same thing twice; each launcher serves it
over stdio to the real mcp client with the tool count and definition size their READMEs claim, answers a real call
from the fixture and leaves nothing behind on exit; and each task set passes `optimizer tasks check
--replay`. tests/installs.py installs both servers (npm into .ci/cache/npm, PyPI into .ci/cache/excel-venv); without
them these tests skip."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from optimizer.definitions import Catalog
from optimizer.lint.rules_description import definition_tokens
from optimizer.servers import CallOutcome, ServerPool, ServerSpec

pytestmark = [pytest.mark.published, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "examples" / "published"
NPM_PREFIX = Path(os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm")


@dataclass(frozen=True)
class Large:
    name: str
    program: Path  # what the launcher runs; the test skips without it
    tools: int  # the tool count the README gives
    tokens: int  # the definition tokens the README gives (lint's estimate)
    call: tuple[str, dict[str, Any]]  # a call whose answer comes from the fixture
    answer: str
    allow_destructive: bool

    @property
    def serve(self) -> Path:
        return PUBLISHED / self.name / "serve.py"


GIT = Large("git", NPM_PREFIX / "node_modules" / ".bin" / "git-mcp-server", 28, 8696,
            ("git_log", {"path": "quillmark", "maxCount": 1}), "e8c0be151d14d05315bec2b670477d2d53cac32e", False)
EXCEL = Large("excel", Path(os.environ.get("OPTIMIZER_EXCEL_SERVER")
                            or REPO / ".ci" / "cache" / "excel-venv" / "bin" / "excel-mcp-server"), 46, 13520,
              ("read_range", {"path": "sales-q1-2026.xlsx", "sheet": "Summary", "range": "A11:B11"}), "7866", True)
SERVERS = [pytest.param(GIT, id="git"), pytest.param(EXCEL, id="excel")]


def needs(server: Large) -> None:
    if server is GIT and shutil.which("node") is None:
        pytest.skip("node is not on PATH (needed for @cyanheads/git-mcp-server)")
    if server is GIT and shutil.which("git") is None:
        pytest.skip("git is not on PATH (the git server runs it)")
    if not server.program.exists():
        pytest.skip(f"{server.program} is not installed (tests/installs.py installs it; see examples/published/"
                    f"{server.name}/README.md)")


def load_fixture(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_large_fixture", PUBLISHED / name / "fixture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def serve(spec: ServerSpec, call: tuple[str, dict[str, Any]]) -> tuple[Catalog, CallOutcome]:
    async with ServerPool(spec, connect_timeout=60) as pool:
        return await pool.list_tools(), await pool.call(*call)


def test_git_fixture_has_the_same_history_on_every_build(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH")
    fixture = load_fixture("git")
    heads = [fixture.build(tmp_path / side) for side in ("a", "b")]
    assert heads[0] == heads[1] == GIT.answer
    refs = []
    for side in ("a", "b"):
        done = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)"], cwd=tmp_path / side /
                              fixture.REPO, capture_output=True, text=True, check=True)
        refs.append(done.stdout)
    assert refs[0] == refs[1] and "refs/stash" in refs[0] and "refs/remotes/origin/main" in refs[0]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [
        "quillmark", "quillmark-origin.git", "quillmark-site", "quillmark-site-origin.git"]


def test_excel_fixture_writes_the_same_bytes_on_every_build(tmp_path: Path) -> None:
    fixture = load_fixture("excel")
    digests = []
    for side in ("a", "b"):
        fixture.build(tmp_path / side)
        digests.append({str(p.relative_to(tmp_path / side)): hashlib.sha256(p.read_bytes()).hexdigest()
                        for p in sorted((tmp_path / side).rglob("*")) if p.is_file()})
    assert digests[0] == digests[1]
    assert set(digests[0]) == {"sales-q1-2026.xlsx", "staff.xlsx", "budget-2026.xlsx", "archive/sales-q4-2025.xlsx",
                               "prices.csv", "logo.png"}


@pytest.mark.parametrize("server", SERVERS)
def test_launcher_serves_the_fixture_with_the_claimed_size(server: Large, tmp_path: Path) -> None:
    needs(server)
    spec = ServerSpec(argv=(sys.executable, str(server.serve)), env={"TMPDIR": str(tmp_path)})
    catalog, outcome = asyncio.run(serve(spec, server.call))
    assert len(catalog.tools) == server.tools >= 25
    assert sum(definition_tokens(tool) for tool in catalog.tools) == server.tokens
    assert not outcome.is_error, outcome.text
    assert server.answer in outcome.text
    assert not list(tmp_path.iterdir()), "the launcher left something in the temporary directory"


@pytest.mark.parametrize("server", SERVERS)
def test_task_set_replays(server: Large, run_cli: Callable[..., subprocess.CompletedProcess[str]],
                          tmp_path: Path) -> None:
    needs(server)
    flags = ["--allow-destructive"] if server.allow_destructive else []
    result = run_cli("tasks", "check", PUBLISHED / server.name / "tasks", "--server",
                     f"{sys.executable} {server.serve}", "--replay", *flags, "--json", cwd=REPO,
                     env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["problems"] == []
    assert report["tasks"] >= 24 and report["splits"]["train"] >= 16 and report["splits"]["heldout"] >= 8
    assert all(sum(counts.values()) for counts in report["per_tool"].values())

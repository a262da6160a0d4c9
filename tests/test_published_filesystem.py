"""The filesystem test bed (`examples/published/filesystem/`): `@modelcontextprotocol/server-filesystem` from npm,
run by its launcher on a fresh copy of the fixture. Without node or the package these tests skip."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from optimizer.definitions import Catalog
from optimizer.scoring import verify_answer
from optimizer.servers import ServerPool, ServerSpec
from optimizer.tasks import load_tasks

pytestmark = pytest.mark.published

REPO = Path(__file__).resolve().parent.parent
FOLDER = REPO / "examples" / "published" / "filesystem"
TASKS = FOLDER / "tasks"
SPEC = ServerSpec(argv=(sys.executable, str(FOLDER / "serve.py")))
WRITE_TOOLS = {"write_file", "edit_file", "move_file"}
ECHO_TOOLS = {"write_file", "create_directory"}  # their results only repeat the path they were given

# For every task, calls a correct agent could make; the task's expected answer must be in their results.
Call = tuple[str, dict[str, Any]]
REFERENCE: dict[str, list[Call]] = {
    "read-production-port": [("read_text_file", {"path": "config/settings.toml"})],
    "read-setup-python-version": [("read_text_file", {"path": "docs/setup.md"})],
    "read-changelog-top": [("read_text_file", {"path": "CHANGELOG.md", "head": 4})],
    "read-todo-last-lines": [("read_text_file", {"path": "notes/todo.md", "tail": 2})],
    "read-frontend-maintainer": [("read_text_file", {"path": "README.md"})],
    "read-faq-sharing": [("read_text_file", {"path": "docs/faq.md"})],
    "compare-settings-database": [
        ("read_multiple_files", {"paths": ["config/settings.toml", "config/settings.example.toml"]})],
    "compare-raised-bed-price": [
        ("read_multiple_files", {"paths": ["src/fernway/pricing.py", "web/src/prices.js"]})],
    "compare-setup-guides": [("read_multiple_files", {"paths": ["docs/setup.md", "docs/archive/setup.md"]})],
    "plot-tenant-email": [("read_multiple_files", {"paths": ["data/plots.csv", "data/members.csv"]})],
    "meeting-standard-plot-fee": [("list_directory", {"path": "notes/meetings"}),
                                  ("read_text_file", {"path": "notes/meetings/2026-03-03-pricing.md"})],
    "list-config-folder": [("list_directory", {"path": "config"})],
    "list-project-top-level": [("list_directory", {"path": "."})],
    "sizes-source-total": [("list_directory_with_sizes", {"path": "src/fernway"})],
    "sizes-largest-web-script": [("list_directory_with_sizes", {"path": "web/src", "sortBy": "size"})],
    "tree-web": [("directory_tree", {"path": "web"})],
    "tree-docs": [("directory_tree", {"path": "docs"})],
    "find-all-csv": [("search_files", {"path": ".", "pattern": "**/*.csv"})],
    "find-setup-duplicates": [("search_files", {"path": ".", "pattern": "**/setup.md"})],
    "find-javascript-tests": [("search_files", {"path": ".", "pattern": "**/*.test.js"})],
    "allowed-directories": [("list_allowed_directories", {})],
    "absolute-path-deploy-guide": [("search_files", {"path": "docs", "pattern": "deploy*"})],
    "find-then-read-backup-days": [("search_files", {"path": ".", "pattern": "**/*backup*"}),
                                   ("read_text_file", {"path": "scripts/backup.sh"})],
    "info-plots-csv-bytes": [("get_file_info", {"path": "data/plots.csv"})],
    "info-backup-script-permissions": [("get_file_info", {"path": "scripts/backup.sh"})],
    "info-logo-bytes": [("get_file_info", {"path": "assets/logo.png"})],
    "media-logo": [("read_media_file", {"path": "assets/logo.png"})],
    "media-site-map": [("read_media_file", {"path": "assets/site-map.svg"})],
    "write-standup-note": [("write_file", {"path": "notes/standup-2026-05-04.md",
                                           "content": "- Riverside taps fixed\n"})],
    "edit-preview-log-level": [("edit_file", {"path": "config/logging.yaml", "dryRun": True,
                                              "edits": [{"oldText": "level: INFO", "newText": "level: DEBUG"}]})],
    "edit-preview-late-fee": [("edit_file", {"path": "docs/faq.md", "dryRun": True, "edits": [
        {"oldText": "late fee of 10.00", "newText": "late fee of 12.00"}]})],
    "make-reports-folder": [("create_directory", {"path": "reports/2026/q2"})],
}


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"filesystem_{name}", FOLDER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def needs_server() -> None:
    if _module("serve").server_command() is None:
        pytest.skip("node or @modelcontextprotocol/server-filesystem is missing; install it with "
                    f"npm install --prefix {REPO / '.ci' / 'cache' / 'npm'} @modelcontextprotocol/server-filesystem")


def _snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                       p.stat().st_mode, int(p.stat().st_mtime))
            for p in sorted(root.rglob("*"))}


def test_fixture_is_deterministic(tmp_path: Path) -> None:
    build = _module("fixture").build
    build(tmp_path / "a")
    build(tmp_path / "b")
    first = _snapshot(tmp_path / "a")
    assert first == _snapshot(tmp_path / "b")
    assert sum(1 for kind, _, _ in first.values() if kind != "dir") >= 30
    docs = tmp_path / "a" / "docs"
    assert (docs / "setup.md").read_bytes() != (docs / "archive" / "setup.md").read_bytes()


def test_launcher_without_server_says_how_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "OPTIMIZER_NPM_PREFIX": str(tmp_path / "no-npm")}
    done = subprocess.run(list(SPEC.argv), env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "npm install --prefix" in done.stderr and "@modelcontextprotocol/server-filesystem" in done.stderr


async def _roots_and_writes() -> tuple[Catalog, list[str], str]:
    async with ServerPool(SPEC, connect_timeout=60) as first, ServerPool(SPEC, connect_timeout=60) as second:
        catalog = await first.list_tools()
        roots = [(await pool.call("list_allowed_directories", {})).text.splitlines()[-1] for pool in (first, second)]
        wrote = await first.call("write_file", {"path": "scratch.txt", "content": "only here"})
        assert not wrote.is_error, wrote.text
        seen_by_second = (await second.call("read_text_file", {"path": "scratch.txt"}))
        return catalog, roots, seen_by_second.text if seen_by_second.is_error else "shared: " + seen_by_second.text


def test_launcher_serves_a_fresh_private_copy_and_cleans_up() -> None:
    needs_server()
    catalog, roots, second_read = asyncio.run(_roots_and_writes())
    assert {"read_text_file", "read_multiple_files", "list_directory", "list_directory_with_sizes", "directory_tree",
            "search_files", "get_file_info", "read_media_file", "list_allowed_directories", "write_file", "edit_file",
            "create_directory", "move_file"} <= set(catalog.names)
    destructive = {t.name for t in catalog.tools if t.hint("destructiveHint") is True}
    assert destructive >= WRITE_TOOLS
    assert roots[0] == roots[1] == "/tmp/optimizer-testbed/mcp-filesystem/fernway"  # one path, a private copy each
    assert not second_read.startswith("shared:"), "two server instances saw each other's files"
    assert not Path(roots[0]).parent.exists(), "the launcher left its fixture behind"


def test_tasks_parse_split_explicitly_and_name_real_tools() -> None:
    needs_server()
    catalog = asyncio.run(_list(SPEC))
    tasks = load_tasks(TASKS)
    assert len(tasks.tasks) >= 24
    # Each task states its split, so the share given to the loader changes nothing.
    assert [t.split for t in tasks.tasks] == [t.split for t in load_tasks(TASKS, heldout=1.0).tasks]
    assert 0.25 <= len(tasks.split("heldout")) / len(tasks.tasks) <= 0.4
    for task in tasks.tasks:
        unknown = (set(task.expect.tools) | set(task.expect.forbid)) - set(catalog.names)
        assert not unknown, f"{task.id} names tools the server does not have: {unknown}"
    covered = {name for task in tasks.tasks for name in task.expect.tools}
    held_out = {name for task in tasks.split("heldout") for name in task.expect.tools}
    assert len(covered) >= 12 and len(held_out) >= 8


async def _list(spec: ServerSpec) -> Catalog:
    async with ServerPool(spec, connect_timeout=60) as pool:
        return await pool.list_tools()


async def _reference_results() -> dict[str, str]:
    results: dict[str, str] = {}
    async with ServerPool(SPEC, connect_timeout=60) as pool:
        for task_id, calls in REFERENCE.items():
            texts = []
            for name, arguments in calls:
                outcome = await pool.call(name, arguments)
                assert not outcome.is_error, f"{task_id}: {name} failed: {outcome.text}"
                texts.append(outcome.text)
            results[task_id] = "\n".join(texts)
    return results


def test_every_expected_answer_is_in_the_real_results_of_a_correct_route() -> None:
    needs_server()
    tasks = load_tasks(TASKS)
    assert sorted(REFERENCE) == sorted(t.id for t in tasks.tasks)
    results = asyncio.run(_reference_results())
    for task in tasks.tasks:
        assert task.expect.answer is not None, task.id
        assert {name for name, _ in REFERENCE[task.id]} >= set(task.expect.tools), task.id
        assert verify_answer(results[task.id], task.expect.answer, task.expect.match), \
            f"{task.id}: {task.expect.answer!r} is not in\n{results[task.id]}"
        if not {name for name, _ in REFERENCE[task.id]} & ECHO_TOOLS:
            assert not verify_answer(task.prompt, task.expect.answer, task.expect.match), \
                f"{task.id}: the prompt alone already holds the answer"

"""The published-server test bed's `@modelcontextprotocol/server-memory` folder (examples/published/memory):
the seeded graph, the launcher over stdio with the real mcp client, and the task files. tests/installs.py
installs the server; without it (or without node) these tests skip."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from optimizer.definitions import Catalog
from optimizer.servers import ServerPool, ServerSpec
from optimizer.tasks import load_tasks

pytestmark = pytest.mark.published

REPO = Path(__file__).resolve().parent.parent
FOLDER = REPO / "examples" / "published" / "memory"
SERVE = FOLDER / "serve.py"
NPM_PREFIX = Path(os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm")
BINARY = NPM_PREFIX / "node_modules" / ".bin" / "mcp-server-memory"
TOOLS = {"create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
         "delete_relations", "read_graph", "search_nodes", "open_nodes"}


def needs_server() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH (needed for @modelcontextprotocol/server-memory)")
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is missing; install it with "
                    f"npm install --prefix {NPM_PREFIX} @modelcontextprotocol/server-memory (tests/installs.py does)")


def load_fixture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_fixture", FOLDER / "fixture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def launcher(tmp: Path) -> ServerSpec:
    """The launcher as the optimizer runs it, with its temporary directories under `tmp`."""
    return ServerSpec(argv=(sys.executable, str(SERVE)), env={"TMPDIR": str(tmp)})


async def session(spec: ServerSpec, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Catalog, list[Any]]:
    async with ServerPool(spec, connect_timeout=60) as pool:
        return await pool.list_tools(), [await pool.call(name, args) for name, args in calls]


async def files_while_serving(spec: ServerSpec, tmp: Path) -> list[str]:
    async with ServerPool(spec, connect_timeout=60):
        return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))


def test_fixture_is_the_servers_jsonl_and_deterministic(tmp_path: Path) -> None:
    fixture = load_fixture()
    fixture.build(tmp_path / "a")
    fixture.build(tmp_path / "b")
    first = (tmp_path / "a" / fixture.FILE_NAME).read_bytes()
    assert first == (tmp_path / "b" / fixture.FILE_NAME).read_bytes()
    items = [json.loads(line) for line in first.decode("utf-8").splitlines()]
    entities = [i for i in items if i["type"] == "entity"]
    relations = [i for i in items if i["type"] == "relation"]
    assert len(entities) + len(relations) == len(items) and len(entities) >= 24
    names = [e["name"] for e in entities]
    assert len(set(names)) == len(names)
    for entity in entities:
        assert set(entity) == {"type", "name", "entityType", "observations"}
        assert entity["observations"] and all(isinstance(o, str) for o in entity["observations"])
    keys = [(r["from"], r["to"], r["relationType"]) for r in relations]
    assert len(set(keys)) == len(keys)
    for relation in relations:
        assert set(relation) == {"type", "from", "to", "relationType"}
        assert {relation["from"], relation["to"]} <= set(names), relation


def test_launcher_serves_the_seeded_graph_and_cleans_up(tmp_path: Path) -> None:
    needs_server()
    catalog, (opened, missing) = asyncio.run(session(launcher(tmp_path), [
        ("open_nodes", {"names": ["Priya Raman"]}),
        ("open_nodes", {"names": ["Nobody At All"]}),
    ]))
    assert set(catalog.names) == TOOLS
    destructive = {t.name for t in catalog.tools if t.hint("destructiveHint") is True}
    assert destructive == {"delete_entities", "delete_observations", "delete_relations"}
    assert not opened.is_error, opened.text
    assert [e["name"] for e in opened.structured["entities"]] == ["Priya Raman"]
    assert {"from": "Priya Raman", "to": "Tidewater Labs", "relationType": "works_at"} in opened.structured["relations"]
    assert missing.structured == {"entities": [], "relations": []}
    # the fixture lives in the launcher's own mount namespace: nothing in the temporary directory, then or after
    assert asyncio.run(files_while_serving(launcher(tmp_path), tmp_path)) == []
    assert list(tmp_path.iterdir()) == []


def test_each_launcher_process_gets_a_fresh_graph(tmp_path: Path) -> None:
    needs_server()
    entity = {"name": "Scratch Entry", "entityType": "note", "observations": ["written by a test"]}
    _, (created,) = asyncio.run(session(launcher(tmp_path), [("create_entities", {"entities": [entity]})]))
    assert created.structured == {"entities": [entity]}
    _, (reopened,) = asyncio.run(session(launcher(tmp_path), [("open_nodes", {"names": ["Scratch Entry"]})]))
    assert reopened.structured == {"entities": [], "relations": []}


def test_launcher_without_the_server_says_how_to_install(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(SERVE)], env={**os.environ, "OPTIMIZER_NPM_PREFIX": str(tmp_path)},
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "npm install --prefix" in result.stderr and "@modelcontextprotocol/server-memory" in result.stderr


def test_tasks_parse_and_name_real_tools(tmp_path: Path) -> None:
    needs_server()
    catalog, _ = asyncio.run(session(launcher(tmp_path), []))
    tasks = load_tasks(FOLDER / "tasks")
    tasks.check_tools(catalog.names)
    counts = tasks.counts()
    assert counts["train"] + counts["heldout"] >= 24
    assert 0.25 <= counts["heldout"] / (counts["train"] + counts["heldout"]) <= 0.4
    expected = {name for task in tasks.tasks for name in task.expect.tools}
    assert expected == TOOLS  # every tool has at least one task that needs it
    for path in sorted((FOLDER / "tasks").glob("*.yaml")):
        assert path.read_text(encoding="utf-8").startswith("#"), f"{path.name} lacks its header comment"

"""The `examples/published/sqlite/` test bed: the fixture database is the same every time, the launcher runs the
published `mcp-server-sqlite` (mcp 1.x, its own virtual environment) on a fresh copy per process and removes it
afterwards, and the tasks name only the server's real tools and cover each of them in both splits."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from optimizer.definitions import Catalog
from optimizer.servers import CallOutcome, ServerPool, ServerSpec
from optimizer.tasks import load_tasks

pytestmark = [pytest.mark.published, pytest.mark.legacy]

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "published" / "sqlite"
LAUNCHER = FOLDER / "serve.py"
TABLES = ["suppliers", "products", "customers", "orders", "order_items"]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"published_sqlite_{name}", FOLDER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def launcher() -> ModuleType:
    module = load("serve")
    if module.find_server() is None:
        pytest.skip(module.INSTALL)
    return module


async def session(spec: ServerSpec, *calls: tuple[str, dict[str, str]]) -> tuple[Catalog, list[CallOutcome]]:
    async with ServerPool(spec, connect_timeout=60) as pool:
        return await pool.list_tools(), [await pool.call(name, args) for name, args in calls]


def test_fixture_is_the_same_every_time(tmp_path: Path) -> None:
    fixture = load("fixture")
    digests = []
    for name in ("a", "b"):
        fixture.build(tmp_path / name)
        digests.append(hashlib.sha256((tmp_path / name / fixture.DATABASE).read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    with contextlib.closing(sqlite3.connect(tmp_path / "a" / fixture.DATABASE)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in tables}
        orphans = db.execute("SELECT COUNT(*) FROM order_items i LEFT JOIN orders o ON o.id = i.order_id "
                             "LEFT JOIN products p ON p.id = i.product_id WHERE o.id IS NULL OR p.id IS NULL")
        assert orphans.fetchone()[0] == 0
    assert tables == TABLES
    assert all(counts.values()) and sum(counts.values()) <= 500


def test_launcher_serves_a_fresh_database_per_process(launcher: ModuleType, tmp_path: Path) -> None:
    spec = ServerSpec(argv=(sys.executable, str(LAUNCHER)), env={"TMPDIR": str(tmp_path)})
    catalog, (listed, counted, created) = asyncio.run(session(
        spec, ("list_tables", {}), ("read_query", {"query": "SELECT COUNT(*) AS n FROM order_items"}),
        ("create_table", {"query": "CREATE TABLE scratch (note TEXT)"})))
    assert sorted(catalog.names) == sorted(["read_query", "write_query", "create_table", "list_tables",
                                            "describe_table", "append_insight"])
    fixture = load("fixture")
    fixture.build(tmp_path / "direct")
    with contextlib.closing(sqlite3.connect(tmp_path / "direct" / fixture.DATABASE)) as db:
        lines = db.execute("SELECT COUNT(*) FROM order_items").fetchone()[0]
    assert all(f"'{table}'" in listed.text for table in TABLES), listed.text
    assert counted.text == str([{"n": lines}])
    assert created.text == "Table created successfully"
    _, (again,) = asyncio.run(session(spec, ("list_tables", {})))
    assert again.text == listed.text  # the table made by the first process is not in the second's database
    assert not list(tmp_path.glob("optimizer-sqlite-*")), "the launcher left its temporary database behind"


def test_tasks_parse_and_name_real_tools_in_both_splits(launcher: ModuleType) -> None:
    catalog, _ = asyncio.run(session(ServerSpec(argv=(sys.executable, str(LAUNCHER)))))
    tasks = load_tasks(FOLDER / "tasks")
    tasks.check_tools(catalog.names)
    assert len(tasks.tasks) >= 24
    assert len({task.id for task in tasks.tasks}) == len(tasks.tasks)
    for split in ("train", "heldout"):
        used = {name for task in tasks.split(split) for name in task.expect.tools}
        assert used == set(catalog.names), split
    assert 0.2 <= tasks.counts()["heldout"] / len(tasks.tasks) <= 0.4


def test_launcher_without_the_server_says_how_to_install(tmp_path: Path) -> None:
    missing = tmp_path / "mcp-server-sqlite"
    result = subprocess.run([sys.executable, str(LAUNCHER)], capture_output=True, text=True, timeout=30,
                            env={"PATH": "", "OPTIMIZER_SQLITE_SERVER": str(missing)})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "pip install mcp-server-sqlite" in result.stderr and len(result.stderr.strip().splitlines()) == 1

"""The `examples/published/time/` test bed: its launcher runs the published `mcp-server-time` with the local time
zone fixed, and its tasks name only the server's real tools and cover each of them in both splits.
(tests/test_published.py checks the server itself at the protocol level.)"""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from optimizer.definitions import Catalog
from optimizer.servers import ServerPool, ServerSpec
from optimizer.tasks import load_tasks

pytestmark = pytest.mark.published

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "published" / "time"
LAUNCHER = FOLDER / "serve.py"


def load_launcher() -> ModuleType:
    spec = importlib.util.spec_from_file_location("published_time_serve", LAUNCHER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def catalog() -> Catalog:
    """The tools the launcher serves, started with a host time zone other than UTC."""
    launcher = load_launcher()
    if launcher.find_server() is None:
        pytest.skip(launcher.INSTALL)
    spec = ServerSpec(argv=(sys.executable, str(LAUNCHER)), env={"TZ": "Asia/Tokyo"})

    async def listing() -> Catalog:
        async with ServerPool(spec, connect_timeout=60) as pool:
            return await pool.list_tools()

    return asyncio.run(listing())


def test_launcher_serves_both_tools_with_utc_as_local_zone(catalog: Catalog) -> None:
    assert sorted(catalog.names) == ["convert_time", "get_current_time"]
    for tool in catalog.tools:
        zone_params = [p for name, p in tool.input_schema["properties"].items() if "timezone" in name]
        assert zone_params, tool.name
        for param in zone_params:  # the server names its local zone here; the host's TZ must not leak in
            assert "Use 'UTC' as local timezone" in param["description"], (tool.name, param)


def test_tasks_parse_and_name_real_tools_in_both_splits(catalog: Catalog) -> None:
    tasks = load_tasks(FOLDER / "tasks")
    tasks.check_tools(catalog.names)
    assert len(tasks.tasks) >= 24
    assert len({task.id for task in tasks.tasks}) == len(tasks.tasks)
    for split in ("train", "heldout"):
        used = {name for task in tasks.split(split) for name in task.expect.tools}
        assert used == set(catalog.names), split
    assert 0.2 <= tasks.counts()["heldout"] / len(tasks.tasks) <= 0.4


def test_launcher_without_the_server_says_how_to_install(tmp_path: Path) -> None:
    missing = tmp_path / "mcp-server-time"
    result = subprocess.run([sys.executable, str(LAUNCHER)], capture_output=True, text=True, timeout=30,
                            env={"PATH": "", "OPTIMIZER_TIME_SERVER": str(missing)})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "pip install mcp-server-time" in result.stderr and len(result.stderr.strip().splitlines()) == 1

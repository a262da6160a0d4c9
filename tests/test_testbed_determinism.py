"""The test bed's servers answer the same on every start, also when several run at once: no temporary directory, no
current time and no random id in a result a task can see (examples/published/launch.py). For every server, two
instances started together get every call the tasks make — each task's `expect.calls`, and the first calls a real
model made on them (bench/calibration/published-*.original.json) — in the same order, and answer each one alike."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from optimizer.servers import ServerPool, ServerSpec

pytestmark = [pytest.mark.slow, pytest.mark.published]

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "examples" / "published"
NPM_BIN = Path(os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm") / "node_modules" / ".bin"
NEEDS: dict[str, tuple[Path, ...]] = {
    "filesystem": (NPM_BIN / "mcp-server-filesystem",),
    "memory": (NPM_BIN / "mcp-server-memory",),
    "git": (NPM_BIN / "git-mcp-server",),
    "sqlite": (REPO / ".ci" / "cache" / "mcp1-venv" / "bin" / "mcp-server-sqlite",),
    "time": (Path(sys.executable).with_name("mcp-server-time"),),
    "excel": (REPO / ".ci" / "cache" / "excel-venv" / "bin" / "excel-mcp-server",),
}
"""Each server of the test bed and the programs its launcher needs."""
CLOCKED = ("time", "excel")
"""Servers whose results carry the time: their launchers freeze it with libfaketime (Debian's faketime)."""


def calls_of(name: str) -> list[tuple[str, dict[str, Any]]]:
    """Every call the server's tasks make: the calibration's first calls, then each task's expect.calls."""
    calls = []
    calibration = REPO / "bench" / "calibration" / f"published-{name}.original.json"
    if calibration.exists():
        calls += [(c["original_tool"], c["arguments"]) for c in json.loads(calibration.read_text(encoding="utf-8"))
                  ["calls"] if c.get("original_tool")]
    for path in sorted((PUBLISHED / name / "tasks").glob("*.yaml")):
        for task in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            calls += [(c["tool"], c.get("arguments") or {}) for c in (task.get("expect") or {}).get("calls") or []]
    return calls


async def answers(spec: ServerSpec, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    async with ServerPool(spec, instances=1, connect_timeout=60) as pool:
        return [((outcome := await pool.call(tool, arguments)).is_error, outcome.text) for tool, arguments in calls]


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_two_servers_started_at_once_answer_every_task_call_alike(name: str) -> None:
    if not all(p.exists() for p in NEEDS[name]) or (NPM_BIN in NEEDS[name][0].parents and not shutil.which("node")):
        pytest.skip(f"the {name} server is not installed, or node is missing (tests/installs.py installs them)")
    if name in CLOCKED and not any(Path(p).is_file() for p in _launch().FAKETIME_LIBRARIES):
        pytest.skip("libfaketime is missing: apt-get install faketime (tests/installs.py installs it as root)")
    calls = calls_of(name)
    spec = ServerSpec.parse(f"{sys.executable} {PUBLISHED / name / 'serve.py'}")

    async def both() -> list[list[tuple[bool, str]]]:
        return list(await asyncio.gather(answers(spec, calls), answers(spec, calls)))

    first, second = asyncio.run(both())
    differ = [(calls[i], a[1][:200], b[1][:200]) for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b]
    assert len(calls) >= 20 and differ == [], differ[:3]
    elsewhere = re.compile(rf"{re.escape(tempfile.gettempdir())}/(?!optimizer-testbed/)[\w.-]+")
    assert not [text for _, text in first if elsewhere.search(text)]  # a fixture in a temporary directory of its own


def _launch() -> Any:
    sys.path.insert(0, str(PUBLISHED))
    try:
        import launch
    finally:
        sys.path.remove(str(PUBLISHED))
    return launch

"""A full offline `optimize` of published servers of the test bed (examples/published/) with the simulated agents as
the harness's callers (test doubles, so that calls, errors, a search and a winner exist): the run finishes, labels
itself OFFLINE, keeps the winner's definitions within 1.4x the baseline's tokens, and the gate fails exactly when a
model loses held-out accuracy. The runs are shared with test_lint_text (the
`optimized` fixture), which checks that no winner adds text a reviewer would reject."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.published, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
NPM_BIN = REPO / ".ci" / "cache" / "npm" / "node_modules" / ".bin"
SQLITE = REPO / ".ci" / "cache" / "mcp1-venv" / "bin" / "mcp-server-sqlite"
NEEDS = {"filesystem": NPM_BIN / "mcp-server-filesystem", "memory": NPM_BIN / "mcp-server-memory", "sqlite": SQLITE}


def needs(name: str) -> None:
    program = NEEDS.get(name)
    if program is not None and (not program.exists() or shutil.which("node") is None and program.parent == NPM_BIN):
        pytest.skip(f"{program} is not installed (tests/installs.py installs it)")


def summary(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", ["filesystem", "time"])
def test_offline_optimize_of_a_published_server(name: str, optimized: Callable[[str], Path]) -> None:
    needs(name)
    data = summary(optimized(f"published/{name}"))
    assert data["offline"] is True and data["models"] == ["sim:lexical", "sim:skim"]
    assert data["splits"]["train"] >= 16 and data["splits"]["heldout"] >= 8
    tokens = data["definition_tokens"]
    assert tokens["winner"] <= 1.4 * tokens["baseline"]
    dropped = [model for model in data["models"]
               if data["winner"]["heldout"][model]["passed"] < data["baseline"]["heldout"][model]["passed"]]
    assert data["gate"]["passed"] is not bool(dropped), (dropped, data["gate"])  # --max-drop 0: any drop fails

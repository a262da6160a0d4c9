"""Starting the CLI in a process of its own (for tests where the process boundary is the point)."""

from __future__ import annotations

import sys
from pathlib import Path

CLI_ENV = {"NO_COLOR": "1", "COLUMNS": "200", "OPTIMIZER_CONFIRM_USD": "1000000"}
"""Colour off and a fixed width for the CLI's rich output, in the test process and in the CLI processes it starts;
no cost confirmation (the fake Messages API charges nothing; tests/test_estimate.py sets its own threshold)."""


TESTS = Path(__file__).resolve().parent.parent


def cli_command(script: str = "optimizer", *, sim: bool = False) -> list[str]:
    """The argv prefix that starts a console script (`optimizer` or `optimize`) in a new process: the installed
    script when it sits next to this Python, else the same entry point through `python -c`. With `sim`, the entry
    point after registering the tests' simulated agents (`sim:` models), which the product does not ship."""
    installed = Path(sys.executable).with_name(script)
    if installed.exists() and not sim:
        return [str(installed)]
    entry = "main" if script == "optimizer" else "optimize_main"
    register = f"import sys; sys.path.insert(0, {str(TESTS)!r}); from fakes.sim import register; register(); " \
        if sim else ""
    return [sys.executable, "-c", f"{register}from optimizer.cli import {entry}; {entry}()"]


SHARED_RUN_FLAGS = ("--heldout-candidates", "2")
"""Flags of the shared offline optimize runs (conftest's `optimized`) beyond README's command: one front member
besides the winner is scored on held-out, enough for the tests that read it. A test that must reproduce a shared
run passes them too."""

"""The tests' simulated agents (`sim:lexical`, `sim:skim`; test doubles in tests/fakes/sim) for the benches that
time or exercise the harness with them: importing this module registers them in the process. The product does not
ship them."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from fakes.sim import SimAgent, register  # noqa: E402

register()

__all__ = ["SimAgent"]

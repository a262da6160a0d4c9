"""The package keeps its shape: no import cycle, no import up the layers, no module over the size limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_layout_check_passes() -> None:
    result = subprocess.run([sys.executable, str(ROOT / ".ci" / "check_layout.py")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr

"""Open a page in headless Chromium (Debian's package, /usr/bin/chromium) and take a screenshot: what the browser
console said, and whether the picture shows anything."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from PIL import Image

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000")
"""As the machine's notes say: without the background-networking flags Chromium keeps reaching for the network."""


def screenshot(page: Path, out: Path, *, width: int = 1280, height: int = 2400) -> list[str]:
    """Render `page` (a file) into the PNG `out`; return the console messages the page logged."""
    assert CHROMIUM is not None, "chromium is not installed (tests/installs.py installs it)"
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                                 f"--screenshot={out}", page.resolve().as_uri()],
                                capture_output=True, text=True, timeout=120)
    assert out.exists(), result.stderr[-3000:]
    return re.findall(r":CONSOLE[^\]]*\] (.*)", result.stderr)


def colours(png: Path) -> int:
    """How many different colours the picture holds (a blank page has one or two)."""
    with Image.open(png) as image:
        found = image.convert("RGB").getcolors(maxcolors=1 << 20)
    return len(found or [])

"""report.html: one self-contained page per optimize and regress run, rendered in headless Chromium."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.browser import colours, screenshot

from optimizer.html_report import Bar, Change, Page, render, word_diff

Optimized = Callable[[str], Path]


def test_the_page_is_self_contained_escaped_and_readable_with_fifty_tools() -> None:
    tools = [f"tool_{i:02d}" for i in range(50)]
    matrix = {t: {t: 3, tools[(i + 1) % 50]: 1} for i, t in enumerate(tools)}
    page = Page(title="run <x>", offline="OFFLINE — <readers>", facts=["server: <script>alert(1)</script>"],
                bars=[Bar("m", "heldout", "before", 3, 10), Bar("m", "heldout", "after", 5, 10)],
                confusion={"before": matrix, "after": matrix},
                changes=[Change("tool_00", "description", "Get <b>x</b>.", "Get the order by its number.")])
    text = render(page)
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count("<script>") == 1 + text.count("Plotly.newPlot")  # plotly.js inline once, one per chart
    assert not re.search(r"""<script[^>]+src=|<link[^>]+href=["']https?:""", text)  # nothing to fetch
    assert "tool_49" in text and "OFFLINE" in text


def test_word_diff_marks_removed_and_added_words() -> None:
    before, after = word_diff("Get order details", "Get the order details by number")
    assert before == "Get order details"
    assert after == "Get<ins> the</ins> order details<ins> by number</ins>"
    assert word_diff("a <b>", "a") == ("a<del> &lt;b&gt;</del>", "a")


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (tests/installs.py installs it)")
@pytest.mark.slow
def test_the_optimize_report_renders_in_chromium(optimized: Optimized, tmp_path: Path) -> None:
    run_dir = optimized("support")
    shot = tmp_path / "optimize.png"
    console = screenshot(run_dir / "report.html", shot)
    assert not [m for m in console if re.search(r"error|uncaught|warn", m, re.IGNORECASE)], console
    assert colours(shot) > 50  # charts, not a blank page
    text = (run_dir / "report.html").read_text(encoding="utf-8")
    for section in ("Accuracy per model and split", "Gate", "The search over time", "Accuracy against definition "
                    "tokens", "Tool confusion on held-out", "Changed definitions", "Tasks that flipped"):
        assert f"<h2>{section}" in text, section

"""report.html: one self-contained page for a finished optimize or regress run, readable offline.

Charts are Plotly figures (plotly.js is inlined once, so the file opens with no network at view time): accuracy per
model and split with 95% Wilson intervals, the search over time per round, accuracy against definition tokens, and
the tool confusion matrices as heat maps side by side. Changed definitions are HTML tables with word-level
highlights. Every text from a server, a task file or a model is escaped; chart labels are stripped of markup.
`render(page)` is the only entry point; the commands gather a `Page` from what they already hold.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from optimizer.definitions import Candidate, Catalog, apply
from optimizer.gate import power_text, verdict_text
from optimizer.scoring import wilson
from optimizer.text.tokens import points

NO_TOOL = "(no tool)"
_COLORS = {"baseline": "#8c8c8c", "winner": "#1f77b4", "before": "#8c8c8c", "after": "#1f77b4"}
_CONFIG = {"displaylogo": False, "responsive": True}


@dataclass(frozen=True)
class Bar:
    """One accuracy figure: a side (baseline/winner, before/after) of a model on a split."""

    model: str
    split: str
    side: str
    passed: int
    n: int


@dataclass(frozen=True)
class Change:
    """One changed text of one tool: its field (name, description, a parameter) before and after."""

    tool: str
    field: str
    before: str
    after: str


@dataclass
class Page:
    title: str
    offline: str | None
    """the offline banner (`models.offline_banner`) when the results are offline, else None"""
    facts: list[str]
    """short lines under the title (server, models, tasks, verdict)"""
    bars: list[Bar]
    gate_rule: str = ""
    gate_rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    rounds: Sequence[Sequence[Mapping[str, Any]]] = field(default_factory=list)
    """per round, its trials as `search.load_trials` gives them"""
    points: list[dict[str, Any]] = field(default_factory=list)
    """accuracy-vs-tokens points: {label, tokens, accuracy, split}"""
    confusion: Mapping[str, Mapping[str, Mapping[str, int]]] = field(default_factory=dict)
    """side -> expected tool -> chosen tool -> count"""
    changes: list[Change] = field(default_factory=list)
    flipped: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)
    """model -> {"up": task ids, "down": task ids}"""


def changes_of(catalog: Catalog, candidate: Candidate, baseline: Candidate | None = None) -> list[Change]:
    """Every text `candidate` shows differently from `baseline` (the server's own definitions when None), per tool
    in the server's order, labelled by the tool's original name: the exposed name, the description and each
    parameter description that differ."""
    old, new = apply(catalog, baseline or Candidate()), apply(catalog, candidate)
    before_of = {old.routing[t.name]: t for t in old.tools}
    out = []
    for after in new.tools:
        original = new.routing[after.name]
        before = before_of[original]
        if after.name != before.name:
            out.append(Change(original, "name", before.name, after.name))
        if after.description != before.description:
            out.append(Change(original, "description", before.description, after.description))
        for param, prop in after.properties.items():
            was = str((before.properties.get(param) or {}).get("description") or "")
            now = str(prop.get("description") or "")
            if was != now:
                out.append(Change(original, f"parameter {param}", was, now))
    return out


def render(page: Page) -> str:
    """The whole page as one HTML document."""
    sections = [_header(page), _accuracy(page), _gate(page), _search(page), _tokens(page), _confusion(page),
                _changes(page), _flipped(page)]
    body = "\n".join(s for s in sections if s)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(page.title)}</title><style>{_STYLE}</style>"
            f"<script>{get_plotlyjs()}</script></head>\n<body>\n{body}\n</body></html>\n")


def _header(page: Page) -> str:
    banner = f'<p class="offline">{_e(page.offline)}</p>' if page.offline else ""
    facts = "".join(f"<li>{_e(line)}</li>" for line in page.facts)
    return f"<h1>{_e(page.title)}</h1>{banner}<ul class=\"facts\">{facts}</ul>"


def _accuracy(page: Page) -> str:
    if not page.bars:
        return ""
    figure = go.Figure()
    for side in dict.fromkeys(b.side for b in page.bars):
        for split in dict.fromkeys(b.split for b in page.bars):
            bars = [b for b in page.bars if b.side == side and b.split == split]
            if not bars:
                continue
            rates = [b.passed / b.n if b.n else 0.0 for b in bars]
            bounds = [wilson(b.passed, b.n) for b in bars]
            above = [hi - r for r, (_, hi) in zip(rates, bounds, strict=True)]
            below = [r - lo for r, (lo, _) in zip(rates, bounds, strict=True)]
            figure.add_bar(
                name=f"{side} · {split}", x=[_label(b.model) for b in bars], y=rates,
                marker={"color": _COLORS.get(side, "#2ca02c"), "opacity": 1.0 if split != "train" else 0.55},
                error_y={"type": "data", "symmetric": False, "array": above, "arrayminus": below},
                text=[f"{b.passed}/{b.n}" for b in bars], textposition="outside")
    figure.update_layout(barmode="group", yaxis={"range": [0, 1.1], "tickformat": ".0%", "title": "accuracy"},
                         height=420, margin={"t": 30})
    return _section("Accuracy per model and split (95% Wilson intervals)", _plot(figure))


def _gate(page: Page) -> str:
    if not page.gate_rows:
        return ""
    head = ("<tr><th>model</th><th>tasks</th><th>before</th><th>after</th><th>change</th><th>p (Holm)</th>"
            "<th>can see</th><th>verdict</th></tr>")
    rows = []
    for model, row in page.gate_rows.items():
        verdict = row.get("verdict", "pass" if row["passed"] else "regressed")
        rows.append(f"<tr class=\"{_e(verdict)}\"><td>{_e(model)}</td><td>{row['n_tasks']}</td>"
                    f"<td>{row['before']:.0%}</td><td>{row['after']:.0%}</td><td>{points(row['delta'])}</td>"
                    f"<td>{row['p_holm']:.3g}</td><td>{_e(power_text(row))}</td><td>{_e(verdict_text(row))}</td></tr>")
    return _section("Gate", f"<p>{_e(page.gate_rule)}</p><table>{head}{''.join(rows)}</table>")


def _search(page: Page) -> str:
    rounds = [r for r in page.rounds if r]
    if not rounds:
        return ""
    figure = make_subplots(rows=1, cols=len(rounds), shared_yaxes=True,
                           subplot_titles=[f"round {i}" for i in range(1, len(rounds) + 1)])
    shown: set[str] = set()
    for col, trials in enumerate(rounds, start=1):
        scored = [t for t in trials if (t.get("user_attrs") or {}).get("score")]
        for state, symbol, color in (("COMPLETE", "circle", "#1f77b4"), ("PRUNED", "x", "#d62728")):
            chosen = [t for t in scored if t["state"] == state]
            figure.add_scatter(x=[t["number"] for t in chosen],
                               y=[t["user_attrs"]["score"]["accuracy"] for t in chosen], mode="markers",
                               marker={"symbol": symbol, "size": 9, "color": color}, name=state.lower(),
                               legendgroup=state, showlegend=bool(chosen) and state not in shown, row=1, col=col)
            shown.update({state} if chosen else set())
        best, line = 0.0, []
        for t in sorted((t for t in scored if t["state"] == "COMPLETE"), key=lambda t: t["number"]):
            best = max(best, t["user_attrs"]["score"]["accuracy"])
            line.append((t["number"], best))
        figure.add_scatter(x=[x for x, _ in line], y=[y for _, y in line], mode="lines",
                           line={"shape": "hv", "color": "#2ca02c"}, name="best so far", legendgroup="best",
                           showlegend=col == 1, row=1, col=col)
    figure.update_yaxes(tickformat=".0%", title_text="train accuracy (pruned: on the chunks run)", row=1, col=1)
    figure.update_xaxes(title_text="trial")
    figure.update_layout(height=380, margin={"t": 40})
    return _section("The search over time", _plot(figure))


def _tokens(page: Page) -> str:
    if not page.points:
        return ""
    figure = go.Figure()
    for split, symbol in (("train", "circle"), ("heldout", "diamond")):
        points = [p for p in page.points if p["split"] == split]
        if points:
            figure.add_scatter(x=[p["tokens"] for p in points], y=[p["accuracy"] for p in points], mode="markers",
                               marker={"symbol": symbol, "size": 11}, name=split,
                               text=[_label(p["label"]) for p in points], hovertemplate="%{text}: %{y:.0%} at "
                               "%{x} tokens<extra></extra>")
    figure.update_layout(xaxis={"title": "definition tokens"}, height=380, margin={"t": 30},
                         yaxis={"title": "accuracy (mean over models)", "tickformat": ".0%"})
    return _section("Accuracy against definition tokens (held-out never chose a candidate)", _plot(figure))


def _confusion(page: Page) -> str:
    sides = [(side, matrix) for side, matrix in page.confusion.items() if matrix]
    if not sides:
        return ""
    tools = sorted({t for _, m in sides for e, row in m.items() for t in (e, *row)} - {NO_TOOL})
    axis = [*tools, NO_TOOL] if any(NO_TOOL in row for _, m in sides for row in m.values()) else tools
    figure = make_subplots(rows=1, cols=len(sides), shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[side for side, _ in sides])
    top = max((n for _, m in sides for row in m.values() for n in row.values()), default=1)
    for col, (_, matrix) in enumerate(sides, start=1):
        z = [[matrix.get(e, {}).get(c, 0) for c in axis] for e in tools]
        figure.add_heatmap(z=z, x=[_label(t) for t in axis], y=[_label(t) for t in tools], zmin=0, zmax=top,
                           colorscale="Blues", showscale=col == len(sides),
                           hovertemplate="expected %{y}, chose %{x}: %{z}<extra></extra>", row=1, col=col)
    size = max(420, 22 * len(tools) + 160)
    figure.update_xaxes(title_text="chosen first tool", tickfont={"size": 10}, automargin=True)
    figure.update_yaxes(title_text="expected first tool", tickfont={"size": 10}, automargin=True, autorange="reversed",
                        row=1, col=1)
    figure.update_layout(height=size, margin={"t": 40})
    return _section("Tool confusion on held-out (expected first tool × chosen first tool)", _plot(figure))


def _changes(page: Page) -> str:
    if not page.changes:
        return ""
    rows = [f"<tr><td>{_e(c.tool)}</td><td>{_e(c.field)}</td><td>{old}</td><td>{new}</td></tr>"
            for c in page.changes for old, new in [word_diff(c.before, c.after)]]
    return _section("Changed definitions", "<table class=\"diff\"><tr><th>tool</th><th>field</th><th>before</th>"
                                            f"<th>after</th></tr>{''.join(rows)}</table>")


def word_diff(before: str, after: str) -> tuple[str, str]:
    """The old text with removed words in <del>, the new one with added words in <ins>, both escaped."""
    old, new = _words(before), _words(after)
    left, right = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        a, b = _e("".join(old[i1:i2])), _e("".join(new[j1:j2]))
        left.append(a if tag == "equal" else f"<del>{a}</del>" if a else "")
        right.append(b if tag == "equal" else f"<ins>{b}</ins>" if b else "")
    return "".join(left), "".join(right)


def _flipped(page: Page) -> str:
    if not page.flipped:
        return ""
    rows = [f"<tr><td>{_e(model)}</td><td>{_e(', '.join(f['down']) or '–')}</td>"
            f"<td>{_e(', '.join(f['up']) or '–')}</td></tr>" for model, f in page.flipped.items()]
    return _section("Tasks that flipped", "<table><tr><th>model</th><th>passed before, failed after</th>"
                                          f"<th>failed before, passed after</th></tr>{''.join(rows)}</table>")


def _words(text: str) -> list[str]:
    return re.findall(r"\s+|\w+|[^\w\s]", text)


def _plot(figure: go.Figure) -> str:
    text: str = figure.to_html(full_html=False, include_plotlyjs=False, config=_CONFIG)
    return text


def _section(title: str, content: str) -> str:
    return f"<section><h2>{_e(title)}</h2>{content}</section>"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _label(text: Any) -> str:
    """A chart label: plain text only (Plotly renders a few HTML tags in labels)."""
    return re.sub(r"[<>&]", "", str(text))


_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.offline { background: #fff3cd; padding: .5em 1em; border-radius: 4px; font-weight: 600; }
.facts { color: #555; } table { border-collapse: collapse; width: 100%; margin: .5em 0; }
th, td { border: 1px solid #ddd; padding: .35em .5em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; } tr.regressed td { background: #fde2e1; } tr.inconclusive td { background: #fff3cd; }
del { background: #fdd; text-decoration: line-through; } ins { background: #dfd; text-decoration: none; }
.diff td { font-family: ui-monospace, monospace; font-size: 13px; white-space: pre-wrap; }
"""

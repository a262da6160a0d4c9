"""A client-side tool search, as clients with many tools run it: every tool is deferred behind one search tool;
the agent searches, the best matches are loaded, and only loaded tools can be called.

`ToolSearch(exposed, mode)` indexes the exposed tools (name, description, parameter names and descriptions):
- `bm25`: the query's words ranked by BM25 over those fields;
- `regex`: the query is a Python regular expression (case-insensitive) searched in the same text, matches
  in name order of the listing.
`search(query)` returns at most TOP_K exposed names, best first (an empty list for a query that finds nothing or a
bad pattern, with `error` saying why). The search tool itself is `TOOL` (the same name and input in both modes).

Contract: the same exposed tools and query give the same result; deferred tools are never shown unloaded.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from optimizer.definitions import Exposed, ToolDef
from optimizer.text.tokens import terms

SearchMode = Literal["off", "bm25", "regex"]
SEARCH_MODES: tuple[SearchMode, ...] = ("off", "bm25", "regex")
TOP_K = 5
SEARCH_TOOL = "tool_search"
K1, B = 1.2, 0.75


def search_tool(mode: SearchMode) -> ToolDef:
    """The one tool an agent sees at first: what it does and how to ask."""
    how = ("a Python regular expression matched against tool names and descriptions (e.g. 'order|refund')"
           if mode == "regex" else "a few words saying what you need to do (e.g. 'refund an order')")
    return ToolDef(
        name=SEARCH_TOOL,
        description=(f"Search the available tools and load the best matches (up to {TOP_K}); only loaded tools can "
                     "be called. Call it first, with what the request needs; search again for another step."),
        input_schema={"type": "object", "required": ["query"],
                      "properties": {"query": {"type": "string", "description": f"The search: {how}."}}},
    )


@dataclass(frozen=True)
class Found:
    names: tuple[str, ...]
    error: str | None = None


class ToolSearch:
    """The search over one exposed tool list (see the module docstring)."""

    def __init__(self, exposed: Exposed, mode: SearchMode) -> None:
        if mode == "off":
            raise ValueError("no tool search in mode 'off'")
        self.mode = mode
        self.tool = search_tool(mode)
        self.tools = tuple(t for t in exposed.tools if t.name != SEARCH_TOOL)
        self._texts = [_text(t) for t in self.tools]
        self._docs = [Counter(terms(text)) for text in self._texts]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg = sum(self._lengths) / max(1, len(self._lengths)) or 1.0
        self._df = Counter(t for d in self._docs for t in d)

    def search(self, query: str) -> Found:
        if self.mode == "regex":
            try:
                pattern = re.compile(query, re.IGNORECASE)
            except re.error as exc:
                return Found((), f"not a valid regular expression: {exc}")
            return Found(tuple(t.name for t, text in zip(self.tools, self._texts, strict=True)
                               if pattern.search(text))[:TOP_K])
        return Found(tuple(name for name, _ in self.ranked(query)[:TOP_K]))

    def ranked(self, query: str) -> list[tuple[str, float]]:
        """Every tool the query's words score above zero by BM25, best first (ties in listing order)."""
        wanted = set(terms(query))
        n = len(self.tools)
        scores = []
        for index, (doc, length) in enumerate(zip(self._docs, self._lengths, strict=True)):
            score = 0.0
            for term in wanted:
                tf = doc.get(term, 0)
                if tf:
                    idf = math.log(1 + (n - self._df[term] + 0.5) / (self._df[term] + 0.5))
                    score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / self._avg))
            if score > 0:
                scores.append((-score, index))
        return [(self.tools[i].name, -negative) for negative, i in sorted(scores)]

    def visible(self, loaded: Sequence[str]) -> tuple[ToolDef, ...]:
        """What the agent sees: the search tool, then the loaded tools in listing order."""
        chosen = set(loaded)
        return (self.tool, *(t for t in self.tools if t.name in chosen))

    def result_text(self, found: Found) -> str:
        """The search tool's result: the tools it loaded, one per line with the first line of each description."""
        if found.error:
            return f"Error: {found.error}"
        if not found.names:
            return "No tool matched; search again with other words."
        by_name = {t.name: t for t in self.tools}
        lines = [f"- {name}: {_first_line(by_name[name].description)}" for name in found.names]
        return f"Loaded {len(found.names)} tool(s), now callable:\n" + "\n".join(lines)


def _text(tool: ToolDef) -> str:
    params = " ".join(f"{name} {prop.get('description', '')}" for name, prop in tool.properties.items())
    return f"{tool.name.replace('_', ' ')} {tool.name} {tool.description or ''} {params}"


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""

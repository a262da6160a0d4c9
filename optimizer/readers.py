"""Offline readers that are real systems, not heuristics of ours: they rank a server's tools for a request the way a
tool search or a semantic router does, and the top hit is the reader's choice.

- `bm25`: the tool search the Messages API runs over deferred tools (BM25 over names, descriptions and parameter
  descriptions, `optimizer.tool_search`), with the request as the query.
- `embed`: a trained text-embedding model that ships inside the `wordllama` package (256-dimension static token
  embeddings, loaded from the installed package with downloads disabled), ranking tools by cosine similarity to the
  request, as semantic tool routers do.

What they tell is findability: how a tool search or a router finds a tool for a request. That is real for clients
that defer tools; agent accuracy needs a model (Claude, or an OpenAI-compatible server).

Contract: `rank(tools, request)` returns the names of the tools the reader finds for the request, each once, best
first (ties keep the listing order); it is a pure function of its arguments. The top hit is the reader's choice; a
search that finds nothing chooses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from optimizer.definitions import Exposed, ToolDef
from optimizer.lint.vocabulary import name_words
from optimizer.tool_search import ToolSearch

READERS = ("bm25", "embed")


class Reader(Protocol):
    name: str

    def rank(self, tools: Sequence[ToolDef], request: str) -> list[str]:
        """The tools found for the request, best first."""
        ...


class SearchReader:
    """BM25 tool search: the tools that share a word with the request, best first."""

    name = "bm25"

    def rank(self, tools: Sequence[ToolDef], request: str) -> list[str]:
        return [name for name, _ in ToolSearch(Exposed(tuple(tools), {}), "bm25").ranked(request)]


class EmbeddingReader:
    """Cosine similarity of wordllama embeddings of the request and of each tool's text: every tool, best first."""

    name = "embed"

    def rank(self, tools: Sequence[ToolDef], request: str) -> list[str]:
        if not tools:
            return []
        model = _wordllama()
        texts = [tool_text(t) for t in tools]
        vectors = model.embed([request, *texts], norm=True)
        scores = vectors[1:] @ vectors[0]
        order = sorted(range(len(tools)), key=lambda i: (-float(scores[i]), i))
        return [tools[i].name for i in order]


def tool_text(tool: ToolDef) -> str:
    """What a router embeds for a tool: its name as words, its description and its parameters' descriptions."""
    params = " ".join(f"{name.replace('_', ' ')}: {prop.get('description', '')}"
                      for name, prop in tool.properties.items())
    return f"{' '.join(name_words(tool.name))}. {tool.description or ''} {params}".strip()


def load_reader(name: str) -> Reader:
    """The reader a name gives; raises ValueError for another name."""
    if name == "bm25":
        return SearchReader()
    if name == "embed":
        return EmbeddingReader()
    raise ValueError(f"unknown reader {name!r}: use one of {', '.join(READERS)}")


@cache
def _wordllama() -> Any:
    """The embedding model shipped in the wordllama wheel, loaded once, never downloaded."""
    import wordllama

    return wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)

"""Rules that look at more than one tool: boundary and overlap (pairs of look-alike tools), and
name-mixed-styles and overload (the whole server).

Contracts:
- `check_neighbours` reads a `similarity.Similarity` built over the same tools, in the same order.
- `check_server` reports server-level findings (`tool` is None): mixed naming styles, overload, and
  duplicate tool names (as name-invalid errors; that rule is declared in `rules_names`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from optimizer.definitions import ToolDef
from optimizer.lint.findings import Finding, Rule, Severity, finding, rule
from optimizer.lint.similarity import BOUNDARY, NAME_TOKEN, OVERLAP_SIMILARITY, Similarity
from optimizer.lint.vocabulary import name_style

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("boundary", "boundary", "warning", "A tool with a look-alike says what it is not for.", """
        When another tool in the same server is similar (a Jaccard index of at least 0.25 over name and
        description, or an overlap, see overlap), the description must draw the line: what this tool is not for,
        or which neighbour to use instead. It is satisfied by phrases such as "not for", "instead", "rather
        than", "only for", "unlike", or by naming another tool of the server. The message names the closest
        neighbours. Fix: add one sentence such as "Not for billing questions; use get_account instead." """),
    rule("overlap", "overlap", "warning", "Tools are distinguishable from each other.", """
        Two tools whose names and descriptions share most of their words are hard to tell apart, and a model
        then picks one at random. Similarity is the larger of two Jaccard indices over content words (stemmed,
        stopwords dropped, common verbs folded: get/fetch/check/read, search/find/query, create/add/make,
        update/edit/change, delete/remove/drop, list): one over name plus description, one over the descriptions
        alone. Clauses that draw a boundary ("not for…", "…instead") and mentions of other tools' names are left
        out, since they describe the neighbour. A pair that shares only common verbs counts only when one of the
        two says nothing but the verb. Pairs at 0.5 or more fire, once per tool, naming the other tools and the
        shared words. Fix: say what only this tool does, and add "for X use Y instead" lines."""),
    rule("name-mixed-styles", "names", "warning", "One naming style per server.", """
        A server-level finding when multi-word tool names mix styles (snake_case, kebab-case, camelCase,
        PascalCase): the inconsistency itself becomes a signal models misread. A dotted namespace prefix is
        ignored when classifying. Fix: rename to one style, preferably snake_case."""),
    rule("overload", "overload", "warning", "A server does not expose too many tools.", """
        A server-level finding when the server lists more tools than --max-tools (default 20). Beyond a handful
        of overlapping choices, selection degrades from sheer number, and rewriting descriptions will not fix
        that. Fix: namespace the tools by service, split the server, consolidate tools, or expose a tool-search
        tool that loads definitions on demand."""),
)}


def _finding(rule_id: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return finding(DECLARED[rule_id], tool, field, message, severity)


def check_neighbours(tools: Sequence[ToolDef], similarity: Similarity) -> dict[int, list[Finding]]:
    """boundary and overlap findings by tool position."""
    names = [t.name for t in tools]
    others = set(names)
    out: dict[int, list[Finding]] = defaultdict(list)
    for i, items in similarity.near.items():
        tool = tools[i]
        close = [n for n in items if n.similarity >= OVERLAP_SIMILARITY]
        if close:
            pairs = "; ".join(f"{names[n.position]} ({n.similarity:.2f}, shared: "
                              f"{', '.join(similarity.shared(i, n.position)[:6])})" for n in close[:3])
            more = f" and {len(close) - 3} more" if len(close) > 3 else ""
            out[i].append(_finding("overlap", tool, "description",
                                   f"{tool.name} is hard to tell apart from {pairs}{more}; say what only this tool "
                                   f"does, and when to use {names[close[0].position]} instead."))
        text = tool.description
        if BOUNDARY.search(text):
            continue
        mentioned = {m.group(0).strip(".-") for m in NAME_TOKEN.finditer(text)}
        if mentioned & (others - {tool.name}):
            continue
        nearest = ", ".join(names[n.position] for n in items[:2])
        out[i].append(_finding("boundary", tool, "description",
                               f"{tool.name} has look-alikes ({nearest}) but does not say what it is not for; add e.g. "
                               f"'Not for …; use {names[items[0].position]} instead.'"))
    return out


def check_server(server: str, tools: Sequence[ToolDef], max_tools: int) -> list[Finding]:
    """name-mixed-styles, overload, name-invalid for duplicates (server-level findings)."""
    out: list[Finding] = []
    styles: dict[str, list[str]] = defaultdict(list)
    for tool in tools:
        style = name_style(tool.name)
        if style is not None:
            styles[style].append(tool.name)
    if len(styles) > 1:
        listing = "; ".join(f"{style}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}"
                            for style, names in sorted(styles.items(), key=lambda kv: (-len(kv[1]), kv[0])))
        out.append(Finding("name-mixed-styles", "warning", None, "names",
                           f"tool names mix {len(styles)} styles ({listing}); rename them to one style, preferably "
                           "snake_case."))
    if len(tools) > max_tools:
        out.append(Finding("overload", "warning", None, "tools",
                           f"{server} lists {len(tools)} tools (more than {max_tools}); rewriting descriptions will "
                           "not fix choice overload: namespace them by service, split the server, consolidate tools, "
                           "or expose a tool-search tool that loads definitions on demand."))
    counts = Counter(t.name for t in tools)
    for name in sorted(n for n, c in counts.items() if c > 1):
        out.append(Finding("name-invalid", "error", None, "names",
                           f"{counts[name]} tools are named {name!r}; give each tool a unique name."))
    return out

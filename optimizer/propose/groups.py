"""Splitting a proposal request that would not fit its budget: the tools in groups, each group its own request.

Contract:
- `tool_groups` puts every tool of the catalog in exactly one group, in catalog order within a group. Tools agents
  confused with each other (`Evidence.confusions`, either way) stay in one group as long as such a group fits;
  a group's tools cost at most `budget` (each tool's cost from `cost`), except a single tool that alone costs more.
- `merged` joins the groups' answers: candidate j takes, from every group, that group's j-th candidate (its last
  when it sent fewer), on top of `current`; the namespace scheme is the first group's. Distinct keys, none equal to
  `current`, at most k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from optimizer.definitions import Candidate, Catalog
from optimizer.propose.base import Evidence


def tool_groups(catalog: Catalog, evidence: Evidence, cost: Callable[[str], int], budget: int) -> list[list[str]]:
    """The catalog's tools in groups that each cost at most `budget` (see the module docstring)."""
    order = {name: index for index, name in enumerate(catalog.names)}
    parent = {name: name for name in catalog.names}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for expected, row in evidence.confusions.items():
        for chosen in row:
            if expected in parent and chosen in parent:
                parent[root(chosen)] = root(expected)
    parts: dict[str, list[str]] = {}
    for name in catalog.names:
        parts.setdefault(root(name), []).append(name)
    groups: list[list[str]] = []
    current: list[str] = []
    spent = 0
    for part in sorted(parts.values(), key=lambda members: order[members[0]]):
        units = [[name] for name in part] if sum(cost(n) for n in part) > budget else [part]
        for members in units:  # a confused set too big for one group goes tool by tool
            price = sum(cost(n) for n in members)
            if current and spent + price > budget:
                groups.append(current)
                current, spent = [], 0
            current += members
            spent += price
    if current:
        groups.append(current)
    return [sorted(group, key=order.__getitem__) for group in groups]


def merged(answers: Sequence[Sequence[Candidate]], current: Candidate, k: int) -> list[Candidate]:
    """Candidate j from every group's j-th answer (see the module docstring)."""
    given = [list(a) for a in answers if a]
    out: list[Candidate] = []
    keys = {current.key}
    for j in range(max((len(a) for a in given), default=0)):
        edits = dict(current.edits)
        for answer in given:
            edits.update(answer[min(j, len(answer) - 1)].edits)
        scheme = given[0][min(j, len(given[0]) - 1)]
        candidate = Candidate(edits=edits, scheme=scheme.scheme, word=scheme.word)
        if candidate.key not in keys and len(out) < k:
            keys.add(candidate.key)
            out.append(candidate)
    return out


def sub_catalog(catalog: Catalog, names: Sequence[str]) -> Catalog:
    """The catalog's tools named in `names`, in catalog order."""
    wanted = set(names)
    return Catalog(catalog.server_name, tuple(t for t in catalog.tools if t.name in wanted))


def sub_candidate(current: Candidate, names: Sequence[str]) -> Candidate:
    """`current`'s edits of these tools only, with its scheme."""
    wanted = set(names)
    return Candidate(edits={n: e for n, e in current.edits.items() if n in wanted}, scheme=current.scheme,
                     word=current.word)

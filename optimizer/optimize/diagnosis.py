"""Why episodes failed, in counts: the failure modes of a set of scored episodes, and a sentence for each mode
behind at least half of the failures — so a run that improved nothing says why instead of a bare +0%.

Modes (an episode may show several): it called no tool; it did not call a tool the task expects; it called every
tool the task expects and still failed (the arguments or the answer, not the choice of tool); every call it made
returned an error; an error result named one of the arguments it sent (counted per tool and parameter).
Tools the tasks expect that no episode called at all are listed apart. A reader's episode (it ranks tools and calls
nothing) counts only as a reading whose top hit was not the expected tool. Nothing here knows a server or a tool.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.files.store import StoredEpisode

DOMINANT = 0.5
"""A mode is worth a sentence when it covers at least this share of the failed episodes."""


@dataclass(frozen=True)
class FailureModes:
    episodes: int
    failed: int
    no_call: int = 0
    missed_tool: int = 0
    right_tools: int = 0
    """failed episodes that called every tool their task expects (tasks that expect none not counted)"""
    all_errors: int = 0
    argument_errors: dict[str, int] = field(default_factory=dict)
    """`tool.parameter` -> failed episodes with an error result that names that argument"""
    never_called: tuple[str, ...] = ()
    misread: int = 0
    """failed readings: a reader's top hit was not the task's first expected tool"""

    def sentences(self) -> list[str]:
        """One sentence per dominant mode, most common first; empty when nothing dominates."""
        if not self.failed:
            return []
        floor = self.failed * DOMINANT
        of = f"of {self.failed} failed episodes"
        found: list[tuple[int, str]] = []
        if self.all_errors >= floor:
            found.append((self.all_errors, f"every tool call returned an error in {self.all_errors} {of}"))
        for where, count in self.argument_errors.items():
            if count >= floor:
                tool, _, parameter = where.partition(".")
                found.append((count, f"{count} {of} got an error about the `{parameter}` argument of {tool}"))
        if self.no_call >= floor:
            found.append((self.no_call, f"no tool was called in {self.no_call} {of}"))
        if self.missed_tool >= floor:
            never = f"; never called in any episode: {', '.join(self.never_called)}" if self.never_called else ""
            found.append((self.missed_tool, f"an expected tool was not called in {self.missed_tool} {of}{never}"))
        if self.misread >= floor:
            found.append((self.misread, f"the expected tool was not a reader's top hit in {self.misread} {of}"))
        if self.right_tools >= floor:
            found.append((self.right_tools, f"every expected tool was called in {self.right_tools} {of}: they "
                                            "failed on the arguments or the answer, not on the choice of tool"))
        return [text for _, text in sorted(found, key=lambda item: -item[0])]

    def to_json(self) -> dict[str, Any]:
        return {"episodes": self.episodes, "failed": self.failed, "no_call": self.no_call,
                "missed_tool": self.missed_tool, "right_tools": self.right_tools, "all_errors": self.all_errors,
                "argument_errors": dict(sorted(self.argument_errors.items())),
                "never_called": list(self.never_called), "misread": self.misread,
                "sentences": self.sentences()}


def failure_modes(episodes: Iterable[StoredEpisode]) -> FailureModes:
    """Count the failure modes of `episodes` (all models together)."""
    episodes = list(episodes)
    readings = [e for e in episodes if "reading" in e.data]
    misread = sum(not e.passed for e in readings)
    agents = [e for e in episodes if "reading" not in e.data]
    failed = [e for e in agents if not e.passed]
    called = {str(c.get("original") or c.get("name")) for e in agents for c in _calls(e)}
    expected = {t for e in agents for t in e.data.get("expected_tools") or ()}
    no_call = missed = right = all_errors = 0
    arguments: Counter[str] = Counter()
    for episode in failed:
        calls = _calls(episode)
        tools = {str(c.get("original") or c.get("name")) for c in calls}
        no_call += not calls
        wanted = set(episode.data.get("expected_tools") or ())
        missed += bool(wanted - tools)
        right += bool(wanted) and wanted <= tools
        all_errors += bool(calls) and all(c.get("is_error") for c in calls)
        arguments.update({f"{c.get('original') or c.get('name')}.{name}" for c in calls if c.get("is_error")
                          for name in _named(c)})
    return FailureModes(len(episodes), len(failed) + misread, no_call, missed, right, all_errors, dict(arguments),
                        tuple(sorted(expected - called)), misread)


def _calls(episode: StoredEpisode) -> Sequence[dict[str, Any]]:
    return [c for c in episode.data.get("calls") or () if isinstance(c, dict)]


def _named(call: dict[str, Any]) -> list[str]:
    """The argument names an error result mentions, when it mentions exactly one of them."""
    text = str(call.get("result") or "")
    names = [n for n in (call.get("arguments") or {}) if re.search(rf"(?<![\w-]){re.escape(str(n))}(?![\w-])", text)]
    return names if len(names) == 1 else []

"""`tasks generate --known FILE`: facts the user knows about a server's data, where exploring starts.

File format (UTF-8), one fact a line; blank lines and lines starting with `#` are skipped:
- `label: value`, with an optional note in brackets: `Patient id: P-0042 (Lena Vogt)`, `Order: #10023`;
- any other line is a free sentence: `Invoices are numbered like INV-2026-0007.`

Contract: `load_known` raises KnownError naming the file (and the line) when it cannot be read, is not UTF-8, or
holds no fact. `Fact.seen` gives what exploring uses (`explore.Seen` without a source: a value no call has
returned yet, marked `given`): the value under its label, the note under the label's words that do not ask for an
id (`patient` for `Patient id`), and in a free sentence the values `explore.harvest` reads. Exploring also passes a
given value to an optional parameter it fits. Nothing in a fact is an instruction:
Claude gets the file fenced as untrusted data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from optimizer.tasks.explore import Seen, harvest, kind_of
from optimizer.text.tokens import words
from optimizer.text.values import ID_WORDS

MAX_FACTS = 200
_LABELLED = re.compile(r"^([A-Za-z][A-Za-z0-9 _/'.-]{0,40}?)\s*:\s+(\S.*)$")
_NOTE = re.compile(r"^(.*?\S)\s*\(([^()]{1,80})\)$")


class KnownError(ValueError):
    """A --known file that cannot be used."""


@dataclass(frozen=True)
class Fact:
    """One line of the file: `label` and `value` for `label: value` lines (and the bracketed `note`), else the
    sentence as `value` with an empty label."""

    line: int
    label: str
    value: str
    note: str = ""

    @property
    def text(self) -> str:
        return (f"{self.label}: " if self.label else "") + self.value + (f" ({self.note})" if self.note else "")

    def seen(self) -> list[Seen]:
        if not self.label:
            return [replace(seen, given=True) for seen in harvest(self.value)]
        label = " ".join(words(self.label))
        out = [Seen(self.value, label, kind_of(self.value), anchor=self.note or None, given=True)]
        if self.note:
            item = " ".join(w for w in label.split() if w not in ID_WORDS)
            out.append(Seen(self.note, item, kind_of(self.note), anchor=self.value, given=True))
        return out


def parse_known(text: str) -> list[Fact]:
    """The facts of a file's text, in order (see the module docstring)."""
    facts = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LABELLED.match(line)
        if match is None or "://" in line[:match.end(1) + 3]:
            facts.append(Fact(number, "", line))
            continue
        label, value = match.group(1).strip(), match.group(2).strip()
        note = _NOTE.match(value)
        facts.append(Fact(number, label, note.group(1), note.group(2).strip()) if note else Fact(number, label, value))
    return facts


def load_known(path: Path) -> list[Fact]:
    """The facts of a --known file; KnownError when it cannot be read or holds none."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise KnownError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise KnownError(f"{path}: {exc.strerror or exc}") from None
    facts = parse_known(text)
    if not facts:
        raise KnownError(f"{path}: no fact in it (write one a line, `label: value`, e.g. `Order: #10023`)")
    if len(facts) > MAX_FACTS:
        raise KnownError(f"{path}:{facts[MAX_FACTS].line}: more than {MAX_FACTS} facts; keep the few records you "
                         "know best")
    return facts


def known_seen(facts: Sequence[Fact]) -> list[Seen]:
    """Every fact's values, in the file's order."""
    return [seen for fact in facts for seen in fact.seen()]


def listing(facts: Sequence[Fact]) -> str:
    """The facts as Claude gets them (inside a fence), one a line."""
    return "\n".join(fact.text for fact in facts)

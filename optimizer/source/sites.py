"""What the source scanners report and the patch planner consumes: declarations of tools found in source
(`Site`), the edits to make (`Edit`), and every string literal seen (`StringAt`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` of the file at `path` (relative, posix) with `new`."""

    path: str
    start: int
    end: int
    new: str


Outcome = Edit | str
"""An edit to make, or why the field is not located."""


@dataclass(frozen=True)
class Site:
    """One declaration of a tool in source, as a scanner found it. `name` is None when the name is not
    a literal the scanner can read. The callables answer for this declaration only:
    `describes(listed)` — does the source here yield that listed description;
    `describe(listed, new)`, `rename(new)`, `parameter(path, listed, new)` — the edit, or a reason."""

    path: str
    line: int
    name: str | None
    describes: Callable[[str], bool]
    describe: Callable[[str, str], Outcome]
    rename: Callable[[str], Outcome]
    parameter: Callable[[str, str, str], Outcome]
    name_start: int | None = None
    """Offset of the name literal (skipped when looking for other uses of the name)."""
    list_entry: bool = False
    """A tool-list entry (`Tool(...)`, `{name, description}`): a call dispatcher may compare the name as a
    string elsewhere, so a rename is refused when the name appears as another literal in the same language."""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class StringAt:
    """A string literal anywhere in a scanned file (for the rename check of list entries)."""

    path: str
    line: int
    start: int
    value: str

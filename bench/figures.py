"""The measured figures live in one page, docs/figures.md, and the benches refresh it: each bench's table stands
between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, and `--write docs/figures.md` replaces what is between
the two markers with the table just measured (the text around them is left as it is).

    python bench/calibration.py --write docs/figures.md

Benches that take --only refuse it with --write: a table of some servers would replace the table of all of them.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from datetime import date
from pathlib import Path

MARKER_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def markers(marker: str) -> tuple[str, str]:
    """The opening and closing comment of a section (`<!-- bench:NAME -->`, `<!-- /bench:NAME -->`)."""
    if not MARKER_NAME.fullmatch(marker):
        raise ValueError(f"bad section name {marker!r}: lower-case letters, digits and '-'")
    return f"<!-- bench:{marker} -->", f"<!-- /bench:{marker} -->"


def replace_section(path: Path | str, marker: str, markdown: str) -> None:
    """Replace the text between the section's two markers in `path` with `markdown` (the markers stay, each on its
    own line). The file must hold each marker exactly once, the opening one first; it is rewritten atomically."""
    path = Path(path)
    opening, closing = markers(marker)
    text = path.read_text(encoding="utf-8")
    for mark in (opening, closing):
        if text.count(mark) != 1:
            raise ValueError(f"{path}: {mark} must appear exactly once (found {text.count(mark)})")
    start, end = text.index(opening) + len(opening), text.index(closing)
    if end < start:
        raise ValueError(f"{path}: {closing} comes before {opening}")
    updated = text[:start] + "\n" + markdown.strip("\n") + "\n" + text[end:]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(updated)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add_write_option(parser: argparse.ArgumentParser) -> None:
    """`--write FILE`: also rewrite this bench's section of FILE (docs/figures.md)."""
    parser.add_argument("--write", type=Path, metavar="FILE",
                        help="also rewrite this bench's table in FILE (docs/figures.md) between its bench: markers")


def refuse_only(parser: argparse.ArgumentParser, path: Path | None, only: object) -> None:
    """Stop before measuring when --write comes with --only: a table of some servers would replace all of them."""
    if path is not None and only:
        parser.error("--write refreshes the whole table: run it without --only")


def write(path: Path | None, marker: str, markdown: str) -> None:
    """With a path (the --write option), put `markdown` and today's date into the section `marker` of it; without
    one, nothing."""
    if path is None:
        return
    replace_section(path, marker, f"{markdown.strip()}\n\n(measured {date.today().isoformat()})")
    print(f"wrote the {marker} table into {path}")

"""Regenerate `optimizer/data/proper_nouns.txt`: the words of `optimizer/data/english_words.txt` that English
dictionaries do not write in lower case — names they spell only with a capital (kim, weber, london, monday) and
frequent words they lack (kathmandu) — which the leakage guard (`optimizer/propose/leakage.py`) reads as names even
when they are frequent. A capitalised word that a dictionary also writes in lower case (rose, status, express,
colour) is common English, not evidence of a name.

The dictionaries are SCOWL's American and British English lists as Debian packages them (wamerican, wbritish),
which are not dependencies of the project: install them, then run this script:

    apt-get install wamerican wbritish
    python bench/build_proper_nouns.py
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "optimizer" / "data"
NOTICE = """# SCOWL's notice, which its licence asks to keep with every copy of the lists and of what is made from them:
#   Copyright 2000-2011 by Kevin Atkinson
#   Permission to use, copy, modify, distribute and sell these word lists, the associated scripts, the output
#   created from the scripts, and its documentation for any purpose is hereby granted without fee, provided that
#   the above copyright notice appears in all copies and that both that copyright notice and this permission
#   notice appear in supporting documentation. Kevin Atkinson makes no representations about the suitability of
#   this array for any purpose. It is provided "as is" without express or implied warranty."""


def common_words() -> list[str]:
    lines = (DATA / "english_words.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def dictionary_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "wamerican"], capture_output=True, text=True,
                             check=False)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dictionaries", type=Path, nargs="+",
                        default=[Path("/usr/share/dict/american-english"), Path("/usr/share/dict/british-english")])
    parser.add_argument("--out", type=Path, default=DATA / "proper_nouns.txt")
    args = parser.parse_args()
    lower = {e for path in args.dictionaries
             for e in path.read_text(encoding="utf-8", errors="replace").splitlines() if e.islower()}
    proper = [w for w in common_words() if w not in lower]
    header = [
        "# Words of english_words.txt (same order) that SCOWL's American and British English dictionaries do not",
        "# write in lower case: names of people, places, days and months, titles, and frequent words they lack.",
        "# The leakage guard counts a lone capitalised word as a name only when it is here or is not common English.",
        f"# Source: SCOWL by Kevin Atkinson, as Debian's wamerican and wbritish {dictionary_version()} package it.",
        *NOTICE.splitlines(),
        "# Regenerate with: apt-get install wamerican wbritish && python bench/build_proper_nouns.py",
    ]
    args.out.write_text("\n".join([*header, *proper]) + "\n", encoding="utf-8")
    print(f"wrote {len(proper)} words to {args.out}")


if __name__ == "__main__":
    main()

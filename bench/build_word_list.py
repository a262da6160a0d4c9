"""Regenerate `optimizer/data/english_words.txt`: the most frequent English words, most frequent first, which the
leakage guard (`optimizer/propose/leakage.py`) reads as "common in general English".

The list comes from wordfreq (Robyn Speer), which is not a dependency of the project: install it into a temporary
virtual environment outside the repository and run this script with that environment's Python:

    python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq==3.1.1
    /tmp/wf/bin/python bench/build_word_list.py [--count 30000] [--out optimizer/data/english_words.txt]

Only lower-case ASCII words are kept (wordfreq's list also holds numbers, contractions and accented forms, which
the guard never looks up). The header names the source, its version, its data licence and this command.
"""

from __future__ import annotations

import argparse
import re
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNT = 30_000


def header(count: int, wordfreq_version: str) -> list[str]:
    return [
        f"# The {count:,} most frequent English words, most frequent first (words of equal frequency in the",
        "# order wordfreq gives them); lower-case ASCII words only.",
        f"# Source: wordfreq {wordfreq_version} by Robyn Speer, wordfreq.top_n_list('en', n).",
        "# wordfreq's data is licensed CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), and so is",
        "# this list, which is derived from it. Credit, as wordfreq's README asks: Robyn Speer. (2022).",
        "# rspeer/wordfreq: v3.0 (v3.0.2). Zenodo. https://doi.org/10.5281/zenodo.7199437 . wordfreq's data",
        "# includes Google Books Ngrams, Wikipedia, the Leeds Internet Corpus, ParaCrawl, OPUS OpenSubtitles 2018",
        "# and the SUBTLEX word lists by Marc Brysbaert et al. (freely available data), among others.",
        "# Regenerate with:",
        f"#   python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq=={wordfreq_version}",
        f"#   /tmp/wf/bin/python bench/build_word_list.py --count {count}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=COUNT, help="how many words to keep")
    parser.add_argument("--out", type=Path, default=ROOT / "optimizer" / "data" / "english_words.txt")
    args = parser.parse_args()
    import wordfreq  # only in the temporary environment described above

    ranked = wordfreq.top_n_list("en", args.count * 2)
    kept = [w for w in ranked if re.fullmatch(r"[a-z]+", w)][: args.count]
    if len(kept) < args.count:
        raise SystemExit(f"wordfreq gave only {len(kept)} ASCII words; ask for fewer with --count")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join([*header(args.count, version("wordfreq")), *kept]) + "\n", encoding="utf-8")
    print(f"wrote {len(kept)} words to {args.out}")


if __name__ == "__main__":
    main()

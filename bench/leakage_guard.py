"""Benchmark: the leakage guard's precision and recall on the labelled corpus, next to the guard it replaced.

The corpus (`tests/fixtures/leakage_corpus.json`) holds hand-written definition texts for the examples and the
published test-bed servers: careful rewrites that must pass and planted leaks of every kind that must be caught.
Each text is judged against the train prompts and expected answers of its server's task set, with the server's own
definitions as known text. A positive is a flagged entry; a true positive is a flagged leak.

    python bench/leakage_guard.py [--show]

Prints, per label and leak kind, how many entries there are and how many each guard flags, then precision and
recall of both; --show also lists every entry a guard gets wrong, with what it flagged.

Then the guard on text it was not written with: every description and parameter description of the recorded real
proposals (`tests/fixtures/proposals/`, a Claude model's answers to the proposer request of each test-bed server),
judged as screening judges them. A flagged text is a false rejection unless every phrase flagged in it is one
`tests/fixtures/proposals/reviewed.json` lists (a train task's expected answer or a value its prompt names).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.safety import catalog_strings
from optimizer.tasks import load_tasks
from optimizer.text.tokens import STOPWORDS, words
from optimizer.text.values import find_values

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "leakage_corpus.json"
PROPOSALS = ROOT / "tests" / "fixtures" / "proposals"
Guard = Callable[[dict[str, Any], dict[str, Any]], list[str]]


# --- the OLD guard (optimizer/propose/leakage.py before issue 17), copied as the baseline --------------------------
def old_leaked_phrases(text: str, prompts: Iterable[str]) -> list[str]:
    """Values, 3+ digit runs and every 3-word phrase with two content words shared with a prompt."""
    values, runs, phrases = _old_index(tuple(prompts))
    lowered = text.lower()
    found = {v for v in values if re.search(rf"(?<![\w@#$-]){re.escape(v.lower())}(?![\w@-])", lowered)}
    found.update(run for run in runs if re.search(rf"(?<!\d){run}(?!\d)", text))
    found.update(" ".join(g) for segment in _old_segments(text) for g in _old_grams(segment) if g in phrases)
    return sorted(found)


@functools.lru_cache(maxsize=8)
def _old_index(prompts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, ...]]]:
    values = {f.value for p in prompts for f in find_values(p, 0)
              if f.kind != "quoted" and not (f.kind == "number" and len(re.sub(r"\D", "", f.value)) < 3)}
    runs = {run for p in prompts for run in re.findall(r"\d{3,}", p)}
    phrases = {g for p in prompts for segment in _old_segments(p) for g in _old_grams(segment)}
    return frozenset(values), frozenset(runs), frozenset(phrases)


def _old_segments(text: str) -> list[list[str]]:
    return [words(part) for part in re.split(r"[,.;:!?()\[\]\"“”{}]+", text) if part.strip()]


def _old_grams(seq: list[str]) -> Iterable[tuple[str, ...]]:
    for i in range(len(seq) - 2):
        if sum(w not in STOPWORDS for w in seq[i : i + 3]) >= 2:
            yield tuple(seq[i : i + 3])
# --- end of the old guard ------------------------------------------------------------------------------------------


def load_corpus(path: Path = CORPUS) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """(servers with their train prompts, answers and known text; entries)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    servers = {}
    for name, server in data["servers"].items():
        train = load_tasks(ROOT / server["tasks"]).split("train")
        servers[name] = {"prompts": [t.prompt for t in train], "known_text": [server["known_text"]],
                         "answers": [t.expect.answer for t in train if t.expect.answer]}
    return servers, data["entries"]


def new_guard(entry: dict[str, Any], server: dict[str, Any]) -> list[str]:
    return leaked_phrases(entry["text"], server["prompts"], known_text=server["known_text"], answers=server["answers"])


def old_guard(entry: dict[str, Any], server: dict[str, Any]) -> list[str]:
    return old_leaked_phrases(entry["text"], server["prompts"])


def measure(guard: Guard, servers: dict[str, dict[str, Any]], entries: list[dict[str, Any]]) -> dict[str, Any]:
    flagged = [guard(e, servers[e["server"]]) for e in entries]
    rows: dict[str, list[int]] = {}
    for entry, found in zip(entries, flagged, strict=True):
        key = entry["label"] if entry["label"] == "careful" else f"leak: {entry['kind']}"
        rows.setdefault(key, [0, 0])
        rows[key][0] += 1
        rows[key][1] += bool(found)
    positives = sum(bool(f) for f in flagged)
    true = sum(bool(f) for e, f in zip(entries, flagged, strict=True) if e["label"] == "leak")
    leaks = sum(e["label"] == "leak" for e in entries)
    return {"rows": rows, "flagged": flagged, "precision": true / positives if positives else 1.0,
            "recall": true / leaks if leaks else 1.0}


def real_proposals() -> list[dict[str, Any]]:
    """Per recorded real proposal: its texts, how many the guard flags, and how many of those a reviewer would not
    strike (false rejections), with the flagged phrases."""
    reviewed = json.loads((PROPOSALS / "reviewed.json").read_text(encoding="utf-8"))["leaks"]
    rows = []
    for path in sorted(p for p in PROPOSALS.glob("*.json") if p.stem != "reviewed"):
        data = json.loads(path.read_text(encoding="utf-8"))
        catalog = Catalog(data["catalog"]["server_name"], tuple(map(ToolDef.from_canonical, data["catalog"]["tools"])))
        train = load_tasks(ROOT / data["tasks"]).split("train")
        texts = [text for c in data["answer"]["candidates"] for t in c["tools"]
                 for text in (t.get("description"), *(t.get("parameters") or {}).values()) if text]
        flagged = [found for text in texts
                   if (found := leaked_phrases(text, [t.prompt for t in train], known_text=catalog_strings(catalog),
                                               answers=[t.expect.answer for t in train]))]
        allowed = set(reviewed.get(path.stem, {}))
        rows.append({"server": path.stem, "texts": len(texts), "flagged": len(flagged),
                     "false": sum(not set(found) <= allowed for found in flagged),
                     "phrases": sorted({p for found in flagged for p in found})})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="list every entry a guard gets wrong")
    args = parser.parse_args()
    servers, entries = load_corpus()
    results = {"old": measure(old_guard, servers, entries), "new": measure(new_guard, servers, entries)}
    print(f"{'entries':<16} {'n':>4}  {'old flags':>9}  {'new flags':>9}")
    for key in sorted(results["new"]["rows"], key=lambda k: (k != "careful", k)):
        n, new = results["new"]["rows"][key]
        print(f"{key:<16} {n:>4}  {results['old']['rows'][key][1]:>9}  {new:>9}")
    for name in ("precision", "recall"):
        print(f"{name:<16} {'':>4}  {results['old'][name]:>9.2f}  {results['new'][name]:>9.2f}")
    print()
    print("recorded real proposals (text the guard was not written with):")
    print(f"{'server':<22} {'texts':>5}  {'flagged':>7}  {'false':>5}  phrases")
    rows = real_proposals()
    for row in rows:
        print(f"{row['server']:<22} {row['texts']:>5}  {row['flagged']:>7}  {row['false']:>5}  "
              f"{', '.join(row['phrases']) or '–'}")
    print(f"{'all':<22} {sum(r['texts'] for r in rows):>5}  {sum(r['flagged'] for r in rows):>7}  "
          f"{sum(r['false'] for r in rows):>5}")
    if args.show:
        for name, result in results.items():
            for entry, found in zip(entries, result["flagged"], strict=True):
                if bool(found) != (entry["label"] == "leak"):
                    print(f"[{name}] {entry['label']} {entry['server']}/{entry['tool']} {entry['field']}: "
                          f"{entry['text']!r} -> {found}")


if __name__ == "__main__":
    main()

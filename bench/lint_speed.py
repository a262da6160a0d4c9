"""Benchmark: how long `lint()` takes for synthetic catalogs of 100 and 1,000 tools and for the two examples.

The synthetic catalogs are generated deterministically (seeded): verb_object names from a few hundred
objects, descriptions from sentence templates over a vocabulary of real and made-up words, schemas with
0-7 parameters of every kind the rules look at (ids, dates, money, enums, nested objects, arrays, $refs),
and mixed annotations, so that every rule has work to do and the overlap check sees many shared words.
The examples are listed from their servers once, written as `optimizer dump` canonical files into a
temporary directory and read back with `load_definitions`, so only linting is timed.

    python bench/lint_speed.py [--repeat 5] [--seed 0]

Prints, per catalog: tools, wall time of the first run (empty caches), best wall and CPU time of --repeat
runs, CPU time per 100 tools, CPU time of the pairwise overlap step alone, neighbour pairs found, findings,
the score and the estimated tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.files.patch import dump_definitions, load_definitions
from optimizer.lint import lint
from optimizer.lint.similarity import Similarity
from optimizer.servers import ServerPool, ServerSpec
from optimizer.text.tokens import terms

ROOT = Path(__file__).resolve().parent.parent


def _words(text: str) -> list[str]:
    return text.split()


EXAMPLES = {"support": ROOT / "examples/support/server.py", "workspace": ROOT / "examples/workspace/server.py"}

VERBS = _words(
    "get list search find create update delete send refund track check archive export import sync assign "
    "close open schedule cancel approve merge tag"
)
NOUNS = _words(
    "customer order invoice ticket refund shipment account user team project task issue comment document "
    "page folder file report dashboard metric alert incident deployment release build pipeline branch "
    "commit review calendar event meeting room booking contact lead deal campaign email message thread "
    "channel note label policy contract payment subscription plan coupon product variant price warehouse "
    "stock supplier"
)
WORDS = _words(
    "status details history summary owner date range region currency total balance priority tag label "
    "archive draft public private shared recent open closed pending active expired latest first last "
    "daily weekly monthly quarter year budget forecast audit log permission role token key secret webhook "
    "event queue batch job retry limit page cursor filter sort field value"
)
TEMPLATES = (
    "{Verb} {a} {noun} by its {field} when {who} asks about {topic}.",
    "Use this to {verb} the {noun}'s {topic} and {topic2}.",
    "This tool allows you to {verb} {noun}s.",
    "Returns the {noun}'s {field}, {topic} and {topic2}.",
    "Not for {topic2}; use {other} instead.",
    "If the {noun} is missing the call fails with not found; {verb} the {noun2} first.",
    "Takes up to {n} seconds; safe to retry once.",
    "Results are sorted by {field} and paginated with a cursor.",
    "{Verb} {noun}",
    "",
)


def _pseudo_words(rng: random.Random, n: int) -> list[str]:
    syllables = _words("ka lo mi ra ve tu sen dor phi qua zel ban tor lin mar gex wil")
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(n)]


def synthetic_catalog(n: int, seed: int = 0) -> Catalog:
    """`n` varied tools, the same for the same (n, seed)."""
    rng = random.Random(seed)
    vocab = WORDS + _pseudo_words(rng, 1500)
    nouns = NOUNS + _pseudo_words(rng, 300)
    names: list[str] = []
    tools: list[ToolDef] = []
    for i in range(n):
        verb, noun = rng.choice(VERBS), rng.choice(nouns)
        style = rng.random()
        name = f"{verb}_{noun}" if style < 0.8 else f"{verb}-{noun}" if style < 0.9 else f"{verb}{noun.title()}"
        if rng.random() < 0.3:
            name += "_" + rng.choice(WORDS)
        if name in names:
            name = f"{name}_{i}"
        names.append(name)
        sentences = []
        for _ in range(rng.randint(1, 5)):
            template = rng.choice(TEMPLATES)
            sentences.append(template.format(
                Verb=verb.title(), verb=verb, a="a", noun=noun, noun2=rng.choice(nouns), field=rng.choice(vocab),
                who=rng.choice(["a customer", "an agent", "the user"]), topic=rng.choice(vocab),
                topic2=rng.choice(vocab), other=rng.choice(names), n=rng.randint(1, 30)))
        tools.append(ToolDef(name=name, description=" ".join(s for s in sentences if s),
                             input_schema=_schema(rng, vocab),
                             output_schema={"type": "object"} if rng.random() < 0.2 else None,
                             annotations=_annotations(rng)))
    return Catalog(server_name=f"synthetic-{n}", tools=tuple(tools))


def _schema(rng: random.Random, vocab: list[str]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    kinds = ["id", "date", "money", "enum", "listed", "text", "generic", "nested", "array", "ref"]
    for _ in range(rng.randint(0, 7)):
        kind = rng.choice(kinds)
        word = rng.choice(vocab)
        described = rng.random() < 0.6
        if kind == "id":
            props[f"{word}_id"] = {"type": "string", **({"description": f"The {word} id like X-{rng.randint(1, 999)}."}
                                                        if described else {})}
        elif kind == "date":
            props[f"{word}_date"] = {"type": "string", **({"description": "ISO date YYYY-MM-DD."} if described else {})}
        elif kind == "money":
            props["amount"] = {"type": "integer", **({"description": "Amount in cents."} if described else {})}
        elif kind == "enum":
            props["priority"] = {"type": "string", "enum": ["low", "normal", "high"], "description": "Urgency."}
        elif kind == "listed":
            props["status"] = {"type": "string", "description": "One of: open, pending, closed."}
        elif kind == "generic":
            props[rng.choice(["data", "value", "input", "user", "q"])] = {"type": "string"}
        elif kind == "nested":
            props["filters"] = {"type": "object", "properties": {"range": {"type": "object", "properties": {
                "start": {"type": "string", "description": "ISO date."}}}}}
        elif kind == "array":
            props[f"{word}s"] = {"type": "array", "items": {"type": "object", "properties": {
                "sku": {"type": "string", "description": "Stock keeping unit like AB-12."}}}}
        elif kind == "ref":
            props["line"] = {"$ref": "#/$defs/Line"}
        else:
            props[word] = {"type": "string", **({"description": f"Free text about the {word}."} if described else {})}
    schema: dict[str, Any] = {"type": "object", "properties": props, "$defs": {
        "Line": {"type": "object", "properties": {"qty": {"type": "integer", "description": "How many."}}}}}
    if rng.random() < 0.8:
        schema["required"] = [k for k in props if rng.random() < 0.5]
    return schema


def _annotations(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.2:
        return None
    return {k: rng.random() < 0.5 for k in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
            if rng.random() < 0.9}


async def _example(path: Path, out_dir: Path) -> Catalog:
    async with ServerPool(ServerSpec.parse(f"{sys.executable} {path}")) as pool:
        catalog = await pool.list_tools()
    dump_definitions(catalog, Candidate(), out_dir)
    return Catalog(catalog.server_name, tuple(load_definitions(out_dir)))


def measure(catalog: Catalog, repeat: int) -> dict[str, float]:
    """Wall and CPU seconds: the first run with empty caches, then the best of `repeat` (CPU time is steadier
    on a shared machine)."""
    terms.cache_clear()
    start, cpu = time.perf_counter(), time.process_time()
    report = lint(catalog)
    cold = time.perf_counter() - start
    best, best_cpu = cold, time.process_time() - cpu
    for _ in range(repeat - 1):
        start, cpu = time.perf_counter(), time.process_time()
        lint(catalog)
        best, best_cpu = min(best, time.perf_counter() - start), min(best_cpu, time.process_time() - cpu)
    cpu = time.process_time()
    near = Similarity(catalog.tools).near
    pairs = time.process_time() - cpu
    return {"tools": len(catalog.tools), "cold_s": cold, "best_s": best, "cpu_s": best_cpu, "pairs_s": pairs,
            "neighbour_pairs": sum(len(v) for v in near.values()) / 2, "score": report.score,
            "tokens": report.tokens, "findings": len(report.findings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per catalog; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    catalogs: dict[str, Catalog] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in EXAMPLES.items():
            catalogs[f"example {name}"] = asyncio.run(_example(path, Path(tmp) / name))
    for n in (100, 1000):
        catalogs[f"synthetic {n}"] = synthetic_catalog(n, args.seed)
    print(f"{'catalog':<18} {'tools':>6} {'cold ms':>8} {'best ms':>8} {'cpu ms':>8} {'cpu ms/100 tools':>17} "
          f"{'overlap cpu ms':>15} {'pairs':>7} {'findings':>9} {'score':>6} {'tokens':>8}")
    for label, catalog in catalogs.items():
        m = measure(catalog, args.repeat)
        per100 = m["cpu_s"] * 1000 / m["tools"] * 100
        print(f"{label:<18} {m['tools']:>6.0f} {m['cold_s'] * 1000:>8.1f} {m['best_s'] * 1000:>8.1f} "
              f"{m['cpu_s'] * 1000:>8.1f} {per100:>17.1f} {m['pairs_s'] * 1000:>15.1f} {m['neighbour_pairs']:>7.0f} "
              f"{m['findings']:>9.0f} {m['score']:>6.1f} {m['tokens']:>8.0f}")


if __name__ == "__main__":
    main()

"""Recorded real proposals: the proposer request the project sends for each server of the test bed, and a Claude
model's answer to it, kept as fixtures (tests/fixtures/proposals/<server>.json) that the tests replay through the
local fake Messages API.

    python bench/real_proposals.py capture [--only NAME,…]   # write each server's request (kept if answered)
    python bench/real_proposals.py answer NAME ANSWER.json [--group N]  # store a model's answer (its call's input)
    python bench/real_proposals.py screen [--only NAME,…] [--json] [--overlays DIR] [--write docs/figures.md]
    (each with --goal shrink: a shrink run's request and answer, <server>.shrink.json)

`capture` runs `optimize` on the server's task set with the simulated agents (test doubles whose calls and errors make
the evidence) and claude-opus-5-5 as the proposer, through the local fake Messages API, and records the proposer
request it sends (system prompt, user message, the submit_candidates tool and tool_choice) — one per group of tools
when the catalog is too large for one request (the fixture's `groups`). A Claude model is then given each request
and nothing else, and its answer — the input of its submit_candidates call — is stored with `answer` (`--group N`
for the Nth request of a split one).

`screen` replays every recorded answer: it runs the same `optimize` with the fake API answering the proposer
request with the recorded input, one round, scored by the offline readers (reader:bm25, reader:embed), and prints
per server what screening made of each candidate (kept whole, trimmed or rejected, with the reasons), whether the
winner names only tools it exposes, how many texts the leakage guard flagged, and the readers' held-out findability
baseline → winner (top hit, top 5) with the definition tokens. Findability is how a tool search or a router finds a
tool, not agent accuracy (bench/calibration.py). `--write docs/figures.md` rewrites the real-proposals tables there
(with --goal shrink, the shrink ones).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import sim_agents  # noqa: E402, F401 - registers the simulated agents (test doubles)
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy  # noqa: E402
from fakes.recorded_proposals import RecordedProposals, exchanges  # noqa: E402
from figures import add_write_option, refuse_only, write  # noqa: E402
from testbed import Server, servers  # noqa: E402

from optimizer.definitions import Catalog  # noqa: E402
from optimizer.models import CLAUDE_PROPOSER  # noqa: E402
from optimizer.models import OFFLINE_DEFAULT as OFFLINE_MODELS  # noqa: E402
from optimizer.optimize import OptimizeConfig, run_optimize  # noqa: E402
from optimizer.propose.leakage import leaked_phrases  # noqa: E402
from optimizer.propose.safety import catalog_strings  # noqa: E402
from optimizer.references import unexposed  # noqa: E402
from optimizer.review import load_review  # noqa: E402
from optimizer.tasks import load_tasks  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "proposals"
KEY = "sk-ant-bench-not-a-real-key"


GOAL = "accuracy"
"""The run's goal (`--goal`): "shrink" records and replays `<server>.shrink.json`, a shrink run's request (its
evidence from the readers, which is all a shrink needs) and answer."""


def fixture_path(server: Server) -> Path:
    suffix = "" if GOAL == "accuracy" else f".{GOAL}"
    return FIXTURES / f"{server.name.replace('/', '-')}{suffix}.json"


def recorder(data: dict[str, Any] | None = None) -> RecordedProposals:
    """The fake API's policy: agent turns go to the offline agent; each proposer request is recorded and answered
    with the fixture's recorded answer to the request over the same tools, once; any other is refused."""
    return RecordedProposals(exchanges(data) if data else [], agent=SimPolicy("lexical"))


def answered(data: dict[str, Any]) -> bool:
    """Every request of the fixture (one, or one per group) has its answer."""
    return all(e.get("answer") for e in exchanges(data))


def answers(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["answer"] for e in exchanges(data) if e.get("answer")]


@contextmanager
def fake_api(policy: RecordedProposals) -> Iterator[FakeAnthropicAPI]:
    saved = {k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    with FakeAnthropicAPI(policy) as api:
        os.environ.update({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        try:
            yield api
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


AGENTS = ("sim:lexical", "sim:skim")
"""The callers whose train episodes made the recorded requests' evidence."""


def config_for(server: Server, models: tuple[str, ...]) -> OptimizeConfig:
    return OptimizeConfig(server=f"{sys.executable} {server.launcher}", tasks=str(server.tasks),
                          models=models, proposer=CLAUDE_PROPOSER, rounds=1, goal=GOAL,
                          allow_destructive=server.allow_destructive)


def run(server: Server, policy: RecordedProposals, runs: Path,
        models: tuple[str, ...] = OFFLINE_MODELS) -> dict[str, Any]:
    with fake_api(policy):
        return asyncio.run(run_optimize(config_for(server, models), runs_dir=runs,
                                        run_id=server.name.replace("/", "-")))


def capture(server: Server) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The proposer requests `optimize` sends for this server — one, or one per group of tools when the catalog is
    too large for one request — and the server's tools as it lists them (`catalog`)."""
    policy = recorder()
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(server, policy, Path(tmp), AGENTS if GOAL == "accuracy" else OFFLINE_MODELS)
        catalog = load_review(Path(summary["run_dir"])).catalog
    if not policy.requests:
        raise SystemExit(f"{server.name}: optimize sent no proposer request")
    return ([{key: request[key] for key in ("model", "system", "tools", "tool_choice", "messages")}
             for request in policy.requests],
            {"server_name": catalog.server_name, "tools": [tool.canonical() for tool in catalog.tools]})


def load(server: Server) -> dict[str, Any]:
    return json.loads(fixture_path(server).read_text(encoding="utf-8"))


def save(server: Server, data: dict[str, Any]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    fixture_path(server).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def command_capture(chosen: list[Server]) -> None:
    for server in chosen:
        old = load(server) if fixture_path(server).exists() else {}
        if old and any(e.get("answer") for e in exchanges(old)):
            print(f"{server.name}: kept the recorded requests and answers (a new request is never byte-equal: tool "
                  "results hold the time of day, for one). To record anew, delete the file.")
            continue
        requests, catalog = capture(server)
        recorded: dict[str, Any] = ({"request": requests[0]} if len(requests) == 1
                                    else {"groups": [{"request": request} for request in requests]})
        save(server, {"server": server.name, "command": server.command, "tasks": str(server.tasks.relative_to(ROOT)),
                      "catalog": catalog, **recorded})
        print(f"{server.name}: {len(requests)} request(s) written to {fixture_path(server).relative_to(ROOT)}")


def command_answer(server: Server, answer_file: Path, answered_by: str, group: int | None) -> None:
    """Store `answer_file` as the answer to the fixture's request (with `group`, to that group's request, from 1)."""
    data = load(server)
    answer = json.loads(answer_file.read_text(encoding="utf-8"))
    if not isinstance(answer, dict) or not isinstance(answer.get("candidates"), list):
        raise SystemExit(f"{answer_file}: expected the submit_candidates input, an object with a candidates list")
    groups = data.get("groups")
    if (groups is None) != (group is None) or (groups is not None and not 1 <= group <= len(groups)):
        raise SystemExit(f"{server.name}: the fixture has {len(groups) if groups else 'one'} request(s); "
                         + ("give --group 1.." + str(len(groups)) if groups else "give no --group"))
    (groups[group - 1] if groups is not None and group is not None else data)["answer"] = answer
    data["provenance"] = {
        "answered_by": answered_by,
        "date": date.today().isoformat(),
        "how": "The model was given the request above and nothing else (the system prompt, the user message and the "
               "submit_candidates tool with its forced tool_choice) and answered it as the proposer would; `answer` "
               "is the input of its submit_candidates call, unedited.",
    }
    save(server, data)
    print(f"{server.name}: answer stored ({len(answer['candidates'])} candidates)"
          + (f" for group {group} of {len(groups)}" if groups else ""))


def screen(server: Server, overlays: Path | None = None) -> dict[str, Any]:
    """Replay the recorded answer in one optimize round: what screening and the search made of it, whether the
    shipped winner names only tools it exposes, and what the leakage guard flagged in the answer's texts. With
    `overlays`, the winner's overlay.json is kept there as <server>.overlay.json."""
    data = load(server)
    policy = recorder(data)
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(server, policy, Path(tmp))
        review = load_review(Path(summary["run_dir"]))
        if overlays is not None:
            overlays.mkdir(parents=True, exist_ok=True)
            target = overlays / f"{server.name.replace('/', '-')}.overlay.json"
            target.write_bytes((Path(summary["run_dir"]) / summary["overlay"]).read_bytes())
    log = summary["rounds"][0] if summary["rounds"] else {}
    entries = log.get("rejected", [])
    rejected = {r["candidate"] for r in entries if "tool" not in r and r.get("outcome", "rejected") == "rejected"}
    trimmed = {r["candidate"] for r in entries} - rejected
    names = {n for answer in answers(data) for c in answer["candidates"] for t in c["tools"] if (n := t.get("name"))}
    return {"server": server.name, "proposed": log.get("proposed", 0),
            "passed_whole": log.get("proposed", 0) - len(rejected | trimmed), "trimmed": len(trimmed),
            "rejected": len(rejected), "reasons": entries, "unfit": log.get("unfit", []),
            "winner_tools_changed": len(review.changes), "winner_scheme": review.winner.scheme,
            "winner_unexposed_names": unexposed(review.catalog, review.winner, names),
            "leakage_flags": leakage_flags(server, answers(data), review.catalog),
            "requests": len(policy.requests),
            "findability": findability(summary), "tokens": summary["definition_tokens"]["baseline"],
            "winner_tokens": summary["definition_tokens"]["winner"], "gate": summary["gate"]["passed"],
            "verdicts": {m: v["reason"] for m, v in summary["gate"]["models"].items()}}


def findability(summary: dict[str, Any]) -> dict[str, str]:
    """Per reader, held-out "top 1 baseline → winner; top 5 baseline → winner"."""
    out = {}
    for model, sides in (summary.get("readers") or {}).get("baseline", {}).items():
        top1 = [summary[side]["heldout"][model] for side in ("baseline", "winner")]
        top5 = [sides, summary["readers"]["winner"][model]]
        out[model] = (f"top 1 {top1[0]['passed']}/{top1[0]['n']} → {top1[1]['passed']}/{top1[1]['n']}; "
                      f"top 5 {top5[0]['found']}/{top5[0]['n']} → {top5[1]['found']}/{top5[1]['n']}")
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    """The screened answers as docs/figures.md shows them: the readers' held-out findability baseline → winner with
    the definition tokens, then what screening made of each answer's candidates."""
    readers = [m for m in OFFLINE_MODELS if any(m in r["findability"] for r in rows)]
    lines = ["| server | " + " | ".join(f"{m} top 1 | {m} top 5" for m in readers) + " | definition tokens |",
             "|---" * (2 + 2 * len(readers)) + "|"]
    for r in rows:
        cells = [cell for m in readers for cell in _cells(r["findability"].get(m))]
        lines.append(f"| {r['server']} | {' | '.join(cells)} | {r['tokens']:,} → {r['winner_tokens']:,} |")
    lines += ["", "| server | passed whole / trimmed / rejected | winner names tools it lacks | gate (held-out) |",
              "|---|---|---|---|"]
    lines += [f"| {r['server']} | {r['passed_whole']} / {r['trimmed']} / {r['rejected']} | "
              f"{', '.join(r['winner_unexposed_names']) or '–'} | {_gate(r)} |" for r in rows]
    return "\n".join(lines)


def _gate(row: dict[str, Any]) -> str:
    """ "passed (reader:bm25: no regression; reader:embed: inconclusive: …)" """
    verdicts = "; ".join(f"{model}: {why}" for model, why in row["verdicts"].items())
    return f"{'passed' if row['gate'] else 'FAILED'} ({verdicts})"


def _cells(finding: str | None) -> list[str]:
    """A reader's "top 1 a → b; top 5 c → d" (`findability`) as its two cells; two blanks when it is missing."""
    return [part.split(" ", 2)[2] for part in finding.split("; ")] if finding else ["", ""]


def leakage_flags(server: Server, recorded: list[dict[str, Any]], catalog: Catalog) -> dict[str, Any]:
    """How many of the answers' texts the leakage guard flags against the server's train prompts and answers (with
    the server's own text as known, as screening judges them), and what it flagged."""
    train = load_tasks(server.tasks).split("train")
    prompts, answers, known = [t.prompt for t in train], [t.expect.answer for t in train], catalog_strings(catalog)
    texts = [text for answer in recorded for c in answer["candidates"] for t in c["tools"]
             for text in (t.get("description"), *(t.get("parameters") or {}).values()) if text]
    flagged = [found for text in texts if (found := leaked_phrases(text, prompts, known_text=known, answers=answers))]
    return {"texts": len(texts), "flagged": len(flagged), "phrases": sorted({p for f in flagged for p in f})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("capture", "screen"):
        one = sub.add_parser(name)
        one.add_argument("--only", default="", help="comma-separated server names (e.g. support,published/time)")
        one.add_argument("--json", action="store_true")
        one.add_argument("--overlays", type=Path, help="screen: keep each winner's overlay.json in this folder")
        one.add_argument("--goal", choices=("accuracy", "shrink"), default="accuracy",
                         help="shrink: a shrink run's request and answer (<server>.shrink.json)")
        if name == "screen":
            add_write_option(one)
    answer = sub.add_parser("answer")
    answer.add_argument("server")
    answer.add_argument("file", type=Path)
    answer.add_argument("--answered-by", default="a Claude model (a helper session given only the request)")
    answer.add_argument("--goal", choices=("accuracy", "shrink"), default="accuracy")
    answer.add_argument("--group", type=int, help="the request's group (from 1) when the proposal was split")
    args = parser.parse_args()
    global GOAL
    GOAL = getattr(args, "goal", "accuracy")
    everything = servers()
    if args.command == "answer":
        [server] = [s for s in everything if s.name == args.server]
        command_answer(server, args.file, args.answered_by, args.group)
        return
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    refuse_only(parser, getattr(args, "write", None), wanted)
    chosen = [s for s in everything if not wanted or s.name in wanted]
    if args.command == "capture":
        command_capture(chosen)
        return
    rows = [screen(s, args.overlays) for s in chosen if fixture_path(s).exists() and answered(load(s))]
    write(args.write, "real-proposals" if GOAL == "accuracy" else "real-proposals-shrink", markdown(rows))
    print(json.dumps(rows, indent=1) if args.json else "\n".join(json.dumps(r) for r in rows))


if __name__ == "__main__":
    main()

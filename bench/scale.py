"""Benchmark: how one optimize round scales with the number of tools — measured side by side in one run.

For each N (default 10, 50, 150) the synthetic server of bench/scale_server.py (N tools in families × verbs, thin
definitions, about two tasks per tool, two thirds train) is optimized for one round, in-process with `run_optimize`,
two ways:

- offline: `--models sim:lexical,sim:skim --proposer rules` — the simulated agents are test doubles whose calls and
  validation errors give the rules proposer something to write, so a search happens; what they pass is no quality
  figure and is not printed;
- Claude path: the same agents, `--proposer claude-opus-5-5` through the local fake Messages API
  (tests/fakes/anthropic_api.py, in this process, on 127.0.0.1). The fake answers the proposer's forced
  `submit_candidates` call with one candidate that gives every tool of the request's tool enum a plain description,
  and records each proposer request: its size in tokens (`optimizer.text.tokens.estimate_tokens` on the compact JSON of
  system + messages + tools) and how many were sent.

Per run: wall time, the harness process's CPU time (steadier than the clock on a shared machine), peak memory
(tracemalloc's peak during the loop and while writing the outputs, and the growth of the process's max RSS,
`ru_maxrss`, over the run), episodes run, trials (summary["rounds"]), definition tokens, and the time of each stage
of the job (from `on_stage`) and of some steps inside them (evidence, proposing, screening, the final screen of the
search's candidates, the outputs; timed by wrapping those functions in the child process only). Every run is made
in a fresh child process (`--child`) that imports every module of the package first, so the max RSS, tracemalloc
and the process-wide caches start from the same state for every N. Wall time, CPU and RSS are measured in runs of
their own, one at a time, without tracemalloc (which slows Python down about four times); tracemalloc's peak comes
from a second run of each (the two paths of an N side by side, one per core: only their memory is read).
`--trace same` measures all in one run, `--trace off` leaves tracemalloc out.

Printed: one markdown table with a row per N and both paths; per-tool figures with their ratios between sizes and
the cost of each tool added between consecutive sizes (so that fixed start-up costs cancel out); and where the time
goes per stage. Defaults keep the whole benchmark to about 5-6 minutes on the 2-core machine: --trials 6 (optimize's
default is 12) and --heldout-candidates 1 (default 5).

The scale table of docs/figures.md is this script's output (`--write docs/figures.md` rewrites it; refused with
other --sizes or --paths than the defaults, which would replace the full table with part of it).

    python bench/scale.py [--sizes 10,50,150] [--trials 6] [--heldout-candidates 1] [--trace separate|same|off]
                          [--paths offline,claude] [--json | --json-file FILE] [--write docs/figures.md]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from figures import add_write_option, write  # noqa: E402
from scale_server import write_tasks  # noqa: E402

AGENTS = ("sim:lexical", "sim:skim")
PROPOSER = "claude-opus-5-5"
KEY = "sk-ant-bench-not-a-real-key"
PATHS = ("offline", "claude")


# --- the fake proposer --------------------------------------------------------------------------------

PLAIN = {
    "get": "Looks up a single {noun} by its id.",
    "list": "Lists the {noun} that have a given status.",
    "search": "Finds {noun} by the name of the person they belong to.",
    "create": "Creates a {noun} record for a person on a given date.",
    "update": "Changes the status of an existing {noun}.",
    "cancel": "Cancels an existing {noun}.",
}


def plain_description(tool: str) -> str:
    verb, _, rest = tool.partition("_")
    return PLAIN.get(verb, "Works on {noun}.").format(noun=rest.replace("_", " "))


class PlainProposer:
    """The fake API's policy: the proposer's forced submit_candidates call gets one candidate rewriting every tool the
    request's enum lists with a plain description; each such request is measured. Nothing else may call it (the
    agents are the simulated ones)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        from fakes.anthropic_api import tool_use_reply
        from fakes.recorded_proposals import is_proposer_request, submitted_tools

        from optimizer.propose.claude_reply import TOOL_NAME
        from optimizer.text.tokens import estimate_tokens

        if not is_proposer_request(request):
            raise RuntimeError("only the proposer is expected to call this fake")
        schema = request["tools"][0]["input_schema"]["properties"]["candidates"]
        names = sorted(submitted_tools(request))
        answer = {"candidates": [{"rationale": "Plain descriptions for every tool.", "namespace": {"scheme": "none"},
                                  "tools": [{"tool": name, "description": plain_description(name)}
                                            for name in names]}]}

        def tokens(value: Any) -> int:
            return estimate_tokens(json.dumps(value, separators=(",", ":"), ensure_ascii=False))

        parts = {key: request.get(key) for key in ("system", "messages", "tools")}
        text = "".join(block.get("text", "") for m in request.get("messages", []) if isinstance(m.get("content"), list)
                       for block in m["content"] if isinstance(block, dict))
        start = text.find('<untrusted source="catalog">')
        catalog = text[start:text.find("</untrusted>", start)] if start >= 0 else ""
        self.requests.append({"tokens": tokens(parts), "bytes": len(json.dumps(parts, separators=(",", ":"))),
                              "system_tokens": tokens(parts["system"]), "messages_tokens": tokens(parts["messages"]),
                              "tools_tokens": tokens(parts["tools"]), "catalog_tokens": estimate_tokens(catalog),
                              "enum": len(names),
                              "max_items": schema.get("maxItems"), "reply_tokens": tokens(answer)})
        return tool_use_reply(TOOL_NAME, answer)


# --- one measured run (in a child process) ----------------------------------------------------------


def timed_parts() -> dict[str, float]:
    """Wrap some steps of the job (in this child process only) to time them: evidence, proposing, screening, the
    final screen and writing the outputs. Returns the dict the seconds accumulate in."""
    from optimizer.optimize import job
    from optimizer.optimize.screening import Screen

    spent: dict[str, float] = {}

    def sync(owner: Any, name: str, key: str) -> None:
        original = getattr(owner, name)

        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - t
        setattr(owner, name, wrapper)

    def coroutine(owner: Any, name: str, key: str) -> None:
        original = getattr(owner, name)

        async def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return await original(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - t
        setattr(owner, name, wrapper)

    sync(job, "evidence_for", "evidence")
    coroutine(job, "propose_cached", "propose")
    coroutine(job, "repair_round", "screening repair")
    sync(Screen, "screen", "screen")
    sync(Screen, "shippable", "final screen")
    sync(job, "write_outputs", "outputs")
    writing = job.write_outputs

    def outputs(*a: Any, **k: Any) -> Any:  # tracemalloc's peak before the outputs, then the outputs' own
        if tracemalloc.is_tracing():
            spent["loop_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.reset_peak()
        return writing(*a, **k)
    job.write_outputs = outputs  # type: ignore[assignment]
    return spent


LAZY = ("optuna.storages", "sqlalchemy.dialects.sqlite", "alembic.command", "alembic.migration", "mako.template",
        "plotly.graph_objects", "plotly.io", "plotly.offline", "pygments.lexers", "pygments.formatters", "numpy")
"""What a run imports lazily (found by comparing sys.modules before and after one)."""


def preload() -> None:
    """Import every module of the package (and through them optuna, plotly, the anthropic SDK, mcp) before the
    baseline: the run imports some of them lazily, a one-off cost the same at every N that would hide how the run's
    own memory grows."""
    import importlib
    import pkgutil

    import optimizer

    for module in pkgutil.walk_packages(optimizer.__path__, "optimizer."):
        importlib.import_module(module.name)
    for name in LAZY:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def child(path: str, n: int, tasks: Path, runs: Path, trials: int, heldout_candidates: int,
          trace: bool) -> dict[str, Any]:
    """One optimize round of the N-tool server, measured; runs in its own process (see the module docstring)."""
    preload()
    from fakes.anthropic_api import FakeAnthropicAPI

    from optimizer.optimize import OptimizeConfig, run_optimize

    config = OptimizeConfig(server=f"{sys.executable} {ROOT / 'bench' / 'scale_server.py'} --tools {n}",
                            tasks=str(tasks), models=AGENTS, rounds=1, trials=trials,
                            heldout_candidates=heldout_candidates,
                            proposer=PROPOSER if path == "claude" else "rules")
    policy = PlainProposer()
    api = FakeAnthropicAPI(policy).start() if path == "claude" else None
    if api is not None:
        os.environ.update({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
    stages: list[tuple[str, float]] = []

    def on_stage(label: str, _total: int | None) -> None:
        stages.append((label, time.perf_counter()))

    inner = timed_parts()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss_before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    if trace:
        tracemalloc.start()
    started = time.perf_counter()
    try:
        summary = asyncio.run(run_optimize(config, runs_dir=runs, run_id=f"{path}-{n}", on_stage=on_stage))
    finally:
        if api is not None:
            api.stop()
    ended = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1] if trace else None
    tracemalloc.stop()
    loop_peak = inner.pop("loop_peak_mb", None)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss_after, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu_before
    stage_s: dict[str, float] = {}
    for (label, at), (_, nxt) in zip([("setup", started), *stages], [*stages, ("end", ended)], strict=True):
        key = ("setup" if label == "setup" else "baseline+propose" if label.startswith("baseline")
               else "search" if "search" in label else "gate" if label.startswith("held-out gate")
               else "held-out candidates+outputs" if label.startswith("held-out:") else label)
        stage_s[key] = stage_s.get(key, 0.0) + nxt - at
    rounds = summary["rounds"]
    episodes = summary["episodes"]
    return {
        "path": path, "tools": n, "wall_s": ended - started, "cpu_s": cpu, "traced": trace,
        "tracemalloc_peak_mb": max(loop_peak or 0.0, peak / 2**20) if peak is not None else None,
        "loop_peak_mb": loop_peak, "outputs_peak_mb": peak / 2**20 if peak is not None else None,
        "rss_growth_mb": (rss_after - rss_before) / 1024, "rss_start_mb": rss_before / 1024,
        "rss_max_mb": rss_after / 1024,
        "episodes_run": episodes["run"], "episodes_cached": episodes["cached"],
        "trials": sum(r.get("trials", 0) for r in rounds), "pruned": sum(r.get("pruned", 0) for r in rounds),
        "proposed": sum(r.get("proposed", 0) for r in rounds),
        "rejected_edits": sum(1 for r in rounds for e in r.get("rejected", []) if "tool" in e),
        "rejected": [e for r in rounds for e in r.get("rejected", [])][:5],
        "improved": any(r.get("improved") for r in rounds), "stop_reason": summary.get("stop_reason"),
        "definition_tokens": summary["definition_tokens"]["baseline"],
        "winner_tokens": summary["definition_tokens"]["winner"],
        "tasks": summary["splits"],
        "stages_s": stage_s,
        "inner_s": inner,
        "proposer_requests": len(policy.requests) if path == "claude" else None,
        "proposer_request": policy.requests,
        "proposer_cost": (summary.get("cost") or {}).get("proposer"),
    }


def _command(path: str, n: int, tasks: Path, runs: Path, args: argparse.Namespace, trace: bool) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", path, "--n", str(n), "--tasks", str(tasks),
            "--runs", str(runs), "--trials", str(args.trials), "--heldout-candidates",
            str(args.heldout_candidates)] + (["--traced"] if trace else [])


def _result(path: str, n: int, returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    if returncode != 0:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-15:])
        return {"path": path, "tools": n, "error": f"exit {returncode}: {tail}"}
    return json.loads(stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run_child(path: str, n: int, tasks: Path, runs: Path, args: argparse.Namespace, trace: bool) -> dict[str, Any]:
    done = subprocess.run(_command(path, n, tasks, runs, args, trace), cwd=ROOT, capture_output=True, text=True,
                          check=False)
    return _result(path, n, done.returncode, done.stdout, done.stderr)


def run_children(jobs: list[tuple[str, int, Path, Path]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Traced runs, side by side (one per core): only their memory is read, never their clock."""
    procs = [(path, n, subprocess.Popen(_command(path, n, tasks, runs, args, True), cwd=ROOT, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE))
             for path, n, tasks, runs in jobs]
    out = []
    for path, n, proc in procs:
        stdout, stderr = proc.communicate()
        out.append(_result(path, n, proc.returncode, stdout, stderr))
    return out


# --- the table -------------------------------------------------------------------------------------


def _f(value: Any, spec: str = ".1f") -> str:
    return "–" if value is None else format(value, spec)


def _peak(r: dict[str, Any]) -> float | None:
    value = r.get("tracemalloc_peak_mb")
    return float(value) if value is not None else None


def _request_tokens(r: dict[str, Any]) -> float | None:
    requests = r.get("proposer_request") or []
    return float(requests[0]["tokens"]) if requests else None


def _ms_per_episode(r: dict[str, Any]) -> float:
    return 1000 * float(r["wall_s"]) / max(1, int(r["episodes_run"]))


def table(rows: list[dict[str, Any]], sizes: list[int], args: argparse.Namespace) -> str:
    by = {(r["path"], r["tools"]): r for r in rows}
    clock = {"separate": "wall time and RSS from runs without tracemalloc; tracemalloc's peak from a second run each",
             "same": "wall time measured with tracemalloc on (about 4x slower)", "off": "no tracemalloc"}[args.trace]
    clock += (f"; CPU = the harness process's own (user + system; servers not counted); load average "
              f"{args.load[0]:.1f} at the start, {args.load[1]:.1f} at the end (2 cores)")
    clock += ("; peak = tracemalloc's peak during the loop (until the outputs), then while writing the outputs "
              "(report.md/.html, patch, overlay)")
    head = (f"one optimize round per N (--rounds 1 --trials {args.trials} --heldout-candidates "
            f"{args.heldout_candidates}, other settings default); agents sim:lexical, sim:skim (test doubles); "
            f"offline = rules proposer, Claude = {PROPOSER} through the fake Messages API; every run in a fresh "
            f"process; {clock}")
    cells = ["wall s", "CPU s", "peak MB: loop / outputs", "RSS growth MB", "episodes", "trials (pruned)"]
    names = {"offline": "offline", "claude": "Claude"}
    lines = [head, "",
             "| tools | tasks train/held-out | definition tokens | "
             + " | ".join(f"{names[p]} {c}" for p in args.paths for c in cells)
             + (" | proposer requests | request tokens (catalog part) | reply tokens |" if "claude" in args.paths
                else " |"),
             "|---|---|---|" + "---|" * (len(cells) * len(args.paths) + 3 * ("claude" in args.paths))]
    for n in sizes:
        row = [str(n)]
        first = next((by[(p, n)] for p in args.paths if (p, n) in by and "error" not in by[(p, n)]), None)
        row += ([f"{first['tasks'].get('train', 0)}/{first['tasks'].get('heldout', 0)}",
                 f"{first['definition_tokens']:,}"] if first else ["", ""])
        for path in args.paths:
            r = by.get((path, n))
            if r is None or "error" in r:
                why = (r or {}).get("error", "not run").splitlines()[-1][:80]
                row += [f"FAILED: {why}"] + [""] * (len(cells) - 1)
                continue
            peaks = ("failed" if r.get("traced_error") else
                     f"{_f(r.get('loop_peak_mb'), '.0f')} / {_f(r.get('outputs_peak_mb'), '.0f')}")
            row += [f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}", peaks, f"{r['rss_growth_mb']:.0f}",
                    f"{r['episodes_run']:,}", f"{r['trials']} ({r['pruned']})"]
        if "claude" in args.paths:
            r = by.get(("claude", n))
            requests = (r or {}).get("proposer_request") or []
            row += [str(len(requests)) if r and "error" not in r else "",
                    " + ".join(f"{q['tokens']:,} ({q['catalog_tokens']:,})" for q in requests) or "–",
                    " + ".join(f"{q['reply_tokens']:,}" for q in requests) or "–"]
        lines.append("| " + " | ".join(row) + " |")
    failed = [f"{r['path']} N={r['tools']}: {r.get('error') or r.get('traced_error')}" for r in rows
              if r.get("error") or r.get("traced_error")]
    lines += [f"\nfailed: {line}" for line in failed]
    lines += ["", ratio_table(by, sizes, args.paths), "", stage_table(by, sizes, args.paths)]
    return "\n".join(lines)


MEASURES: list[tuple[str, Any, bool]] = [
    ("wall s per tool", lambda r: float(r["wall_s"]), True),
    ("harness CPU s per tool", lambda r: float(r["cpu_s"]), True),
    ("tracemalloc peak MB per tool", _peak, True),
    ("tracemalloc peak before the outputs MB per tool", lambda r: r.get("loop_peak_mb"), True),
    ("max RSS growth MB per tool", lambda r: float(r["rss_growth_mb"]), True),
    ("episodes run per tool", lambda r: float(r["episodes_run"]), True),
    ("wall ms per episode", _ms_per_episode, False),
    ("proposer request tokens per tool", _request_tokens, True),
]
"""(label, figure of a row, divided by the number of tools)"""


def _ratio(before: float | None, after: float | None) -> float | None:
    return after / before if before and after is not None else None


def ratio_table(by: dict[tuple[str, int], dict[str, Any]], sizes: list[int], paths: list[str]) -> str:
    """Per-tool figures and their ratios between sizes (1.00: linear in N, above it faster), and the cost of each
    tool added between consecutive sizes (what a fixed start-up cost does not blur) with the ratio of the last such
    slope to the first (1.00: linear)."""
    pairs = [(a, b) for i, a in enumerate(sizes) for b in sizes[i + 1:]]
    steps = list(zip(sizes, sizes[1:], strict=False))
    lines = ["per tool at each N, the ratio of those per-tool figures between sizes (1.00 = grows linearly with N, "
             "above 1 = faster than linear), and the cost of each tool added between consecutive sizes with the ratio "
             "of the last such slope to the first (1.00 = linear; a fixed start-up cost cancels out)", "",
             "| path | figure | " + " | ".join(f"N={n}" for n in sizes) + " | "
             + " | ".join(f"ratio {b}/{a}" for a, b in pairs) + " | "
             + " | ".join(f"per added tool {a}→{b}" for a, b in steps) + " | slope ratio |",
             "|---|---|" + "---|" * (len(sizes) + len(pairs) + len(steps) + 1)]
    for path in paths:
        for label, figure, per_tool in MEASURES:
            if label.startswith("proposer") and path != "claude":
                continue
            raw: dict[int, float | None] = {}
            for n in sizes:
                r = by.get((path, n))
                raw[n] = figure(r) if r is not None and "error" not in r else None
            per = {n: (v / n if v is not None and per_tool else v) for n, v in raw.items()}
            ratios = [_ratio(per[a], per[b]) for a, b in pairs]
            slopes = [(raw[b] - raw[a]) / (b - a) if per_tool and raw[a] is not None and raw[b] is not None else None
                      for a, b in steps]  # type: ignore[operator]
            spec = (".2f" if label.startswith("wall ms") else ".1f" if label.startswith(("episodes", "proposer"))
                    else ".3f")
            lines.append(f"| {path} | {label} | " + " | ".join(_f(per[n], spec) for n in sizes) + " | "
                         + " | ".join(_f(x, ".2f") for x in ratios) + " | "
                         + " | ".join(_f(x, spec) for x in slopes) + " | "
                         + _f(_ratio(slopes[0], slopes[-1]) if len(slopes) > 1 else None, ".2f") + " |")
    return "\n".join(lines)


def stage_table(by: dict[tuple[str, int], dict[str, Any]], sizes: list[int], paths: list[str]) -> str:
    """Where the wall time goes: the job's stages (from `on_stage`), then some steps inside them (seconds)."""
    names: list[str] = []
    inner: list[str] = []
    for r in by.values():
        names += [k for k in r.get("stages_s", {}) if k not in names]
        inner += [k for k in r.get("inner_s", {}) if k not in inner]
    lines = ["| tools | path | " + " | ".join(names) + " | " + " | ".join(f"of which {k}" for k in inner) + " |",
             "|---|---|" + "---|" * (len(names) + len(inner))]
    for n in sizes:
        for path in paths:
            r = by.get((path, n))
            if r is None or "error" in r:
                continue
            lines.append(f"| {n} | {path} | " + " | ".join(_f(r["stages_s"].get(k)) for k in names) + " | "
                         + " | ".join(_f(r["inner_s"].get(k), ".2f") for k in inner) + " |")
    return ("where the time goes (s per stage of the job, in the timed run; setup = opening the run and the server "
            "pool; the last column group times steps inside the stages)\n\n" + "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,150", help="numbers of tools, comma-separated")
    parser.add_argument("--paths", default="offline,claude", help="offline, claude or both")
    parser.add_argument("--trials", type=int, default=6, help="search trials per round (optimize's default is 12)")
    parser.add_argument("--heldout-candidates", type=int, default=1,
                        help="candidates scored on held-out after the gate (optimize's default is 5)")
    parser.add_argument("--trace", choices=("separate", "same", "off"), default="separate")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON instead of the table")
    parser.add_argument("--json-file", type=Path, help="also write the measurements as JSON to this file")
    add_write_option(parser)
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tasks", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.n, args.tasks, args.runs, args.trials, args.heldout_candidates,
                               args.traced)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.paths = [p for p in (s.strip() for s in args.paths.split(",")) if p in PATHS]
    if args.write and (sizes != [10, 50, 150] or args.paths != list(PATHS)):
        parser.error("--write refreshes the whole table: run it with the default --sizes and --paths")
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    started = time.perf_counter()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tasks = {n: write_tasks(Path(tmp) / f"tasks-{n}", n).parent for n in sizes}
        for n in sizes:  # the timed runs, one at a time
            for path in args.paths:
                row = run_child(path, n, tasks[n], Path(tmp) / f"runs-{path}-{n}", args, trace=args.trace == "same")
                rows[(path, n)] = row
                print(f"  N={n} {path}: " + (f"{row['wall_s']:.1f} s" if "error" not in row else "FAILED"),
                      file=sys.stderr, flush=True)
        if args.trace == "separate":  # tracemalloc's peak, from runs of their own (both paths of an N at once)
            for n in sizes:
                jobs = [(path, n, tasks[n], Path(tmp) / f"runs-{path}-{n}-traced") for path in args.paths]
                for traced in run_children(jobs, args):
                    row = rows[(traced["path"], n)]
                    for key in ("tracemalloc_peak_mb", "loop_peak_mb", "outputs_peak_mb"):
                        row[key] = traced.get(key)
                    row["traced_wall_s"] = traced.get("wall_s")
                    row["traced_rss_growth_mb"] = traced.get("rss_growth_mb")
                    if "error" in traced:
                        row["traced_error"] = traced["error"]
                print(f"  N={n} traced runs done", file=sys.stderr, flush=True)
    rows_list = list(rows.values())
    total = time.perf_counter() - started
    args.load = (load, os.getloadavg()[0])
    data = {"settings": {"sizes": sizes, "paths": args.paths, "trials": args.trials,
                         "heldout_candidates": args.heldout_candidates, "trace": args.trace},
            "load_average": list(args.load),
            "total_s": total, "rows": rows_list}
    if args.json_file:
        args.json_file.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(table(rows_list, sizes, args))
        print(f"\nwhole benchmark: {total:.0f} s")
    write(args.write, "scale", table(rows_list, sizes, args))


if __name__ == "__main__":
    main()

"""The cost estimate on the command line: printed before a paid run's first request, `--dry-run` (the plan and the
estimate, nothing spent), and the confirmation a run asks for when the estimate's upper end passes `--confirm-usd`
(an interactive run asks; any other stops with exit 2 unless `--max-usd` bounds the spend)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.cost.estimate import Estimate, tokens_range, usd_range
from optimizer.run.config import EvalConfig, RunError


class DryRun(Exception):  # noqa: N818 - a stop on request, not an error
    """--dry-run: the estimate is made; stop before anything is spent."""

    def __init__(self, estimate: Estimate, config: EvalConfig) -> None:
        super().__init__("dry run")
        self.estimate, self.config = estimate, config


def on_estimate(console: Console, *, dry_run: bool, as_json: bool,
                interactive: bool | None = None) -> Callable[[Estimate, float, EvalConfig], None]:
    """The callback a run calls with its estimate, what it has already spent (on resume) and its settings, before
    its first paid request: print it, then stop for --dry-run, or ask or refuse when it may pass --confirm-usd."""
    asks = sys.stdin.isatty() if interactive is None else interactive

    def announce(estimate: Estimate, spent: float, config: EvalConfig) -> None:
        if dry_run:
            raise DryRun(estimate, config)
        if not pays(config, estimate):
            return
        if not as_json or console.is_terminal:
            print_estimate(console, estimate, spent=spent)
        high = estimate.total()[1] - spent
        if config.max_usd is not None or high <= config.confirm_usd:
            return
        limit = f"{high:.2f}"
        if asks:
            if typer.confirm(f"This run may cost up to USD {limit} (over --confirm-usd {config.confirm_usd:g}). "
                             "Continue?", default=False, err=True):
                return
            raise RunError("stopped before spending anything (not confirmed)")
        raise RunError(f"this run may cost up to USD {limit}, over --confirm-usd {config.confirm_usd:g}, and nobody "
                       f"is here to confirm it: add --max-usd {limit} (the run stops cleanly before passing it), or "
                       "raise confirm_usd (--confirm-usd, or [tool.optimizer] in pyproject.toml); --dry-run shows "
                       "the plan")

    return announce


def pays(config: EvalConfig, estimate: Estimate) -> bool:
    """Whether the run sends paid requests: some model is priced or unknown to the price table, and no recording
    answers it."""
    return not config.replay and bool(estimate.costs)


def print_estimate(console: Console, estimate: Estimate, *, spent: float = 0.0) -> None:
    """The estimate as a table per model, the totals and where the figures come from."""
    episodes = estimate.plan.episodes()
    played = f", {episodes[0]:,} to {episodes[1]:,} episodes" if estimate.plan.phases else ""
    table = Table(title=f"cost estimate — {estimate.plan.command}{played}")
    for column in ("model", "role", "requests", "input tokens", "output tokens", "USD", "USD, cached", "USD, batch"):
        table.add_column(column, justify="left" if column in ("model", "role") else "right")
    for cost in estimate.costs:
        table.add_row(escape(cost.model), cost.role, tokens_range(cost.requests), tokens_range(cost.input_tokens),
                      tokens_range(cost.output_tokens), _usd(cost.plain), _usd(cost.cached),
                      _usd(cost.batch) if cost.role == "agent" else "–")
    console.print(table)
    console.print(f"estimate: {usd_range(estimate.total())} as sent; {usd_range(estimate.total('cached'))} with prompt "
                  f"caching; {usd_range(estimate.total('batch'))} with --batch"
                  + (f"; USD {spent:.2f} already spent" if spent else ""), soft_wrap=True)
    for phase in estimate.plan.phases:
        console.print(f"  {escape(phase.name)}: {phase.episodes[0]:,} to {phase.episodes[1]:,} episodes per model",
                      soft_wrap=True)
    for note in estimate.plan.notes:
        console.print(f"  note: {escape(note)}", soft_wrap=True)
    if estimate.plan.phases:
        console.print(f"  per episode: {escape(estimate.shape.source)}", soft_wrap=True)
    if estimate.unpriced():
        console.print(f"  [yellow]no price for {escape(', '.join(estimate.unpriced()))}: counted in tokens, not "
                      "in USD (--prices adds one)[/]", soft_wrap=True)


def dry_run_exit(stop: DryRun, console: Console, *, as_json: bool) -> typer.Exit:
    """Print a --dry-run's plan and estimate (JSON with --json) and return the exit (0) to raise."""
    plan = stop.estimate.plan
    server = str(getattr(stop.config, "server", ""))
    details: dict[str, Any] = {"server": server, "tasks": dict(plan.tasks), "models": list(plan.agents),
                               "proposer": plan.proposer, "definition_tokens": stop.estimate.definition_tokens}
    if as_json:
        sys.stdout.write(json.dumps({"dry_run": True, **details, "estimate": stop.estimate.to_json()}, indent=2,
                                    sort_keys=True) + "\n")
        return typer.Exit(0)
    console.print(f"dry run of {plan.command}: {escape(server)}", soft_wrap=True)
    console.print("; ".join(part for part in (
        "tasks: " + ", ".join(f"{n} {split}" for split, n in plan.tasks) if plan.tasks else "",
        "models: " + escape(", ".join(plan.agents)) if plan.agents else "",
        f"proposer: {escape(plan.proposer)}" if plan.proposer else "",
        f"definitions: {stop.estimate.definition_tokens:,} tokens") if part), soft_wrap=True)
    if stop.estimate.costs:
        print_estimate(console, stop.estimate)
    else:
        console.print("cost: nothing to pay (offline models only)", soft_wrap=True)
    console.print("dry run: the server answered" + (" and the tasks check" if plan.tasks else "")
                  + "; nothing was sent to a model", soft_wrap=True)
    return typer.Exit(0)


def _usd(r: tuple[float, float] | None) -> str:
    return "no price" if r is None else f"{r[0]:,.2f} – {r[1]:,.2f}"

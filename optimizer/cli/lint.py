"""`optimizer lint`: static checks of a server's tool definitions, as a table, JSON or SARIF.

Exit codes: 0 done; 1 the server score is under --fail-under, or --against found a difference that is not a plain
text edit (nor allowed with --allow); 2 usage or operational error (a server that does
not start, a bad overlay, a bad definitions directory, an unwritable SARIF file)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from optimizer.cli.common import err, fail, out, parse_headers
from optimizer.definitions import Catalog, DefinitionError, ToolDef, apply
from optimizer.files.atomic import atomic_write
from optimizer.files.patch import load_definitions, load_overlay
from optimizer.files.pin import BLOCKING, KINDS, Difference, LockError, differences, load_lock
from optimizer.lint import DEFAULT_MAX_TOOLS, LintReport, lint, to_sarif
from optimizer.servers import ServerError, ServerSpec, list_tools_once

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}




def lint_command(
    server: Annotated[str | None, typer.Option("--server", help="MCP server: a command line run over stdio "
                                               "(\"python server.py\"), or an http(s)://…/mcp URL.")] = None,
    definitions: Annotated[Path | None, typer.Option("--definitions", help="A directory written by `optimizer "
                                                     "dump` (one <tool>.json per tool) instead of --server.")] = None,
    overlay: Annotated[Path | None, typer.Option("--overlay", help="Overlay JSON applied to the definitions "
                                                 "before linting.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
    sarif: Annotated[Path | None, typer.Option("--sarif", help="Also write a SARIF 2.1.0 log to this file.")] = None,
    fail_under: Annotated[float | None, typer.Option("--fail-under", min=0, max=100,
                                                     help="Exit 1 when the server score is below this.")] = None,
    max_tools: Annotated[int, typer.Option("--max-tools", min=1, help="More tools than this in one server is "
                                           "reported as overload.")] = DEFAULT_MAX_TOOLS,
    header: Annotated[list[str] | None, typer.Option("--header", help="HTTP header for URL servers, "
                                                     "'Name: value' (repeatable; never stored).")] = None,
    against: Annotated[Path | None, typer.Option("--against", help="A tools lock (`optimizer pin`): classify every "
                                                 "difference from it; exit 1 on any but plain text edits.")] = None,
    allow: Annotated[str | None, typer.Option("--allow", help="Comma-separated difference kinds that do not fail "
                                              f"--against ({', '.join(sorted(BLOCKING))}).")] = None,
) -> None:
    """Check tool definitions without calling a model: trigger sentence, boundaries, parameters, returns,
    mechanics, annotations, names, size, overlap and overload, with a 0-100 score per tool and per server."""
    if (server is None) == (definitions is None):
        raise fail("give exactly one of --server CMD|URL or --definitions DIR")
    allowed = {k.strip() for k in (allow or "").split(",") if k.strip()}
    if allowed - set(KINDS):
        raise fail(f"--allow: unknown kind(s) {', '.join(sorted(allowed - set(KINDS)))}; known: {', '.join(KINDS)}")
    headers = parse_headers(header)
    files: list[str] = []
    try:
        if definitions is not None:
            catalog, files = _read_definitions(definitions)
        else:
            catalog = asyncio.run(list_tools_once(ServerSpec.parse(server or "", headers=headers)))
        if overlay is not None:
            catalog = Catalog(catalog.server_name, apply(catalog, load_overlay(overlay, catalog)).tools)
        artifacts = dict(zip(catalog.names, files, strict=False))  # by position: overlays may rename tools
        report = lint(catalog, max_tools=max_tools)
        changes = differences(load_lock(against), catalog) if against is not None else None
        if sarif is not None:
            _write(sarif, json.dumps(to_sarif(report, artifacts=artifacts), indent=2, ensure_ascii=False) + "\n")
    except (ServerError, DefinitionError, LockError) as exc:
        raise fail(str(exc)) from None
    blocking = [d for d in changes or [] if d.kind in BLOCKING - allowed]
    if as_json:
        data = report.to_json()
        if changes is not None:
            data["against"] = {"lock": str(against), "differences": [d.to_json() for d in changes],
                               "blocking": len(blocking)}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        print_report(out, report)
        if changes is not None:
            print_differences(out, changes, blocking)
    if sarif is not None:
        err.print(f"wrote SARIF to {sarif}")
    if fail_under is not None and report.score < fail_under:
        err.print(f"[bold red]lint score {report.score:g} is under --fail-under {fail_under:g}[/]")
        raise typer.Exit(1)
    if blocking:
        err.print(f"[bold red]{len(blocking)} difference(s) from {escape(str(against))} need review[/]")
        raise typer.Exit(1)


def print_differences(console: Console, changes: list[Difference], blocking: list[Difference]) -> None:
    """The differences from a lock, the ones that fail in red."""
    if not changes:
        console.print("[green]the definitions match the lock[/]")
        return
    table = Table(title="differences from the lock", title_justify="left")
    for column in ("tool", "kind", "detail"):
        table.add_column(column)
    for change in changes:
        style = "bold red" if change in blocking else ""
        table.add_row(escape(change.tool), change.kind, escape(change.detail), style=style)
    console.print(table)


def _read_definitions(directory: Path) -> tuple[Catalog, list[str]]:
    """The tools of a dump directory (sorted by file name, as `load_definitions` reads them) and, in the same
    order, each tool's file as a SARIF artifact URI (relative paths stay relative)."""
    tools: list[ToolDef] = load_definitions(directory)
    if not tools:
        raise DefinitionError(f"{directory}: no <tool>.json files (write them with `optimizer dump`)")
    files = [p.as_uri() if p.is_absolute() else p.as_posix() for p in sorted(directory.glob("*.json"))]
    return Catalog(server_name=directory.resolve().name, tools=tuple(tools)), files


def _write(path: Path, text: str) -> None:

    try:
        atomic_write(path, text)
    except OSError as exc:
        raise DefinitionError(f"cannot write {path}: {exc.strerror or exc}") from None


def print_report(console: Console, report: LintReport) -> None:
    """The default output: tools worst first with their findings, then server findings and totals."""
    table = Table(title=f"lint: {report.server_name}", title_justify="left", show_lines=False, expand=False)
    for column, kwargs in (("tool", {"no_wrap": True}), ("score", {"justify": "right"}),
                           ("tokens", {"justify": "right"}), ("severity", {}), ("rule", {"no_wrap": True}),
                           ("field", {}), ("message", {"ratio": 1})):
        table.add_column(column, **kwargs)
    for i, tool in enumerate(report.worst_first()):
        if i:
            table.add_section()
        rows = tool.findings or ()
        score = Text(str(tool.score), style=_score_style(tool.score))
        if not rows:
            table.add_row(tool.name, score, str(tool.tokens), Text("ok", style="green"), "", "", "")
        for j, finding in enumerate(rows):
            table.add_row(tool.name if j == 0 else "", score if j == 0 else "", str(tool.tokens) if j == 0 else "",
                          Text(finding.severity, style=STYLE[finding.severity]), finding.rule, finding.field,
                          finding.message)
    console.print(table)
    if report.server_findings:
        server = Table(title="server findings", title_justify="left")
        for column in ("severity", "rule", "field", "message"):
            server.add_column(column)
        for finding in report.server_findings:
            server.add_row(Text(finding.severity, style=STYLE[finding.severity]), finding.rule, finding.field,
                           finding.message)
        console.print(server)
    counts = [_plural(sum(1 for f in report.findings if f.severity == s), s) for s in ("error", "warning")]
    counts.append(f"{sum(1 for f in report.findings if f.severity == 'info')} info")
    console.print(
        Text.assemble("server score ", (f"{report.score:g}/100", f"bold {_score_style(report.score)}"),
                      f" · {_plural(len(report.tools), 'tool')} · ~{report.tokens:,} tokens (local estimate) · "
                      + ", ".join(counts))
    )


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _score_style(score: float) -> str:
    return "green" if score >= 80 else "yellow" if score >= 50 else "red"

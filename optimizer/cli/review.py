"""`optimizer review RUN_DIR`: show each tool the winner changed, decide per tool, write the accepted edits.

The comparison (rich renderables built here from `optimizer.review`'s data) shows old and new text side by
side with word-level highlights; with no colour, removed words read [-like this-] and added ones {+like this+}.

Decisions come from a person at a terminal (stdin and stdout both TTYs, no --accept/--reject) or from the
flags. Without a terminal and without flags it exits 2 and says which flags to pass. Exit codes: 0 done,
2 usage or operational error (not a run directory, missing files, unknown tool names, input ended early).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from optimizer.cli.common import err, fail, out
from optimizer.review import (
    BREAKING,
    Decisions,
    ReviewError,
    RunReview,
    ToolChange,
    decide_from_flags,
    decisions_json,
    load_review,
    write_reviewed,
)

FLAGS_HELP = ("decide with --accept all|TOOL,… and/or --reject TOOL,… (original tool names; tools named by neither "
              "are left out as undecided), or run it in a terminal to decide tool by tool")
PROMPT = "[a]ccept, [r]eject, [e]dit description, [s]kip? "


def review_command(
    run_dir: Annotated[Path, typer.Argument(help="A finished optimize run directory (runs/<id>).")],
    accept: Annotated[str | None, typer.Option(
        "--accept", help="Accept these tools' edits: 'all' or original tool names, comma-separated. "
        "Only --accept all (with no --reject) also keeps the winner's namespace scheme.")] = None,
    reject: Annotated[str | None, typer.Option(
        "--reject", help="Reject these tools' edits: original tool names, comma-separated.")] = None,
    source: Annotated[Path | None, typer.Option(
        "--source", help="The server's source directory: also write source.patch rewriting the description "
        "strings where they stand in the code.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print {accepted, rejected, skipped, edited, undecided, files, namespace, notes} as JSON "
        "on stdout.")] = False,
) -> None:
    """Review a finished optimize run tool by tool: old and new name, description and parameter
    descriptions side by side, lint before and after, and what the change did on the evals; then accept,
    reject, edit or skip each change and write reviewed-overlay.json and reviewed.patch into the run
    directory (plus source.patch with --source). Skipped and undecided tools are left out like rejected ones."""
    interactive = accept is None and reject is None and sys.stdin.isatty() and sys.stdout.isatty()
    try:
        review = load_review(run_dir)
    except ReviewError as exc:
        raise fail(str(exc)) from None
    if interactive:
        show_review(err if as_json else out, review, interactive=True)
        decisions = ask_decisions(err if as_json else out, review)
    elif accept is None and reject is None:
        raise fail(f"no terminal to ask in: {FLAGS_HELP}")
    else:
        try:
            decisions = decide_from_flags(review, accept, reject)
        except ReviewError as exc:
            raise fail(str(exc)) from None
        if not as_json:
            show_review(out, review, interactive=False)
    try:
        written = write_reviewed(review, decisions, source)
    except ReviewError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(decisions_json(decisions, review, written), indent=2, sort_keys=True) + "\n")
    else:
        print_result(out, review, decisions, written)


def show_review(console: Console, review: RunReview, *, interactive: bool) -> None:
    """The header and, when not asking tool by tool, every change (interactive mode shows each before its question)."""
    console.print(render_header(review))
    if not review.changes:
        console.print("The winner changes no tool definition.")
    if interactive:
        return
    markers = console.no_color or console.color_system is None
    for index, change in enumerate(review.changes, 1):
        console.print(render_change(change, index, len(review.changes), markers=markers))


def ask_decisions(console: Console, review: RunReview) -> Decisions:
    """Ask per tool until each has an answer; end of input exits 2 before anything is written."""
    decisions = Decisions()
    markers = console.no_color or console.color_system is None
    for index, change in enumerate(review.changes, 1):
        console.print(render_change(change, index, len(review.changes), markers=markers))
        while True:
            try:
                answer = console.input(Text(f"{change.original}: {PROMPT}")).strip().lower()[:1]
            except EOFError:
                raise fail("input ended before every tool was decided; nothing was written") from None
            if answer == "a":
                decisions.accepted[change.original] = change.edit
            elif answer == "r":
                decisions.rejected.append(change.original)
            elif answer == "s":
                decisions.skipped.append(change.original)
            elif answer == "e":
                text = edit_in_editor(console, change)
                if text is None:
                    continue
                decisions.accepted[change.original] = replace(change.edit, description=text)
                decisions.edited.append(change.original)
                console.print(Text("accepted with your description:\n").append(
                    word_diff(change.before.description, text, markers=markers)[1]))
            else:
                console.print("answer a, r, e or s")
                continue
            break
    return decisions


def edit_in_editor(console: Console, change: ToolChange) -> str | None:
    """Open $EDITOR (else $VISUAL, else vi) on a temporary file holding the proposed description; return the
    edited text without surrounding whitespace, or None (said on the console) when the editor fails or the
    text comes back empty."""
    command = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    with tempfile.TemporaryDirectory(prefix="optimizer-review-") as tmp:
        path = Path(tmp) / f"{change.original}.txt"
        path.write_text(change.proposed_description + "\n", encoding="utf-8")
        try:
            code = subprocess.run([*shlex.split(command), str(path)], check=False).returncode
        except OSError as exc:
            console.print(Text(f"cannot run the editor {command!r}: {exc}", style="red"))
            return None
        if code != 0:
            console.print(Text(f"the editor {command!r} exited with {code}; the description is unchanged", style="red"))
            return None
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            console.print(Text(f"cannot read the edited text back: {exc}", style="red"))
            return None
    if not text:
        console.print(Text("the description came back empty; choose again", style="red"))
        return None
    return text


def word_diff(old: str, new: str, *, markers: bool = False) -> tuple[Text, Text]:
    """Both texts with word-level highlights: removed words red and struck through on the old side, added words
    green on the new side. With `markers` (no colour), removed words read [-like this-] and added {+like this+}."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    left, right = Text(), Text()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append("".join(a[i1:i2]))
            right.append("".join(b[j1:j2]))
            continue
        removed, added = "".join(a[i1:i2]), "".join(b[j1:j2])
        if removed:
            left.append(f"[-{removed}-]" if markers else removed, style="red strike")
        if added:
            right.append(f"{{+{added}+}}" if markers else added, style="green")
    return left, right


def render_header(review: RunReview) -> RenderableType:
    """Run id, models, the gate, the namespace scheme and any notes."""
    summary, winner = review.summary, review.winner
    gate = summary.get("gate") or {}
    lines = [Text.assemble(("review ", "bold"), (str(summary.get("run_id", review.run_dir.name)), "bold"),
                           f" — {len(review.changes)} changed tool(s), models {', '.join(summary['models'])}"
                           + (" [OFFLINE]" if summary.get("offline") else "")),
             Text(f"gate: {'PASSED' if gate.get('passed') else 'FAILED'} (held-out, all changes together)")]
    if winner.scheme != "none":
        lines.append(Text(f"namespace scheme {winner.scheme} renames every tool — {BREAKING}; kept only with "
                          "--accept all", style="yellow"))
    lines += [Text(f"note: {note}", style="yellow") for note in review.notes]
    return Group(*lines)


def render_change(change: ToolChange, index: int, total: int, *, markers: bool = False) -> RenderableType:
    """One tool: name, description and parameters side by side with word highlights, lint, and eval effects."""
    table = Table(show_header=True, expand=True, show_lines=True)
    table.add_column("field", no_wrap=True, style="bold")
    table.add_column("before", ratio=1)
    table.add_column("after", ratio=1)
    name_before, name_after = _cells(change.before.name, change.after.name, markers)
    if change.renamed:
        name_after.append(f"\n{BREAKING}", style="bold red")
    table.add_row("name", name_before, name_after)
    if change.before.description != change.after.description:
        table.add_row("description", *_cells(change.before.description, change.after.description, markers))
    for path, old, new in change.parameter_changes():
        table.add_row(f"param {path}", *_cells(old, new, markers))
    if change.schema_dropped:
        table.add_row("schema", Text("as the server lists it"),
                      Text("lean, without " + ", ".join(change.schema_dropped)))
    delta = change.lint_after - change.lint_before
    lint_line = Text(f"lint score {change.lint_before} → {change.lint_after} ({delta:+d})")
    if change.fixed_rules:
        lint_line.append(f"; fixed: {', '.join(change.fixed_rules)}")
    if change.new_rules:
        lint_line.append(f"; new: {', '.join(change.new_rules)}", style="yellow")
    title = f"{change.original} ({index}/{total})" + (f" → {change.after.name}" if change.renamed else "")
    return Panel(Group(table, lint_line, _evals_table(change)), title=title, title_align="left")


def _cells(old: str, new: str, markers: bool) -> tuple[Text, Text]:
    """Before and after cells; an empty before reads "(none)"."""
    left, right = word_diff(old, new, markers=markers)
    return (left if old else Text("(none)", style="dim")), right


def _evals_table(change: ToolChange) -> RenderableType:
    if not change.evals:
        return Text("evals: no task expected or called this tool")
    table = Table(title="evals on tasks that expect or call this tool (whole winner vs baseline)",
                  title_justify="left", expand=True)
    for column in ("model", "split", "tasks", "before", "after"):
        table.add_column(column, no_wrap=True)
    table.add_column("flipped up", ratio=1, style="green")
    table.add_column("flipped down", ratio=1, style="red")
    for r in change.evals:
        cells = (r.model, r.split, str(r.tasks), f"{r.before}/{r.episodes}", f"{r.after}/{r.episodes}",
                 ", ".join(r.flipped_up) or "–", ", ".join(r.flipped_down) or "–")
        table.add_row(*(Text(c) for c in cells))
    return table


def print_result(console: Console, review: RunReview, decisions: Decisions, written: dict[str, Any]) -> None:
    """What was decided and where the files are."""
    accepted = [f"{n} (edited)" if n in decisions.edited else n for n in sorted(decisions.accepted)]
    console.print(f"accepted: {', '.join(accepted) or '–'}", soft_wrap=True, markup=False)
    console.print(f"rejected: {', '.join(decisions.rejected) or '–'}", soft_wrap=True, markup=False)
    for label, names in (("skipped", decisions.skipped), ("undecided", decisions.undecided)):
        if names:
            console.print(f"{label} (left out, like rejected): {', '.join(names)}", soft_wrap=True, markup=False)
    if review.winner.scheme != "none":
        kept = "kept" if decisions.keep_scheme else "not kept (only --accept all keeps it)"
        console.print(f"namespace scheme {review.winner.scheme}: {kept}", markup=False)
    files: dict[str, str] = written["files"]
    console.print(f"reviewed overlay: {files['overlay']}", soft_wrap=True, markup=False)
    console.print(f"reviewed patch: {files['patch']}", soft_wrap=True, markup=False)
    if "source_patch" in files:
        console.print(f"source patch: {files['source_patch']}", soft_wrap=True, markup=False)
        if written.get("unlocated"):
            console.print(Text.assemble(("not found in the source (edit by hand): ", "yellow"),
                                        ", ".join(written["unlocated"])), soft_wrap=True, markup=False)

"""What `optimizer regress` writes: the verdict as JSON, JUnit XML (one test case per model) and a Markdown
table for pull-request comments. Each writer takes the report `run_regress` returns."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from optimizer.files.atomic import atomic_write
from optimizer.gate import gate_rule, power_text, underpowered_note, verdict_text
from optimizer.html_report import Bar, Change, Page, render
from optimizer.models import banners
from optimizer.stats.call_change import call_change_text, calls_cell
from optimizer.text.tokens import points

SUFFIXES = (".json", ".junit.xml", ".md")


def write(path: Path, report: dict[str, Any]) -> None:
    """Write `report` in the format the file name asks for (.json, .junit.xml or .md)."""
    name = path.name.lower()
    if name.endswith(".junit.xml"):
        text = junit(report)
    elif name.endswith(".json"):
        text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    elif name.endswith(".md"):
        text = markdown(report)
    else:
        raise ValueError(f"-o {path}: the name must end in {', '.join(SUFFIXES)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


def check_outputs(paths: list[Path]) -> None:
    """Raise ValueError for an output name of no known format, before anything runs."""
    for path in paths:
        if not path.name.lower().endswith(SUFFIXES):
            raise ValueError(f"-o {path}: the name must end in {', '.join(SUFFIXES)}")


def junit(report: dict[str, Any]) -> str:
    """JUnit XML: a `regress` suite with one test case per model; a regression is a <failure> with the figures."""
    rows = report["results"]
    failures = sum(not r["passed"] for r in rows.values())  # an inconclusive model fails only with --fail-on
    suite = ET.Element("testsuite", name="optimizer regress", tests=str(len(rows)), failures=str(failures),
                       errors="0", skipped="0")
    for model, row in rows.items():
        case = ET.SubElement(suite, "testcase", classname="optimizer.regress", name=model)
        if not row["passed"]:
            failure = ET.SubElement(case, "failure", message=row["reason"], type="regression")
            failure.text = _figures(model, row)
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _figures(model, row)
    root = ET.Element("testsuites", name="optimizer regress", tests=str(len(rows)), failures=str(failures))
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _figures(model: str, row: dict[str, Any]) -> str:
    return (f"{model}: {row['before']:.1%} -> {row['after']:.1%} ({points(row['delta'], 1)}) "
            f"on {row['n_tasks']} tasks, "
            f"{row['method']} p={row['p_value']:.3g}, Holm p={row.get('p_holm', 1.0):.3g}; "
            f"flipped down: {', '.join(row['flipped_down']) or 'none'}; "
            f"flipped up: {', '.join(row['flipped_up']) or 'none'}; {row.get('reason', '')}; "
            f"verdict {row.get('verdict', 'pass')}; {power_text(row)}; {call_change_text(row.get('failed_calls'))}")


def markdown(report: dict[str, Any]) -> str:
    """A short Markdown verdict and table, for a pull-request comment or GITHUB_STEP_SUMMARY."""
    status = "PASSED" if report["passed"] else "REGRESSION"
    lines = [f"### optimizer regress: {status}", ""]
    for banner in banners(report):
        lines += [banner, ""]
    if report.get("context"):
        lines += [f"Beside {', '.join(report['context'])} (client naming: {report['client_naming']}).", ""]
    lines += [f"{report['split']} tasks, {report['epochs']} epoch(s); {gate_rule(report)}.",
              "",
              "| model | tasks | before | after | change | p (Holm) | can see | pass^k before → after | steps | "
              "tokens | failed calls / task | flipped down | flipped up | verdict |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model, r in report["results"].items():
        pass_k = r.get("pass_k") or {}
        steps, tokens = r.get("steps") or {}, r.get("tokens") or {}
        lines.append(
            f"| {model} | {r['n_tasks']} | {r['before']:.0%} | {r['after']:.0%} | {points(r['delta'])} | "
            f"{r.get('p_holm', 1.0):.3g} | {power_text(r)} | "
            f"{pass_k.get('before', 0):.0%} → {pass_k.get('after', 0):.0%} | "
            f"{steps.get('before', 0):g} → {steps.get('after', 0):g} | "
            f"{tokens.get('before', 0):,.0f} → {tokens.get('after', 0):,.0f} | {calls_cell(r.get('failed_calls'))} | "
            f"{', '.join(r['flipped_down']) or '–'} | {', '.join(r['flipped_up']) or '–'} | "
            f"{verdict_text(r)} |")
    note = underpowered_note(report["results"])
    return "\n".join(lines + ([note] if note else [])) + "\n"


def write_report_html(run_dir: Path, report: dict[str, Any], confusions: dict[str, dict[str, dict[str, int]]],
                      changes: list[Change]) -> Path:
    """runs/<id>/report.html for a regress run (`optimizer.html_report`): accuracy before and after per model with
    intervals, the gate with what it can see, the confusion heat maps, the candidate's changes, the flipped tasks."""
    rows = report["results"]
    bars = [Bar(model, report["split"], side, round(row[side] * row["n_tasks"]), row["n_tasks"])
            for model, row in rows.items() for side in ("before", "after")]
    facts = [f"baseline: {report['baseline']['definitions']} on {report['baseline']['server']}",
             f"candidate: {report['candidate']['definitions']} on {report['candidate']['server']}",
             f"{report['split']} tasks, {report['epochs']} epoch(s); models: {', '.join(report['models'])}",
             "verdict: " + ("PASSED" if report["passed"] else "REGRESSION")]
    banner = " ".join(banners(report)) or None
    page = Page(title=f"Regression check {report['run_id']}", offline=banner, facts=facts, bars=bars,
                gate_rule=gate_rule(report), gate_rows=rows, confusion=confusions, changes=changes,
                flipped={m: {"up": r["flipped_up"], "down": r["flipped_down"]} for m, r in rows.items()})
    path = run_dir / "report.html"
    atomic_write(path, render(page))
    return path

"""Review a finished optimize run tool by tool, and write the edits a person accepted.

Contracts:
- `load_review(run_dir)` reads only the run directory (summary.json, overlay.json, run.db): no server,
  no model. Every problem with the directory raises `ReviewError` naming the file.
- A *change* is one tool whose winning edit alters what a model reads, keyed by its ORIGINAL name, in
  catalog order. The winner's namespace scheme is not a per-tool change; it is reported apart.
- Lint scores are per tool, matched by catalog position: before = the original catalog, after = the
  whole winner (every edit and the scheme), i.e. exactly what the run evaluated.
- Eval effects come from the stored episodes of the baseline and winner candidate keys in summary.json,
  paired per (model, split, task, epoch). They measure the whole winner, not one tool's edit alone. A
  task counts for a tool when the task expects it or either episode called it.
- Decisions: `accepted` maps original names to the edit to keep (the person's text for `edited` ones,
  so `edited` is a subset of `accepted`); `rejected` were refused; `skipped` (a person's [s]kip) and
  `undecided` (named by neither --accept nor --reject) are left out exactly like rejected ones. The
  namespace scheme is kept only when everything is accepted with `--accept all` (no `--reject`): it
  renames every tool, so it is never kept otherwise (not even when a person accepts each tool in turn).
- `write_reviewed` writes reviewed-overlay.json and reviewed.patch (the format of winning.patch, against
  the original definitions) atomically, and source.patch with a source directory.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, ToolEdit, apply, parameter_paths
from optimizer.files.atomic import atomic_write
from optimizer.files.patch import definitions_diff, load_overlay, save_overlay
from optimizer.files.pin import write_lock
from optimizer.files.store import RunStore, StoredEpisode, StoreError
from optimizer.lint import lint, lint_tools
from optimizer.schema_metadata import lean_schema

REVIEWED_OVERLAY = "reviewed-overlay.json"
REVIEWED_PATCH = "reviewed.patch"
REVIEWED_LOCK = "reviewed.lock.json"
SOURCE_PATCH = "source.patch"
BREAKING = "BREAKING for clients that call the old name"
REQUIRED_FILES = ("summary.json", "overlay.json", "run.db")
SPLITS = ("train", "heldout")


class ReviewError(RuntimeError):
    """A run directory that cannot be reviewed, or decisions that cannot be applied; the message says why."""


@dataclass(frozen=True)
class EvalRow:
    """One model and split: tasks touching the tool, their episodes (tasks × epochs), passing episodes before and
    after, and the task ids that passed more often (up) or less often (down) after."""

    model: str
    split: str
    tasks: int
    episodes: int
    before: int
    after: int
    flipped_up: tuple[str, ...]
    flipped_down: tuple[str, ...]


@dataclass(frozen=True)
class ToolChange:
    """One changed tool: its original definition, the proposed one (edits only, no namespace), lint, evals."""

    original: str
    edit: ToolEdit
    before: ToolDef
    after: ToolDef
    lint_before: int
    lint_after: int
    fixed_rules: tuple[str, ...]
    new_rules: tuple[str, ...]
    evals: tuple[EvalRow, ...]

    @property
    def renamed(self) -> bool:
        return self.before.name != self.after.name

    @property
    def proposed_description(self) -> str:
        return self.after.description

    def parameter_changes(self) -> list[tuple[str, str, str]]:
        """(parameter path, old description, new description) for every parameter whose description changes."""
        old = {path: str(prop.get("description") or "") for path, prop in parameter_paths(self.before.input_schema)}
        new = {path: str(prop.get("description") or "") for path, prop in parameter_paths(self.after.input_schema)}
        return [(path, old.get(path, ""), text) for path, text in new.items() if text != old.get(path, "")]

    @property
    def schema_dropped(self) -> tuple[str, ...]:
        """What the edit's lean schema drops ("title at properties.limit", …); empty without one."""
        return lean_schema(self.before.name, dict(self.before.input_schema)).dropped if self.edit.lean_schema else ()


@dataclass(frozen=True)
class RunReview:
    """Everything shown for one run. `changes` are in catalog order; `notes` are caveats worth printing."""

    run_dir: Path
    summary: Mapping[str, Any]
    catalog: Catalog
    winner: Candidate
    changes: tuple[ToolChange, ...]
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [c.original for c in self.changes]

    def change(self, name: str) -> ToolChange:
        return next(c for c in self.changes if c.original == name)


@dataclass
class Decisions:
    """What the person decided; see the module docstring for how the lists relate."""

    accepted: dict[str, ToolEdit] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    keep_scheme: bool = False


# --- loading -----------------------------------------------------------------------------------------


def load_review(run_dir: Path) -> RunReview:
    """Read a finished optimize run and compute every changed tool's comparison. Raises ReviewError."""
    if not run_dir.is_dir():
        raise ReviewError(f"{run_dir} is not a run directory")
    missing = [name for name in REQUIRED_FILES if not (run_dir / name).is_file()]
    if missing:
        raise ReviewError(f"{run_dir} is not a finished optimize run: missing {', '.join(missing)}")
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        sides = {side: summary[side]["candidate"] for side in ("baseline", "winner")}
        models = list(summary["models"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ReviewError(f"{run_dir / 'summary.json'}: not an optimize summary ({exc})") from None
    try:
        store = RunStore.open_existing(run_dir.parent, run_dir.name)
        try:
            raw_catalog = store.get_meta("catalog")
            episodes = {side: list(store.episodes(candidate=key)) for side, key in sides.items()}
        finally:
            store.close()
    except (StoreError, sqlite3.Error, json.JSONDecodeError) as exc:
        raise ReviewError(f"{run_dir / 'run.db'}: cannot read the run's store ({exc})") from None
    try:
        tools = tuple(ToolDef.from_canonical(t) for t in raw_catalog or [])
        catalog = Catalog(server_name=_server_word(run_dir, tools), tools=tools)
    except (KeyError, TypeError, AttributeError, DefinitionError) as exc:
        raise ReviewError(f"{run_dir / 'run.db'}: the stored catalog is not tool definitions ({exc})") from None
    if not tools:
        raise ReviewError(f"{run_dir / 'run.db'} holds no catalog of the server's tools")
    try:
        winner = load_overlay(run_dir / "overlay.json", catalog)
    except DefinitionError as exc:
        raise ReviewError(str(exc)) from None
    notes = _episode_notes(summary, episodes)
    if winner.scheme != "none" and not winner.word and not catalog.server_name:
        notes.append("the namespace word is not in overlay.json and could not be read back from winning.patch; "
                     "with --accept all the reviewed files use 'server'")
    if winner.key != sides["winner"]:
        notes.append(f"overlay.json (candidate {winner.key}) is not the run's winner ({sides['winner']}); "
                     "the eval results shown are the winner's")
    changes = _changes(catalog, winner, episodes["baseline"], episodes["winner"], models)
    return RunReview(run_dir, summary, catalog, winner, tuple(changes), tuple(notes))


def _server_word(run_dir: Path, tools: tuple[ToolDef, ...]) -> str:
    """The server's name, which run.db does not store: the namespace word read back from winning.patch when the
    winner namespaced a tool without naming the word, else the name winner.lock.json records; '' when nothing
    tells."""
    try:
        raw = json.loads((run_dir / "overlay.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return ""  # load_overlay reports it
    namespace = raw.get("namespace") if isinstance(raw, dict) else None
    if not isinstance(namespace, dict) or namespace.get("word") or namespace.get("scheme", "none") == "none":
        return _locked_server(run_dir)
    edits = raw.get("tools") if isinstance(raw.get("tools"), dict) else {}
    patch = run_dir / "winning.patch"
    text = patch.read_text(encoding="utf-8") if patch.is_file() else ""
    names = {t.name for t in tools}
    renamed: list[tuple[str, str]] = re.findall(r"^diff --git a/(\S+)\.json b/(\S+)\.json$", text, flags=re.M)
    for old, new in renamed:
        listed = edits.get(old)
        edit = listed if isinstance(listed, dict) else {}
        base = (edit.get("name") or old) if old in names else None
        if base and namespace["scheme"] == "prefix" and new.endswith(f"_{base}"):
            return new[: -len(base) - 1]
        if base and namespace["scheme"] == "suffix" and new.startswith(f"{base}_"):
            return new[len(base) + 1:]
    return _locked_server(run_dir)


def _locked_server(run_dir: Path) -> str:
    """The server name winner.lock.json records ('' without one)."""
    try:
        locked = json.loads((run_dir / "winner.lock.json").read_text(encoding="utf-8")).get("server")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return ""
    return locked if isinstance(locked, str) else ""


def _episode_notes(summary: Mapping[str, Any], episodes: Mapping[str, list[StoredEpisode]]) -> list[str]:
    """Say so when the store holds fewer episodes under a candidate key than summary.json counted (the rest were
    cached under another candidate with identical exposed definitions)."""
    notes = []
    for side, eps in episodes.items():
        for split in SPLITS:
            for model, row in (summary[side].get(split) or {}).items():
                found = sum(1 for e in eps if e.model == model and e.split == split)
                if found < int(row.get("n") or 0):
                    notes.append(f"{side}: {found} of {row['n']} {model} {split} episodes are stored under its "
                                 "candidate key (the others were cached under a candidate with the same definitions); "
                                 "per-tool results use the ones found")
    return notes


def _changes(catalog: Catalog, winner: Candidate, base: list[StoredEpisode], win: list[StoredEpisode],
             models: list[str]) -> list[ToolChange]:
    proposed = apply(catalog, Candidate(edits=winner.edits)).tools
    lint_before = lint(catalog).tools
    lint_after = lint_tools(catalog.server_name, apply(catalog, winner).tools).tools
    pairs = _pairs(base, win)
    out = []
    for position, (before, after) in enumerate(zip(catalog.tools, proposed, strict=True)):
        if before.canonical() == after.canonical():
            continue
        old_rules = {f.rule for f in lint_before[position].findings}
        new_rules = {f.rule for f in lint_after[position].findings}
        out.append(ToolChange(
            original=before.name, edit=winner.edits.get(before.name, ToolEdit()), before=before, after=after,
            lint_before=lint_before[position].score, lint_after=lint_after[position].score,
            fixed_rules=tuple(sorted(old_rules - new_rules)), new_rules=tuple(sorted(new_rules - old_rules)),
            evals=tuple(_eval_rows(before.name, pairs, models))))
    return out


Pair = tuple[StoredEpisode, StoredEpisode]


def _pairs(base: Iterable[StoredEpisode], win: Iterable[StoredEpisode]) -> dict[tuple[str, str], list[Pair]]:
    """(model, split) -> baseline and winner episodes of the same task and epoch."""
    after = {(e.model, e.split, e.task_id, e.epoch): e for e in win}
    out: dict[tuple[str, str], list[Pair]] = {}
    for ep in base:
        other = after.get((ep.model, ep.split, ep.task_id, ep.epoch))
        if other is not None:
            out.setdefault((ep.model, ep.split), []).append((ep, other))
    return out


def _touches(ep: StoredEpisode, tool: str) -> bool:
    calls = ep.data.get("calls") or []
    return tool in (ep.data.get("expected_tools") or []) or any(c.get("original") == tool for c in calls)


def _eval_rows(tool: str, pairs: Mapping[tuple[str, str], list[Pair]], models: list[str]) -> list[EvalRow]:
    rows = []
    for model in models:
        for split in SPLITS:
            per_task: dict[str, list[int]] = {}
            for before, after in pairs.get((model, split), []):
                if _touches(before, tool) or _touches(after, tool):
                    counts = per_task.setdefault(before.task_id, [0, 0, 0])
                    counts[0] += before.passed
                    counts[1] += after.passed
                    counts[2] += 1
            if per_task:
                rows.append(EvalRow(
                    model, split, len(per_task), sum(c[2] for c in per_task.values()),
                    sum(c[0] for c in per_task.values()), sum(c[1] for c in per_task.values()),
                    tuple(sorted(t for t, c in per_task.items() if c[1] > c[0])),
                    tuple(sorted(t for t, c in per_task.items() if c[1] < c[0]))))
    return rows


# --- decisions and outputs -----------------------------------------------------------------------------


def parse_names(value: str | None, valid: list[str], option: str) -> list[str]:
    """A comma-separated option as tool names ('all' = every valid one). Raises ReviewError listing the valid
    names when one is unknown."""
    names = [n.strip() for n in (value or "").split(",") if n.strip()]
    if names == ["all"]:
        return list(valid)
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ReviewError(f"{option}: unknown tool(s) {', '.join(unknown)}; the changed tools (original names) "
                          f"are: {', '.join(valid) or '(none)'}")
    return names


def decide_from_flags(review: RunReview, accept: str | None, reject: str | None) -> Decisions:
    """Decisions from --accept all|TOOL,… and --reject TOOL,…; `--accept all --reject X` accepts all but X; tools
    named by neither are `undecided` (left out). Raises ReviewError for unknown names or a tool named by both."""
    rejected = parse_names(reject, review.names, "--reject")
    accept_all = (accept or "").strip() == "all"
    accepted = [n for n in review.names if n not in rejected] if accept_all else \
        parse_names(accept, review.names, "--accept")
    both = sorted(set(accepted) & set(rejected))
    if both:
        raise ReviewError(f"{', '.join(both)}: both accepted and rejected")
    return Decisions(
        accepted={n: review.change(n).edit for n in review.names if n in accepted},
        rejected=[n for n in review.names if n in rejected],
        undecided=[n for n in review.names if n not in accepted and n not in rejected],
        keep_scheme=accept_all and not rejected)


def reviewed_candidate(review: RunReview, decisions: Decisions) -> Candidate:
    """The winner cut down to the accepted edits (and its scheme only when `keep_scheme`). Raises ReviewError when
    the accepted edits do not apply on their own (e.g. a rename onto a name whose own rename was rejected)."""
    winner = review.winner
    scheme = winner.scheme if decisions.keep_scheme else "none"
    candidate = Candidate(edits=dict(decisions.accepted), scheme=scheme,
                          word=winner.word if scheme != "none" else None)
    try:
        apply(review.catalog, candidate)
    except DefinitionError as exc:
        raise ReviewError(f"the accepted edits do not fit together: {exc}; accept or reject those tools "
                          "together") from None
    return candidate


def write_reviewed(review: RunReview, decisions: Decisions, source: Path | None = None) -> dict[str, Any]:
    """Write reviewed-overlay.json, reviewed.patch, reviewed.lock.json (`optimizer pin`'s lock of the definitions
    the reviewed overlay exposes) and (with `source`) source.patch into the run directory.

    Returns {"files": {"overlay", "patch", "lock"[, "source_patch"]}: paths as strings, "unlocated": tools whose
    descriptions source_patch could not find in the source (only with `source`)}. Nothing is written when
    something fails first (ReviewError)."""
    candidate = reviewed_candidate(review, decisions)
    source_text, unlocated = None, None
    if source is not None:
        source_text, unlocated = _source_patch(source, review.catalog, candidate)
    files = {"overlay": review.run_dir / REVIEWED_OVERLAY, "patch": review.run_dir / REVIEWED_PATCH,
             "lock": review.run_dir / REVIEWED_LOCK}
    save_overlay(files["overlay"], candidate)
    atomic_write(files["patch"], definitions_diff(review.catalog, candidate))
    write_lock(files["lock"], Catalog(review.catalog.server_name, apply(review.catalog, candidate).tools))
    result: dict[str, Any] = {}
    if source_text is not None:
        files["source_patch"] = review.run_dir / SOURCE_PATCH
        atomic_write(files["source_patch"], source_text)
        result["unlocated"] = list(unlocated or [])
    return {"files": {k: str(v) for k, v in files.items()}, **result}


def _source_patch(source: Path, catalog: Catalog, candidate: Candidate) -> tuple[str, list[str]]:
    if not source.is_dir():
        raise ReviewError(f"--source {source}: not a directory")
    try:
        from optimizer.source import source_patch

        patch = source_patch(source, catalog, candidate)
    except ImportError as exc:
        raise ReviewError(f"--source needs optimizer.source, which cannot be imported here ({exc})") from None
    except (OSError, DefinitionError) as exc:
        raise ReviewError(f"--source {source}: {exc}") from None
    return patch.text, [str(t) for t in patch.unlocated]


def decisions_json(decisions: Decisions, review: RunReview, written: Mapping[str, Any]) -> dict[str, Any]:
    """The --json document: {accepted, rejected, skipped, edited, undecided, files, namespace, notes[, unlocated]}."""
    scheme = review.winner.scheme
    return {"accepted": sorted(decisions.accepted), "rejected": list(decisions.rejected),
            "skipped": list(decisions.skipped), "edited": list(decisions.edited),
            "undecided": list(decisions.undecided),
            "namespace": {"scheme": scheme, "kept": decisions.keep_scheme and scheme != "none"},
            "notes": list(review.notes), **written}

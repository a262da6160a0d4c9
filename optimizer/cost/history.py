"""Earlier runs of a server in a runs directory, for what they measured: the episode shape a cost estimate uses
(`optimizer.cost.estimate.shape_from_runs`) when the server has been run before with a model that takes turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from optimizer.cost.estimate import EpisodeShape, shape_from_runs
from optimizer.files.store import RunStore, StoreError
from optimizer.text.tokens import estimate_tokens

MAX_RUNS = 20
"""The most recent runs of the server read (by their directory's time)."""


def earlier_shape(runs_dir: Path, server: str, *, skip: str | None = None) -> EpisodeShape | None:
    """The shape measured by the most recent runs in `runs_dir` of the same server command or URL (not `skip`, the
    run being estimated), from their episodes with model turns and usage; None when there are none."""
    runs: list[dict[str, Any]] = []
    tokens: list[int] = []
    for directory in _recent(runs_dir):
        if directory.name == skip:
            continue
        found = _episodes_of(directory, server)
        if found is not None:
            runs.append({"episodes": found[0]})
            tokens.append(found[1])
    return shape_from_runs(runs, tokens) if runs else None


def _recent(runs_dir: Path) -> list[Path]:
    try:
        dirs = [d for d in runs_dir.iterdir() if (d / "run.db").is_file()]
    except OSError:
        return []
    return sorted(dirs, key=lambda d: d.stat().st_mtime, reverse=True)[:MAX_RUNS]


def _episodes_of(directory: Path, server: str) -> tuple[list[dict[str, Any]], int] | None:
    """The episodes (data) of a run of `server` that took model turns, and its catalog's tokens; None otherwise."""
    try:
        store = RunStore.open_existing(directory.parent, directory.name)
    except (StoreError, OSError):
        return None
    try:
        config = store.get_meta("config") or {}
        if config.get("server") != server:
            return None
        episodes = [e.data for e in store.episodes() if e.data.get("reading") is None and e.data.get("usage")]
        catalog = store.get_meta("catalog") or []
    except Exception:  # a run another version wrote, or a damaged one: it tells nothing here
        return None
    finally:
        store.close()
    if not episodes:
        return None
    sent = ({key: tool.get(key) for key in ("name", "description", "input_schema")} for tool in catalog)
    return episodes, sum(estimate_tokens(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in sent)

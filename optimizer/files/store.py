"""The run directory and its SQLite store.

Layout of `runs/<run-id>/`: `run.db` (episodes, faults, run metadata; later the optuna study),
`server.log`, `transcripts/*.jsonl`, and the reports each command writes. SQLite runs in WAL mode
with one transaction per finished episode, so a run killed at any point resumes without repeating
finished episodes. Credentials found in the environment are scrubbed from everything stored.
A write that fails for want of room (`no_room` says why) loses nothing committed before it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.definitions import digest
from optimizer.files.atomic import atomic_write
from optimizer.secrets import redact_text, secret_values

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    task_id TEXT NOT NULL,
    split TEXT NOT NULL,
    candidate TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    passed INTEGER NOT NULL,
    data TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_by_candidate ON episodes (candidate, model, split);
CREATE TABLE IF NOT EXISTS faults (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    task_id TEXT NOT NULL,
    error TEXT NOT NULL,
    created REAL NOT NULL
);
"""
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")
LOW_SPACE = 1 << 20
"""Free bytes below which a device counts as full when SQLite reports only "disk I/O error"."""


class StoreError(RuntimeError):
    """A run directory that cannot be created, found or resumed; the message says which and why."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def episode_key(
    *, model: str, settings: Mapping[str, Any], system_prompt: str, exposed_digest: str, task_digest: str, epoch: int
) -> str:
    """The cache key of DESIGN: model id and settings, system prompt, exposed definitions, task, epoch."""
    return digest(
        {"model": model, "settings": dict(settings), "system": digest(system_prompt),
         "tools": exposed_digest, "task": task_digest, "epoch": epoch}
    )


@dataclass(frozen=True)
class StoredEpisode:
    key: str
    model: str
    task_id: str
    split: str
    candidate: str
    epoch: int
    status: str
    passed: bool
    data: dict[str, Any]


class RunStore:
    """One run directory. Use `RunStore.create(...)` or `RunStore.open_existing(...)`."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.run_id = directory.name
        self._secrets = secret_values()
        self.db = sqlite3.connect(directory / "run.db", isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    @classmethod
    def create(cls, runs_dir: Path, run_id: str | None = None) -> RunStore:
        run_id = run_id or new_run_id()
        if not RUN_ID.match(run_id):
            raise StoreError(f"run id {run_id!r} may only use letters, digits, '.', '_' and '-'")
        directory = runs_dir / run_id
        if (directory / "run.db").exists():
            raise StoreError(f"run {run_id} already exists in {runs_dir}; use --resume {run_id} to continue it")
        try:
            (directory / "transcripts").mkdir(parents=True, exist_ok=True)
            return cls(directory)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot create the run directory {directory}: {no_room(exc, directory) or exc}") from None

    @classmethod
    def open_existing(cls, runs_dir: Path, run_id: str) -> RunStore:
        directory = runs_dir / run_id
        if not (directory / "run.db").exists():
            raise StoreError(f"there is no run {run_id} in {runs_dir} (looked for {directory / 'run.db'})")
        return cls(directory)

    def close(self) -> None:
        self.db.close()

    def count(self) -> int:
        """Episodes stored."""
        return int(self.db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    @property
    def server_log(self) -> Path:
        return self.dir / "server.log"

    # --- metadata ----------------------------------------------------------------------------------

    def set_meta(self, key: str, value: Any) -> None:
        text = redact_text(json.dumps(value, sort_keys=True), self._secrets)
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, text))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # --- episodes ----------------------------------------------------------------------------------

    def get(self, key: str) -> StoredEpisode | None:
        row = self.db.execute(
            "SELECT key, model, task_id, split, candidate, epoch, status, passed, data FROM episodes WHERE key = ?",
            (key,),
        ).fetchone()
        return _stored(row) if row else None

    def put(self, episode: StoredEpisode) -> None:
        """Store one finished episode in its own transaction."""
        data = redact_text(json.dumps(episode.data, sort_keys=True, ensure_ascii=False), self._secrets)
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT OR REPLACE INTO episodes (key, model, task_id, split, candidate, epoch, status, passed,"
                " data, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (episode.key, episode.model, episode.task_id, episode.split, episode.candidate, episode.epoch,
                 episode.status, int(episode.passed), data, time.time()),
            )

    def record_fault(self, key: str, model: str, task_id: str, error: str) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT INTO faults (key, model, task_id, error, created) VALUES (?, ?, ?, ?, ?)",
                (key, model, task_id, redact_text(error, self._secrets), time.time()),
            )

    def episodes(self, candidate: str | None = None) -> Iterator[StoredEpisode]:
        query = "SELECT key, model, task_id, split, candidate, epoch, status, passed, data FROM episodes"
        args: tuple[Any, ...] = ()
        if candidate is not None:
            query += " WHERE candidate = ?"
            args = (candidate,)
        for row in self.db.execute(query + " ORDER BY candidate, model, split, task_id, epoch", args):
            yield _stored(row)

    def export_transcripts(self) -> list[Path]:
        """Write transcripts/<candidate>__<model>.jsonl from the store (one line per episode)."""
        groups: dict[tuple[str, str], list[str]] = {}
        for ep in self.episodes():
            line = json.dumps({"task_id": ep.task_id, "split": ep.split, "epoch": ep.epoch, "passed": ep.passed,
                               **ep.data}, sort_keys=True, ensure_ascii=False)
            groups.setdefault((ep.candidate, ep.model), []).append(line)
        paths = []
        for (candidate, model), lines in sorted(groups.items()):
            path = self.dir / "transcripts" / f"{candidate}__{_slug(model)}.jsonl"
            atomic_write(path, "\n".join(lines) + "\n")
            paths.append(path)
        return paths

    def write_json(self, name: str, value: Any) -> Path:
        path = self.dir / name
        atomic_write(path, redact_text(json.dumps(value, indent=2, sort_keys=True) + "\n", self._secrets))
        return path


def no_room(exc: BaseException, directory: Path) -> str | None:
    """"disk full (why)" when `exc` (or an error it came from) is a write that failed for want of room in `directory`:
    no space left, a quota, a file size limit (SQLite says "database or disk is full", or only "disk I/O error" when
    the device is nearly full or a file size limit is set); else None."""
    for error in _chain(exc):
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            limit = _size_limit() if error.errno == errno.EFBIG else None
            return f"disk full ({limit or os.strerror(error.errno)}{f': {error.filename}' if error.filename else ''})"
        name = str(getattr(error, "sqlite_errorname", ""))
        if name == "SQLITE_FULL":
            return f"disk full (SQLite: {error})"
        if name.startswith("SQLITE_IOERR"):
            try:
                stat = os.statvfs(directory)
                low = stat.f_bavail * stat.f_frsize < LOW_SPACE
            except OSError:
                low = False
            why = "no space left on the device" if low else _size_limit()
            if why:
                return f"disk full ({why}; SQLite: {error})"
    return None


def _size_limit() -> str | None:
    """This process's file size limit in words, None when there is none."""
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    return f"a file reached the file size limit of {soft:,} bytes, ulimit -f"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, the errors it was raised from or while handling, and the members of exception groups, each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        error = todo.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        yield error
        context = None if error.__suppress_context__ else error.__context__  # `raise … from None` ends a chain
        todo += [e for e in (error.__cause__, context) if e is not None]
        if isinstance(error, BaseExceptionGroup):
            todo += error.exceptions


def _stored(row: tuple[Any, ...]) -> StoredEpisode:
    key, model, task_id, split, candidate, epoch, status, passed, data = row
    return StoredEpisode(key, model, task_id, split, candidate, epoch, status, bool(passed), json.loads(data))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")

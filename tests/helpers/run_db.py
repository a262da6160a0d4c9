"""Reading a run's SQLite file from outside the process writing it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def count_episodes(db: Path) -> int:
    """Stored episodes so far; 0 while the file or its table does not exist yet."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0

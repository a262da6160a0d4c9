"""A study storage made by several processes at once (a run and the workers started with it) opens for all."""

import threading
from pathlib import Path

import pytest

from optimizer.search.storage import StorageOpenError, close_storage, open_storage


def open_at_once(url: str, openers: int) -> list[Exception]:
    """Open `url` from `openers` threads released together; the errors they met."""
    start = threading.Barrier(openers)
    errors: list[Exception] = []

    def open_it() -> None:
        start.wait()
        try:
            close_storage(open_storage(url))
        except StorageOpenError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_a_storage_made_by_several_openers_at_once_opens_for_every_one(tmp_path: Path) -> None:
    # optuna makes the schema without a lock: racing openers used to fail with "table studies already exists" or
    # a UNIQUE constraint on alembic_version, nearly every time with six of them.
    for attempt in range(2):
        assert open_at_once(f"sqlite:///{tmp_path / f'study{attempt}.db'}", 6) == []


def test_a_storage_that_cannot_be_made_says_why(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StorageOpenError, match="cannot open the study storage .*: unable to open database file"):
        open_storage(f"sqlite:///{tmp_path / 'file' / 'study.db'}")

"""Opening and closing optuna study storages: a fresh in-process study for the default URL, an RDB storage for any
other, made if missing even when several processes (a run and its workers) make it at the same moment."""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator

import optuna
from optuna.storages import BaseStorage, InMemoryStorage, RDBStorage
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

MEMORY_STORAGE = "sqlite:///:memory:"
"""The default storage URL; it means a fresh in-process study (optuna's InMemoryStorage, same semantics, faster)."""
_OPEN_ATTEMPTS = 6


class StorageOpenError(Exception):
    """The storage cannot be opened; the message says why, the cause is the driver's error."""


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence optuna's experimental/future warnings around synchronous optuna calls (never across an await)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", FutureWarning)
        yield


def open_storage(url: str) -> BaseStorage:
    """The storage behind a URL; raises StorageOpenError saying why it cannot be opened."""
    if url == MEMORY_STORAGE:
        return InMemoryStorage()
    kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
    attempt = 1
    while True:
        try:
            with quiet():
                return RDBStorage(url, engine_kwargs=kwargs)
        except (SQLAlchemyError, ValueError, ImportError) as exc:
            if attempt == _OPEN_ATTEMPTS or not _lost_creation_race(exc):
                reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                raise StorageOpenError(f"cannot open the study storage {url!r}: {reason}") from exc
        time.sleep(0.05 * attempt)
        attempt += 1


def close_storage(storage: BaseStorage) -> None:
    if isinstance(storage, RDBStorage):
        storage.remove_session()
        storage.engine.dispose()


def _lost_creation_race(exc: Exception) -> bool:
    """True when another process made the storage's tables or version row while this one did (optuna makes the
    schema without a lock): opening again finds them made."""
    return isinstance(exc, IntegrityError) or (isinstance(exc, OperationalError) and "already exists" in str(exc))

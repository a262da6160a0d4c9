"""Which process a RUNNING search trial belongs to, so that a resumed study can fail the trials a dead process left
RUNNING (killed, crashed) and evaluate them again, and never touches a live worker's.

Every process writes its owner (host and pid) on a trial right after asking for it. A trial without an owner yet
was asked by a process that either writes it at once or died in between: it is given until UNCLAIMED_S after its
start, unless this very process asked for it and failed to write its owner (a full disk). Trials of other hosts are
never judged."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from optuna.trial import FrozenTrial, TrialState

UNCLAIMED_S = 5.0
"""A RUNNING trial still without an owner this long after it started: its process died between asking for it and
writing its owner (the next storage write after the ask)."""


_ABANDONED: set[tuple[str, str, int]] = set()
"""(storage, study, trial number) of the trials this process asked for and could not write its owner on."""


@contextlib.contextmanager
def abandoned_on_error(where: tuple[str, str], number: int) -> Iterator[None]:
    """Remember the trial (`where` is (storage, study)) as abandoned by this process when writing its owner fails."""
    try:
        yield
    except BaseException:
        _ABANDONED.add((*where, number))
        raise


def owner() -> dict[str, Any]:
    """Stored on every trial this process asks."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def unclaimed_wait(trial: FrozenTrial, where: tuple[str, str]) -> float:
    """Seconds left until an ownerless trial (`where` is (storage, study)) has had UNCLAIMED_S since its start to get
    an owner: a resume right after a kill must not take it for a live one. 0 for an owned trial or one this process
    abandoned."""
    owned = trial.user_attrs.get("owner") is not None or (*where, trial.number) in _ABANDONED
    if owned or trial.datetime_start is None:
        return 0.0
    return max(0.0, UNCLAIMED_S - (datetime.now() - trial.datetime_start).total_seconds()) + 0.05


def orphaned(trial: FrozenTrial, where: tuple[str, str]) -> bool:
    """A RUNNING trial whose process is gone: asked on this host by a pid that no longer runs, left without an
    owner for UNCLAIMED_S seconds, or abandoned by this process."""
    if trial.state != TrialState.RUNNING:
        return False
    mine, me = trial.user_attrs.get("owner"), owner()
    if mine is None:
        started = trial.datetime_start
        return (*where, trial.number) in _ABANDONED or (
            started is not None and (datetime.now() - started).total_seconds() > UNCLAIMED_S)
    if mine.get("host") != me["host"] or mine.get("pid") == me["pid"]:
        return False
    try:
        os.kill(int(mine["pid"]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False

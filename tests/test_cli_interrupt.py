"""Ctrl-C stops a command's job for sure (`optimizer/cli/common.run_job`), even when a library drops one
cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from optimizer.cli.common import run_job


def test_ctrl_c_stops_a_job_that_drops_one_cancellation() -> None:
    finished: list[str] = []

    async def stubborn() -> str:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)  # Ctrl-C, once
        with contextlib.suppress(asyncio.CancelledError):  # dropped, as when an answer and the cancel arrive together
            await asyncio.sleep(10)
        await asyncio.sleep(10)
        finished.append("yes")
        return "finished"

    with pytest.raises(KeyboardInterrupt):
        run_job(stubborn())
    assert not finished
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back as it was


def test_a_job_without_ctrl_c_returns_its_result() -> None:
    async def quick() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_job(quick()) == 7

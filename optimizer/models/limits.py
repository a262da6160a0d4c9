"""Provider-neutral request pacing shared by the API model clients: a gate on requests in flight that
backs off under rate limits, and the server's own retry hint."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping


class RateGate:
    """Bounds requests in flight between 1 and `limit`: halves the bound after a rate limit or overload,
    adds one back after `recover_after` successes in a row."""

    def __init__(self, limit: int, recover_after: int = 8) -> None:
        self.limit, self.allowed, self.recover_after = limit, limit, recover_after
        self._in_flight, self._streak = 0, 0
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.allowed)
            self._in_flight += 1

    async def __aexit__(self, *exc: object) -> None:
        async with self._changed:
            self._in_flight -= 1
            self._changed.notify_all()

    def slow_down(self) -> None:
        self.allowed, self._streak = max(1, self.allowed // 2), 0

    def succeeded(self) -> None:
        self._streak += 1
        if self._streak >= self.recover_after and self.allowed < self.limit:
            self.allowed, self._streak = self.allowed + 1, 0


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (`retry-after-ms` first, then `retry-after`), or None."""
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except ValueError:
        return None
    return None

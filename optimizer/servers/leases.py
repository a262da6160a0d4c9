"""Which server connection each episode uses, and what an episode that changes the server's state does to the
episodes beside and after it.

Every episode keeps one connection of the pool from its first tool call to its answer, so a write and the read that
checks it go to the same server process. Connections are shared: several episodes may use one at once.

With `isolate`, an episode that is about to call a tool that may change state (`may_change_state`: its annotations,
else its name's verb) first waits until it is alone on its connection, and keeps it to itself until it answers;
when one of those calls succeeded, the connection's server is restarted before anyone uses it again. Every episode
then starts from the state a fresh server start gives, whatever ran before it — exact when the server starts from
the same state each time (an in-memory server, a launcher that builds its fixture on start, as the test bed's do),
at the cost of a restart per episode that wrote. Without `isolate`, later episodes may see what earlier ones wrote;
the leases count the episodes that wrote (`changed`) so reports can say so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from typing import Any

from optimizer.definitions import ToolDef
from optimizer.lint.rules_security import changes_state
from optimizer.lint.vocabulary import KEEPING_VERBS, action_verb
from optimizer.servers.connections import CallOutcome, Connection, ServerPool


def may_change_state(tool: ToolDef) -> bool:
    """Whether calling the tool may change the server's state: lint's `changes_state` (annotations, else a writing
    verb), or, without a readOnlyHint, a name whose verb keeps something ("add_note", "save_draft")."""
    return bool(changes_state(tool)) or (tool.hint("readOnlyHint") is None
                                         and (action_verb(tool.name) or "") in KEEPING_VERBS)


@dataclass
class _Use:
    """Who is on one connection: episodes sharing it, and whether one has it to itself (or is waiting to)."""

    sharing: int = 0
    alone: bool = False
    waiting: int = 0


@dataclass
class Lease:
    """One episode's hold on the pool; `call` is its CallTool."""

    leases: Leases
    connection: Connection | None = None
    alone: bool = False
    changed: bool = False

    async def call(self, name: str, arguments: dict[str, Any]) -> CallOutcome:
        """Call a tool by its ORIGINAL name on this episode's connection (see the module docstring)."""
        writes = name in self.leases.writers
        if self.connection is None:
            self.connection = await self.leases._bind(alone=writes and self.leases.isolate)
            self.alone = writes and self.leases.isolate
        elif writes and self.leases.isolate and not self.alone:
            await self.leases._upgrade(self.connection)
            self.alone = True
        outcome = await self.leases.pool.call(name, arguments, on=self.connection)
        if writes and not outcome.is_error:
            self.changed = True
        return outcome


class Leases:
    """The episodes of one evaluation on one pool (see the module docstring)."""

    def __init__(self, pool: ServerPool, writers: Collection[str], *, isolate: bool = False) -> None:
        self.pool = pool
        self.writers = frozenset(writers)
        self.isolate = isolate
        self.changed = 0
        """Episodes that made a successful call to a tool that may change state."""
        self.resets = 0
        self._use: dict[int, _Use] = {}
        self._turn = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def episode(self) -> AsyncIterator[Lease]:
        """A lease for one episode, released (and its connection reset, when it wrote alone) when the block ends."""
        lease = Lease(self)
        try:
            yield lease
        finally:
            await self._release(lease)

    def _state(self, conn: Connection) -> _Use:
        return self._use.setdefault(id(conn), _Use())

    async def _bind(self, *, alone: bool) -> Connection:
        """Sharing: the connection the fewest episodes share among those nobody holds or waits to hold alone.
        Alone: a connection nobody is on, else a place in the queue of the least crowded one."""
        async with self._turn:
            if alone:
                conn = min(self.pool.connections, key=lambda c: (self._state(c).alone, self._state(c).waiting,
                                                                 self._state(c).sharing))
                await self._claim(conn)
                return conn
            await self._turn.wait_for(lambda: any(self._open(c) for c in self.pool.connections))
            conn = min((c for c in self.pool.connections if self._open(c)), key=lambda c: self._state(c).sharing)
            self._state(conn).sharing += 1
            return conn

    def _open(self, conn: Connection) -> bool:
        use = self._state(conn)
        return not use.alone and not use.waiting

    async def _upgrade(self, conn: Connection) -> None:
        """From sharing `conn` to holding it alone, once the other episodes on it have answered."""
        async with self._turn:
            use = self._state(conn)
            use.sharing -= 1
            self._turn.notify_all()
            try:
                await self._claim(conn)
            except BaseException:
                use.sharing += 1  # cancelled while waiting: still sharing, as `_release` will count it
                raise

    async def _claim(self, conn: Connection) -> None:
        """Wait (holding the condition's lock) until nobody else is on `conn`, then hold it alone; while waiting, no
        new episode may start sharing it."""
        use = self._state(conn)
        use.waiting += 1
        try:
            await self._turn.wait_for(lambda: not use.sharing and not use.alone)
        finally:
            use.waiting -= 1
            self._turn.notify_all()
        use.alone = True

    async def _release(self, lease: Lease) -> None:
        self.changed += lease.changed
        conn = lease.connection
        if conn is None:
            return
        if lease.alone and lease.changed:
            await self.pool.reset(conn)
            self.resets += 1
        async with self._turn:
            use = self._state(conn)
            if lease.alone:
                use.alone = False
            else:
                use.sharing -= 1
            self._turn.notify_all()


def state_report(changed: int, run: int, *, isolate: bool) -> dict[str, Any]:
    """What a summary says of state: episodes (run now) that changed the server's state, whether each then had a
    fresh server, and a sentence for people ("" when nothing changed state)."""
    if not changed:
        note = ""
    elif isolate:
        note = (f"{changed} of the {run} episodes run changed the server's state; each ran alone on its server "
                "process, which was restarted after it.")
    else:
        note = (f"{changed} of the {run} episodes run changed the server's state (a tool that may write answered "
                "without an error); later episodes on the same server process may have seen those changes. --isolate "
                "starts every episode from a fresh server.")
    return {"changed": changed, "isolated": isolate, "note": note}

"""Which server process an episode's calls reach, and isolation: an episode that changes state has its process to
itself and leaves a fresh one behind (`optimizer/server_leases.py`), against a real stdio server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from optimizer.definitions import ToolDef
from optimizer.servers import ServerPool, ServerSpec, python_command
from optimizer.servers.leases import Lease, Leases, may_change_state, state_report

NOTES = python_command(str(Path(__file__).parent / "servers" / "notes_server.py"))


def run_with_pool(instances: int, body: Callable[[ServerPool], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with ServerPool(ServerSpec.parse(NOTES), instances=instances) as pool:
            return await body(pool)

    return asyncio.run(main())


async def notes(lease: Lease) -> str:
    return (await lease.call("list_notes", {})).text


def test_an_episode_keeps_one_process_and_a_shared_one_shows_earlier_writes() -> None:
    async def body(pool: ServerPool) -> tuple[set[str], str, int]:
        leases = Leases(pool, ["add_note"])
        async with leases.episode() as lease:
            await lease.call("add_note", {"text": "milk"})
            seen = {(await notes(lease)).split(":")[0] for _ in range(6)}  # one pid, whatever the others' load
            assert "milk" in await notes(lease)
        async with leases.episode() as later:
            after = await notes(later)
        return seen, after, leases.changed

    seen, after, changed = run_with_pool(1, body)
    assert len(seen) == 1 and "milk" in after and changed == 1
    assert "--isolate" in state_report(changed, 2, isolate=False)["note"]


def test_with_isolate_an_episode_that_wrote_leaves_a_fresh_server_behind() -> None:
    async def body(pool: ServerPool) -> tuple[str, str, str, int]:
        leases = Leases(pool, ["add_note"], isolate=True)
        async with leases.episode() as first:
            before = await notes(first)
            await first.call("add_note", {"text": "milk"})
            inside = await notes(first)
        async with leases.episode() as later:
            after = await notes(later)
        return before, inside, after, leases.resets

    before, inside, after, resets = run_with_pool(1, body)
    assert "milk" in inside and after.endswith("no notes") and resets == 1
    assert before.split(":")[0] != after.split(":")[0]  # another process


def test_with_isolate_a_writer_waits_until_it_is_alone_and_readers_wait_for_it() -> None:
    async def body(pool: ServerPool) -> list[str]:
        leases = Leases(pool, ["add_note"], isolate=True)
        events: list[str] = []
        reader_in, writer_done = asyncio.Event(), asyncio.Event()

        async def reader() -> None:
            async with leases.episode() as lease:
                await notes(lease)
                reader_in.set()
                await asyncio.sleep(0.2)
                events.append("reader done")

        async def writer() -> None:
            await reader_in.wait()
            async with leases.episode() as lease:
                await lease.call("add_note", {"text": "milk"})
                events.append("writer wrote")
            writer_done.set()

        async def late_reader() -> None:
            await reader_in.wait()
            await asyncio.sleep(0.05)  # the writer is waiting by now
            async with leases.episode() as lease:
                text = await notes(lease)
                events.append(f"late reader saw {text.split(': ')[1]}")

        await asyncio.gather(reader(), writer(), late_reader())
        return events

    events = run_with_pool(1, body)
    assert events == ["reader done", "writer wrote", "late reader saw no notes"]


def test_an_episode_cancelled_while_waiting_to_write_leaves_the_connection_usable() -> None:
    async def body(pool: ServerPool) -> str:
        leases = Leases(pool, ["add_note"], isolate=True)
        async with leases.episode() as reader:
            await notes(reader)

            async def writer() -> None:
                async with leases.episode() as lease:
                    await notes(lease)
                    await lease.call("add_note", {"text": "milk"})  # waits for the reader, then is cancelled

            waiting = asyncio.ensure_future(writer())
            await asyncio.sleep(0.1)
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        async with leases.episode() as later:
            return await asyncio.wait_for(notes(later), 5)

    assert run_with_pool(1, body).endswith("no notes")


def test_a_tool_may_change_state_by_its_annotations_or_its_verb() -> None:
    def tool(name: str, **hints: bool) -> ToolDef:
        return ToolDef(name=name, description="", input_schema={"type": "object"}, annotations=hints or None)

    assert may_change_state(tool("add_note")) and may_change_state(tool("delete_file"))
    assert may_change_state(tool("lookup", readOnlyHint=False))
    assert not may_change_state(tool("add", readOnlyHint=True)) and not may_change_state(tool("list_notes"))


def test_eval_isolate_gives_every_episode_a_fresh_server_and_says_so(run_cli: Any, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("""
- id: keep-milk
  prompt: "Add a note: buy milk."
  expect: {tools: [add_note]}
  split: train
- id: no-notes-yet
  prompt: "List the notes kept so far."
  expect: {answer: "no notes", tools: [list_notes]}
  split: heldout
""", encoding="utf-8")
    isolated = run_cli("eval", "--server", NOTES, "--tasks", str(tasks), "--runs-dir", str(tmp_path), "--run-id",
                       "isolated", "--server-instances", "1", "--isolate", "--models", "sim:lexical,sim:skim", "--json")
    assert isolated.returncode == 0, isolated.stderr
    report = json.loads(isolated.stdout)
    assert report["results"]["sim:lexical"]["heldout"]["passed"] == 1  # never saw another episode's note
    assert report["state"]["changed"] == report["episodes"]["changed_state"] == 2 and report["state"]["isolated"]
    assert "each ran alone" in isolated.stderr

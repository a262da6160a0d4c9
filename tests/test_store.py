"""The run directory: SQLite store, atomic writes, transcripts, credential scrubbing, and the episode
cache as `evaluate` uses it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import mini_server

from optimizer.definitions import Candidate, ToolEdit
from optimizer.files.store import RunStore, StoredEpisode, StoreError, atomic_write, episode_key
from optimizer.models import load_model
from optimizer.run.evaluate import EvalResult, EvalSettings, evaluate
from optimizer.tasks import Expect, Task

SECRET = "sk-test-1234567890abcdef"


def stored(key: str = "k1", candidate: str = "base", model: str = "sim:lexical", task_id: str = "t1",
           data: dict | None = None, **fields: object) -> StoredEpisode:
    values = {"split": "train", "epoch": 0, "status": "completed", "passed": True} | fields
    return StoredEpisode(key, model, task_id, values["split"], candidate, values["epoch"],  # type: ignore[arg-type]
                         values["status"], values["passed"], data or {"answer": "ok"})  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    run = RunStore.create(tmp_path / "runs", "r1")
    yield run
    run.close()


def test_create_makes_the_layout_and_uses_wal(store: RunStore, tmp_path: Path) -> None:
    assert store.dir == tmp_path / "runs" / "r1"
    assert store.run_id == "r1"
    assert (store.dir / "run.db").is_file()
    assert (store.dir / "transcripts").is_dir()
    assert store.server_log == store.dir / "server.log"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with sqlite3.connect(store.dir / "run.db") as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_put_get_round_trip(store: RunStore) -> None:
    episode = stored(data={"answer": "Order #10007 shipped", "calls": [{"name": "lookup_order"}], "n": 1.5,
                           "text": "naïve ✓"}, split="heldout", epoch=2, passed=False, status="max_turns")
    store.put(episode)
    assert store.get("k1") == episode
    assert store.get("missing") is None
    replaced = stored(data={"answer": "again"})
    store.put(replaced)
    assert store.get("k1") == replaced
    assert len(list(store.episodes())) == 1


def test_episodes_filter_by_candidate_and_persist_across_reopen(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r2")
    run.put(stored("a", candidate="base", task_id="t2"))
    run.put(stored("b", candidate="base", task_id="t1"))
    run.put(stored("c", candidate="other"))
    run.set_meta("models", ["sim:lexical"])
    run.close()
    again = RunStore.open_existing(tmp_path, "r2")
    try:
        assert [e.key for e in again.episodes("base")] == ["b", "a"]
        assert [e.key for e in again.episodes()] == ["b", "a", "c"]
        assert again.get_meta("models") == ["sim:lexical"]
        assert again.get_meta("absent", default=7) == 7
    finally:
        again.close()


def test_create_refuses_an_existing_run(store: RunStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="--resume r1"):
        RunStore.create(tmp_path / "runs", "r1")


def test_open_existing_on_a_missing_run(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="there is no run nope"):
        RunStore.open_existing(tmp_path, "nope")
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("bad", ["../escape", "a/b", "-starts-with-dash", ".hidden", "has space", "x" * 82])
def test_bad_run_ids_are_rejected(tmp_path: Path, bad: str) -> None:
    with pytest.raises(StoreError, match="may only use"):
        RunStore.create(tmp_path, bad)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_run_id_gets_a_fresh_one(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "")
    try:
        assert run.run_id and (tmp_path / run.run_id / "run.db").exists()
    finally:
        run.close()


def test_export_transcripts_one_line_per_episode(store: RunStore) -> None:
    store.put(stored("a", candidate="base", task_id="t1", data={"answer": "one"}))
    store.put(stored("b", candidate="base", task_id="t2", data={"answer": "two"}))
    store.put(stored("c", candidate="base", model="sim:skim?noise=0.2", task_id="t1"))
    store.put(stored("d", candidate="cand2", task_id="t1", split="heldout", passed=False))
    paths = store.export_transcripts()
    names = sorted(p.name for p in paths)
    assert names == ["base__sim_lexical.jsonl", "base__sim_skim_noise_0.2.jsonl", "cand2__sim_lexical.jsonl"]
    assert all(p.parent == store.dir / "transcripts" for p in paths)
    lines = (store.dir / "transcripts" / "base__sim_lexical.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["task_id"], r["answer"]) for r in rows] == [("t1", "one"), ("t2", "two")]
    assert rows[0]["split"] == "train" and rows[0]["passed"] is True and rows[0]["epoch"] == 0
    total = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)
    assert total == 4


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "summary.json"
    atomic_write(target, "one\n")
    atomic_write(target, "two ✓\n")
    assert target.read_text(encoding="utf-8") == "two ✓\n"
    assert [p.name for p in target.parent.iterdir()] == ["summary.json"]


def test_atomic_write_failure_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    atomic_write(target, "old\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "bad \udc80 surrogate")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_episode_key_covers_each_part() -> None:
    base = {"model": "sim:lexical", "settings": {"seed": 0, "noise": 0.0}, "system_prompt": "s",
            "exposed_digest": "d1", "task_digest": "t1", "epoch": 0}
    key = episode_key(**base)
    assert key == episode_key(**(base | {"settings": {"noise": 0.0, "seed": 0}}))
    for change in ({"model": "sim:skim"}, {"settings": {"seed": 1, "noise": 0.0}}, {"system_prompt": "t"},
                   {"exposed_digest": "d2"}, {"task_digest": "t2"}, {"epoch": 1}):
        assert episode_key(**(base | change)) != key, change


# --- credentials never land on disk ----------------------------------------------------------------


def all_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


def test_secrets_from_the_environment_never_reach_the_run_directory(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", SECRET)
    monkeypatch.setenv("SERVICE_PASSWORD", "hunter2-correct-horse")
    run = RunStore.create(tmp_path, "secret-run")
    try:
        leak = f"Authorization: Bearer {SECRET}; password hunter2-correct-horse"
        run.put(stored("k", data={"answer": leak, "calls": [{"arguments": {"token": SECRET}}]}))
        run.set_meta("server", {"argv": ["server", "--api-key", SECRET], "note": leak})
        run.record_fault("k", "sim:lexical", "t1", f"crashed with {SECRET}")
        run.write_json("summary.json", {"server": leak})
        run.export_transcripts()
        assert "***" in run.get("k").data["answer"]  # type: ignore[union-attr]
        assert "***" in run.get_meta("server")["note"]
        run.db.execute("PRAGMA wal_checkpoint(FULL)")
    finally:
        run.close()
    data = all_bytes(tmp_path / "secret-run")
    assert SECRET.encode() not in data
    assert b"hunter2-correct-horse" not in data
    assert b"Bearer ***" in data


def test_token_shapes_are_scrubbed_even_without_an_env_var(store: RunStore) -> None:
    store.write_json("summary.json", {"found": "key sk-ant-abcdefghijklmnop and ghp_abcdefghijklmnopqrstuv"})
    text = (store.dir / "summary.json").read_text(encoding="utf-8")
    assert "sk-ant-abcdefghijklmnop" not in text and "ghp_abcdefghijklmnopqrstuv" not in text
    assert json.loads(text) == {"found": "key *** and ***"}


# --- the episode cache through evaluate ------------------------------------------------------------

TASKS = [
    Task("customer-orders", "Find the customer jane@x.com, then list their orders.",
         Expect(answer="#10008", tools=("get_customer", "list_orders")), "train"),
    Task("order-status", "What is the status of order #10007?", Expect(answer="shipped", tools=("lookup_order",)),
         "heldout"),
]


async def evaluate_mini(store: RunStore, candidates: list[Candidate], models: list[str]) -> list[EvalResult]:
    from optimizer.servers import ServerPool, ServerSpec

    results = []
    async with ServerPool(ServerSpec(inproc=mini_server.server)) as pool:
        catalog = await pool.list_tools()
        for candidate in candidates:
            results.append(await evaluate(pool=pool, store=store, catalog=catalog, candidate=candidate, tasks=TASKS,
                                          models=[load_model(m) for m in models],
                                          settings=EvalSettings(epochs=2, max_connections=2)))
    return results


def test_evaluate_caches_every_episode_of_a_candidate(store: RunStore) -> None:
    first, again = asyncio.run(evaluate_mini(store, [Candidate(), Candidate()], ["sim:lexical"]))
    assert (first.run, first.cached, first.infra_errors) == (4, 0, 0)
    assert (again.run, again.cached, again.infra_errors) == (0, 4, 0)
    assert all(not o.cached for o in first.outcomes)
    assert all(o.cached for o in again.outcomes)
    assert [(o.task_id, o.epoch, o.passed, o.chosen_first) for o in first.outcomes] == \
        [(o.task_id, o.epoch, o.passed, o.chosen_first) for o in again.outcomes]
    passed = {(o.task_id, o.split): o.passed for o in first.outcomes}
    assert passed == {("customer-orders", "train"): True, ("order-status", "heldout"): True}
    assert len(list(store.episodes(Candidate().key))) == 4


def test_a_different_candidate_or_model_is_not_cached(store: RunStore) -> None:
    edited = Candidate(edits={"lookup_order": ToolEdit(description="Look up one order by its #NNNNN number.")})
    base, other = asyncio.run(evaluate_mini(store, [Candidate(), edited], ["sim:lexical"]))
    assert (base.run, base.cached) == (4, 0)
    assert (other.run, other.cached) == (4, 0)
    assert other.candidate == edited.key != base.candidate
    (noisy,) = asyncio.run(evaluate_mini(store, [Candidate()], ["sim:lexical?noise=0.1"]))
    assert (noisy.run, noisy.cached) == (4, 0)
    assert len(list(store.episodes())) == 12


def test_an_edit_that_changes_nothing_visible_still_reuses_the_cache(store: RunStore) -> None:
    # the cache key is the EXPOSED definitions: re-stating an original description hits the cache
    same = Candidate(edits={"lookup_order": ToolEdit(description="Get order details")})
    base, restated = asyncio.run(evaluate_mini(store, [Candidate(), same], ["sim:lexical"]))
    assert (base.run, restated.run, restated.cached) == (4, 0, 4)

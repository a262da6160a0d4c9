"""Task loading: formats, validation with file:line errors, the stable split, tool checks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from optimizer.definitions import digest
from optimizer.tasks import Expect, Task, TaskError, TaskSet, assign_split, load_tasks

FIXTURES = Path(__file__).parent / "fixtures" / "tasks"
GOOD = FIXTURES / "good"
BAD = FIXTURES / "bad"
LOCATED = re.compile(r"^\S+:\d+: \S")


def load_error(path: str | Path, **kwargs: float) -> TaskError:
    with pytest.raises(TaskError) as info:
        load_tasks(path, **kwargs)
    return info.value


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- good files -------------------------------------------------------------------------------------


def test_directory_loads_every_format_in_sorted_path_order() -> None:
    tasks = load_tasks(GOOD).tasks
    assert [t.id for t in tasks] == [
        "invoice-total",
        "billing-3",
        "calculator-1",
        "calculator-2",
        "customer-email",
        "order-status",
        "orders-2",
        "order-json",
        "cancel-only-tools",
    ]
    sources = [t.source for t in tasks]
    assert sources[0] == f"{GOOD / 'billing.jsonl'}:1"
    assert sources[1] == f"{GOOD / 'billing.jsonl'}:3"
    assert sources[2] == f"{GOOD / 'calculator.xml'}:3"
    assert sources[4] == f"{GOOD / 'more' / 'customers.yml'}:2"
    assert sources[5:] == [f"{GOOD / 'orders.yaml'}:{n}" for n in (2, 11, 18, 25)]


def test_yaml_fields_are_read_with_types_and_defaults() -> None:
    by_id = {t.id: t for t in load_tasks(GOOD / "orders.yaml").tasks}
    status = by_id["order-status"]
    assert status.prompt == "Where is my order #12345?"
    assert status.expect == Expect(answer="shipped", tools=("lookup_order",), forbid=("get_customer",))
    assert (status.split, status.tags) == ("heldout", ("orders",))
    # a YAML number answer is kept as its JSON text; a mapping as sorted-key JSON
    assert by_id["orders-2"].expect == Expect(answer="42.5", match="number", tools=("refund_order",))
    assert by_id["order-json"].expect.answer == '{"id": 12345, "status": "shipped"}'
    assert by_id["order-json"].expect.match == "json"
    assert by_id["cancel-only-tools"].expect == Expect(tools=("cancel_order",))


def test_mapping_with_tasks_list_and_jsonl_and_xml() -> None:
    (email,) = load_tasks(GOOD / "more" / "customers.yml").tasks
    assert email.expect.answer == r"^\S+@\S+$" and email.expect.match == "regex"
    jsonl = load_tasks(GOOD / "billing.jsonl").tasks
    assert jsonl[0].expect == Expect(answer="$1,200", match="number", tools=("get_invoice",))
    assert (jsonl[1].id, jsonl[1].tags, jsonl[1].expect.match) == ("billing-3", ("billing",), "exact")
    xml = load_tasks(GOOD / "calculator.xml").tasks
    assert xml[0].expect == Expect(answer="11614.72", match="contains")
    assert xml[1].prompt == "Find the larger real root of 3x² - 7x + 2 = 0."
    assert xml[1].source.endswith("calculator.xml:7")


def test_source_uses_the_path_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    tasks = load_tasks("good").tasks
    assert tasks[0].source == os.path.join("good", "billing.jsonl") + ":1"
    assert load_tasks("good/orders.yaml").tasks[0].source == os.path.join("good", "orders.yaml") + ":2"


def test_explicit_split_wins_over_the_hash() -> None:
    all_train = {t.id: t.split for t in load_tasks(GOOD, heldout=0.0).tasks}
    all_heldout = {t.id: t.split for t in load_tasks(GOOD, heldout=1.0).tasks}
    assert all_train["order-status"] == "heldout"  # split: heldout in the file
    assert all_heldout["orders-2"] == "train"  # split: train in the file
    assert all_heldout["invoice-total"] == "train"  # split in JSONL
    assert all_train["customer-email"] == "train" and all_heldout["customer-email"] == "heldout"


def test_taskset_split_and_counts() -> None:
    tasks = load_tasks(GOOD, heldout=1.0)
    explicit_train = {"orders-2", "invoice-total"}
    assert {t.id for t in tasks.split("train")} == explicit_train
    assert len(tasks.split("heldout")) == 7
    assert tasks.counts() == {"train": 2, "heldout": 7}
    assert len(tasks.split("all")) == 9
    with pytest.raises(ValueError, match="unknown split"):
        tasks.split("test")


def test_digest_covers_id_prompt_expect_only() -> None:
    task = Task("t1", "Say hi", Expect(answer="hi"), "train", ("a",), "x.yaml:1")
    moved = Task("t1", "Say hi", Expect(answer="hi"), "heldout", ("b",), "y.yaml:9")
    assert task.digest() == moved.digest()
    assert re.fullmatch(r"[0-9a-f]{64}", task.digest())
    assert task.digest() != Task("t1", "Say hello", Expect(answer="hi"), "train").digest()
    assert task.digest() != Task("t1", "Say hi", Expect(answer="hi", match="exact"), "train").digest()
    assert task.digest() != Task("t1", "Say hi", Expect(answer="hi", forbid=("x",)), "train").digest()


def test_to_json_is_plain_json() -> None:
    task = load_tasks(GOOD / "orders.yaml").tasks[0]
    data = json.loads(json.dumps(task.to_json()))
    assert data == {
        "id": "order-status",
        "prompt": "Where is my order #12345?",
        "expect": {
            "answer": "shipped",
            "match": "contains",
            "tools": ["lookup_order"],
            "forbid": ["get_customer"],
        },
        "split": "heldout",
        "tags": ["orders"],
        "provenance": {},
        "source": f"{GOOD / 'orders.yaml'}:2",
    }


# --- the stable split --------------------------------------------------------------------------------


def test_assign_split_is_stable_and_near_the_share() -> None:
    ids = [f"task-{i}" for i in range(1000)]
    first = [assign_split(i, 0.3) for i in ids]
    assert first == [assign_split(i, 0.3) for i in ids]
    share = first.count("heldout") / len(ids)
    assert 0.25 <= share <= 0.35
    assert all(assign_split(i, 0.0) == "train" for i in ids[:50])
    assert all(assign_split(i, 1.0) == "heldout" for i in ids[:50])
    # monotone: a task held out at 0.2 stays held out at 0.3
    assert all(assign_split(i, 0.3) == "heldout" for i in ids if assign_split(i, 0.2) == "heldout")
    with pytest.raises(ValueError):
        assign_split("x", 1.5)


def test_assign_split_is_the_same_in_other_processes() -> None:
    ids = [f"id-{i}" for i in range(40)]
    code = (
        "import sys; from optimizer.tasks import assign_split; "
        "print(' '.join(assign_split(i, 0.5) for i in sys.argv[1:]))"
    )
    here = " ".join(assign_split(i, 0.5) for i in ids)
    root = str(Path(__file__).resolve().parents[1])
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        out = subprocess.run(
            [sys.executable, "-c", code, *ids], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == here
    assert "heldout" in here and "train" in here


# --- bad files: every error names file and line ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "needle"),
    [
        ("broken.yaml", 7, "YAML syntax error"),
        ("unknown_key.yaml", 3, "unknown key 'expected'"),
        ("missing_prompt.yaml", 5, "task 'no-prompt' has no prompt"),
        ("bad_regex.yaml", 5, "not a valid regex"),
        ("unknown_match.yaml", 5, "unknown match 'fuzzy'"),
        ("malformed.xml", 8, "malformed XML"),
    ],
)
def test_bad_file_names_file_and_line(name: str, line: int, needle: str) -> None:
    error = load_error(BAD / name)
    assert f"{BAD / name}:{line}: " in str(error)
    assert any(p.startswith(f"{BAD / name}:{line}: ") and needle in p for p in error.problems)
    assert all(LOCATED.match(p) for p in error.problems)


def test_yaml_syntax_error_also_names_where_the_construct_started() -> None:
    assert "from line 5" in str(load_error(BAD / "broken.yaml"))


def test_duplicate_ids_across_files_name_both_locations() -> None:
    error = load_error(BAD / "dup")
    assert error.problems == (
        f"{BAD / 'dup' / 'b.yaml'}:4: duplicate id 'same-id' (first defined at {BAD / 'dup' / 'a.yaml'}:1)",
    )


def test_all_errors_of_a_load_come_together() -> None:
    error = load_error(BAD)
    text = str(error)
    for located in (
        "bad_regex.yaml:5:",
        "broken.yaml:7:",
        "b.yaml:4:",
        "malformed.xml:8:",
        "missing_prompt.yaml:5:",
        "unknown_key.yaml:3:",
        "unknown_match.yaml:5:",
    ):
        assert located in text
    assert text.startswith(str(BAD))
    assert text.splitlines() == list(error.problems)
    assert all(LOCATED.match(line) for line in error.problems)


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("- id: a\n  prompt: p\n  expect: {answer: '{not json', match: json}\n", 3, "not valid JSON"),
        ("- id: a\n  prompt: p\n  expect: {answer: about ten, match: number}\n", 3, "not a number"),
        ("- id: a\n  prompt: p\n  expect: {answer: x}\n  tags: orders\n", 4, "tags must be a list"),
        ("- id: a\n  prompt: p\n  expect:\n    tools: lookup_order\n", 4, "expect.tools must be a list"),
        (
            "- id: a\n  prompt: p\n  expect:\n    answer: x\n    expected: y\n",
            5,
            "unknown key 'expect.expected'",
        ),
        ("- id: a\n  prompt: p\n  expect: {answer: x}\n  split: test\n", 4, "split must be"),
        ("- id: a\n  prompt: 42\n  expect: {answer: x}\n", 2, "prompt must be a non-empty string"),
        ("- id: a\n  prompt: '  '\n  expect: {answer: x}\n", 2, "prompt must be a non-empty string"),
        ("- id: a\n  prompt: p\n", 1, "nothing to verify"),
        ("- id: a\n  prompt: p\n  expect: {forbid: [x]}\n", 1, "nothing to verify"),
        ("- id: a\n  prompt: p\n  expect: {tools: [x], forbid: [x]}\n", 3, "both required and forbidden"),
        ("- id: a\n  prompt: p\n  prompt: q\n  expect: {answer: x}\n", 3, "duplicate key 'prompt'"),
        ("- id: a\n  prompt: p\n  expect: {match: exact, tools: [x]}\n", 3, "without expect.answer"),
        ("- just a string\n", 1, "a task must be a mapping"),
        ("tasks:\n  - {id: a, prompt: p, expect: {answer: x}}\nversion: 2\n", 3, "unknown top-level key"),
        ("id: a\nprompt: p\n", 1, "needs a 'tasks:' list"),
        ("- id: a\n  prompt: p\n  expect: {answer: !!python/name:os.system x}\n", 3, "constructor"),
    ],
)
def test_yaml_problems_are_located(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = write(tmp_path / "t.yaml", text)
    error = load_error(path)
    assert any(p.startswith(f"{path}:{line}: ") and needle in p for p in error.problems), error.problems


def test_jsonl_problems_use_natural_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        '{"prompt": "ok", "expect": {"answer": "x"}}\n\n{"prompt": broken}\n[1, 2]\n{"promt": "p"}\n',
    )
    problems = load_error(path).problems
    assert problems[0].startswith(f"{path}:3: invalid JSON")
    assert problems[1].startswith(f"{path}:4: a task must be a JSON object")
    assert problems[2].startswith(f"{path}:5: unknown key 'promt'")
    assert all(LOCATED.match(p) for p in problems)


def test_xml_task_without_response_and_unknown_element(tmp_path: Path) -> None:
    path = write(
        tmp_path / "eval.xml",
        "<evaluation>\n  <task>\n    <prompt>Hi</prompt>\n  </task>\n"
        "  <task>\n    <prompt>Q</prompt>\n    <answer>A</answer>\n    <response>A</response>\n  </task>\n"
        "</evaluation>\n",
    )
    problems = load_error(path).problems
    assert problems == (
        f"{path}:2: task has nothing to verify: give expect.answer or expect.tools",
        f"{path}:7: unknown element <answer> in <task>",
    )


def test_mcp_builder_evaluation_xml_loads_as_tasks(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evaluation.xml",
        "<evaluation>\n  <qa_pair>\n    <question>How many open issues does ENG have?</question>\n"
        "    <answer>3</answer>\n  </qa_pair>\n  <qa_pair>\n    <question>Who owns the runbook?</question>\n"
        "    <answer>Dana Ruiz</answer>\n  </qa_pair>\n</evaluation>\n",
    )
    tasks = load_tasks(path).tasks
    assert [t.prompt for t in tasks] == ["How many open issues does ENG have?", "Who owns the runbook?"]
    assert tasks[1].expect == Expect(answer="Dana Ruiz", match="contains")
    assert [t.source for t in tasks] == [f"{path}:2", f"{path}:6"] and tasks[0].id == "evaluation-1"
    bad = write(tmp_path / "bad" / "evaluation.xml",
                "<evaluation>\n  <qa_pair>\n    <question>Q</question>\n    <response>A</response>\n"
                "  </qa_pair>\n</evaluation>\n")
    assert load_error(bad).problems == (
        f"{bad}:2: task has nothing to verify: give expect.answer or expect.tools",
        f"{bad}:4: unknown element <response> in <qa_pair>",
    )


def test_no_partial_taskset_when_one_file_is_bad(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "- {id: a, prompt: p, expect: {answer: x}}\n")
    write(tmp_path / "b.yaml", "- {id: b, prompt: p, expect: {answer: x, match: nope}}\n")
    error = load_error(tmp_path)
    assert error.problems == (
        f"{tmp_path / 'b.yaml'}:1: unknown match 'nope'"
        " (allowed: contains, exact, regex, number, json, judge)",
    )


def test_empty_and_missing_paths_are_errors(tmp_path: Path) -> None:
    write(tmp_path / "empty" / "notes.txt", "not a task file")
    write(tmp_path / "empty" / "blank.yaml", "")
    assert "no tasks found" in str(load_error(tmp_path / "empty"))
    assert str(load_error(tmp_path / "nope")).startswith(f"{tmp_path / 'nope'}:0: no such file")
    assert "not a task file" in str(load_error(write(tmp_path / "t.txt", "x")))
    with pytest.raises(ValueError, match="heldout share"):
        load_tasks(GOOD, heldout=2.0)


def test_directory_skips_hidden_and_other_files(tmp_path: Path) -> None:
    write(tmp_path / "a.yml", "- {prompt: p, expect: {answer: x}}\n")
    write(tmp_path / ".git" / "junk.yaml", "{{{ not yaml")
    write(tmp_path / ".#a.yaml", "{{{ not yaml")
    write(tmp_path / "README.md", "# tasks")
    assert [t.id for t in load_tasks(tmp_path).tasks] == ["a-1"]


def test_yaml_scalars_keep_their_text(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        "- {id: 7, prompt: 'When?', expect: {answer: 2024-05-03}}\n"
        "- {prompt: 'How many?', expect: {answer: 3, match: number}}\n"
        "- {prompt: 'Ok?', expect: {answer: true, match: json}}\n",
    )
    tasks = load_tasks(path).tasks
    assert [(t.id, t.expect.answer) for t in tasks] == [("7", "2024-05-03"), ("t-2", "3"), ("t-3", "true")]


# --- tool names ------------------------------------------------------------------------------------------


def test_check_tools_names_every_unknown_tool_with_location() -> None:
    tasks = load_tasks(GOOD)
    known = ["lookup_order", "get_customer", "refund_order", "cancel_order", "get_invoice"]
    tasks.check_tools(known)
    with pytest.raises(TaskError) as info:
        tasks.check_tools(["lookup_orders", "refund_order", "cancel_order", "get_invoice"])
    problems = info.value.problems
    orders = GOOD / "orders.yaml"
    assert problems == (
        f"{GOOD / 'more' / 'customers.yml'}:2: task 'customer-email':"
        " unknown tool 'get_customer' in expect.tools",
        f"{orders}:2: task 'order-status': unknown tool 'lookup_order' in expect.tools"
        " (did you mean 'lookup_orders'?)",
        f"{orders}:2: task 'order-status': unknown tool 'get_customer' in expect.forbid",
    )


def test_taskset_is_a_plain_value() -> None:
    one = Task("a", "p", Expect(answer="x"), "train")
    assert TaskSet((one,)).counts() == {"train": 1, "heldout": 0}
    assert TaskSet((one,)) == TaskSet((one,))


def test_expected_calls_and_provenance_load_and_leave_other_digests_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "t.yaml",
                 "- id: a\n  prompt: p\n  expect: {answer: x, calls: [{tool: get, arguments: {id: 7}}]}\n"
                 "  provenance: {generator: offline, date: '2026-12-01'}\n"
                 "- id: b\n  prompt: p\n  expect: {answer: x}\n")
    first, second = load_tasks(path).tasks
    assert first.expect.calls == (("get", '{"id": 7}'),) and dict(first.provenance)["generator"] == "offline"
    assert first.expect.to_json()["calls"] == [{"tool": "get", "arguments": {"id": 7}}]
    assert "calls" not in second.expect.to_json()  # a task without calls digests as it always did
    old_form = {"id": "b", "prompt": "p", "expect": {"answer": "x", "match": "contains", "tools": [], "forbid": []}}
    assert second.digest() == digest(old_form)
    bad = write(tmp_path / "bad.yaml", "- id: a\n  prompt: p\n  expect: {answer: x, calls: [{tool: 3}]}\n")
    assert "expect.calls must be a list of {tool: NAME, arguments: {…}}" in load_error(bad).problems[0]

"""Eval tasks: the data model, loaders (YAML, JSONL, the Anthropic cookbook's XML and the MCP-builder evaluation XML)
and the split.

Contracts:
- `load_tasks` returns a complete, valid `TaskSet` or raises ONE `TaskError` listing every problem in
  every file, each line `path:line: problem`; no partial task set is ever returned.
- Task ids are unique across all files; `Task.source` is `path:line` of the task's first line.
- The split of a task without an explicit `split:` depends only on its id and the held-out share
  (`assign_split`), so it is the same in every process, on every machine, in every run.
- `Task.digest()` covers id, prompt and expect only; moving a task between files or splits, or
  retagging it, does not change it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET
from xml.parsers import expat

import yaml

from optimizer.definitions import digest
from optimizer.scoring import Expect, expected_problem

MATCHES = ("contains", "exact", "regex", "number", "json", "judge")
SPLITS = ("train", "heldout")
SUFFIXES = (".yaml", ".yml", ".jsonl", ".xml")
TASK_KEYS = ("id", "prompt", "expect", "split", "tags", "provenance")
EXPECT_KEYS = ("answer", "match", "tools", "forbid", "calls")


class TaskError(ValueError):
    """Bad task file; message starts with 'path:line: ', one problem per line (see `problems`)."""

    def __init__(self, problems: str | Iterable[str]) -> None:
        self.problems: tuple[str, ...] = (problems,) if isinstance(problems, str) else tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Task:
    """One eval task; `source` is `path:line` where it starts in its file."""

    id: str
    prompt: str
    expect: Expect
    split: str
    tags: tuple[str, ...] = ()
    source: str = ""
    provenance: tuple[tuple[str, str], ...] = ()
    """How the task was made (e.g. generator, model, date), as written under `provenance:`; not in the digest."""

    def digest(self) -> str:
        """sha256 hex of the canonical JSON of id, prompt and expect (not split, tags or source)."""
        return digest({"id": self.id, "prompt": self.prompt, "expect": self.expect.to_json()})

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form of every field."""
        return {**asdict(self), "expect": self.expect.to_json(), "tags": list(self.tags),
                "provenance": dict(self.provenance)}


@dataclass(frozen=True)
class TaskSet:
    """A loaded, validated set of tasks in file order (ids unique)."""

    tasks: tuple[Task, ...]

    def split(self, name: str) -> list[Task]:
        """Tasks of split "train" or "heldout", or "all" of them, in load order."""
        if name == "all":
            return list(self.tasks)
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; use train, heldout or all")
        return [task for task in self.tasks if task.split == name]

    def counts(self) -> dict[str, int]:
        """{"train": n, "heldout": n}."""
        return {name: len(self.split(name)) for name in SPLITS}

    def check_tools(self, tool_names: Iterable[str]) -> None:
        """Raise one TaskError naming every tool in expect.tools/forbid that is not in `tool_names`."""
        known = sorted(set(tool_names))
        problems = []
        for task in self.tasks:
            for key, names in (("tools", task.expect.tools), ("forbid", task.expect.forbid)):
                for name in names:
                    if name in known:
                        continue
                    close = difflib.get_close_matches(name, known, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    problems.append(
                        f"{task.source}: task {task.id!r}: unknown tool {name!r} in expect.{key}{hint}"
                    )
        if problems:
            raise TaskError(problems)


def assign_split(task_id: str, heldout: float) -> str:
    """Return "heldout" when sha256(id) as a fraction in [0, 1) is below `heldout`, else "train"."""
    if not 0.0 <= heldout <= 1.0:
        raise ValueError(f"heldout share must be in [0, 1], got {heldout}")
    fraction = int(hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:16], 16) / 2**64
    return "heldout" if fraction < heldout else "train"


@dataclass
class _Raw:
    """One task as read from a file, before validation; `lines` maps "key" / "expect.key" to a line."""

    source: str
    line: int
    default_id: str
    data: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)

    def at(self, key: str = "") -> str:
        return f"{self.source}:{self.lines.get(key, self.line)}"


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that keeps timestamps as the text written (a date answer stays "2024-05-03")."""


_Constructor.add_constructor("tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_scalar)


def _yaml_value(node: yaml.Node) -> Any:
    return _Constructor().construct_document(node)


def _yaml_mapping(node: yaml.MappingNode, where: str, prefix: str, raw: _Raw, problems: list[str]) -> dict[str, Any]:
    """Mapping node -> dict, recording each key's line in raw.lines; duplicate keys are problems."""
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
        if key in out:
            problems.append(f"{where}:{line}: duplicate key '{prefix}{key}'")
            continue
        raw.lines[prefix + key] = line
        if prefix == "" and key == "expect" and isinstance(value_node, yaml.MappingNode):
            out[key] = _yaml_mapping(value_node, where, "expect.", raw, problems)
        else:
            out[key] = _yaml_value(value_node)
    return out


def _yaml_items(root: yaml.Node | None, source: str, problems: list[str]) -> list[yaml.Node]:
    """The task nodes of a YAML document: a top-level list, or the list under `tasks:`."""
    if root is None:
        return []
    if isinstance(root, yaml.MappingNode):
        body = None
        for key_node, value_node in root.value:
            if key_node.value == "tasks":
                body = value_node
            else:
                line = key_node.start_mark.line + 1
                problems.append(f"{source}:{line}: unknown top-level key {key_node.value!r}")
        if body is None:
            problems.append(f"{source}:{root.start_mark.line + 1}: a top-level mapping needs a 'tasks:' list")
            return []
        root = body
    if not isinstance(root, yaml.SequenceNode):
        problems.append(f"{source}:{root.start_mark.line + 1}: expected a list of tasks (or a 'tasks:' list)")
        return []
    return list(root.value)


def _yaml_error(exc: yaml.MarkedYAMLError) -> str:
    """`line: YAML syntax error: problem (context from line N)` for a PyYAML error."""
    mark = exc.problem_mark or exc.context_mark
    text = f"{mark.line + 1 if mark else 1}: YAML syntax error: {exc.problem or exc.context or exc}"
    if exc.context and exc.context_mark and exc.problem_mark:
        text += f" ({exc.context} from line {exc.context_mark.line + 1})"
    return text


def _read_yaml(path: Path, source: str, problems: list[str]) -> list[_Raw]:
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        problems.append(f"{source}:{_yaml_error(exc)}")
        return []
    except yaml.YAMLError as exc:
        problems.append(f"{source}:1: YAML error: {exc}")
        return []
    raws = []
    for index, node in enumerate(_yaml_items(root, source, problems), start=1):
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.MappingNode):
            problems.append(f"{source}:{line}: a task must be a mapping with at least 'prompt'")
            continue
        raw = _Raw(source, line, f"{path.stem}-{index}", {})
        try:
            raw.data = _yaml_mapping(node, source, "", raw, problems)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problems.append(f"{source}:{mark.line + 1 if mark else line}: {exc.problem or exc}")
            continue
        raws.append(raw)
    return raws


def _read_jsonl(path: Path, source: str, problems: list[str]) -> list[_Raw]:
    raws = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except ValueError as exc:
            problems.append(f"{source}:{number}: invalid JSON: {exc}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{source}:{number}: a task must be a JSON object with at least 'prompt'")
            continue
        raws.append(_Raw(source, number, f"{path.stem}-{number}", data))
    return raws


def _xml_tree(data: bytes) -> tuple[ET.Element, dict[ET.Element, int]]:
    """Parse XML with expat into an ElementTree, remembering each element's start line."""
    builder, lines = ET.TreeBuilder(), {}
    parser = expat.ParserCreate()

    def start(name: str, attrs: dict[str, str]) -> None:
        lines[builder.start(name, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.Parse(data, True)
    return builder.close(), lines


XML_TASKS = {"task": {"prompt": "prompt", "response": "expect.answer"},
             "qa_pair": {"question": "prompt", "answer": "expect.answer"}}
"""Task elements of the two XML formats and their children: the cookbook's `<task><prompt/><response/>` and
Anthropic's MCP-builder evaluations, `<qa_pair><question/><answer/>`."""


def _read_xml(path: Path, source: str, problems: list[str]) -> list[_Raw]:
    """`<evaluation>` of `<task>` or `<qa_pair>` elements (`XML_TASKS`); the response or answer -> a contains
    answer."""
    try:
        root, lines = _xml_tree(path.read_bytes())
    except expat.ExpatError as exc:
        problems.append(f"{source}:{exc.lineno}: malformed XML: {expat.ErrorString(exc.code)}")
        return []
    raws = []
    elements = [e for e in root.iter() if e.tag in XML_TASKS]
    for index, element in enumerate(elements, start=1):
        raw = _Raw(source, lines[element], f"{path.stem}-{index}", {})
        for child in element:
            key = XML_TASKS[element.tag].get(child.tag)
            if key is None or key in raw.lines:
                what = "unknown" if key is None else "duplicate"
                problems.append(f"{source}:{lines[child]}: {what} element <{child.tag}> in <{element.tag}>")
                continue
            raw.lines[key] = lines[child]
            text = "".join(child.itertext()).strip()
            if key == "prompt":
                raw.data["prompt"] = text
            else:
                raw.data["expect"] = {"answer": text, "match": "contains"}
        raws.append(raw)
    return raws


def _strings(value: Any) -> tuple[str, ...] | None:
    """`value` as a tuple of non-empty strings, or None when it is not a list of them."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        return None
    return tuple(item.strip() for item in value)


def _answer_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _build_expect(raw: _Raw, problems: list[str]) -> Expect:
    value = raw.data.get("expect", {})
    if not isinstance(value, dict):
        problems.append(f"{raw.at('expect')}: expect must be a mapping with answer/match/tools/forbid")
        value = {}
    for key in value:
        if key not in EXPECT_KEYS:
            allowed = ", ".join(EXPECT_KEYS)
            problems.append(f"{raw.at('expect.' + key)}: unknown key 'expect.{key}' (allowed: {allowed})")
    answer = _answer_text(value.get("answer"))
    match = value.get("match", "contains")
    if match not in MATCHES:
        problems.append(f"{raw.at('expect.match')}: unknown match {match!r} (allowed: {', '.join(MATCHES)})")
        match = "contains"
    elif answer is not None and (problem := expected_problem(answer, match)):
        problems.append(f"{raw.at('expect.answer')}: {problem}")
    elif answer is None and "match" in value:
        problems.append(f"{raw.at('expect.match')}: expect.match given without expect.answer")
    tools: dict[str, tuple[str, ...]] = {}
    for key in ("tools", "forbid"):
        names = _strings(value.get(key, []))
        if names is None:
            problems.append(
                f"{raw.at('expect.' + key)}: expect.{key} must be a list of tool names, e.g. [a, b]"
            )
        tools[key] = names or ()
    for name in sorted(set(tools["tools"]) & set(tools["forbid"])):
        problems.append(f"{raw.at('expect.forbid')}: tool {name!r} is both required and forbidden")
    if answer is None and not tools["tools"]:
        problems.append(f"{raw.at()}: task has nothing to verify: give expect.answer or expect.tools")
    calls = value.get("calls", [])
    if not isinstance(calls, list) or not all(isinstance(c, dict) and set(c) <= {"tool", "arguments"}
                                              and isinstance(c.get("tool"), str) and isinstance(c.get("arguments", {}),
                                                                                                dict) for c in calls):
        problems.append(f"{raw.at('expect.calls')}: expect.calls must be a list of {{tool: NAME, arguments: {{…}}}}")
        calls = []
    pairs = tuple((c["tool"], json.dumps(c.get("arguments", {}), sort_keys=True, ensure_ascii=False)) for c in calls)
    return Expect(answer=answer, match=match, tools=tools["tools"], forbid=tools["forbid"], calls=pairs)


def _build_id(raw: _Raw, problems: list[str]) -> str:
    value = raw.data.get("id", raw.default_id)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{raw.at('id')}: id must be a non-empty string")
        return raw.default_id
    return value.strip()


def _build_task(raw: _Raw, heldout: float) -> tuple[Task | None, list[str]]:
    """Validate one raw task; (task, []) or (None, problems)."""
    problems: list[str] = []
    for key in raw.data:
        if key not in TASK_KEYS:
            problems.append(f"{raw.at(key)}: unknown key {key!r} (allowed: {', '.join(TASK_KEYS)})")
    task_id = _build_id(raw, problems)
    prompt = raw.data.get("prompt")
    if "prompt" not in raw.data:
        problems.append(f"{raw.at()}: task {task_id!r} has no prompt")
    elif not isinstance(prompt, str) or not prompt.strip():
        problems.append(f"{raw.at('prompt')}: prompt must be a non-empty string")
    expect = _build_expect(raw, problems)
    split = raw.data.get("split")
    if split is not None and split not in SPLITS:
        problems.append(f"{raw.at('split')}: split must be 'train' or 'heldout', not {split!r}")
    tags = _strings(raw.data.get("tags", []))
    if tags is None:
        problems.append(f"{raw.at('tags')}: tags must be a list of strings")
    made = raw.data.get("provenance", {})
    if not isinstance(made, dict) or not all(isinstance(v, str | int | float) for v in made.values()):
        problems.append(f"{raw.at('provenance')}: provenance must map names to plain values")
    if problems:
        return None, problems
    chosen = split if split is not None else assign_split(task_id, heldout)
    task = Task(task_id, str(prompt).strip(), expect, chosen, tags or (), f"{raw.source}:{raw.line}",
                tuple((str(k), str(v)) for k, v in made.items()))
    return task, []


def _files(root: Path, problems: list[str]) -> list[tuple[Path, str]]:
    """(file, source path) pairs to read; a directory gives every task file below it, sorted."""
    if root.is_file():
        if root.suffix.lower() not in SUFFIXES:
            problems.append(f"{root}:1: not a task file (expected {', '.join(SUFFIXES)})")
            return []
        return [(root, str(root))]
    if not root.is_dir():
        problems.append(f"{root}:0: no such file or directory")
        return []
    found = sorted(p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
    visible = [
        p.relative_to(root) for p in found if not any(s.startswith(".") for s in p.relative_to(root).parts)
    ]
    return [(root / rel, str(root / rel)) for rel in visible]


def _read_file(path: Path, source: str, problems: list[str]) -> list[_Raw]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".xml":
            return _read_xml(path, source, problems)
        if suffix == ".jsonl":
            return _read_jsonl(path, source, problems)
        return _read_yaml(path, source, problems)
    except UnicodeDecodeError as exc:
        problems.append(f"{source}:1: not UTF-8 text: {exc.reason}")
    except OSError as exc:
        problems.append(f"{source}:0: cannot read: {exc.strerror or exc}")
    return []


def load_tasks(path: str | Path, *, heldout: float = 0.3) -> TaskSet:
    """Load every task under `path` (a file or a directory); raise one TaskError listing all problems."""
    if not 0.0 <= heldout <= 1.0:
        raise ValueError(f"heldout share must be in [0, 1], got {heldout}")
    root = Path(path)
    problems: list[str] = []
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for file, source in _files(root, problems):
        found: list[str] = []
        for raw in _read_file(file, source, found):
            task, task_problems = _build_task(raw, heldout)
            found.extend(task_problems)
            if task is None:
                continue
            if task.id in seen:
                found.append(f"{task.source}: duplicate id {task.id!r} (first defined at {seen[task.id]})")
                continue
            seen[task.id] = task.source
            tasks.append(task)
        # every problem of this file starts "source:line: "; list them in line order
        problems.extend(sorted(found, key=lambda p: int(p[len(source) + 1 :].split(":", 1)[0])))
    if not tasks and not problems:
        problems.append(f"{root}:0: no tasks found (looked for {', '.join('*' + s for s in SUFFIXES)})")
    if problems:
        raise TaskError(problems)
    return TaskSet(tuple(tasks))

"""The rules proposer keeps what a server's author already wrote well: the sentence saying when to use the tool
stays among the three a rewrite may have, even when the confusions ask for two "Not for …" lines; a notice that
the tool is deprecated leads the rewrite."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.propose.evidence import build_evidence
from optimizer.propose.rules import RulesProposer, Variant
from optimizer.store import StoredEpisode
from optimizer.tasks import Expect, Task
from optimizer.text import sentences

PATHS = {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
         "required": ["paths"]}
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
MANY = ("Read the contents of multiple files simultaneously. This is more efficient than reading files one by one "
        "when you need to analyze or compare multiple files. Each file's content is returned with its path.")
CATALOG = Catalog("files", (
    ToolDef("read_multiple_files", MANY, PATHS),
    ToolDef("read_text_file", "Read the complete contents of a file as text.", PATH),
    ToolDef("list_directory", "Get a listing of all files and directories in a path.", PATH),
))
PROMPTS = {  # requests for the two others that agents sent to read_multiple_files
    "one": ("Show me what notes/todo.md says.", "read_text_file"),
    "two": ("Print the text of docs/faq.md for me.", "read_text_file"),
    "dir": ("What is in the web folder?", "list_directory"),
    "dir2": ("Show the entries of the data folder.", "list_directory"),
}
TASKS = {tid: Task(tid, prompt, Expect(tools=(tool,)), "train") for tid, (prompt, tool) in PROMPTS.items()}


def episode(task_id: str, model: str) -> StoredEpisode:
    task = TASKS[task_id]
    calls = [{"id": "c1", "name": "read_multiple_files", "original": "read_multiple_files",
              "arguments": {"paths": ["x"]}, "result": "x: not found", "is_error": False}]
    data = {"prompt": task.prompt, "answer": "", "verdict": {"passed": False, "reason": ""},
            "expected_tools": list(task.expect.tools), "calls": calls}
    return StoredEpisode(f"{task_id}-{model}", model, task_id, "train", "base", 0, "completed", False, data)


def rewrites(variants: Sequence[Variant]) -> list[str]:
    evidence = build_evidence([episode(t, m) for t in TASKS for m in ("sim:lexical", "sim:skim")], TASKS)
    proposed = asyncio.run(RulesProposer(list(variants)).propose(CATALOG, Candidate(), evidence, k=len(variants),
                                                                  seed=0))
    return [c.edits["read_multiple_files"].description or "" for c in proposed if "read_multiple_files" in c.edits]


def test_the_authors_when_to_use_sentence_keeps_its_place_beside_one_boundary() -> None:
    texts = rewrites([Variant(boundaries=2)])
    assert texts, "the confused tool was not rewritten"
    for text in texts:
        said = sentences(text)
        assert said[0] == "Read the contents of multiple files simultaneously."
        assert "when you need to analyze or compare multiple files" in said[1]
        assert sum("instead" in s for s in said) == 1 and len(said) <= 3, text


def test_a_deprecation_notice_leads_the_rewrite_and_takes_the_place_of_boundary_lines() -> None:
    old = CATALOG.tools[0]
    retired = ToolDef(old.name, MANY.split(". ")[0] + ". DEPRECATED: Use read_text_file instead.", PATHS)
    catalog = Catalog("files", (retired, *CATALOG.tools[1:]))
    evidence = build_evidence([episode(t, m) for t in TASKS for m in ("sim:lexical", "sim:skim")], TASKS)
    proposed = asyncio.run(RulesProposer([Variant(boundaries=2)]).propose(catalog, Candidate(), evidence, k=1,
                                                                           seed=0))
    text = proposed[0].edits["read_multiple_files"].description or ""
    assert sentences(text)[0] == "DEPRECATED: Use read_text_file instead.", text
    assert sum("instead" in s for s in sentences(text)) == 1 and "Not for" not in text

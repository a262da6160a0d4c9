"""Recorded model answers: `--record DIR` keeps every Messages API answer a run receives, `--replay DIR` answers
from them with no key and no API call.

A recording is a folder of plain JSON a person can read and diff:
- `provenance.json`: the command, the models, the endpoint that answered, who answered it (`answered_by`) and
  when. Never a key or a header value.
- `outcome.json`: the recorded run's results (summary.json, eval.json or regress.json), which its replay gives
  again.
- `answers.jsonl`: one answer a line, sorted by what it answers: `{"key", "about", "reply"}`. `about` says what
  was asked (model, kind, definitions digest, turn, the conversation's first words) for people and error
  messages; `reply` is the answer (content blocks, stop reason, usage, model), its fields in the order they came.

The key (`answer_key`) covers what determines an answer: the model, the tools as sent (names, descriptions,
schemas, deferral; not cache markers), the tool choice, thinking, and the conversation so far: every message,
except that of a text built from one of our templates only the untrusted data it fences counts
(`prompt_files.fence`). It does not cover the system prompt, `max_tokens`, or the wording of our templates, so
rewording the agent's system prompt or the proposer's instructions keeps a recording; another task prompt, tool
definition, tool result or piece of evidence does not. A request asked more often than it was recorded (a later
epoch) gets its last recorded answer again.

A replayed request without a recorded answer raises `ReplayMissing`, which stops the run (exit 2): never a silent
fallback.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.models.base import MessagesAPI, ReplayMissing, Reply, Usage

ANSWERS = "answers.jsonl"
PROVENANCE = "provenance.json"
FORMAT = 1
_FENCED = re.compile(r'<untrusted source="([^"]*)">\n~~~~\n(.*?)\n~~~~\n</untrusted>', re.S)
_IGNORED_TOOL_KEYS = frozenset({"cache_control"})


class RecordingError(ValueError):
    """A recording folder that cannot be read or written."""


# --- what an answer is keyed on ------------------------------------------------------------------------


def answer_key(params: Mapping[str, Any]) -> str:
    """The sha256 of what determines the answer to a Messages request (see the module docstring)."""
    keyed = {"model": params.get("model"), "tools": _tools(params), "tool_choice": params.get("tool_choice"),
             "thinking": params.get("thinking"), "messages": [_message(m) for m in params.get("messages") or []]}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def definitions_digest(params: Mapping[str, Any]) -> str:
    """12 hex digits naming the tool definitions a request carried (the same for every turn of a definition set)."""
    return hashlib.sha256(json.dumps(_tools(params), sort_keys=True).encode()).hexdigest()[:12]


def about(params: Mapping[str, Any]) -> dict[str, Any]:
    """What a request asked, for people: model, kind, definitions digest, turn (1 = the first answer of the
    conversation) and the first words of its first message."""
    messages = params.get("messages") or []
    choice = params.get("tool_choice") or {}
    forced = choice.get("name") if choice.get("type") == "tool" else None
    return {"model": params.get("model"), "kind": f"forced {forced}" if forced else "turn",
            "definitions": definitions_digest(params),
            "turn": 1 + sum(1 for m in messages if m.get("role") == "assistant"),
            "prompt": _text(messages[0]["content"])[:160] if messages else ""}


def _tools(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in tool.items() if k not in _IGNORED_TOOL_KEYS} for tool in params.get("tools") or []]


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    return {"role": message.get("role"), "content": [_block(b) for b in blocks]}


def _block(block: Mapping[str, Any]) -> Any:
    if block.get("type") == "text":
        text = str(block.get("text", ""))
        fenced = _FENCED.findall(text)
        return {"type": "text", "data": fenced} if fenced else {"type": "text", "text": text}
    if block.get("type") == "tool_result":
        inner = block.get("content")
        return {"type": "tool_result", "tool_use_id": block.get("tool_use_id"), "is_error": bool(block.get("is_error")),
                "content": inner if isinstance(inner, str) else [_block(b) for b in inner or []]}
    return {k: v for k, v in block.items() if k != "cache_control"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text", "")) for b in content or [] if b.get("type") == "text")


# --- replies as JSON --------------------------------------------------------------------------------------


def reply_json(reply: Reply) -> dict[str, Any]:
    return {"content": list(reply.content), "stop_reason": reply.stop_reason, "usage": reply.usage.to_json(),
            "model": reply.model}


def reply_of(data: Mapping[str, Any]) -> Reply:
    usage = data.get("usage") or {}
    counts = {k: int(usage.get(k, 0)) for k in Usage().to_json()}
    return Reply(content=tuple(dict(b) for b in data.get("content") or []),
                 stop_reason=data.get("stop_reason", "end_turn"), usage=Usage(**counts),
                 model=str(data.get("model", "")))


# --- the folder -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """An opened recording: its folder and provenance (who answered, for which command, which agents and
    proposer). Every command that replays, or defaults its models to a recording's, opens it with `open_recording`."""

    folder: Path
    provenance: Mapping[str, Any]

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(self.provenance.get("agents") or ())

    @property
    def proposer(self) -> str | None:
        chosen = self.provenance.get("proposer")
        return str(chosen) if chosen else None

    def source(self) -> dict[str, Any]:
        """What every output of a replayed run says of its answers: the folder and the provenance's main facts."""
        kept = ("recorded", "command", "agents", "proposer", "answered_by", "endpoint", "models")
        return {"from": str(self.folder), **{k: self.provenance[k] for k in kept if k in self.provenance}}


def open_recording(folder: str | Path) -> Recording:
    """The recording in `folder`, its provenance read; RecordingError naming the folder when it is no recording."""
    return Recording(Path(folder), read_provenance(Path(folder)))


def read_provenance(folder: Path) -> dict[str, Any]:
    """The recording's provenance.json as stored (`open_recording` is how commands open one); RecordingError when
    the folder is no recording."""
    path = folder / PROVENANCE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordingError(f"{folder} is not a recording: it has no {PROVENANCE} (make one with --record)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise RecordingError(f"{path}: cannot read it ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordingError(f"{path}: not a recording of format {FORMAT}")
    return data


def read_answers(folder: Path) -> list[dict[str, Any]]:
    """Every line of answers.jsonl; a torn last line (a recording killed mid-write) is left out."""
    path = folder / ANSWERS
    if not path.exists():
        return []
    out = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise RecordingError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(entry, dict) or not {"key", "reply"} <= set(entry):
            raise RecordingError(f"{path}:{number}: an answer needs 'key' and 'reply'")
        out.append(entry)
    return out


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _sorted_lines(entries: Sequence[Mapping[str, Any]]) -> str:
    def order(e: Mapping[str, Any]) -> tuple[str, str, str, int, str]:
        a = e.get("about") or {}
        return (str(a.get("model")), str(a.get("definitions")), str(a.get("prompt")), int(a.get("turn", 0)), e["key"])
    # a line's own fields in a fixed order; a reply exactly as it came, key order too: the model's order of the
    # fields it wrote is what the run read (a repair request lists the problems in that order)
    return "".join(json.dumps({k: e[k] for k in sorted(e)}, ensure_ascii=False) + "\n"
                   for e in sorted(entries, key=order))


def provenance(command: str, roles: Mapping[str, Any]) -> dict[str, Any]:
    """What a new recording says of itself: the command, who answers what in it (`roles`: agents, proposer, judge),
    the endpoint that answers (ANTHROPIC_BASE_URL, without credentials) and who answered (OPTIMIZER_ANSWERED_BY,
    e.g. "a Claude model answering each request's text as the named model would"; else the endpoint)."""
    endpoint = endpoint_of(os.environ.get("ANTHROPIC_BASE_URL"))
    return {"command": command, **roles, "endpoint": endpoint,
            "answered_by": os.environ.get("OPTIMIZER_ANSWERED_BY") or f"the Messages API at {endpoint}"}


OUTCOME = "outcome.json"


def keep_outcome(folder: str | None, data: Mapping[str, Any]) -> None:
    """A recorded run's results (its summary.json, eval.json or regress.json) beside its answers, so that a replay
    can be held to them; nothing when the run records nothing."""
    if folder:
        _write_atomic(Path(folder) / OUTCOME, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def replay_source(folder: Path) -> dict[str, Any]:
    """What every output of a replayed run says of its answers (`Recording.source`)."""
    return open_recording(folder).source()


def replay_banner(source: Mapping[str, Any]) -> str:
    """The line a replayed run's outputs open with."""
    return (f"REPLAY — every model answer comes from the recording {source['from']} (recorded "
            f"{source.get('recorded', '?')}, answered by {source.get('answered_by', '?')}); no API call was made, "
            "and costs are what the recorded answers would have cost.")


def endpoint_of(base_url: str | None) -> str:
    """The endpoint for provenance, without credentials or query: scheme, host, port and path only."""
    if not base_url:
        return "https://api.anthropic.com"
    match = re.match(r"^([a-z]+://)(?:[^@/]*@)?([^/?#]*)([^?#]*)", base_url)
    return "".join(match.groups()) if match else "(unreadable)"


# --- the two clients ----------------------------------------------------------------------------------------------


class ReplayClient:
    """Answers every request from a recording; no key, no network. `provenance` is the recording's."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.provenance = dict(open_recording(folder).provenance)
        self.answers: dict[str, list[dict[str, Any]]] = {}
        self.asked: dict[str, int] = {}
        for entry in read_answers(folder):
            self.answers.setdefault(entry["key"], []).append(entry)

    async def create(self, **params: Any) -> Reply:
        key = answer_key(params)
        recorded = self.answers.get(key)
        if not recorded:
            raise ReplayMissing(self.missing(params))
        seen = self.asked.get(key, 0)
        self.asked[key] = seen + 1
        return reply_of(recorded[min(seen, len(recorded) - 1)]["reply"])

    async def batched(self, params: dict[str, Any]) -> Reply:
        return await self.create(**params)

    async def count_tokens(self, **params: Any) -> int:
        return 0

    async def close(self) -> None:
        return None

    def missing(self, params: Mapping[str, Any]) -> str:
        """Why a request has no answer here, and how to record it."""
        asked = about(params)
        same_set = [e for e in self._entries() if (e.get("about") or {}).get("definitions") == asked["definitions"]]
        same_prompt = [e for e in same_set if (e.get("about") or {}).get("prompt") == asked["prompt"]]
        if same_prompt:
            why = (f"the recording has this conversation's turns up to {max(e['about']['turn'] for e in same_prompt)}"
                   " on these definitions, but not one that matches the conversation so far: a tool result differs "
                   "from the recorded one (a server whose answers carry times, temporary paths or random ids cannot "
                   "be replayed past them), or the agent's earlier turn does")
        elif same_set:
            why = ("the recording has these definitions, but not this conversation: a changed task prompt, or a "
                   "task the recorded run did not run on these definitions")
        else:
            why = "the recording has no answer on these definitions (changed tool definitions, or a candidate the " \
                  "recorded run did not try)"
        return (f"no recorded answer in {self.folder} for {asked['model']} ({asked['kind']}), conversation "
                f"{asked['prompt'][:80]!r}, definitions {asked['definitions']}, turn {asked['turn']}: {why}. Record "
                f"it with the same command and --record DIR against a model (docs/replay.md)")

    def _entries(self) -> list[dict[str, Any]]:
        return [e for entries in self.answers.values() for e in entries]


class RecordingClient:
    """Sends every request to `inner` and keeps each answer in `folder` (provenance written first; answers appended
    as they arrive, so a run killed halfway keeps what it received, and sorted on `close`)."""

    def __init__(self, inner: MessagesAPI, folder: Path, provenance: Mapping[str, Any]) -> None:
        self.inner, self.folder = inner, folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            existing = read_answers(folder)
            _write_atomic(folder / PROVENANCE, json.dumps(
                {"format": FORMAT, "recorded": dt.date.today().isoformat(), **provenance}, indent=2) + "\n")
        except OSError as exc:
            raise RecordingError(f"--record {folder}: cannot write there ({exc})") from None
        self.known = {(e["key"], json.dumps(e["reply"], sort_keys=True)) for e in existing}
        self.recorded = len(existing)

    async def create(self, **params: Any) -> Reply:
        return self._keep(params, await self.inner.create(**params))

    async def batched(self, params: dict[str, Any]) -> Reply:
        return self._keep(params, await self.inner.batched(params))

    async def count_tokens(self, **params: Any) -> int:
        return await self.inner.count_tokens(**params)

    async def close(self) -> None:
        """Close the API client; sort the answers and name their models in the provenance."""
        await self.inner.close()
        entries = read_answers(self.folder)
        if entries:
            _write_atomic(self.folder / ANSWERS, _sorted_lines(entries))
            data = read_provenance(self.folder)
            data["models"] = sorted({str((e.get("about") or {}).get("model")) for e in entries})
            data["answers"] = len(entries)
            _write_atomic(self.folder / PROVENANCE, json.dumps(data, indent=2) + "\n")

    def _keep(self, params: Mapping[str, Any], reply: Reply) -> Reply:
        entry = {"key": answer_key(params), "about": about(params), "reply": reply_json(reply)}
        seen = (entry["key"], json.dumps(entry["reply"], sort_keys=True))
        if seen not in self.known:
            self.known.add(seen)
            with (self.folder / ANSWERS).open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.recorded += 1
        return reply

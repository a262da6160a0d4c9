"""The journal of a Claude task generation (`tasks generate --resume`): `Journal`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from optimizer.files.atomic import atomic_write
from optimizer.models.base import Reply


class Journal:
    """Each finished turn of a Claude generation (the reply, the calls it made and the results sent back), one JSON
    line per turn in `turns.jsonl`, so that a resumed generation replays them without asking the model or the server
    again. A line cut short by a kill is ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.turns: list[dict[str, Any]] = []
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
            try:
                self.turns.append(json.loads(line))
            except ValueError:
                break
        atomic_write(path, "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in self.turns))

    def stored(self, turn: int) -> dict[str, Any] | None:
        return self.turns[turn] if turn < len(self.turns) else None

    def record(self, reply: Reply, calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> None:
        entry = {"reply": {"content": list(reply.content), "stop_reason": reply.stop_reason,
                           "usage": reply.usage.to_json(), "model": reply.model}, "calls": calls, "results": results}
        self.turns.append(entry)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

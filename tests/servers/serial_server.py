"""A hand-written stdio MCP server that handles one request at a time, as small servers in many languages do: while its
`hang` tool sleeps, nothing else is answered, a ping neither. It honours `notifications/cancelled`: a cancelled call
stops at once (logged on stderr as "cancelled request N") and the server answers again.

Run: `python tests/servers/serial_server.py`.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

TOOLS = [
    {"name": "hang", "description": "Sleep for the given number of seconds, then answer.",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "echo", "description": "Echo the text back unchanged.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True}},
]
_buffer = b""


def receive(timeout: float | None = None) -> dict[str, Any] | None:
    """The next message on stdin, or None when `timeout` seconds pass first; exits at end of input."""
    global _buffer
    deadline = None if timeout is None else time.monotonic() + timeout
    while b"\n" not in _buffer:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([0], [], [], left)[0]:
            return None
        chunk = os.read(0, 65536)
        if not chunk:
            sys.exit(0)
        _buffer += chunk
    line, _, _buffer = _buffer.partition(b"\n")
    return json.loads(line)


def send(message_id: object, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None) -> None:
    body = {"jsonrpc": "2.0", "id": message_id, **({"error": error} if error else {"result": result or {}})}
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def hang(message_id: object, seconds: float, later: list[dict[str, Any]]) -> None:
    """Sleep `seconds`, then answer; a cancel for this call ends it without an answer. Other messages wait in `later`
    (one request at a time)."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        message = receive(left)
        if message is None:
            break
        if message.get("method") == "notifications/cancelled" and message["params"].get("requestId") == message_id:
            print(f"cancelled request {message_id}", file=sys.stderr, flush=True)
            return
        later.append(message)
    send(message_id, {"content": [{"type": "text", "text": f"slept {seconds:g} s"}]})


def handle(message: dict[str, Any], later: list[dict[str, Any]]) -> None:
    method, message_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if message_id is None:
        return  # notifications (a cancel for a call already answered)
    if method == "initialize":
        send(message_id, {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                          "serverInfo": {"name": "serial", "version": "1"}})
    elif method == "tools/list":
        send(message_id, {"tools": TOOLS})
    elif method == "tools/call" and params.get("name") == "hang":
        hang(message_id, float(params["arguments"]["seconds"]), later)
    elif method == "tools/call" and params.get("name") == "echo":
        send(message_id, {"content": [{"type": "text", "text": str(params["arguments"]["text"])}]})
    elif method == "ping":
        send(message_id, {})
    else:
        send(message_id, error={"code": -32601, "message": "Method not found"})


def main() -> None:
    later: list[dict[str, Any]] = []
    while True:
        message = later.pop(0) if later else receive()
        if message is not None:
            handle(message, later)


if __name__ == "__main__":
    main()

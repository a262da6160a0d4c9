"""A hand-written stdio MCP server whose one tool answers with bytes that are not UTF-8 inside its JSON reply, as a
server with a bad encoding would. Run: `python tests/servers/bad_utf8.py`."""

from __future__ import annotations

import json
import sys

TOOL = {"name": "latin1_name", "description": "Give the customer's name as the legacy system stores it.",
        "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}


def reply(message_id: object, result: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n").encode()


for line in sys.stdin.buffer:
    request = json.loads(line)
    method, message_id = request.get("method"), request.get("id")
    if method == "initialize":
        out = reply(message_id, {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                 "serverInfo": {"name": "bad-utf8", "version": "1"}})
    elif method == "tools/list":
        out = reply(message_id, {"tools": [TOOL]})
    elif method == "tools/call":
        out = reply(message_id, {"content": [{"type": "text", "text": "Name: Jos@"}]}).replace(b"@", b"\xe9")
    elif message_id is not None:
        out = reply(message_id, {})  # any other request: an empty result
    else:
        continue  # notifications
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()

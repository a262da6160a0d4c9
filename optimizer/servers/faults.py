"""How a server fails in ways the MCP SDK does not say: lines on stdout that are not MCP (the SDK logs a traceback
for each; these are kept, quoted once in the error instead), and an HTTP server refusing the credentials (the SDK's
error carries no status; the status is asked for again and named).

`NOT_MCP` is installed on the SDK's stdio logger when this module is imported.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import re
import urllib.error
import urllib.request
from collections.abc import Mapping


class NotMcpLines(logging.Handler):
    """Keeps the stdout lines the SDK could not parse as JSON-RPC (it logs a traceback for each) instead of printing
    them: a server that prints anything but MCP on stdout is reported once, with its first lines quoted."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: collections.deque[str] = collections.deque(maxlen=3)

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        found = re.search(r"input_value=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")", str(error or ""))
        if len(self.seen) < 3:
            self.seen.append(found.group(1)[:120] if found else record.getMessage()[:120])

    def lines(self) -> str:
        """The first lines kept since the last call, comma-separated ("" when none)."""
        text = ", ".join(self.seen)
        self.seen.clear()
        return text


NOT_MCP = NotMcpLines()
NOT_MCP_GRACE = 3.0
"""Seconds a server that printed non-MCP lines still gets to complete the handshake (a banner line is forgiven)."""
_SDK_STDIO_LOG = logging.getLogger("mcp.client.stdio")
_SDK_STDIO_LOG.addHandler(NOT_MCP)
_SDK_STDIO_LOG.propagate = False


async def http_refusal(url: str, headers: Mapping[str, str]) -> str | None:
    """After an HTTP connection failed: when the URL answers 401 or 403, say so and what to give (the SDK's own
    error does not carry the status). None for any other answer."""
    status = await asyncio.to_thread(_status_of, url, dict(headers))
    if status == 401:
        given = "the --header credentials were not accepted" if headers else "no credentials were given"
        return (f"the server answered HTTP 401 Unauthorized ({given}); pass them with --header, e.g. "
                "--header 'Authorization: Bearer <token>'")
    if status == 403:
        return ("the server answered HTTP 403 Forbidden: the credentials were read but do not allow this; check "
                "the token's scopes or the --header values")
    return None


def _status_of(url: str, headers: dict[str, str]) -> int | None:
    """The HTTP status an MCP initialize request to `url` gets, or None when nothing answers."""
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "optimizer", "version": "0"}}})
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        **headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - the user's own server URL
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError, ValueError):
        return None

"""What the MCP SDK's answers become here: a listed tool as a `ToolDef`, a call's content blocks as the text an agent
reads. Duck-typed on the SDK's models (only `connections.py` imports `mcp`)."""

from __future__ import annotations

import json
from typing import Any

from optimizer.definitions import ToolDef


def tool_def(tool: Any) -> ToolDef:
    """A `tools/list` entry (the SDK's `Tool`) as a ToolDef, fields as they are on the wire."""
    wire = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return ToolDef(
        name=wire["name"],
        description=wire.get("description") or "",
        input_schema=wire.get("inputSchema") or {"type": "object", "properties": {}},
        output_schema=wire.get("outputSchema"),
        annotations=wire.get("annotations") or None,
        title=wire.get("title"),
    )


def result_text(content: list[Any], structured: Any) -> str:
    """A tool result's content blocks as one text (other than text blocks named in brackets); the structured content
    as JSON when there are no blocks."""
    parts: list[str] = []
    for block in content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            parts.append(f"[image {getattr(block, 'mime_type', '')}]")
        elif kind == "resource_link":
            parts.append(f"[resource {getattr(block, 'uri', '')}]")
        elif kind == "resource":
            resource = block.resource
            parts.append(getattr(resource, "text", None) or f"[resource {getattr(resource, 'uri', '')}]")
        else:
            parts.append(f"[{kind} content]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, sort_keys=True, ensure_ascii=False))
    return "\n".join(parts)

"""Two well-written tool definitions of a small shop, and the annotations of a reader and a writer: the clean
baseline that lint rule tests plant one problem into."""

from __future__ import annotations

from optimizer.definitions import ToolDef

READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
ORDER = ToolDef(
    name="lookup_order",
    description="Look up one order by its number when a customer asks what they bought or its status. Returns the "
    "items, the total in cents and the status. Not for parcel tracking; use track_shipment instead.",
    input_schema={"type": "object", "required": ["order_id"], "properties": {
        "order_id": {"type": "string", "description": "Order number like #NNNNN."},
        "detail": {"type": "string", "enum": ["summary", "items", "payments"], "description": "How much to show."}}},
    annotations=READ,
)
TRACK = ToolDef(
    name="track_shipment",
    description="Track a parcel in transit when someone asks where their delivery is. Returns the carrier and the "
    "latest scan. Not for order contents; use lookup_order instead.",
    input_schema={"type": "object", "required": ["number"],
                  "properties": {"number": {"type": "string", "description": "Tracking number."}}},
    annotations=READ,
)

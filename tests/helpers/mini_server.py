"""A small in-memory MCP server for tests: customers, orders, shipments and one destructive tool.

`CALLS` records every call that reaches the server as (tool name, arguments), so tests can check
what the harness really sent. Clear it at the start of a test with `reset()`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

server = MCPServer("mini")
CALLS: list[tuple[str, dict[str, Any]]] = []

CUSTOMERS = {"jane@x.com": {"id": "C-1042", "name": "Jane Doe", "email": "jane@x.com"}}
ORDERS = {
    "#10007": {"order": "#10007", "customer": "C-1042", "total": "$54.20", "status": "shipped"},
    "#10008": {"order": "#10008", "customer": "C-1042", "total": "$12.00", "status": "processing"},
}


def reset() -> None:
    CALLS.clear()


@server.tool(description="Get customer info")
def get_customer(email: Annotated[str, Field(description="The customer's email address.")]) -> str:
    CALLS.append(("get_customer", {"email": email}))
    customer = CUSTOMERS.get(email)
    if customer is None:
        raise ToolError(f"business: no customer with email {email}")
    return json.dumps(customer)


@server.tool(description="Get order details")
def lookup_order(order_id: Annotated[str, Field(description="The order number, e.g. #12345.")]) -> str:
    CALLS.append(("lookup_order", {"order_id": order_id}))
    if not re.fullmatch(r"#\d{5}", order_id):
        raise ToolError("validation: order_id must look like #12345")
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError(f"business: no order {order_id}")
    return json.dumps(order)


@server.tool(description="List a customer's orders by customer id.")
def list_orders(customer_id: Annotated[str, Field(description="Customer id like C-1042.")]) -> str:
    CALLS.append(("list_orders", {"customer_id": customer_id}))
    return json.dumps([o["order"] for o in ORDERS.values() if o["customer"] == customer_id])


@server.tool(description="Delete a customer account for good.", annotations=ToolAnnotations(destructiveHint=True))
def delete_customer(customer_id: Annotated[str, Field(description="Customer id like C-1042.")]) -> str:
    CALLS.append(("delete_customer", {"customer_id": customer_id}))
    return "deleted"


@server.tool(description="Export the full audit log as text.")
def export_log(lines: Annotated[int, Field(description="How many lines.")] = 5000) -> str:
    CALLS.append(("export_log", {"lines": lines}))
    return "\n".join(f"line {i}: all quiet" for i in range(lines))

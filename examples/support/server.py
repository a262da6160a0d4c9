"""A customer-support MCP server whose tool definitions are thin ON PURPOSE.

This is the demo target of the tool-definition optimizer. The tools work, but their definitions look
the way many real servers ship them: one-phrase descriptions (one is empty), overlapping names
("Get status" vs "Check status", get_customer vs get_account, lookup_order vs track_shipment),
parameters without descriptions and with loose types. Typical traps a model cannot see:

- refund_order's `amount` is in CENTS ($25.00 -> 2500); 25 refunds 25 cents and still succeeds.
- list_orders, get_account and update_customer need a customer id like C-1004, not an email.
- get_customer takes an email, a phone like +1-555-0104 or an id like C-1004, never a name.
- dates are ISO (YYYY-MM-DD); order numbers look like #10007; tickets like T-507.

Do not "fix" the definitions here: the optimizer measures agents on them and proposes rewrites.

Errors are ToolError results whose message starts with a category: `validation:` (fix the input),
`business:` (do not retry; take another path), `permission:` (escalate) or `transient:` (retry later).
A query that finds nothing is not an error. Every result is a pure function of the arguments: the
mutating tools return deterministic confirmations and change no state, so many agent episodes can
share one server process.

Run: `python server.py` (stdio) or `python server.py --http 8931` (http://127.0.0.1:8931/mcp).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import re
from datetime import date
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations


def _load_data():
    """Load data.py next to this file under a private name, whatever the working directory."""
    path = Path(__file__).resolve().with_name("data.py")
    spec = importlib.util.spec_from_file_location("_support_example_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


D = _load_data()

server = MCPServer("support", log_level="WARNING")

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)


# ----------------------------------------------------------------------------------------------
# Tools: the definitions (name, docstring, parameters) are deliberately thin.
# ----------------------------------------------------------------------------------------------

@server.tool(annotations=READ, structured_output=False)
def get_customer(query: str) -> str:
    """Get customer info"""
    cid = _find_customer(query)
    name, email, phone, tier, status, since, address = D.CUSTOMERS[cid]
    return (f"Customer {cid}: {name} - email {email}, phone {phone}, tier {tier}, status {status}, "
            f"customer since {since}, shipping address {address}.")


@server.tool(annotations=READ, structured_output=False)
def get_account(id: str) -> str:
    """Get account"""
    cid = _customer_id(id, "id")
    name, *_rest = D.CUSTOMERS[cid]
    if D.CUSTOMERS[cid][4] == "closed":
        raise ToolError(f"permission: billing records of closed account {cid} are restricted to the "
                        "billing team; escalate a ticket to a supervisor to request them.")
    plan, price, period, balance, next_invoice, method, autopay, note = D.ACCOUNTS[cid]
    text = f"Billing account {cid} ({name}): plan {plan}"
    text += f" at {_money(price)}/{period}" if price else " (no charge)"
    text += f", balance due {_money(balance)}"
    text += f", next invoice {next_invoice}" if next_invoice else ", no invoice scheduled"
    text += f", payment method {method}, autopay {'on' if autopay else 'off'}."
    if note:
        text += f" Note: {note}."
    return text


@server.tool(annotations=READ, structured_output=False)
def lookup_order(order_id: str) -> str:
    """Get order details"""
    num = _order_number(order_id, "order_id")
    o = D.ORDERS[num]
    name = D.CUSTOMERS[o["customer"]][0]
    items = "; ".join(f"{item} x{qty} ({_money(price)} each)" for item, qty, price in o["items"])
    text = (f"Order #{num} for {name} ({o['customer']}): status {o['status']}, total {_money(_total(num))}, "
            f"placed {o['placed']}. Items: {items}. Paid with {D.ACCOUNTS[o['customer']][5]}.")
    if "ship" in o:
        carrier, tracking, shipped = o["ship"]
        text += f" Shipped {shipped} via {carrier}, tracking number {tracking}."
    return text


@server.tool(annotations=READ, structured_output=False)
def list_orders(customer: str, since: str = "") -> str:
    """List orders"""
    cid = _customer_id(customer, "customer")
    if since and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", since.strip()):
        raise ToolError(f"validation: since must be an ISO date YYYY-MM-DD, e.g. 2026-03-01 (got '{since}').")
    since = since.strip()
    name = D.CUSTOMERS[cid][0]
    every = sorted((n for n, o in D.ORDERS.items() if o["customer"] == cid),
                   key=lambda n: D.ORDERS[n]["placed"])
    chosen = [n for n in every if D.ORDERS[n]["placed"] >= since]
    window = f" since {since}" if since else ""
    if not chosen:
        return f"No orders for {name} ({cid}){window} (the customer has {len(every)} orders in total)."
    lines = [f"#{n} placed {D.ORDERS[n]['placed']}, {D.ORDERS[n]['status']}, {_money(_total(n))}"
             for n in chosen]
    noun = "order" if len(chosen) == 1 else "orders"
    return f"{len(chosen)} {noun} for {name} ({cid}){window}: " + "; ".join(lines) + "."


@server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                         open_world_hint=True), structured_output=False)
def track_shipment(number: str) -> str:
    """Get status"""
    num = _shipment_order(number)
    o = D.ORDERS[num]
    if o["status"] == "cancelled":
        raise ToolError(f"business: order #{num} was cancelled before it shipped; there is no shipment "
                        "to track.")
    if "ship" not in o:
        return (f"No carrier scans yet for order #{num} ({o['customer']}): a label will be created when it "
                "leaves the warehouse, usually within 1 business day.")
    carrier, tracking, _shipped = o["ship"]
    if num in D.TRACKING_DOWN:
        raise ToolError(f"transient: the {carrier} tracking system is temporarily unavailable; retry in "
                        "a few seconds.")
    text = f"{carrier} {tracking} (order #{num}, {o['customer']}): {o['track']}"
    if o.get("eta"):
        text += f"; estimated delivery {o['eta']}"
    return text + "."


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                         open_world_hint=True), structured_output=False)
def refund_order(order: str, amount: int) -> str:
    """Process refund"""
    num = _order_number(order, "order")
    if amount <= 0:
        raise ToolError(f"validation: amount must be a positive whole number (got {amount}).")
    o = D.ORDERS[num]
    cid = o["customer"]
    name, _e, _p, tier, status, *_ = D.CUSTOMERS[cid]
    if status == "closed":
        raise ToolError(f"permission: account {cid} is closed; refunds on closed accounts need a "
                        "supervisor - escalate a ticket.")
    if o["status"] == "cancelled":
        raise ToolError(f"business: order #{num} was cancelled before it shipped and was never charged; "
                        "there is nothing to refund.")
    if o["status"] in ("processing", "shipped"):
        raise ToolError(f"business: order #{num} has status {o['status']} and cannot be refunded until it is "
                        "delivered; cancel it or wait for delivery.")
    if _days_between(o["delivered"], D.TODAY) > D.REFUND_WINDOW_DAYS:
        raise ToolError(f"business: order #{num} was delivered {o['delivered']}, outside the "
                        f"{D.REFUND_WINDOW_DAYS}-day refund window; it cannot be refunded (a warranty claim "
                        "may still apply).")
    if tier == "vip":
        raise ToolError(f"permission: refunds on VIP account {cid} need supervisor approval; escalate a "
                        "ticket instead of refunding directly.")
    total = _total(num)
    refunded = sum(r[1] for r in D.REFUNDS.values() if r[0] == num and r[2] != "denied")
    left = total - refunded
    if amount > left:
        raise ToolError(f"business: a refund of {_money(amount)} exceeds the refundable balance "
                        f"{_money(left)} on order #{num} (total {_money(total)}, already refunded "
                        f"{_money(refunded)}).")
    ref = "RF-" + _hash("refund", num, amount)
    return (f"Refund {ref} submitted: {_money(amount)} on order #{num} for {name} ({cid}), back to "
            f"{D.ACCOUNTS[cid][5]}; it posts in 5-7 business days. Refundable balance left on the order: "
            f"{_money(left - amount)}.")


@server.tool(structured_output=False)
def check_refund(id: str) -> str:
    """Check status"""
    key = id.strip()
    if re.fullmatch(r"(?i)rf-[0-9a-f]{6}", key):
        ref = "RF-" + key[3:].lower()
        if ref not in D.REFUNDS:
            raise ToolError(f"business: there is no refund {ref} on record.")
        return _refund_line(ref)
    if re.fullmatch(r"#?\d{5}", key):
        num = _order_number(key, "id")
        refs = [r for r, v in D.REFUNDS.items() if v[0] == num]
        if not refs:
            return f"No refunds on order #{num} (checked {len(D.REFUNDS)} refund records)."
        return " ".join(_refund_line(r) for r in refs)
    raise ToolError(f"validation: id must be a refund id like RF-1a2b3c or an order number like #10042 "
                    f"(got '{id}').")


@server.tool(annotations=READ, structured_output=False)
def search_tickets(q: str, status: str = "") -> str:
    """Search"""
    status = status.strip().lower()
    if status and status not in ("open", "pending", "closed"):
        raise ToolError(f"validation: status must be open, pending or closed (got '{status}').")
    words = [w for w in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", q.lower()) if len(w) > 2 and w not in _STOP]
    scored = []
    for tid, (cid, subject, body, st, queue, _prio, opened) in D.TICKETS.items():
        if status and st != status:
            continue
        hay = set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", f"{tid} {cid} {subject} {body}".lower()))
        score = sum(1 for w in words if w in hay or (len(w) > 4 and any(h.startswith(w[:5]) for h in hay)))
        if score:
            line = f"{tid} [{st}] {subject} - customer {cid}, queue {queue}, opened {opened}"
            scored.append((-score, tid, line))
    pool = sum(1 for t in D.TICKETS.values() if not status or t[3] == status)
    where = f" {status}" if status else ""
    if not scored:
        return f"No{where} tickets match '{q}' (searched {pool} tickets)."
    scored.sort()
    shown = [line for _s, _t, line in scored[:5]]
    more = f" (showing the best 5 of {len(scored)})" if len(scored) > 5 else ""
    noun = "ticket matches" if len(scored) == 1 else "tickets match"
    return f"{len(scored)}{where} {noun} '{q}'{more}: " + "; ".join(shown) + "."


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                         open_world_hint=False), structured_output=False)
def create_ticket(customer: str, subject: str, body: str = "", priority: str = "normal") -> str:
    """Create a ticket"""
    key = customer.strip()
    if "@" in key:
        cid = next((c for c, row in D.CUSTOMERS.items() if row[1] == key.lower()), "")
        if not cid:
            raise ToolError(f"business: cannot open a ticket: {key} is not a customer's email on file.")
    else:
        cid = _customer_id(key, "customer", also="or an email address")
    priority = priority.strip().lower() or "normal"
    if priority not in ("low", "normal", "high", "urgent"):
        raise ToolError(f"validation: priority must be low, normal, high or urgent (got '{priority}').")
    if not subject.strip():
        raise ToolError("validation: subject must not be empty.")
    text = f"{subject} {body}".lower()
    queue = next((q for q, words in D.QUEUE_WORDS if any(w in text for w in words)), "product")
    tid = f"T-{700 + int(_hash('ticket', cid), 16) % 300}"
    return (f"Created ticket {tid} for {D.CUSTOMERS[cid][0]} ({cid}): '{subject.strip()}', "
            f"priority {priority}, {queue} queue. The customer gets an email confirmation.")


@server.tool(structured_output=False)
def escalate(id: str, reason: str = "") -> str:
    key = id.strip().upper()
    if not re.fullmatch(r"T-\d{3}", key):
        raise ToolError(f"validation: id must be a ticket id like T-501 (got '{id}').")
    if key not in D.TICKETS:
        raise ToolError(f"business: there is no ticket {key}.")
    cid, subject, _body, status, queue, _prio, _opened = D.TICKETS[key]
    if status == "closed":
        raise ToolError(f"business: ticket {key} is closed and cannot be escalated; open a new ticket and "
                        "escalate that one.")
    ref = "ESC-" + _hash("escalate", key)
    return (f"Ticket {key} ('{subject}', {cid}) escalated to {D.SUPERVISORS[queue]}, {queue} supervisor, "
            f"reference {ref}. A supervisor replies within 4 business hours.")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                         open_world_hint=False), structured_output=False)
def update_customer(customer_id: str, field: str, value: str) -> str:
    """Update info"""
    cid = _customer_id(customer_id, "customer_id")
    field = field.strip().lower()
    if field not in ("email", "phone", "address"):
        raise ToolError(f"validation: field must be one of email, phone, address (got '{field}').")
    name, email, phone, _tier, status, _since, address = D.CUSTOMERS[cid]
    if status == "closed":
        raise ToolError(f"permission: account {cid} is closed; changes to closed accounts need a "
                        "supervisor - escalate a ticket.")
    value = value.strip()
    if field == "email":
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", value.lower()):
            raise ToolError(f"validation: '{value}' is not an email address.")
        new, old, norm = value.lower(), email, value.lower()
    elif field == "phone":
        new = _phone(value)
        if not new:
            raise ToolError(f"validation: phone must look like +1-555-0100 (got '{value}').")
        old, norm = phone, new
    else:
        if len(value) < 8:
            raise ToolError(f"validation: address looks incomplete (got '{value}'); give street, city, "
                        "state and ZIP.")
        new, old, norm = value, address, re.sub(r"[^a-z0-9]", "", value.lower())
    ref = "UC-" + _hash("update", cid, field, norm)
    return f"Updated {field} of {name} ({cid}) from {old} to {new} (change reference {ref})."


@server.tool(structured_output=False)
def get_policy(topic: str) -> str:
    """Get policy"""
    text = topic.strip().lower()
    best, best_hits = None, 0
    for key, (patterns, _body) in D.POLICIES.items():
        hits = (10 if text == key else 0) + sum(1 for p in patterns if re.search(p, text))
        if hits > best_hits:
            best, best_hits = key, hits
    if best is None:
        return f"No policy matches '{topic}'. Topics: {', '.join(D.POLICIES)}."
    return f"{best.capitalize()} policy: {D.POLICIES[best][1]}"


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------

_STOP = {"the", "and", "for", "any", "about", "with", "ticket", "tickets", "that", "this", "there", "has",
         "have", "was", "are", "is", "a", "an", "of", "on", "to", "it", "its", "from", "already", "find",
         "search", "show", "open", "someone", "anyone", "customer", "customers", "did", "does", "our"}


_TRACKING = re.compile(r"(?i)1Z\w{16}|\d{10,22}")


def _phone(value: str) -> str:
    """'+1-555-0104', '555 0104', '(555) 0104' -> '+1-555-0104'; 10 digits keep an area code; else ''."""
    if not re.fullmatch(r"[\d\s()+.\-]+", value.strip()):
        return ""
    d = re.sub(r"\D", "", value)
    if len(d) in (7, 8) and (len(d) == 7 or d[0] == "1"):
        return f"+1-{d[-7:-4]}-{d[-4:]}"
    if len(d) in (10, 11) and (len(d) == 10 or d[0] == "1"):
        return f"+1-{d[-10:-7]}-{d[-7:-4]}-{d[-4:]}"
    return ""


def _money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def _hash(*parts: object) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:6]


def _total(num: str) -> int:
    return sum(qty * price for _item, qty, price in D.ORDERS[num]["items"])


def _days_between(a: str, b: str) -> int:
    return (date.fromisoformat(b) - date.fromisoformat(a)).days


def _customer_id(value: str, param: str, also: str = "") -> str:
    m = re.fullmatch(r"(?i)c-?(\d{4})", value.strip())
    if not m:
        extra = f" {also}" if also else "; emails, phones and names are not accepted here"
        raise ToolError(f"validation: {param} must be a customer id like C-1042{extra} (got '{value}').")
    cid = f"C-{m.group(1)}"
    if cid not in D.CUSTOMERS:
        raise ToolError(f"business: there is no customer {cid}.")
    return cid


def _find_customer(query: str) -> str:
    q = query.strip()
    if re.fullmatch(r"(?i)c-?\d{4}", q):
        return _customer_id(q, "query")
    if "@" in q:
        for cid, c in D.CUSTOMERS.items():
            if c[1] == q.lower():
                return cid
        raise ToolError(f"business: no customer matches '{q}'.")
    phone = _phone(q)
    if phone:
        for cid, c in D.CUSTOMERS.items():
            if c[2] == phone:
                return cid
        raise ToolError(f"business: no customer matches '{q}'.")
    raise ToolError("validation: query must be an email address, a phone number like +1-555-0100 or a "
                    f"customer id like C-1042; names are not searchable (got '{query}').")


def _order_number(value: str, param: str) -> str:
    v = value.strip()
    m = re.fullmatch(r"#?\s*(\d{5})", v)
    if not m:
        hint = " - that looks like a carrier tracking number" if _TRACKING.fullmatch(v) else ""
        raise ToolError(f"validation: {param} must be an order number like #10042 (got '{value}'){hint}.")
    if m.group(1) not in D.ORDERS:
        raise ToolError(f"business: there is no order #{m.group(1)}.")
    return m.group(1)


def _shipment_order(value: str) -> str:
    v = value.strip()
    if re.fullmatch(r"#?\s*\d{5}", v):
        return _order_number(v, "number")
    for num, o in D.ORDERS.items():
        if "ship" in o and o["ship"][1].lower() == v.lower():
            return num
    if _TRACKING.fullmatch(v):
        raise ToolError(f"business: no shipment has tracking number {v}.")
    raise ToolError(f"validation: number must be a carrier tracking number or an order number like #10042 "
                    f"(got '{value}').")


def _refund_line(ref: str) -> str:
    num, amount, status, requested, detail = D.REFUNDS[ref]
    return (f"Refund {ref} on order #{num}: {_money(amount)}, status {status}, requested {requested}, "
            f"{detail}.")


def main() -> None:
    parser = argparse.ArgumentParser(description="Customer-support MCP server (thin definitions on purpose)")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()

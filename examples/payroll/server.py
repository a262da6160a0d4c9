"""An HR and payroll MCP server whose definitions leave out what a model cannot guess — ON PURPOSE.

The tools work and their names are plain, but the definitions say nothing of the formats the server insists on,
the way many internal services ship. A capable model picks the right tool and still sends a value the server
refuses, unless the definition tells it:

- employee ids are `E-` and five digits: "employee 42" is `E-00042`;
- dates are day-first, `DD/MM/YYYY` (3 March 2026 is `03/03/2026`), and payslip months `MM/YYYY`;
- amounts are whole pence: £12.50 is `1250` (claims under £1.00 are refused, so a pound figure fails);
- an expense category is one of `travel`, `meals`, `equipment`; a leave kind one of `annual`, `sick`, `unpaid`;
  an expense status filter one of `pending`, `approved`, `rejected`; a policy topic one of `expenses`, `leave`,
  `payroll`;
- `submit_expense` is the retired v1 ledger and refuses every claim; `file_expense` is the one that works.

Do not "fix" the definitions here: the optimizer measures readers on them and proposes rewrites.

Errors are ToolError results whose message starts with a category (`validation:`, `business:`, `permission:`) and
says what the server expects, as a good server does. Every result is a pure function of the arguments: the tools that
record something return deterministic references and change no state, so episodes can share one server process.

Run: `python server.py` (stdio) or `python server.py --http 8932` (http://127.0.0.1:8932/mcp).
"""

from __future__ import annotations

import argparse
import hashlib
import re
from datetime import date as Day

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("payroll", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RECORD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

# id: (name, email, team, annual salary in pence, annual leave days left, sick days taken this year)
EMPLOYEES = {
    "E-00007": ("Priya Nair", "priya.nair@northwind.example", "Finance", 5_400_000, 14, 2),
    "E-00042": ("Tomás Ortega", "tomas.ortega@northwind.example", "Engineering", 6_800_000, 9, 0),
    "E-00117": ("Grace Mbeki", "grace.mbeki@northwind.example", "Sales", 4_900_000, 21, 4),
    "E-00230": ("Hiroshi Sato", "hiroshi.sato@northwind.example", "Engineering", 7_200_000, 3, 1),
    "E-00315": ("Leonie Fischer", "leonie.fischer@northwind.example", "People", 5_100_000, 17, 0),
    "E-00408": ("Samuel Okafor", "samuel.okafor@northwind.example", "Operations", 3_900_000, 11, 6),
    "E-00511": ("Ana Lima", "ana.lima@northwind.example", "Design", 5_600_000, 0, 3),
    "E-00623": ("Declan Byrne", "declan.byrne@northwind.example", "Sales", 4_600_000, 25, 0),
    "E-00734": ("Mei Chen", "mei.chen@northwind.example", "Finance", 6_100_000, 8, 2),
    "E-00856": ("Olusegun Adeyemi", "olusegun.adeyemi@northwind.example", "Operations", 4_200_000, 19, 1),
    "E-00901": ("Ingrid Larsen", "ingrid.larsen@northwind.example", "Engineering", 8_100_000, 12, 0),
    "E-01024": ("Rafael Costa", "rafael.costa@northwind.example", "Design", 5_300_000, 5, 9),
}
# expense id: (employee, amount in pence, category, date, status, note)
EXPENSES = {
    "EXP-3101": ("E-00042", 4_250, "travel", "12/10/2026", "approved", "train to the Leeds office"),
    "EXP-3102": ("E-00042", 1_890, "meals", "13/10/2026", "pending", "team lunch"),
    "EXP-3110": ("E-00117", 23_999, "equipment", "02/11/2026", "rejected", "headset over the limit"),
    "EXP-3111": ("E-00117", 3_600, "travel", "05/11/2026", "pending", "taxi to a client"),
    "EXP-3120": ("E-00230", 129_900, "equipment", "20/09/2026", "approved", "laptop dock and monitor"),
    "EXP-3125": ("E-00408", 2_275, "meals", "28/10/2026", "pending", "night shift dinner"),
    "EXP-3130": ("E-00734", 8_800, "travel", "01/11/2026", "approved", "flight change fee"),
    "EXP-3131": ("E-00734", 1_450, "meals", "01/11/2026", "rejected", "no receipt"),
}
POLICIES = {
    "expenses": "Claims are filed within 90 days in whole pence, £1.00 minimum, in one of three categories: travel, "
                "meals or equipment. Equipment over £500.00 needs a manager's approval first.",
    "leave": "Annual leave is 25 days a year; sick leave needs a note after 7 days; unpaid leave up to 20 days a "
             "year needs the People team's approval. Requests need a start and end date.",
    "payroll": "Pay day is the last working day of the month; payslips are published on the 25th. Salaries are paid "
               "in twelve equal parts; tax code 1257L unless told otherwise.",
}
CATEGORIES = ("travel", "meals", "equipment")
LEAVE_KINDS = ("annual", "sick", "unpaid")
STATUSES = ("pending", "approved", "rejected")


@server.tool(annotations=READ, structured_output=False)
def find_employee(name: str) -> str:
    """Find employee"""
    wanted = name.strip().lower()
    hits = [f"{eid}: {e[0]} ({e[2]}, {e[1]})" for eid, e in EMPLOYEES.items()
            if wanted and (wanted in e[0].lower() or wanted == e[1])]
    return "\n".join(hits) if hits else f"No employee matches '{name}'."


@server.tool(annotations=READ, structured_output=False)
def get_employee(id: str) -> str:
    """Get employee"""
    eid = _employee(id)
    name, email, team, salary, leave, sick = EMPLOYEES[eid]
    return f"{eid}: {name}, {team}, {email}, annual salary {_money(salary)}."


@server.tool(annotations=READ, structured_output=False)
def get_payslip(id: str, month: str) -> str:
    """Get payslip"""
    eid = _employee(id)
    m = re.fullmatch(r"(\d{2})/(\d{4})", month.strip())
    if not m or not 1 <= int(m.group(1)) <= 12:
        raise ToolError(f"validation: month must be MM/YYYY, e.g. 07/2026 (got '{month}').")
    if (int(m.group(2)), int(m.group(1))) > (2026, 11):
        raise ToolError(f"business: the payslip for {month} is not published yet (payslips appear on the 25th).")
    gross = EMPLOYEES[eid][3] // 12
    tax = gross * 21 // 100
    return (f"Payslip {eid} {month}: gross {_money(gross)}, tax {_money(tax)}, net {_money(gross - tax)}, "
            f"paid on the last working day of the month.")


@server.tool(annotations=READ, structured_output=False)
def get_pay_summary(id: str, year: str) -> str:
    """Pay summary"""
    eid = _employee(id)
    if not re.fullmatch(r"\d{4}", year.strip()):
        raise ToolError(f"validation: year must be four digits, e.g. 2025 (got '{year}').")
    months = 11 if year.strip() == "2026" else 12
    gross = EMPLOYEES[eid][3] // 12 * months
    return (f"Pay summary {eid} {year.strip()}: {months} payslips, gross {_money(gross)}, tax "
            f"{_money(gross * 21 // 100)} to date.")


@server.tool(annotations=RECORD, structured_output=False)
def submit_expense(id: str, amount: int, description: str = "") -> str:
    """Submit an expense"""
    raise ToolError("business: the v1 expense ledger closed on 01/10/2026 and takes no new claims; file claims with "
                    "file_expense.")


@server.tool(annotations=RECORD, structured_output=False)
def file_expense(id: str, amount: int, category: str, date: str, note: str = "") -> str:
    """File expense"""
    eid = _employee(id)
    if amount < 100:
        raise ToolError(f"validation: amount is in whole pence and claims start at 100 (£1.00); got {amount}.")
    _choice(category, CATEGORIES, "category")
    day = _date(date, "date")
    ref = "EXP-" + _digest(eid, amount, category, day)[:4].upper()
    return (f"Expense {ref} filed for {eid}: {_money(amount)} {category} on {day}, pending approval.")


@server.tool(annotations=READ, structured_output=False)
def list_expenses(id: str, status: str = "") -> str:
    """List expenses"""
    eid = _employee(id)
    if status:
        _choice(status, STATUSES, "status")
    rows = [f"{xid}: {_money(x[1])} {x[2]} on {x[3]}, {x[4]} ({x[5]})" for xid, x in EXPENSES.items()
            if x[0] == eid and (not status or x[4] == status)]
    return "\n".join(rows) if rows else f"No {status + ' ' if status else ''}expenses for {eid}."


@server.tool(annotations=RECORD, structured_output=False)
def request_leave(id: str, kind: str, start: str, end: str) -> str:
    """Request leave"""
    eid = _employee(id)
    _choice(kind, LEAVE_KINDS, "kind")
    first, last = _date(start, "start"), _date(end, "end")
    days = (_parsed(last) - _parsed(first)).days + 1
    if days < 1:
        raise ToolError(f"validation: end ({last}) is before start ({first}).")
    if kind == "annual" and days > EMPLOYEES[eid][4]:
        raise ToolError(f"business: {eid} has {EMPLOYEES[eid][4]} annual leave days left; {days} requested.")
    ref = "LV-" + _digest(eid, kind, first, last)[:5].upper()
    return f"Leave {ref} requested for {eid}: {kind}, {first} to {last} ({days} days), awaiting approval."


@server.tool(annotations=READ, structured_output=False)
def get_leave_balance(id: str) -> str:
    """Leave balance"""
    eid = _employee(id)
    _, _, _, _, leave, sick = EMPLOYEES[eid]
    return f"{eid}: {leave} annual leave days left this year; {sick} sick days taken."


@server.tool(annotations=READ, structured_output=False)
def get_policy(topic: str) -> str:
    """Get policy"""
    key = _choice(topic, tuple(POLICIES), "topic")
    return POLICIES[key]


def _employee(value: str) -> str:
    v = value.strip()
    if not re.fullmatch(r"E-\d{5}", v):
        raise ToolError(f"validation: an employee id is E- and five digits, e.g. E-00042 (got '{value}').")
    if v not in EMPLOYEES:
        raise ToolError(f"business: there is no employee {v}.")
    return v


def _choice(value: str, allowed: tuple[str, ...], param: str) -> str:
    if value.strip() not in allowed:
        raise ToolError(f"validation: {param} must be one of {', '.join(allowed)} (got '{value}').")
    return value.strip()


def _date(value: str, param: str) -> str:
    v = value.strip()
    if not re.fullmatch(r"\d{2}/\d{2}/\d{4}", v):
        raise ToolError(f"validation: {param} must be a day-first date DD/MM/YYYY, e.g. 09/04/2026 (got '{value}').")
    try:
        _parsed(v)
    except ValueError:
        raise ToolError(f"validation: {param} '{value}' is not a calendar date (DD/MM/YYYY).") from None
    return v


def _parsed(day: str) -> Day:
    d, m, y = (int(p) for p in day.split("/"))
    return Day(y, m, d)


def _money(pence: int) -> str:
    return f"£{pence // 100:,}.{pence % 100:02d}"


def _digest(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description="HR and payroll MCP server (definitions without formats on purpose)")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()

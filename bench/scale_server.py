"""A synthetic MCP server with N tools, and its task set — for bench/scale.py (how the optimize loop scales with the
number of tools).

Real catalogs come in families of similar tools, so this one is built the same way: F record families (orders,
invoices, customers, tickets, shipments, …) × six verbs (get_, list_, search_, create_, update_, cancel_), the
first N (family, verb) pairs in family order. Definitions are short and thin ON PURPOSE, the way many internal
services ship: they say nothing of the formats the server insists on, and siblings (get vs search, list vs search,
update vs cancel, orders vs shipments vs returns) leave near-misses between them.

- ids are the family's prefix, a dash and four digits: "order 4821" is `ORD-4821`;
- statuses are one of the family's words (orders: pending, packed, shipped, delivered);
- dates are ISO `YYYY-MM-DD` in even-numbered families and day-first `DD/MM/YYYY` in odd-numbered ones;
- a search query is at least 3 characters.

Errors are ToolError results whose message starts with a category (`validation:`, `business:`) and says what the
server expects. Every result is a pure function of the arguments: the tools that record something return
deterministic references and change no state, so episodes can share one server process.

    python bench/scale_server.py --tools 50                     # serve 50 tools over stdio
    python bench/scale_server.py --tools 50 --write-tasks DIR   # write DIR/tasks.yaml (about 2 tasks per tool)
    python bench/scale_server.py --tools 50 --http 8950         # http://127.0.0.1:8950/mcp
"""

import argparse
import hashlib
import re
from dataclasses import dataclass
from datetime import date as Day
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RECORD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
VERBS = ("get", "list", "search", "create", "update", "cancel")


@dataclass(frozen=True)
class Family:
    noun: str
    """singular, as in the tool names (`get_order`)"""
    plural: str
    prefix: str
    statuses: tuple[str, ...]
    alias: str
    """what a user calls one (a purchase, a bill): prompts use it half the time instead of the noun"""
    number: int

    @property
    def day_first(self) -> bool:
        return self.number % 2 == 1

    def tool(self, verb: str) -> str:
        return f"{verb}_{self.plural if verb in ('list', 'search') else self.noun}"


_FAMILIES = [
    ("order", "orders", "ORD", ("pending", "packed", "shipped", "delivered"), "purchase"),
    ("invoice", "invoices", "INV", ("draft", "sent", "paid", "overdue"), "bill"),
    ("customer", "customers", "CUS", ("active", "paused", "closed"), "client account"),
    ("ticket", "tickets", "TKT", ("open", "waiting", "solved"), "support case"),
    ("shipment", "shipments", "SHP", ("booked", "transit", "delivered", "lost"), "parcel"),
    ("product", "products", "PRD", ("draft", "live", "retired"), "catalogue item"),
    ("refund", "refunds", "RFD", ("requested", "approved", "paid", "refused"), "money-back claim"),
    ("payment", "payments", "PAY", ("pending", "settled", "failed"), "card charge"),
    ("subscription", "subscriptions", "SUB", ("trial", "active", "lapsed"), "membership plan"),
    ("return", "returns", "RET", ("opened", "received", "inspected", "closed"), "send-back"),
    ("coupon", "coupons", "CPN", ("active", "expired", "used"), "discount code"),
    ("supplier", "suppliers", "SUP", ("approved", "probation", "blocked"), "vendor"),
    ("warehouse", "warehouses", "WHS", ("open", "full", "closed"), "depot"),
    ("employee", "employees", "EMP", ("active", "leave", "left"), "staff member"),
    ("contract", "contracts", "CTR", ("draft", "signed", "expired"), "agreement"),
    ("lead", "leads", "LED", ("new", "contacted", "qualified", "lost"), "prospect"),
    ("quote", "quotes", "QTE", ("draft", "sent", "accepted", "declined"), "estimate"),
    ("campaign", "campaigns", "CMP", ("planned", "running", "ended"), "promotion"),
    ("asset", "assets", "AST", ("assigned", "spare", "retired"), "piece of equipment"),
    ("project", "projects", "PRJ", ("planned", "active", "done"), "initiative"),
    ("job", "jobs", "JOB", ("queued", "running", "done", "failed"), "work order"),
    ("device", "devices", "DEV", ("online", "offline", "retired"), "gadget"),
    ("license", "licenses", "LIC", ("active", "expiring", "revoked"), "software seat"),
    ("review", "reviews", "REV", ("pending", "published", "hidden"), "customer rating"),
    ("appointment", "appointments", "APT", ("booked", "confirmed", "missed"), "visit"),
    ("booking", "bookings", "BKG", ("held", "confirmed", "released"), "reservation"),
    ("vehicle", "vehicles", "VEH", ("available", "servicing", "sold"), "fleet car"),
]
FAMILIES = [Family(noun, plural, prefix, statuses, alias, i) for i, (noun, plural, prefix, statuses, alias)
            in enumerate(_FAMILIES)]
MAX_TOOLS = len(FAMILIES) * len(VERBS)
PEOPLE = ("Ana Lima", "Tomás Ortega", "Grace Mbeki", "Hiroshi Sato", "Leonie Fischer", "Samuel Okafor",
          "Priya Nair", "Declan Byrne", "Mei Chen", "Olusegun Adeyemi", "Ingrid Larsen", "Rafael Costa",
          "Zofia Nowak", "Kwame Mensah", "Lucía Romero", "Arjun Mehta", "Freya Holm", "Yusuf Demir")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def _digest(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


@dataclass(frozen=True)
class Record:
    id: str
    person: str
    day: Day
    status: str
    cents: int


def records(family: Family) -> list[Record]:
    """Six records per family, deterministic; every status occurs at least once, and no two records share a
    person."""
    out = []
    people = [PEOPLE[(family.number * 5 + i) % len(PEOPLE)] for i in range(6)]
    for i in range(6):
        h = int(_digest(family.prefix, i), 16)
        number = 1000 + (h % 9000)
        day = Day(2026, 1 + (h >> 20) % 11, 1 + (h >> 28) % 28)
        out.append(Record(f"{family.prefix}-{number:04d}", people[i], day, family.statuses[i % len(family.statuses)],
                          500 + (h >> 36) % 90_000))
    return out


def tools_for(n: int) -> list[tuple[Family, str]]:
    """The first n (family, verb) pairs, family by family."""
    if not 1 <= n <= MAX_TOOLS:
        raise SystemExit(f"--tools must be between 1 and {MAX_TOOLS}")
    return [(f, v) for f in FAMILIES for v in VERBS][:n]


def _money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def _shown(family: Family, day: Day) -> str:
    return day.strftime("%d/%m/%Y" if family.day_first else "%Y-%m-%d")


# --- the server ------------------------------------------------------------------------------------


def _id(family: Family, value: str) -> Record:
    v = value.strip()
    if not re.fullmatch(rf"{family.prefix}-\d{{4}}", v):
        raise ToolError(f"validation: a {family.noun} id is {family.prefix}- and four digits, e.g. "
                        f"{family.prefix}-0042 (got '{value}').")
    for record in records(family):
        if record.id == v:
            return record
    raise ToolError(f"business: there is no {family.noun} {v}.")


def _status(family: Family, value: str) -> str:
    if value.strip() not in family.statuses:
        raise ToolError(f"validation: status must be one of {', '.join(family.statuses)} (got '{value}').")
    return value.strip()


def _date(family: Family, value: str) -> Day:
    v = value.strip()
    shape, pattern = (("DD/MM/YYYY", r"(\d{2})/(\d{2})/(\d{4})") if family.day_first
                      else ("YYYY-MM-DD", r"(\d{4})-(\d{2})-(\d{2})"))
    m = re.fullmatch(pattern, v)
    if not m:
        example = "09/04/2026" if family.day_first else "2026-04-09"
        raise ToolError(f"validation: date must be {shape}, e.g. {example} (got '{value}').")
    parts = [int(p) for p in m.groups()]
    d, mo, y = parts if family.day_first else parts[::-1]
    try:
        return Day(y, mo, d)
    except ValueError:
        raise ToolError(f"validation: date '{value}' is not a calendar date ({shape}).") from None


def _line(family: Family, r: Record) -> str:
    return f"{r.id}: {r.person}, {_shown(family, r.day)}, status {r.status}, amount {_money(r.cents)}."


def do_get(family: Family, id: str) -> str:
    return _line(family, _id(family, id))


def do_list(family: Family, status: str) -> str:
    wanted = _status(family, status)
    ids = [r.id for r in records(family) if r.status == wanted]
    return f"{len(ids)} {family.plural} {wanted}: {', '.join(ids)}." if ids else f"No {family.plural} {wanted}."


def do_search(family: Family, query: str) -> str:
    q = query.strip().lower()
    if len(q) < 3:
        raise ToolError(f"validation: query must be at least 3 characters (got '{query}').")
    hits = [_line(family, r) for r in records(family) if q in r.person.lower()]
    return "\n".join(hits) if hits else f"No {family.plural} match '{query}'."


def do_create(family: Family, name: str, date: str) -> str:
    who = name.strip()
    if len(who) < 3:
        raise ToolError(f"validation: name must be a person's or company's name (got '{name}').")
    day = _date(family, date)
    ref = f"{family.prefix}-{int(_digest('new', family.prefix, who.lower(), day), 16) % 9000 + 1000:04d}"
    return f"{family.noun.capitalize()} {ref} created for {who} on {_shown(family, day)}."


def do_update(family: Family, id: str, status: str) -> str:
    record, new = _id(family, id), _status(family, status)
    if new == record.status:
        return f"{record.id} is already {new}; nothing changed."
    return f"{record.id} status changed from {record.status} to {new}."


def do_cancel(family: Family, id: str, reason: str = "") -> str:
    record = _id(family, id)
    ref = "CX-" + _digest("cancel", record.id)[:5].upper()
    return f"{family.noun.capitalize()} {record.id} cancelled ({ref})."


DESCRIPTIONS = {
    "get": "Get {a} {noun}.",
    "list": "List {plural} by status.",
    "search": "Search {plural}.",
    "create": "Create {a} {noun}.",
    "update": "Update {a} {noun}.",
    "cancel": "Cancel {a} {noun}.",
}


def description(family: Family, verb: str) -> str:
    a = "an" if family.noun[0] in "aeiou" else "a"
    return DESCRIPTIONS[verb].format(a=a, noun=family.noun, plural=family.plural)


def _function(family: Family, verb: str) -> Any:
    """The tool function of one (family, verb): its parameters (names, types, thin descriptions) make the schema."""
    Id = Annotated[str, Field(description=f"The {family.noun}.")]
    Status = Annotated[str, Field(description="Status.")]
    if verb == "get":
        def get(id: Id) -> str:
            return do_get(family, id)
        return get
    if verb == "list":
        def list_(status: Status) -> str:
            return do_list(family, status)
        return list_
    if verb == "search":
        def search(query: str) -> str:
            return do_search(family, query)
        return search
    if verb == "create":
        def create(name: Annotated[str, Field(description="Who it is for.")],
                   date: Annotated[str, Field(description="Date.")]) -> str:
            return do_create(family, name, date)
        return create
    if verb == "update":
        def update(id: Id, status: Status) -> str:
            return do_update(family, id, status)
        return update

    def cancel(id: Id, reason: str = "") -> str:
        return do_cancel(family, id, reason)
    return cancel


def build_server(n: int) -> MCPServer:
    server = MCPServer(f"scale{n}", log_level="WARNING")
    for family, verb in tools_for(n):
        server.tool(name=family.tool(verb), description=description(family, verb),
                    annotations=READ if verb in ("get", "list", "search") else RECORD,
                    structured_output=False)(_function(family, verb))
    return server


# --- the tasks -------------------------------------------------------------------------------------


def _spoken(day: Day) -> str:
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _number(record: Record) -> str:
    return record.id.split("-")[1]


def tasks_for(family: Family, verb: str) -> list[dict[str, Any]]:
    """Two tasks for one tool, phrased as a user would: the first with the family's noun and a bare number, the
    second with what a user calls it and the prefixed id. Families take turns among a few phrasings, so that no two
    prompts read alike (`optimizer tasks check` finds no near-duplicates at 150 tools)."""
    rs = records(family)
    noun, alias, plural = family.noun, family.alias, family.plural
    tool = family.tool(verb)

    def pick(*phrasings: str) -> str:
        return phrasings[family.number % len(phrasings)]

    out: list[tuple[str, str]] = []
    if verb == "get":
        n0, id1 = _number(rs[0]), rs[1].id
        out = [(pick(f"How much was {noun} {n0} for?", f"What amount is on {noun} number {n0}?",
                     f"Tell me the total of {noun} {n0}, please."), _money(rs[0].cents)),
               (pick(f"Who is the {alias} {id1} under?", f"Whose name is on {alias} {id1}?",
                     f"{alias.capitalize()} {id1} belongs to which person?"), rs[1].person)]
    elif verb == "list":
        a, b = family.statuses[0], family.statuses[1]
        out = [(pick(f"Which {plural} are {a} right now?", f"Give me the {plural} whose status is {a}.",
                     f"Are there {plural} sitting at {a} at the moment?"), rs[0].id),
               (pick(f"Show me every {alias} that is currently {b}.", f"I need all {b} {alias} entries.",
                     f"What's in the {b} pile of {alias} records?"), rs[1].id)]
    elif verb == "search":
        who, surname = rs[2].person, rs[3].person.split()[1]
        out = [(pick(f"Do we have any {plural} for {who}?", f"Find {who}'s {plural}.",
                     f"Anything on file under {who} in {plural}?"), rs[2].id),
               (pick(f"Look up the {alias} belonging to {surname}.", f"Is there a {alias} with {surname} on it?",
                     f"{surname} has a {alias} somewhere; can you dig it up?"), rs[3].id)]
    elif verb == "create":
        d1, d2 = Day(2026, 11, 3 + family.number % 20), Day(2026, 12, 1 + family.number % 25)
        p1, p2 = PEOPLE[(family.number + 7) % len(PEOPLE)], PEOPLE[(family.number + 11) % len(PEOPLE)]
        out = [(pick(f"Open a new {noun} for {p1} dated {_spoken(d1)}.",
                     f"{p1} needs a {noun} starting on {_spoken(d1)}; add one.",
                     f"Register a {noun} in the name of {p1} for {_spoken(d1)}."),
                do_create(family, p1, _shown(family, d1))),
               (pick(f"Please set up a {alias} for {p2}, starting {_spoken(d2)}.",
                     f"Can you put in a {alias} for {p2} on {_spoken(d2)}?",
                     f"Add a {alias} for {p2} effective {_spoken(d2)}."),
                do_create(family, p2, _shown(family, d2)))]
        out = [(prompt, result.split()[1]) for prompt, result in out]
    elif verb == "update":
        r4, r5 = rs[4], rs[5]
        n4 = family.statuses[(family.statuses.index(r4.status) + 1) % len(family.statuses)]
        n5 = family.statuses[(family.statuses.index(r5.status) + 1) % len(family.statuses)]
        out = [(pick(f"Mark {noun} {_number(r4)} as {n4}.", f"Move {noun} {_number(r4)} along to {n4}.",
                     f"{noun.capitalize()} {_number(r4)} is {n4} now, record that."), f"from {r4.status} to {n4}"),
               (pick(f"The {alias} {r5.id} should now read {n5}; please change it.",
                     f"Switch {alias} {r5.id} over to {n5}.", f"Flip the status of {alias} {r5.id} to {n5}."),
                f"from {r5.status} to {n5}")]
    elif verb == "cancel":
        ref2, ref3 = ("CX-" + _digest("cancel", r.id)[:5].upper() for r in (rs[2], rs[3]))
        out = [(pick(f"Call off {noun} {_number(rs[2])}, it is no longer needed.",
                     f"We won't go ahead with {noun} {_number(rs[2])}: scrap it.",
                     f"Kill {noun} {_number(rs[2])}, the customer changed their mind."), ref2),
               (pick(f"Please cancel {alias} {rs[3].id}.", f"{alias.capitalize()} {rs[3].id} has to be withdrawn.",
                     f"Drop {alias} {rs[3].id} altogether."), ref3)]
    lead = LEADS[(family.number // 3 + VERBS.index(verb)) % len(LEADS)]
    return [{"id": f"{tool}-{i + 1}", "prompt": f"{lead} {prompt}" if i == 0 and lead else prompt,
             "expect": {"tools": [tool], "answer": answer}} for i, (prompt, answer) in enumerate(out)]


LEADS = ("", "Quick one:", "For the weekly report:", "Customer on the line -", "Before the meeting:", "No rush:",
         "From the finance team:", "One more thing:", "Urgent:")
"""Openings the first task of a tool takes in turn (with the phrasings, families differ in more than the noun)."""


def task_set(n: int) -> list[dict[str, Any]]:
    """About two tasks per tool (at least 20), every third one held out (shifted by one per family, so that each
    verb has held-out tasks)."""
    tasks = [t for family, verb in tools_for(n) for t in tasks_for(family, verb)]
    per_family = 2 * len(VERBS)
    for i, task in enumerate(tasks):
        task["split"] = "heldout" if (i + i // per_family) % 3 == 2 else "train"
    return tasks


def write_tasks(directory: Path, n: int) -> Path:
    import yaml

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tasks.yaml"
    path.write_text(f"# {n} synthetic tools (bench/scale_server.py); about two tasks per tool.\n"
                    + yaml.safe_dump(task_set(n), sort_keys=False, allow_unicode=True, width=200), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Synthetic MCP server with N tools (families x verbs)")
    parser.add_argument("--tools", type=int, required=True, help=f"number of tools, 1 to {MAX_TOOLS}")
    parser.add_argument("--write-tasks", type=Path, metavar="DIR", help="write DIR/tasks.yaml and exit")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.write_tasks:
        print(write_tasks(args.write_tasks, args.tools))
        return
    server = build_server(args.tools)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()

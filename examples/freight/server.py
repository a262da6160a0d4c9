"""A freight forwarding MCP server whose formats decide success, and whose errors never say which argument was wrong.

Twelve read-only tools over a small, fixed book of shipments, with the thin definitions many internal services ship:
a name, a few words, parameter names without descriptions. What a request says in words the server takes only in
its own codes, none of which a definition states: ports as UN/LOCODEs (`DEHAM`), containers as ISO 6346 size-type
codes (`45R1`), services and statuses as three-letter codes (`EXP`, `DEP`), weeks as ISO weeks (`2026-W51`), dates
as day-first with dots (`22.12.2026`), weights in kilograms, reefer setpoints in tenths of a degree Celsius (`-180`
for -18 °C), dangerous goods as `UN` and four digits. A wrong value gets only "invalid value 'x'" for the first bad
argument; a well-formed value that matches no record gets "not found". The results show most of the codes, under
the names of the parameters that take them.

All tools only read, and every result is a pure function of the arguments (no clock, no randomness).

Run: `python server.py` (stdio) or `python server.py --http 8934` (http://127.0.0.1:8934/mcp).
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import date

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("freight", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

PORTS = {"DEHAM": ("Hamburg", "DE"), "NLRTM": ("Rotterdam", "NL"), "BEANR": ("Antwerp", "BE"),
         "SGSIN": ("Singapore", "SG"), "CNSHA": ("Shanghai", "CN"), "USNYC": ("New York", "US"),
         "GBFXT": ("Felixstowe", "GB"), "ESVLC": ("Valencia", "ES")}
CONTAINERS = {"22G1": ("20 ft standard", 1.0), "42G1": ("40 ft standard", 1.8), "45G1": ("40 ft high cube", 1.9),
              "22R1": ("20 ft reefer", 1.6), "45R1": ("40 ft high cube reefer", 2.6)}
SERVICES = {"EXP": ("express", 1.35), "STD": ("standard", 1.0), "ECO": ("economy", 0.85)}
STATUSES = {"BKD": "booked", "GTI": "gated in", "LOD": "loaded", "DEP": "departed", "ARR": "arrived",
            "DLV": "delivered"}
# lane: (distance in nautical miles, base rate in EUR for a 20 ft standard, days at sea)
LANES = {frozenset(("DEHAM", "SGSIN")): (8_300, 1_150, 24), frozenset(("NLRTM", "USNYC")): (3_450, 980, 10),
         frozenset(("CNSHA", "ESVLC")): (9_100, 1_240, 28), frozenset(("BEANR", "GBFXT")): (170, 310, 1),
         frozenset(("DEHAM", "CNSHA")): (10_500, 1_320, 31), frozenset(("NLRTM", "SGSIN")): (8_250, 1_130, 24)}
CUSTOMERS = {"ACC-1042": ("Nordlicht Foods", "DE", 250_000), "ACC-2210": ("Vela Textiles", "ES", 120_000),
             "ACC-3307": ("Brightwell Chemicals", "GB", 400_000)}
# id: account, origin, destination, container type, container number, service, status, departed, eta, weight kg,
#     setpoint (tenths of a degree C, None when dry), UN number (None when none), free time ends
SHIPMENTS = {
    "FRT-2026-00417": ("ACC-1042", "DEHAM", "SGSIN", "45R1", "MSKU7341205", "EXP", "DEP", "2026-11-28", "2026-12-22",
                       21_400, -180, None, "29.12.2026"),
    "FRT-2026-00452": ("ACC-1042", "NLRTM", "USNYC", "42G1", "TGHU5520913", "STD", "LOD", None, "2026-12-19", 18_250,
                       None, None, "02.01.2027"),
    "FRT-2026-00488": ("ACC-2210", "CNSHA", "ESVLC", "45G1", "CAIU8813402", "ECO", "ARR", "2026-11-02", "2026-11-30",
                       12_900, None, None, "07.12.2026"),
    "FRT-2026-00503": ("ACC-2210", "SGSIN", "DEHAM", "22G1", "MRKU2209184", "STD", "BKD", None, "2027-01-21", 9_800,
                       None, None, "28.01.2027"),
    "FRT-2026-00529": ("ACC-3307", "BEANR", "GBFXT", "22G1", "BHCU4410276", "EXP", "DLV", "2026-11-18", "2026-11-19",
                       14_100, None, "UN1263", "26.11.2026"),
    "FRT-2026-00561": ("ACC-3307", "DEHAM", "CNSHA", "22R1", "SEGU6630517", "STD", "GTI", None, "2027-01-12", 16_700,
                       40, None, "19.01.2027"),
}
DANGEROUS = {"UN1263": ("3", "paint", ("STD", "ECO")), "UN1203": ("3", "motor spirit", ("STD",)),
             "UN1830": ("8", "sulphuric acid", ("STD", "ECO")), "UN3480": ("9", "lithium ion batteries",
                                                                            ("EXP", "STD", "ECO"))}
SAILINGS = {("DEHAM", "SGSIN"): (("Elbe Trader", 1), ("Nordic Star", 4)), ("NLRTM", "USNYC"): (("Maas Pioneer", 2),),
            ("SGSIN", "DEHAM"): (("Lion Gate", 3),), ("CNSHA", "ESVLC"): (("Huangpu Bridge", 5),)}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _one(value: object, allowed: object) -> str:
    text = str(value)
    if text not in allowed:  # type: ignore[operator]
        raise ToolError(f"invalid value '{text}'")
    return text


def _shaped(value: object, pattern: str) -> str:
    text = str(value)
    if not re.fullmatch(pattern, text):
        raise ToolError(f"invalid value '{text}'")
    return text


def _lane(origin: str, destination: str) -> tuple[int, int, int]:
    lane = LANES.get(frozenset((origin, destination)))
    if lane is None or origin == destination:
        raise ToolError("not found")
    return lane


def _shipment(shipment_id: str) -> tuple:
    _shaped(shipment_id, r"FRT-\d{4}-\d{5}")
    if shipment_id not in SHIPMENTS:
        raise ToolError("not found")
    return SHIPMENTS[shipment_id]


@server.tool(annotations=READ, structured_output=False)
def find_port(name: str) -> str:
    """Find port."""
    hits = [{"port": code, "name": city, "country": country} for code, (city, country) in PORTS.items()
            if name.strip().lower() in city.lower()]
    return json.dumps(hits) if hits else "no port matches"


@server.tool(annotations=READ, structured_output=False)
def get_schedule(origin: str, destination: str, week: str) -> str:
    """Get schedule."""
    _one(origin, PORTS)
    _one(destination, PORTS)
    _shaped(week, r"\d{4}-W(0[1-9]|[1-4]\d|5[0-3])")
    year, number = int(week[:4]), int(week[-2:])
    days = _lane(origin, destination)[2]
    sailings = []
    for vessel, weekday in SAILINGS.get((origin, destination), ()):
        departs = date.fromisocalendar(year, number, weekday)
        arrives = date.fromordinal(departs.toordinal() + days)
        sailings.append({"vessel": vessel, "week": week, "departs": departs.isoformat(),
                         "day": WEEKDAYS[weekday - 1], "arrives": arrives.isoformat()})
    return json.dumps({"origin": origin, "destination": destination, "sailings": sailings})


@server.tool(annotations=READ, structured_output=False)
def quote_rate(origin: str, destination: str, container: str, service: str) -> str:
    """Quote rate."""
    _one(origin, PORTS)
    _one(destination, PORTS)
    _one(container, CONTAINERS)
    _one(service, SERVICES)
    base = _lane(origin, destination)[1]
    rate = round(base * CONTAINERS[container][1] * SERVICES[service][1])
    return json.dumps({"origin": origin, "destination": destination, "container": container, "service": service,
                       "rate_eur": rate})


@server.tool(annotations=READ, structured_output=False)
def get_shipment(shipment_id: str) -> str:
    """Get shipment."""
    s = _shipment(shipment_id)
    return json.dumps({"shipment_id": shipment_id, "account": s[0], "origin": s[1], "destination": s[2],
                       "container": s[3], "container_no": s[4], "service": s[5], "status": s[6], "departed": s[7],
                       "eta": s[8], "weight_kg": s[9], "setpoint": s[10], "un_number": s[11],
                       "free_time_until": s[12]})


@server.tool(annotations=READ, structured_output=False)
def list_shipments(account: str, status: str) -> str:
    """List shipments."""
    _shaped(account, r"ACC-\d{4}")
    _one(status, STATUSES)
    if account not in CUSTOMERS:
        raise ToolError("not found")
    found = [{"shipment_id": sid, "status": s[6], "origin": s[1], "destination": s[2], "eta": s[8]}
             for sid, s in SHIPMENTS.items() if s[0] == account and s[6] == status]
    return json.dumps(found) if found else "no shipments"


@server.tool(annotations=READ, structured_output=False)
def track_container(container_no: str) -> str:
    """Track container."""
    _shaped(container_no, r"[A-Z]{4}\d{7}")
    match = [(sid, s) for sid, s in SHIPMENTS.items() if s[4] == container_no]
    if not match:
        raise ToolError("not found")
    sid, s = match[0]
    events = [("BKD", s[1])] + [(code, s[1]) for code in ("GTI", "LOD") if _reached(s[6], code)]
    events += [(code, s[1] if code == "DEP" else s[2]) for code in ("DEP", "ARR", "DLV") if _reached(s[6], code)]
    return json.dumps({"container_no": container_no, "shipment_id": sid,
                       "events": [{"status": code, "port": port} for code, port in events]})


def _reached(status: str, code: str) -> bool:
    order = list(STATUSES)
    return order.index(code) <= order.index(status)


@server.tool(annotations=READ, structured_output=False)
def get_customer(account: str) -> str:
    """Get customer."""
    _shaped(account, r"ACC-\d{4}")
    if account not in CUSTOMERS:
        raise ToolError("not found")
    name, country, limit = CUSTOMERS[account]
    open_count = sum(1 for s in SHIPMENTS.values() if s[0] == account and s[6] != "DLV")
    return json.dumps({"account": account, "name": name, "country": country, "credit_limit_eur": limit,
                       "open_shipments": open_count})


@server.tool(annotations=READ, structured_output=False)
def find_customer(name: str) -> str:
    """Find customer."""
    hits = [{"account": acc, "name": n} for acc, (n, _, _) in CUSTOMERS.items() if name.strip().lower() in n.lower()]
    return json.dumps(hits) if hits else "no customer matches"


@server.tool(annotations=READ, structured_output=False)
def check_setpoint(container: str, setpoint: int) -> str:
    """Check setpoint."""
    _one(container, CONTAINERS)
    if container[2] != "R":
        raise ToolError(f"invalid value '{container}'")
    degrees = setpoint / 10
    ok = -300 <= setpoint <= 300
    return (f"{container}: setpoint {degrees:+.1f} °C is {'within' if ok else 'outside'} the unit's range "
            "(-30.0 °C to +30.0 °C)")


@server.tool(annotations=READ, structured_output=False)
def get_dg_rules(un_number: str) -> str:
    """Get DG rules."""
    _shaped(un_number, r"UN\d{4}")
    if un_number not in DANGEROUS:
        raise ToolError("not found")
    hazard, name, services = DANGEROUS[un_number]
    return json.dumps({"un_number": un_number, "class": hazard, "name": name, "service": list(services)})


@server.tool(annotations=READ, structured_output=False)
def estimate_co2(origin: str, destination: str, container: str, weight_kg: int) -> str:
    """Estimate CO2."""
    _one(origin, PORTS)
    _one(destination, PORTS)
    _one(container, CONTAINERS)
    if not isinstance(weight_kg, int) or not 500 <= weight_kg <= 32_000:
        raise ToolError(f"invalid value '{weight_kg}'")
    miles = _lane(origin, destination)[0]
    co2 = round(miles * 1.852 * (weight_kg / 1000 + 2.3 * CONTAINERS[container][1]) * 0.0161)
    return json.dumps({"origin": origin, "destination": destination, "container": container, "weight_kg": weight_kg,
                       "co2_kg": co2})


@server.tool(annotations=READ, structured_output=False)
def get_free_time(shipment_id: str, until: str) -> str:
    """Get free time."""
    s = _shipment(shipment_id)
    day = _shaped(until, r"\d{2}\.\d{2}\.\d{4}")
    try:
        asked = date(int(day[6:]), int(day[3:5]), int(day[:2]))
    except ValueError:
        raise ToolError(f"invalid value '{until}'") from None
    free = date(int(s[12][6:]), int(s[12][3:5]), int(s[12][:2]))
    late = max(0, asked.toordinal() - free.toordinal())
    rate = 75 if s[3].startswith("2") else 120
    return json.dumps({"shipment_id": shipment_id, "free_time_until": s[12], "until": day, "days_over": late,
                       "demurrage_eur": late * rate})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on this port")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()

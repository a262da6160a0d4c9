"""The project tree the filesystem server works on: "fernway", a small app that books allotment plots.

`build(directory)` writes the tree into `directory` (created if missing): docs, meeting notes, a
config and its example twin, CSV data, Python and JavaScript sources, tests, a shell script and two
images. Files with the same name sit in different folders (`docs/setup.md` and
`docs/archive/setup.md`, `src/fernway/booking.py` and `web/src/booking.js`). The result is a pure
function of this file: fixed text, fixed file modes and a fixed modification time, no clock and no
randomness. Run `python fixture.py DIR` to build it into DIR.
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path

MTIME = 1_775_001_600  # 2026-04-01T00:00:00Z, the same for every file and folder
EXECUTABLE = {"scripts/backup.sh", "scripts/import_members.py"}

SITES = {"N": "Northgate", "R": "Riverside"}
FEES = {"standard": "80.00", "half": "48.00", "raised_bed": "45.00"}
SIZES = {"standard": 250, "half": 125, "raised_bed": 12}
MEMBERS = [
    ("M-101", "Ingrid Halvorsen", "ingrid.halvorsen@example.org", "2019-04-02"),
    ("M-102", "Tomás Reyes", "tomas.reyes@example.org", "2020-03-15"),
    ("M-103", "Amara Okafor", "amara.okafor@example.net", "2018-05-20"),
    ("M-104", "Lukas Brandt", "lukas.brandt@example.com", "2021-02-11"),
    ("M-105", "Priya Nair", "priya.nair@example.com", "2022-03-01"),
    ("M-106", "Henrik Solberg", "henrik.solberg@example.org", "2017-06-30"),
    ("M-107", "Mei Lin Chen", "meilin.chen@example.net", "2023-01-09"),
    ("M-108", "Gareth Powell", "gareth.powell@example.com", "2020-09-14"),
    ("M-109", "Fatima Zahra Idrissi", "fatima.idrissi@example.org", "2024-02-27"),
    ("M-110", "Olu Adeyemi", "olu.adeyemi@example.com", "2025-03-03"),
    ("M-111", "Sanna Virtanen", "sanna.virtanen@example.net", "2016-04-18"),
    ("M-112", "Diego Alvarez", "diego.alvarez@example.org", "2025-11-21"),
]
# (plot id, type, tenant id or "" when free)
PLOTS = [
    ("N-01", "standard", "M-106"), ("N-02", "standard", "M-111"), ("N-03", "half", "M-101"),
    ("N-04", "half", ""), ("N-05", "raised_bed", "M-107"), ("N-06", "raised_bed", "M-103"),
    ("N-07", "standard", "M-108"), ("N-08", "half", "M-104"), ("N-09", "standard", ""),
    ("N-10", "raised_bed", "M-105"), ("R-01", "standard", "M-102"), ("R-02", "standard", "M-109"),
    ("R-03", "half", "M-110"), ("R-04", "half", ""), ("R-05", "raised_bed", "M-103"),
    ("R-06", "raised_bed", ""), ("R-07", "standard", "M-112"), ("R-08", "half", "M-106"),
]
PLOTS_2025 = [("N-01", "standard", "M-106", "76.00"), ("N-02", "standard", "M-111", "76.00"),
              ("N-03", "half", "M-101", "45.00"), ("N-05", "raised_bed", "M-104", "52.00"),
              ("N-07", "standard", "M-108", "76.00"), ("N-08", "half", "M-103", "45.00")]
WAITLIST = [("1", "Noor Haddad", "Riverside", "2026-01-12"), ("2", "Bence Kovács", "Northgate", "2026-01-30"),
            ("3", "Elena Rossi", "Riverside", "2026-02-14"), ("4", "Kwame Boateng", "Riverside", "2026-03-09")]


def _csv(header: str, rows: Sequence[Sequence[str]]) -> str:
    return "\n".join([header, *(",".join(row) for row in rows)]) + "\n"


def _plots_csv() -> str:
    rows = [(pid, SITES[pid[0]], str(SIZES[kind]), kind, tenant, FEES[kind]) for pid, kind, tenant in PLOTS]
    return _csv("plot_id,site,size_m2,type,tenant_id,season_fee", rows)


def _members_csv() -> str:
    counts = {mid: sum(1 for _, _, tenant in PLOTS if tenant == mid) for mid, *_ in MEMBERS}
    return _csv("member_id,name,email,joined,plots", [(*m, str(counts[m[0]])) for m in MEMBERS])


def _invoices_csv() -> str:
    """One invoice per let plot and month of the first quarter: the biggest file in data/."""
    rows = []
    number = 4001
    for month in ("01", "02", "03"):
        for pid, kind, tenant in PLOTS:
            if tenant:
                status = "paid" if (number % 7) else "overdue"
                rows.append((f"INV-{number}", f"2026-{month}-15", tenant, pid, FEES[kind], status))
                number += 1
    return _csv("invoice,issued,member_id,plot_id,amount,status", rows)


def _png(width: int = 16, height: int = 16) -> bytes:
    """A small green-on-cream logo; stored (level 0) deflate so the bytes never depend on zlib's version."""
    raw = b""
    for y in range(height):
        row = b"".join(b"\x2e\x7d\x32" if 4 <= x < 12 and 3 <= y < 13 else b"\xf5\xf0\xe1" for x in range(width))
        raw += b"\x00" + row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")


TEXT: dict[str, str] = {
    "README.md": """# Fernway

Fernway books allotment plots for the Northgate and Riverside community gardens. Members reserve a
plot for the season, pay the seasonal fee online and get a text message before their watering turn.

- Backend: Python 3.12 (`src/fernway`), SQLite database.
- Frontend: plain JavaScript in `web/`, bundled with esbuild.
- Maintainers: Ingrid Halvorsen (backend) and Tomás Reyes (frontend).

## Quick start

See `docs/setup.md`. Production deployment is described in `docs/deploy.md`.

## Layout

- `config/` settings for production (`settings.toml`) and an example for development
- `data/` plot, member and waitlist exports (CSV)
- `docs/` guides; `docs/archive/` holds superseded ones
- `notes/` meeting notes and the to-do list
- `scripts/` backup and import helpers

## License

MIT, see `LICENSE`.
""",
    "CHANGELOG.md": """# Changelog

## 0.7.2 (2026-04-02)
- Fix: the waitlist position was off by one after a cancellation.

## 0.7.1 (2026-03-18)
- The seasonal fee for raised beds is now 45.00 (was 52.00).

## 0.7.0 (2026-03-01)
- Text-message reminders before watering turns (`fernway.notify`).
- The Riverside site is open for bookings.

## 0.6.0 (2025-11-20)
- First public release.
""",
    "LICENSE": """MIT License

Copyright (c) 2025 Fernway contributors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
""",
    ".gitignore": "__pycache__/\n*.db\nnode_modules/\nweb/dist/\n.env\n",
    "pyproject.toml": """[project]
name = "fernway"
version = "0.7.2"
description = "Allotment plot bookings for community gardens"
requires-python = ">=3.12"
dependencies = ["starlette>=0.40", "uvicorn>=0.30", "jinja2>=3.1", "twilio>=9.0"]

[project.optional-dependencies]
dev = ["pytest>=8", "ruff>=0.6"]

[project.scripts]
fernway = "fernway.app:main"
""",
    "Makefile": """run:
\tpython -m fernway.app

test:
\tpytest -q && cd web && npm test

backup:
\t./scripts/backup.sh
""",
    "config/settings.toml": """# Production settings (plot-01.fernway.example)
[server]
host = "0.0.0.0"
port = 8042

[database]
path = "/var/lib/fernway/fernway.db"

[booking]
season_start = "03-01"
season_end = "10-31"
max_plots_per_member = 2
waitlist_enabled = true

[notify]
sms_provider = "twilio"
reminder_hours_before = 18
""",
    "config/settings.example.toml": """# Example settings for a development machine; copy to settings.toml
[server]
host = "127.0.0.1"
port = 8000

[database]
path = "./fernway-dev.db"

[booking]
season_start = "03-01"
season_end = "10-31"
max_plots_per_member = 1
waitlist_enabled = false

[notify]
sms_provider = "console"
reminder_hours_before = 24
""",
    "config/logging.yaml": """version: 1
handlers:
  file:
    class: logging.handlers.TimedRotatingFileHandler
    filename: /var/log/fernway/app.log
    when: midnight
    backupCount: 7
root:
  level: INFO
  handlers: [file]
""",
    "docs/setup.md": """# Setting up a development machine

1. Install Python 3.12 and Node.js 20.
2. `pip install -e ".[dev]"`
3. `cp config/settings.example.toml config/settings.toml`
4. `cd web && npm install`
5. `make run` starts the app on http://localhost:8000.

Run the tests with `make test`.
""",
    "docs/archive/setup.md": """# Setup (archived 2025, superseded by docs/setup.md)

1. Install Python 3.9.
2. `pipenv install`
3. `python manage.py runserver` starts the app on http://localhost:5000.
""",
    "docs/deploy.md": """# Deploying Fernway

Production runs on plot-01.fernway.example as the systemd unit `fernway.service`.

1. `git pull` in /srv/fernway.
2. `pip install .` inside /srv/fernway/.venv.
3. `cd web && npm ci && npm run build`.
4. `sudo systemctl restart fernway.service`.

Backups: `scripts/backup.sh` runs nightly at 02:30 from cron and keeps 14 days of copies in
/var/backups/fernway.
""",
    "docs/api.md": """# HTTP API

| method | path | what it does |
|---|---|---|
| GET | /api/plots | every plot with its site, size, type and whether it is free |
| POST | /api/bookings | book a plot for the signed-in member (body: `{"plot_id": "N-04"}`) |
| DELETE | /api/bookings/{id} | cancel a booking; the plot goes to the head of the waitlist |
| GET | /api/waitlist | the waitlist for a site (`?site=Riverside`) |

Errors come back as `{"error": "..."}` with status 400 (bad input) or 409 (plot already taken).
""",
    "docs/faq.md": """# Frequently asked questions

**Can I share a plot?** Yes. A plot may have up to two co-tenants; both must be members.

**What if I pay late?** Fees are due by 15 March. After that a late fee of 10.00 is added.

**Can I keep my plot next year?** Tenants who paid on time get first refusal until 31 January.
""",
    "docs/archive/roadmap-2025.md": """# Roadmap 2025 (archived)

- Online payments (done in 0.6.0)
- A second site at Riverside (done in 0.7.0)
- Tool library booking (postponed)
""",
    "notes/meetings/2026-02-10-kickoff.md": """# Kickoff, 2026-02-10

Attendees: Ingrid Halvorsen, Tomás Reyes, Sanna Virtanen (garden committee)

- Riverside opens for bookings on 1 March.
- Budget for text messages: 120 EUR per season.
- Sanna collects the waitlist from the paper forms.
""",
    "notes/meetings/2026-03-03-pricing.md": """# Pricing, 2026-03-03

Attendees: Ingrid Halvorsen, Tomás Reyes, Henrik Solberg (treasurer)

Decided fees for the 2026 season:
- standard plot: 80.00 (was 76.00)
- half plot: 48.00 (was 45.00)
- raised bed: 45.00 (was 52.00)

Members of more than five years get 10% off.

Action: Tomás updates the price table in the web app.
""",
    "notes/meetings/2026-04-07-launch.md": """# Launch review, 2026-04-07

Attendees: Ingrid Halvorsen, Tomás Reyes

- 143 bookings in the first week.
- Bug: waitlist position off by one after a cancellation (fixed in 0.7.2).
- Next meeting: 2026-05-05.
""",
    "notes/todo.md": """# To do

- [x] Riverside plot map
- [x] Raised-bed fee in the backend
- [ ] Raised-bed fee in the web app
- [ ] Reminder texts in Norwegian
- [ ] Export invoices for the treasurer every quarter
""",
    "notes/ideas.txt": """Ideas from members, spring 2026
- a compost swap board
- a shared tool library with booking
- seed exchange day in April
""",
    "src/fernway/__init__.py": '"""Fernway: allotment plot bookings."""\n\n__version__ = "0.7.2"\n',
    "src/fernway/app.py": '''"""The web application: routes and the entry point."""

import tomllib
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from fernway import booking

SETTINGS = tomllib.loads(Path("config/settings.toml").read_text(encoding="utf-8"))

app = Starlette(routes=[
    Route("/api/plots", booking.list_plots),
    Route("/api/bookings", booking.create_booking, methods=["POST"]),
    Route("/api/bookings/{id}", booking.cancel_booking, methods=["DELETE"]),
    Route("/api/waitlist", booking.waitlist),
])


def main() -> None:
    server = SETTINGS["server"]
    uvicorn.run(app, host=server["host"], port=server["port"])
''',
    "src/fernway/booking.py": '''"""Booking and cancelling plots, and the waitlist."""

from fernway.models import Booking, Member, Plot

MAX_PLOTS_PER_MEMBER = 2


class BookingError(Exception):
    """A booking that cannot be made (plot taken, member at the limit)."""


def book_plot(member: Member, plot: Plot) -> Booking:
    if plot.tenant_id:
        raise BookingError(f"plot {plot.plot_id} is already taken")
    if len(member.plots) >= MAX_PLOTS_PER_MEMBER:
        raise BookingError(f"{member.name} already has {MAX_PLOTS_PER_MEMBER} plots")
    return Booking(member_id=member.member_id, plot_id=plot.plot_id)


def waitlist_position(waitlist: list[str], name: str) -> int:
    """1-based position of `name` on the waitlist."""
    return waitlist.index(name) + 1
''',
    "src/fernway/pricing.py": '''"""Seasonal fees."""

from decimal import Decimal

FEES = {
    "standard": Decimal("80.00"),
    "half": Decimal("48.00"),
    "raised_bed": Decimal("45.00"),
}
LATE_FEE = Decimal("10.00")
LOYALTY_YEARS = 5
LOYALTY_DISCOUNT = Decimal("0.10")


def season_fee(plot_type: str, *, years_member: int = 0, late: bool = False) -> Decimal:
    fee = FEES[plot_type]
    if years_member > LOYALTY_YEARS:
        fee -= fee * LOYALTY_DISCOUNT
    return fee + (LATE_FEE if late else Decimal("0"))
''',
    "src/fernway/models.py": '''"""Plain records for members, plots and bookings."""

from dataclasses import dataclass, field


@dataclass
class Member:
    member_id: str
    name: str
    email: str
    plots: list[str] = field(default_factory=list)


@dataclass
class Plot:
    plot_id: str
    site: str
    size_m2: int
    tenant_id: str = ""


@dataclass
class Booking:
    member_id: str
    plot_id: str
''',
    "src/fernway/notify.py": '''"""Text-message reminders before a member's watering turn."""

REMINDER_TEMPLATE = "Hi {name}, your watering turn at {site} starts in {hours} hours."


def reminder_text(name: str, site: str, hours: int) -> str:
    return REMINDER_TEMPLATE.format(name=name, site=site, hours=hours)
''',
    "tests/test_booking.py": '''import pytest

from fernway.booking import BookingError, book_plot, waitlist_position
from fernway.models import Member, Plot


def test_taken_plot_is_refused():
    with pytest.raises(BookingError):
        book_plot(Member("M-1", "A", "a@example.org"), Plot("N-01", "Northgate", 250, tenant_id="M-2"))


def test_waitlist_position_is_one_based():
    assert waitlist_position(["Noor", "Bence"], "Bence") == 2
''',
    "tests/test_pricing.py": '''from decimal import Decimal

from fernway.pricing import season_fee


def test_late_fee_is_added():
    assert season_fee("half", late=True) == Decimal("58.00")


def test_loyalty_discount():
    assert season_fee("standard", years_member=6) == Decimal("72.00")
''',
    "web/package.json": """{
  "name": "fernway-web",
  "version": "0.7.2",
  "private": true,
  "scripts": {
    "build": "esbuild src/main.js --bundle --minify --outfile=dist/app.js",
    "test": "vitest run"
  },
  "devDependencies": {
    "esbuild": "^0.24.0",
    "vitest": "^2.1.0"
  }
}
""",
    "web/index.html": """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Fernway plots</title><link rel="stylesheet" href="styles/main.css"></head>
<body><main id="app"></main><script type="module" src="src/main.js"></script></body>
</html>
""",
    "web/src/main.js": """import { renderCalendar } from "./calendar.js";
import { bookPlot } from "./booking.js";
import { PRICES } from "./prices.js";

document.querySelector("#app").addEventListener("click", async (event) => {
  const plotId = event.target.dataset.plot;
  if (plotId) await bookPlot(plotId);
});
renderCalendar(document.querySelector("#app"), PRICES);
""",
    "web/src/booking.js": """import { post } from "./api.js";

const MAX_RETRIES = 3;

export async function bookPlot(plotId) {
  for (let attempt = 1; attempt <= MAX_RETRIES; attempt++) {
    const response = await post("/bookings", { plot_id: plotId });
    if (response.status !== 503) return response;
  }
  throw new Error(`could not book ${plotId} after ${MAX_RETRIES} attempts`);
}
""",
    "web/src/api.js": """const API_BASE = "/api";
const TIMEOUT_MS = 8000;

export async function post(path, body) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    return await fetch(API_BASE + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  } finally {
    clearTimeout(timer);
  }
}
""",
    "web/src/prices.js": """// Seasonal fees shown on the booking page.
export const PRICES = {
  standard: "80.00",
  half: "48.00",
  raised_bed: "52.00",
};
""",
    "web/src/calendar.js": """const MONTHS = ["Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct"];

export function renderCalendar(root, prices) {
  root.innerHTML = MONTHS.map((month) => `<section class="month"><h2>${month}</h2></section>`).join("");
  root.dataset.prices = JSON.stringify(prices);
}
""",
    "web/styles/main.css": """:root { --leaf: #2e7d32; --cream: #f5f0e1; }
body { margin: 0; font-family: system-ui, sans-serif; background: var(--cream); }
.month { border-left: 4px solid var(--leaf); padding: 0.5rem 1rem; }
""",
    "web/test/booking.test.js": """import { describe, expect, it, vi } from "vitest";
import { bookPlot } from "../src/booking.js";

vi.mock("../src/api.js", () => ({ post: vi.fn(async () => ({ status: 503 })) }));

describe("bookPlot", () => {
  it("gives up after three attempts", async () => {
    await expect(bookPlot("R-04")).rejects.toThrow("after 3 attempts");
  });
});
""",
    "scripts/backup.sh": """#!/bin/sh
# Nightly copy of the production database; keeps KEEP_DAYS days of backups.
set -eu
KEEP_DAYS=14
DEST=/var/backups/fernway
sqlite3 /var/lib/fernway/fernway.db ".backup $DEST/fernway-$(date +%F).db"
find "$DEST" -name 'fernway-*.db' -mtime +$KEEP_DAYS -delete
""",
    "scripts/import_members.py": '''#!/usr/bin/env python3
"""Import members from the committee's spreadsheet export (data/members.csv)."""

import csv
import sys

with open(sys.argv[1] if len(sys.argv) > 1 else "data/members.csv", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        print(row["member_id"], row["name"])
''',
    "assets/site-map.svg": """<svg xmlns="http://www.w3.org/2000/svg" width="200" height="120" viewBox="0 0 200 120">
  <rect x="10" y="10" width="80" height="100" fill="#2e7d32"/><text x="20" y="60">Northgate</text>
  <rect x="110" y="10" width="80" height="100" fill="#558b2f"/><text x="118" y="60">Riverside</text>
</svg>
""",
    "data/waitlist.csv": _csv("position,name,site,requested", WAITLIST),
    "data/archive/plots-2025.csv": _csv("plot_id,site,type,tenant_id,season_fee",
                                        [(p, SITES[p[0]], k, t, f) for p, k, t, f in PLOTS_2025]),
}
GENERATED = {
    "data/plots.csv": _plots_csv,
    "data/members.csv": _members_csv,
    "data/exports/invoices-2026-q1.csv": _invoices_csv,
}


def build(directory: Path) -> None:
    """Write the project tree into `directory`; every file and folder gets the same fixed mtime."""
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {name: text.encode("utf-8") for name, text in TEXT.items()}
    files.update({name: make().encode("utf-8") for name, make in GENERATED.items()})
    files["assets/logo.png"] = _png()
    for name, data in sorted(files.items()):
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if name in EXECUTABLE else 0o644)
    folders = sorted({p for p in directory.rglob("*") if p.is_dir()}, key=lambda p: len(p.parts), reverse=True)
    for folder in folders:
        folder.chmod(0o755)
    for path in [*(directory / name for name in files), *folders, directory]:
        os.utime(path, (MTIME, MTIME))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python fixture.py DIR")
    build(Path(sys.argv[1]))

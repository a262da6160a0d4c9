"""Team-workspace MCP server: a wiki, an issue tracker and a calendar behind one set of tools.

This is an example target for the tool-definition optimizer. It imitates servers that glue several
backends together and ship the tools with whatever names the backends used: generic, colliding verbs
(`search`, `query`, `find`, `get`, `get_item`, `create`, `create_item`, `list`, `list_items`, ...)
that never say which subsystem they belong to. The definitions are thin and generic ON PURPOSE:
one-word descriptions ("Search", "Run a query", "Find entries"), two tools with no description at all,
parameters without descriptions and with vague names (`q`, `id`, `data`, `value`, `user`), and a few
argument traps (ISO dates, upper-case issue keys such as ENG-142, e-mail addresses instead of names)
that a good parameter description would prevent. Do not "fix" them here; fixing them is the
optimizer's job, and the eval tasks in `tasks/` measure how much it helps.

Behaviour that matters for evaluation:
- Every result is plain text and a pure function of the arguments. Many agent episodes share one
  server process, so the mutating tools (`create`, `create_item`, `schedule`, `update_item`) change
  nothing that other calls read; they return deterministic confirmations whose ids are derived from
  a sha256 of the arguments.
- Failures raise ToolError (an `isError` result) whose message starts with a category:
  `validation:` (fix the input; the message states the expected format), `business:` (do not retry),
  `permission:` (restricted content) or `transient:` (one deterministic case: room Orion's booking
  calendar is always "temporarily unavailable").
- A query that finds nothing returns a sentence saying what was searched, not an error.

Run: `python examples/workspace/server.py` (stdio) or `... --http 8932` (streamable HTTP on
http://127.0.0.1:8932/mcp).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
from datetime import date as _date

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

# --------------------------------------------------------------------------------------------------
# Data (read-only; nothing below is ever mutated)
# --------------------------------------------------------------------------------------------------

PEOPLE = {  # email -> (name, role)
    "priya@acme.dev": ("Priya Raman", "platform lead"),
    "marco@acme.dev": ("Marco Bianchi", "site reliability engineer"),
    "dana@acme.dev": ("Dana Whitfield", "product manager"),
    "kenji@acme.dev": ("Kenji Sato", "backend engineer"),
    "lena@acme.dev": ("Lena Vogel", "security engineer"),
    "omar@acme.dev": ("Omar Haddad", "frontend engineer"),
    "sam@acme.dev": ("Sam Okafor", "engineering manager"),
    "rosa@acme.dev": ("Rosa Delgado", "people partner"),
}

# fmt: off
# (doc id, path, title, owner email, updated, linked issues, body)
DOCS = [
    ("DOC-101", "eng/runbooks/deploy.md", "Deploy runbook", "priya@acme.dev", "2026-10-12", [],
     "Deploys go out through the shipit pipeline from the release branch. Every release starts as a canary on 5% "
     "of traffic for 20 minutes before full rollout. Rollback: run `shipit rollback --to previous`; the rollback "
     "window is 30 minutes. There is a deploy freeze every Friday after 14:00 UTC."),
    ("DOC-102", "eng/runbooks/database-failover.md", "Database failover runbook", "marco@acme.dev",
     "2026-08-30", ["OPS-19"],
     "The primary database is pg-main-1 in eu-west and the hot replica is pg-main-2. To fail over, promote the "
     "replica with the command `pgctl promote pg-main-2`. Expected failover time is under 90 seconds. Page the "
     "on-call DBA in #db-oncall before promoting."),
    ("DOC-103", "eng/runbooks/oncall.md", "On-call handbook", "sam@acme.dev", "2026-09-05", ["OPS-15"],
     "The on-call rotation is weekly with handover on Mondays at 10:00. The Sev1 response target is 15 minutes, "
     "Sev2 is 4 hours. Escalation goes primary, then secondary, then the engineering manager."),
    ("DOC-104", "eng/postmortems/2026-09-login-outage.md", "Postmortem: login outage (September 2026)",
     "kenji@acme.dev", "2026-09-20", ["ENG-118", "ENG-123"],
     "On 2026-09-14 logins failed for 47 minutes because the session cache evicted all keys after a config push. "
     "Root cause: maxmemory-policy was set to allkeys-lru on the session cache. Follow-up not yet filed: add "
     "alerting on the session cache hit rate."),
    ("DOC-105", "eng/postmortems/2026-10-payment-delays.md", "Postmortem: payment webhook delays",
     "marco@acme.dev", "2026-10-06", ["OPS-12"],
     "On 2026-10-02 webhooks from the payment provider queued for 3 hours because the worker pool was capped at 4 "
     "workers. Fix: let the webhook workers autoscale with queue depth."),
    ("DOC-106", "eng/architecture/overview.md", "Architecture overview", "priya@acme.dev", "2026-07-14", ["ENG-142"],
     "Services: gateway (Go), accounts (Python) and billing (Kotlin). Services talk gRPC internally; the public "
     "REST API listens on port 8443. The event bus is the Kafka cluster named river."),
    ("DOC-107", "eng/architecture/adr-007-feature-flags.md", "ADR-007: Feature flags", "kenji@acme.dev",
     "2026-05-02", ["ENG-138"],
     "Decision: use the in-house flag service semaphore instead of a vendor. Any flag older than 90 days must be "
     "removed from the code."),
    ("DOC-108", "eng/onboarding/new-engineer.md", "New engineer onboarding", "sam@acme.dev", "2026-06-18", [],
     "Week one: laptop setup, request access to the acme-eng GitHub org and shadow one on-call shift. Local "
     "development runs with `devbox up`. Your onboarding buddy is assigned by your manager."),
    ("DOC-109", "eng/security/secrets-policy.md", "Secrets policy", "lena@acme.dev", "2026-04-22", ["OPS-7"],
     "Secrets live in Vault at vault.acme.dev and must be rotated every 60 days. Never commit .env files. Report a"
     " leaked secret in #sec-incidents within 1 hour."),
    ("DOC-110", "product/roadmap-2027.md", "Product roadmap 2027", "dana@acme.dev",
     "2026-10-28", ["ENG-150", "ENG-152"],
     "H1 themes: self-serve onboarding, usage-based billing (project LEDGER) and mobile offline mode. The launch "
     "target for usage-based billing is 2027-03-15."),
    ("DOC-111", "product/specs/dark-mode.md", "Spec: dark mode", "omar@acme.dev", "2026-09-29", ["ENG-127"],
     "Dark mode ships behind the flag ui.dark_mode and follows the OS setting by default. Text must meet a minimum"
     " contrast ratio of 4.5:1."),
    ("DOC-112", "ops/vendors.md", "Vendor contacts", "marco@acme.dev", "2026-03-11", ["OPS-14"],
     "CDN: Fastlane, account id FL-20931, status page status.fastlane.example. Paging: PagerTree, support hotline "
     "option 3."),
    ("DOC-113", "ops/office-wifi.md", "Office Wi-Fi and printers", "rosa@acme.dev", "2026-02-01", [],
     "The guest network is acme-guest; its password rotates monthly and is posted at reception. The printer queue "
     "is print.acme.local."),
    ("DOC-114", "team/holidays-2026.md", "Company holidays 2026", "rosa@acme.dev", "2026-01-05", [],
     "The office is closed from 2026-12-24 to 2027-01-01. Floating holidays: two per year, booked in the HR "
     "portal."),
    ("DOC-115", "hr/compensation-bands.md", "Compensation bands", "rosa@acme.dev", "2026-03-31", [],
     "Salary bands by level for 2026."),
    ("DOC-116", "hr/performance-reviews.md", "Performance review process", "rosa@acme.dev", "2026-05-15", [],
     "Calibration happens twice a year."),
]
RESTRICTED_PREFIX = "hr/"

STATUSES = ("open", "in_progress", "in_review", "closed")
# key -> (title, status, assignee, priority, due, linked doc, description)
ISSUES = {
    "ENG-101": ("Login page shows a blank screen on Safari 17", "closed", "omar@acme.dev", "P2", "2026-10-01",
        None, "Fixed by polyfilling structuredClone."),
    "ENG-118": ("Session cache evicts every key after a config push", "closed", "kenji@acme.dev", "P1", "2026-09-16",
        "eng/postmortems/2026-09-login-outage.md", "Hotfixed by pinning the eviction policy."),
    "ENG-123": ("Validate cache eviction policy in config pushes", "in_progress", "kenji@acme.dev", "P1", "2026-11-20",
        "eng/postmortems/2026-09-login-outage.md",
        "Reject any config push that sets allkeys-lru on the session cache."),
    "ENG-127": ("Dark mode: settings page fails contrast check", "open", "omar@acme.dev", "P3", "2026-12-15",
        "product/specs/dark-mode.md", "Secondary buttons are below the spec."),
    "ENG-131": ("Flaky test in billing invoice rounding", "open", "kenji@acme.dev", "P3", None,
        None, "Fails about once in 40 runs on CI."),
    "ENG-135": ("Rate limiter returns 500 instead of 429", "in_review", "priya@acme.dev", "P2", "2026-11-28",
        None, "Clients retry immediately on 500 and make the overload worse."),
    "ENG-138": ("Clean up stale feature flags", "open", "priya@acme.dev", "P3", None,
        "eng/architecture/adr-007-feature-flags.md", "Twelve flags are past the limit."),
    "ENG-142": ("Upgrade the gateway to Go 1.24", "in_progress", "priya@acme.dev", "P2", "2026-12-05",
        "eng/architecture/overview.md", "Blocked on the protobuf plugin release."),
    "ENG-144": ("CSV export drops unicode characters", "open", "omar@acme.dev", "P2", "2026-12-12",
        None, "Names with accents come out as question marks."),
    "ENG-147": ("Password reset links expire too early", "open", "lena@acme.dev", "P1", "2026-11-30",
        None, "Links expire after 5 minutes instead of 60."),
    "ENG-150": ("Usage-based billing: metering service skeleton", "open", "kenji@acme.dev", "P1", "2027-01-15",
        "product/roadmap-2027.md", "First milestone of project LEDGER."),
    "ENG-152": ("Mobile offline mode: sync conflict resolution", "open", "omar@acme.dev", "P2", "2027-02-01",
        "product/roadmap-2027.md", "Last writer wins is not acceptable for notes."),
    "ENG-155": ("Audit log misses the actor for API-key requests", "in_review", "lena@acme.dev", "P2", "2026-12-01",
        None, "The actor field is empty when a request authenticates with an API key."),
    "ENG-158": ("Search results paginate twice", "closed", "omar@acme.dev", "P3", None,
        None, "Page two repeated page one."),
    "ENG-160": ("Timezone bug in the ICS calendar export", "open", "kenji@acme.dev", "P2", "2026-12-10",
        None, "All-day entries shift by one day for users west of UTC."),
    "OPS-7": ("Rotate the Vault root token", "closed", "lena@acme.dev", "P1", "2026-05-01",
        "eng/security/secrets-policy.md", "Rotated and sealed."),
    "OPS-8": ("Renew the TLS certificate for api.acme.dev", "open", "marco@acme.dev", "P1", "2026-12-01",
        None, "The current certificate expires on 2026-12-06."),
    "OPS-10": ("Postgres replica lag alerts are too noisy", "open", "marco@acme.dev", "P3", None,
        None, "Raise the threshold from 5 s to 30 s."),
    "OPS-11": ("Move nightly backups to cold storage", "open", "marco@acme.dev", "P2", "2027-01-31",
        None, "Saves about 40% on storage."),
    "OPS-12": ("Autoscale payment webhook workers", "in_progress", "marco@acme.dev", "P1", "2026-11-25",
        "eng/postmortems/2026-10-payment-delays.md", "Scale on queue depth, minimum 4, maximum 32."),
    "OPS-14": ("Fastlane CDN purge API fails intermittently", "open", "marco@acme.dev", "P2", "2026-12-08",
        "ops/vendors.md", "About 3% of purge calls time out."),
    "OPS-15": ("Onboard a new on-call secondary", "open", "sam@acme.dev", "P3", None,
        "eng/runbooks/oncall.md", "Needs one shadow shift first."),
    "OPS-16": ("Upgrade Kafka cluster river to 3.8", "in_review", "priya@acme.dev", "P2", "2026-12-02",
        None, "Rolling upgrade, one broker at a time."),
    "OPS-17": ("Office printer queue offline", "closed", "rosa@acme.dev", "P4", None, None, "Print server restarted."),
    "OPS-19": ("Disk usage alert on pg-main-1", "open", "marco@acme.dev", "P1", "2026-11-18",
        "eng/runbooks/database-failover.md", "WAL archive is filling the data volume."),
}
PROJECT_QUEUES = {"ENG": "eng-triage", "OPS": "ops-triage"}

EVERYONE = tuple(PEOPLE)
ROOMS = ("Atlas", "Zephyr", "Cobalt", "Nook", "Auditorium", "Orion")
UNAVAILABLE_ROOM = "Orion"
WORK_START, WORK_END = "09:00", "18:00"
# (event id, date, start, end, title, room or None, attendees)
EVENTS = [
    ("EVT-2001", "2026-11-16", "10:00", "11:00", "Sprint planning", "Atlas",
     ("sam@acme.dev", "priya@acme.dev", "kenji@acme.dev", "omar@acme.dev")),
    ("EVT-2002", "2026-11-17", "14:00", "15:00", "Platform sync", "Zephyr", ("priya@acme.dev", "marco@acme.dev")),
    ("EVT-2003", "2026-11-18", "11:00", "12:00", "Security review: password reset flow", "Cobalt",
     ("lena@acme.dev", "kenji@acme.dev")),
    ("EVT-2004", "2026-11-19", "09:30", "10:00", "1:1 Sam and Priya", "Nook", ("sam@acme.dev", "priya@acme.dev")),
    ("EVT-2005", "2026-11-20", "15:00", "16:00", "Roadmap review 2027", "Atlas",
     ("dana@acme.dev", "sam@acme.dev", "priya@acme.dev")),
    ("EVT-2006", "2026-11-23", "13:00", "14:00", "Incident retro: payment webhook delays", "Zephyr",
     ("marco@acme.dev", "kenji@acme.dev", "sam@acme.dev")),
    ("EVT-2007", "2026-11-24", "16:00", "17:00", "Design critique: dark mode", "Cobalt",
     ("omar@acme.dev", "dana@acme.dev")),
    ("EVT-2008", "2026-11-26", "17:00", "18:00", "Q4 all-hands", "Auditorium", EVERYONE),
    ("EVT-2009", "2026-11-30", "10:00", "11:00", "Kafka upgrade go/no-go", "Zephyr",
     ("priya@acme.dev", "marco@acme.dev")),
    ("EVT-2010", "2026-12-01", "09:00", "10:00", "New engineer welcome", "Nook", ("sam@acme.dev",)),
    ("EVT-2011", "2026-12-02", "11:00", "12:00", "Billing metering kickoff", "Atlas",
     ("kenji@acme.dev", "dana@acme.dev", "priya@acme.dev")),
    ("EVT-2012", "2026-12-02", "15:30", "16:00", "Vendor call: Fastlane CDN", "Nook", ("marco@acme.dev",)),
    ("EVT-2013", "2026-12-03", "16:00", "17:00", "Sprint demo", "Auditorium", EVERYONE),
    ("EVT-2014", "2026-12-03", "09:00", "11:00", "Out of office: dentist", None, ("priya@acme.dev",)),
    ("EVT-2015", "2026-12-04", "13:00", "14:30", "Hiring committee", "Cobalt", ("sam@acme.dev", "rosa@acme.dev")),
    ("EVT-2016", "2026-12-07", "14:00", "15:00", "Mobile offline mode design review", "Atlas",
     ("omar@acme.dev", "dana@acme.dev", "kenji@acme.dev")),
    ("EVT-2017", "2026-12-07", "10:00", "10:30", "On-call handover", "Nook", ("marco@acme.dev", "sam@acme.dev")),
    ("EVT-2018", "2026-12-09", "09:00", "18:00", "Team offsite in Lisbon (all day)", None, EVERYONE),
    ("EVT-2019", "2026-12-10", "10:00", "12:00", "Security awareness training", "Auditorium", EVERYONE),
    ("EVT-2020", "2026-12-18", "18:00", "21:00", "Holiday party", "Rooftop", EVERYONE),
]
# fmt: on

# --------------------------------------------------------------------------------------------------
# Helpers: validation, matching, deterministic ids
# --------------------------------------------------------------------------------------------------

STOP = {
    "a",
    "an",
    "the",
    "of",
    "for",
    "in",
    "on",
    "to",
    "about",
    "any",
    "there",
    "does",
    "do",
    "did",
    "say",
    "says",
    "said",
    "according",
    "per",
    "it",
    "its",
    "and",
    "then",
    "with",
    "that",
    "this",
    "at",
    "by",
    "from",
    "is",
    "are",
    "was",
    "were",
    "be",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "how",
    "why",
    "me",
    "my",
    "our",
    "we",
    "i",
    "you",
    "your",
    "can",
    "could",
    "would",
    "should",
    "please",
    "tell",
    "show",
    "find",
    "search",
    "look",
    "up",
    "get",
    "list",
    "open",
    "check",
    "see",
    "give",
    "all",
    "some",
    "wiki",
    "page",
    "pages",
    "doc",
    "docs",
    "document",
    "documents",
    "ticket",
    "tickets",
    "issue",
    "issues",
    "bug",
    "bugs",
    "meeting",
    "meetings",
    "event",
    "events",
    "calendar",
    "tracker",
    "item",
    "items",
    "entry",
    "entries",
}
TOKEN_RE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|[a-z]+-\d+\b"
    r"|[a-z0-9]+(?:[.:][a-z0-9]+)*"
)
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
KEY_RE = re.compile(r"^([A-Z]+)-(\d+)$")


def _stem(tok: str) -> str:
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss") and not tok[-2].isdigit():
        return tok[:-1]
    return tok


def _tokens(text: str) -> set[str]:
    toks = set()
    for tok in TOKEN_RE.findall(text.lower()):
        tok = tok.strip(".:")
        if tok and tok not in STOP:
            toks.add(_stem(tok))
            if "." in tok and "@" not in tok:
                toks.update(_stem(part) for part in tok.split(".") if part and part not in STOP)
    return toks


def _rank(query: str, items: list, text_of, limit: int) -> list:
    """Items sharing the most distinct tokens with the query; ties keep the data order."""
    qt = _tokens(query)
    scored = [(len(qt & _tokens(text_of(item))), i, item) for i, item in enumerate(items)]
    top = max((s for s, _, _ in scored), default=0)
    if top == 0:
        return []
    floor = max(1, math.ceil(top * 0.6))
    hits = sorted((x for x in scored if x[0] >= floor), key=lambda x: (-x[0], x[1]))
    return [item for _, _, item in hits[:limit]]


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def _iso_date(value: str | None, field: str) -> str:
    text = (value or "").strip()
    if ISO_RE.match(text):
        try:
            _date.fromisoformat(text)
            return text
        except ValueError:
            pass
    raise ToolError(f"validation: {field} must be an ISO date YYYY-MM-DD, e.g. 2026-12-03 (got {value!r})")


def _email(value: str | None, field: str) -> str:
    text = (value or "").strip()
    if EMAIL_RE.match(text):
        if text.lower() not in PEOPLE:
            raise ToolError(f"business: nobody with the email {text!r} works here; known people: {', '.join(PEOPLE)}")
        return text.lower()
    hint = ""
    words = set(re.findall(r"[a-z]+", text.lower()))
    for email, (name, _) in PEOPLE.items():
        if words & set(name.lower().split()):
            hint = f"; {name}'s email is {email}"
            break
    raise ToolError(
        f"validation: {field} must be a person's email address like priya@acme.dev, not a name (got {value!r}){hint}"
    )


def _issue_key(value: str | None) -> str:
    text = (value or "").strip()
    if KEY_RE.match(text):
        return text
    if KEY_RE.match(text.upper()):
        raise ToolError(
            f"validation: issue keys are upper-case project and number, like ENG-142 "
            f"(got {value!r}; try {text.upper()!r})"
        )
    raise ToolError(f"validation: expected an issue key like ENG-142 or OPS-12 (got {value!r})")


def _status(value: str | None, field: str) -> str:
    text = (value or "").strip().lower()
    if text not in STATUSES:
        raise ToolError(f"validation: {field} must be one of {', '.join(STATUSES)} (got {value!r})")
    return text


def _doc_text(doc) -> str:
    _, path, title, owner, _, _, body = doc
    name = PEOPLE[owner][0]
    visible = "" if path.startswith(RESTRICTED_PREFIX) else body
    return f"{path.replace('/', ' ').replace('-', ' ')} {title} {owner} {name} {visible}"


def _snippet(doc, query: str) -> str:
    if doc[1].startswith(RESTRICTED_PREFIX):
        return "(restricted: content hidden)"
    qt = _tokens(query)
    sentences = re.split(r"(?<=[.!?])\s+", doc[6])
    best = max(sentences, key=lambda s: (len(qt & _tokens(s)), -sentences.index(s)))
    return best


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _verb(count: int) -> str:
    return "matches" if count == 1 else "match"


def _issue_line(key: str) -> str:
    title, status, assignee, prio, due, _, _ = ISSUES[key]
    return f"{key} [{status}] {title} (assignee {assignee}, {prio}, due {due or 'none'})"


def _event_line(ev) -> str:
    eid, day, start, end, title, room, people = ev
    who = "everyone" if people == EVERYONE else ", ".join(people)
    return f"{eid} | {day} {start}-{end} | {title} | room {room or 'none'} | attendees {who}"


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


# --------------------------------------------------------------------------------------------------
# Server and tools (thin, generic definitions on purpose — see the module docstring)
# --------------------------------------------------------------------------------------------------

server = MCPServer("workspace")

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


@server.tool(annotations=READ, structured_output=False)
def search(q: str, limit: int = 5) -> str:
    """Search"""
    if limit < 1:
        raise ToolError(f"validation: limit must be a positive integer (got {limit})")
    hits = _rank(q, DOCS, _doc_text, limit)
    if not hits:
        return f"No documents match {q!r} (searched {len(DOCS)} documents)."
    lines = [f"{_n(len(hits), 'document')} {_verb(len(hits))} {q!r} (searched {len(DOCS)} documents):"]
    for doc in hits:
        did, path, title, owner, updated, linked, _ = doc
        lines.append(
            f"- {path} ({did}): {title}. Owner: {PEOPLE[owner][0]} <{owner}>. Updated {updated}. "
            f"Linked issues: {', '.join(linked) or 'none'}."
        )
        lines.append(f"  Excerpt: {_snippet(doc, q)}")
    return "\n".join(lines)


@server.tool(annotations=READ, structured_output=False)
def query(q: str, status: str | None = None) -> str:
    """Run a query"""
    keys = list(ISSUES)
    if status:
        wanted = _status(status, "status")
        keys = [k for k in keys if ISSUES[k][1] == wanted]

    def text(k):
        title, st, assignee, prio, due, linked, desc = ISSUES[k]
        return f"{title} {st} {assignee} {PEOPLE[assignee][0]} {prio} {desc}"  # full text, not keys

    hits = _rank(q, keys, text, 8)
    scope = f"searched {len(ISSUES)} issues" + (f", status {status}" if status else "")
    if not hits:
        return f"No issues match {q!r} ({scope})."
    return "\n".join([f"{_n(len(hits), 'issue')} {_verb(len(hits))} {q!r} ({scope}):"] + [_issue_line(k) for k in hits])


@server.tool(structured_output=False)
def find(q: str, value: str | None = None) -> str:
    """Find entries"""
    events = EVENTS
    if value:
        day = _iso_date(value, "value")
        events = [ev for ev in EVENTS if ev[1] == day]
        if not events:
            return f"No events on {day} (searched {len(EVENTS)} events)."
        ranked = _rank(q, events, lambda ev: " ".join(map(str, ev[:6])) + " " + " ".join(ev[6]), len(events))
        hits = ranked + [ev for ev in events if ev not in ranked]
    else:

        def text(ev):
            names = " ".join(PEOPLE[p][0] for p in ev[6])
            return " ".join(str(x) for x in ev[:6]) + " " + " ".join(ev[6]) + " " + names

        hits = _rank(q, events, text, 6)
        if not hits:
            return f"No events match {q!r} (searched {len(EVENTS)} events)."
    head = _n(len(hits), "event") + (f" on {value}" if value else f" {_verb(len(hits))} {q!r}")
    return "\n".join([f"{head} (searched {len(EVENTS)} events):"] + [_event_line(ev) for ev in hits])


@server.tool(annotations=READ, structured_output=False)
def get(id: str) -> str:
    """Get by id"""
    text = (id or "").strip().lstrip("/")
    doc = None
    if re.match(r"^doc-\d+$", text, re.I):
        doc = next((d for d in DOCS if d[0] == text.upper()), None)
        if doc is None:
            return f"No document with id {text.upper()} (ids run DOC-101 to DOC-{100 + len(DOCS)})."
    elif "/" in text and re.match(r"^[\w./-]+$", text):
        path = text if text.endswith(".md") else text + ".md"
        doc = next((d for d in DOCS if d[1] == path), None)
        if doc is None:
            return f"No document at {path} ({len(DOCS)} documents exist; browse folders with list)."
    else:
        raise ToolError(
            "validation: expected a document path like eng/runbooks/deploy.md or a document id "
            f"like DOC-101 (got {id!r})"
        )
    did, path, title, owner, updated, linked, body = doc
    if path.startswith(RESTRICTED_PREFIX):
        raise ToolError(f"permission: {path} is restricted to the People team; ask rosa@acme.dev for access")
    return (
        f"{path} ({did})\nTitle: {title}\nOwner: {PEOPLE[owner][0]} <{owner}>\nUpdated: {updated}\n"
        f"Linked issues: {', '.join(linked) or 'none'}\n\n{body}"
    )


@server.tool(annotations=READ, structured_output=False)
def get_item(id: str) -> str:
    key = _issue_key(id)
    if key not in ISSUES:
        project = key.split("-")[0]
        if project not in PROJECT_QUEUES:
            raise ToolError(f"business: there is no tracker project {project!r}; projects are ENG and OPS")
        raise ToolError(f"business: issue {key} does not exist")
    title, status, assignee, prio, due, linked, desc = ISSUES[key]
    return (
        f"{key}: {title}\nStatus: {status}\nAssignee: {assignee}\nPriority: {prio}\n"
        f"Due: {due or 'none'}\nLinked doc: {linked or 'none'}\nDescription: {desc}"
    )


@server.tool(annotations=WRITE, structured_output=False)
def create(path: str, data: str) -> str:
    """Create"""
    text = (path or "").strip().lstrip("/")
    if not re.match(r"^[a-z0-9-]+(/[a-z0-9-]+)*/[a-z0-9-]+\.md$", text):
        raise ToolError(
            "validation: path must be a lower-case wiki path ending in .md inside a folder, "
            f"like eng/notes/my-page.md (got {path!r})"
        )
    folder = text.split("/")[0]
    if text.startswith(RESTRICTED_PREFIX):
        raise ToolError(f"permission: only the People team can create pages under {RESTRICTED_PREFIX}")
    folders = sorted({d[1].split("/")[0] for d in DOCS})
    if folder not in folders:
        raise ToolError(f"validation: top-level folder must be one of {', '.join(folders)} (got {folder!r})")
    if any(d[1] == text for d in DOCS):
        raise ToolError(f"business: a page already exists at {text}; pick another path")
    if len((data or "").strip()) < 3:
        raise ToolError("validation: data (the page content) must not be empty")
    rev = "r-" + _digest("create", text, data)[:6]
    return (
        f"Created wiki page {text} (revision {rev}, {len(data.split())} words). View it at https://wiki.acme.dev/{text}"
    )


@server.tool(structured_output=False, annotations=WRITE)
def create_item(data: str, value: str = "ENG", user: str | None = None) -> str:
    """Create item"""
    project = (value or "").strip().upper()
    if project not in PROJECT_QUEUES:
        raise ToolError(f"validation: value must be a tracker project key, ENG or OPS (got {value!r})")
    title = (data or "").strip()
    if len(title) < 5:
        raise ToolError("validation: data (the issue title) must be at least 5 characters")
    assignee = _email(user, "user") if user else None
    digits = "".join(str(int(c, 16) % 10) for c in _digest("item", project, title, assignee)[:2])
    key = f"{project}-9{digits}"
    who = f"assigned to {assignee}" if assignee else "unassigned"
    return (
        f"Filed {key}: {title!r} (project {project}, status open, priority P3, {who}). "
        f"It is in the {PROJECT_QUEUES[project]} queue."
    )


@server.tool(annotations=WRITE, structured_output=False)
def schedule(data: str, value: str, user: str, time: str = "10:00", room: str = "Atlas") -> str:
    day = _iso_date(value, "value")
    email = _email(user, "user")
    if not re.match(r"^([01]\d|2[0-3]):[0-5]\d$", (time or "").strip()):
        raise ToolError(f"validation: time must be 24-hour HH:MM, e.g. 14:30 (got {time!r})")
    start = _minutes(time.strip())
    if not _minutes(WORK_START) <= start <= _minutes(WORK_END) - 60:
        raise ToolError(f"validation: time must be within working hours {WORK_START}-17:00 (got {time!r})")
    match = [r for r in ROOMS if r.lower() == (room or "").strip().lower()]
    if not match:
        raise ToolError(f"validation: room must be one of {', '.join(ROOMS)} (got {room!r})")
    room = match[0]
    if room == UNAVAILABLE_ROOM:
        raise ToolError(
            f"transient: the booking calendar for room {room} is temporarily unavailable; "
            "retry later or book another room"
        )
    end = start + 60
    for ev in EVENTS:
        if ev[1] == day and ev[5] == room and _minutes(ev[2]) < end and start < _minutes(ev[3]):
            raise ToolError(
                f"business: room {room} is already booked {day} {ev[2]}-{ev[3]} ({ev[4]}); pick another time or room"
            )
    title = (data or "").strip() or "Meeting"
    eid = "EVT-" + _digest("schedule", title, day, email, time, room)[:6]
    note = ""
    for ev in EVENTS:
        if ev[1] == day and email in ev[6] and _minutes(ev[2]) < end and start < _minutes(ev[3]):
            note = f" Note: {email} already has another event at that time."
    return (
        f"Scheduled {eid}: {title!r} on {day} {_hhmm(start)}-{_hhmm(end)} in room {room}; "
        f"invites sent to {email}.{note}"
    )


@server.tool(name="list", annotations=READ, structured_output=False)
def list_(path: str = "") -> str:
    """List"""
    prefix = (path or "").strip().strip("/")
    if not prefix:
        counts: dict[str, int] = {}
        for d in DOCS:
            counts[d[1].split("/")[0]] = counts.get(d[1].split("/")[0], 0) + 1
        return "Folders: " + ", ".join(f"{f}/ ({_n(n, 'document')})" for f, n in sorted(counts.items()))
    docs = [d for d in DOCS if d[1].startswith(prefix + "/")]
    if not docs:
        folders = sorted({d[1].split("/")[0] for d in DOCS})
        return f"No documents under {prefix}/ (top-level folders: {', '.join(folders)})."
    lines = [f"{_n(len(docs), 'document')} under {prefix}/:"]
    for did, p, title, _, updated, _, _ in docs:
        mark = " [restricted]" if p.startswith(RESTRICTED_PREFIX) else ""
        lines.append(f"- {p} ({did}): {title}, updated {updated}{mark}")
    return "\n".join(lines)


@server.tool(annotations=READ, structured_output=False)
def list_items(user: str | None = None, status: str | None = None) -> str:
    """List items"""
    if not user and not status:
        raise ToolError(f"validation: give user (an assignee email) or status ({', '.join(STATUSES)}) or both")
    keys = list(ISSUES)
    filters = []
    if user:
        email = _email(user, "user")
        keys = [k for k in keys if ISSUES[k][2] == email]
        filters.append(f"assignee {email}")
    if status:
        wanted = _status(status, "status")
        keys = [k for k in keys if ISSUES[k][1] == wanted]
        filters.append(f"status {wanted}")
    if not keys:
        return f"No issues with {', '.join(filters)} (searched {len(ISSUES)} issues)."
    return "\n".join([f"Found {_n(len(keys), 'issue')} ({', '.join(filters)}):"] + [_issue_line(k) for k in keys])


@server.tool(structured_output=False)
def update_item(id: str, value: str | None = None, user: str | None = None) -> str:
    """Update"""
    key = _issue_key(id)
    if key not in ISSUES:
        raise ToolError(f"business: issue {key} does not exist")
    if not value and not user:
        raise ToolError("validation: give value (the new status) or user (the new assignee email)")
    title, status, assignee, *_ = ISSUES[key]
    changes = []
    if value:
        new = _status(value, "value")
        if new == status:
            raise ToolError(f"business: {key} is already {status}; nothing to change")
        changes.append(f"status {status} -> {new}")
    if user:
        email = _email(user, "user")
        if email == assignee:
            raise ToolError(f"business: {key} is already assigned to {email}")
        changes.append(f"assignee {assignee} -> {email}")
    return f"Updated {key} ({title}): {'; '.join(changes)}."


@server.tool(structured_output=False)
def availability(user: str, value: str) -> str:
    """Check availability."""
    email = _email(user, "user")
    day = _iso_date(value, "value")
    busy = sorted((ev for ev in EVENTS if ev[1] == day and email in ev[6]), key=lambda ev: ev[2])
    free, cursor = [], _minutes(WORK_START)
    for ev in busy:
        s, e = _minutes(ev[2]), _minutes(ev[3])
        if s > cursor:
            free.append(f"{_hhmm(cursor)}-{_hhmm(min(s, _minutes(WORK_END)))}")
        cursor = max(cursor, e)
    if cursor < _minutes(WORK_END):
        free.append(f"{_hhmm(cursor)}-{WORK_END}")
    busy_txt = ", ".join(f"{ev[2]}-{ev[3]}" for ev in busy) or "nothing"
    return (
        f"{email} on {day} (working hours {WORK_START}-{WORK_END}):\nBusy: {busy_txt}\n"
        f"Free: {', '.join(free) or 'no free time'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Team-workspace example MCP server (wiki, tracker, calendar).")
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio"
    )
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()

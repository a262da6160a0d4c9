"""General request vocabulary: everyday concepts people ask tools about, each with the words that
signal it and a plain phrase that names it.

The offline rules proposer has no language model, so this table stands in for a model's knowledge
that "parcel", "courier" and "tracking" are all about deliveries. It is plain English written for
common API domains (commerce, support, billing, people, scheduling, documents, files, code, messages,
operations, data), not for any one server, and it is the only source of task vocabulary the proposer
writes: a description says "questions about deliveries: where a package is, the courier, tracking
and arrival" rather than repeating words lifted from particular train prompts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from optimizer.text import terms


@dataclass(frozen=True)
class Concept:
    key: str
    signals: frozenset[str]
    """Stems (`terms`) whose presence in a request points at the concept."""
    head: str
    """What to call the concept in a description: a short noun phrase ("deliveries")."""
    detail: str
    """What it covers, in a few plain words ("where a package is, the courier, …")."""

    @property
    def phrase(self) -> str:
        return f"{self.head} ({self.detail})"


_TABLE = """
delivery | package parcel courier delivery deliver shipment shipped shipping tracking carrier arrive arrival \
transit dispatched driver doorstep postal | deliveries | where a package or parcel is, the courier, tracking, arrival
order | order purchase purchased bought buy checkout basket cart placed | orders | what was bought, when, for how much
order_history | history previous past recent ever | order history | past orders and purchases
refund | refund refunded reimburse reimbursement reimbursed credit credited chargeback | refunds | money returned \
for an order, whether a refund went through
returns_policy | policy policies rule rules allowed eligible eligibility window terms covered warranty guarantee \
allowance | policies | what is allowed or covered, return windows, eligibility
billing | bill billing invoice invoices charge charged payment pay paid owe owed balance autopay subscription \
renewal | billing | invoices, payments, balances owed, plans and subscriptions
customer | customer client caller buyer shopper member profile contact email phone | customers | who someone is, \
contact details, profile
complaint | complaint complain broken damaged faulty defective problem noise stopped working fault cracked | \
problems | something broken, faulty or not working
ticket | ticket tickets case cases incident support reported | support cases | tickets opened about a problem
escalation | manager supervisor escalate escalation senior angry furious upset unhappy urgent human | escalations \
| an upset customer asking for a manager or senior help
status | status progress stage pending stuck happened latest yet still | status | where something stands, what \
happened to it
search_text | search find anything anyone mention mentions mentioning matching keyword contain contains | search \
| anything that mentions a word or topic
count | list every overview many count total | lists | everything of a kind, how many there are
create_new | new create add raise start draft | creating | something new
change | change update edit modify move rename mark reassign assign switch | changes | to something that exists
delete | delete remove cancel drop discard archive erase | removal | deleting or cancelling something
person | person people user users colleague coworker teammate owner assignee staff employee | people | users, \
colleagues, owners, assignees
team | team group department squad organisation organization | teams | groups and departments
meeting | meeting meetings meet sync standup invite invitation appointment | meetings | invitations, appointments
calendar | calendar schedule scheduled book booked booking slot slots agenda | calendars | bookings and time slots
availability | free busy available availability clash conflict | availability | when someone is free or busy
room | room rooms venue desk hall | rooms | places to meet
date_time | date today tomorrow yesterday week month morning afternoon monday tuesday wednesday thursday friday \
deadline | dates | days, weeks, deadlines
document | document documents doc docs page pages wiki article spec memo writeup | documents | pages, specs, \
write-ups
file | file files folder folders directory path upload attachment attachments pdf spreadsheet | files | folders, \
paths, attachments
content | content contents text body says written inside | contents | what a document or file says
issue | issue issues bug bugs defect task tasks story backlog sprint priority | issues | bugs, tasks, backlog
code | code repository repo branch commit commits merge | code | repositories, branches, commits
deploy | deploy deployment release rollout rollback environment production staging | deployments | releases and \
rollbacks
incident | outage alert alerts down error errors failure failing crash latency | outages | alerts, errors, failures
message | message messages inbox reply chat thread notify notification | messages | email, \
chat, notifications
project | project projects milestone roadmap goal goals initiative | projects | milestones, roadmaps, goals
data | data record records row rows table tables database metric metrics | data | records, tables, metrics
analytics | trend trends average sum chart dashboard growth revenue sales usage | figures | totals, trends, usage
product | product products catalog catalogue stock inventory sku | products | stock and catalogue
price | price prices cost costs cheap cheaper expensive discount coupon promo deal spend | prices | costs, \
discounts, deals
shipping_cost | postage express standard threshold | shipping options | delivery speed and cost
account | account accounts login sign password credential settings | accounts | sign-in and settings
permission | permission permissions access role roles admin share shared sharing grant | access | roles, sharing, \
permissions
security | security secret secrets token tokens leak breach vulnerability | security | secrets and breaches
travel | travel trip flight flights hotel hotels reservation airport | travel | trips, flights, hotels
weather | weather forecast rain temperature sunny wind snow | weather | forecasts
location | location address city country place map distance route directions nearby | places | addresses, \
directions
time_zone | timezone zone utc convert conversion | time zones | converting times between zones
money | money amount dollars euros pounds cents currency | amounts | sums of money
hr | leave vacation holiday pto salary payroll hire hiring onboarding benefits | staff matters | leave, pay, hiring
feedback | feedback review reviews rating ratings survey | feedback | reviews and ratings
note | note notes comment comments memo remind reminder todo | notes | comments and reminders
label | label labels tag tags category categories | labels | tags and categories
"""


@functools.cache
def concepts() -> tuple[Concept, ...]:
    """The table, parsed once."""
    out = []
    for line in _TABLE.strip().split("\n"):
        key, signals, head, detail = (part.strip() for part in line.split("|"))
        out.append(Concept(key, frozenset(t for w in signals.split() for t in terms(w)), head, detail))
    return tuple(out)


def concepts_in(stems: set[str] | frozenset[str]) -> list[str]:
    """Keys of the concepts a text's stems signal, in table order."""
    return [c.key for c in concepts() if c.signals & stems]


def concept(key: str) -> Concept:
    return next(c for c in concepts() if c.key == key)

"""Constant data behind the support example server (a small fictional home-goods shop).

Everything here is read-only: the server never mutates it, so every tool result is a pure function
of its arguments. "Today" in this world is TODAY; money is held in integer cents.
"""

TODAY = "2026-03-20"
REFUND_WINDOW_DAYS = 30

# id: (name, email, phone, tier, status, customer since, shipping address)
CUSTOMERS = {
    "C-1001": ("Alice Moreno", "alice.moreno@example.com", "+1-555-0101", "standard", "active",
               "2019-04-11", "88 Cedar Court, Austin, TX 78704"),
    "C-1002": ("Ben Okafor", "ben.okafor@example.net", "+1-555-0102", "gold", "active",
               "2020-09-02", "301 Pine Street, Seattle, WA 98101"),
    "C-1003": ("Chloe Park", "chloe.park@example.com", "+1-555-0103", "standard", "active",
               "2022-01-17", "5 Maple Row, Boulder, CO 80302"),
    "C-1004": ("Dana Whitfield", "dana.whitfield@example.com", "+1-555-0104", "gold", "active",
               "2021-06-02", "14 Alder Lane, Portland, OR 97205"),
    "C-1005": ("Eitan Levi", "eitan.levi@example.org", "+1-555-0105", "vip", "active",
               "2018-03-29", "1200 Lakeshore Drive, Chicago, IL 60611"),
    "C-1006": ("Fatima Zahra", "fatima.zahra@example.com", "+1-555-0106", "standard", "suspended",
               "2023-05-08", "47 Orchard Way, Newark, NJ 07102"),
    "C-1007": ("George Lindqvist", "g.lindqvist@example.com", "+1-555-0107", "standard", "active",
               "2024-02-12", "3 Fjord Place, Minneapolis, MN 55401"),
    "C-1008": ("Hana Sato", "hana.sato@example.com", "+1-555-0108", "gold", "active",
               "2020-11-20", "620 Cherry Blossom Ave, San Jose, CA 95112"),
    "C-1009": ("Ivan Petrov", "ivan.petrov@example.com", "+1-555-0109", "standard", "closed",
               "2019-08-30", "77 Birch Road, Albany, NY 12207"),
    "C-1010": ("Julia Souza", "julia.souza@example.com", "+1-555-0110", "standard", "active",
               "2022-07-19", "19 Bay View Terrace, Sacramento, CA 95814"),
    "C-1011": ("Kwame Mensah", "kwame.mensah@example.com", "+1-555-0111", "vip", "active",
               "2017-10-05", "2 Riverside Plaza, Columbus, OH 43215"),
    "C-1012": ("Lena Fischer", "lena.fischer@example.de", "+1-555-0112", "standard", "active",
               "2023-09-22", "410 Elm Street, Madison, WI 53703"),
}

# id: (plan, price cents, billing period, balance due cents, next invoice date, payment method, autopay,
#      note)
ACCOUNTS = {
    "C-1001": ("Basic Monthly", 900, "month", 0, "2026-04-11", "Visa ending 1881", True, ""),
    "C-1002": ("Pro Annual", 29000, "year", 0, "2026-09-02", "Amex ending 3007", True, ""),
    "C-1003": ("Basic Monthly", 900, "month", 1800, "2026-04-17", "Mastercard ending 5100", False,
               "two invoices unpaid"),
    "C-1004": ("Pro Monthly", 2900, "month", 4210, "2026-04-14", "Visa ending 4242", True, ""),
    "C-1005": ("Enterprise", 19900, "month", 0, "2026-04-01", "bank transfer (net 30)", False, ""),
    "C-1006": ("Pro Monthly", 2900, "month", 8700, "2026-04-08", "Discover ending 6011", True,
               "payment overdue since 2026-02-14; ordering is paused until it is paid"),
    "C-1007": ("Free", 0, "month", 0, "", "none on file", False, ""),
    "C-1008": ("Pro Annual", 29000, "year", 1275, "2026-11-20", "Mastercard ending 7719", True, ""),
    "C-1009": ("Basic Monthly", 900, "month", 0, "", "none on file", False, ""),
    "C-1010": ("Basic Annual", 9000, "year", 0, "2026-07-19", "Visa ending 3366", True, ""),
    "C-1011": ("Enterprise Plus", 49900, "month", 125000, "2026-04-01", "bank transfer (net 30)", False,
               ""),
    "C-1012": ("Pro Monthly", 2900, "month", 360, "2026-04-22", "PayPal (lena.fischer@example.de)", True,
               ""),
}

# Orders. ship: (carrier, tracking number, shipped date). track: the carrier's latest word.
ORDERS = {
    "10001": dict(customer="C-1001", placed="2026-01-08", status="delivered",
                  items=[("Ceramic pour-over set", 1, 3450)],
                  ship=("USPS", "9400111899223817463501", "2026-01-09"), delivered="2026-01-12",
                  track="delivered 2026-01-12 13:05, left on the front porch"),
    "10002": dict(customer="C-1002", placed="2026-01-15", status="delivered",
                  items=[("Standing desk frame", 1, 38900)],
                  ship=("FedEx", "771234567890", "2026-01-16"), delivered="2026-01-21",
                  track="delivered 2026-01-21 10:42, signed for by B. OKAFOR"),
    "10003": dict(customer="C-1003", placed="2026-02-02", status="delivered",
                  items=[("Wool throw blanket", 1, 4995)],
                  ship=("UPS", "1Z999AA10123456701", "2026-02-03"), delivered="2026-02-06",
                  track="delivered 2026-02-06 16:20, left with the building concierge"),
    "10004": dict(customer="C-1004", placed="2026-02-10", status="delivered",
                  items=[("Oak bookshelf", 1, 24900)],
                  ship=("UPS", "1Z999AA10123456702", "2026-02-12"), delivered="2026-02-17",
                  track="delivered 2026-02-17 11:48, left in the garage"),
    "10005": dict(customer="C-1005", placed="2026-02-14", status="delivered",
                  items=[("Leather armchair", 1, 129900)],
                  ship=("FedEx", "771234567891", "2026-02-16"), delivered="2026-02-20",
                  track="delivered 2026-02-20 09:15, white-glove delivery, signed for by E. LEVI"),
    "10006": dict(customer="C-1006", placed="2026-02-18", status="delivered",
                  items=[("Brass desk lamp", 2, 3990)],
                  ship=("USPS", "9400111899223817463506", "2026-02-19"), delivered="2026-02-23",
                  track="delivered 2026-02-23 15:30, in the mailbox"),
    "10007": dict(customer="C-1004", placed="2026-03-14", status="shipped",
                  items=[("Walnut side table", 1, 18900), ("Felt coasters (set of 4)", 2, 1520)],
                  ship=("UPS", "1Z999AA10123456784", "2026-03-16"),
                  track="in transit, last scan Louisville, KY on 2026-03-19 04:12",
                  eta="2026-03-21"),
    "10008": dict(customer="C-1007", placed="2026-03-01", status="delivered",
                  items=[("Bamboo cutting board", 1, 2899)],
                  ship=("USPS", "9400111899223817463508", "2026-03-02"), delivered="2026-03-05",
                  track="delivered 2026-03-05 12:10, handed to resident"),
    "10009": dict(customer="C-1008", placed="2026-03-03", status="delivered",
                  items=[("Linen duvet cover", 1, 13900)],
                  ship=("DHL", "3344556677", "2026-03-04"), delivered="2026-03-09",
                  track="delivered 2026-03-09 17:55, left at the front desk"),
    "10010": dict(customer="C-1009", placed="2025-12-20", status="delivered",
                  items=[("Glass carafe", 1, 2450)],
                  ship=("USPS", "9400111899223817463510", "2025-12-21"), delivered="2025-12-27",
                  track="delivered 2025-12-27 14:02, in the mailbox"),
    "10011": dict(customer="C-1010", placed="2026-02-25", status="delivered",
                  items=[("Cotton bath towels (set of 6)", 1, 5994)],
                  ship=("UPS", "1Z999AA10123456711", "2026-02-26"), delivered="2026-03-01",
                  track="delivered 2026-03-01 10:37, left at the back gate"),
    "10012": dict(customer="C-1004", placed="2026-03-02", status="delivered",
                  items=[("Folding desk chair", 1, 14990)],
                  ship=("UPS", "1Z999AA10123456712", "2026-03-03"), delivered="2026-03-06",
                  track="delivered 2026-03-06 14:22, left at the side door"),
    "10013": dict(customer="C-1011", placed="2026-03-05", status="delivered",
                  items=[("Smart thermostat", 1, 24900)],
                  ship=("FedEx", "771234567895", "2026-03-06"), delivered="2026-03-09",
                  track="delivered 2026-03-09 11:00, signed for by K. MENSAH"),
    "10014": dict(customer="C-1012", placed="2026-03-06", status="delivered",
                  items=[("Wireless earbuds", 1, 8999)],
                  ship=("DHL", "3344556614", "2026-03-07"), delivered="2026-03-10",
                  track="delivered 2026-03-10 13:45, parcel locker 12"),
    "10015": dict(customer="C-1002", placed="2025-11-10", status="delivered",
                  items=[("Cast iron skillet", 1, 5400)],
                  ship=("UPS", "1Z999AA10123456715", "2025-11-11"), delivered="2025-11-14",
                  track="delivered 2025-11-14 09:58, left on the doorstep"),
    "10016": dict(customer="C-1003", placed="2026-03-15", status="shipped",
                  items=[("Ceramic planter (large)", 1, 6400)],
                  ship=("USPS", "9400111899223817463516", "2026-03-17"),
                  track="in transit, arrived at the Denver, CO distribution center on 2026-03-19 22:40",
                  eta="2026-03-22"),
    "10017": dict(customer="C-1001", placed="2026-03-16", status="shipped",
                  items=[("Espresso grinder", 1, 12999)],
                  ship=("FedEx", "771234567892", "2026-03-17"),
                  track="in transit, departed the Memphis, TN hub on 2026-03-19 23:10",
                  eta="2026-03-23"),
    "10018": dict(customer="C-1005", placed="2026-03-17", status="processing",
                  items=[("Reading lamp", 1, 8900)]),
    "10019": dict(customer="C-1004", placed="2026-01-22", status="delivered",
                  items=[("Merino wool socks (3 pack)", 1, 3600)],
                  ship=("USPS", "9400111899223817463519", "2026-01-23"), delivered="2026-01-27",
                  track="delivered 2026-01-27 12:30, in the mailbox"),
    "10020": dict(customer="C-1007", placed="2026-03-18", status="processing",
                  items=[("Cast iron dutch oven", 1, 11900)]),
    "10021": dict(customer="C-1008", placed="2026-03-08", status="delivered",
                  items=[("Scented candle trio", 1, 4250)],
                  ship=("USPS", "9400111899223817463521", "2026-03-09"), delivered="2026-03-12",
                  track="delivered 2026-03-12 16:05, left on the front porch"),
    "10022": dict(customer="C-1010", placed="2026-03-12", status="shipped",
                  items=[("Rattan laundry basket", 1, 5600)],
                  ship=("UPS", "1Z999AA10123456790", "2026-03-14"),
                  track="out for delivery from Sacramento, CA since 2026-03-20 07:45",
                  eta="2026-03-20"),
    "10023": dict(customer="C-1012", placed="2026-03-09", status="cancelled",
                  items=[("Yoga mat", 1, 6800)]),
    "10024": dict(customer="C-1011", placed="2026-03-11", status="shipped",
                  items=[("Robot vacuum", 1, 39900)],
                  ship=("DHL", "3344556624", "2026-03-13"),
                  track="in transit, cleared the Cincinnati, OH gateway on 2026-03-19 18:25",
                  eta="2026-03-21"),
    "10025": dict(customer="C-1002", placed="2026-03-13", status="delivered",
                  items=[("Monitor arm", 1, 11500)],
                  ship=("FedEx", "771234567896", "2026-03-14"), delivered="2026-03-17",
                  track="delivered 2026-03-17 15:12, left at the reception desk"),
    "10026": dict(customer="C-1006", placed="2026-03-10", status="returned",
                  items=[("Throw pillows (pair)", 1, 4600)],
                  ship=("USPS", "9400111899223817463526", "2026-03-11"), delivered="2026-03-13",
                  track="return parcel received at our warehouse on 2026-03-18"),
    "10027": dict(customer="C-1003", placed="2026-03-04", status="delivered",
                  items=[("Gooseneck kettle", 1, 7900)],
                  ship=("UPS", "1Z999AA10123456727", "2026-03-05"), delivered="2026-03-08",
                  track="delivered 2026-03-08 10:20, left at the front door"),
    "10028": dict(customer="C-1008", placed="2026-03-16", status="shipped",
                  items=[("Marble bookends (pair)", 1, 3200)],
                  ship=("USPS", "9400111899223817463528", "2026-03-17"),
                  track="in transit, no movement since a scan in Portland, OR on 2026-03-18 06:02",
                  eta="2026-03-21"),
    "10029": dict(customer="C-1010", placed="2026-03-15", status="shipped",
                  items=[("Air purifier", 1, 21900)],
                  ship=("FedEx", "771234567893", "2026-03-16"),
                  track="", eta=""),  # the carrier system never answers for this one (transient error)
    "10030": dict(customer="C-1001", placed="2026-03-19", status="processing",
                  items=[("Hand-thrown mug", 2, 2400)]),
}
TRACKING_DOWN = {"10029"}  # carrier lookups for these orders always fail with a transient error

# id: (order, amount cents, status, requested, detail)
REFUNDS = {
    "RF-5e90b2": ("10002", 6000, "completed", "2026-01-25", "posted 2026-01-30 to Amex ending 3007"),
    "RF-a41c07": ("10003", 4995, "processing", "2026-03-02",
                  "expected to post by 2026-03-24 to Mastercard ending 5100"),
    "RF-c3d118": ("10011", 1999, "completed", "2026-03-05", "posted 2026-03-10 to Visa ending 3366"),
    "RF-77f4ae": ("10015", 5400, "denied", "2026-03-01",
                  "denied: requested outside the 30-day refund window (delivered 2025-11-14)"),
    "RF-e2a9f4": ("10009", 2500, "completed", "2026-03-12",
                  "posted 2026-03-15 to Mastercard ending 7719 (partial: stained cover)"),
    "RF-0b6d25": ("10026", 4600, "pending", "2026-03-18",
                  "awaiting inspection of the returned item at our warehouse; decision due 2026-03-25"),
}

# id: (customer, subject, body, status, queue, priority, opened)
TICKETS = {
    "T-501": ("C-1002", "Partial refund for scratched desk frame",
              "Side panel of the desk frame from #10002 arrived scratched; agreed a $60 partial refund.",
              "closed", "billing", "normal", "2026-01-24"),
    "T-502": ("C-1003", "Blanket left with concierge",
              "Customer could not find the blanket from #10003 at first; concierge had it.",
              "closed", "shipping", "low", "2026-02-07"),
    "T-503": ("C-1006", "Charged twice for February invoice",
              "Customer sees two charges of $29.00 on 2026-02-14 and disputes one of them.",
              "open", "billing", "high", "2026-03-02"),
    "T-504": ("C-1005", "Request for a dedicated account manager",
              "VIP customer asks for a named contact for future furniture purchases.",
              "pending", "account", "normal", "2026-03-03"),
    "T-505": ("C-1003", "Refund for wool blanket still not received",
              "Refund RF-a41c07 on #10003 requested 2026-03-02; customer has not seen the money yet.",
              "open", "billing", "normal", "2026-03-10"),
    "T-506": ("C-1008", "Stained duvet cover",
              "Linen duvet cover from #10009 arrived with a stain; $25.00 partial refund issued.",
              "closed", "product", "normal", "2026-03-11"),
    "T-507": ("C-1004", "Broken hinge on folding desk chair",
              "Hinge of the chair from #10012 snapped after two days of use.",
              "open", "product", "normal", "2026-03-07"),
    "T-508": ("C-1010", "Air purifier delivery delayed",
              "Order #10029 was promised for 2026-03-18 and has not arrived.",
              "open", "shipping", "normal", "2026-03-19"),
    "T-509": ("C-1012", "Cancel yoga mat order",
              "Customer asked to cancel #10023 before it shipped; cancelled, no charge.",
              "closed", "account", "low", "2026-03-09"),
    "T-510": ("C-1009", "Close my account",
              "Customer asked to close the account; final invoice paid, account closed 2026-01-31.",
              "closed", "account", "normal", "2026-01-29"),
    "T-511": ("C-1011", "Robot vacuum delivery window",
              "Customer needs the robot vacuum from #10024 delivered between 9 and 12; asks for a call.",
              "pending", "shipping", "high", "2026-03-14"),
    "T-512": ("C-1001", "Espresso grinder burr size",
              "Pre-sales question about the grinder on #10017: does it fit conical burrs?",
              "open", "product", "low", "2026-03-17"),
    "T-513": ("C-1007", "Move to a new apartment",
              "Customer is moving next month and wants future parcels sent to the new place.",
              "open", "account", "normal", "2026-03-18"),
    "T-514": ("C-1002", "Copy of Pro Annual renewal invoice",
              "Needs a PDF copy of the September invoice for an expense report.",
              "pending", "billing", "low", "2026-03-18"),
}

SUPERVISORS = {"billing": "Marcus Bell", "shipping": "Priya Raman", "product": "Tomás Ortega",
               "account": "Grace Liu"}

# Queue of a new ticket, chosen from words in its subject and body (first queue with a hit wins).
QUEUE_WORDS = [
    ("billing", ("charge", "invoice", "bill", "refund", "payment", "money", "card", "price")),
    ("shipping", ("deliver", "package", "parcel", "shipping", "shipment", "tracking", "courier", "late",
                  "lost", "stuck")),
    ("account", ("address", "email", "password", "login", "phone", "plan", "close")),
]

# topic: (regexes that select it, text)
POLICIES = {
    "returns": (
        (r"\breturn", r"send\b.*\bback", r"exchange", r"send it back"),
        "Items can be returned within 30 days of delivery if unused and in their original packaging. "
        "Return shipping is free for gold and VIP members; for standard members a $6.95 return-label "
        "fee is deducted from the refund. Final-sale items (gift cards, opened candles) cannot be returned.",
    ),
    "refunds": (
        (r"refund", r"money back", r"reimburs", r"credit back"),
        "Refunds go back to the original payment method and post within 5-7 business days after "
        "approval. Only delivered orders can be refunded, up to 30 days after delivery; partial refunds "
        "are allowed for damaged or incomplete items. Refunds on VIP accounts need supervisor approval.",
    ),
    "cancellations": (
        (r"cancel",),
        "An order can be cancelled free of charge until it ships (status processing). Once it has "
        "shipped it can no longer be cancelled: decline the delivery or return the item instead.",
    ),
    "shipping": (
        (r"ship", r"deliver", r"express", r"postage", r"courier", r"arriv"),
        "Standard shipping takes 3-5 business days and is free on orders over $75 (otherwise $7.95). "
        "Express shipping takes 1-2 business days and costs $19.95. Orders placed before 2 pm ET leave "
        "the warehouse the same business day.",
    ),
    "warranty": (
        (r"warrant", r"guarantee", r"defect", r"cover", r"broke", r"faulty", r"wobbl"),
        "Furniture carries a 2-year warranty against manufacturing defects; electronics and appliances "
        "carry 1 year. Wear and tear, misuse and cosmetic damage reported after 30 days are not covered. "
        "A claim needs the order number and a photo.",
    ),
    "price-match": (
        (r"price", r"match", r"cheaper", r"lower"),
        "We match a lower advertised price from a major retailer within 14 days of purchase; the "
        "difference is paid as store credit, not to the card.",
    ),
    "membership": (
        (r"tier", r"gold", r"\bvip\b", r"member", r"loyalty"),
        "Membership tiers: standard (default), gold (after $1,000 of purchases: free returns, priority "
        "queue) and VIP (by invitation: dedicated account manager, supervisor-approved refunds).",
    ),
}

"""A seeded knowledge graph for `@modelcontextprotocol/server-memory`.

`build(directory)` writes `directory/memory.jsonl`, the file the server reads when MEMORY_FILE_PATH
names it: one JSON object per line, `{"type": "entity", "name", "entityType", "observations"}` or
`{"type": "relation", "from", "to", "relationType"}`. The graph is a small fictional coastal city,
Port Alder: its people, organisations, projects and places. The output is the same on every call.

    python examples/published/memory/fixture.py DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FILE_NAME = "memory.jsonl"

ENTITIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # people
    ("Priya Raman", "person", (
        "Lead robotics engineer at Tidewater Labs",
        "Joined Tidewater Labs in 2019",
        "Speaks Tamil, English and Portuguese",
        "Email: priya.raman@tidewater.example",
        "Allergic to peanuts",
    )),
    ("Marcus Webb", "person", (
        "CEO of Tidewater Labs since founding it in 2017",
        "Former naval engineer",
        "Prefers meetings before 10 am",
    )),
    ("Daniel Frost", "person", (
        "Software engineer at Tidewater Labs",
        "Writes the flight-control software for the Kestrel drones",
        "Hobby: beekeeping, with two hives behind his house",
    )),
    ("Ana Souza", "person", (
        "Marine biologist at Alder Valley University",
        "Works remotely from Lisbon for most of the year",
        "Supervises two PhD students",
    )),
    ("Tomás Ortega", "person", (
        "PhD student in marine robotics",
        "Thesis on segmenting underwater video footage",
        "Originally from Valencia",
    )),
    ("Elena Petrova", "person", (
        "Professor of ocean engineering at Alder Valley University",
        "Head of the Marine Robotics Lab",
        "Author of the textbook 'Subsea Autonomy'",
    )),
    ("Helen Achterberg", "person", (
        "Programme director at the Greenleaf Foundation",
        "Decides alone on grants under 50,000 euros",
        "Vegetarian",
    )),
    ("Kwame Mensah", "person", (
        "Operations manager at Northwind Logistics",
        "Main contact for the Project Kestrel pilot",
        "Plays the saxophone in a jazz quartet",
    )),
    ("Yuki Tanaka", "person", (
        "Data scientist at Northwind Logistics",
        "Worked at Tidewater Labs as a data analyst until 2023",
        "Runs a weekly chess club",
    )),
    ("Li Wei", "person", (
        "Member of Port Alder City Council since 2019",
        "Chairs the parks committee",
        "Cycles to the town hall every day",
    )),
    ("Sofia Lindqvist", "person", (
        "Owner of Brightwater Café since 2015",
        "Grew up in Tromsø, Norway",
        "Former national barista champion",
    )),
    ("Jonas Berg", "person", (
        "Partner at Copperfield & Hale",
        "Handles ship registration disputes",
        "Rows competitively at weekends",
    )),
    ("Amara Okafor", "person", (
        "Volunteer coordinator of the Community Fridge Network",
        "Trained nurse",
        "Speaks Igbo and English",
    )),
    ("Rafael Duarte", "person", (
        "Freelance photographer of marine wildlife",
        "Phone: +351 912 000 417",
        "Owns a small sailing boat called Gaivota",
    )),
    # organisations
    ("Tidewater Labs", "organization", (
        "Robotics company building underwater inspection drones",
        "Founded in 2017",
        "About 45 employees",
        "Run by its founder and CEO, Marcus Webb",
        "Offices on Quay Street",
    )),
    ("Northwind Logistics", "organization", (
        "Freight forwarding company with 12 warehouses",
        "Founded in 1998",
        "Buys warehouse drones from Tidewater Labs",
    )),
    ("Alder Valley University", "organization", (
        "Public university with about 18,000 students",
        "Home of the Marine Robotics Lab",
    )),
    ("Marine Robotics Lab", "organization", (
        "Research lab at Alder Valley University",
        "Has a 25-metre wave tank for testing underwater vehicles",
    )),
    ("Greenleaf Foundation", "organization", (
        "Charitable foundation that funds urban green and community projects",
        "Annual grant budget of 2.4 million euros",
        "Grant applications close on 31 January each year",
    )),
    ("Brightwater Café", "organization", (
        "Café on Harbour Lane",
        "Hosts the Port Alder Python meetup on the first Tuesday of each month",
        "Known for its cardamom buns",
    )),
    ("Port Alder City Council", "organization", (
        "Municipal government of Port Alder",
        "Approved the Riverside Park renovation in 2023",
    )),
    ("Copperfield & Hale", "organization", (
        "Law firm specialising in maritime law",
        "Legal counsel to Tidewater Labs",
    )),
    ("Millbrook Rowing Club", "organization", (
        "Amateur rowing club on the Alder river",
        "Founded in 1921",
    )),
    # projects
    ("Project Kestrel", "project", (
        "Autonomous drones that count warehouse inventory",
        "Budget: 1.2 million euros",
        "Pilot running in two Northwind Logistics warehouses",
    )),
    ("Seagrass Mapping", "project", (
        "Maps seagrass meadows in Alder Bay with sonar surveys",
        "Started in 2024",
        "Survey data published under CC BY 4.0",
    )),
    ("Open Tide Dataset", "project", (
        "Public dataset of 40,000 annotated underwater images",
        "First released in 2025",
    )),
    ("Riverside Park Renovation", "project", (
        "New playground, a skate park and 300 new trees",
        "Budget: 3.1 million euros",
        "Phase two rebuilds the riverbank footpath",
    )),
    ("Community Fridge Network", "project", (
        "Six shared fridges across Eastbrook",
        "Run entirely by volunteers",
        "Collects surplus food from local bakeries",
    )),
    ("Old Intranet Migration", "project", (
        "Was meant to move the Tidewater Labs wiki to a new platform",
        "Cancelled in 2024",
    )),
    # places
    ("Port Alder", "place", (
        "Coastal city on Alder Bay with about 210,000 inhabitants",
        "Twinned with Kiel, Germany",
    )),
    ("Eastbrook", "place", (
        "District in the east of Port Alder",
        "Mostly warehouses and terraced houses",
    )),
    ("Millbrook", "place", (
        "Village 15 km north of Port Alder",
        "Farmers' market every Saturday morning",
    )),
    ("Riverside Park", "place", (
        "Largest park in Port Alder, covering 42 hectares along the Alder river",
        "Open from 6 am to 11 pm",
    )),
    # events
    ("Harbour Lights Festival", "event", (
        "Lantern festival held every November on the harbour front",
        "Draws about 30,000 visitors",
    )),
)

RELATIONS: tuple[tuple[str, str, str], ...] = (
    ("Priya Raman", "works_at", "Tidewater Labs"),
    ("Priya Raman", "leads", "Project Kestrel"),
    ("Priya Raman", "mentors", "Daniel Frost"),
    ("Marcus Webb", "founded", "Tidewater Labs"),
    ("Marcus Webb", "lives_in", "Port Alder"),
    ("Daniel Frost", "works_at", "Tidewater Labs"),
    ("Daniel Frost", "works_on", "Project Kestrel"),
    ("Daniel Frost", "lives_in", "Millbrook"),
    ("Tidewater Labs", "develops", "Project Kestrel"),
    ("Tidewater Labs", "located_in", "Port Alder"),
    ("Tidewater Labs", "sponsored", "Old Intranet Migration"),
    ("Copperfield & Hale", "advises", "Tidewater Labs"),
    ("Jonas Berg", "works_at", "Copperfield & Hale"),
    ("Jonas Berg", "member_of", "Millbrook Rowing Club"),
    ("Northwind Logistics", "commissioned", "Project Kestrel"),
    ("Northwind Logistics", "located_in", "Eastbrook"),
    ("Kwame Mensah", "works_at", "Northwind Logistics"),
    ("Kwame Mensah", "coordinates", "Project Kestrel"),
    ("Yuki Tanaka", "works_at", "Northwind Logistics"),
    ("Ana Souza", "works_at", "Alder Valley University"),
    ("Ana Souza", "leads", "Seagrass Mapping"),
    ("Ana Souza", "supervises", "Tomás Ortega"),
    ("Tomás Ortega", "studies_at", "Alder Valley University"),
    ("Tomás Ortega", "contributes_to", "Open Tide Dataset"),
    ("Elena Petrova", "works_at", "Alder Valley University"),
    ("Elena Petrova", "heads", "Marine Robotics Lab"),
    ("Marine Robotics Lab", "part_of", "Alder Valley University"),
    ("Alder Valley University", "publishes", "Open Tide Dataset"),
    ("Alder Valley University", "located_in", "Port Alder"),
    ("Greenleaf Foundation", "funds", "Seagrass Mapping"),
    ("Greenleaf Foundation", "funds", "Community Fridge Network"),
    ("Greenleaf Foundation", "funds", "Riverside Park Renovation"),
    ("Helen Achterberg", "works_at", "Greenleaf Foundation"),
    ("Port Alder City Council", "approved", "Riverside Park Renovation"),
    ("Li Wei", "member_of", "Port Alder City Council"),
    ("Riverside Park Renovation", "renovates", "Riverside Park"),
    ("Riverside Park", "located_in", "Port Alder"),
    ("Sofia Lindqvist", "owns", "Brightwater Café"),
    ("Brightwater Café", "located_in", "Port Alder"),
    ("Amara Okafor", "coordinates", "Community Fridge Network"),
    ("Community Fridge Network", "operates_in", "Eastbrook"),
    ("Millbrook Rowing Club", "located_in", "Millbrook"),
    ("Eastbrook", "part_of", "Port Alder"),
    ("Millbrook", "lies_near", "Port Alder"),
    ("Rafael Duarte", "lives_in", "Millbrook"),
)


def lines() -> list[str]:
    """The graph as JSON lines, entities first, in the field order the server itself writes."""
    out = [json.dumps({"type": "entity", "name": name, "entityType": kind, "observations": list(observations)},
                      ensure_ascii=False)
           for name, kind, observations in ENTITIES]
    out += [json.dumps({"type": "relation", "from": source, "to": target, "relationType": kind}, ensure_ascii=False)
            for source, kind, target in RELATIONS]
    return out


def build(directory: Path) -> None:
    """Write the seeded graph to `directory/memory.jsonl` (the directory is created if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / FILE_NAME).write_text("\n".join(lines()) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python fixture.py DIR")
    build(Path(sys.argv[1]))

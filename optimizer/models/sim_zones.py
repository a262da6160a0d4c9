"""What the time-zone database itself says about places, beyond its zone names: the region a zone's comment names
("Asia/Shanghai  Beijing Time"), each country's main zone ("India" → Asia/Kolkata, from iso3166.tab and the
first zone zone.tab lists for the country), and abbreviations one country alone uses ("JST" → Asia/Tokyo; not
"IST", which India, Ireland and Israel share). A reader knows these; the offline agents read them from the tables
the `tzdata` package or the system ships, and from nothing when neither is there."""

from __future__ import annotations

import re
import zoneinfo
from datetime import datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path

_SYSTEM = Path("/usr/share/zoneinfo")
_REGION = re.compile(r"^([A-Z][a-z]+(?: [A-Z][a-z]+)*) Time\b")
_ABBREVIATION = re.compile(r"[A-Z]{3,5}")
_SEASONS = (datetime(2026, 1, 15, 12), datetime(2026, 7, 15, 12))


@lru_cache(maxsize=1)
def database_places() -> dict[str, str]:
    """Lower-cased place (spaces as underscores) or abbreviation → IANA zone; first found wins."""
    listed = [line.split("\t") for line in _table("zone.tab").splitlines() if line and not line.startswith("#")]
    listed = [parts for parts in listed if len(parts) >= 3]
    main: dict[str, str] = {}
    places: dict[str, str] = {}
    for code, _where, zone, *comment in listed:
        main.setdefault(code, zone)
        region = _REGION.match(comment[0]) if comment else None
        if region:
            places.setdefault(region.group(1).lower().replace(" ", "_"), zone)
    for line in _table("iso3166.tab").splitlines():
        code, _tab, country = line.partition("\t")
        if code in main and country and not line.startswith("#"):
            places.setdefault(country.strip().lower().replace(" ", "_"), main[code])
    users: dict[str, list[tuple[str, str, bool]]] = {}
    for code, _where, zone, *_comment in listed:
        names = _abbreviations(zone)
        for name in names:
            users.setdefault(name, []).append((code, zone, len(names) == 1))
    for name, zones in users.items():
        if len({code for code, _zone, _all_year in zones}) == 1:  # a zone on it all year is what it means: AEST is
            places.setdefault(name.lower(), max(zones, key=lambda z: z[2])[1])  # Brisbane's, not Sydney's winter
    return places


def _abbreviations(zone: str) -> set[str]:
    try:
        info = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return set()
    return {name for when in _SEASONS if (name := when.replace(tzinfo=info).tzname()) and
            _ABBREVIATION.fullmatch(name)}


def _table(name: str) -> str:
    """A table of the time-zone database: the `tzdata` package's, else the system's, else ""."""
    try:
        return resources.files("tzdata").joinpath("zoneinfo", name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        pass
    try:
        return (_SYSTEM / name).read_text(encoding="utf-8")
    except OSError:
        return ""

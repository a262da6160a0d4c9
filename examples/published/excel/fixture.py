"""The workbooks the Excel server works on: the sales, targets and staff files of "Crumb & Co", a small bakery chain.

`build(directory)` writes into `directory` (created if missing):

- `sales-q1-2026.xlsx`: sheet `Orders` (40 orders, January to March 2026, as the table `Orders`, with a `Total`
  formula per row), sheet `Summary` (a merged title; orders, units, revenue, target and share of target per region
  by COUNTIF, SUMIF and VLOOKUP; totals; a VAT rate under the defined name `VatRate` and the revenue including
  VAT) and sheet `Targets` (the quarter's target and manager per region, with a note on one target);
- `staff.xlsx`: sheet `Staff` (12 employees: id, name, store, role, start date, hourly rate) and sheet
  `Holidays` (booked leave, with a days formula);
- `archive/sales-q4-2025.xlsx`: last quarter's orders, a smaller file with the same layout as `Orders`;
- `budget-2026.xlsx`, the workbook the writing tasks change: sheet `Budget` (monthly costs by kind with a total
  formula per month and a year row), sheet `Assumptions` (loaves, price and costs, with a margin formula for goal
  seeking, and a note), sheet `Suppliers` (a contact list with a repeated row and "name; phone" cells to split),
  sheets `Old notes` and `Scratch` to rearrange or delete, and an out-of-date defined name `OldFlourPrice`;
- `prices.csv`: the price list, a CSV to import; `logo.png`: a 16x16 image to place in a sheet.

The workbooks are written with the standard library only (SpreadsheetML parts in a stored, uncompressed zip with
fixed timestamps); every formula carries its cached result. The bytes are a pure function of this file: no clock,
and the orders come from a fixed seed. Run `python fixture.py DIR` to build it into DIR.
"""

from __future__ import annotations

import random
import struct
import sys
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from xml.sax.saxutils import escape

SEED = 20260401
ZIP_TIME = (2026, 4, 1, 0, 0, 0)
EPOCH = date(1899, 12, 30)
REGIONS = {"North": ("Harrowgate", "Millbrook"), "South": ("Quayside",), "East": ("Fenmarket", "Lowfield"),
           "West": ("Brackenridge",)}
PRODUCTS = {"Sourdough loaf": 4.5, "Rye loaf": 4.2, "Baguette": 2.1, "Croissant": 1.8, "Cinnamon bun": 2.4,
            "Seeded roll": 0.9}
CATEGORIES = {"Sourdough loaf": "Bread", "Rye loaf": "Bread", "Baguette": "Bread", "Croissant": "Pastry",
              "Cinnamon bun": "Pastry", "Seeded roll": "Bread"}
# region: (Q1 target, manager)
TARGETS = {"North": (2600, "Aisha Karim"), "South": (1100, "Tom Okoro"), "East": (2100, "Lena Voss"),
           "West": (900, "Rhys Morgan")}
TARGET_NOTE = ("B3", "Dana Whitfield", "Raised from 900 to 1,100 after the January review.")
VAT_RATE = 0.2
STAFF = [
    ("E-003", "Aisha Karim", "Harrowgate", "Manager", "2019-03-04", 17.5),
    ("E-007", "Tom Okoro", "Quayside", "Manager", "2020-06-15", 17.0),
    ("E-011", "Lena Voss", "Fenmarket", "Manager", "2021-01-11", 16.75),
    ("E-014", "Rhys Morgan", "Brackenridge", "Manager", "2021-09-01", 16.75),
    ("E-018", "Priya Shah", "Millbrook", "Baker", "2022-02-07", 14.2),
    ("E-021", "Marek Nowak", "Harrowgate", "Baker", "2022-05-23", 14.2),
    ("E-025", "Sofia Greco", "Lowfield", "Baker", "2023-03-13", 13.9),
    ("E-026", "Ben Carter", "Quayside", "Counter", "2023-08-21", 12.6),
    ("E-030", "Hana Ito", "Fenmarket", "Counter", "2024-01-08", 12.6),
    ("E-033", "Owen Price", "Brackenridge", "Baker", "2024-04-29", 13.9),
    ("E-035", "Chloe Martin", "Millbrook", "Counter", "2025-02-03", 12.4),
    ("E-038", "Yusuf Aydin", "Lowfield", "Counter", "2025-10-13", 12.4),
]
HOLIDAYS = [("E-018", "2026-04-06", "2026-04-10"), ("E-007", "2026-04-13", "2026-04-24"),
            ("E-030", "2026-05-04", "2026-05-06"), ("E-021", "2026-05-18", "2026-05-29"),
            ("E-014", "2026-06-01", "2026-06-05")]


def _serial(day: str) -> int:
    return (date.fromisoformat(day) - EPOCH).days


def _orders(rng: random.Random, first: date, count: int, prefix: str, gap: int) -> list[list[object]]:
    """Rows of (order id, date, region, store, product, units, unit price); dates rise with the id, by up to
    `gap` - 1 days."""
    stores = [(region, store) for region, names in REGIONS.items() for store in names]
    products = list(PRODUCTS)
    rows: list[list[object]] = []
    serial = (first - EPOCH).days
    for number in range(count):
        serial += int(rng.random() * gap)
        region, store = stores[int(rng.random() * len(stores))]
        product = products[int(rng.random() * len(products))]
        units = 10 * (1 + int(rng.random() * 12))
        rows.append([f"{prefix}{number + 1:03d}", serial, region, store, product, units, PRODUCTS[product]])
    return rows


Q1 = _orders(random.Random(SEED), date(2026, 1, 2), 40, "Q1-", 4)
Q4 = _orders(random.Random(SEED + 1), date(2025, 10, 1), 16, "Q4-", 9)


# --- a minimal SpreadsheetML writer -------------------------------------------------------------------------------
# A cell is a value (str, int, float) or a Formula; a style index picks one of STYLES' cellXfs.
class Formula:
    def __init__(self, text: str, cached: float) -> None:
        self.text, self.cached = text, cached


PLAIN, DATE, MONEY, PERCENT, BOLD = range(5)
STYLES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>
<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>\
<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>
<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>
<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>
<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>\
<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>\
<xf numFmtId="4" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>\
<xf numFmtId="10" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>\
<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>
<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>
</styleSheet>
"""
MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


class Sheet:
    def __init__(self, name: str, widths: Sequence[float] = ()) -> None:
        self.name, self.widths = name, list(widths)
        self.cells: dict[tuple[int, int], tuple[object, int]] = {}
        self.merged: list[str] = []
        self.table: tuple[str, str] | None = None  # (name, ref)
        self.notes: list[tuple[str, str, str]] = []  # (cell, author, text)

    def row(self, number: int, values: Sequence[object], styles: Sequence[int] | int = PLAIN) -> None:
        for column, value in enumerate(values, start=1):
            style = styles if isinstance(styles, int) else styles[column - 1]
            if value is not None:
                self.cells[(number, column)] = (value, style)

    def xml(self, strings: dict[str, int]) -> str:
        rows: dict[int, list[str]] = {}
        for (r, c), (value, style) in sorted(self.cells.items()):
            ref, s = f"{_column(c)}{r}", f' s="{style}"' if style else ""
            if isinstance(value, Formula):
                cell = f'<c r="{ref}"{s}><f>{escape(value.text)}</f><v>{_number(value.cached)}</v></c>'
            elif isinstance(value, str):
                index = strings.setdefault(value, len(strings))
                cell = f'<c r="{ref}"{s} t="s"><v>{index}</v></c>'
            else:
                cell = f'<c r="{ref}"{s}><v>{_number(value)}</v></c>'  # type: ignore[arg-type]
            rows.setdefault(r, []).append(cell)
        last = max(self.cells)[0], max(c for _, c in self.cells)
        parts = [HEAD, f'<worksheet xmlns="{MAIN_NS}" xmlns:r="{REL_NS}">',
                 f'<dimension ref="A1:{_column(last[1])}{last[0]}"/>',
                 '<sheetViews><sheetView workbookViewId="0"/></sheetViews>', '<sheetFormatPr defaultRowHeight="15"/>']
        if self.widths:
            parts.append("<cols>" + "".join(f'<col min="{i}" max="{i}" width="{w}" customWidth="1"/>'
                                            for i, w in enumerate(self.widths, start=1)) + "</cols>")
        parts.append("<sheetData>" + "".join(f'<row r="{r}">{"".join(cells)}</row>' for r, cells in rows.items())
                     + "</sheetData>")
        if self.merged:
            parts.append(f'<mergeCells count="{len(self.merged)}">'
                         + "".join(f'<mergeCell ref="{m}"/>' for m in self.merged) + "</mergeCells>")
        parts.append('<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>')
        if self.notes:
            parts.append('<legacyDrawing r:id="rIdVml"/>')
        if self.table:
            parts.append('<tableParts count="1"><tablePart r:id="rIdTable"/></tableParts>')
        return "".join(parts) + "</worksheet>"


def _column(number: int) -> str:
    name = ""
    while number:
        number, rest = divmod(number - 1, 26)
        name = chr(65 + rest) + name
    return name


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(round(float(value), 10))


def _rels(entries: Sequence[tuple[str, str, str]]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{target}"/>' for i, t, target in entries)
    return f'{HEAD}<Relationships xmlns="{PKG_REL_NS}">{body}</Relationships>'


def _vml(cells: Sequence[str]) -> str:
    shapes = []
    for n, cell in enumerate(cells):
        column = sum((ord(ch) - 64) * 26 ** i for i, ch in enumerate(reversed(cell.rstrip("0123456789")))) - 1
        row = int(cell[len(cell.rstrip("0123456789")):]) - 1
        shapes.append(
            f'<v:shape id="_x0000_s{1025 + n}" type="#_x0000_t202" style="position:absolute;margin-left:80pt;'
            'margin-top:2pt;width:160pt;height:60pt;z-index:1;visibility:hidden" fillcolor="#ffffe1">'
            '<v:fill color2="#ffffe1"/><v:textbox/><x:ClientData ObjectType="Note"><x:MoveWithCells/>'
            f'<x:SizeWithCells/><x:AutoFill>False</x:AutoFill><x:Row>{row}</x:Row><x:Column>{column}</x:Column>'
            '</x:ClientData></v:shape>')
    return ('<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
            'xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit"><o:idmap v:ext="edit" '
            'data="1"/></o:shapelayout><v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" '
            'path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/><v:path gradientshapeok="t" '
            f'o:connecttype="rect"/></v:shapetype>{"".join(shapes)}</xml>')


def workbook(sheets: Sequence[Sheet], names: Mapping[str, str] = {}, title: str = "") -> dict[str, bytes]:
    """The parts of an .xlsx file: one worksheet per sheet, shared strings, styles, defined names, tables and
    notes."""
    strings: dict[str, int] = {}
    parts: dict[str, str] = {}
    types = ['<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>',
             '<Default Extension="xml" ContentType="application/xml"/>',
             '<Default Extension="vml" ContentType="application/vnd.openxmlformats-officedocument.vmlDrawing"/>']
    sml = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    overrides = {"/xl/workbook.xml": f"{sml}.sheet.main+xml", "/xl/styles.xml": f"{sml}.styles+xml",
                 "/xl/sharedStrings.xml": f"{sml}.sharedStrings+xml",
                 "/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml"}
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    book_rels = []
    tables = 0
    for n, sheet in enumerate(sheets, start=1):
        parts[f"xl/worksheets/sheet{n}.xml"] = sheet.xml(strings)
        overrides[f"/xl/worksheets/sheet{n}.xml"] = f"{sml}.worksheet+xml"
        book_rels.append((f"rId{n}", f"{rel}/worksheet", f"worksheets/sheet{n}.xml"))
        sheet_rels = []
        if sheet.table:
            tables += 1
            name, ref = sheet.table
            header_row = int(ref.split(":")[0].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            headers = [v for (r, _), (v, _) in sorted(sheet.cells.items()) if r == header_row]
            columns = "".join(f'<tableColumn id="{i}" name="{escape(str(h))}"/>' for i, h in enumerate(headers, 1))
            parts[f"xl/tables/table{tables}.xml"] = (
                f'{HEAD}<table xmlns="{MAIN_NS}" id="{tables}" name="{name}" displayName="{name}" ref="{ref}" '
                f'headerRowCount="1"><autoFilter ref="{ref}"/><tableColumns count="{len(headers)}">{columns}'
                '</tableColumns><tableStyleInfo name="TableStyleMedium2" showFirstColumn="0" showLastColumn="0" '
                'showRowStripes="1" showColumnStripes="0"/></table>')
            overrides[f"/xl/tables/table{tables}.xml"] = f"{sml}.table+xml"
            sheet_rels.append(("rIdTable", f"{rel}/table", f"../tables/table{tables}.xml"))
        if sheet.notes:
            authors = sorted({author for _, author, _ in sheet.notes})
            comments = "".join(f'<comment ref="{cell}" authorId="{authors.index(author)}"><text><t>{escape(text)}'
                               '</t></text></comment>' for cell, author, text in sheet.notes)
            parts[f"xl/comments{n}.xml"] = (
                f'{HEAD}<comments xmlns="{MAIN_NS}"><authors>'
                + "".join(f"<author>{escape(a)}</author>" for a in authors)
                + f"</authors><commentList>{comments}</commentList></comments>")
            parts[f"xl/drawings/vmlDrawing{n}.vml"] = _vml([cell for cell, _, _ in sheet.notes])
            overrides[f"/xl/comments{n}.xml"] = f"{sml}.comments+xml"
            sheet_rels += [("rIdComments", f"{rel}/comments", f"../comments{n}.xml"),
                           ("rIdVml", f"{rel}/vmlDrawing", f"../drawings/vmlDrawing{n}.vml")]
        if sheet_rels:
            parts[f"xl/worksheets/_rels/sheet{n}.xml.rels"] = _rels(sheet_rels)
    count = len(sheets)
    book_rels += [(f"rId{count + 1}", f"{rel}/styles", "styles.xml"),
                  (f"rId{count + 2}", f"{rel}/sharedStrings", "sharedStrings.xml")]
    defined = "".join(f'<definedName name="{k}">{escape(v)}</definedName>' for k, v in names.items())
    parts["xl/workbook.xml"] = (
        f'{HEAD}<workbook xmlns="{MAIN_NS}" xmlns:r="{REL_NS}"><bookViews><workbookView activeTab="0"/></bookViews>'
        "<sheets>" + "".join(f'<sheet name="{escape(s.name)}" sheetId="{n}" r:id="rId{n}"/>'
                             for n, s in enumerate(sheets, start=1))
        + "</sheets>" + (f"<definedNames>{defined}</definedNames>" if defined else "")
        + '<calcPr calcId="191029"/></workbook>')
    parts["xl/_rels/workbook.xml.rels"] = _rels(book_rels)
    parts["xl/styles.xml"] = STYLES
    ordered = sorted(strings, key=strings.__getitem__)
    parts["xl/sharedStrings.xml"] = (
        f'{HEAD}<sst xmlns="{MAIN_NS}" count="{len(ordered)}" uniqueCount="{len(ordered)}">'
        + "".join(f'<si><t xml:space="preserve">{escape(s)}</t></si>' for s in ordered) + "</sst>")
    parts["docProps/core.xml"] = (
        f'{HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/'
        'core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<dc:title>{escape(title)}</dc:title><dc:creator>Dana Whitfield</dc:creator>"
        '<dcterms:created xsi:type="dcterms:W3CDTF">2026-04-01T00:00:00Z</dcterms:created>'
        '<dcterms:modified xsi:type="dcterms:W3CDTF">2026-04-01T00:00:00Z</dcterms:modified>'
        "</cp:coreProperties>")
    parts["_rels/.rels"] = _rels([
        ("rId1", f"{rel}/officeDocument", "xl/workbook.xml"),
        ("rId2", "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties",
         "docProps/core.xml")])
    types += [f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in sorted(overrides.items())]
    parts["[Content_Types].xml"] = (
        f'{HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">{"".join(types)}</Types>')
    first = ["[Content_Types].xml", "_rels/.rels"]
    return {name: parts[name].encode("utf-8") for name in [*first, *sorted(set(parts) - set(first))]}


def _zip(path: Path, parts: Mapping[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in parts.items():
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)


# --- the workbooks --------------------------------------------------------------------------------------------------
HEADERS = ["Order", "Date", "Region", "Store", "Product", "Units", "Unit price", "Total"]
ORDER_STYLES = [PLAIN, DATE, PLAIN, PLAIN, PLAIN, PLAIN, MONEY, MONEY]


def _orders_sheet(name: str, orders: Sequence[Sequence[object]], table: str) -> Sheet:
    sheet = Sheet(name, [9, 11, 8, 13, 15, 7, 10, 10])
    sheet.row(1, HEADERS, BOLD)
    for r, order in enumerate(orders, start=2):
        total = Formula(f"F{r}*G{r}", round(float(order[5]) * float(order[6]), 2))  # type: ignore[arg-type]
        sheet.row(r, [*order, total], ORDER_STYLES)
    sheet.table = (table, f"A1:H{len(orders) + 1}")
    return sheet


def sales_workbook() -> dict[str, bytes]:
    last = len(Q1) + 1
    orders = _orders_sheet("Orders", Q1, "Orders")
    summary = Sheet("Summary", [20, 9, 9, 11, 9, 12])
    summary.row(1, ["Q1 2026 sales by region"], BOLD)
    summary.merged.append("A1:F1")
    summary.row(3, ["Region", "Orders", "Units", "Revenue", "Target", "% of target"], BOLD)
    col = {c: f"Orders!${c}$2:${c}${last}" for c in "CFH"}
    totals = [0.0, 0.0, 0.0, 0.0]
    for r, region in enumerate(TARGETS, start=4):
        rows = [o for o in Q1 if o[2] == region]
        count, units = len(rows), sum(float(o[5]) for o in rows)  # type: ignore[arg-type]
        revenue = round(sum(float(o[5]) * float(o[6]) for o in rows), 2)  # type: ignore[arg-type]
        target = TARGETS[region][0]
        summary.row(r, [region, Formula(f"COUNTIF({col['C']},A{r})", count),
                        Formula(f"SUMIF({col['C']},A{r},{col['F']})", units),
                        Formula(f"SUMIF({col['C']},A{r},{col['H']})", revenue),
                        Formula(f"VLOOKUP(A{r},Targets!$A$2:$B$5,2,FALSE)", target),
                        Formula(f"D{r}/E{r}", round(revenue / target, 6))],
                    [PLAIN, PLAIN, PLAIN, MONEY, MONEY, PERCENT])
        totals = [totals[0] + count, totals[1] + units, totals[2] + revenue, totals[3] + target]
    summary.row(8, ["Total", Formula("SUM(B4:B7)", totals[0]), Formula("SUM(C4:C7)", totals[1]),
                    Formula("SUM(D4:D7)", round(totals[2], 2)), Formula("SUM(E4:E7)", totals[3]),
                    Formula("D8/E8", round(totals[2] / totals[3], 6))], [BOLD, PLAIN, PLAIN, MONEY, MONEY, PERCENT])
    summary.row(10, ["VAT rate", VAT_RATE], [PLAIN, PERCENT])
    summary.row(11, ["Revenue incl. VAT", Formula("D8*(1+VatRate)", round(totals[2] * (1 + VAT_RATE), 2))],
                [PLAIN, MONEY])
    targets = Sheet("Targets", [8, 10, 14])
    targets.row(1, ["Region", "Q1 target", "Manager"], BOLD)
    for r, (region, (target, manager)) in enumerate(TARGETS.items(), start=2):
        targets.row(r, [region, target, manager], [PLAIN, MONEY, PLAIN])
    targets.notes.append(TARGET_NOTE)
    return workbook([orders, summary, targets], {"VatRate": "Summary!$B$10"}, "Crumb & Co sales, Q1 2026")


def staff_workbook() -> dict[str, bytes]:
    staff = Sheet("Staff", [11, 14, 13, 9, 11, 11])
    staff.row(1, ["Employee ID", "Name", "Store", "Role", "Start date", "Hourly rate"], BOLD)
    for r, (eid, name, store, role, start, rate) in enumerate(STAFF, start=2):
        staff.row(r, [eid, name, store, role, _serial(start), rate], [PLAIN, PLAIN, PLAIN, PLAIN, DATE, MONEY])
    holidays = Sheet("Holidays", [11, 11, 11, 6])
    holidays.row(1, ["Employee ID", "From", "To", "Days"], BOLD)
    for r, (eid, start, end) in enumerate(HOLIDAYS, start=2):
        days = _serial(end) - _serial(start) + 1
        holidays.row(r, [eid, _serial(start), _serial(end), Formula(f"C{r}-B{r}+1", days)], [PLAIN, DATE, DATE, PLAIN])
    return workbook([staff, holidays], title="Crumb & Co staff")


def archive_workbook() -> dict[str, bytes]:
    return workbook([_orders_sheet("Orders", Q4, "OrdersQ4")], title="Crumb & Co sales, Q4 2025")


# month: (flour, butter, staff, rent)
BUDGET = [("Jan", 820, 410, 5200, 1800), ("Feb", 760, 380, 5200, 1800), ("Mar", 880, 450, 5400, 1800),
          ("Apr", 910, 470, 5400, 1800), ("May", 940, 480, 5600, 1800), ("Jun", 900, 460, 5600, 1800),
          ("Jul", 860, 430, 5800, 1850), ("Aug", 840, 420, 5800, 1850), ("Sep", 920, 470, 5600, 1850),
          ("Oct", 980, 500, 5600, 1850), ("Nov", 1050, 540, 5800, 1850), ("Dec", 1210, 620, 6200, 1850)]
SUPPLIERS = [("Millers of Avon", "Flour", "Jo Reed; 01632 960112"),
             ("Hollow Farm Dairy", "Butter", "Sam Hale; 01632 960845"),
             ("Crate & Sack", "Packaging", "Ade Bello; 01632 960377"),
             ("Millers of Avon", "Flour", "Jo Reed; 01632 960112"),
             ("Northfield Eggs", "Eggs", "Kit Moss; 01632 960590")]
LOAVES, PRICE = 4000, 4.5
LOAVES_NOTE = ("B2", "Dana Whitfield", "Average of 2025; check again in June.")
OLD_NOTES = ["Flour contract renewed in March 2025", "Butter prices up 12% over the year",
             "Rent review due January 2026", "Hired two counter staff in the autumn"]


def budget_workbook() -> dict[str, bytes]:
    budget = Sheet("Budget", [8, 8, 8, 8, 8, 9])
    budget.row(1, ["Month", "Flour", "Butter", "Staff", "Rent", "Total"], BOLD)
    for r, (month, *costs) in enumerate(BUDGET, start=2):
        budget.row(r, [month, *costs, Formula(f"SUM(B{r}:E{r})", sum(costs))], [PLAIN, *[MONEY] * 5])
    last = len(BUDGET) + 1
    year = [sum(row[i] for row in BUDGET) for i in range(1, 5)]
    budget.row(last + 1, ["Year", *(Formula(f"SUM({c}2:{c}{last})", v) for c, v in zip("BCDE", year, strict=True)),
                          Formula(f"SUM(F2:F{last})", sum(year))], [BOLD, MONEY, MONEY, MONEY, MONEY, MONEY])
    monthly_cost = round(sum(year) / 12, 6)
    assumptions = Sheet("Assumptions", [22, 10])
    assumptions.row(1, ["Assumption", "Value"], BOLD)
    assumptions.row(2, ["Loaves per month", LOAVES])
    assumptions.row(3, ["Price per loaf", PRICE], [PLAIN, MONEY])
    assumptions.row(4, ["Monthly revenue", Formula("B2*B3", LOAVES * PRICE)], [PLAIN, MONEY])
    assumptions.row(5, ["Monthly cost", Formula(f"Budget!F{last + 1}/12", monthly_cost)], [PLAIN, MONEY])
    assumptions.row(6, ["Monthly margin", Formula("B4-B5", round(LOAVES * PRICE - monthly_cost, 6))], [PLAIN, MONEY])
    assumptions.notes.append(LOAVES_NOTE)
    suppliers = Sheet("Suppliers", [20, 11, 26])
    suppliers.row(1, ["Supplier", "Supplies", "Contact"], BOLD)
    for r, row in enumerate(SUPPLIERS, start=2):
        suppliers.row(r, list(row))
    notes = Sheet("Old notes", [40])
    notes.row(1, ["Notes from the 2025 budget"], BOLD)
    for r, line in enumerate(OLD_NOTES, start=2):
        notes.row(r, [line])
    scratch = Sheet("Scratch")
    scratch.row(1, ["temp"])
    return workbook([budget, assumptions, suppliers, notes, scratch], {"OldFlourPrice": "0.78"},
                    "Crumb & Co budget 2026")


def _png(size: int = 16) -> bytes:
    """A wheat-coloured square on white; stored (level 0) deflate so the bytes never depend on zlib's version."""
    raw = b"".join(b"\x00" + b"".join(b"\xd9\xa4\x41" if 3 <= x < 13 and 3 <= y < 13 else b"\xff\xff\xff"
                                      for x in range(size)) for y in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")


def _prices_csv() -> bytes:
    lines = ["product,category,unit_price"] + [f"{p},{CATEGORIES[p]},{v:.2f}" for p, v in PRODUCTS.items()]
    return ("\n".join(lines) + "\n").encode("utf-8")


def build(directory: Path) -> None:
    """Write the workbooks, the CSV and the image into `directory` (see the module docstring)."""
    (directory / "archive").mkdir(parents=True, exist_ok=True)
    _zip(directory / "sales-q1-2026.xlsx", sales_workbook())
    _zip(directory / "staff.xlsx", staff_workbook())
    _zip(directory / "archive" / "sales-q4-2025.xlsx", archive_workbook())
    _zip(directory / "budget-2026.xlsx", budget_workbook())
    (directory / "prices.csv").write_bytes(_prices_csv())
    (directory / "logo.png").write_bytes(_png())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python fixture.py DIRECTORY")
    build(Path(sys.argv[1]))
    print(Path(sys.argv[1]))

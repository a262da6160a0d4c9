"""The database `mcp-server-sqlite` works on: a small online tea shop in one SQLite file.

`build(directory)` writes `directory/DATABASE` with five related tables — suppliers, products, customers,
orders, order_items — about 300 rows in all. The same bytes every time: the rows come from the constants
below and from `random.Random(SEED).random()`, whose sequence Python keeps stable across versions, and no
clock is read. Prices are whole, half or quarter units, so sums of them are exact in floating point.

    python examples/published/sqlite/fixture.py DIR    # writes DIR/shop.db
"""

from __future__ import annotations

import random
import sqlite3
import sys
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

DATABASE = "shop.db"
SEED = 20260315
ORDERS = 80
FIRST_ORDER_ID = 1001
FIRST_ORDER_DAY = date(2026, 1, 5)

SCHEMA = """
CREATE TABLE suppliers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    contact_email TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL,
    stock INTEGER NOT NULL,
    supplier_id INTEGER NOT NULL REFERENCES suppliers(id),
    discontinued INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    joined_on TEXT NOT NULL,
    newsletter INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('processing', 'shipped', 'delivered', 'cancelled', 'returned')),
    shipping REAL NOT NULL
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    unit_price REAL NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
"""

SUPPLIERS = [
    (1, "Misty Peak Gardens", "China", "orders@mistypeak.example.cn"),
    (2, "Darjeeling Valley Estates", "India", "sales@dvestates.example.in"),
    (3, "Kyoto Leaf Works", "Japan", "hello@kyotoleaf.example.jp"),
    (4, "Highland Roasters", "Kenya", "trade@highlandroasters.example.ke"),
    (5, "Kettle & Co", "United Kingdom", "wholesale@kettleco.example.co.uk"),
    (6, "Andes Bean Collective", "Colombia", "export@andesbean.example.co"),
]

# (sku, name, category, price, stock, supplier id); product ids follow the list order from 1.
PRODUCTS = [
    ("TEA-001", "Jasmine Pearls", "Tea", 18.50, 42, 1),
    ("TEA-002", "Lapsang Souchong", "Tea", 14.00, 35, 1),
    ("TEA-003", "Silver Needle", "Tea", 32.00, 8, 1),
    ("TEA-004", "Tieguanyin Oolong", "Tea", 22.75, 19, 1),
    ("TEA-005", "Darjeeling First Flush", "Tea", 26.00, 23, 2),
    ("TEA-006", "Assam Breakfast", "Tea", 9.50, 120, 2),
    ("TEA-007", "Masala Chai Blend", "Tea", 11.25, 64, 2),
    ("TEA-008", "Nilgiri Frost", "Tea", 16.00, 0, 2),
    ("TEA-009", "Gyokuro", "Tea", 38.00, 6, 3),
    ("TEA-010", "Sencha Asahi", "Tea", 21.50, 27, 3),
    ("TEA-011", "Genmaicha", "Tea", 10.75, 58, 3),
    ("TEA-012", "Ceremonial Matcha", "Tea", 44.00, 12, 3),
    ("COF-001", "Kenya AA Nyeri", "Coffee", 19.00, 30, 4),
    ("COF-002", "Mount Kenya Espresso", "Coffee", 17.25, 44, 4),
    ("COF-003", "Ruiru Decaf", "Coffee", 16.50, 3, 4),
    ("COF-004", "Huila Supremo", "Coffee", 15.75, 51, 6),
    ("COF-005", "Nariño Geisha", "Coffee", 48.50, 4, 6),
    ("COF-006", "Cauca Cold Brew Pack", "Coffee", 13.00, 0, 6),
    ("COF-007", "Tolima Dark Roast", "Coffee", 14.50, 37, 6),
    ("ACC-001", "Cast Iron Teapot", "Accessories", 54.00, 9, 5),
    ("ACC-002", "Glass Infuser Mug", "Accessories", 16.00, 25, 5),
    ("ACC-003", "Bamboo Matcha Whisk", "Accessories", 12.50, 31, 3),
    ("ACC-004", "Gooseneck Kettle", "Accessories", 69.00, 7, 5),
    ("ACC-005", "Brass Tea Scoop", "Accessories", 7.25, 80, 5),
    ("ACC-006", "Pour-Over Dripper", "Accessories", 24.50, 14, 5),
    ("ACC-007", "Burr Coffee Grinder", "Accessories", 89.00, 5, 5),
    ("GFT-001", "Tea Discovery Box", "Gifts", 35.00, 18, 2),
    ("GFT-002", "Coffee Lovers Hamper", "Gifts", 62.50, 2, 6),
]

# (name, email, city, country, joined on); customer ids follow the list order from 1.
CUSTOMERS = [
    ("Amara Okafor", "amara.okafor@example.com", "Lagos", "Nigeria", "2024-02-11"),
    ("Benedikt Huber", "b.huber@example.de", "Munich", "Germany", "2024-03-02"),
    ("Chloé Marchand", "chloe.marchand@example.fr", "Lyon", "France", "2024-03-19"),
    ("Daniel Osei", "daniel.osei@example.com", "Accra", "Ghana", "2024-05-07"),
    ("Elif Yılmaz", "elif.yilmaz@example.com.tr", "Izmir", "Turkey", "2024-06-23"),
    ("Farah Siddiqui", "farah.s@example.co.uk", "Leeds", "United Kingdom", "2024-07-14"),
    ("Gabriel Santos", "gabriel.santos@example.com.br", "Recife", "Brazil", "2024-08-01"),
    ("Hannah Lindqvist", "hannah.lindqvist@example.se", "Uppsala", "Sweden", "2024-09-09"),
    ("Ishaan Mehta", "ishaan.mehta@example.in", "Pune", "India", "2024-10-30"),
    ("Julia Nowak", "julia.nowak@example.pl", "Gdansk", "Poland", "2024-11-18"),
    ("Kenji Watanabe", "kenji.w@example.jp", "Sapporo", "Japan", "2025-01-06"),
    ("Lucía Fernández", "lucia.fernandez@example.es", "Valencia", "Spain", "2025-01-27"),
    ("Mateo Rossi", "mateo.rossi@example.it", "Bologna", "Italy", "2025-02-15"),
    ("Nadia Haddad", "nadia.haddad@example.com", "Leeds", "United Kingdom", "2025-03-08"),
    ("Oliver Grant", "oliver.grant@example.co.uk", "Bristol", "United Kingdom", "2025-04-21"),
    ("Priya Raman", "priya.raman@example.in", "Chennai", "India", "2025-05-12"),
    ("Quinn O'Brien", "quinn.obrien@example.ie", "Galway", "Ireland", "2025-06-03"),
    ("Rosa Almeida", "rosa.almeida@example.pt", "Porto", "Portugal", "2025-06-29"),
    ("Samuel Adeyemi", "samuel.adeyemi@example.com", "Ibadan", "Nigeria", "2025-08-16"),
    ("Tomasz Wójcik", "tomasz.wojcik@example.pl", "Krakow", "Poland", "2025-09-04"),
    ("Ursula Meier", "ursula.meier@example.ch", "Basel", "Switzerland", "2025-10-22"),
    ("Viktor Petrov", "viktor.petrov@example.bg", "Plovdiv", "Bulgaria", "2025-11-30"),
    ("Wen Li", "wen.li@example.cn", "Hangzhou", "China", "2026-01-14"),
    ("Yusuf Demir", "yusuf.demir@example.com.tr", "Ankara", "Turkey", "2026-02-20"),
]

_OLD_STATUSES = ("delivered",) * 8 + ("cancelled", "returned")


def _orders(rng: random.Random) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """(orders, order_items): order dates rise with the id; customers early in the list order more often."""
    orders: list[tuple[object, ...]] = []
    items: list[tuple[object, ...]] = []
    day = FIRST_ORDER_DAY
    for number in range(ORDERS):
        order_id = FIRST_ORDER_ID + number
        day += timedelta(days=1 + int(rng.random() * 6))
        customer = 1 + int(rng.random() ** 1.6 * len(CUSTOMERS))
        if number >= ORDERS - 6:
            status = "processing"
        elif number >= ORDERS - 14:
            status = "shipped"
        else:
            status = _OLD_STATUSES[int(rng.random() * len(_OLD_STATUSES))]
        shipping = (4.50, 4.50, 7.00, 0.00)[int(rng.random() * 4)]
        orders.append((order_id, customer, day.isoformat(), status, shipping))
        lines = 1 + int(rng.random() * 4)
        chosen: list[int] = []
        while len(chosen) < lines:
            product = 1 + int(rng.random() * len(PRODUCTS))
            if product not in chosen:
                chosen.append(product)
        for product in sorted(chosen):
            quantity = 1 + int(rng.random() ** 2 * 4)
            items.append((order_id, product, quantity, PRODUCTS[product - 1][3]))
    return orders, items


def _insert(connection: sqlite3.Connection, table: str, columns: tuple[str, ...],
            rows: Sequence[tuple[object, ...]]) -> None:
    marks = ", ".join("?" * len(columns))
    connection.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def build(directory: Path) -> None:
    """Write `directory/DATABASE` (the directory is created; an existing file is replaced)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DATABASE
    path.unlink(missing_ok=True)
    orders, items = _orders(random.Random(SEED))
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executescript(SCHEMA)
            _insert(connection, "suppliers", ("id", "name", "country", "contact_email"), SUPPLIERS)
            _insert(connection, "products", ("id", "sku", "name", "category", "price", "stock", "supplier_id"),
                    [(i, *row) for i, row in enumerate(PRODUCTS, start=1)])
            _insert(connection, "customers", ("id", "name", "email", "city", "country", "joined_on"),
                    [(i, *row) for i, row in enumerate(CUSTOMERS, start=1)])
            _insert(connection, "orders", ("id", "customer_id", "ordered_on", "status", "shipping"), orders)
            _insert(connection, "order_items", ("order_id", "product_id", "quantity", "unit_price"), items)
    finally:
        connection.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python fixture.py DIRECTORY")
    build(Path(sys.argv[1]))
    print(Path(sys.argv[1]) / DATABASE)

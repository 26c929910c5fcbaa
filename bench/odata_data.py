#!/usr/bin/env python3
"""Load the peer-benchmark data set into a SQLite file for Gatehouse.

Runs ../shared/bench/gen_items.py (the generator the CAP peer deploys from) and
loads its Items.csv and Categories.csv into the tables `items` and
`categories`, with the column names of the peer's CDS model (so OData property
names and query strings are the same on both servers) and the same secondary
indexes the peer creates after deployment (scripts/post-deploy.js), then runs
ANALYZE. Python standard library only.

  python3 bench/odata_data.py --rows 100000 --db bench/out/data/items-100000.db
      [--gen ../shared/bench/gen_items.py] [--csv-dir DIR] [--force]

An existing file holding the right row count and indexes is kept unless
--force is given. Prints one summary line.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GEN = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench", "gen_items.py"))

# Mirrors db/schema.cds of the peer: Integer key, String(100), String(20),
# Decimal(10,2), Integer, Timestamp, Boolean. `ID INTEGER PRIMARY KEY` is the
# rowid, as the peer's `ID INTEGER NOT NULL, PRIMARY KEY(ID)` is.
SCHEMA = """
CREATE TABLE items (
  ID       INTEGER NOT NULL PRIMARY KEY,
  name     TEXT,
  category TEXT,
  price    DECIMAL(10, 2),
  quantity INTEGER,
  created  DATETIME,
  active   BOOLEAN
);
CREATE TABLE categories (
  ID   TEXT NOT NULL PRIMARY KEY,
  name TEXT
);
"""
# The peer's post-deploy indexes: catalog_Items (category, price) and (price).
INDEXES = {
    "items_category_price": "CREATE INDEX items_category_price ON items (category, price)",
    "items_price": "CREATE INDEX items_price ON items (price)",
}
ITEM_HEADER = "ID,name,category,price,quantity,created,active"


def existing_ok(path: str, rows: int) -> bool:
    if not os.path.exists(path):
        return False
    try:
        con = sqlite3.connect(path)
        try:
            n = con.execute("SELECT count(*) FROM items").fetchone()[0]
            idx = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items'")}
            stat = con.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return n == rows and set(INDEXES) <= idx and stat == 1


def item_values(line: str):
    i, name, category, price, quantity, created, active = line.rstrip("\n").split(",")
    # price is bound as text ('12.34'): the column's NUMERIC affinity stores
    # it as a number, exactly as an application inserting a decimal would.
    return (int(i), name, category, price, int(quantity), created,
            1 if active == "true" else 0)


def load(path: str, csv_dir: str, rows: int) -> None:
    tmp = path + ".tmp"
    for p in (tmp, tmp + "-journal"):
        if os.path.exists(p):
            os.remove(p)
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    con.executescript(SCHEMA)
    with open(os.path.join(csv_dir, "Items.csv"), encoding="ascii") as f:
        header = f.readline().strip()
        if header != ITEM_HEADER:
            sys.exit("odata_data.py: unexpected Items.csv header %r" % header)
        with con:
            con.executemany("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (item_values(line) for line in f))
    with open(os.path.join(csv_dir, "Categories.csv"), encoding="ascii") as f:
        f.readline()
        with con:
            con.executemany("INSERT INTO categories VALUES (?, ?)",
                            (tuple(line.rstrip("\n").split(",", 1)) for line in f))
    with con:
        for sql in INDEXES.values():
            con.execute(sql)
    con.execute("ANALYZE")
    con.commit()
    n = con.execute("SELECT count(*) FROM items").fetchone()[0]
    c = con.execute("SELECT count(*) FROM categories").fetchone()[0]
    con.close()
    if n != rows or c != 10:
        sys.exit("odata_data.py: loaded %d items and %d categories, expected %d and 10" % (n, c, rows))
    os.replace(tmp, path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--db", required=True, help="SQLite file to write")
    ap.add_argument("--gen", default=DEFAULT_GEN, help="path of gen_items.py")
    ap.add_argument("--csv-dir", help="where the CSVs go (default: a temporary directory)")
    ap.add_argument("--force", action="store_true", help="rebuild even if the file looks complete")
    a = ap.parse_args()
    if not a.force and existing_ok(a.db, a.rows):
        print("odata_data.py: %s already holds %d items with indexes, kept" % (a.db, a.rows))
        return
    os.makedirs(os.path.dirname(os.path.abspath(a.db)), exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        csv_dir = a.csv_dir or scratch
        subprocess.run([sys.executable, a.gen, "--rows", str(a.rows), "--out-dir", csv_dir],
                       check=True, stdout=subprocess.DEVNULL)
        load(a.db, csv_dir, a.rows)
    print("odata_data.py: %s: items=%d categories=10, indexes %s, ANALYZE done"
          % (a.db, a.rows, ", ".join(INDEXES)))


if __name__ == "__main__":
    main()

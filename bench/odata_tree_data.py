#!/usr/bin/env python3
"""Write the tree benchmark's nodes and load them for Gatehouse.

A tree of --rows nodes (default 100,000): IDs 1..rows, the 10 roots 1..10,
node p's children 10p+1 .. 10p+10 (so node 7's children are 71..80), the
name "node <ID>". The same rows go to:

  --csv FILE        ID,name,parent_ID (parent_ID empty for a root), the file
                    the CAP peer deploys (bench/cap_tree/run.sh);
  --sqlite FILE     table nodes for Gatehouse on SQLite;
  --engines LIST    table nodes in the database --db (default gh_tree) on
                    postgres (psql \\copy) and/or mariadb (LOAD DATA LOCAL).

Every table: ID INTEGER primary key, name VARCHAR(100), parent_ID INTEGER
(quoted on PostgreSQL, so that the names keep their case),
an index on parent_ID (the peer's tables get the same one), then ANALYZE.
A table already holding --rows rows is kept unless --force is given.
Python standard library only; drives the psql and mariadb clients.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile


def rows(n):
    for i in range(1, n + 1):
        yield i, "node %d" % i, (None if i <= 10 else (i - 1) // 10)


def run(cmd, sql=None):
    r = subprocess.run(cmd, input=sql, text=True, capture_output=True)
    if r.returncode != 0:
        sys.exit("odata_tree_data.py: %s failed: %s" % (" ".join(cmd[:3]), r.stderr.strip()))
    return r.stdout.strip()


def write_csv(path, n):
    with open(path, "w") as f:
        f.write("ID,name,parent_ID\n")
        for i, name, parent in rows(n):
            f.write("%d,%s,%s\n" % (i, name, "" if parent is None else parent))


def load_sqlite(path, n, force):
    if os.path.exists(path) and not force:
        try:
            if sqlite3.connect(path).execute("SELECT count(*) FROM nodes").fetchone()[0] == n:
                return
        except sqlite3.Error:
            pass
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE nodes (ID INTEGER PRIMARY KEY, name VARCHAR(100), parent_ID INTEGER)")
    db.executemany("INSERT INTO nodes VALUES (?, ?, ?)", rows(n))
    db.execute("CREATE INDEX nodes_parent ON nodes (parent_ID)")
    db.execute("ANALYZE")
    db.commit()
    db.close()
    print("odata_tree_data.py: %s: %d nodes" % (path, n))


def load_postgres(a, csv):
    base = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-qAt", "-v", "ON_ERROR_STOP=1"]
    if not a.force:
        r = subprocess.run(base + ["-d", a.db, "-c", "SELECT count(*) FROM nodes"], text=True, capture_output=True)
        if r.returncode == 0 and r.stdout.strip() == str(a.rows):
            return
    run(base + ["-d", "postgres", "-c", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % a.db,
                "-c", "CREATE DATABASE %s" % a.db])
    # Quoted: the names keep their case, as on the other engines.
    run(base + ["-d", a.db], 'CREATE TABLE nodes ("ID" INTEGER PRIMARY KEY, name VARCHAR(100), "parent_ID" INTEGER);\n'
        "\\copy nodes FROM '%s' WITH (FORMAT csv, HEADER true)\n"
        'CREATE INDEX nodes_parent ON nodes ("parent_ID");\nANALYZE nodes;\n' % csv)
    print("odata_tree_data.py: PostgreSQL %s: %d nodes" % (a.db, a.rows))


def load_mariadb(a, csv):
    base = ["mariadb", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "--local-infile=1", "-N", "-B"]
    if not a.force:
        r = subprocess.run(base + [a.db, "-e", "SELECT count(*) FROM nodes"], text=True, capture_output=True)
        if r.returncode == 0 and r.stdout.strip() == str(a.rows):
            return
    run(base + ["-e", "DROP DATABASE IF EXISTS %s; CREATE DATABASE %s" % (a.db, a.db)])
    run(base + [a.db], "CREATE TABLE nodes (ID INTEGER PRIMARY KEY, name VARCHAR(100), parent_ID INTEGER) "
        "DEFAULT CHARSET utf8mb4;\n"
        "LOAD DATA LOCAL INFILE '%s' INTO TABLE nodes FIELDS TERMINATED BY ',' IGNORE 1 LINES "
        "(ID, name, @parent) SET parent_ID = NULLIF(@parent, '');\n"
        "CREATE INDEX nodes_parent ON nodes (parent_ID);\nANALYZE TABLE nodes;\n" % csv)
    print("odata_tree_data.py: MariaDB %s: %d nodes" % (a.db, a.rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--csv")
    p.add_argument("--sqlite")
    p.add_argument("--engines", default="")
    p.add_argument("--db", default="gh_tree")
    p.add_argument("--force", action="store_true")
    a = p.parse_args()
    engines = [e for e in a.engines.split(",") if e]
    with tempfile.TemporaryDirectory() as tmp:
        csv = a.csv or os.path.join(tmp, "nodes.csv")
        write_csv(csv, a.rows)
        if a.sqlite:
            load_sqlite(a.sqlite, a.rows, a.force)
        if "postgres" in engines:
            load_postgres(a, csv)
        if "mariadb" in engines:
            load_mariadb(a, csv)


if __name__ == "__main__":
    main()

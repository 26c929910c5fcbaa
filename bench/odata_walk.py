#!/usr/bin/env python3
"""The client side of bench/odata_walk.sh: walking the Items collection by its
next links, the engine's own keyset loop over the same rows, the peak-RSS
request, and results.md.

  odata_walk.py walk   --out DIR --engine E --base http://127.0.0.1:8711 --rows N --page P
                       [--rounds 2] [--gen ../shared/bench/gen_items.py]
                       [--walks plain,shaped] [--no-skip]
  odata_walk.py keyset --out DIR --engine E --rows N --page P --db PATH_OR_NAME [--rounds 2]
  odata_walk.py rss    --out DIR --engine E --base http://127.0.0.1:8711 --rows N --page P --pid PID
  odata_walk.py report --out DIR --engines "sqlite postgres mariadb" --rows N --page P [...] > results.md

walk, keyset and rss write DIR/<what>-<engine>.json (figures and checks) and
append one line per page to DIR/pages.tsv (engine, walk, round, page, skip,
rows, bytes, ms). walk and rss use only the standard library (http.client, one
persistent connection); keyset needs psycopg for PostgreSQL and
mysql-connector-python (its C extension) or PyMySQL for MariaDB, which
odata_walk.sh installs into a venv.

The walks (PAGE rows a page: `Prefer: odata.maxpagesize=PAGE` on every request):
  plain        GET /odata/Items, then every @odata.nextLink verbatim until none;
  shaped       the same from /odata/Items?$filter=category eq 'cat3'&$orderby=price desc
               &$select=ID,price;
  skip-plain   (once, after the rounds) the plain shape by $skip alone: the first
               10 pages, each next link with its $skiptoken removed, then the
               last 10 pages ($skip = ROWS - 10*PAGE ... ROWS - PAGE) in the form
               of those links.
A page's time is the client's wall time from sending the request to the last
byte of the body; the JSON is parsed and checked after the clock stops. The
expected rows are computed from gen_items.py's formulas (plain: every row,
every property, IDs 1..ROWS in order; shaped: i % 10 == 3, by price desc then
ID desc, the key appended in the last $orderby term's direction).
"""
import argparse
import http.client
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from decimal import Decimal
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GEN = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench", "gen_items.py"))
TITLE = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
PLAIN_PATH = "/odata/Items"
SHAPED_PATH = "/odata/Items?$filter=category%20eq%20'cat3'&$orderby=price%20desc&$select=ID,price"
COLUMNS = ("ID", "name", "category", "price", "quantity", "created", "active")
WALKS = ("plain", "shaped")


# --- expected rows -----------------------------------------------------------------
def load_gen(path):
    spec = importlib.util.spec_from_file_location("gen_items", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def price_of(i):
    q = i * 37 % 10000
    return Decimal("%d.%02d" % (q // 100, q % 100))


def expected_shaped(rows):
    """(ID, price) of category cat3 (i % 10 == 3), price desc then ID desc."""
    return sorted(((i, price_of(i)) for i in range(3, rows + 1, 10)), key=lambda r: (r[1], r[0]), reverse=True)


def norm_price(v):
    return v if isinstance(v, Decimal) else Decimal(str(v))


class PlainCheck:
    """Rows of the plain walk, in order, against gen_items.item_row: the IDs
    (1..rows, each once, in order) and every other property."""

    def __init__(self, gen, rows):
        self.gen, self.rows = gen, rows
        self.next_id = 1
        self.id_errors = 0
        self.field_errors = 0
        self.first_id_error = None
        self.first_field_error = None

    def expect(self, i):
        f = self.gen.item_row(i, self.rows).split(",")
        return {"ID": int(f[0]), "name": f[1], "category": f[2], "price": Decimal(f[3]),
                "quantity": int(f[4]), "created": f[5], "active": f[6] == "true"}

    def feed(self, entities):
        for e in entities:
            i = e.get("ID")
            if i != self.next_id:
                self.id_errors += 1
                if self.first_id_error is None:
                    self.first_id_error = "expected ID %s, got %r" % (self.next_id, i)
                if isinstance(i, int):
                    self.next_id = i  # resynchronise, so one gap counts once
            if isinstance(i, int) and 1 <= i <= self.rows:
                want = self.expect(i)
                got = dict(e)
                if "price" in got and got["price"] is not None:
                    got["price"] = norm_price(got["price"])
                bad = [c for c in COLUMNS if got.get(c) != want[c]]
                if bad:
                    self.field_errors += 1
                    if self.first_field_error is None:
                        self.first_field_error = "ID %d: %s" % (i, ", ".join(
                            "%s %r (expected %r)" % (c, got.get(c), want[c]) for c in bad))
            self.next_id += 1

    def result(self):
        delivered = self.next_id - 1
        ok = self.id_errors == 0 and delivered == self.rows
        msg = "IDs 1..%d, each once, in order" % self.rows if ok else "WRONG IDS: %s%s" % (
            self.first_id_error or "", "" if delivered == self.rows else "; walk ended after ID %d of %d" % (
                delivered, self.rows))
        if self.field_errors:
            msg += "; %d rows with other property values than gen_items.py's (first: %s)" % (
                self.field_errors, self.first_field_error)
        else:
            msg += "; every property as gen_items.py makes it"
        return ok and not self.field_errors, msg


def check_shaped(got, rows):
    want = expected_shaped(rows)
    if got == want:
        return True, "the %d rows of category cat3, price desc then ID desc, exactly" % len(want)
    first = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), min(len(got), len(want)))
    return False, "WRONG ROWS: %d rows (expected %d); first difference at row %d: %r vs expected %r" % (
        len(got), len(want), first + 1, got[first] if first < len(got) else None,
        want[first] if first < len(want) else None)


# --- HTTP --------------------------------------------------------------------------
class Client:
    """One persistent HTTP/1.1 connection."""

    def __init__(self, base, page):
        u = urlsplit(base)
        self.netloc = u.netloc
        self.conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600)
        self.headers = {"Prefer": "odata.maxpagesize=%d" % page, "Accept": "application/json"}
        self.reconnects = 0

    def get(self, target):
        """(status, body bytes, seconds): the clock runs from the request to the body's last byte."""
        for attempt in (1, 2):
            t0 = time.perf_counter()
            try:
                self.conn.request("GET", target, headers=self.headers)
                r = self.conn.getresponse()
                body = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # The server closed the idle connection (keep-alive timeout):
                # once more on a new one, timed alone.
                self.conn.close()
                self.reconnects += 1
                if attempt == 2:
                    raise
                continue
            dt = time.perf_counter() - t0
            return r.status, body, dt

    def target(self, link):
        """The request target of an absolute next link, which must point at this server."""
        u = urlsplit(link)
        if u.netloc != self.netloc:
            sys.exit("odata_walk.py: next link %s leaves %s" % (link, self.netloc))
        return u.path + ("?" + u.query if u.query else "")


def parse(status, body, target):
    if status != 200:
        sys.exit("odata_walk.py: GET %s answered %d: %s" % (target, status, body[:400]))
    return json.loads(body, parse_float=Decimal)


def strip_skiptoken(target):
    path, _, query = target.partition("?")
    kept = [p for p in query.split("&") if p and not p.startswith("$skiptoken=")]
    return path + ("?" + "&".join(kept) if kept else "")


def with_skip(target, skip):
    path, _, query = target.partition("?")
    parts = [p for p in query.split("&") if p and not p.startswith("$skip=") and not p.startswith("$skiptoken=")]
    parts.append("$skip=%d" % skip)
    return path + "?" + "&".join(parts)


def summary(times_ms, page_rows):
    n = len(times_ms)
    first, last = times_ms[:10], times_ms[-10:]
    f, l = statistics.mean(first), statistics.mean(last)
    # The last page may be short: the ten before the end are the comparison
    # only when it is full; otherwise the ten full pages before it.
    if n > 10 and page_rows[-1] < page_rows[0]:
        last = times_ms[-11:-1]
        l = statistics.mean(last)
    worst = max(range(n), key=lambda k: times_ms[k])
    tenths = [times_ms[k * n // 10:(k + 1) * n // 10] for k in range(10)] if n >= 10 else []
    return {"pages": n, "first10_ms": f, "last10_ms": l, "ratio": l / f if f else float("nan"),
            "total_s": sum(times_ms) / 1000, "median_ms": statistics.median(times_ms),
            "max_ms": times_ms[worst], "max_page": worst + 1,
            "deciles_ms": [statistics.mean(t) for t in tenths]}


def tsv(out, engine, walk, rnd, pages):
    with open(os.path.join(out, "pages.tsv"), "a") as f:
        for k, (skip, rows, size, t) in enumerate(pages):
            f.write("%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.3f\n" % (engine, walk, rnd, k + 1, skip, rows, size, t))


def walk_once(client, start, walk, gen, rows):
    """Follows the next links from `start`; per page (skip, rows, bytes, ms), the check."""
    pages, target, got, skip = [], start, [], 0
    check = PlainCheck(gen, rows) if walk == "plain" else None
    wall0 = time.perf_counter()
    while target:
        status, body, dt = client.get(target)
        doc = parse(status, body, target)
        value = doc.get("value", [])
        pages.append((skip, len(value), len(body), dt * 1000))
        skip += len(value)
        if check:
            check.feed(value)
        else:
            got.extend((e.get("ID"), norm_price(e.get("price"))) for e in value)
        link = doc.get("@odata.nextLink")
        if link and "$skiptoken=" not in link:
            print("odata_walk.py: WARNING: a next link without $skiptoken: %s" % link, file=sys.stderr)
        target = client.target(link) if link else None
        if len(pages) > rows + 1:
            sys.exit("odata_walk.py: %s walk does not end (%d pages)" % (walk, len(pages)))
    wall = time.perf_counter() - wall0
    ok, msg = check.result() if check else check_shaped(got, rows)
    return pages, ok, msg, wall


def cmd_walk(a):
    gen = load_gen(a.gen)
    client = Client(a.base, a.page)
    status, body, _ = client.get(PLAIN_PATH + "?$top=1")  # opens the connection
    parse(status, body, "$top=1")
    res = {"engine": a.engine, "rows": a.rows, "page": a.page, "walks": {}}
    walks = [w for w in a.walks.split(",") if w]
    if not walks or set(walks) - set(WALKS):
        sys.exit("odata_walk.py: --walks takes %s, not %r" % (",".join(WALKS), a.walks))
    for walk, start in (("plain", PLAIN_PATH), ("shaped", SHAPED_PATH)):
        if walk not in walks:
            continue
        rounds = []
        for rnd in range(1, a.rounds + 1):
            pages, ok, msg, wall = walk_once(client, start, walk, gen, a.rows)
            tsv(a.out, a.engine, walk, rnd, pages)
            s = summary([p[3] for p in pages], [p[1] for p in pages])
            s.update(ok=ok, check=msg, wall_s=wall, bytes=sum(p[2] for p in pages))
            rounds.append(s)
            print("  %-8s %-7s round %d: %5d pages, first 10 %7.2f ms, last 10 %7.2f ms (x%.2f), total %7.2f s"
                  " (client wall %.1f s); %s" % (a.engine, walk, rnd, s["pages"], s["first10_ms"], s["last10_ms"],
                                                 s["ratio"], s["total_s"], wall, msg))
        res["walks"][walk] = rounds
    if a.no_skip:
        res["reconnects"] = client.reconnects
        json.dump(res, open(os.path.join(a.out, "walk-%s.json" % a.engine), "w"), indent=1, default=str)
        return
    # $skip alone (the plain shape): the first ten pages following the links
    # without their $skiptoken, then the last ten at their offsets.
    pages, target, skip, bad = [], PLAIN_PATH, 0, []
    template = None
    for _ in range(10):
        status, body, dt = client.get(target)
        doc = parse(status, body, target)
        ids = [e.get("ID") for e in doc.get("value", [])]
        if ids != list(range(skip + 1, skip + 1 + len(ids))) or not ids:
            bad.append("page at $skip=%d: IDs %s..." % (skip, ids[:3]))
        pages.append((skip, len(ids), len(body), dt * 1000))
        skip += len(ids)
        link = doc.get("@odata.nextLink")
        if not link:
            break
        target = strip_skiptoken(client.target(link))
        template = template or target
    first_n = len(pages)
    if template and a.rows > 10 * a.page:
        for k in range(10, 0, -1):
            skip = a.rows - k * a.page
            target = with_skip(template, skip)
            status, body, dt = client.get(target)
            doc = parse(status, body, target)
            ids = [e.get("ID") for e in doc.get("value", [])]
            if ids != list(range(skip + 1, min(skip + a.page, a.rows) + 1)):
                bad.append("page at $skip=%d: IDs %s..." % (skip, ids[:3]))
            pages.append((skip, len(ids), len(body), dt * 1000))
    tsv(a.out, a.engine, "skip-plain", 1, pages)
    t = [p[3] for p in pages]
    f = statistics.mean(t[:first_n])
    l = statistics.mean(t[first_n:]) if len(t) > first_n else float("nan")
    res["skip"] = {"pages": len(pages), "first10_ms": f, "last10_ms": l, "ratio": l / f if f else float("nan"),
                   "ok": not bad, "check": "each page's IDs are $skip+1..$skip+%d" % a.page if not bad
                   else "WRONG ROWS: " + "; ".join(bad[:3])}
    print("  %-8s $skip   : first 10 %7.2f ms, last 10 %7.2f ms (x%.1f); %s" % (
        a.engine, f, l, res["skip"]["ratio"], res["skip"]["check"]))
    res["reconnects"] = client.reconnects
    if client.reconnects:
        print("  %-8s the server closed the connection %d times (each request sent again on a new one)" % (
            a.engine, client.reconnects))
    json.dump(res, open(os.path.join(a.out, "walk-%s.json" % a.engine), "w"), indent=1, default=str)


# --- the engine's own keyset loop ----------------------------------------------------
def connect(engine, db):
    """(connection, placeholder, quoted key, driver name)."""
    if engine == "sqlite":
        import sqlite3
        return sqlite3.connect("file:%s?mode=ro" % db, uri=True), "?", "ID", "sqlite3 %s" % sqlite3.sqlite_version
    if engine == "postgres":
        import psycopg
        conn = psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=%s sslmode=disable" % db,
                               autocommit=True, prepare_threshold=0)
        return conn, "%s", '"ID"', "psycopg %s (%s), prepared statements" % (
            psycopg.__version__, psycopg.pq.__impl__)
    if engine == "mariadb":
        driver = os.environ.get("WALK_MYSQL_DRIVER", "")
        if driver in ("", "mysql-connector"):
            try:
                import mysql.connector
                conn = mysql.connector.connect(host="127.0.0.1", port=3306, user="root", database=db,
                                               use_pure=False, autocommit=True)
                return conn, "%s", "ID", "mysql-connector-python %s (C extension)" % mysql.connector.__version__
            except ImportError as e:  # no C extension
                if driver:
                    raise
                print("odata_walk.py: mysql-connector-python's C extension is not available (%s): PyMySQL" % e,
                      file=sys.stderr)
        import pymysql
        conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", database=db, autocommit=True)
        return conn, "%s", "ID", "PyMySQL %s (pure Python)" % pymysql.__version__
    raise SystemExit("odata_walk.py: unknown engine %s" % engine)


def keyset_statements(ph, key, page):
    cols = ", ".join(key if c == "ID" else c for c in COLUMNS)
    return {
        "plain": ("SELECT %s FROM items ORDER BY %s LIMIT %d" % (cols, key, page),
                  "SELECT %s FROM items WHERE %s > %s ORDER BY %s LIMIT %d" % (cols, key, ph, key, page),
                  lambda last: (last[0],)),
        # The usual keyset form, its range on the (category, price) index:
        # price <= p, and among equal prices only the lower IDs.
        "shaped": ("SELECT %s, price FROM items WHERE category = 'cat3' ORDER BY price DESC, %s DESC LIMIT %d"
                   % (key, key, page),
                   "SELECT %s, price FROM items WHERE category = 'cat3' AND price <= %s AND (price < %s OR %s < %s)"
                   " ORDER BY price DESC, %s DESC LIMIT %d" % (key, ph, ph, key, ph, key, page),
                   lambda last: (last[1], last[1], last[0])),
    }


def cmd_keyset(a):
    gen = load_gen(a.gen)
    conn, ph, key, driver = connect(a.engine, a.db)
    stmts = keyset_statements(ph, key, a.page)
    res = {"engine": a.engine, "driver": driver, "statements": {w: list(stmts[w][:2]) for w in WALKS}, "walks": {}}
    for walk in WALKS:
        first, nxt, args = stmts[walk]
        rounds = []
        for rnd in range(1, a.rounds + 1):
            cur = conn.cursor()
            pages, last, skip, got = [], None, 0, []
            check = PlainCheck(gen, a.rows) if walk == "plain" else None
            wall0 = time.perf_counter()
            while True:
                t0 = time.perf_counter()
                if last is None:
                    cur.execute(first)
                else:
                    cur.execute(nxt, args(last))
                rs = cur.fetchall()
                dt = time.perf_counter() - t0
                pages.append((skip, len(rs), 0, dt * 1000))
                skip += len(rs)
                if check:
                    check.feed(keyset_entities(a.engine, rs))
                else:
                    got.extend((r[0], norm_price(r[1])) for r in rs)
                if len(rs) < a.page:
                    break
                last = rs[-1]
            wall = time.perf_counter() - wall0
            cur.close()
            ok, msg = check.result() if check else check_shaped(got, a.rows)
            tsv(a.out, a.engine, "keyset-" + walk, rnd, pages)
            s = {"pages": len(pages), "total_s": sum(p[3] for p in pages) / 1000, "wall_s": wall,
                 "ok": ok, "check": msg}
            rounds.append(s)
            print("  %-8s keyset %-7s round %d: %5d statements, total %7.2f s; %s" % (
                a.engine, walk, rnd, s["pages"], s["total_s"], msg))
        res["walks"][walk] = rounds
    conn.close()
    json.dump(res, open(os.path.join(a.out, "keyset-%s.json" % a.engine), "w"), indent=1, default=str)


def keyset_entities(engine, rs):
    """Rows of the plain keyset loop as the entities Gatehouse answers, for PlainCheck."""
    out = []
    for r in rs:
        i, name, category, price, quantity, created, active = r
        if not isinstance(created, str):  # datetime (PostgreSQL, MariaDB)
            created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
        else:  # SQLite holds the CSV's text
            created = created if created.endswith("Z") else created.replace(" ", "T") + "Z"
        out.append({"ID": i, "name": name, "category": category,
                    "price": Decimal(repr(price)) if isinstance(price, float) else norm_price(price),
                    "quantity": quantity, "created": created, "active": bool(active)})
    return out


# --- peak RSS ------------------------------------------------------------------------
def hwm_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def cmd_rss(a):
    base = urlsplit(a.base)
    res = {"engine": a.engine, "rows": a.rows, "hwm_idle_kb": hwm_kb(a.pid)}
    # One ordinary page first, so that what any page sets up (the pool's
    # connection, statement caches) is in the baseline.
    c = Client(a.base, a.page)
    status, body, _ = c.get(PLAIN_PATH)
    parse(status, body, PLAIN_PATH)
    c.conn.close()
    res["hwm_before_kb"] = hwm_kb(a.pid)
    res["rss_before_kb"] = rss_kb(a.pid)
    conn = http.client.HTTPConnection(base.hostname, base.port, timeout=1800)
    t0 = time.perf_counter()
    conn.request("GET", PLAIN_PATH, headers={"Prefer": "odata.maxpagesize=%d" % a.rows,
                                             "Accept": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        sys.exit("odata_walk.py: the whole-table page answered %d: %s" % (r.status, r.read(400)))
    res["transfer"] = "chunked" if (r.getheader("Transfer-Encoding") or "").lower() == "chunked" else \
        "content-length %s" % r.getheader("Content-Length")
    res["preference_applied"] = r.getheader("Preference-Applied")
    # Streamed and discarded: the bytes, the entities ('{"ID":' opens each)
    # and the tail (no next link), without holding the body.
    size, count, carry, tail = 0, 0, b"", b""
    mark = b'{"ID":'
    while True:
        chunk = r.read(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        buf = carry + chunk
        count += buf.count(mark)
        carry = buf[-(len(mark) - 1):]  # a mark cut by the chunk's end is counted with the next
        tail = (tail + chunk)[-400:]
    res["seconds"] = time.perf_counter() - t0
    conn.close()
    time.sleep(0.2)
    res["hwm_after_kb"] = hwm_kb(a.pid)
    res["rss_after_kb"] = rss_kb(a.pid)
    res["bytes"] = size
    res["entities"] = count
    res["rise_mb"] = (res["hwm_after_kb"] - res["hwm_before_kb"]) / 1024
    res["ok"] = count == a.rows and b"@odata.nextLink" not in tail
    res["check"] = "%d entities, no next link" % count if res["ok"] else \
        "WRONG: %d entities (expected %d)%s" % (count, a.rows,
                                                "; a next link" if b"@odata.nextLink" in tail else "")
    print("  %-8s one page of %d rows: %.1f MB in %.2f s (%s); VmHWM %d -> %d kB: +%.1f MB; %s" % (
        a.engine, a.rows, size / 1e6, res["seconds"], res["transfer"], res["hwm_before_kb"],
        res["hwm_after_kb"], res["rise_mb"], res["check"]))
    json.dump(res, open(os.path.join(a.out, "rss-%s.json" % a.engine), "w"), indent=1)


# --- results.md ----------------------------------------------------------------------
def load(out, what, engine):
    p = os.path.join(out, "%s-%s.json" % (what, engine))
    return json.load(open(p)) if os.path.exists(p) else None


def f2(v, fmt="%.2f"):
    return "–" if v is None or v != v else fmt % v


def cmd_report(a):
    engines = a.engines.split()
    P = print
    P("# Walking %s rows by OData next links\n" % format(a.rows, ","))
    P("`%s` — Gatehouse `%s` (Rocket profile `%s`), pages of %d rows (`Prefer: odata.maxpagesize=%d`, "
      "pagination.default = max = %d), one persistent HTTP/1.1 connection, one Gatehouse process at a time. "
      "Each walk ran %d rounds; the figures are the last round's (round 1 warms the engine's caches "
      "and Gatehouse's pool; all rounds are in pages.tsv and below).\n"
      % (a.command, a.gh_bin, a.profile, a.page, a.page, a.page, a.rounds))
    P("- **plain**: `GET /odata/Items`, then every `@odata.nextLink` verbatim (each carries `$skip` and a "
      "signed `$skiptoken`) until none.")
    P("- **shaped**: `GET /odata/Items?$filter=category eq 'cat3'&$orderby=price desc&$select=ID,price` "
      "(%s matches), then its next links." % format(len(range(3, a.rows + 1, 10)), ","))
    P("- page ms: the client's wall time from the request to the body's last byte (the JSON is parsed and "
      "checked after); first/last 10: mean over the first and the last ten pages (the last ten full pages when "
      "the last page is short); total: the sum of every page's time.")
    P("- **keyset**: the engine's own keyset loop from a Python client (statements below), page after page, "
      "each statement's execute + fetch of all rows timed; Gatehouse / keyset = the walks' totals.")
    P("- **$skip only**: the plain walk's first ten next links with their `$skiptoken` removed (Gatehouse then "
      "reads by OFFSET), then the last ten pages ($skip = %s..%s) in the same form."
      % (format(max(0, a.rows - 10 * a.page), ","), format(max(0, a.rows - a.page), ",")))
    P("- **peak RSS**: a fresh Gatehouse whose pagination.max is %s (odata.statement_timeout_ms %s); one "
      "ordinary page, VmHWM, then `GET /odata/Items` with `Prefer: odata.maxpagesize=%d` (the whole table in one "
      "page, read as a stream and discarded by the client), VmHWM again. Goal: a rise under 16 MB.\n"
      % (format(a.rows, ","), a.timeout_ms, a.rows))
    P("Goal for the walks: last 10 ≤ 1.5 × first 10.\n")
    P("## Walks\n")
    P("| engine | walk | pages | first 10 ms | last 10 ms | last / first | median ms | max ms (page) "
      "| total s | keyset total s | Gatehouse / keyset | rows |")
    P("|---|---|---|---|---|---|---|---|---|---|---|---|")
    problems = []
    for e in engines:
        w, k = load(a.out, "walk", e), load(a.out, "keyset", e)
        for walk in WALKS:
            if not w:
                continue
            s = w["walks"][walk][-1]
            ks = k["walks"][walk][-1] if k else None
            ratio = s["total_s"] / ks["total_s"] if ks and ks["total_s"] else None
            goal = "" if s["ratio"] <= 1.5 else " ⚠"
            P("| %s | %s | %d | %s | %s | %s%s | %s | %s (%d) | %s | %s | %s | %s |" % (
                TITLE.get(e, e), walk, s["pages"], f2(s["first10_ms"]), f2(s["last10_ms"]), f2(s["ratio"]), goal,
                f2(s["median_ms"]), f2(s["max_ms"]), s["max_page"], f2(s["total_s"]),
                f2(ks["total_s"]) if ks else "–", f2(ratio) if ratio else "–",
                "ok" if s["ok"] and (not ks or ks["ok"]) else "**WRONG**"))
            for rnd, r in enumerate(w["walks"][walk]):
                if not r["ok"]:
                    problems.append("%s %s round %d: %s" % (e, walk, rnd + 1, r["check"]))
            for rnd, r in enumerate(k["walks"][walk] if k else []):
                if not r["ok"]:
                    problems.append("%s keyset %s round %d: %s" % (e, walk, rnd + 1, r["check"]))
    P()
    P("Page time by tenth of the walk (mean ms of each tenth of the pages, last round):\n")
    P("| engine | walk | " + " | ".join("%d" % (k + 1) for k in range(10)) + " |")
    P("|---|---|" + "---|" * 10)
    for e in engines:
        w = load(a.out, "walk", e)
        for walk in WALKS:
            if w and w["walks"][walk][-1]["deciles_ms"]:
                P("| %s | %s | %s |" % (TITLE.get(e, e), walk, " | ".join(
                    f2(v) for v in w["walks"][walk][-1]["deciles_ms"])))
    P()
    P("Every round (first 10 / last 10 ms, total s; keyset total s):\n")
    for e in engines:
        w, k = load(a.out, "walk", e), load(a.out, "keyset", e)
        for walk in WALKS:
            if not w:
                continue
            gh = "; ".join("r%d %s / %s, %s s" % (i + 1, f2(r["first10_ms"]), f2(r["last10_ms"]), f2(r["total_s"]))
                           for i, r in enumerate(w["walks"][walk]))
            ks = "; ".join("r%d %s s" % (i + 1, f2(r["total_s"])) for i, r in enumerate(k["walks"][walk])) if k else "–"
            P("- %s %s: Gatehouse %s — keyset %s" % (TITLE.get(e, e), walk, gh, ks))
    P()
    P("## $skip alone (plain shape, OFFSET)\n")
    P("| engine | first 10 ms | last 10 ms ($skip %s..%s) | last / first | rows |" % (
        format(max(0, a.rows - 10 * a.page), ","), format(max(0, a.rows - a.page), ",")))
    P("|---|---|---|---|---|")
    for e in engines:
        w = load(a.out, "walk", e)
        if w and "skip" in w:
            s = w["skip"]
            P("| %s | %s | %s | %s | %s |" % (TITLE.get(e, e), f2(s["first10_ms"]), f2(s["last10_ms"]),
                                              f2(s["ratio"], "%.1f"), "ok" if s["ok"] else "**WRONG**"))
            if not s["ok"]:
                problems.append("%s $skip: %s" % (e, s["check"]))
    P()
    P("## Peak RSS: the whole table in one page\n")
    P("| engine | response MB | seconds | transfer | VmHWM idle MB | before MB | after MB | rise MB | rows |")
    P("|---|---|---|---|---|---|---|---|---|")
    for e in engines:
        r = load(a.out, "rss", e)
        if r:
            P("| %s | %.1f | %.2f | %s | %.1f | %.1f | %.1f | %.1f%s | %s |" % (
                TITLE.get(e, e), r["bytes"] / 1e6, r["seconds"], r["transfer"], r["hwm_idle_kb"] / 1024,
                r["hwm_before_kb"] / 1024, r["hwm_after_kb"] / 1024, r["rise_mb"],
                "" if r["rise_mb"] < 16 else " ⚠", "ok" if r["ok"] else "**WRONG**"))
            if not r["ok"]:
                problems.append("%s rss: %s" % (e, r["check"]))
    P()
    P("## Checks\n")
    for e in engines:
        w, k = load(a.out, "walk", e), load(a.out, "keyset", e)
        for walk in WALKS:
            if w:
                P("- %s Gatehouse %s: %s" % (TITLE.get(e, e), walk, w["walks"][walk][-1]["check"]))
            if k:
                P("- %s keyset %s: %s" % (TITLE.get(e, e), walk, k["walks"][walk][-1]["check"]))
        if w and "skip" in w:
            P("- %s $skip only: %s" % (TITLE.get(e, e), w["skip"]["check"]))
    if problems:
        P("\n**Problems:**\n")
        for p in problems:
            P("- " + p)
    P()
    P("## Keyset statements\n")
    for e in engines:
        k = load(a.out, "keyset", e)
        if k:
            P("%s, %s:\n" % (TITLE.get(e, e), k["driver"]))
            for walk in WALKS:
                for sql in k["statements"][walk]:
                    P("    %s" % sql)
            P()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("walk", "keyset", "rss", "report"):
        p = sub.add_parser(name)
        p.add_argument("--out", required=True)
        p.add_argument("--rows", type=int, required=True)
        p.add_argument("--page", type=int, default=1000)
        p.add_argument("--rounds", type=int, default=2)
        p.add_argument("--gen", default=DEFAULT_GEN)
        if name == "report":
            p.add_argument("--engines", required=True)
            p.add_argument("--command", default="bash bench/odata_walk.sh")
            p.add_argument("--gh-bin", default="")
            p.add_argument("--profile", default="release")
            p.add_argument("--timeout-ms", default="")
        else:
            p.add_argument("--engine", required=True)
        if name in ("walk", "rss"):
            p.add_argument("--base", required=True, help="http://127.0.0.1:PORT")
        if name == "walk":
            p.add_argument("--walks", default="plain,shaped", help="which walks, comma-separated")
            p.add_argument("--no-skip", action="store_true", help="no $skip-alone sample after the walks")
        if name == "rss":
            p.add_argument("--pid", type=int, required=True)
        if name == "keyset":
            p.add_argument("--db", required=True, help="the SQLite file, or the database name")
    a = ap.parse_args()
    {"walk": cmd_walk, "keyset": cmd_keyset, "rss": cmd_rss, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()

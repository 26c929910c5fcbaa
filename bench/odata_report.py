#!/usr/bin/env python3
"""results.md of bench/odata.sh, from the files of one run's output directory.

  python3 bench/odata_report.py OUT [--page-size 1000] [--conns 16] [--rss-conns 64]
      [--duration 8s] [--warmup 2s] [--rounds 3] [--rounds-large 2] [--base-rows 100000]
      [--engines "sqlite postgres mariadb"] [--sizes "100000 1000000"] > OUT/results.md

Reads OUT/runs.tsv (one line per measurement: size, engine, server = peer,
gatehouse, limit or limit-inline (PostgreSQL: a statement with binds, its values
written in), query, round, connections, server CPU, file), the wrk,
pgbench, mariadb-slap and odata_raw outputs it names, OUT/facts.tsv (RSS
figures), OUT/checks.txt and OUT/sql/<engine>.txt (odata_raw's statements).
Medians over rounds; ratios are medians of per-round ratios. Standard library
only.
"""
import argparse
import csv
import os
import re
import statistics

NAMES = ["q1-default-page", "q2-filter-orderby-top200", "q3-count-top50", "q4-skip90000-top100"]
UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
TITLE = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
LIMIT = {
    "sqlite": "odata_raw: the statement on Gatehouse's own SQLite read threads, 16 tasks on 2 threads, "
              "every column read, no HTTP or JSON",
    "postgres": "pgbench -M prepared -n -c16 -j2, the binds sent as parameters (pgbench variables), as Gatehouse"
                " sends them",
    "mariadb": "mariadb-slap --concurrency=16 (text protocol, every row fetched), values written in as literals",
}


def ms(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    return float(m.group(1)) * UNIT[m.group(2)] if m else float("nan")


def parse_wrk(path):
    r = {"rps": float("nan"), "p50": float("nan"), "p99": float("nan"), "bad": 0, "err": 0}
    for line in open(path):
        f = line.split()
        if line.startswith("Requests/sec"):
            r["rps"] = float(f[1])
        elif f[:1] == ["50%"]:
            r["p50"] = ms(f[1])
        elif f[:1] == ["99%"]:
            r["p99"] = ms(f[1])
        elif "Non-2xx" in line:
            r["bad"] = int(f[-1])
        elif line.lstrip().startswith("Socket errors"):
            r["err"] = sum(int(x) for x in re.findall(r"\d+", line))
    return r


def parse_limit(path):
    m = re.findall(r"^limit qps=([0-9.]+)$", open(path).read(), re.M)
    return {"rps": float(m[-1]) if m else float("nan")}


def fmt(x, spec="%.1f"):
    return "—" if x is None else spec % x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--page-size", default="1000")
    ap.add_argument("--conns", default="16")
    ap.add_argument("--rss-conns", default="64")
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--warmup", default="2s")
    ap.add_argument("--rounds", default="3")
    ap.add_argument("--rounds-large", default="2")
    ap.add_argument("--base-rows", default="100000")
    ap.add_argument("--engines", default="sqlite postgres mariadb")
    ap.add_argument("--sizes", default="100000 1000000")
    a = ap.parse_args()
    out, base, conns, rss_conns = a.out, a.base_rows, a.conns, a.rss_conns
    engines, sizes = a.engines.split(), a.sizes.split()
    large = [s for s in sizes if s != base]

    runs = {}
    for row in csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"):
        if row["server"].startswith("limit"):
            r = parse_limit(row["file"])
            r["cpu"] = None
        else:
            r = parse_wrk(row["file"])
            r["cpu"] = float(row["cpu"])
        r["round"] = row["round"]
        runs.setdefault((row["size"], row["engine"], row["server"], row["query"], row["conns"]), []).append(r)
    facts = {}
    if os.path.exists(os.path.join(out, "facts.tsv")):
        for line in open(os.path.join(out, "facts.tsv")):
            size, engine, key, value = line.rstrip("\n").split("\t")
            if value:
                facts[(size, engine, key)] = int(value)

    def med(key, field):
        xs = [r[field] for r in runs.get(key, []) if r.get(field) is not None]
        return statistics.median(xs) if xs else None

    def ratio(top, bottom):
        b = {r["round"]: r["rps"] for r in runs.get(bottom, [])}
        xs = [r["rps"] / b[r["round"]] for r in runs.get(top, []) if b.get(r["round"])]
        return statistics.median(xs) if xs else None

    def bad(key):
        return sum(r.get("bad", 0) + r.get("err", 0) for r in runs.get(key, []))

    def mb(kb):
        return None if kb is None else kb / 1024

    K = lambda size, engine, server, name, c=conns: (size, engine, server, name, c)
    rows = lambda n: format(int(n), ",")

    print("# OData benchmark: Gatehouse on SQLite, PostgreSQL and MariaDB, CAP on PostgreSQL, each engine's limit\n")
    print("`bash bench/odata.sh`. wrk -t2 -c%s -d%s --latency after a %s warm-up of the same URL;"
          " %s rounds at %s rows, each: per engine one Gatehouse process (started, measured, stopped;"
          " never two at once), per query the CAP peer on PostgreSQL, Gatehouse, then the engine's limit"
          " on the same statement at %s clients; %s rounds at each other size (Gatehouse and the limit only)."
          " Medians over rounds; ratios are medians of per-round ratios. Page size %s on both servers;"
          " Items public, the peer without authentication. req/s and statements/s; p50 / p99 in ms;"
          " CPU in %% of one core (the server process's own; database servers not included)."
          " wrk, the peer, the database servers and Gatehouse share the machine's cores.\n"
          % (conns, a.duration, a.warmup, a.rounds, rows(base), conns, a.rounds_large, a.page_size))
    print("Limits:\n")
    for e in engines:
        print("- %s: %s" % (TITLE[e], LIMIT[e]))
    print()

    if base in sizes:
        print("## %s rows\n" % rows(base))
        for e in engines:
            print("### %s\n" % TITLE[e])
            print("| query | Gatehouse req/s | p50 ms | p99 ms | CAP-PG req/s | CAP-PG p50 / p99 ms | Gatehouse / CAP-PG"
                  " | limit statements/s | Gatehouse / limit | CPU Gatehouse / CAP-PG |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for n in NAMES:
                g, p, l = K(base, e, "gatehouse", n), K(base, e, "peer", n), K(base, e, "limit", n)
                vs_peer, vs_limit = ratio(g, p), ratio(g, l)
                errs = bad(g) + bad(p)
                print("| %s%s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s / %s |" % (
                    n, " (**%d non-2xx/socket errors**)" % errs if errs else "",
                    fmt(med(g, "rps")), fmt(med(g, "p50"), "%.2f"), fmt(med(g, "p99"), "%.2f"),
                    fmt(med(p, "rps")), fmt(med(p, "p50"), "%.2f"), fmt(med(p, "p99"), "%.2f"),
                    fmt(vs_peer, "%.2f×"), fmt(med(l, "rps")), fmt(vs_limit and vs_limit * 100, "%.0f %%"),
                    fmt(med(g, "cpu"), "%.0f"), fmt(med(p, "cpu"), "%.0f")))
            print()
            per = []
            for n in NAMES:
                cells = []
                for rnd in sorted({r["round"] for r in runs.get(K(base, e, "gatehouse", n), [])}, key=int):
                    vals = []
                    for server in ("gatehouse", "peer", "limit"):
                        v = [r["rps"] for r in runs.get(K(base, e, server, n), []) if r["round"] == rnd]
                        vals.append(fmt(v[0] if v else None, "%.0f"))
                    cells.append("r%s %s" % (rnd, " / ".join(vals)))
                per.append("%s: %s" % (n.split("-")[0], "; ".join(cells)))
            print("Per round (Gatehouse / CAP-PG / limit): %s.\n" % "; ".join(per))
            for n in NAMES:
                g, i = K(base, e, "gatehouse", n), K(base, e, "limit-inline", n)
                if i in runs:
                    print("%s with its values written in as literals instead of bound (planned once rather than at"
                          " each execution): %s statements/s; Gatehouse / that: %s.\n"
                          % (n, fmt(med(i, "rps")), fmt(ratio(g, i) and ratio(g, i) * 100, "%.0f %%")))

    if large:
        print("## Page latency by table size (Gatehouse alone at larger sizes, %s connections)\n" % conns)
        cols = ["p50 ms %s" % rows(base)]
        for s in large:
            cols += ["p50 ms %s" % rows(s), "change", "req/s %s" % rows(s), "p99 ms %s" % rows(s),
                     "limit %s" % rows(s), "Gatehouse / limit %s" % rows(s)]
        print("| engine | query | " + " | ".join(cols) + " |")
        print("|---|---|" + "---|" * len(cols))
        for e in engines:
            for n in NAMES:
                p0 = med(K(base, e, "gatehouse", n), "p50")
                cells = [fmt(p0, "%.2f")]
                errs = 0
                for s in large:
                    g, l = K(s, e, "gatehouse", n), K(s, e, "limit", n)
                    p1 = med(g, "p50")
                    change = (p1 / p0 - 1) * 100 if p0 and p1 is not None else None
                    vs_limit = ratio(g, l)
                    errs += bad(g)
                    cells += [fmt(p1, "%.2f"), fmt(change, "%+.0f %%"), fmt(med(g, "rps")), fmt(med(g, "p99"), "%.2f"),
                              fmt(med(l, "rps")), fmt(vs_limit and vs_limit * 100, "%.0f %%")]
                print("| %s | %s%s | %s |" % (TITLE[e], n, " (**%d non-2xx/socket errors**)" % errs if errs else "",
                                             " | ".join(cells)))
        print("\nchange: p50 at that size against p50 at %s rows. q1, q2 and q4 read pages through the key or"
              " an index; q3 counts the whole table.\n" % rows(base))

    if base in sizes:
        print("## Memory, and Gatehouse alone at %s connections (%s rows)\n" % (rss_conns, rows(base)))
        print("| engine | RSS idle MB | peak RSS (VmHWM) after the %s-connection rounds MB | peak RSS (VmHWM) after every query at %s connections MB |"
              % (conns, rss_conns))
        print("|---|---|---|---|")
        for e in engines:
            hwm16 = [v for (s, en, k), v in facts.items() if s == base and en == e and k.startswith("hwm_c%s_r" % conns)]
            print("| %s | %s | %s | %s |" % (
                TITLE[e], fmt(mb(facts.get((base, e, "rss_idle_kb")))), fmt(mb(max(hwm16)) if hwm16 else None),
                fmt(mb(facts.get((base, e, "hwm_c%s_kb" % rss_conns))))))
        if (base, "peer", "hwm_kb") in facts:
            print("\nCAP peer (node) peak RSS over the run: %.1f MB." % mb(facts[(base, "peer", "hwm_kb")]))
        print("\nEach engine's peak is that of a fresh Gatehouse process after all four queries at %s connections." % rss_conns)
        print()
        print("| engine | query | req/s | p50 ms | p99 ms | CPU |")
        print("|---|---|---|---|---|---|")
        for e in engines:
            for n in NAMES:
                g = K(base, e, "gatehouse", n, rss_conns)
                errs = bad(g)
                print("| %s | %s%s | %s | %s | %s | %s |" % (
                    TITLE[e], n, " (**%d non-2xx/socket errors**)" % errs if errs else "", fmt(med(g, "rps")),
                    fmt(med(g, "p50"), "%.2f"), fmt(med(g, "p99"), "%.2f"), fmt(med(g, "cpu"), "%.0f")))
        print()

    checks = os.path.join(out, "checks.txt")
    if os.path.exists(checks):
        print("## Checks\n")
        print("In round 1, before its measurements: each Gatehouse against the peer (at %s rows; at other sizes"
              " its rows), and each limit statement run once through the engine's client (SQLite: odata_raw's"
              " rows= and count= in its limit outputs).\n" % rows(base))
        print(open(checks).read())

    print("## Statements\n")
    print("What Gatehouse sends per request (odata_raw, from the library's parse_query, PagePlan and fetch_query"
          " with the guest's scopes), with its binds; the limits run these (`sql/<engine>-<query>.sql`): on"
          " PostgreSQL with the binds as parameters, on MariaDB written in as literals. The plans phase (plans.md) checks them against the statements logged"
          " by PostgreSQL and MariaDB.\n")
    for e in engines:
        path = os.path.join(out, "sql", "%s.txt" % e)
        if not os.path.exists(path):
            continue
        print("### %s\n" % TITLE[e])
        for line in open(path):
            m = re.match(r"# (q\d[\w-]*): (.*)  binds (\[.*\])$", line.rstrip("\n"))
            if m:
                print("%s, binds `%s`:\n\n```sql\n%s\n```\n" % (m.group(1), m.group(3), m.group(2)))


if __name__ == "__main__":
    main()

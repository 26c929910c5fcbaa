#!/usr/bin/env python3
"""results.md of bench/batch.sh, from the files of one run's output directory.

  python3 bench/batch_report.py OUT [--engines "sqlite postgres"] [--ways "multipart alone json"]
      [--rounds 3] [--rows 100000] [--duration 8s] [--warmup 2s] [--conns 16] [--threads 2]
      [--page-size 1000] > OUT/results.md

Reads OUT/runs.tsv (engine, way, round, Gatehouse CPU, wrk output file), the
wrk outputs it names and their warm-ups (.warmup: batch.lua's count of parts
not answered 200), OUT/pages.txt and OUT/checks.txt. Medians over rounds;
"pages/s vs alone" is the median of per-round ratios. Standard library only.
"""
import argparse
import csv
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from odata_report import fmt, parse_wrk  # noqa: E402

TITLE = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
PAGES = 10
WAY = {
    "multipart": ("(a) multipart `$batch` of the 10 pages", PAGES),
    "alone": ("(b) the 10 GETs alone", 1),
    "json": ("(c) JSON `$batch` of the 10 pages", PAGES),
}


def warmup_parts(path):
    """(parts, parts not 200) counted by batch.lua in a warm-up run, or None."""
    if not os.path.exists(path):
        return None
    m = re.findall(r"^batch parts: (\d+), not 200: (\d+)$", open(path).read(), re.M)
    return (int(m[-1][0]), int(m[-1][1])) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--engines", default="sqlite postgres")
    ap.add_argument("--ways", default="multipart alone json")
    ap.add_argument("--rounds", default="3")
    ap.add_argument("--rows", default="100000")
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--warmup", default="2s")
    ap.add_argument("--conns", default="16")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--page-size", default="1000")
    a = ap.parse_args()
    out = a.out
    engines, ways = a.engines.split(), a.ways.split()

    runs = {}
    for row in csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"):
        r = parse_wrk(row["file"])
        r["cpu"] = float(row["cpu"])
        r["round"] = row["round"]
        r["pages"] = r["rps"] * WAY[row["way"]][1]
        r["warmup"] = warmup_parts(row["file"] + ".warmup")
        runs.setdefault((row["engine"], row["way"]), []).append(r)
    pages = [line.rstrip("\n") for line in open(os.path.join(out, "pages.txt")) if line.strip()]

    def med(key, field):
        xs = [r[field] for r in runs.get(key, []) if r.get(field) is not None]
        return statistics.median(xs) if xs else None

    def vs_alone(engine, way):
        b = {r["round"]: r["pages"] for r in runs.get((engine, "alone"), [])}
        xs = [r["pages"] / b[r["round"]] for r in runs.get((engine, way), []) if b.get(r["round"])]
        return statistics.median(xs) if xs else None

    print("# OData `$batch`: a batch of %d page requests against the same %d requests alone\n" % (PAGES, PAGES))
    print("`bash bench/batch.sh`. Items, %s rows (the data and Gatehouse configuration of bench/odata.sh;"
          " Items public, page size %s), one Gatehouse process per engine and round (started, measured,"
          " stopped; never two at once). wrk -t%s -c%s -d%s --latency after a %s warm-up of the same requests;"
          " %s rounds, in each per engine the ways in turn, their order rotated from round to round."
          " Medians over rounds; \"vs alone\" is the median of per-round ratios of pages/s."
          " CPU: Gatehouse's, in %% of one core (database server not included); wrk, the database server"
          " and Gatehouse share the machine's cores.\n"
          % (format(int(a.rows), ","), a.page_size, a.threads, a.conns, a.duration, a.warmup, a.rounds))
    print("The %d pages (an OpenUI5 list's first page, with its count, and the nine pages after it, in the"
          " key's order):\n" % len(pages))
    for i, p in enumerate(pages):
        print("%d. `%s`" % (i + 1, p))
    print()
    print("- (a) one request = `POST /odata/$batch`, `multipart/mixed`, one `application/http` part"
          " `GET <page> HTTP/1.1` per page: %d pages;" % PAGES)
    print("- (b) one request = one of the %d GETs `/odata/<page>`, in turn (each wrk thread hands them out"
          " one after the other to its connections; bench/batch.lua): 1 page;" % PAGES)
    print("- (c) one request = `POST /odata/$batch`, `application/json`,"
          " `{\"requests\":[{\"id\",\"method\":\"GET\",\"url\":\"<page>\"}, ...]}`: %d pages.\n" % PAGES)
    print("pages/s = req/s × pages per request. p50 / p99 in ms, per request: a whole batch for (a) and (c),"
          " one page for (b).\n")

    for e in engines:
        print("## %s\n" % TITLE.get(e, e))
        print("| request | req/s | pages/s | p50 ms | p99 ms | pages/s vs alone | CPU % |")
        print("|---|---|---|---|---|---|---|")
        for w in ways:
            key = (e, w)
            errs = sum(r["bad"] + r["err"] for r in runs.get(key, []))
            inner = sum(r["warmup"][1] for r in runs.get(key, []) if r["warmup"])
            note = ""
            if errs:
                note += " (**%d non-2xx/socket errors**)" % errs
            if inner:
                note += " (**%d parts not 200 in the warm-ups**)" % inner
            ratio = vs_alone(e, w) if w != "alone" else None
            print("| %s%s | %s | %s | %s | %s | %s | %s |" % (
                WAY[w][0], note, fmt(med(key, "rps")), fmt(med(key, "pages")), fmt(med(key, "p50"), "%.2f"),
                fmt(med(key, "p99"), "%.2f"), fmt(ratio, "%.2f×") if w != "alone" else "1",
                fmt(med(key, "cpu"), "%.0f")))
        print()
        per = []
        for w in ways:
            cells = ["r%s %s" % (r["round"], fmt(r["pages"], "%.0f"))
                     for r in sorted(runs.get((e, w), []), key=lambda r: int(r["round"]))]
            per.append("%s: %s" % (w, ", ".join(cells)))
        print("Pages/s per round: %s.\n" % "; ".join(per))
        parts = [(w, r["warmup"]) for w in ways for r in runs.get((e, w), []) if r["warmup"]]
        if parts:
            by_way = {}
            for w, (n, bad) in parts:
                t = by_way.setdefault(w, [0, 0])
                t[0] += n
                t[1] += bad
            print("Batch answers read in the warm-ups (batch.lua): %s.\n" % "; ".join(
                "%s %s parts, %s not 200" % (w, format(n, ","), bad) for w, (n, bad) in by_way.items()))

    checks = os.path.join(out, "checks.txt")
    if os.path.exists(checks):
        print("## Checks\n")
        print("Before round 1's measurements, per engine: each page alone, and each batch against them.\n")
        print(open(checks).read())


if __name__ == "__main__":
    main()

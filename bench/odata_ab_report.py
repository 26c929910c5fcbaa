#!/usr/bin/env python3
"""The report side of bench/odata_ab.sh: whether two Gatehouse builds, A and
B, answer the same bodies, and results.md from the run's wrk outputs and
walks.

  odata_ab_report.py compare A_FILE B_FILE A_STATUS B_STATUS
      one line on stdout: "same\\t<detail>", "note\\t<detail>" or
      "WARNING\\t<detail>" (the verdict of A's and B's answer to one URL)
  odata_ab_report.py report --run DIR --a-bin A --b-bin B [--a-env "..." --b-env "..."]
      --engines "..." --parts "..." --rounds N --duration 5s --warmup 1s [--command "..."]
      > results.md

compare: byte-identical bodies are "same"; the same JSON (objects compared
whatever their key order or spacing, numbers by their text) is a "note";
anything else (another status, a body that is not the same JSON) a WARNING,
naming the first difference and whether it lies only in next links'
$skiptoken (both processes are given the same configuration, so the same
secret key: their tokens should be equal too).

report reads DIR/runs.tsv (engine, part, query, bin, round, slot, file: a
wrk --latency output, or for the walk the directory odata_walk.py wrote
walk-<engine>.json into) and DIR/checks.tsv (engine, part, query, verdict,
detail) and, if present, DIR/metrics.tsv (engine, part, bin, round, status of
GET /metrics right after the start). Per engine and URL: the median over
rounds of each build's req/s
and p50, the median of the per-round ratios B/A (each round's A and B are
neighbouring measurements) and those ratios themselves; for the walk the
median over rounds of each build's mean ms of the first ten pages, of the
last ten and the total, and the medians of the per-round ratios.
The wrk parsing and the report's opening (sides: the title, each side's
binary and env, the /metrics answers) serve bench/auth_ab_report.py too.
Python standard library only.
"""
import argparse
import csv
import datetime
import hashlib
import json
import os
import re
import statistics
import sys
from urllib.parse import unquote

TITLE = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
PART_TITLE = {
    "q": "reference queries q1–q4 (100,000 Items)",
    "apply": "$apply (100,000 Items)",
    "tree": "tree reads (Nodes)",
    "walk": "walk by next links (1,000,000 Items)",
}


# --- compare ---------------------------------------------------------------------------
def strip_tokens(v):
    """v with every $skiptoken in a next link's query cut out."""
    if isinstance(v, dict):
        return {k: (re.sub(r"([?&])\$skiptoken=[^&]*&?", r"\1", x) if k.endswith("nextLink") and isinstance(x, str)
                    else strip_tokens(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [strip_tokens(x) for x in v]
    return v


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return "%s: %s vs %s" % (path, short(a), short(b))
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b or k not in a:
                return "%s.%s: %s vs %s" % (path, k, short(a.get(k, "(absent)")), short(b.get(k, "(absent)")))
            d = first_difference(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        if len(a) != len(b):
            return "%s: %d vs %d items" % (path, len(a), len(b))
        return None
    return None if a == b else "%s: %s vs %s" % (path, short(a), short(b))


def shown(v):
    """v as JSON text, its numbers (parsed as ("int"|"float", text)) as they were written."""
    if isinstance(v, tuple):
        return v[1]
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (json.dumps(k), shown(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(shown(x) for x in v) + "]"
    return json.dumps(v)


def short(v):
    s = shown(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


def load_json(raw):
    try:
        # Numbers by their text: 1.50 and 1.5 are different answers.
        return json.loads(raw, parse_float=lambda t: ("float", t), parse_int=lambda t: ("int", t))
    except ValueError:
        return None


def cmd_compare(a):
    ra, rb = open(a.a_file, "rb").read(), open(a.b_file, "rb").read()
    if a.a_status != a.b_status:
        print("WARNING\tA answered HTTP %s (%d B), B HTTP %s (%d B)" % (a.a_status, len(ra), a.b_status, len(rb)))
        return
    bad_status = "" if a.a_status == "200" else "; both answered HTTP %s, not 200" % a.a_status
    verdict = "WARNING" if bad_status else None
    if ra == rb:
        print("%s\tidentical bodies (%d B)%s" % (verdict or "same", len(ra), bad_status))
        return
    ja, jb = load_json(ra), load_json(rb)
    if ja is None or jb is None:
        print("WARNING\tbodies differ (%d B vs %d B) and %s not JSON%s" % (
            len(ra), len(rb), "A's is" if ja is None else "B's is", bad_status))
        return
    if ja == jb:
        print("%s\tthe same JSON, other bytes (key order or spacing: %d B vs %d B)%s" % (
            verdict or "note", len(ra), len(rb), bad_status))
        return
    only_tokens = strip_tokens(ja) == strip_tokens(jb)
    print("WARNING\tdifferent JSON (%d B vs %d B)%s; first difference %s%s" % (
        len(ra), len(rb), " only in the next links' $skiptoken" if only_tokens else "",
        first_difference(ja, jb), bad_status))


# --- wrk output ----------------------------------------------------------------------
UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def wrk_figures(path):
    """(req/s, p50 ms, errors: non-2xx responses + socket errors)."""
    text = open(path).read()
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    rps = float(m.group(1)) if m else float("nan")
    m = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m|h)\s*$", text, re.M)
    p50 = float(m.group(1)) * UNITS_MS[m.group(2)] if m else float("nan")
    errors = 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        errors += sum(int(x) for x in m.groups())
    return rps, p50, errors


def walk_figures(path, engine):
    """(first 10 ms, last 10 ms, total s, pages, check ok, check message) of a plain walk."""
    p = os.path.join(path, "walk-%s.json" % engine)
    if not os.path.exists(p):
        return None
    w = json.load(open(p))["walks"]["plain"][0]
    return w["first10_ms"], w["last10_ms"], w["total_s"], w["pages"], w["ok"], w["check"]


# --- report --------------------------------------------------------------------------
def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def fmt(v, f="%.1f"):
    return "–" if v is None or v != v else f % v


def rate(v):
    return "–" if v != v else ("{:,.0f}".format(v) if v >= 100 else "%.1f" % v)


def binary(path):
    try:
        st = os.stat(path)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest(), "`%s` (sha256 %s…, %s B, built %s)" % (
            path, h.hexdigest()[:12], format(st.st_size, ","),
            datetime.datetime.fromtimestamp(st.st_mtime).strftime("%Y-%m-%d %H:%M"))
    except OSError as e:
        return None, "`%s` (%s)" % (path, e.strerror)


def urls(run):
    """(part, query, URL path and query) of every measured URL, from DIR/urls.tsv, once each."""
    seen, out = set(), []
    p = os.path.join(run, "urls.tsv")
    if os.path.exists(p):
        for r in csv.DictReader(open(p), delimiter="\t"):
            if (r["part"], r["query"]) not in seen:
                seen.add((r["part"], r["query"]))
                out.append((r["part"], r["query"], unquote(re.sub(r"^https?://[^/]+", "", r["url"]))))
    return out


def metrics_statuses(run):
    """{"A"|"B": {status: count}} from DIR/metrics.tsv (absent: {})."""
    out = {}
    p = os.path.join(run, "metrics.tsv")
    if os.path.exists(p):
        for r in csv.DictReader(open(p), delimiter="\t"):
            d = out.setdefault(r["bin"].upper(), {})
            d[r["status"]] = d.get(r["status"], 0) + 1
    return out


def sides(a, title, no_env):
    """results.md's opening, the same in every A/B report: "# TITLE", the command (a.command, if any) and
    the date, each side's binary and env (NO_ENV when it has none), whether A and B are the same binary,
    and the GET /metrics answers of a.run's metrics.tsv."""
    P = print
    ha, da = binary(a.a_bin)
    hb, db = binary(a.b_bin)
    P("# %s\n" % title)
    if a.command:
        P("`%s`, %s\n" % (a.command, datetime.datetime.now().strftime("%Y-%m-%d %H:%M")))
    for side, desc, env in (("A", da, a.a_env), ("B", db, a.b_env)):
        P("- **%s** = %s, env: %s" % (side, desc, "`%s`" % env if env.strip() else no_env))
    if ha and ha == hb:
        if a.a_env.split() == a.b_env.split():
            P("- A and B are the same binary with the same env: the ratios below show this machine's noise, "
              "nothing else.")
        else:
            P("- A and B are the same binary; only their env differs, so the ratios below show what that setting "
              "costs (within this machine's noise).")
    statuses = metrics_statuses(a.run)
    if statuses:
        P("- `GET /metrics` right after each start answered: %s." % "; ".join(
            "%s %s" % (side, ", ".join("%s ×%d" % (st, n) for st, n in sorted(statuses[side].items())))
            for side in ("A", "B") if side in statuses))


def cmd_report(a):
    run = a.run
    runs = list(csv.DictReader(open(os.path.join(run, "runs.tsv")), delimiter="\t"))
    checks = []
    if os.path.exists(os.path.join(run, "checks.tsv")):
        checks = list(csv.DictReader(open(os.path.join(run, "checks.tsv")), delimiter="\t"))
    engines, parts = a.engines.split(), a.parts.split()
    P = print
    sides(a, "Gatehouse A/B: OData speed of two builds on the same data", "none (the configuration file only)")
    P("- Per engine, %d round%s; in each, per part, one Gatehouse process of A, then one of B (B first in even "
      "rounds), never two at once, each answering every URL of the part: wrk for %s after a %s warm-up run of the "
      "same URL (q, apply: `-t2 -c16 --latency`; tree: `%s`). Both processes read the same rows with the same "
      "configuration file (same secret key, pagination.default = max = 1000)."
      % (a.rounds, "" if a.rounds == 1 else "s", a.duration, a.warmup, a.tree_wrk))
    P("- Figures are medians over rounds; **B/A** is the median of the per-round ratios B/A of req/s (listed in "
      "*rounds*), each comparing measurements made seconds apart; p50: wrk's median latency. Above 1: B is faster "
      "(req/s) or slower (p50).")
    if "walk" in parts:
        P("- walk: `bench/odata_walk.py walk --walks plain --no-skip --rounds 1`, once per process: GET /odata/Items "
          "on 1,000,000 rows, then every @odata.nextLink (pages of 1,000), one persistent connection; first/last 10: "
          "mean ms of the first and the last ten pages; total: the sum of every page's time; every row checked "
          "against gen_items.py. B/A: median of per-round ratios (below 1: B is faster).")
    listed = urls(run)
    if listed:
        P()
        P("URLs (the same on every engine):\n")
        for part, query, u in listed:
            P("- %s %s: `%s`%s" % (part, query, u, " on 1,000,000 rows, then its next links (its first page is the "
                                   "answer compared)" if part == "walk" else ""))
    P()

    P("## Same answers\n")
    P("Once per engine (round 1), each URL fetched from A and from B right after its start, compared "
      "(byte for byte, else as JSON, numbers by their text).\n")
    warn = [c for c in checks if c["verdict"] == "WARNING"]
    notes = [c for c in checks if c["verdict"] == "note"]
    for c in warn:
        P("- **WARNING** %s %s %s: A and B answer differently: %s" % (
            TITLE.get(c["engine"], c["engine"]), c["part"], c["query"], c["detail"]))
    for c in notes:
        P("- note: %s %s %s: %s" % (TITLE.get(c["engine"], c["engine"]), c["part"], c["query"], c["detail"]))
    same = [c for c in checks if c["verdict"] == "same"]
    if same:
        P("- %s URL%s: identical bodies from A and B (%s)." % (
            len(same), "" if len(same) == 1 else "s",
            ", ".join("%s %s" % (c["engine"], c["query"]) for c in same)))
    if not checks:
        P("- **WARNING** no answers were compared.")
    P()

    all_ratios = {}
    for engine in engines:
        mine = [r for r in runs if r["engine"] == engine]
        if not mine:
            continue
        P("## %s\n" % TITLE.get(engine, engine))
        http = [r for r in mine if r["part"] != "walk"]
        if http:
            P("| part | query | A req/s | B req/s | **B/A** | rounds B/A | A p50 ms | B p50 ms | B/A p50 | errors A/B |")
            P("|---|---|---:|---:|---:|---|---:|---:|---:|---|")
        bad = []
        for part in parts:
            if part == "walk":
                continue
            queries = []
            for r in http:
                if r["part"] == part and r["query"] not in queries:
                    queries.append(r["query"])
            for query in queries:
                rs = [r for r in http if r["part"] == part and r["query"] == query]
                fig = {}
                for r in rs:
                    fig[(r["bin"], int(r["round"]))] = wrk_figures(r["file"])
                rounds = sorted({k[1] for k in fig})
                both = [n for n in rounds if ("a", n) in fig and ("b", n) in fig]
                ratios = [fig[("b", n)][0] / fig[("a", n)][0] for n in both if fig[("a", n)][0] > 0]
                p50_ratios = [fig[("b", n)][1] / fig[("a", n)][1] for n in both if fig[("a", n)][1] > 0]
                ra = med(v[0] for k, v in fig.items() if k[0] == "a")
                rb = med(v[0] for k, v in fig.items() if k[0] == "b")
                pa = med(v[1] for k, v in fig.items() if k[0] == "a")
                pb = med(v[1] for k, v in fig.items() if k[0] == "b")
                ea = sum(v[2] for k, v in fig.items() if k[0] == "a")
                eb = sum(v[2] for k, v in fig.items() if k[0] == "b")
                ratio = med(ratios)
                all_ratios.setdefault(engine, []).append(ratio)
                if ea or eb:
                    bad.append("%s %s: %d errors from A, %d from B (non-2xx responses or socket errors)" % (
                        part, query, ea, eb))
                P("| %s | %s | %s | %s | **%s** | %s | %s | %s | %s | %d/%d |" % (
                    part, query, rate(ra), rate(rb), fmt(ratio, "%.3f"),
                    ", ".join("%.2f" % x for x in ratios) or "–", fmt(pa, "%.2f"), fmt(pb, "%.2f"),
                    fmt(med(p50_ratios), "%.2f"), ea, eb))
        if http:
            P()
        for b in bad:
            P("- **WARNING** %s" % b)
        if bad:
            P()
        walks = [r for r in mine if r["part"] == "walk"]
        if walks:
            fig = {}
            for r in walks:
                w = walk_figures(r["file"], engine)
                if w:
                    fig[(r["bin"], int(r["round"]))] = w
            P("Walk of 1,000,000 rows by next links:\n")
            P("| build | first 10 ms | last 10 ms | total s | pages | rounds (total s) | rows |")
            P("|---|---:|---:|---:|---:|---|---|")
            for b in ("a", "b"):
                ws = [(n, v) for (bb, n), v in sorted(fig.items()) if bb == b]
                if not ws:
                    P("| %s | – | – | – | – | – | **no walk** |" % b.upper())
                    continue
                checks_ok = all(v[4] for _, v in ws)
                P("| %s | %s | %s | %s | %s | %s | %s |" % (
                    b.upper(), fmt(med(v[0] for _, v in ws), "%.2f"), fmt(med(v[1] for _, v in ws), "%.2f"),
                    fmt(med(v[2] for _, v in ws), "%.2f"), "/".join(sorted({str(v[3]) for _, v in ws})),
                    ", ".join("%.2f" % v[2] for _, v in ws),
                    "checked" if checks_ok else "**WRONG**: " + next(v[5] for _, v in ws if not v[4])))
            both = sorted(n for (b, n) in fig if b == "a" and ("b", n) in fig)
            if both:
                r = [tuple(fig[("b", n)][k] / fig[("a", n)][k] for k in range(3)) for n in both]
                P("| **B/A** | **%s** | **%s** | **%s** | | %s | |" % (
                    fmt(med(x[0] for x in r), "%.3f"), fmt(med(x[1] for x in r), "%.3f"),
                    fmt(med(x[2] for x in r), "%.3f"), ", ".join("%.2f" % x[2] for x in r)))
                # A time ratio, inverted so that it reads like the req/s ratios (above 1: B faster).
                all_ratios.setdefault(engine, []).append(1 / med(x[2] for x in r))
            P()
            for (b, n), v in sorted(fig.items()):
                if not v[4]:
                    P("- **WARNING** walk, %s round %d: %s" % (b.upper(), n, v[5]))
            if len(fig) < 2 * a.rounds:
                P("- **WARNING** %d of %d walks left no figures (see the run's output)\n" % (
                    2 * a.rounds - len(fig), 2 * a.rounds))

    P("## Summary\n")
    P("Per engine, the URLs' B/A (req/s; the walk's as A total / B total): median and range.\n")
    everything = []
    for engine in engines:
        xs = [x for x in all_ratios.get(engine, []) if x == x]
        everything += xs
        if xs:
            P("- %s: median %.3f, %.3f – %.3f over %d measurement%s" % (
                TITLE.get(engine, engine), med(xs), min(xs), max(xs), len(xs), "" if len(xs) == 1 else "s"))
    if everything:
        P("- all: median %.3f, %.3f – %.3f" % (med(everything), min(everything), max(everything)))
    P("\nFiles: runs.tsv (every measurement), wrk/ (wrk outputs), bodies/ (the compared answers), checks.tsv, "
      "metrics.tsv (GET /metrics after each start), walk/ (odata_walk.py's pages.tsv and walk-<engine>.json per "
      "process), Gatehouse's configs and logs.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("a_file")
    c.add_argument("b_file")
    c.add_argument("a_status")
    c.add_argument("b_status")
    r = sub.add_parser("report")
    r.add_argument("--run", required=True)
    r.add_argument("--a-bin", required=True)
    r.add_argument("--b-bin", required=True)
    r.add_argument("--a-env", default="")
    r.add_argument("--b-env", default="")
    r.add_argument("--engines", required=True)
    r.add_argument("--parts", required=True)
    r.add_argument("--rounds", type=int, required=True)
    r.add_argument("--duration", required=True)
    r.add_argument("--warmup", required=True)
    r.add_argument("--tree-wrk", default="-t1 -c2 --latency")
    r.add_argument("--command", default="")
    a = ap.parse_args()
    {"compare": cmd_compare, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

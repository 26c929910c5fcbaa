#!/usr/bin/env python3
"""The report side of bench/auth_ab.sh: results.md from a run's wrk outputs.

  auth_ab_report.py --run DIR --a-bin A --b-bin B [--a-env "..." --b-env "..."]
      --rounds N --duration 8 --warmup 1 [--command "..."] > results.md

Reads DIR/runs.tsv (conns, bin, round, slot, file: a wrk output of sign-ins)
and DIR/metrics.tsv (bin, round, status of GET /metrics right after the
start). Per connection count: the median over rounds of each side's
sign-ins/s and mean latency, the median of the per-round ratios B/A (each
round's A and B are neighbouring measurements) and those ratios themselves,
errors (non-2xx responses and socket errors). The wrk parsing and the
report's opening (sides: the title, each side's binary and env, the /metrics
answers) are bench/odata_ab_report.py's.
Python standard library only.
"""
import argparse
import csv
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from odata_ab_report import fmt, med, sides, UNITS_MS, wrk_figures  # noqa: E402


def mean_latency_ms(path):
    """wrk's mean latency (its Latency line's Avg), in ms."""
    m = re.search(r"^\s+Latency\s+([\d.]+)(us|ms|s|m|h)\b", open(path).read(), re.M)
    return float(m.group(1)) * UNITS_MS[m.group(2)] if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--a-bin", required=True)
    ap.add_argument("--b-bin", required=True)
    ap.add_argument("--a-env", default="")
    ap.add_argument("--b-env", default="")
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--duration", required=True)
    ap.add_argument("--warmup", required=True)
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    runs = list(csv.DictReader(open(os.path.join(a.run, "runs.tsv")), delimiter="\t"))
    P = print

    sides(a, "Gatehouse A/B: sign-in throughput", "none")
    P("- %d round%s; in each, one Gatehouse process of A, then one of B (B first in even rounds), never two at "
      "once, each on a fresh SQLite file holding the one user: %s, then wrk `-t2 -cN -d%ss -s bench/login.lua` "
      "against `POST /auth/login` (bench/auth.sh's sign-in run: every request a full sign-in) at each connection "
      "count N, each run after one sign-in that succeeds (the previous run's queued sign-ins done)." % (a.rounds, "" if a.rounds == 1 else "s",
                    "a %ss sign-in run at 16 connections, discarded" % a.warmup if a.warmup not in ("0", "")
                    else "no warm-up", a.duration))
    P("- Figures are medians over rounds; **B/A** is the median of the per-round ratios B/A of sign-ins/s "
      "(listed in *rounds*), each comparing measurements made seconds apart. Above 1: B is faster.")
    P()

    P("| connections | A sign-ins/s | B sign-ins/s | **B/A** | rounds B/A | A mean ms | B mean ms | errors A/B |")
    P("|---:|---:|---:|---:|---|---:|---:|---|")
    conns = []
    for r in runs:
        if r["conns"] not in conns:
            conns.append(r["conns"])
    summary, bad = [], []
    for c in conns:
        fig = {}
        for r in runs:
            if r["conns"] == c:
                rps, _, errors = wrk_figures(r["file"])
                fig[(r["bin"], int(r["round"]))] = (rps, mean_latency_ms(r["file"]), errors)
        rounds = sorted({k[1] for k in fig})
        ratios = [fig[("b", n)][0] / fig[("a", n)][0] for n in rounds
                  if ("a", n) in fig and ("b", n) in fig and fig[("a", n)][0] > 0]
        side = {b: [v for k, v in fig.items() if k[0] == b] for b in ("a", "b")}
        ea, eb = sum(v[2] for v in side["a"]), sum(v[2] for v in side["b"])
        ratio = med(ratios)
        if ratio == ratio:
            summary.append((c, ratio))
        if ea or eb:
            bad.append("%s connections: %d errors from A, %d from B (non-2xx responses or socket errors)" % (c, ea, eb))
        P("| %s | %s | %s | **%s** | %s | %s | %s | %d/%d |" % (
            c, fmt(med(v[0] for v in side["a"]), "%.1f"), fmt(med(v[0] for v in side["b"]), "%.1f"), fmt(ratio, "%.3f"),
            ", ".join("%.3f" % x for x in ratios) or "–", fmt(med(v[1] for v in side["a"]), "%.2f"),
            fmt(med(v[1] for v in side["b"]), "%.2f"), ea, eb))
    P()
    for b in bad:
        P("- **WARNING** %s" % b)
    if summary:
        c, worst = max(summary, key=lambda x: abs(x[1] - 1))
        P("- Largest difference: B/A %.3f (%+.1f %%) at %s connections." % (worst, 100 * (worst - 1), c))
    P("\nFiles: runs.tsv (every measurement), metrics.tsv (GET /metrics after each start), wrk/ (wrk outputs, "
      "warmup-*: the discarded runs), gatehouse-a.log and gatehouse-b.log.")


if __name__ == "__main__":
    sys.exit(main())

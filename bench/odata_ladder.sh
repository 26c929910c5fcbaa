#!/usr/bin/env bash
# Where a server engine's page goes, step by step, against that engine's own
# limit: for each of bench/odata.sh's four queries at 100,000 rows, in
# ROUNDS interleaved rounds, one after the other on an idle machine:
#   limit    the statement from the engine's benchmark client, as odata.sh
#            runs it (pgbench -M prepared -c16 -j2, binds sent as
#            parameters / mariadb-slap --concurrency=16, values written in;
#            on PostgreSQL a statement with binds is also run with its
#            values written in, as a reference);
#   driver   the same statement through Gatehouse's own bulk reads (its
#            pool, its native driver), 16 tasks on 2 threads, each row taken
#            as the driver delivers it and none of its columns read
#            (bench/odata_raw.rs without --json);
#   json     the same, each page also written as the response body's JSON
#            by Gatehouse's row encoder (odata_raw --json), still no HTTP;
#   http     GET /odata/Items?… against a Gatehouse process (wrk -t2 -c16),
#            the request as bench/odata.sh measures it.
# Per step: statements (or requests) per second, its share of the limit, and
# the CPU the client side spent per statement (pgbench, mariadb-slap or
# odata_raw from their own user + system time; Gatehouse from /proc; wrk's
# own time is not counted), so that what the encoder and HTTP add to a page
# is measured rather than argued. The engine's CPU is the rest of the two
# cores. The last column, HTTP / driver, sets Gatehouse against the same
# statements in the binary form it asks for, read by its driver alone.
#
#   SKIP_BUILD=1 ENGINES="postgres mariadb" ROUNDS=3 DURATION=6s bash bench/odata_ladder.sh
#
# SPLIT=1 gives the engine a core of its own, as a database server on its
# own host has: every PostgreSQL and MariaDB process is pinned to CPU 0 and
# every client (the engine's own, odata_raw, Gatehouse and wrk) to CPU 1;
# the engines get every CPU back when the script ends. The limit is then the
# engine's alone, not what is left of two cores after the client side.
#
# Needs the release build of bench/odata.sh (gatehouse, odata_raw) and its
# 100,000-row data sets (loaded here if missing), wrk, pgbench and
# mariadb-slap. Output: bench/out/ladder-<timestamp>/ (every tool's output,
# runs.tsv and results.md, which is also printed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-postgres mariadb}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-6s}"
WARMUP="${WARMUP:-2s}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
RAW_BIN="${RAW_BIN:-$TARGET_DIR/release/examples/odata_raw}"
GH_PORT="${GH_PORT:-8711}"
PAGE_SIZE=1000
CONNS=16
THREADS=2
BASE_ROWS=100000
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
PG=(-h 127.0.0.1 -p 5432 -U postgres)
export PGSSLMODE=disable
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/ladder-$(date +%Y%m%d-%H%M%S)"
die() { echo "odata_ladder.sh: $*" >&2; exit 1; }
# NAMES, QUERIES, url, has, secs, db_name, db_url, load_data, write_config, start_gh,
# stop_gh, slap, sized
source "$ROOT/bench/odata_lib.sh"
DURATION_S="$(secs "$DURATION")"
WARMUP_S="$(secs "$WARMUP")"
for e in $ENGINES; do
  [[ "$e" =~ ^(postgres|mariadb)$ ]] || die "server engines only (postgres, mariadb), not '$e'"
done
for tool in wrk pgbench mariadb-slap; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse --example odata_raw
fi
mkdir -p "$OUT/sql"
load_data "$ENGINES" "$BASE_ROWS"
SPLIT="${SPLIT:-0}"
ALL_CPUS="0-$(($(nproc --all) - 1))" # every CPU, whatever this shell is pinned to
pin_engines() { # pin_engines CPUS: every engine process and thread onto CPUS
  local p
  for p in $(pgrep -x postgres) $(pgrep -x mariadbd); do taskset -a -p -c "$1" "$p" >/dev/null || true; done
}
finish() {
  stop_gh
  if [[ "$SPLIT" == 1 ]]; then pin_engines "$ALL_CPUS"; fi
}
trap finish EXIT
if [[ "$SPLIT" == 1 ]]; then
  (($(nproc --all) >= 2)) || die "SPLIT=1 needs two CPUs"
  pin_engines 0
  taskset -p -c 1 $$ >/dev/null # inherited by every client started from here
fi

RUNS="$OUT/runs.tsv"
printf 'engine\tquery\tround\tstep\tqps\tclient_us\n' >"$RUNS"
record() { # record ENGINE QUERY ROUND STEP QPS CPU_SECONDS
  local us
  us=$(awk -v q="$5" -v c="$6" -v d="$DURATION_S" 'BEGIN {printf "%.0f", (q > 0 ? 1e6 * c / (q * d) : 0)}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$us" >>"$RUNS"
  printf '  %-8s %-26s r%s %-7s %8.1f /s  client %5s us per statement\n' "$1" "$2" "$3" "$4" "$5" "$us"
}
timed() { # timed FILE COMMAND...: runs COMMAND (or a function), its output into FILE; prints its user + system seconds
  local TIMEFORMAT='%U %S' t
  t=$({ time "${@:2}" >"$1" 2>&1; } 2>&1) || { tail -5 "$1" >&2; die "$2 failed (see $1)"; }
  awk '{print $1 + $2}' <<<"$t"
}

limit() { # limit ENGINE QUERY_INDEX ROUND [inline]
  local engine=$1 name=${NAMES[$2]} round=$3 form=${4:-} file cpu qps n secs step
  step="limit${form:+-$form}"
  file="$OUT/$engine-$name-r$round-$step.txt"
  local sqlf="$OUT/sql/$engine-$name.sql"
  case "$engine" in
    postgres)
      pgbench_script "$name" "$form"
      pgbench "${PG[@]}" -M prepared -n -c"$CONNS" -j"$THREADS" -T"$WARMUP_S" "${PGBENCH_SCRIPT[@]}" gh_bench >"$file.warmup" 2>&1 ||
        die "pgbench failed on $name"
      cpu=$(timed "$file" pgbench "${PG[@]}" -M prepared -n -c"$CONNS" -j"$THREADS" -T"$DURATION_S" "${PGBENCH_SCRIPT[@]}" gh_bench)
      qps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$file")
      ;;
    mariadb)
      : >"$file.warmup"
      secs=$(slap gh_bench "$sqlf" "$CONNS" "$file.warmup") || die "mariadb-slap failed on $name"
      n=$(sized "$CONNS" "$secs" "$WARMUP_S")
      secs=$(slap gh_bench "$sqlf" "$n" "$file.warmup") || die "mariadb-slap failed on $name"
      n=$(sized "$n" "$secs" "$DURATION_S")
      : >"$file"
      cpu=$(timed "$file.seconds" slap gh_bench "$sqlf" "$n" "$file")
      secs=$(cat "$file.seconds")
      qps=$(awk -v s="$secs" -v n="$n" 'BEGIN {if (s > 0) printf "%.1f", n / s}')
      # The CPU per statement is over the queries run, not the duration.
      cpu=$(awk -v c="$cpu" -v s="$secs" -v d="$DURATION_S" 'BEGIN {print (s > 0 ? c * d / s : 0)}')
      ;;
  esac
  record "$engine" "$name" "$round" "$step" "$qps" "$cpu"
}

raw() { # raw ENGINE QUERY_INDEX ROUND STEP [--json]: odata_raw's own warm-up second is not counted
  local engine=$1 name=${NAMES[$2]} round=$3 step=$4 file cpu qps
  file="$OUT/$engine-$name-r$round-$step.txt"
  cpu=$(timed "$file" "$RAW_BIN" "$(db_url "$engine" "$BASE_ROWS")" "$DURATION_S" "$PAGE_SIZE" "q$(($2 + 1))" "${@:5}")
  qps=$(sed -n 's/.* qps=\([0-9.]*\) .*/\1/p' "$file")
  [[ -n "$qps" ]] || die "odata_raw printed no figure (see $file)"
  # Its run is a 1 s warm-up, then DURATION: the CPU is shared out the same way.
  cpu=$(awk -v c="$cpu" -v d="$DURATION_S" 'BEGIN {print c * d / (d + 1)}')
  record "$engine" "$name" "$round" "$step" "$qps" "$cpu"
}

http() { # http ENGINE QUERY_INDEX ROUND
  local engine=$1 name=${NAMES[$2]} round=$3 file url c0 c1 qps
  file="$OUT/$engine-$name-r$round-http.txt"
  url="$(url "$GH_BASE" "$2")"
  wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" "$url" >"$file.warmup"
  c0=$(awk '{print $14 + $15}' "/proc/$GH_PID/stat")
  wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" "$url" >"$file"
  c1=$(awk '{print $14 + $15}' "/proc/$GH_PID/stat")
  qps=$(awk '/Requests\/sec/ {print $2}' "$file")
  grep -q "Non-2xx" "$file" && die "Gatehouse answered errors (see $file)"
  record "$engine" "$name" "$round" http "$qps" "$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN {print (b - a) / hz}')"
}

for engine in $ENGINES; do write_statements "$engine"; done

echo "== ladder: $ROUNDS rounds, $DURATION per step after a $WARMUP warm-up, $CONNS clients, SPLIT=$SPLIT ($OUT)"
for round in $(seq 1 "$ROUNDS"); do
  for engine in $ENGINES; do
    for q in "${!NAMES[@]}"; do
      limit "$engine" "$q" "$round"
      if [[ "$engine" == postgres ]] && pg_bound "${NAMES[$q]}"; then limit "$engine" "$q" "$round" inline; fi
      raw "$engine" "$q" "$round" driver
      raw "$engine" "$q" "$round" json --json
    done
    start_gh "$engine" "$BASE_ROWS"
    for q in "${!NAMES[@]}"; do http "$engine" "$q" "$round"; done
    stop_gh
  done
done

python3 - "$RUNS" "$ROUNDS" "$SPLIT" <<'EOF' | tee "$OUT/results.md"
import csv, statistics, sys
runs, rounds, split = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
rows = list(csv.DictReader(open(runs), delimiter="\t"))
steps = ["limit", "driver", "json", "http"]
title = {"postgres": "PostgreSQL", "mariadb": "MariaDB"}
print("# Where a page goes (bench/odata_ladder.sh, medians of %s rounds)\n" % rounds)
if split:
    print("SPLIT=1: the engine alone on CPU 0, every client on CPU 1.\n")
print("Statements or requests per second (share of the limit, from the same round), "
      "and the client side's CPU per statement in µs.\n")
print("| engine | query | limit | driver alone | + JSON | + HTTP | HTTP / driver |")
print("|---|---|---|---|---|---|---|")
for engine in dict.fromkeys(r["engine"] for r in rows):
    for query in dict.fromkeys(r["query"] for r in rows if r["engine"] == engine):
        by = {}
        for r in rows:
            if r["engine"] == engine and r["query"] == query:
                by.setdefault(r["round"], {})[r["step"]] = (float(r["qps"]), float(r["client_us"]))
        cells = []
        for step in steps:
            got = [b[step] for b in by.values() if step in b]
            qps = statistics.median(q for q, _ in got)
            us = statistics.median(u for _, u in got)
            if step == "limit":
                cells.append("%.0f (%.0f µs)" % (qps, us))
            else:
                share = statistics.median(b[step][0] / b["limit"][0] for b in by.values() if step in b and "limit" in b)
                cells.append("%.0f (%.0f %%, %.0f µs)" % (qps, 100 * share, us))
        ratio = statistics.median(b["http"][0] / b["driver"][0] for b in by.values() if "http" in b and "driver" in b)
        cells.append("%.0f %%" % (100 * ratio))
        print("| %s | %s | %s |" % (title.get(engine, engine), query, " | ".join(cells)))
for r in sorted({(r["engine"], r["query"]) for r in rows if r["step"] == "limit-inline"}):
    by = {}
    for x in rows:
        if (x["engine"], x["query"]) == r:
            by.setdefault(x["round"], {})[x["step"]] = float(x["qps"])
    got = [b for b in by.values() if "limit-inline" in b and "http" in b]
    print("\n%s %s with its values written in as literals instead of bound (planned once): %.0f statements/s,"
          " HTTP at %.0f %% of that." % (title.get(r[0], r[0]), r[1], statistics.median(b["limit-inline"] for b in got),
                                          100 * statistics.median(b["http"] / b["limit-inline"] for b in got)))
EOF

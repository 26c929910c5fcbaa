#!/usr/bin/env bash
# Two Gatehouse builds on the same rows: the OData benchmark's four queries
# (bench/odata.sh) against build A and build B, per engine, alternating A-B
# then B-A from round to round, so that a change to the read path is judged
# against the code it replaces in one sitting on this noisy machine.
#
#   A_BIN=/path/to/old/gatehouse B_BIN=/path/to/new/gatehouse bash bench/builds.sh
#
# Each build gets its own copy of the 100,000 Items (bench/odata_data.py,
# bench/odata_engines_data.py: the same generated rows and indexes) because
# each migrates its database to its own migration set: SQLite files
# items-a.db / items-b.db, databases gh_bench_a / gh_bench_b on PostgreSQL
# and MariaDB. One Gatehouse process runs at a time; every wrk run is
# -t2 -c16 -dDURATION --latency after a WARMUP run of the same URL.
#
# Environment (defaults): ENGINES="sqlite postgres mariadb" ROUNDS=3
#   DURATION=6s WARMUP=2s GH_PORT=8712 PAGE_SIZE=1000
# Output: bench/out/builds-<timestamp>/ (wrk outputs, runs.tsv, results.md);
# results.md holds, per engine and query, the median req/s and p50 of each
# build and the median of the per-round ratios B/A.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-6s}"
WARMUP="${WARMUP:-2s}"
GH_PORT="${GH_PORT:-8712}"
PAGE_SIZE="${PAGE_SIZE:-1000}"
A_BIN="${A_BIN:?A_BIN: the first build's gatehouse binary}"
B_BIN="${B_BIN:?B_BIN: the second build's gatehouse binary}"
ROWS=100000
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/builds-$(date +%Y%m%d-%H%M%S)"
die() { echo "builds.sh: $*" >&2; exit 1; }
source "$ROOT/bench/odata_lib.sh"
command -v wrk >/dev/null || die "wrk is needed (apt-get install wrk)"
mkdir -p "$OUT" "$DATA"

# The lib names server databases by size; here by build.
db_url() { # db_url ENGINE BUILD
  case "$1" in
    sqlite) echo "sqlite://$DATA/items-$2.db?mode=rwc" ;;
    postgres) echo "postgres://postgres@127.0.0.1:5432/gh_bench_$2" ;;
    mariadb) echo "mysql://root@127.0.0.1:3306/gh_bench_$2" ;;
  esac
}

servers=()
for e in postgres mariadb; do has "$ENGINES" "$e" && servers+=("$e"); done
for build in a b; do
  if has "$ENGINES" sqlite; then
    python3 "$ROOT/bench/odata_data.py" --rows "$ROWS" --db "$DATA/items-$build.db"
  fi
  if ((${#servers[@]})); then
    python3 "$ROOT/bench/odata_engines_data.py" --rows "$ROWS" --db "gh_bench_$build" \
      --engines "$(IFS=,; echo "${servers[*]}")"
  fi
done

measure() { # measure ENGINE BUILD ROUND: every query against the running build
  local q url file
  for q in "${!QUERIES[@]}"; do
    url="$(url "$GH_BASE" "$q")"
    wrk -t2 -c16 -d"$WARMUP" "$url" >/dev/null
    file="$OUT/wrk-$1-$2-${NAMES[$q]}-r$3.txt"
    wrk -t2 -c16 -d"$DURATION" --latency "$url" >"$file"
    python3 - "$file" "$1" "$2" "${NAMES[$q]}" "$3" >>"$OUT/runs.tsv" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
def ms(v):
    n, unit = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], f"{rps:.1f}", f"{p50:.2f}",
                 errors.group(1) if errors else "0"]))
EOF
  done
}

printf 'engine\tbuild\tquery\tround\treq_s\tp50_ms\tnon_2xx\n' >"$OUT/runs.tsv"
trap stop_gh EXIT
for engine in $ENGINES; do
  for round in $(seq 1 "$ROUNDS"); do
    order="a b"
    ((round % 2 == 0)) && order="b a"
    for build in $order; do
      GH_BIN="$A_BIN"
      [[ "$build" == b ]] && GH_BIN="$B_BIN"
      write_config "$engine" "$build"
      start_gh "$engine" "$build"
      measure "$engine" "$build" "$round"
      stop_gh
    done
  done
done

python3 - "$OUT/runs.tsv" "$A_BIN" "$B_BIN" >"$OUT/results.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"A = `{sys.argv[2]}`, B = `{sys.argv[3]}`; medians over rounds, ratio = median of per-round B/A req/s.\n")
print("| engine | query | A req/s | B req/s | B/A | A p50 ms | B p50 ms | non-2xx |")
print("|---|---|---|---|---|---|---|---|")
keys = sorted({(r["engine"], r["query"]) for r in rows}, key=lambda k: (k[0], k[1]))
for engine, query in keys:
    runs = [r for r in rows if r["engine"] == engine and r["query"] == query]
    by = lambda b, f: [float(r[f]) for r in runs if r["build"] == b]
    rounds = sorted({r["round"] for r in runs})
    ratio = statistics.median(
        float(next(r["req_s"] for r in runs if r["build"] == "b" and r["round"] == n))
        / float(next(r["req_s"] for r in runs if r["build"] == "a" and r["round"] == n))
        for n in rounds)
    bad = sum(int(r["non_2xx"]) for r in runs)
    print(f"| {engine} | {query} | {statistics.median(by('a','req_s')):.1f} | {statistics.median(by('b','req_s')):.1f} "
          f"| {ratio:.3f} | {statistics.median(by('a','p50_ms')):.2f} | {statistics.median(by('b','p50_ms')):.2f} | {bad} |")
EOF
cat "$OUT/results.md"

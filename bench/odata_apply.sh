#!/usr/bin/env bash
# $apply against the SAP CAP OData v4 peer, on the same engine, in one run:
# the peer's 100,000 Items grouped by category with a sum and a count, and
# the same over filtered rows, on SQLite (the peer on SQLite) and on
# PostgreSQL (the peer on PostgreSQL, PEER_DB=postgres), and on MariaDB
# (against the peer on PostgreSQL: it has no MariaDB driver).
#
#   bash bench/odata_apply.sh
#
# Per engine: the peer is started on that engine and one Gatehouse process
# on the same rows (bench/odata_lib.sh's data sets and configuration); both
# answers are checked to hold the same groups, sums and counts; then ROUNDS
# rounds of, per query, wrk against the peer and wrk against Gatehouse
# (-t2 -c16 -dDURATION after a WARMUP run), neighbouring runs, so that each
# round's ratio compares measurements made seconds apart. On PostgreSQL the
# statement Gatehouse sends is taken from the server's log
# (log_statement = all on gh_bench for one request) and EXPLAIN ANALYZE'd.
# Results: $OUT/runs.tsv (engine, query, round, server, req/s) and
# $OUT/summary.md (medians, median of the per-round ratios, the plans).
#
# Environment: ENGINES="sqlite postgres mariadb", ROUNDS=3, DURATION=8s, WARMUP=2s,
# SKIP_BUILD=1 (use the release binary in TARGET_DIR as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-8s}"
WARMUP="${WARMUP:-2s}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PORT="${GH_PORT:-8712}"
PEER_PORT="${PEER_PORT:-4006}"
PEER_SRC="$(cd "${PEER_SRC:-$ROOT/../shared/bench/cap}" && pwd)"
PG_LOG="${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}"
BASE_ROWS=100000
PAGE_SIZE=1000
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
PEER_BASE="http://127.0.0.1:$PEER_PORT/odata/v4/catalog"
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/apply-$(date +%Y%m%d-%H%M%S)"
PSQL=(psql -h 127.0.0.1 -p 5432 -U postgres -X -qAt -v ON_ERROR_STOP=1)
export PGSSLMODE=disable

die() { echo "odata_apply.sh: $*" >&2; exit 1; }
# The queries (APPLY_NAMES, APPLY_QUERIES), the data sets, write_config,
# start_gh, stop_gh.
source "$ROOT/bench/odata_lib.sh"

for tool in curl python3 wrk; do command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk)"; done
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
mkdir -p "$OUT" "$DATA"
echo "output: $OUT"
load_data "$ENGINES" "$BASE_ROWS"

PEER_DIR=""
stop_peer() { [[ -n "$PEER_DIR" ]] && PEER_DIR="$PEER_DIR" "$PEER_SRC/stop.sh" >/dev/null 2>&1 || true; PEER_DIR=""; }
trap 'stop_gh; stop_peer' EXIT

rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
measure() { # measure URL FILE
  wrk -t2 -c16 -d"$WARMUP" "$1" >/dev/null
  wrk -t2 -c16 -d"$DURATION" --latency "$1" >"$2"
}

printf 'engine\tquery\tround\tserver\treq_s\n' >"$OUT/runs.tsv"
for engine in $ENGINES; do
  case "$engine" in
    sqlite) peer_db=sqlite ;;
    postgres) peer_db=postgres ;;
    # The peer has no MariaDB driver: Gatehouse on MariaDB against the peer
    # on PostgreSQL, as bench/odata.sh compares it.
    mariadb) peer_db=postgres ;;
    *) die "unknown engine '$engine' (sqlite, postgres, mariadb)" ;;
  esac
  PEER_DIR="/tmp/cap-peer-apply-$engine"
  echo "== $engine: the CAP peer on $peer_db, Gatehouse on $engine"
  PEER_DB="$peer_db" PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" HOST=127.0.0.1 "$PEER_SRC/run.sh" | grep 'run.sh:' || true
  start_gh "$engine" "$BASE_ROWS"
  for i in "${!APPLY_QUERIES[@]}"; do
    q="${APPLY_QUERIES[$i]}"
    curl -fsS "$PEER_BASE/Items?$q" >"$OUT/$engine-${APPLY_NAMES[$i]}-peer.json"
    curl -fsS "$GH_BASE/Items?$q" >"$OUT/$engine-${APPLY_NAMES[$i]}-gatehouse.json"
    python3 - "$OUT/$engine-${APPLY_NAMES[$i]}-peer.json" "$OUT/$engine-${APPLY_NAMES[$i]}-gatehouse.json" <<'PY'
import json, sys
def rows(path):
    value = json.load(open(path))["value"]
    return sorted((r["category"], round(float(r["Total"]), 2), int(r["N"])) for r in value)
peer, gh = rows(sys.argv[1]), rows(sys.argv[2])
if peer != gh:
    sys.exit(f"different answers:\n peer {peer}\n gatehouse {gh}")
print(f"   same {len(gh)} groups, sums and counts as the peer")
PY
  done
  if [[ "$engine" == postgres && -r "$PG_LOG" ]]; then
    "${PSQL[@]}" -c "ALTER DATABASE gh_bench SET log_statement = 'all'"
    stop_gh; start_gh "$engine" "$BASE_ROWS"
    for i in "${!APPLY_QUERIES[@]}"; do curl -fsS -o /dev/null "$GH_BASE/Items?${APPLY_QUERIES[$i]}"; done
    "${PSQL[@]}" -c "ALTER DATABASE gh_bench RESET log_statement"
    # Each logged statement of Gatehouse's that groups, its parameters written in.
    python3 "$ROOT/bench/statements.py" postgres "$PG_LOG" 'SELECT .*GROUP BY' >"$OUT/postgres-statements.sql"
    while IFS= read -r statement; do
      [[ -z "$statement" ]] && continue
      echo "-- $statement" >>"$OUT/postgres-explain.txt"
      "${PSQL[@]}" -d gh_bench -c "EXPLAIN (ANALYZE, BUFFERS) $statement" >>"$OUT/postgres-explain.txt" 2>&1 || true
    done <"$OUT/postgres-statements.sql"
  fi
  for round in $(seq 1 "$ROUNDS"); do
    for i in "${!APPLY_QUERIES[@]}"; do
      q="${APPLY_QUERIES[$i]}" name="${APPLY_NAMES[$i]}"
      measure "$PEER_BASE/Items?$q" "$OUT/$engine-$name-$round-peer.wrk"
      measure "$GH_BASE/Items?$q" "$OUT/$engine-$name-$round-gatehouse.wrk"
      printf '%s\t%s\t%s\tpeer\t%s\n' "$engine" "$name" "$round" "$(rate "$OUT/$engine-$name-$round-peer.wrk")" >>"$OUT/runs.tsv"
      printf '%s\t%s\t%s\tgatehouse\t%s\n' "$engine" "$name" "$round" "$(rate "$OUT/$engine-$name-$round-gatehouse.wrk")" >>"$OUT/runs.tsv"
      echo "   round $round $name: peer $(rate "$OUT/$engine-$name-$round-peer.wrk") req/s, gatehouse $(rate "$OUT/$engine-$name-$round-gatehouse.wrk") req/s"
    done
  done
  stop_gh
  stop_peer
done

python3 - "$OUT/runs.tsv" >"$OUT/summary.md" <<'PY'
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = sorted({(r["engine"], r["query"]) for r in runs})
print("| engine | query | peer req/s (median) | Gatehouse req/s (median) | × peer (median of per-round ratios) |")
print("|---|---|---|---|---|")
for engine, query in keys:
    mine = [r for r in runs if (r["engine"], r["query"]) == (engine, query)]
    by_round = {}
    for r in mine:
        by_round.setdefault(r["round"], {})[r["server"]] = float(r["req_s"])
    peer = statistics.median(v["peer"] for v in by_round.values())
    gh = statistics.median(v["gatehouse"] for v in by_round.values())
    ratio = statistics.median(v["gatehouse"] / v["peer"] for v in by_round.values())
    print(f"| {engine} | {query} | {peer:,.0f} | {gh:,.0f} | {ratio:.2f} |")
PY
cat "$OUT/summary.md"
[[ -f "$OUT/postgres-explain.txt" ]] && cat "$OUT/postgres-explain.txt"

#!/usr/bin/env bash
# UI5 tree-table reads at scale, each engine beside its own limit, in one run:
# trees of SIZES nodes (bench/odata_tree_data.py: 10 roots, ten children per
# node; 1,111,110 nodes is six full levels) declared with roots = "null_parent"
# (a root is a node whose parent is NULL, found through the parent index),
# read one request at a time as UI5's tree table reads them
# (bench/odata_tree_lib.sh):
#   toplevels  TopLevels(…,Levels=2) with $count, $top=110: the 10 roots and
#              their 100 children, each with its DrillState;
#   children   descendants(…,filter(ID eq 7),1) with $count: node 7's ten
#              children.
# The engine's limit is the same rows read by the engine's own shortest
# statement, index look-ups only, run by the engine's own load tool on one
# connection (PostgreSQL: pgbench; MariaDB: mariadb-slap; SQLite: Python's
# sqlite3 in a loop): the roots by the parent index, their children by it,
# and for each row shown one probe of the parent index telling a leaf.
# Gatehouse's own floor: the same ten children read as plain rows
# ($filter on the parent column, $count, no tree function), so that what a
# request costs Gatehouse before any tree is made is measured beside them.
# Gatehouse: wrk -t1 -c1 (one request at a time) for DURATION after WARMUP,
# ROUNDS rounds; per round the engine's limit is measured right before.
# Each Gatehouse statement is EXPLAIN'd (PostgreSQL: EXPLAIN ANALYZE from the
# statement log; MariaDB: ANALYZE FORMAT=JSON from the general log).
# Results: $OUT/runs.tsv, $OUT/summary.md, $OUT/*-explain.txt.
#
#   bash bench/odata_tree_scale.sh
#
# Environment: SIZES="1111110", ENGINES="sqlite postgres mariadb", ROUNDS=3,
# DURATION=10s, WARMUP=2s, SKIP_BUILD=1 (use the release binary in
# TARGET_DIR as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SIZES="${SIZES:-1111110}"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PORT="${GH_PORT:-8714}"
PG_LOG="${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}"
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/tree-scale-$(date +%Y%m%d-%H%M%S)"
PSQL=(psql -h 127.0.0.1 -p 5432 -U postgres -X -qAt -v ON_ERROR_STOP=1)
MARIADB=(mariadb -h 127.0.0.1 -P 3306 -u root -N -B)
export PGSSLMODE=disable
die() { echo "odata_tree_scale.sh: $*" >&2; exit 1; }

for tool in curl python3 wrk pgbench mariadb-slap; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
mkdir -p "$OUT" "$DATA"
echo "output: $OUT"

# The engine's limit for each read: one statement, index look-ups only.
# Quoted for PostgreSQL (its columns keep their case); the MariaDB and
# SQLite forms drop the quotes.
LIMIT_TOPLEVELS='SELECT n."ID", n.name, n."parent_ID", EXISTS (SELECT 1 FROM nodes k WHERE k."parent_ID" = n."ID") AS has_children FROM nodes n WHERE n."parent_ID" IS NULL UNION ALL SELECT c."ID", c.name, c."parent_ID", EXISTS (SELECT 1 FROM nodes k WHERE k."parent_ID" = c."ID") FROM nodes r JOIN nodes c ON c."parent_ID" = r."ID" WHERE r."parent_ID" IS NULL'
LIMIT_CHILDREN='SELECT c."ID", c.name, EXISTS (SELECT 1 FROM nodes k WHERE k."parent_ID" = c."ID") AS has_children FROM nodes c WHERE c."parent_ID" = 7'
PLAIN_CHILDREN='$filter=parent_ID%20eq%207&$select=ID,name&$count=true&$skip=0&$top=110'
unquoted() { sed 's/"//g' <<<"$1"; }

# engine_limit ENGINE STATEMENT: statements per second on one connection.
engine_limit() {
  case "$1" in
    postgres)
      printf '%s;\n' "$2" >"$OUT/pgbench.sql"
      "${PSQL[@]}" -c "ALTER DATABASE gh_tree SET jit = off" >/dev/null
      pgbench -h 127.0.0.1 -U postgres -n -c1 -j1 -T"${DURATION%s}" -M prepared -f "$OUT/pgbench.sql" gh_tree 2>/dev/null |
        awk '/^tps/ {print $3}' ;;
    mariadb)
      local n=20000 seconds
      seconds=$(mariadb-slap -h 127.0.0.1 -P 3306 -u root --create-schema=gh_tree --concurrency=1 \
        --iterations=1 --number-of-queries="$n" --query="$(unquoted "$2")" 2>/dev/null |
        awk '/Average number of seconds/ {print $(NF-1)}')
      python3 -c 'import sys; print("%.1f" % (int(sys.argv[1]) / float(sys.argv[2])))' "$n" "$seconds" ;;
    sqlite)
      python3 - "$DATA/tree-$SIZE.db" "$(unquoted "$2")" "${DURATION%s}" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
statement, seconds = sys.argv[2], float(sys.argv[3])
for _ in range(100):
    db.execute(statement).fetchall()
n, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    db.execute(statement).fetchall()
    n += 1
print("%.1f" % (n / (time.perf_counter() - start)))
PY
      ;;
  esac
}

GH_PID=""
start_gh() { # start_gh ENGINE
  TREE_ROOTS=null_parent write_tree_config "$1" "$OUT/Rocket-$1.toml"
  ROCKET_CONFIG="$OUT/Rocket-$1.toml" ROCKET_PROFILE=release RUST_LOG=warn "$GH_BIN" serve >>"$OUT/gatehouse-$1.log" 2>&1 &
  GH_PID=$!
  for _ in $(seq 1 300); do
    kill -0 "$GH_PID" 2>/dev/null || { tail -20 "$OUT/gatehouse-$1.log" >&2; die "Gatehouse ($1) exited at start"; }
    curl -fs -o /dev/null "$GH_BASE/Nodes?\$top=1" && return 0
    sleep 0.1
  done
  die "Gatehouse ($1) did not answer within 30 s"
}
stop_gh() { [[ -n "$GH_PID" ]] && { kill "$GH_PID" 2>/dev/null; wait "$GH_PID" 2>/dev/null; }; GH_PID=""; }
trap 'stop_gh || true' EXIT

measure() { # measure URL FILE: req/s, one request at a time
  wrk -t1 -c1 -d"$WARMUP" --timeout 60s "$1" >/dev/null
  wrk -t1 -c1 -d"$DURATION" --timeout 60s --latency "$1" >"$2"
  awk '/Requests\/sec/ {print $2}' "$2"
}

explain() { # explain ENGINE: each Gatehouse statement of the two reads, explained
  case "$1" in
    postgres)
      [[ -r "$PG_LOG" ]] || return 0
      "${PSQL[@]}" -c "ALTER DATABASE gh_tree SET log_statement = 'all'"
      stop_gh; start_gh postgres
      for q in "${QUERIES[@]}"; do curl -s -g -o /dev/null "$GH_BASE/Nodes?$q"; done
      "${PSQL[@]}" -c "ALTER DATABASE gh_tree RESET log_statement"
      python3 "$ROOT/bench/statements.py" postgres "$PG_LOG" 'SELECT .*gh_shown' >"$OUT/postgres-statements-$SIZE.sql"
      while IFS= read -r statement; do
        echo "-- $statement" >>"$OUT/postgres-explain-$SIZE.txt"
        "${PSQL[@]}" -d gh_tree -c "SET jit = off" -c "EXPLAIN (ANALYZE, BUFFERS) $statement" >>"$OUT/postgres-explain-$SIZE.txt" 2>&1 || true
      done <"$OUT/postgres-statements-$SIZE.sql" ;;
    mariadb)
      local general
      general="$(mktemp -u /tmp/odata_tree_scale_general.XXXXXX.log)"
      "${MARIADB[@]}" -e "SET GLOBAL general_log_file = '$general', GLOBAL log_output = 'FILE', GLOBAL general_log = 1"
      for q in "${QUERIES[@]}"; do curl -fsS -g -o /dev/null "$GH_BASE/Nodes?$q"; done
      "${MARIADB[@]}" -e "SET GLOBAL general_log = 0"
      python3 "$ROOT/bench/statements.py" mariadb "$general" 'SELECT .*gh_shown' |
        sed -e 's/LIMIT ? OFFSET ?/LIMIT 111 OFFSET 0/' -e 's/= ?)/= 7)/' >"$OUT/mariadb-statements-$SIZE.sql"
      while IFS= read -r statement; do
        echo "-- $statement" >>"$OUT/mariadb-explain-$SIZE.txt"
        "${MARIADB[@]}" gh_tree -e "ANALYZE FORMAT=JSON $statement" >>"$OUT/mariadb-explain-$SIZE.txt" 2>&1 || true
      done <"$OUT/mariadb-statements-$SIZE.sql" ;;
  esac
}

printf 'size\tengine\tquery\tround\tserver\treq_s\n' >"$OUT/runs.tsv"
for SIZE in $SIZES; do
  TREE_ROWS="$SIZE"
  # shellcheck source=bench/odata_tree_lib.sh
  source "$ROOT/bench/odata_tree_lib.sh"
  NAMES=("${TREE_NAMES[@]}")
  QUERIES=("${TREE_QUERIES[@]}")
  LIMITS=("$LIMIT_TOPLEVELS" "$LIMIT_CHILDREN")
  echo "== $SIZE nodes"
  load_tree_data "$ENGINES"
  for engine in $ENGINES; do
    start_gh "$engine"
    explain "$engine"
    for round in $(seq 1 "$ROUNDS"); do
      for i in "${!QUERIES[@]}"; do
        name="${NAMES[$i]}"
        limit=$(engine_limit "$engine" "${LIMITS[$i]}")
        gh=$(measure "$GH_BASE/Nodes?${QUERIES[$i]}" "$OUT/$SIZE-$engine-$name-$round.wrk")
        printf '%s\t%s\t%s\t%s\tlimit\t%s\n' "$SIZE" "$engine" "$name" "$round" "$limit" >>"$OUT/runs.tsv"
        printf '%s\t%s\t%s\t%s\tgatehouse\t%s\n' "$SIZE" "$engine" "$name" "$round" "$gh" >>"$OUT/runs.tsv"
        echo "   $engine round $round $name: engine limit $limit/s, gatehouse $gh req/s"
      done
      plain=$(measure "$GH_BASE/Nodes?$PLAIN_CHILDREN" "$OUT/$SIZE-$engine-plain-$round.wrk")
      printf '%s\t%s\tplain\t%s\tgatehouse\t%s\n' "$SIZE" "$engine" "$round" "$plain" >>"$OUT/runs.tsv"
      echo "   $engine round $round plain children: gatehouse $plain req/s"
    done
    stop_gh
  done
done

python3 - "$OUT/runs.tsv" >"$OUT/summary.md" <<'PY'
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = sorted({(int(r["size"]), r["engine"], r["query"]) for r in runs if r["query"] != "plain"})
plain = {}
for r in runs:
    if r["query"] == "plain":
        plain.setdefault((int(r["size"]), r["engine"]), []).append(float(r["req_s"]))
print("| nodes | engine | read | engine's limit /s (median) | Gatehouse req/s (median) | Gatehouse ms (median) | share of the limit (median of per-round ratios) |")
print("|---|---|---|---|---|---|---|")
for size, engine, query in keys:
    by_round = {}
    for r in runs:
        if (int(r["size"]), r["engine"], r["query"]) == (size, engine, query):
            by_round.setdefault(r["round"], {})[r["server"]] = float(r["req_s"])
    limit = statistics.median(v["limit"] for v in by_round.values())
    gh = statistics.median(v["gatehouse"] for v in by_round.values())
    share = statistics.median(v["gatehouse"] / v["limit"] for v in by_round.values())
    print(f"| {size:,} | {engine} | {query} | {limit:,.0f} | {gh:,.0f} | {1000 / gh:.2f} | {share:.0%} |")
print()
print("Gatehouse's floor: the same ten children as plain rows ($filter on the parent column), req/s, median")
print()
print("| nodes | engine | plain children req/s | ms |")
print("|---|---|---|---|")
for (size, engine), values in sorted(plain.items()):
    v = statistics.median(values)
    print(f"| {size:,} | {engine} | {v:,.0f} | {1000 / v:.2f} |")
PY
cat "$OUT/summary.md"

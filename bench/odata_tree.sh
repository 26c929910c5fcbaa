#!/usr/bin/env bash
# UI5 tree-table reads against the SAP CAP OData v4 peer, on the same engine,
# in one run: a 100,000-node tree (bench/odata_tree_data.py: 10 roots, ten
# children per node, five levels), read as UI5's tree table reads it, on
# SQLite (the peer on SQLite), PostgreSQL (the peer on PostgreSQL) and
# MariaDB (against the peer on PostgreSQL: it has no MariaDB driver).
#
#   bash bench/odata_tree.sh
#
# The two reads (UI5's first page of the tree, and a node expanded):
#   toplevels  TopLevels(…,Levels=2) with $count, $skip=0, $top=110 and the
#              computed properties selected: 110 rows;
#   children   descendants(…,filter(ID eq 7),1) with $count: node 7's ten
#              children.
# Per engine: the peer (bench/cap_tree/run.sh) and one Gatehouse process on
# the same rows; both answers are compared (rows, order, computed values);
# the statements are taken from the engine's log and EXPLAIN'd (PostgreSQL:
# Gatehouse's and the peer's, EXPLAIN ANALYZE; MariaDB: ANALYZE FORMAT=JSON;
# SQLite has no statement log: Gatehouse's PostgreSQL statements, their
# values written in, EXPLAIN QUERY PLAN'd by Python's sqlite3); then ROUNDS rounds of, per read, the peer and Gatehouse
# measured back to back with the same client: wrk -t1 -cCONNS -dDURATION
# --timeout 300s after a WARMUP run. A read the peer needs longer than
# SLOW seconds for (a closed loop of a few seconds would hold one or two of
# its answers) is measured instead as sequential requests, one at a time,
# for both: the peer's 3 (1 when one takes over 20 s), Gatehouse's 20; req/s
# is then 1 / the median time. Results: $OUT/runs.tsv and $OUT/summary.md.
#
# Environment: ENGINES="sqlite postgres mariadb", ROUNDS=3, DURATION=10s,
# WARMUP=2s, CONNS=2, SLOW=2, SKIP_BUILD=1 (use the release
# binary in TARGET_DIR as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
CONNS="${CONNS:-2}"
SLOW="${SLOW:-2}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PORT="${GH_PORT:-8713}"
PEER_PORT="${PEER_PORT:-4009}"
PG_LOG="${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}"
ROWS=100000
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
PEER_BASE="http://127.0.0.1:$PEER_PORT/odata/v4/tree"
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/tree-$(date +%Y%m%d-%H%M%S)"
PSQL=(psql -h 127.0.0.1 -p 5432 -U postgres -X -qAt -v ON_ERROR_STOP=1)
MARIADB=(mariadb -h 127.0.0.1 -P 3306 -u root -N -B)
export PGSSLMODE=disable
die() { echo "odata_tree.sh: $*" >&2; exit 1; }

# The reads (TREE_NAMES, TREE_QUERIES), load_tree_data, write_tree_config:
# bench/odata_tree_lib.sh, shared with bench/odata_ab.sh.
TREE_ROWS="$ROWS"
# shellcheck source=bench/odata_tree_lib.sh
source "$ROOT/bench/odata_tree_lib.sh"
NAMES=("${TREE_NAMES[@]}")
QUERIES=("${TREE_QUERIES[@]}")
# A tree read in a statement log (bench/statements.py).
TREE_STATEMENT='WITH RECURSIVE|SELECT .*gh_shown'

for tool in curl python3 wrk; do command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk)"; done
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
mkdir -p "$OUT" "$DATA"
echo "output: $OUT"
load_tree_data "$ENGINES"

write_config() { write_tree_config "$1" "$OUT/Rocket-$1.toml"; } # write_config ENGINE

GH_PID="" PEER_DIR=""
start_gh() {
  write_config "$1"
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
stop_peer() { [[ -n "$PEER_DIR" ]] && PEER_DIR="$PEER_DIR" "$ROOT/../shared/bench/cap/stop.sh" >/dev/null 2>&1; PEER_DIR=""; }
trap 'stop_gh || true; stop_peer || true' EXIT

seconds() { curl -s -g -o "$2" -w '%{time_total}' --max-time 900 "$1"; } # seconds URL FILE
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
measure() { # measure URL FILE: req/s, closed loop of CONNS clients
  wrk -t1 -c"$CONNS" -d"$WARMUP" --timeout 300s "$1" >/dev/null
  wrk -t1 -c"$CONNS" -d"$DURATION" --timeout 300s --latency "$1" >"$2"
  rate "$2"
}
sequential() { # sequential URL TRIES: req/s as 1 / the median of TRIES sequential requests
  local times=() i
  for i in $(seq 1 "$2"); do times+=("$(seconds "$1" /dev/null)"); done
  python3 -c 'import statistics, sys; print("%.3f" % (1 / statistics.median(float(t) for t in sys.argv[1:])))' "${times[@]}"
}

printf 'engine\tquery\tround\tserver\treq_s\tmethod\n' >"$OUT/runs.tsv"
for engine in $ENGINES; do
  case "$engine" in
    sqlite) peer_db=sqlite ;;
    postgres|mariadb) peer_db=postgres ;;
    *) die "unknown engine '$engine' (sqlite, postgres, mariadb)" ;;
  esac
  PEER_DIR="/tmp/cap-tree-$peer_db"
  echo "== $engine: the CAP peer on $peer_db, Gatehouse on $engine"
  PEER_DB="$peer_db" PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" bash "$ROOT/bench/cap_tree/run.sh" | grep 'run.sh:' || true
  start_gh "$engine"
  declare -A peer_ok=() peer_tries=()
  for i in "${!QUERIES[@]}"; do
    name="${NAMES[$i]}" q="${QUERIES[$i]}"
    t=$(seconds "$PEER_BASE/Nodes?$q" "$OUT/$engine-$name-peer.json")
    seconds "$GH_BASE/Nodes?$q" "$OUT/$engine-$name-gatehouse.json" >/dev/null
    rc=0; python3 "$ROOT/bench/odata_tree_check.py" "$name" "$OUT/$engine-$name-peer.json" "$OUT/$engine-$name-gatehouse.json" || rc=$?
    [[ "$rc" == 2 ]] && die "$engine $name: Gatehouse's answer is wrong ($OUT/$engine-$name-gatehouse.json)"
    if [[ "$rc" == 0 ]]; then
      peer_ok[$name]=1
      peer_tries[$name]=$(python3 -c 'import sys; t = float(sys.argv[1]); print(0 if t <= float(sys.argv[2]) else 3 if t <= 20 else 1)' "$t" "$SLOW")
      echo "   $name: the peer answered in $t s"
    fi
  done
  case "$engine" in
    postgres)
      if [[ -r "$PG_LOG" ]]; then
        # Gatehouse's statements, then the peer's (its database is cap_tree).
        for who in gatehouse peer; do
          db=gh_tree base="$GH_BASE"
          [[ "$who" == peer ]] && db=cap_tree base="$PEER_BASE"
          "${PSQL[@]}" -c "ALTER DATABASE $db SET log_statement = 'all'"
          if [[ "$who" == gatehouse ]]; then stop_gh; start_gh "$engine"; else
            stop_peer; PEER_DIR="/tmp/cap-tree-$peer_db"
            PEER_DB="$peer_db" PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" bash "$ROOT/bench/cap_tree/run.sh" >/dev/null; fi
          for q in "${QUERIES[@]}"; do curl -s -g -o /dev/null "$base/Nodes?$q"; done
          "${PSQL[@]}" -c "ALTER DATABASE $db RESET log_statement"
          python3 "$ROOT/bench/statements.py" postgres "$PG_LOG" "$TREE_STATEMENT" >"$OUT/postgres-$who-statements.sql"
          while IFS= read -r statement; do
            echo "-- $who: $statement" >>"$OUT/postgres-explain.txt"
            # Gatehouse's reads run with jit = off (its connections' options).
            settings="SET jit = on"; [[ "$who" == gatehouse ]] && settings="SET jit = off"
            "${PSQL[@]}" -d "$db" -c "$settings" -c "EXPLAIN (ANALYZE, BUFFERS) $statement" >>"$OUT/postgres-explain.txt" 2>&1 || true
          done <"$OUT/postgres-$who-statements.sql"
        done
        # SQLite's plan for the same statements (the same text but for
        # the dialect's padding of a key's digits), by Python's sqlite3 module.
        python3 - "$DATA/tree-$ROWS.db" "$OUT/postgres-gatehouse-statements.sql" >"$OUT/sqlite-explain.txt" <<'PY'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for statement in open(sys.argv[2]).read().splitlines():
    statement = re.sub(r"LPAD\(CAST\((.*?) AS TEXT\), (\d+), '0'\)",
                       lambda m: "printf('%%0%sd', %s)" % (m.group(2), m.group(1)), statement)
    print("-- " + statement)
    for row in db.execute("EXPLAIN QUERY PLAN " + statement):
        print("  " * (row[1] > 0) + row[3])
PY
      fi ;;
    mariadb)
      # The server writes its general log where it may (its own user).
      general="$(mktemp -u /tmp/odata_tree_general.XXXXXX.log)"
      "${MARIADB[@]}" -e "SET GLOBAL general_log_file = '$general', GLOBAL log_output = 'FILE', GLOBAL general_log = 1"
      # A fresh process prepares each statement anew: the server writes the
      # values into an execution's log line only when they are sent, and a
      # connection executing a statement again need not send them.
      stop_gh; start_gh "$engine"
      for q in "${QUERIES[@]}"; do curl -fsS -g -o /dev/null "$GH_BASE/Nodes?$q"; done
      "${MARIADB[@]}" -e "SET GLOBAL general_log = 0"
      cp "$general" "$OUT/mariadb-general.log"
      # The general log holds the statements as prepared: their values
      # (the page's LIMIT and OFFSET, node 7's key) are written in here.
      python3 "$ROOT/bench/statements.py" mariadb "$OUT/mariadb-general.log" "$TREE_STATEMENT" |
        sed -e 's/LIMIT ? OFFSET ?/LIMIT 111 OFFSET 0/' -e 's/= ?)/= 7)/' >"$OUT/mariadb-statements.sql"
      while IFS= read -r statement; do
        echo "-- $statement" >>"$OUT/mariadb-explain.txt"
        "${MARIADB[@]}" gh_tree -e "ANALYZE FORMAT=JSON $statement" >>"$OUT/mariadb-explain.txt" 2>&1 || true
      done <"$OUT/mariadb-statements.sql" ;;
  esac
  for round in $(seq 1 "$ROUNDS"); do
    for i in "${!QUERIES[@]}"; do
      name="${NAMES[$i]}" q="${QUERIES[$i]}"
      if [[ -z "${peer_ok[$name]:-}" ]]; then
        peer="" method="wrk -c$CONNS"
        gh=$(measure "$GH_BASE/Nodes?$q" "$OUT/$engine-$name-$round-gatehouse.wrk")
      elif [[ "${peer_tries[$name]}" != 0 ]]; then
        method="sequential"
        peer=$(sequential "$PEER_BASE/Nodes?$q" "${peer_tries[$name]}")
        gh=$(sequential "$GH_BASE/Nodes?$q" 20)
      else
        method="wrk -c$CONNS"
        peer=$(measure "$PEER_BASE/Nodes?$q" "$OUT/$engine-$name-$round-peer.wrk")
        gh=$(measure "$GH_BASE/Nodes?$q" "$OUT/$engine-$name-$round-gatehouse.wrk")
      fi
      [[ -n "$peer" ]] && printf '%s\t%s\t%s\tpeer\t%s\t%s\n' "$engine" "$name" "$round" "$peer" "$method" >>"$OUT/runs.tsv"
      printf '%s\t%s\t%s\tgatehouse\t%s\t%s\n' "$engine" "$name" "$round" "$gh" "$method" >>"$OUT/runs.tsv"
      echo "   round $round $name ($method): peer ${peer:-no answer} req/s, gatehouse $gh req/s"
    done
  done
  unset peer_ok peer_tries
  stop_gh
  stop_peer
done

python3 - "$OUT/runs.tsv" >"$OUT/summary.md" <<'PY'
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = sorted({(r["engine"], r["query"]) for r in runs}, key=lambda k: (k[0], k[1]))
print("| engine | read | method | peer req/s (median) | Gatehouse req/s (median) | × peer (median of per-round ratios) |")
print("|---|---|---|---|---|---|")
for engine, query in keys:
    mine = [r for r in runs if (r["engine"], r["query"]) == (engine, query)]
    by_round = {}
    for r in mine:
        by_round.setdefault(r["round"], {})[r["server"]] = float(r["req_s"])
    gh = statistics.median(v["gatehouse"] for v in by_round.values())
    if all(v.get("peer", 0) > 0 for v in by_round.values()):
        peer = statistics.median(v["peer"] for v in by_round.values())
        ratio = statistics.median(v["gatehouse"] / v["peer"] for v in by_round.values())
        print(f"| {engine} | {query} | {mine[0]['method']} | {peer:,.3f} | {gh:,.1f} | {ratio:,.0f} |")
    else:
        print(f"| {engine} | {query} | {mine[0]['method']} | no answer | {gh:,.1f} | — |")
PY
cat "$OUT/summary.md"
for f in "$OUT"/*-explain.txt; do [[ -f "$f" ]] && cat "$f"; done

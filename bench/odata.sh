#!/usr/bin/env bash
# OData collection benchmark on SQLite, PostgreSQL and MariaDB: Gatehouse's
# /odata routes on each engine against the SAP CAP OData v4 peer served from
# PostgreSQL (../shared/bench/cap, PEER_DB=postgres), and against each
# engine's own limit on the same statements, all in one run, on the peer's
# four reference queries (its scripts/bench.sh) with equal page sizes and the
# same rows (../shared/bench/gen_items.py, with the peer's two indexes and
# ANALYZE: bench/odata_data.py writes a SQLite file per size,
# bench/odata_engines_data.py the PostgreSQL and MariaDB databases gh_bench
# (100,000 rows) and gh_bench_<rows> (other sizes), loaded by COPY / LOAD DATA).
#
#   bash bench/odata.sh
#
# Phase "bench":
#   - ROUNDS rounds at 100,000 rows. In each, per engine: one Gatehouse
#     process is started on that engine (never two at once; stopped after),
#     then per query: wrk against the peer, wrk against Gatehouse, then the
#     engine's limit, each seconds after the other so that every per-round
#     ratio compares neighbouring measurements (this machine's speed drifts).
#     Every wrk run is -t2 -c16 -dDURATION --latency --timeout WRK_TIMEOUT
#     after a WARMUP run of the same URL.
#   - The limit: the exact statement Gatehouse sends for the query (same
#     text, same values; for $count=true the one statement carrying the
#     count as its last column "__count"), printed by the release example
#     bench/odata_raw.rs from the library's own parse_query/PagePlan/
#     fetch_query, at 16 clients:
#       PostgreSQL: pgbench -M prepared -n -c16 -j2 -T<DURATION> with a script
#         file holding the statement, each of its binds a pgbench variable
#         that -M prepared sends as a parameter, as Gatehouse sends it, so
#         that the engine prepares, binds and plans what it does for
#         Gatehouse (a statement with binds is planned again at each
#         execution where PostgreSQL keeps custom plans); for a statement
#         with binds, also the same with its values written in as literals
#         (planned once), as a reference (limit-inline in runs.tsv)
#         (each after a WARMUP-long pgbench run), tps; without TLS
#         (PGSSLMODE=disable), as Gatehouse connects: libpq's default
#         (prefer) would encrypt and the limit would pay for it. pgbench
#         asks for rows as text, so PostgreSQL formats every value, where
#         Gatehouse takes numbers, decimals and instants in binary;
#       MariaDB: mariadb-slap --concurrency=16 on the same statement with its
#         values written in (text protocol, every row fetched); the number of
#         queries is sized from a 16-query calibration and a WARMUP-long run
#         so that the measurement lasts about DURATION; queries / seconds;
#       SQLite: odata_raw itself: the statement on Gatehouse's own SQLite read
#         threads, 16 tasks on 2 threads, every column read, no HTTP or JSON,
#         DURATION after its own 1 s warm-up; statements per second.
#   - Other SIZES (e.g. 1,000,000 rows): in the first ROUNDS_LARGE rounds,
#     right after the engine's 100,000-row part, its own Gatehouse process on
#     that size, every query (wrk as above, Gatehouse alone: the peer serves
#     100,000 rows only) and the limit at that size.
#   - Then per engine at 100,000 rows: a fresh Gatehouse, every query at 64
#     connections against it alone; its peak RSS (VmHWM) after those runs.
#   - In round 1, before its measurements, each Gatehouse is checked to
#     answer the same entities and @odata.count as the peer (at other sizes:
#     its rows), and each limit statement is run once with the engine's client
#     (rows returned, __count); warnings, not failures: see results.md. For a
#     query with $orderby the check compares the sequence of the ordered
#     properties' values and the count, and reports how each server orders
#     rows of equal values by the key (Gatehouse in the direction of the last
#     $orderby term, the peer ascending: both stable OData orders, the same
#     work); without $orderby it compares the entities' IDs exactly.
#   Medians over rounds of req/s, p50 and p99; ratios are medians of
#   per-round ratios. The peer stops at the end of this phase.
# Phase "plans" (PostgreSQL and MariaDB, 100,000 rows): one Gatehouse request
#   per query with the statements logged (PostgreSQL: log_min_duration_statement
#   = 0 and auto_explain with ANALYZE for new sessions, via ALTER SYSTEM;
#   MariaDB: general_log into mysql.general_log), then EXPLAIN (ANALYZE) /
#   ANALYZE of the logged statements, and a check that they are the
#   statements the limit runs (bench/odata_engines_plans.py). Every server
#   setting is put back afterwards, also on failure; the script refuses to
#   start the PostgreSQL part if postgresql.auto.conf already sets one of them.
#
# Environment (defaults):
#   PHASES="bench plans"  ENGINES="sqlite postgres mariadb"
#   SIZES="100000 1000000" (must include 100000 for the peer comparison)
#   ROUNDS=3  ROUNDS_LARGE=2 (rounds at sizes other than 100000)
#   DURATION=8s  WARMUP=2s  (whole seconds)  WRK_TIMEOUT=30s
#   TARGET_DIR=/work/target-release  SKIP_BUILD=1: do not run
#     `CARGO_TARGET_DIR=$TARGET_DIR cargo build --release --bin gatehouse --example odata_raw`
#   GH_BIN=$TARGET_DIR/release/gatehouse  RAW_BIN=$TARGET_DIR/release/examples/odata_raw
#   FRESH_DATA=1  reload every data set even if it looks complete (also gives a
#     different Gatehouse build databases free of this build's migrations)
#   GH_PORT=8711 PEER_PORT=4005 PEER_DIR=/tmp/cap-peer-pg PEER_SRC=../shared/bench/cap
#   PAGE_SIZE  default: the rows in the peer's default page of /Items (1000
#     when the peer is not started); Gatehouse's pagination.default and .max
#   PG_LOG=/var/log/postgresql/postgresql-15-main.log (the server's stderr log)
# Output: bench/out/odata-<timestamp>/ (results.md, plans.md, statements in
# sql/, every wrk/pgbench/mariadb-slap/odata_raw output, runs.tsv, server
# logs and configs); results.md is also copied to bench/out/odata-latest.md.
# Data: bench/out/data/ (SQLite files). All of bench/out is ignored by git.
# The data loading, Gatehouse's configuration and its start/stop are in
# bench/odata_lib.sh, shared with bench/batch.sh and bench/odata_ladder.sh,
# which splits a server engine's page into what its driver, Gatehouse's
# encoder and HTTP each add against the same limit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PHASES="${PHASES:-bench plans}"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
SIZES="${SIZES:-100000 1000000}"
ROUNDS="${ROUNDS:-3}"
ROUNDS_LARGE="${ROUNDS_LARGE:-2}"
DURATION="${DURATION:-8s}"
WARMUP="${WARMUP:-2s}"
WRK_TIMEOUT="${WRK_TIMEOUT:-30s}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
RAW_BIN="${RAW_BIN:-$TARGET_DIR/release/examples/odata_raw}"
GH_PORT="${GH_PORT:-8711}"
PEER_PORT="${PEER_PORT:-4005}"
PEER_DIR="${PEER_DIR:-/tmp/cap-peer-pg}"
PEER_SRC="$(cd "${PEER_SRC:-$ROOT/../shared/bench/cap}" && pwd)"
PG_LOG="${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}"
CONNS=16
RSS_CONNS=64
THREADS=2
BASE_ROWS=100000 # the peer's size
PEER_BASE="http://127.0.0.1:$PEER_PORT/odata/v4/catalog"
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
PG=(-h 127.0.0.1 -p 5432 -U postgres)
export PGSSLMODE=disable # Gatehouse's connections are not encrypted: neither are the limit's
PSQL=(psql "${PG[@]}" -X -qAt -v ON_ERROR_STOP=1)
MYSQL=(mariadb -h 127.0.0.1 -P 3306 -u root -N -B)
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/odata-$(date +%Y%m%d-%H%M%S)"

die() { echo "odata.sh: $*" >&2; exit 1; }
# NAMES, QUERIES, url, has, secs, db_name, db_url, load_data, write_config, start_gh,
# stop_gh, slap, sized
source "$ROOT/bench/odata_lib.sh"
DURATION_S="$(secs "$DURATION")"
WARMUP_S="$(secs "$WARMUP")"
for e in $ENGINES; do
  [[ "$e" =~ ^(sqlite|postgres|mariadb)$ ]] || die "unknown engine '$e' (sqlite, postgres, mariadb)"
done
for s in $SIZES; do [[ "$s" =~ ^[0-9]+$ ]] || die "SIZES are row counts, not '$s'"; done
for p in $PHASES; do [[ "$p" =~ ^(bench|plans)$ ]] || die "unknown phase '$p' (bench, plans)"; done

tools=(curl python3)
has "$PHASES" bench && tools+=(wrk)
if has "$ENGINES" postgres; then tools+=(psql); has "$PHASES" bench && tools+=(pgbench); fi
if has "$ENGINES" mariadb; then tools+=(mariadb); has "$PHASES" bench && tools+=(mariadb-slap); fi
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk; pgbench: postgresql-client; mariadb, mariadb-slap: mariadb-client)"
done
[[ -x "$PEER_SRC/run.sh" ]] || die "no CAP peer at $PEER_SRC"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binaries into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse --example odata_raw
fi
[[ -x "$GH_BIN" ]] || die "no Gatehouse binary at $GH_BIN (set GH_BIN, or run without SKIP_BUILD=1)"
[[ -x "$RAW_BIN" ]] || die "no odata_raw binary at $RAW_BIN (set RAW_BIN, or run without SKIP_BUILD=1)"
mkdir -p "$OUT/sql" "$DATA"
echo "output: $OUT"

# --- clean-up: only what this script started or changed ------------------------
PEER_STARTED=0
PG_CHANGED=0
MY_CHANGED=0
MY_GENERAL_LOG=""
MY_LOG_OUTPUT=""
MY_LOG_ROWS=""
stop_peer() {
  if [[ "$PEER_STARTED" == 1 ]]; then
    PEER_DIR="$PEER_DIR" "$PEER_SRC/stop.sh" >/dev/null || true
    PEER_STARTED=0
  fi
}
PG_SETTINGS=(log_min_duration_statement session_preload_libraries auto_explain.log_min_duration
  auto_explain.log_analyze auto_explain.log_buffers)
pg_restore_settings() {
  if [[ "$PG_CHANGED" == 1 ]]; then
    local args=() s
    for s in "${PG_SETTINGS[@]}"; do args+=(-c "ALTER SYSTEM RESET $s"); done
    "${PSQL[@]}" -d postgres -c "LOAD 'auto_explain'" "${args[@]}" -c "SELECT pg_reload_conf()" >/dev/null ||
      echo "odata.sh: WARNING: could not reset the PostgreSQL settings (${PG_SETTINGS[*]})" >&2
    PG_CHANGED=0
  fi
}
my_restore_settings() {
  if [[ "$MY_CHANGED" == 1 ]]; then
    "${MYSQL[@]}" -e "SET GLOBAL general_log = $MY_GENERAL_LOG; SET GLOBAL log_output = '$MY_LOG_OUTPUT'" ||
      echo "odata.sh: WARNING: could not restore general_log=$MY_GENERAL_LOG, log_output=$MY_LOG_OUTPUT" >&2
    # The log table held nothing before: leave it empty again.
    [[ "$MY_LOG_ROWS" == 0 ]] && { "${MYSQL[@]}" -e "TRUNCATE TABLE mysql.general_log" || true; }
    MY_CHANGED=0
  fi
}
cleanup() {
  stop_gh
  pg_restore_settings
  my_restore_settings
  stop_peer
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- data ----------------------------------------------------------------------------
# One data set per engine and size (kept when complete, unless FRESH_DATA=1);
# the plans phase reads the 100,000-row databases.
DATA_SIZES=""
has "$PHASES" bench && DATA_SIZES="$SIZES"
has "$PHASES" plans && ! has "$DATA_SIZES" "$BASE_ROWS" && DATA_SIZES="$DATA_SIZES $BASE_ROWS"
load_data "$ENGINES" "$DATA_SIZES"

# --- the peer, on PostgreSQL ----------------------------------------------------------
if has "$PHASES" bench && has "$SIZES" "$BASE_ROWS"; then
  if [[ -f "$PEER_DIR/pid" ]] && kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null; then
    die "a CAP peer already runs from $PEER_DIR (pid $(cat "$PEER_DIR/pid")); stop it with PEER_DIR=$PEER_DIR $PEER_SRC/stop.sh, or set PEER_DIR/PEER_PORT"
  fi
  if curl -s -o /dev/null "http://127.0.0.1:$PEER_PORT/"; then
    die "something already listens on port $PEER_PORT; set PEER_PORT"
  fi
  echo "== starting the CAP peer on PostgreSQL (PEER_DIR=$PEER_DIR, port $PEER_PORT)"
  PEER_STARTED=1
  PEER_DB=postgres PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" HOST=127.0.0.1 "$PEER_SRC/run.sh" | grep 'run.sh:' || true
  if ! { [[ -f "$PEER_DIR/pid" ]] && kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null; }; then
    die "the CAP peer did not start (see $PEER_DIR/server.log)"
  fi
  PEER_PID="$(cat "$PEER_DIR/pid")"
  if [[ -z "${PAGE_SIZE:-}" ]]; then
    PAGE_SIZE="$(curl -fsS "$(url "$PEER_BASE" 0)" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["value"]))')"
    PAGE_NOTE="the rows in the peer's default page of /Items; "
  fi
fi
if [[ -n "${PAGE_SIZE:-}" ]]; then
  echo "page size: $PAGE_SIZE (${PAGE_NOTE:-}Gatehouse's pagination.default and .max)"
else
  PAGE_SIZE=1000
  echo "page size: $PAGE_SIZE (the peer's documented default page: the peer is not started; Gatehouse's pagination.default and .max)"
fi

# --- statements: what Gatehouse sends, per engine --------------------------------------
# write_statements (bench/odata_lib.sh): sql/<engine>.txt, text and binds;
# sql/<engine>-<query>.sql, the statement each limit runs.
for engine in $ENGINES; do write_statements "$engine"; done

# --- Gatehouse ------------------------------------------------------------------------
# write_config, start_gh, stop_gh: bench/odata_lib.sh.

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
HZ="$(getconf CLK_TCK)"
RUNS="$OUT/runs.tsv"   # one line per measurement; server: peer, gatehouse or limit
printf 'size\tengine\tserver\tquery\tround\tconns\tcpu\tfile\n' >"$RUNS"
FACTS="$OUT/facts.tsv" # size engine key value
: >"$FACTS"
CHECKS="$OUT/checks.txt"
: >"$CHECKS"
fact() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$FACTS"; }

bench() { # bench SIZE ENGINE SERVER PID BASE QUERY_INDEX ROUND CONNS
  local size=$1 engine=$2 server=$3 pid=$4 base=$5 q=$6 round=$7 conns=$8
  local file="$OUT/$size-$engine-$server-${NAMES[$q]}-c$conns-r$round.txt"
  local c0 c1 t0 t1 cpu
  wrk -t"$THREADS" -c"$conns" -d"$WARMUP" --timeout "$WRK_TIMEOUT" "$(url "$base" "$q")" >"$file.warmup"
  c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
  wrk -t"$THREADS" -c"$conns" -d"$DURATION" --timeout "$WRK_TIMEOUT" --latency "$(url "$base" "$q")" >"$file"
  c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
  cpu=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" 'BEGIN {printf "%.0f", 100 * (b - a) / hz / (e - s)}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$engine" "$server" "${NAMES[$q]}" "$round" "$conns" "$cpu" "$file" >>"$RUNS"
  printf '  %-8s %-9s %-26s r%s c%-3s %s  server cpu %s%%\n' "$engine" "$server" "${NAMES[$q]}" "$round" "$conns" \
    "$(awk '/Requests\/sec/ {printf "%8.1f req/s", $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} /Non-2xx/ {bad = "  NON-2xx: " $NF} /Socket errors/ {bad = bad "  " $0} END {printf "  p50 %s  p99 %s%s", p50, p99, bad}' "$file")" "$cpu"
}

# The engine's own limit on the statement of query Q; the file's last line is
# "limit qps=<statements per second>". With "inline" (PostgreSQL, a statement
# with binds): the same statement with its values written in, recorded as
# server limit-inline, a reference beside the limit.
limit() { # limit SIZE ENGINE QUERY_INDEX ROUND [inline]
  local size=$1 engine=$2 q=$3 round=$4 name=${NAMES[$3]} form=${5:-}
  local server="limit${form:+-$form}"
  local file="$OUT/$size-$engine-$server-$name-r$round.txt" sqlf="$OUT/sql/$engine-$name.sql" db qps
  db="$(db_name "$size")"
  case "$engine" in
    sqlite)
      "$RAW_BIN" "$DATA/items-$size.db" "$DURATION_S" "$PAGE_SIZE" "q$((q + 1))" >"$file" 2>&1 ||
        { tail -5 "$file" >&2; die "odata_raw failed on $name"; }
      qps=$(sed -n 's/.* qps=\([0-9.]*\) .*/\1/p' "$file")
      ;;
    postgres)
      pgbench_script "$name" "$form"
      pgbench "${PG[@]}" -M prepared -n -c"$CONNS" -j"$THREADS" -T"$WARMUP_S" "${PGBENCH_SCRIPT[@]}" "$db" >"$file.warmup" 2>&1 ||
        { tail -5 "$file.warmup" >&2; die "pgbench failed on $name"; }
      pgbench "${PG[@]}" -M prepared -n -c"$CONNS" -j"$THREADS" -T"$DURATION_S" "${PGBENCH_SCRIPT[@]}" "$db" >"$file" 2>&1 ||
        { tail -5 "$file" >&2; die "pgbench failed on $name"; }
      qps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$file")
      ;;
    mariadb)
      local n secs
      # Calibration (one statement per client), a warm-up of about WARMUP,
      # then the measurement, sized from the warm-up to last about DURATION.
      : >"$file"
      secs=$(slap "$db" "$sqlf" "$CONNS" "$file") || { tail -5 "$file" >&2; die "mariadb-slap failed on $name"; }
      n=$(sized "$CONNS" "$secs" "$WARMUP_S")
      secs=$(slap "$db" "$sqlf" "$n" "$file") || { tail -5 "$file" >&2; die "mariadb-slap failed on $name"; }
      n=$(sized "$n" "$secs" "$DURATION_S")
      secs=$(slap "$db" "$sqlf" "$n" "$file") || { tail -5 "$file" >&2; die "mariadb-slap failed on $name"; }
      qps=$(awk -v s="$secs" -v n="$n" 'BEGIN {if (s > 0) printf "%.1f", n / s}')
      echo "measured: $n queries in $secs s" >>"$file"
      ;;
  esac
  [[ -n "$qps" ]] || { tail -5 "$file" >&2; die "limit $engine $name: no figure (see $file)"; }
  echo "limit qps=$qps" >>"$file"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t-\t%s\n' "$size" "$engine" "$server" "$name" "$round" "$CONNS" "$file" >>"$RUNS"
  printf '  %-8s %-12s %-26s r%s c%-3s %8.1f statements/s\n' "$engine" "$server" "$name" "$round" "$CONNS" "$qps"
}
# The limit, then on PostgreSQL for a statement with binds the same with its
# values written in.
limits() { # limits SIZE ENGINE QUERY_INDEX ROUND
  limit "$@"
  if [[ "$2" == postgres ]] && pg_bound "${NAMES[$3]}"; then limit "$@" inline; fi
}

# Same entities and count as the peer (at the peer's size), else the rows
# answered; warns instead of failing. Then each limit statement once through
# the engine's client: rows returned.
check() { # check ENGINE SIZE
  local engine=$1 size=$2 q peer_file gh_file
  for q in "${!QUERIES[@]}"; do
    gh_file="$OUT/check-$engine-$size-${NAMES[$q]}.json"
    peer_file="$OUT/check-peer-${NAMES[$q]}.json"
    curl -sS -o "$gh_file" "$(url "$GH_BASE" "$q")"
    if [[ "$size" == "$BASE_ROWS" && "$PEER_STARTED" == 1 && ! -f "$peer_file" ]]; then
      curl -fsS -o "$peer_file" "$(url "$PEER_BASE" "$q")"
    fi
    [[ "$size" == "$BASE_ROWS" ]] || peer_file=""
    python3 - "$gh_file" "$peer_file" "$engine $size ${NAMES[$q]}" "${QUERIES[$q]}" <<'EOF' | tee -a "$CHECKS"
import json, os, sys
from decimal import Decimal, InvalidOperation
from urllib.parse import unquote
gh_file, peer_file, name, query = sys.argv[1:5]
# The $orderby properties of the query, in order ("price desc" -> price).
orderby = []
for option in query.split("&"):
    key, _, value = option.partition("=")
    if unquote(key) == "$orderby":
        orderby = [term.split()[0] for term in unquote(value).split(",") if term.strip()]

def norm(v):
    # Edm.Decimal is a number in Gatehouse's answer, a string in the peer's.
    if isinstance(v, (int, float, str)) and not isinstance(v, bool):
        try:
            return Decimal(str(v))
        except InvalidOperation:
            pass
    return v

def ordered(entities):
    return [tuple(norm(e.get(p)) for p in orderby) for e in entities]

def ties(entities):
    # How runs of equal ordered values are ordered by the key.
    vals, ids, seen = ordered(entities), [e.get("ID") for e in entities], set()
    for i in range(1, len(ids)):
        if vals[i] == vals[i - 1]:
            seen.add("ascending" if ids[i] > ids[i - 1] else "descending")
    return "/".join(sorted(seen)) or "none"
raw = open(gh_file, "rb").read()
try:
    gh = json.loads(raw)
except ValueError:
    print("- %s: WARNING: Gatehouse did not answer JSON: %r" % (name, raw[:300])); sys.exit(0)
if "value" not in gh:
    print("- %s: WARNING: Gatehouse answered %s" % (name, json.dumps(gh)[:300])); sys.exit(0)
ids = [e.get("ID") for e in gh["value"]]
line = "- %s: Gatehouse %d rows, %d B" % (name, len(ids), len(raw))
if "@odata.count" in gh:
    line += ", @odata.count %s" % gh["@odata.count"]
if peer_file and os.path.exists(peer_file):
    peer = json.load(open(peer_file, "rb"))
    pids = [e.get("ID") for e in peer["value"]]
    if gh.get("@odata.count") != peer.get("@odata.count"):
        line += "; WARNING: @odata.count %s vs the peer's %s" % (gh.get("@odata.count"), peer.get("@odata.count"))
    elif ids == pids:
        line += "; same entities and count as the peer"
    elif not orderby:
        line += "; WARNING: entities differ from the peer's (first IDs %s vs %s)" % (ids[:5], pids[:5])
    elif ordered(gh["value"]) != ordered(peer["value"]):
        # Without the same $orderby values in the same sequence, a different tie order explains nothing.
        line += "; WARNING: %s values differ from the peer's (%d vs %d rows; first %s vs %s)" % (
            ", ".join(orderby), len(ids), len(pids),
            [str(v[0]) if len(v) == 1 else v for v in ordered(gh["value"])[:5]],
            [str(v[0]) if len(v) == 1 else v for v in ordered(peer["value"])[:5]])
    else:
        # Both are stable OData orders: equal values may be ordered by the key either way.
        line += "; same order values (%s) and count as the peer, ties broken by the key %s (the peer: %s)" % (
            ", ".join(orderby), ties(gh["value"]), ties(peer["value"]))
        if sorted(ids) != sorted(pids):
            line += "; the last run of equal values, cut by $top, holds other keys"
print(line)
EOF
  done
  local name sqlf got db
  db="$(db_name "$size")"
  for name in "${NAMES[@]}"; do
    sqlf="$OUT/sql/$engine-$name.sql"
    case "$engine" in
      postgres) sqlf="$OUT/sql/$engine-$name-inline.sql" # psql has no pgbench variables
                got=$("${PSQL[@]}" -d "$db" -F $'\t' -f "$sqlf" | awk -F '\t' '{n++; c = $NF} END {print n + 0, c}') ;;
      mariadb) got=$("${MYSQL[@]}" "$db" <"$sqlf" | awk -F '\t' '{n++; c = $NF} END {print n + 0, c}') ;;
      *) continue ;; # odata_raw reports rows= and count= with every SQLite limit run
    esac
    if [[ "$name" == q3-* ]]; then
      echo "- $engine $size $name: limit statement returns ${got% *} rows, __count ${got#* }" | tee -a "$CHECKS"
    else
      echo "- $engine $size $name: limit statement returns ${got% *} rows" | tee -a "$CHECKS"
    fi
  done
}

# --- phase bench ----------------------------------------------------------------------
if has "$PHASES" bench; then
  echo "== bench: $ROUNDS rounds at $BASE_ROWS rows (+ $ROUNDS_LARGE at other sizes); wrk -t$THREADS -c$CONNS -d$DURATION --latency after a $WARMUP warm-up; limits at $CONNS clients"
  start=$(date +%s)
  for round in $(seq 1 "$ROUNDS"); do
    echo "-- round $round ($(date +%H:%M:%S))"
    for engine in $ENGINES; do
      for size in $SIZES; do
        if [[ "$size" == "$BASE_ROWS" ]]; then
          start_gh "$engine" "$size"
          if [[ "$round" == 1 ]]; then
            fact "$size" "$engine" rss_idle_kb "$(rss_kb "$GH_PID")"
            check "$engine" "$size"
          fi
          for q in "${!QUERIES[@]}"; do
            [[ "$PEER_STARTED" == 1 ]] && bench "$size" "$engine" peer "$PEER_PID" "$PEER_BASE" "$q" "$round" "$CONNS"
            bench "$size" "$engine" gatehouse "$GH_PID" "$GH_BASE" "$q" "$round" "$CONNS"
            limits "$size" "$engine" "$q" "$round"
          done
        elif ((round <= ROUNDS_LARGE)); then
          start_gh "$engine" "$size"
          [[ "$round" == 1 ]] && check "$engine" "$size"
          for q in "${!QUERIES[@]}"; do
            bench "$size" "$engine" gatehouse "$GH_PID" "$GH_BASE" "$q" "$round" "$CONNS"
            limits "$size" "$engine" "$q" "$round"
          done
        else
          continue
        fi
        fact "$size" "$engine" "hwm_c${CONNS}_r${round}_kb" "$(hwm_kb "$GH_PID")"
        stop_gh
      done
    done
  done
  if has "$SIZES" "$BASE_ROWS"; then
    echo "-- Gatehouse alone at $RSS_CONNS connections, $BASE_ROWS rows ($(date +%H:%M:%S))"
    for engine in $ENGINES; do
      start_gh "$engine" "$BASE_ROWS"
      for q in "${!QUERIES[@]}"; do
        bench "$BASE_ROWS" "$engine" gatehouse "$GH_PID" "$GH_BASE" "$q" 1 "$RSS_CONNS"
      done
      fact "$BASE_ROWS" "$engine" "hwm_c${RSS_CONNS}_kb" "$(hwm_kb "$GH_PID")"
      stop_gh
    done
  fi
  [[ "$PEER_STARTED" == 1 ]] && fact "$BASE_ROWS" peer hwm_kb "$(hwm_kb "$PEER_PID")"
  stop_peer
  echo "bench phase: $(($(date +%s) - start)) s"

  python3 bench/odata_report.py "$OUT" --page-size "$PAGE_SIZE" --conns "$CONNS" --rss-conns "$RSS_CONNS" \
    --duration "$DURATION" --warmup "$WARMUP" --rounds "$ROUNDS" --rounds-large "$ROUNDS_LARGE" \
    --base-rows "$BASE_ROWS" --engines "$ENGINES" --sizes "$SIZES" >"$OUT/results.md"
  echo
  cat "$OUT/results.md"
  cp "$OUT/results.md" "$ROOT/bench/out/odata-latest.md"
fi

# --- phase plans ------------------------------------------------------------------------
if has "$PHASES" plans; then
  echo
  echo "== plans: statements and plans, one request per query ($BASE_ROWS rows)"
  PLANS="$OUT/plans.md"
  pdb="$(db_name "$BASE_ROWS")"
  plan_args=()
  if has "$ENGINES" postgres; then
    [[ -r "$PG_LOG" ]] || die "cannot read $PG_LOG (set PG_LOG)"
    in_list=$(printf "'%s'," "${PG_SETTINGS[@]}")
    set_already=$("${PSQL[@]}" -d postgres -c "SELECT string_agg(name, ', ') FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' AND name IN (${in_list%,})")
    [[ -z "$set_already" ]] || die "postgresql.auto.conf already sets $set_already: not changing it (the plans phase resets these settings afterwards)"
    offset=$(stat -c %s "$PG_LOG")
    PG_CHANGED=1
    "${PSQL[@]}" -d postgres -c "LOAD 'auto_explain'" -c "ALTER SYSTEM SET log_min_duration_statement = 0" \
      -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
      -c "ALTER SYSTEM SET auto_explain.log_min_duration = 0" -c "ALTER SYSTEM SET auto_explain.log_analyze = on" \
      -c "ALTER SYSTEM SET auto_explain.log_buffers = on" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    start_gh postgres "$BASE_ROWS"
    for q in "${!QUERIES[@]}"; do
      "${PSQL[@]}" -d "$pdb" -c "SELECT 'gh-plan-marker ${NAMES[$q]}'" >/dev/null
      curl -fsS -o /dev/null "$(url "$GH_BASE" "$q")"
      sleep 0.3
    done
    "${PSQL[@]}" -d "$pdb" -c "SELECT 'gh-plan-marker end'" >/dev/null
    stop_gh
    pg_restore_settings
    tail -c +"$((offset + 1))" "$PG_LOG" >"$OUT/plans-pg.log"
    plan_args+=(--pg-log "$OUT/plans-pg.log" --pg-expect "$OUT/sql/postgres.txt")
  fi
  if has "$ENGINES" mariadb; then
    MY_GENERAL_LOG=$("${MYSQL[@]}" -e "SELECT @@global.general_log")
    MY_LOG_OUTPUT=$("${MYSQL[@]}" -e "SELECT @@global.log_output")
    MY_LOG_ROWS=$("${MYSQL[@]}" -e "SELECT count(*) FROM mysql.general_log")
    since=$("${MYSQL[@]}" -e "SELECT NOW(6)")
    MY_CHANGED=1
    "${MYSQL[@]}" -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
    start_gh mariadb "$BASE_ROWS"
    for q in "${!QUERIES[@]}"; do
      "${MYSQL[@]}" "$pdb" -e "SELECT 'gh-plan-marker ${NAMES[$q]}'" >/dev/null
      curl -fsS -o /dev/null "$(url "$GH_BASE" "$q")"
      sleep 0.3
    done
    "${MYSQL[@]}" "$pdb" -e "SELECT 'gh-plan-marker end'" >/dev/null
    stop_gh
    "${MYSQL[@]}" -e "SELECT event_time, thread_id, command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE event_time >= '$since' ORDER BY event_time" >"$OUT/plans-my.tsv"
    my_restore_settings
    plan_args+=(--my-log "$OUT/plans-my.tsv" --my-expect "$OUT/sql/mariadb-inline.tsv")
  fi
  if ((${#plan_args[@]})); then
    python3 bench/odata_engines_plans.py --db "$pdb" "${plan_args[@]}" >"$PLANS"
    echo "plans: $PLANS"
    grep -E '^(##|- )' "$PLANS" || true
  else
    echo "plans: nothing to do (PostgreSQL and MariaDB are not in ENGINES)"
  fi
fi
echo
echo "output: $OUT"

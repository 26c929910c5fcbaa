#!/usr/bin/env bash
# OData reads on a PostgreSQL streaming replica against reads on the
# primary, in one run on this machine: the four reference queries
# (bench/odata_lib.sh: q1 the default page, q2 a filter with an order and
# $top, q3 $count with $top, q4 a deep $skip) on the 100,000 Items, with
# Gatehouse reading from the primary (`databases.main.url`) and with
# Gatehouse reading from one standby (`odata.replicas`). Primary and standby
# run on the same machine, so this checks what reading through a replica
# costs or saves per request, not how reads scale over several servers.
#
#   SKIP_BUILD=1 bash bench/odata_replica.sh
#
# The script starts a PostgreSQL primary and one streaming standby of its
# own (the machine's server binaries: `pg_config --bindir` if it holds
# initdb, else the highest /usr/lib/postgresql/*/bin; initdb, pg_basebackup
# -R, pg_ctl; as the postgres OS user under root) in a directory under /tmp,
# on free ports on 127.0.0.1 (never the shared server on 5432), and stops
# and removes them on exit. It loads the Items into the primary
# (bench/odata_engines_data.py), applies Gatehouse's migrations, runs
# VACUUM ANALYZE and a checkpoint on both servers, and waits until the
# standby has replayed all of it. Two Gatehouse configurations
# (bench/odata_lib.sh's, pointed at this primary): `primary` (no replicas)
# and `replica` (`odata.replicas` = the standby).
# Both are checked to answer every query with the same body, and the
# standby's statement log (log_statement = all for one q2 request, on both
# servers) to show the q2 statement on the standby and not on the primary.
# Then ROUNDS rounds: Gatehouse started with one configuration, wrk on each
# query (-t2 -c16 -dDURATION after a WARMUP run), stopped, started with the
# other, the same again; the order alternates between rounds, so that each
# round's ratio compares measurements made a minute apart.
# Results: $OUT/runs.tsv (query, round, configuration, req/s, p50 and p99
# latency in ms, non-2xx responses, socket errors), $OUT/summary.md
# (medians, median of the per-round ratios, latencies, the standby check),
# the servers' logs (postgres-primary.log, postgres-standby.log) and
# Gatehouse's (gatehouse-primary-100000.log, gatehouse-replica-100000.log).
#
# Environment: ROUNDS=3, DURATION=8s, WARMUP=2s, SKIP_BUILD=1 (use the
# release binary in TARGET_DIR as it is; default TARGET_DIR is this tree's
# target/), GH_BIN=$TARGET_DIR/release/gatehouse, GH_PORT=8713,
# PG_PRIMARY_PORT and PG_STANDBY_PORT (default: free ports),
# OUT=bench/out/replica-<timestamp>.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-8s}"
WARMUP="${WARMUP:-2s}"
TARGET_DIR="${TARGET_DIR:-$ROOT/target}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PORT="${GH_PORT:-8713}"
GH_PROFILE="${GH_PROFILE:-release}"
# shellcheck disable=SC2034 # BASE_ROWS, PAGE_SIZE, DATA, GH_BASE: read by odata_lib.sh
BASE_ROWS=100000
# shellcheck disable=SC2034
PAGE_SIZE=1000
# shellcheck disable=SC2034
DATA="$ROOT/bench/out/data"
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
OUT="${OUT:-$ROOT/bench/out/replica-$(date +%Y%m%d-%H%M%S)}"
export PGSSLMODE=disable

die() { echo "odata_replica.sh: $*" >&2; exit 1; }
# shellcheck disable=SC1091 # shellcheck -x follows it
source "$ROOT/bench/odata_lib.sh"

# Gatehouse's database is this run's own primary (odata_lib.sh's db_url
# names the shared server on 5432).
db_url() { # db_url ENGINE SIZE
  [[ "$1" == postgres ]] || die "odata_replica.sh runs on PostgreSQL only, not '$1'"
  echo "postgres://postgres@127.0.0.1:$PRIMARY_PORT/gh_bench"
}

[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS is a whole number, not '$ROUNDS'"
secs "$DURATION" >/dev/null
secs "$WARMUP" >/dev/null
for tool in curl python3 wrk psql; do
  command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk; psql: apt-get install postgresql-client)"
done

# PostgreSQL's server binaries: pg_config --bindir if it holds initdb, else
# the highest /usr/lib/postgresql/VERSION/bin that does.
pg_bindir() {
  local dir best="" version top=-1
  dir="$(pg_config --bindir 2>/dev/null || true)"
  if [[ -n "$dir" && -x "$dir/initdb" ]]; then echo "$dir"; return; fi
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x "$dir/initdb" ]] || continue
    version="${dir#/usr/lib/postgresql/}"
    version="${version%%/*}"
    version="${version%%.*}"
    [[ "$version" =~ ^[0-9]+$ ]] || continue
    if ((version > top)); then top=$version; best=$dir; fi
  done
  [[ -n "$best" ]] && echo "$best"
}
PG_BIN="$(pg_bindir)" || die "no PostgreSQL server binaries (initdb) through pg_config --bindir or in /usr/lib/postgresql/*/bin (apt-get install postgresql)"
if ((EUID == 0)); then
  id postgres >/dev/null 2>&1 || die "running as root, and there is no postgres OS user to run the servers"
  command -v runuser >/dev/null || die "running as root: runuser is required to run the servers as postgres"
fi

# Two free ports on 127.0.0.1, unless given.
if [[ -z "${PG_PRIMARY_PORT:-}" || -z "${PG_STANDBY_PORT:-}" ]]; then
  read -r free1 free2 < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
fi
PRIMARY_PORT="${PG_PRIMARY_PORT:-$free1}"
STANDBY_PORT="${PG_STANDBY_PORT:-$free2}"
for port in "$PRIMARY_PORT" "$STANDBY_PORT"; do
  [[ "$port" =~ ^[0-9]+$ && "$port" != 5432 ]] || die "PostgreSQL ports: '$port' is not a free port of this run's own (5432 is the shared server)"
done
[[ "$PRIMARY_PORT" != "$STANDBY_PORT" ]] || die "PG_PRIMARY_PORT and PG_STANDBY_PORT are the same"
STANDBY_URL="postgres://postgres@127.0.0.1:$STANDBY_PORT/gh_bench"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
[[ -x "$GH_BIN" ]] || die "no Gatehouse binary at $GH_BIN (build it, or set TARGET_DIR/GH_BIN)"
mkdir -p "$OUT"
echo "output: $OUT"

# --- the servers --------------------------------------------------------------
PG_DIR=""
pg_run() { # pg_run PROGRAM ARGS...: a server program, as postgres under root
  local program="$PG_BIN/$1"
  shift
  if ((EUID == 0)); then
    (cd "$PG_DIR" && runuser -u postgres -- "$program" "$@")
  else
    (cd "$PG_DIR" && "$program" "$@")
  fi
}
pq() { # pq PORT ARGS...: psql on this run's server at PORT
  local port=$1
  shift
  psql -h 127.0.0.1 -p "$port" -U postgres -X -qAt -v ON_ERROR_STOP=1 "$@"
}
pg_up() { # pg_up NODE: whether NODE's server runs
  [[ -n "$PG_DIR" && -f "$PG_DIR/$1/data/postmaster.pid" ]]
}
pg_stop() { # pg_stop NODE
  if pg_up "$1"; then
    pg_run pg_ctl stop -D "$PG_DIR/$1/data" -m fast -w -t 60 >/dev/null 2>&1 ||
      pg_run pg_ctl stop -D "$PG_DIR/$1/data" -m immediate -w -t 30 >/dev/null 2>&1 || true
  fi
}
cleanup() {
  stop_gh
  local node
  for node in standby primary; do
    pg_stop "$node"
    if [[ -n "$PG_DIR" && -f "$PG_DIR/$node/server.log" ]]; then
      cp "$PG_DIR/$node/server.log" "$OUT/postgres-$node.log" 2>/dev/null || true
    fi
  done
  if [[ -n "$PG_DIR" ]]; then rm -rf "$PG_DIR"; fi
  PG_DIR=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PG_DIR="$(mktemp -d /tmp/gatehouse-replica-XXXXXX)"
chmod 755 "$PG_DIR"
mkdir "$PG_DIR/primary" "$PG_DIR/standby"
if ((EUID == 0)); then chown -R postgres: "$PG_DIR/primary" "$PG_DIR/standby"; fi

# No hot_standby_feedback: with it, the VACUUM after the load may still see
# an old xmin of the standby's and leave the pages not all-visible, and q4's
# index-only scan then reads every row from the table (half the rate).
pg_configure() { # pg_configure NODE PORT: settings, then the node's own port and socket directory
  cat >>"$PG_DIR/$1/data/postgresql.conf" <<CONF

# bench/odata_replica.sh
listen_addresses = '127.0.0.1'
port = $2
unix_socket_directories = '$PG_DIR/$1'
wal_level = replica
max_wal_senders = 10
wal_keep_size = '512MB'
hot_standby = on
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
logging_collector = off
log_statement = 'none'
CONF
}
pg_start() { # pg_start NODE PORT: returns once it accepts connections
  pg_run pg_ctl start -D "$PG_DIR/$1/data" -l "$PG_DIR/$1/server.log" -w -t 60 >/dev/null ||
    { tail -20 "$PG_DIR/$1/server.log" >&2; die "the $1 server did not start (log above)"; }
  for _ in $(seq 1 300); do
    pq "$2" -d postgres -c 'SELECT 1' >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "the $1 server does not accept connections on port $2"
}
# Waits until the standby has replayed everything committed on the primary
# so far. Commits are asynchronous (synchronous_commit = off): a synchronous
# one that writes WAL first writes out all earlier ones.
wait_replayed() {
  local lsn
  pq "$PRIMARY_PORT" -d postgres -c "SET synchronous_commit = on" \
    -c "SELECT pg_logical_emit_message(true, 'sync', '')" >/dev/null
  lsn="$(pq "$PRIMARY_PORT" -d postgres -c 'SELECT pg_current_wal_lsn()')"
  for _ in $(seq 1 600); do
    if [[ "$(pq "$STANDBY_PORT" -d postgres -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" == t ]]; then
      echo "   the standby replayed the primary's WAL up to $lsn"
      return
    fi
    sleep 0.1
  done
  die "the standby did not replay the primary's WAL up to $lsn within 60 s"
}

PG_VERSION="$("$PG_BIN/postgres" --version)"
echo "== PostgreSQL ($PG_VERSION, $PG_BIN): primary on 127.0.0.1:$PRIMARY_PORT, standby on 127.0.0.1:$STANDBY_PORT, in $PG_DIR"
pg_run initdb -D "$PG_DIR/primary/data" -U postgres --auth=trust -E UTF8 --no-locale --no-sync >"$OUT/initdb.log" 2>&1 ||
  { tail -20 "$OUT/initdb.log" >&2; die "initdb failed (log above)"; }
pg_configure primary "$PRIMARY_PORT"
cat >"$PG_DIR/primary/data/pg_hba.conf" <<'HBA'
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
HBA
pg_start primary "$PRIMARY_PORT"
pg_run pg_basebackup -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$PG_DIR/standby/data" \
  -R -X stream -c fast --no-sync >"$OUT/pg_basebackup.log" 2>&1 ||
  { tail -20 "$OUT/pg_basebackup.log" >&2; die "pg_basebackup failed (output above)"; }
pg_configure standby "$STANDBY_PORT"
pg_start standby "$STANDBY_PORT"
[[ "$(pq "$STANDBY_PORT" -d postgres -c 'SELECT pg_is_in_recovery()')" == t ]] || die "the standby is not in recovery"
for _ in $(seq 1 100); do
  streaming="$(pq "$PRIMARY_PORT" -d postgres -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")"
  [[ "$streaming" == 1 ]] && break
  sleep 0.1
done
[[ "$streaming" == 1 ]] || die "the standby does not stream from the primary (pg_stat_replication)"
echo "   the standby streams from the primary"

# --- the data and Gatehouse's configurations ----------------------------------
echo "== loading the Items into the primary"
python3 "$ROOT/bench/odata_engines_data.py" --rows "$BASE_ROWS" --engines postgres --db gh_bench \
  --pg-host 127.0.0.1 --pg-port "$PRIMARY_PORT" --pg-user postgres

write_config postgres "$BASE_ROWS"
mv "$OUT/Rocket-postgres-$BASE_ROWS.toml" "$OUT/Rocket-primary-$BASE_ROWS.toml"
cp "$OUT/Rocket-primary-$BASE_ROWS.toml" "$OUT/Rocket-replica-$BASE_ROWS.toml"
# `replicas` belongs to the [PROFILE.odata] table: under its header when
# write_config wrote one (STATEMENT_TIMEOUT_MS), else a table of its own at
# the end (TOML allows a table after its sub-tables, once).
replicas_line="replicas = [\"$STANDBY_URL\"]"
if grep -qxF "[$GH_PROFILE.odata]" "$OUT/Rocket-replica-$BASE_ROWS.toml"; then
  awk -v header="[$GH_PROFILE.odata]" -v line="$replicas_line" '{ print } $0 == header { print line }' \
    "$OUT/Rocket-replica-$BASE_ROWS.toml" >"$OUT/Rocket-replica.tmp"
  mv "$OUT/Rocket-replica.tmp" "$OUT/Rocket-replica-$BASE_ROWS.toml"
else
  printf '\n# OData reads on the standby.\n[%s.odata]\n%s\n' "$GH_PROFILE" "$replicas_line" >>"$OUT/Rocket-replica-$BASE_ROWS.toml"
fi
python3 - "$GH_PROFILE" "$STANDBY_URL" "$OUT/Rocket-primary-$BASE_ROWS.toml" "$OUT/Rocket-replica-$BASE_ROWS.toml" <<'PY' ||
import sys, tomllib
profile, standby, primary, replica = sys.argv[1:]
def odata(path):
    with open(path, "rb") as f:
        return tomllib.load(f)[profile]["odata"]
assert "replicas" not in odata(primary), "the primary configuration names replicas"
assert odata(replica).get("replicas") == [standby], "the replica configuration does not name the standby"
assert "Items" in odata(replica)["sets"], "the replica configuration lost the Items set"
PY
  die "the Gatehouse configurations are not what they should be"

echo "== Gatehouse's migrations on the primary, VACUUM ANALYZE"
ROCKET_CONFIG="$OUT/Rocket-primary-$BASE_ROWS.toml" ROCKET_PROFILE="$GH_PROFILE" RUST_LOG=warn \
  "$GH_BIN" migrate >>"$OUT/gatehouse-migrate.log" 2>&1 ||
  { tail -20 "$OUT/gatehouse-migrate.log" >&2; die "gatehouse migrate failed (log above)"; }
wait_replayed
pq "$PRIMARY_PORT" -d gh_bench -c 'VACUUM ANALYZE'
wait_replayed
# A checkpoint on the primary, replayed, then one on the standby (a
# restartpoint): until the standby has flushed past the load's commit it may
# not set the rows' hint bits, and every row it reads asks the commit log
# (q3 at about half the primary's rate otherwise, on fresh data).
pq "$PRIMARY_PORT" -d gh_bench -c 'CHECKPOINT'
wait_replayed
pq "$STANDBY_PORT" -d gh_bench -c 'CHECKPOINT'
echo "   items: $(pq "$PRIMARY_PORT" -d gh_bench -c "SELECT relallvisible || ' of ' || relpages FROM pg_class WHERE relname = 'items'") pages all-visible (index-only scans need no heap fetch)"
[[ "$(pq "$STANDBY_PORT" -d gh_bench -c 'SELECT count(*) FROM items')" == "$BASE_ROWS" ]] ||
  die "the standby does not hold the $BASE_ROWS Items"

# --- Gatehouse on either configuration ----------------------------------------
# Gatehouse asks the replica for its replay position once at start and
# every second: the replica configuration is measured only once the replica
# is in use, and a replica skipped since start fails the run.
from_line=1
start_config() { # start_config primary|replica
  local log="$OUT/gatehouse-$1-$BASE_ROWS.log"
  from_line=$(($( (cat "$log" 2>/dev/null || true) | wc -l) + 1))
  start_gh "$1" "$BASE_ROWS"
  [[ "$1" == replica ]] || return 0
  for _ in $(seq 1 100); do
    tail -n +"$from_line" "$log" | grep -Eq "127\.0\.0\.1:$STANDBY_PORT \(in use\)|OData replica 127\.0\.0\.1:$STANDBY_PORT in use" && return 0
    sleep 0.1
  done
  tail -n +"$from_line" "$log" >&2
  die "Gatehouse did not put the standby in use within 10 s (its log above)"
}
replica_skips() { # replica_skips: lines of the replica log since start_config saying the standby was skipped
  tail -n +"$from_line" "$OUT/gatehouse-replica-$BASE_ROWS.log" | grep -c 'skipped' || true
}

echo "== the same answers on both configurations"
for config in primary replica; do
  start_config "$config"
  for i in "${!NAMES[@]}"; do
    curl -fsS "$(url "$GH_BASE" "$i")" -o "$OUT/body-$config-${NAMES[$i]}.json" ||
      die "Gatehouse ($config) failed ${NAMES[$i]}"
  done
  if [[ "$config" == replica ]]; then
    # Where the reads run: every statement logged on both servers for one
    # q2 request (category 'cat3').
    echo "== where the reads run: one q2 request with log_statement = all on both servers"
    slog="$PG_DIR/standby/server.log" plog="$PG_DIR/primary/server.log"
    for port in "$STANDBY_PORT" "$PRIMARY_PORT"; do
      pq "$port" -d postgres -c "ALTER SYSTEM SET log_statement = 'all'" -c 'SELECT pg_reload_conf()' >/dev/null
    done
    sleep 1
    standby_from=$(($(stat -c %s "$slog") + 1)) primary_from=$(($(stat -c %s "$plog") + 1))
    curl -fsS -o /dev/null "$(url "$GH_BASE" 1)" || die "Gatehouse (replica) failed q2"
    sleep 0.5
    tail -c +"$standby_from" "$slog" >"$OUT/standby-q2.log"
    tail -c +"$primary_from" "$plog" >"$OUT/primary-q2.log"
    for port in "$STANDBY_PORT" "$PRIMARY_PORT"; do
      pq "$port" -d postgres -c 'ALTER SYSTEM RESET log_statement' -c 'SELECT pg_reload_conf()' >/dev/null
    done
    on_standby=$(grep -c "cat3" "$OUT/standby-q2.log" || true)
    on_primary=$(grep -c "cat3" "$OUT/primary-q2.log" || true)
    {
      echo "standby (127.0.0.1:$STANDBY_PORT) log lines naming 'cat3' for one q2 request: $on_standby"
      grep -B1 "cat3" "$OUT/standby-q2.log" | head -6 | cut -c1-300 | sed 's/^/  /' || true
      echo "primary (127.0.0.1:$PRIMARY_PORT) log lines naming 'cat3' for the same request: $on_primary"
    } | tee "$OUT/standby-check.txt"
    if ((on_standby == 0 || on_primary > 0)); then
      die "the q2 read did not run on the standby alone (see $OUT/standby-q2.log, $OUT/primary-q2.log)"
    fi
    echo "standby check: passed (q2 ran on the standby, not on the primary)" | tee -a "$OUT/standby-check.txt"
    skips=$(replica_skips)
    ((skips == 0)) || die "Gatehouse skipped the standby during the check ($OUT/gatehouse-replica-$BASE_ROWS.log)"
  fi
  stop_gh
done
for i in "${!NAMES[@]}"; do
  a="$OUT/body-primary-${NAMES[$i]}.json" b="$OUT/body-replica-${NAMES[$i]}.json"
  if ! cmp -s "$a" "$b"; then
    diff <(python3 -m json.tool "$a") <(python3 -m json.tool "$b") | head -20 >&2 || true
    die "${NAMES[$i]}: the replica configuration answers differently from the primary one ($a, $b)"
  fi
  echo "   ${NAMES[$i]}: the same body ($(wc -c <"$a") bytes)"
done

# --- measuring ----------------------------------------------------------------
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
latency() { # latency FILE PERCENT: wrk --latency's PERCENT% latency in ms
  awk -v p="$2%" '$1 == p {
    v = $2
    if (v ~ /us$/) { sub(/us$/, "", v); v = v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v) }
    else if (v ~ /s$/) { sub(/s$/, "", v); v = v * 1000 }
    else if (v ~ /m$/) { sub(/m$/, "", v); v = v * 60000 }
    printf "%.3f\n", v; exit }' "$1"
}
non2xx() { awk '/Non-2xx or 3xx responses:/ {n = $NF} END {print n + 0}' "$1"; }
socket_errors() { # connect, read, write and timeout errors
  awk '/Socket errors:/ { gsub(/,/, ""); n = $4 + $6 + $8 + $10 } END {print n + 0}' "$1"
}
measure() { # measure URL FILE
  wrk -t2 -c16 -d"$WARMUP" "$1" >/dev/null
  wrk -t2 -c16 -d"$DURATION" --latency "$1" >"$2"
}

printf 'query\tround\tconfig\treq_s\tp50_ms\tp99_ms\tnon2xx\tsocket_errors\n' >"$OUT/runs.tsv"
skipped_total=0
for round in $(seq 1 "$ROUNDS"); do
  if ((round % 2)); then order=(primary replica); else order=(replica primary); fi
  echo "== round $round/$ROUNDS: ${order[0]}, then ${order[1]}"
  for config in "${order[@]}"; do
    start_config "$config"
    for i in "${!NAMES[@]}"; do
      name="${NAMES[$i]}" file="$OUT/$name-$round-$config.wrk"
      measure "$(url "$GH_BASE" "$i")" "$file"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$config" "$(rate "$file")" \
        "$(latency "$file" 50)" "$(latency "$file" 99)" "$(non2xx "$file")" "$(socket_errors "$file")" >>"$OUT/runs.tsv"
      echo "   $config $name: $(rate "$file") req/s, p50 $(latency "$file" 50) ms, p99 $(latency "$file" 99) ms"
    done
    if [[ "$config" == replica ]]; then
      skips=$(replica_skips)
      if ((skips > 0)); then
        echo "   warning: Gatehouse logged $skips line(s) skipping the standby in round $round" >&2
        skipped_total=$((skipped_total + skips))
      fi
    fi
    stop_gh
  done
done

SUMMARY_HEAD="Gatehouse $GH_BIN, the four reference queries on the $BASE_ROWS Items;
$PG_VERSION, a primary and one streaming standby of this run's own on
127.0.0.1 (both on this machine: a check of overhead, not of scale).
wrk -t2 -c16 -d$DURATION --latency after a $WARMUP warm-up, $ROUNDS rounds,
the order of the two configurations alternating between rounds." \
  python3 - "$OUT/runs.tsv" "$OUT/standby-check.txt" "$skipped_total" "$SECONDS" >"$OUT/summary.md" <<'PY'
import csv, os, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
queries = list(dict.fromkeys(r["query"] for r in runs))
def med(query, config, column):
    return statistics.median(float(r[column]) for r in runs if (r["query"], r["config"]) == (query, config))
print("# OData reads: primary vs one streaming replica")
print()
print(os.environ["SUMMARY_HEAD"])
print()
print("| query | primary req/s (median) | replica req/s (median) | replica / primary (median of per-round ratios) |")
print("|---|---|---|---|")
for q in queries:
    by_round = {}
    for r in runs:
        if r["query"] == q:
            by_round.setdefault(r["round"], {})[r["config"]] = float(r["req_s"])
    ratio = statistics.median(v["replica"] / v["primary"] for v in by_round.values())
    print(f"| {q} | {med(q, 'primary', 'req_s'):,.0f} | {med(q, 'replica', 'req_s'):,.0f} | {ratio:.2f} |")
print()
print("Latency (wrk --latency, ms, median over rounds):")
print()
print("| query | primary p50 | replica p50 | primary p99 | replica p99 |")
print("|---|---|---|---|---|")
for q in queries:
    cells = [med(q, c, col) for col in ("p50_ms", "p99_ms") for c in ("primary", "replica")]
    print(f"| {q} | " + " | ".join(f"{v:.2f}" for v in cells) + " |")
print()
bad = [r for r in runs if int(r["non2xx"]) or int(r["socket_errors"])]
if bad:
    print("Errors: " + "; ".join(f"{r['query']} round {r['round']} {r['config']}: {r['non2xx']} non-2xx, "
                                 f"{r['socket_errors']} socket errors" for r in bad) + ".")
else:
    print("No non-2xx responses and no socket errors in any run.")
print(f"Gatehouse log lines skipping the standby during the replica runs: {int(sys.argv[3])}.")
print()
print("Where the reads run (log_statement = all on both servers for one q2 request):")
print()
print("```")
print(open(sys.argv[2]).read().rstrip())
print("```")
print()
seconds = int(sys.argv[4])
print(f"Total run time: {seconds} s ({seconds // 60} min {seconds % 60} s).")
PY
cat "$OUT/summary.md"

#!/usr/bin/env bash
# Walking a large collection by its OData next links, on SQLite, PostgreSQL
# and MariaDB: whether a page deep in a 1,000,000-row table costs what the
# first page costs, now that a next link carries a signed $skiptoken (the
# last row's order values and key) beside $skip, against the engine's own
# keyset loop over the same rows and against paging by $skip (OFFSET) alone,
# and how much memory the whole table in one page takes. The Items rows of
# bench/odata.sh (../shared/bench/gen_items.py, with the peer's two indexes
# and ANALYZE; bench/odata_data.py writes the SQLite file,
# bench/odata_engines_data.py the PostgreSQL and MariaDB databases
# gh_bench_<rows>), Gatehouse configured and started by bench/odata_lib.sh.
#
#   bash bench/odata_walk.sh
#
# Per engine, one Gatehouse process at a time (never two at once), the
# client bench/odata_walk.py on one persistent HTTP/1.1 connection, every
# request with `Prefer: odata.maxpagesize=PAGE` (pagination.default and .max
# are PAGE too):
#   1. plain walk: GET /odata/Items, then every @odata.nextLink verbatim until
#      none. Per page the client's wall time from the request to the body's
#      last byte (the JSON is parsed and checked after the clock stops).
#      Reported: pages, mean ms of the first ten and of the last ten pages
#      and their ratio (goal: last ten <= 1.5 x first ten), median, the
#      slowest page, the mean of each tenth of the walk, and the total (the
#      sum of the pages' times). Checked: IDs 1..ROWS, each once, in order,
#      and every other property as gen_items.py makes it.
#   2. shaped walk: the same from
#      /odata/Items?$filter=category eq 'cat3'&$orderby=price desc&$select=ID,price
#      (ROWS/10 matches), checked against the rows computed from
#      gen_items.py's formulas (i % 10 == 3, price desc, then ID desc: the
#      server appends the key in the last $orderby term's direction).
#   Each walk runs ROUNDS times in a row (round 1 warms the engine's caches
#   and Gatehouse's pool); the figures are the last round's, every round is
#   in pages.tsv and results.md.
#   3. $skip alone (plain shape, once): the first ten pages following the
#      next links with their $skiptoken removed (the server still honours
#      $skip, by OFFSET), then the last ten pages at $skip = ROWS-10*PAGE ..
#      ROWS-PAGE in the same form; mean ms of each ten.
#   4. Gatehouse stopped, the engine's own keyset loop as the reference, a
#      Python client straight on the engine (sqlite3 on the file; psycopg,
#      prepared statements, for PostgreSQL; mysql-connector-python's C
#      extension, else PyMySQL, for MariaDB, installed into WALK_VENV):
#        SELECT <all columns> FROM items [WHERE ID > :last] ORDER BY ID LIMIT PAGE
#        SELECT ID, price FROM items WHERE category = 'cat3'
#          [AND price <= :p AND (price < :p OR ID < :id)] ORDER BY price DESC, ID DESC LIMIT PAGE
#      page after page until a short page, ROUNDS times, each statement's
#      execute and fetch of every row timed; the same checks on its rows.
#      Reported: its total and Gatehouse's total / its total.
#   5. Peak RSS: a fresh Gatehouse whose pagination.max is ROWS (and
#      odata.statement_timeout_ms RSS_TIMEOUT_MS, so that the engine does not
#      cancel the long statement): one ordinary page, VmHWM from
#      /proc/<pid>/status, then GET /odata/Items with
#      `Prefer: odata.maxpagesize=ROWS` (the whole table in one page), read
#      by the client as a stream and discarded (its bytes and entities
#      counted), VmHWM again. Reported: the response's size and the rise
#      (goal: < 16 MB).
#
# Environment (defaults):
#   ENGINES="sqlite postgres mariadb"  ROWS=1000000  PAGE=1000  ROUNDS=2
#   TARGET_DIR=/work/target-release  SKIP_BUILD=1: do not run
#     `CARGO_TARGET_DIR=$TARGET_DIR cargo build --release --bin gatehouse`
#   GH_BIN=$TARGET_DIR/release/gatehouse
#   GH_PROFILE=release (the Rocket profile; a debug build serves debug)
#   GH_PORT=8711  RSS_TIMEOUT_MS=600000
#   FRESH_DATA=1  reload the data sets even if they look complete
#   WALK_VENV=~/.cache/gatehouse-bench/venv (psycopg[binary],
#     mysql-connector-python 8.4.0 and PyMySQL are pip-installed there when missing)
#   WALK_MYSQL_DRIVER=mysql-connector|pymysql (default: mysql-connector, else PyMySQL)
# Output: bench/out/odata-walk-<timestamp>/: results.md (also copied to
# bench/out/odata-walk-latest.md and printed), pages.tsv (engine, walk,
# round, page, skip, rows, bytes, ms: every page of every walk, keyset loop
# and $skip sample), walk-/keyset-/rss-<engine>.json, Gatehouse's configs
# and logs (rss/: the peak-RSS process's). Data: bench/out/data/ (SQLite
# files), PostgreSQL/MariaDB database gh_bench_<rows> (gh_bench at 100,000).
# A full run at 1,000,000 rows, ROUNDS=2, data already loaded and the binary
# built, takes about 3 minutes (most of it the client checking every row);
# loading the three data sets first takes under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
ROWS="${ROWS:-1000000}"
PAGE="${PAGE:-1000}"
ROUNDS="${ROUNDS:-2}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PROFILE="${GH_PROFILE:-release}"
GH_PORT="${GH_PORT:-8711}"
RSS_TIMEOUT_MS="${RSS_TIMEOUT_MS:-600000}"
WALK_VENV="${WALK_VENV:-$HOME/.cache/gatehouse-bench/venv}"
PAGE_SIZE="$PAGE" # odata_lib.sh: pagination.default and .max
BASE_ROWS=100000  # odata_lib.sh: the size whose databases are gh_bench
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
DATA="$ROOT/bench/out/data"
RUN="$ROOT/bench/out/odata-walk-$(date +%Y%m%d-%H%M%S)"
OUT="$RUN" # odata_lib.sh writes configs and logs there
die() { echo "odata_walk.sh: $*" >&2; exit 1; }
# db_name, load_data, write_config, start_gh, stop_gh (GH_PROFILE, PAGE_MAX,
# STATEMENT_TIMEOUT_MS are read by write_config / start_gh)
source "$ROOT/bench/odata_lib.sh"

for e in $ENGINES; do
  [[ "$e" =~ ^(sqlite|postgres|mariadb)$ ]] || die "unknown engine '$e' (sqlite, postgres, mariadb)"
done
for v in ROWS PAGE ROUNDS RSS_TIMEOUT_MS; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v is a positive whole number, not '${!v}'"
done
tools=(curl python3)
has "$ENGINES" postgres && tools+=(psql)
has "$ENGINES" mariadb && tools+=(mariadb)
for tool in "${tools[@]}"; do command -v "$tool" >/dev/null || die "$tool is required"; done

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
[[ -x "$GH_BIN" ]] || die "no Gatehouse binary at $GH_BIN (set GH_BIN, or run without SKIP_BUILD=1)"
mkdir -p "$RUN/rss" "$DATA"
echo "output: $RUN"
started=$(date +%s)

# --- the keyset loop's drivers ----------------------------------------------------------
KEYSET_PY=python3 # sqlite3 is in the standard library
if has "$ENGINES" postgres || has "$ENGINES" mariadb; then
  if [[ ! -x "$WALK_VENV/bin/python" ]]; then
    echo "== creating $WALK_VENV for the keyset loop's drivers"
    python3 -m venv "$WALK_VENV" || die "python3 -m venv $WALK_VENV failed"
  fi
  KEYSET_PY="$WALK_VENV/bin/python"
  need=()
  has "$ENGINES" postgres && ! "$KEYSET_PY" -c 'import psycopg' 2>/dev/null && need+=('psycopg[binary]')
  if has "$ENGINES" mariadb; then
    # Its C extension: newer wheels need OpenSSL 3.2, which Debian 12 lacks; 8.4.0 works.
    "$KEYSET_PY" -c 'import mysql.connector.connection_cext' 2>/dev/null || need+=('mysql-connector-python==8.4.0')
    "$KEYSET_PY" -c 'import pymysql' 2>/dev/null || need+=(PyMySQL)
  fi
  if ((${#need[@]})); then
    echo "== pip install ${need[*]} into $WALK_VENV"
    "$KEYSET_PY" -m pip install --quiet --disable-pip-version-check "${need[@]}" ||
      die "pip install ${need[*]} failed"
  fi
fi

# --- data -----------------------------------------------------------------------------
echo "== data: $ROWS rows ($(date +%H:%M:%S))"
load_data "$ENGINES" "$ROWS"

trap stop_gh EXIT
trap 'exit 130' INT TERM
printf 'engine\twalk\tround\tpage\tskip\trows\tbytes\tms\n' >"$RUN/pages.tsv"
WALK=(python3 "$ROOT/bench/odata_walk.py")

for engine in $ENGINES; do
  t0=$(date +%s)
  echo "== $engine, $ROWS rows, pages of $PAGE ($(date +%H:%M:%S))"
  # 1-3: the walks, then $skip alone.
  start_gh "$engine" "$ROWS"
  "${WALK[@]}" walk --out "$RUN" --engine "$engine" --base "http://127.0.0.1:$GH_PORT" \
    --rows "$ROWS" --page "$PAGE" --rounds "$ROUNDS"
  stop_gh
  # 4: the engine's own keyset loop, Gatehouse stopped.
  case "$engine" in
    sqlite) db="$DATA/items-$ROWS.db" ;;
    *) db="$(db_name "$ROWS")" ;;
  esac
  "$KEYSET_PY" "$ROOT/bench/odata_walk.py" keyset --out "$RUN" --engine "$engine" --db "$db" \
    --rows "$ROWS" --page "$PAGE" --rounds "$ROUNDS"
  # 5: peak RSS, a fresh Gatehouse allowing the whole table in one page
  # (its config and log in rss/).
  OUT="$RUN/rss"
  PAGE_MAX="$ROWS" STATEMENT_TIMEOUT_MS="$RSS_TIMEOUT_MS" write_config "$engine" "$ROWS"
  start_gh "$engine" "$ROWS"
  "${WALK[@]}" rss --out "$RUN" --engine "$engine" --base "http://127.0.0.1:$GH_PORT" \
    --rows "$ROWS" --page "$PAGE" --pid "$GH_PID"
  stop_gh
  OUT="$RUN"
  echo "   $engine: $(($(date +%s) - t0)) s"
done

"${WALK[@]}" report --out "$RUN" --engines "$ENGINES" --rows "$ROWS" --page "$PAGE" --rounds "$ROUNDS" \
  --gh-bin "$GH_BIN" --profile "$GH_PROFILE" --timeout-ms "$RSS_TIMEOUT_MS" \
  --command "ENGINES=\"$ENGINES\" ROWS=$ROWS PAGE=$PAGE ROUNDS=$ROUNDS bash bench/odata_walk.sh" >"$RUN/results.md"
cp "$RUN/results.md" "$ROOT/bench/out/odata-walk-latest.md"
echo
cat "$RUN/results.md"
echo
echo "total: $(($(date +%s) - started)) s"
echo "output: $RUN"

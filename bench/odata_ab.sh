#!/usr/bin/env bash
# Two Gatehouse release builds side by side on the same data, in one run: A
# (before a change) and B (after), on the OData reads of the other bench
# scripts, to show that a restructure left OData speed unchanged within this
# machine's noise, and that both builds answer the same bodies.
#
#   A_BIN=/path/to/before/gatehouse B_BIN=/path/to/after/gatehouse bash bench/odata_ab.sh
#
# Or one binary against itself under two settings, given by A_ENV/B_ENV
# (Rocket reads settings from ROCKET_* variables too), e.g. with and without
# Prometheus counting (ops.metrics):
#
#   A_BIN=x B_BIN=x B_ENV='ROCKET_OPS={metrics=false}' PARTS=q bash bench/odata_ab.sh
#
# Parts (PARTS), each read from the same rows by A and by B:
#   q      the peer's four reference queries q1-q4 of bench/odata.sh
#          (bench/odata_lib.sh's NAMES/QUERIES) on the 100,000 Items
#          (bench/odata_data.py: SQLite items-100000.db;
#          bench/odata_engines_data.py: database gh_bench);
#   apply  bench/odata_apply.sh's two $apply queries (APPLY_NAMES/
#          APPLY_QUERIES, bench/odata_lib.sh) on the same Items;
#   tree   bench/odata_tree.sh's two UI5 tree reads on /odata/Nodes
#          (bench/odata_tree_lib.sh: TREE_QUERIES, its configuration) on its
#          100,000-node tree (bench/odata_tree_data.py: tree-100000.db,
#          database gh_tree);
#   walk   one plain walk of the 1,000,000 Items (items-1000000.db, database
#          gh_bench_1000000) by next links, bench/odata_walk.py walk --walks
#          plain --no-skip --rounds 1: GET /odata/Items, then every
#          @odata.nextLink until none, pages of 1,000 on one persistent
#          connection, every row checked; mean ms of the first ten and of the
#          last ten pages, and the total (the sum of the pages' times).
# Method, per engine: never two Gatehouse processes at once. ROUNDS rounds; in
# each, per part: start A, measure every URL of the part, stop A, start B,
# measure the same, stop B; A goes first in odd rounds, B in even ones, so
# that neither build always runs on the warmer caches. A URL's measurement is
# wrk -dDURATION --latency after a WARMUP run of the same URL: -t2 -c16
# --timeout 30s (bench/odata.sh's client) for q and apply, -t1 -cTREE_CONNS
# --timeout 300s (bench/odata_tree.sh's) for tree; the walk is one walk per
# process, without warm-up. Both builds are started on the same configuration
# files, written once per engine and data set (bench/odata_lib.sh's
# write_config, pagination.default = max = 1000; write_tree_config), so with
# the same secret key. In round 1, right after each start, every URL (the
# walk: its first page) is fetched once with curl; after both builds, their
# answers are compared (byte for byte, else as JSON) by
# bench/odata_ab_report.py compare: a WARNING in results.md when they differ.
# A_ENV/B_ENV reach only that build's processes (bench/odata_lib.sh's GH_ENV,
# after the configuration file, so they override it). Right after each start
# GET /metrics is fetched once: a side whose env says metrics=false must
# answer 404, one whose env says metrics=true 200 (else the run stops: the
# setting did not reach the process); the answers (metrics.tsv) are listed in
# results.md. The sides (A_BIN/B_BIN, A_ENV/B_ENV, their checks and order,
# the /metrics check) are bench/ab_lib.sh's, shared with bench/auth_ab.sh.
# Both builds migrate the same databases: they must carry the same migrations
# (a restructure); for builds whose migrations differ, bench/builds.sh gives
# each its own copy of the q data.
#
# Environment (defaults):
#   A_BIN, B_BIN  the two gatehouse release binaries (required; may be the same)
#   A_ENV, B_ENV  space-separated NAME=VALUE assignments for that side's
#                 processes only (default none; no value may hold a space)
#   ENGINES="sqlite postgres mariadb"  PARTS="q apply tree walk"
#   ROUNDS=3  DURATION=5s  WARMUP=1s  (whole seconds)
#   TREE_CONNS=2  GH_PORT=8714  GH_PROFILE=release (the Rocket profile)
#   TREE_ROWS=100000  the tree's nodes (bench/odata_tree_scale.sh reads
#                 1111110, with TREE_ROOTS=null_parent and TREE_CONNS=1)
#   TREE_ROOTS    the hierarchy's roots (bench/odata_tree_lib.sh; default
#                 missing_parent)
#   FRESH_DATA=1  reload the Items data sets even if they look complete
# Output: bench/out/ab-<timestamp>/: results.md (also copied to
# bench/out/ab-latest.md and printed): per engine and URL the median req/s of
# A and of B over rounds, the median of the per-round ratios B/A and those
# ratios, the median p50 of each; for the walk each build's median first-ten,
# last-ten and total, and the medians of the per-round ratios; the answer
# check's warnings; each side's binary and env. Also runs.tsv (engine, part,
# query, bin, round, slot, file), urls.tsv, checks.tsv, metrics.tsv (engine,
# part, bin, round, GET /metrics status), wrk/ (every wrk output), bodies/ (the compared
# answers), walk/ (odata_walk.py's output per process), Gatehouse's configs
# and logs. Data: bench/out/data/ (SQLite files) and the PostgreSQL/MariaDB
# databases above. All of bench/out is ignored by git.
# A run with the defaults, data loaded, takes about 20-25 minutes (per engine
# and round about 2 minutes: 8 URLs x 2 builds x 6 s, and two walks of
# 15-20 s, most of it the client checking every row); loading the data sets
# first adds about a minute.
set -euo pipefail
# ab_sides, ab_check, ab_show, ab_order, ab_side (AB_BIN, AB_ENV),
# ab_check_metrics, ab_command_env
# shellcheck source=bench/ab_lib.sh
source "$(dirname "$0")/ab_lib.sh"
ab_sides # A_BIN, B_BIN (the binaries as given, before the cd below), A_ENV, B_ENV
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
PARTS="${PARTS:-q apply tree walk}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5s}"
WARMUP="${WARMUP:-1s}"
TREE_CONNS="${TREE_CONNS:-2}"
GH_PORT="${GH_PORT:-8714}"
GH_PROFILE="${GH_PROFILE:-release}"
PAGE_SIZE=1000        # odata_lib.sh: pagination.default and .max
BASE_ROWS=100000      # odata_lib.sh: the size whose databases are gh_bench
WALK_ROWS=1000000
TREE_ROWS="${TREE_ROWS:-100000}" # odata_tree.sh's tree; odata_tree_scale.sh's 1111110
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
DATA="$ROOT/bench/out/data"
RUN="$ROOT/bench/out/ab-$(date +%Y%m%d-%H%M%S)"
OUT="$RUN" # odata_lib.sh writes configs and logs there
export PGSSLMODE=disable
die() { echo "odata_ab.sh: $*" >&2; exit 1; }
# NAMES, QUERIES, url, APPLY_NAMES, APPLY_QUERIES, has, secs, db_name,
# load_data, write_config, start_gh (GH_SET, GH_PROFILE), stop_gh
# shellcheck source=bench/odata_lib.sh
source "$ROOT/bench/odata_lib.sh"
# TREE_NAMES, TREE_QUERIES, load_tree_data, write_tree_config
# shellcheck source=bench/odata_tree_lib.sh
source "$ROOT/bench/odata_tree_lib.sh"

for e in $ENGINES; do
  [[ "$e" =~ ^(sqlite|postgres|mariadb)$ ]] || die "unknown engine '$e' (sqlite, postgres, mariadb)"
done
for p in $PARTS; do [[ "$p" =~ ^(q|apply|tree|walk)$ ]] || die "unknown part '$p' (q, apply, tree, walk)"; done
[[ -n "${ENGINES// /}" && -n "${PARTS// /}" ]] || die "ENGINES and PARTS must name something"
for v in ROUNDS TREE_CONNS; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v is a positive whole number, not '${!v}'"; done
secs "$DURATION" >/dev/null
secs "$WARMUP" >/dev/null
ab_check
tools=(curl python3 wrk)
has "$ENGINES" postgres && tools+=(psql)
has "$ENGINES" mariadb && tools+=(mariadb)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk; psql: postgresql-client; mariadb: mariadb-client)"
done
mkdir -p "$RUN/wrk" "$RUN/bodies" "$RUN/walk" "$DATA"
echo "output: $RUN"
ab_show
started=$(date +%s)

# --- data -----------------------------------------------------------------------------
echo "== data ($(date +%H:%M:%S))"
if has "$PARTS" q || has "$PARTS" apply; then load_data "$ENGINES" "$BASE_ROWS"; fi
has "$PARTS" walk && load_data "$ENGINES" "$WALK_ROWS"
has "$PARTS" tree && load_tree_data "$ENGINES"

trap stop_gh EXIT
trap 'exit 130' INT TERM

# --- the parts ------------------------------------------------------------------------
# part PART: what it reads (SIZE: the data set's label in configs and logs,
# SET: the entity set start_gh asks for), its URLs and names (U_NAMES,
# U_URLS), wrk's client arguments (WRK) and the headers its client sends
# (HEADERS, for the answer check).
part() { # part PART
  local i
  U_NAMES=() U_URLS=() HEADERS=()
  case "$1" in
    q)
      SIZE="$BASE_ROWS" SET=Items WRK=(-t2 -c16 --timeout 30s)
      for i in "${!QUERIES[@]}"; do U_NAMES+=("${NAMES[$i]}"); U_URLS+=("$(url "$GH_BASE" "$i")"); done ;;
    apply)
      SIZE="$BASE_ROWS" SET=Items WRK=(-t2 -c16 --timeout 30s)
      for i in "${!APPLY_QUERIES[@]}"; do U_NAMES+=("${APPLY_NAMES[$i]}"); U_URLS+=("$GH_BASE/Items?${APPLY_QUERIES[$i]}"); done ;;
    tree)
      SIZE="tree-$TREE_ROWS" SET=Nodes WRK=(-t1 -c"$TREE_CONNS" --timeout 300s)
      for i in "${!TREE_QUERIES[@]}"; do U_NAMES+=("${TREE_NAMES[$i]}"); U_URLS+=("$GH_BASE/Nodes?${TREE_QUERIES[$i]}"); done ;;
    walk)
      # The walk's own client; its first page is the URL compared.
      SIZE="$WALK_ROWS" SET=Items WRK=() HEADERS=(-H "Prefer: odata.maxpagesize=$PAGE_SIZE")
      U_NAMES=(plain-walk) U_URLS=("$GH_BASE/Items") ;;
  esac
}

printf 'engine\tpart\tquery\tbin\tround\tslot\tfile\n' >"$RUN/runs.tsv"
printf 'engine\tpart\tquery\turl\n' >"$RUN/urls.tsv"
printf 'engine\tpart\tquery\tverdict\tdetail\n' >"$RUN/checks.tsv"
printf 'engine\tpart\tbin\tround\tstatus\n' >"$RUN/metrics.tsv"

# The build BIN's answer to every URL of the current part, once (round 1).
fetch_bodies() { # fetch_bodies ENGINE PART BIN
  local i status
  for i in "${!U_URLS[@]}"; do
    status=$(curl -sS -g -o "$RUN/bodies/$1-$2-${U_NAMES[$i]}-$3.json" -w '%{http_code}' --max-time 900 \
      "${HEADERS[@]}" "${U_URLS[$i]}" || echo 000)
    echo "$status" >"$RUN/bodies/$1-$2-${U_NAMES[$i]}-$3.status"
  done
}
# A's and B's answers compared, a line per URL in checks.tsv.
compare_bodies() { # compare_bodies ENGINE PART
  local i b line
  for i in "${!U_URLS[@]}"; do
    b="$RUN/bodies/$1-$2-${U_NAMES[$i]}"
    line=$(python3 "$ROOT/bench/odata_ab_report.py" compare "$b-a.json" "$b-b.json" "$(cat "$b-a.status")" "$(cat "$b-b.status")")
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${U_NAMES[$i]}" "$line" >>"$RUN/checks.tsv"
    printf '  %-8s %-6s %-26s A and B: %s\n' "$1" "$2" "${U_NAMES[$i]}" "${line/$'\t'/: }"
  done
}

# Every URL of the current part against the running build BIN.
measure() { # measure ENGINE PART BIN ROUND SLOT
  local i file
  for i in "${!U_URLS[@]}"; do
    file="$RUN/wrk/$1-$2-${U_NAMES[$i]}-$3-r$4.txt"
    wrk "${WRK[@]}" -d"$WARMUP" "${U_URLS[$i]}" >"$file.warmup"
    wrk "${WRK[@]}" -d"$DURATION" --latency "${U_URLS[$i]}" >"$file"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "${U_NAMES[$i]}" "$3" "$4" "$5" "$file" >>"$RUN/runs.tsv"
    printf '  %-8s %-6s %-26s %s r%s %s\n' "$1" "$2" "${U_NAMES[$i]}" "${3^^}" "$4" \
      "$(awk '/Requests\/sec/ {printf "%9.1f req/s", $2} $1 == "50%" {p50 = $2} /Non-2xx/ {bad = "  NON-2xx: " $NF} /Socket errors/ {bad = bad "  " $0} END {printf "  p50 %s%s", p50, bad}' "$file")"
  done
}

# One plain walk of the 1,000,000 rows against the running build BIN.
walk() { # walk ENGINE BIN ROUND SLOT
  local dir="$RUN/walk/$1-$2-r$3"
  mkdir -p "$dir"
  echo "  $1 walk ${2^^} r$3:"
  python3 "$ROOT/bench/odata_walk.py" walk --out "$dir" --engine "$1" --base "http://127.0.0.1:$GH_PORT" \
    --rows "$WALK_ROWS" --page "$PAGE_SIZE" --rounds 1 --walks plain --no-skip
  printf '%s\twalk\tplain-walk\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$dir" >>"$RUN/runs.tsv"
}

# --- the rounds -----------------------------------------------------------------------
echo "== $ROUNDS rounds, parts: $PARTS; wrk -d$DURATION --latency after a $WARMUP warm-up (q, apply: -t2 -c16; tree: -t1 -c$TREE_CONNS)"
for engine in $ENGINES; do
  t0=$(date +%s)
  echo "== $engine ($(date +%H:%M:%S))"
  # One configuration per data set, for both builds (the same secret key).
  for p in $PARTS; do
    part "$p"
    for i in "${!U_URLS[@]}"; do printf '%s\t%s\t%s\t%s\n' "$engine" "$p" "${U_NAMES[$i]}" "${U_URLS[$i]}" >>"$RUN/urls.tsv"; done
    [[ -f "$RUN/Rocket-$engine-$SIZE.toml" ]] && continue
    if [[ "$p" == tree ]]; then
      write_tree_config "$engine" "$RUN/Rocket-$engine-$SIZE.toml"
    else
      write_config "$engine" "$SIZE"
    fi
  done
  for round in $(seq 1 "$ROUNDS"); do
    order=$(ab_order "$round")
    echo "-- $engine round $round: ${order^^} ($(date +%H:%M:%S))"
    for p in $PARTS; do
      part "$p"
      slot=0
      for bin in $order; do
        slot=$((slot + 1))
        ab_side "$bin"
        GH_BIN="$AB_BIN"
        echo "=== ${bin^^} ($GH_BIN${AB_ENV:+ with $AB_ENV}), round $round, part $p" >>"$RUN/gatehouse-$engine-$SIZE.log"
        GH_ENV="$AB_ENV" GH_SET="$SET" start_gh "$engine" "$SIZE"
        # GET /metrics once (metrics.tsv: engine, part, bin, round, status), checked against AB_ENV.
        ab_check_metrics "http://127.0.0.1:$GH_PORT" "$bin" "$AB_ENV" "$RUN/metrics.tsv" "$engine" "$p" "$bin" "$round"
        [[ "$round" == 1 ]] && fetch_bodies "$engine" "$p" "$bin"
        if [[ "$p" == walk ]]; then
          walk "$engine" "$bin" "$round" "$slot"
        else
          measure "$engine" "$p" "$bin" "$round" "$slot"
        fi
        stop_gh
      done
      [[ "$round" == 1 ]] && compare_bodies "$engine" "$p"
    done
  done
  echo "   $engine: $(($(date +%s) - t0)) s"
done

# --- report ---------------------------------------------------------------------------
python3 "$ROOT/bench/odata_ab_report.py" report --run "$RUN" --a-bin "$A_BIN" --b-bin "$B_BIN" \
  --a-env "$A_ENV" --b-env "$B_ENV" \
  --engines "$ENGINES" --parts "$PARTS" --rounds "$ROUNDS" --duration "$DURATION" --warmup "$WARMUP" \
  --tree-wrk "-t1 -c$TREE_CONNS --latency" \
  --command "$(ab_command_env)ENGINES=\"$ENGINES\" PARTS=\"$PARTS\" ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP bash bench/odata_ab.sh" \
  >"$RUN/results.md"
cp "$RUN/results.md" "$ROOT/bench/out/ab-latest.md"
echo
cat "$RUN/results.md"
echo
echo "total: $(($(date +%s) - started)) s"
echo "output: $RUN"

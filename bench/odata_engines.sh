#!/usr/bin/env bash
# OData on three engines, before and after: Gatehouse's /odata routes on
# SQLite, PostgreSQL and MariaDB, for two builds (BEFORE and AFTER), against
# the SAP CAP peer served from PostgreSQL (../shared/bench/cap, PEER_DB=postgres),
# all in one run, on the peer's four reference queries (the URLs, Items set
# configuration and page size of bench/odata.sh) over the same 100,000 rows
# (bench/odata_data.py for SQLite, bench/odata_engines_data.py for the
# PostgreSQL and MariaDB databases gh_bench and gh_bench_before).
#
#   bash bench/odata_engines.sh
#
# Phase "bench": ROUNDS rounds, each: the peer q1..q4, then for every engine
# and build in turn one Gatehouse process (started, then stopped: only one at
# a time) q1..q4; every measurement is wrk -t2 -c16 -dDURATION --latency after
# a WARMUP run of the same URL. Medians of req/s, p50 and p99 per (server,
# query); ratios are medians of per-round ratios.
# Phase "plans": for each build on PostgreSQL and MariaDB, one request per
# query with the statements logged (PostgreSQL: log_min_duration_statement=0
# and auto_explain with ANALYZE for the new sessions; MariaDB: the general log
# into mysql.general_log), then EXPLAIN (ANALYZE) / ANALYZE of the logged
# statements; every server setting is put back afterwards (also on failure).
#
# Environment (defaults):
#   PHASES="bench plans"   ROUNDS=3 DURATION=8s WARMUP=2s
#   ENGINES="sqlite postgres mariadb"  BUILDS="before after"
#   BEFORE_BIN=bench/out/bin/gatehouse-before  AFTER_BIN=bench/out/bin/gatehouse-after
#     (copies of /work/target-before/release/gatehouse, built from 353991c, and
#      /work/target-release/release/gatehouse, built from HEAD)
#   GH_PORT=8711 PEER_PORT=4005 PEER_DIR=/tmp/cap-peer-pg PEER_SRC=../shared/bench/cap
#   PAGE_SIZE  default: the number of rows in the peer's default page of /Items
#   PG_LOG=/var/log/postgresql/postgresql-15-main.log (the server's stderr log)
# Output: bench/out/engines-<timestamp>/ (results.md, plans.md, every wrk
# output, server logs, configs).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PHASES="${PHASES:-bench plans}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-8s}"
WARMUP="${WARMUP:-2s}"
ENGINES="${ENGINES:-sqlite postgres mariadb}"
BUILDS="${BUILDS:-before after}"
BEFORE_BIN="${BEFORE_BIN:-$ROOT/bench/out/bin/gatehouse-before}"
AFTER_BIN="${AFTER_BIN:-$ROOT/bench/out/bin/gatehouse-after}"
CONNS=16
THREADS=2
GH_PORT="${GH_PORT:-8711}"
PEER_PORT="${PEER_PORT:-4005}"
PEER_DIR="${PEER_DIR:-/tmp/cap-peer-pg}"
PEER_SRC="$(cd "${PEER_SRC:-$ROOT/../shared/bench/cap}" && pwd)"
PEER_BASE="http://127.0.0.1:$PEER_PORT/odata/v4/catalog"
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
PG_LOG="${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}"
PSQL=(psql -h 127.0.0.1 -p 5432 -U postgres -qAt -v ON_ERROR_STOP=1)
MYSQL=(mariadb -h 127.0.0.1 -P 3306 -u root -N -B)
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/engines-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT" "$DATA"

NAMES=(q1-default-page q2-filter-orderby-top200 q3-count-top50 q4-skip90000-top100)
QUERIES=(
  ""
  "\$filter=category%20eq%20'cat3'%20and%20price%20gt%2050&\$orderby=price%20desc&\$top=200"
  "\$count=true&\$top=50"
  "\$skip=90000&\$top=100"
)
url() { # url BASE INDEX
  local q="${QUERIES[$2]}"
  if [[ -n "$q" ]]; then echo "$1/Items?$q"; else echo "$1/Items"; fi
}
die() { echo "odata_engines.sh: $*" >&2; exit 1; }
for tool in wrk curl python3 psql mariadb; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
for b in $BUILDS; do
  bin=$AFTER_BIN; [[ $b == before ]] && bin=$BEFORE_BIN
  [[ -x "$bin" ]] || die "no $b binary at $bin"
done

# --- clean-up: only what this script started or changed ------------------------
PEER_STARTED=0
GH_PID=""
PG_CHANGED=0
MY_CHANGED=0
MY_GENERAL_LOG=""
MY_LOG_OUTPUT=""
stop_gh() {
  if [[ -n "$GH_PID" ]] && kill -0 "$GH_PID" 2>/dev/null; then
    kill "$GH_PID" 2>/dev/null || true
    wait "$GH_PID" 2>/dev/null || true
  fi
  GH_PID=""
}
pg_restore_settings() {
  if [[ "$PG_CHANGED" == 1 ]]; then
    "${PSQL[@]}" -d postgres -c "LOAD 'auto_explain'" -c "ALTER SYSTEM RESET log_min_duration_statement" \
      -c "ALTER SYSTEM RESET session_preload_libraries" -c "ALTER SYSTEM RESET auto_explain.log_min_duration" \
      -c "ALTER SYSTEM RESET auto_explain.log_analyze" -c "ALTER SYSTEM RESET auto_explain.log_buffers" \
      -c "ALTER SYSTEM RESET auto_explain.log_nested_statements" >/dev/null || true
    "${PSQL[@]}" -d postgres -c "SELECT pg_reload_conf()" >/dev/null || true
    PG_CHANGED=0
  fi
}
my_restore_settings() {
  if [[ "$MY_CHANGED" == 1 ]]; then
    "${MYSQL[@]}" -e "SET GLOBAL general_log = $MY_GENERAL_LOG; SET GLOBAL log_output = '$MY_LOG_OUTPUT'" || true
    MY_CHANGED=0
  fi
}
cleanup() {
  stop_gh
  pg_restore_settings
  my_restore_settings
  if [[ "$PEER_STARTED" == 1 ]]; then
    PEER_DIR="$PEER_DIR" "$PEER_SRC/stop.sh" >/dev/null || true
  fi
}
trap cleanup EXIT

# --- data ---------------------------------------------------------------------------
# One copy per build: each build applies its own migrations for its own
# tables (AFTER has one BEFORE does not know, which stops BEFORE from starting
# on a database AFTER has used), so BEFORE reads gh_bench_before and
# items-100000-before.db, AFTER gh_bench and items-100000-after.db: the same
# rows, types, indexes and ANALYZE, loaded afresh by every run.
for build in $BUILDS; do
  db=gh_bench; [[ $build == before ]] && db=gh_bench_before
  python3 bench/odata_data.py --rows 100000 --db "$DATA/items-100000-$build.db" --force
  python3 bench/odata_engines_data.py --rows 100000 --db "$db" --force
done

# --- the peer, on PostgreSQL ----------------------------------------------------------
if [[ -f "$PEER_DIR/pid" ]] && kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null; then
  die "a CAP peer already runs from $PEER_DIR (pid $(cat "$PEER_DIR/pid")); stop it with PEER_DIR=$PEER_DIR $PEER_SRC/stop.sh"
fi
echo "== starting the CAP peer on PostgreSQL (PEER_DIR=$PEER_DIR, port $PEER_PORT)"
PEER_STARTED=1
PEER_DB=postgres PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" HOST=127.0.0.1 "$PEER_SRC/run.sh" | grep 'run.sh:' || true
PEER_PID="$(cat "$PEER_DIR/pid")"
if [[ -z "${PAGE_SIZE:-}" ]]; then
  PAGE_SIZE="$(curl -fsS "$(url "$PEER_BASE" 0)" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["value"]))')"
fi
echo "page size: $PAGE_SIZE (the peer's default page; Gatehouse's pagination.default and .max)"

# --- Gatehouse ------------------------------------------------------------------------
db_url() { # db_url ENGINE BUILD
  local db=gh_bench; [[ $2 == before ]] && db=gh_bench_before
  case "$1" in
    sqlite) echo "sqlite://$DATA/items-100000-$2.db?mode=rwc" ;;
    postgres) echo "postgres://postgres@127.0.0.1:5432/$db" ;;
    mariadb) echo "mysql://root@127.0.0.1:3306/$db" ;;
  esac
}
write_config() { # write_config ENGINE BUILD -> path
  local cfg="$OUT/Rocket-$1-$2.toml"
  local secret
  secret="$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
  cat >"$cfg" <<EOF
[release]
address = "127.0.0.1"
port = $GH_PORT
base_url = "http://127.0.0.1:$GH_PORT"
secret_key = "$secret"
log_level = "off"

[release.databases.main]
url = "$(db_url "$1" "$2")"

[release.odata.pagination]
default = $PAGE_SIZE
max = $PAGE_SIZE

# Public: wrk sends no credentials, as the peer runs without authentication.
[release.odata.sets.Items]
table = "items"
key = "ID"
public = true
searchable = ["name"]

# The peer's EDM types (its \$metadata).
[release.odata.sets.Items.types]
ID = "Edm.Int32"
quantity = "Edm.Int32"
price = "Edm.Decimal"
created = "Edm.DateTimeOffset"
active = "Edm.Boolean"
EOF
  echo "$cfg"
}
start_gh() { # start_gh ENGINE BUILD TAG
  local engine=$1 build=$2 tag=$3 bin=$AFTER_BIN status=000
  [[ $build == before ]] && bin=$BEFORE_BIN
  if curl -s -o /dev/null "http://127.0.0.1:$GH_PORT/"; then
    die "something already listens on port $GH_PORT; set GH_PORT"
  fi
  ROCKET_CONFIG="$OUT/Rocket-$engine-$build.toml" ROCKET_PROFILE=release RUST_LOG=warn \
    "$bin" serve >>"$OUT/gatehouse-$engine-$build.log" 2>&1 &
  GH_PID=$!
  for _ in $(seq 1 300); do
    kill -0 "$GH_PID" 2>/dev/null || { tail -20 "$OUT/gatehouse-$engine-$build.log" >&2; die "Gatehouse ($engine, $build) exited at start"; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "$GH_BASE/Items?\$top=1" || true)
    [[ "$status" != 000 ]] && break
    sleep 0.1
  done
  [[ "$status" == 200 ]] || die "Gatehouse ($engine, $build, $tag): GET /odata/Items?\$top=1 answers $status"
}
for engine in $ENGINES; do for build in $BUILDS; do write_config "$engine" "$build" >/dev/null; done; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ="$(getconf CLK_TCK)"
RUNS="$OUT/runs.tsv"
printf 'engine\tserver\tquery\tround\tcpu\tfile\n' >"$RUNS"

bench() { # bench ENGINE SERVER PID BASE QUERY_INDEX ROUND
  local engine=$1 server=$2 pid=$3 base=$4 q=$5 round=$6
  local file="$OUT/$engine-$server-${NAMES[$q]}-r$round.txt"
  local c0 c1 t0 t1 cpu
  wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" "$(url "$base" "$q")" >"$file.warmup"
  c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
  wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$(url "$base" "$q")" >"$file"
  c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
  cpu=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" 'BEGIN {printf "%.0f", 100 * (b - a) / hz / (e - s)}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$engine" "$server" "${NAMES[$q]}" "$round" "$cpu" "$file" >>"$RUNS"
  printf '  %-8s %-7s %-26s r%s %s  server cpu %s%%\n' "$engine" "$server" "${NAMES[$q]}" "$round" \
    "$(awk '/Requests\/sec/ {printf "%8.1f req/s", $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} /Non-2xx/ {bad = "  NON-2xx: " $NF} /Socket errors/ {bad = bad "  " $0} END {printf "  p50 %s  p99 %s%s", p50, p99, bad}' "$file")" "$cpu"
}

# Same entities as the peer (IDs, count); warns instead of failing.
check_same() { # check_same ENGINE BUILD
  local q
  for q in "${!QUERIES[@]}"; do
    curl -sS -o "$OUT/check-$1-$2-${NAMES[$q]}.json" "$(url "$GH_BASE" "$q")"
    [[ -f "$OUT/check-peer-${NAMES[$q]}.json" ]] || curl -fsS -o "$OUT/check-peer-${NAMES[$q]}.json" "$(url "$PEER_BASE" "$q")"
    python3 - "$OUT/check-$1-$2-${NAMES[$q]}.json" "$OUT/check-peer-${NAMES[$q]}.json" "$1 $2 ${NAMES[$q]}" <<'EOF'
import json, sys
gh_file, peer_file, name = sys.argv[1:4]
try:
    gh = json.load(open(gh_file, "rb"))
except ValueError:
    print("  WARNING %s: not JSON: %r" % (name, open(gh_file, "rb").read()[:300])); sys.exit(0)
peer = json.load(open(peer_file, "rb"))
if "value" not in gh:
    print("  WARNING %s: answered %s" % (name, json.dumps(gh)[:300])); sys.exit(0)
ids = [e.get("ID") for e in gh["value"]]; pids = [e.get("ID") for e in peer["value"]]
line = "  %-40s %4d rows" % (name, len(ids))
if ids != pids:
    line += "  WARNING: entities differ from the peer's (first IDs %s vs %s)" % (ids[:5], pids[:5])
elif gh.get("@odata.count") != peer.get("@odata.count"):
    line += "  WARNING: @odata.count %s vs the peer's %s" % (gh.get("@odata.count"), peer.get("@odata.count"))
else:
    line += "  same entities as the peer"
print(line)
EOF
  done
}

# --- phase bench ----------------------------------------------------------------------------
if [[ " $PHASES " == *" bench "* ]]; then
  echo "== bench: $ROUNDS rounds; wrk -t$THREADS -c$CONNS -d$DURATION --latency, each after a $WARMUP warm-up of the same URL"
  for round in $(seq 1 "$ROUNDS"); do
    echo "-- round $round"
    for q in "${!QUERIES[@]}"; do
      bench peer peer "$PEER_PID" "$PEER_BASE" "$q" "$round"
    done
    for engine in $ENGINES; do
      for build in $BUILDS; do
        start_gh "$engine" "$build" "r$round"
        [[ $round == 1 ]] && check_same "$engine" "$build"
        for q in "${!QUERIES[@]}"; do
          bench "$engine" "$build" "$GH_PID" "$GH_BASE" "$q" "$round"
        done
        stop_gh
      done
    done
  done

  python3 - "$OUT" "$PAGE_SIZE" "$CONNS" "$DURATION" "$WARMUP" "$ROUNDS" "$ENGINES" "$BUILDS" >"$OUT/results.md" <<'EOF'
import csv, re, statistics, sys
out, page, conns, duration, warmup, rounds, engines, builds = sys.argv[1:9]
engines, builds = engines.split(), builds.split()
NAMES = ["q1-default-page", "q2-filter-orderby-top200", "q3-count-top50", "q4-skip90000-top100"]
UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
def ms(t):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", t)
    return float(m.group(1)) * UNIT[m.group(2)] if m else float("nan")
def parse(path):
    r = {"rps": float("nan"), "p50": float("nan"), "p99": float("nan"), "bad": 0, "err": 0}
    for line in open(path):
        f = line.split()
        if line.startswith("Requests/sec"): r["rps"] = float(f[1])
        elif f[:1] == ["50%"]: r["p50"] = ms(f[1])
        elif f[:1] == ["99%"]: r["p99"] = ms(f[1])
        elif "Non-2xx" in line: r["bad"] = int(f[-1])
        elif line.lstrip().startswith("Socket errors"): r["err"] = sum(int(x) for x in re.findall(r"\d+", line))
    return r
runs = {}
for row in csv.DictReader(open(out + "/runs.tsv"), delimiter="\t"):
    r = parse(row["file"]); r["cpu"] = float(row["cpu"]); r["round"] = row["round"]
    key = ("peer" if row["server"] == "peer" else row["engine"], row["server"], row["query"])
    runs.setdefault(key, []).append(r)
def med(k, f):
    xs = [r[f] for r in runs.get(k, [])]
    return statistics.median(xs) if xs else None
def ratio(top, bottom):
    b = {r["round"]: r["rps"] for r in runs.get(bottom, [])}
    xs = [r["rps"] / b[r["round"]] for r in runs.get(top, []) if b.get(r["round"])]
    return statistics.median(xs) if xs else None
def fmt(x, spec="%.1f"):
    return "—" if x is None else spec % x
def bad(k):
    return sum(r["bad"] + r["err"] for r in runs.get(k, []))
print("# OData on three engines, before and after\n")
print("wrk -t2 -c%s -d%s --latency after a %s warm-up of the same URL; %s rounds, each: peer q1..q4, then every"
      " engine and build (one Gatehouse process at a time, restarted each round) q1..q4. Medians over rounds;"
      " ratios are medians of per-round ratios. Page size %s. Peer: SAP CAP on PostgreSQL (cap_peer)."
      " req/s, p50 / p99 in ms; CPU in %% of one core.\n" % (conns, duration, warmup, rounds, page))
for e in engines:
    print("## %s\n" % e)
    cols = ["peer req/s", "peer p50/p99"]
    for b in builds:
        cols += ["%s req/s" % b.upper(), "%s p50/p99" % b.upper()]
    for b in builds:
        cols += ["%s / peer" % b.upper()]
    if len(builds) == 2:
        cols += ["%s / %s" % (builds[1].upper(), builds[0].upper())]
    cols += ["CPU peer / " + " / ".join(b.upper() for b in builds)]
    print("| query | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for n in NAMES:
        p = ("peer", "peer", n)
        cells = [fmt(med(p, "rps")), "%s / %s" % (fmt(med(p, "p50"), "%.2f"), fmt(med(p, "p99"), "%.2f"))]
        for b in builds:
            k = (e, b, n)
            cells += [fmt(med(k, "rps")), "%s / %s" % (fmt(med(k, "p50"), "%.2f"), fmt(med(k, "p99"), "%.2f"))]
        for b in builds:
            cells += [fmt(ratio((e, b, n), p), "%.2f×")]
        if len(builds) == 2:
            cells += [fmt(ratio((e, builds[1], n), (e, builds[0], n)), "%.2f")]
        cells += [" / ".join(fmt(med(k, "cpu"), "%.0f") for k in [p] + [(e, b, n) for b in builds])]
        errs = sum(bad((e, b, n)) for b in builds)
        print("| %s%s | %s |" % (n, " (**%d non-2xx/socket errors**)" % errs if errs else "", " | ".join(cells)))
    print()
    print("Per round req/s (%s):\n" % " / ".join(["peer"] + [b.upper() for b in builds]))
    for n in NAMES:
        per = []
        for rnd in sorted({r["round"] for r in runs.get(("peer", "peer", n), [])}):
            vals = []
            for k in [("peer", "peer", n)] + [(e, b, n) for b in builds]:
                v = [r["rps"] for r in runs.get(k, []) if r["round"] == rnd]
                vals.append(fmt(v[0] if v else None, "%.0f"))
            per.append("r%s %s" % (rnd, " / ".join(vals)))
        print("- %s: %s" % (n, "; ".join(per)))
    print()
pbad = sum(bad(("peer", "peer", n)) for n in NAMES)
if pbad:
    print("Peer: %d non-2xx/socket errors.\n" % pbad)
EOF
  echo
  cat "$OUT/results.md"
fi

# --- phase plans -------------------------------------------------------------------------------
if [[ " $PHASES " == *" plans "* ]]; then
  echo
  echo "== plans: statements and plans, one request per query"
  PLANS="$OUT/plans.md"
  : >"$PLANS"
  for build in $BUILDS; do
    pdb=gh_bench; [[ $build == before ]] && pdb=gh_bench_before
    # PostgreSQL: statement log + auto_explain (ANALYZE) for sessions opened from now on.
    if [[ " $ENGINES " == *" postgres "* ]]; then
      [[ -r "$PG_LOG" ]] || die "cannot read $PG_LOG (set PG_LOG)"
      offset=$(stat -c %s "$PG_LOG")
      PG_CHANGED=1
      "${PSQL[@]}" -d postgres -c "LOAD 'auto_explain'" -c "ALTER SYSTEM SET log_min_duration_statement = 0" \
        -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
        -c "ALTER SYSTEM SET auto_explain.log_min_duration = 0" -c "ALTER SYSTEM SET auto_explain.log_analyze = on" \
        -c "ALTER SYSTEM SET auto_explain.log_buffers = on" -c "SELECT pg_reload_conf()" >/dev/null
      sleep 0.5
      start_gh postgres "$build" plans
      for q in "${!QUERIES[@]}"; do
        "${PSQL[@]}" -d "$pdb" -c "SELECT 'gh-plan-marker ${NAMES[$q]}'" >/dev/null
        curl -fsS -o /dev/null "$(url "$GH_BASE" "$q")"
        sleep 0.3
      done
      "${PSQL[@]}" -d "$pdb" -c "SELECT 'gh-plan-marker end'" >/dev/null
      stop_gh
      pg_restore_settings
      tail -c +"$((offset + 1))" "$PG_LOG" >"$OUT/pg-$build.log"
    fi
    if [[ " $ENGINES " == *" mariadb "* ]]; then
      MY_GENERAL_LOG=$("${MYSQL[@]}" -e "SELECT @@global.general_log")
      MY_LOG_OUTPUT=$("${MYSQL[@]}" -e "SELECT @@global.log_output")
      since=$("${MYSQL[@]}" -e "SELECT NOW(6)")
      MY_CHANGED=1
      "${MYSQL[@]}" -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
      start_gh mariadb "$build" plans
      for q in "${!QUERIES[@]}"; do
        "${MYSQL[@]}" "$pdb" -e "SELECT 'gh-plan-marker ${NAMES[$q]}'" >/dev/null
        curl -fsS -o /dev/null "$(url "$GH_BASE" "$q")"
        sleep 0.3
      done
      "${MYSQL[@]}" "$pdb" -e "SELECT 'gh-plan-marker end'" >/dev/null
      stop_gh
      "${MYSQL[@]}" -e "SELECT event_time, thread_id, command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE event_time >= '$since' ORDER BY event_time" >"$OUT/my-$build.tsv"
      my_restore_settings
    fi
    python3 bench/odata_engines_plans.py --build "$build" --db "$pdb" \
      $([[ " $ENGINES " == *" postgres "* ]] && echo --pg-log "$OUT/pg-$build.log") \
      $([[ " $ENGINES " == *" mariadb "* ]] && echo --my-log "$OUT/my-$build.tsv") >>"$PLANS"
  done
  echo "plans: $PLANS"
  grep -E '^(##|- )' "$PLANS" || true
fi
echo
echo "output: $OUT"

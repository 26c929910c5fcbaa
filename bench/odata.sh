#!/usr/bin/env bash
# OData collection benchmark: Gatehouse's /odata routes against the SAP CAP
# OData v4 peer (../shared/bench/cap), both started by this script in the same
# run, on the peer's four reference queries (its scripts/bench.sh) with equal
# page sizes and the same data (../shared/bench/gen_items.py, loaded into an
# `items` table with the peer's indexes by bench/odata_data.py).
#
#   bash bench/odata.sh
#
# For each table size and query, ROUNDS rounds of: wrk -t2 -c16 --latency
# against the peer, the same against Gatehouse, then the raw-SQL limit
# (bench/odata_raw.rs: the SQL Gatehouse generates on the same pool, no HTTP)
# and the same with each page written as JSON by Gatehouse's encoder (--json),
# so that every ratio compares measurements taken seconds apart (this
# machine's speed drifts); medians are reported. Then every query at 64
# connections against Gatehouse alone, with its peak RSS (VmHWM). The peer
# serves 100,000 rows only (its run.sh), so other sizes measure Gatehouse and
# the raw limit alone.
#
# Environment (defaults):
#   SIZES="100000"         table sizes, e.g. SIZES="100000 1000000"
#   ROUNDS=3 DURATION=10s  rounds and length of each wrk run; WARMUP=3s per query and server
#   RAW_SECONDS=10         length of each raw-SQL measurement
#   SKIP_BUILD=1           use the existing release binaries
#   FRESH_DATA=1           rebuild the data files even if they look complete
#   GH_PORT=8710 PEER_PORT=4004 PEER_DIR=/tmp/cap-peer PEER_SRC=../shared/bench/cap
#   PAGE_SIZE              default: the number of rows the peer's /Items returns
# Output: stdout, and target/bench-odata/<timestamp>/ (results.md, every wrk
# output, server logs); data files are kept in target/bench-odata/data/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SIZES="${SIZES:-100000}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-3s}"
RAW_SECONDS="${RAW_SECONDS:-10}"
CONNS=16
RSS_CONNS=64
THREADS=2
GH_PORT="${GH_PORT:-8710}"
PEER_PORT="${PEER_PORT:-4004}"
PEER_DIR="${PEER_DIR:-/tmp/cap-peer}"
PEER_SRC="$(cd "${PEER_SRC:-$ROOT/../shared/bench/cap}" && pwd)"
PEER_ROWS=100000
PEER_BASE="http://127.0.0.1:$PEER_PORT/odata/v4/catalog"
GH_BASE="http://127.0.0.1:$GH_PORT/odata"
DATA="$ROOT/target/bench-odata/data"
OUT="$ROOT/target/bench-odata/$(date +%Y%m%d-%H%M%S)"
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
die() { echo "odata.sh: $*" >&2; exit 1; }

for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || die "$tool is required (apt-get install -y $tool)"
done
[[ -x "$PEER_SRC/run.sh" ]] || die "no CAP peer at $PEER_SRC"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  cargo build --release --quiet --bin gatehouse --example odata_raw
fi
BIN="$ROOT/target/release/gatehouse"
RAW="$ROOT/target/release/examples/odata_raw"
[[ -x "$BIN" && -x "$RAW" ]] || die "release binaries missing (run without SKIP_BUILD=1)"

# --- servers: only the PIDs started here are ever stopped -------------------
PEER_STARTED=0
GH_PID=""
cleanup() {
  if [[ -n "$GH_PID" ]] && kill -0 "$GH_PID" 2>/dev/null; then
    kill "$GH_PID" 2>/dev/null || true
    wait "$GH_PID" 2>/dev/null || true
  fi
  if [[ "$PEER_STARTED" == 1 ]]; then
    PEER_DIR="$PEER_DIR" "$PEER_SRC/stop.sh" >/dev/null || true
  fi
}
trap cleanup EXIT

if [[ -f "$PEER_DIR/pid" ]] && kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null; then
  die "a CAP peer is already running (pid $(cat "$PEER_DIR/pid")); stop it with PEER_DIR=$PEER_DIR $PEER_SRC/stop.sh, or set PEER_DIR/PEER_PORT"
fi
echo "== starting the CAP peer (PEER_DIR=$PEER_DIR, port $PEER_PORT)"
PEER_STARTED=1
PEER_DIR="$PEER_DIR" PORT="$PEER_PORT" HOST=127.0.0.1 "$PEER_SRC/run.sh"
PEER_PID="$(cat "$PEER_DIR/pid")"

if [[ -z "${PAGE_SIZE:-}" ]]; then
  PAGE_SIZE="$(curl -fsS "$(url "$PEER_BASE" 0)" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["value"]))')"
fi
echo "page size: $PAGE_SIZE (rows in the peer's default page of /Items; Gatehouse's pagination.default and .max are set to it)"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat; } # busy total
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
HZ="$(getconf CLK_TCK)"
RUNS="$OUT/runs.tsv"   # size server query round conns server-cpu% machine-busy% file (server "raw": the raw-SQL limit)
printf 'size\tserver\tquery\tround\tconns\tcpu\tbusy\tfile\n' >"$RUNS"
FACTS="$OUT/facts.tsv" # size key value
: >"$FACTS"

bench() { # bench SIZE SERVER PID BASE QUERY_INDEX ROUND CONNS
  local size=$1 server=$2 pid=$3 base=$4 q=$5 round=$6 conns=$7
  local file="$OUT/$size-$server-${NAMES[$q]}-c$conns-r$round.txt"
  local c0 c1 t0 t1 m0 m1 cpu busy
  c0=$(cpu_ticks "$pid"); m0=$(machine_ticks); t0=$(date +%s.%N)
  wrk -t"$THREADS" -c"$conns" -d"$DURATION" --latency "$(url "$base" "$q")" >"$file"
  c1=$(cpu_ticks "$pid"); m1=$(machine_ticks); t1=$(date +%s.%N)
  cpu=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" 'BEGIN {printf "%.0f", 100 * (b - a) / hz / (e - s)}')
  busy=$(echo "$m0 $m1" | awk '{printf "%.0f", 100 * ($3 - $1) / ($4 - $2)}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$server" "${NAMES[$q]}" "$round" "$conns" "$cpu" "$busy" "$file" >>"$RUNS"
  printf '  %-9s %-26s r%s c%-3s %s  server cpu %s%%, machine %s%% busy\n' "$server" "${NAMES[$q]}" "$round" "$conns" \
    "$(awk '/Requests\/sec/ {printf "%8.1f req/s", $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} /Non-2xx/ {bad = "  NON-2xx: " $NF} END {printf "  p50 %s  p99 %s%s", p50, p99, bad}' "$file")" "$cpu" "$busy"
}

raw() { # raw SIZE DB QUERY_INDEX ROUND [--json]
  local size=$1 db=$2 q=$3 round=$4 json=${5:-}
  local kind=raw what="same SQL, no HTTP"
  [[ -n "$json" ]] && kind=rawjson what="same SQL and JSON, no HTTP"
  local file="$OUT/$size-$kind-${NAMES[$q]}-r$round.txt"
  "$RAW" "$db" "$RAW_SECONDS" "$PAGE_SIZE" "q$((q + 1))" $json >"$file"
  printf '%s\t%s\t%s\t%s\t-\t-\t-\t%s\n' "$size" "$kind" "${NAMES[$q]}" "$round" "$file" >>"$RUNS"
  printf '  %-9s %-26s r%s      %s\n' "$kind" "${NAMES[$q]}" "$round" \
    "$(sed -n 's/.* qps=\([0-9.]*\) .*/\1/p' "$file" | awk -v what="$what" '{printf "%8.1f queries/s (%s)", $1, what}')"
}

# Compares the entity keys (and counts) both servers answer, so that both do
# the same work; prints body sizes.
check_same() { # check_same SIZE
  local size=$1 q peer_url gh_url
  for q in "${!QUERIES[@]}"; do
    gh_url="$(url "$GH_BASE" "$q")"
    curl -sS -o "$OUT/$size-gatehouse-${NAMES[$q]}.json" "$gh_url"
    if [[ "$size" == "$PEER_ROWS" ]]; then
      peer_url="$(url "$PEER_BASE" "$q")"
      curl -fsS -o "$OUT/$size-peer-${NAMES[$q]}.json" "$peer_url"
    fi
    python3 - "$OUT/$size-gatehouse-${NAMES[$q]}.json" "$OUT/$size-peer-${NAMES[$q]}.json" "${NAMES[$q]}" "$size" "$PEER_ROWS" <<'EOF'
import json, os, sys
gh_file, peer_file, name, size, peer_rows = sys.argv[1:6]
def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw), len(raw)
    except ValueError:
        sys.exit("odata.sh: %s: Gatehouse did not answer JSON: %r" % (name, raw[:300]))
gh, gh_len = load(gh_file)
if "value" not in gh:
    sys.exit("odata.sh: %s: Gatehouse answered %s" % (name, json.dumps(gh)[:300]))
ids = [e.get("ID") for e in gh["value"]]
line = "  %-26s gatehouse %3d rows %7d B" % (name, len(ids), gh_len)
if size == peer_rows:
    peer, peer_len = load(peer_file)
    pids = [e.get("ID") for e in peer["value"]]
    line += " | peer %3d rows %7d B" % (len(pids), peer_len)
    if ids != pids:
        sys.exit("odata.sh: %s: Gatehouse and the peer answer different entities (first IDs %s vs %s)" % (name, ids[:5], pids[:5]))
    if gh.get("@odata.count") != peer.get("@odata.count"):
        sys.exit("odata.sh: %s: @odata.count %s vs the peer's %s" % (name, gh.get("@odata.count"), peer.get("@odata.count")))
    if bool(gh.get("@odata.nextLink")) != bool(peer.get("@odata.nextLink")):
        line += "  (nextLink differs: %s vs %s)" % (gh.get("@odata.nextLink"), peer.get("@odata.nextLink"))
    line += "  same entities"
print(line)
EOF
  done
}

for size in $SIZES; do
  echo
  echo "== $size rows"
  DB="$DATA/items-$size.db"
  python3 bench/odata_data.py --rows "$size" --db "$DB" $([[ "${FRESH_DATA:-0}" == 1 ]] && echo --force)

  # Rocket configuration of the Gatehouse under test.
  CONFIG="$OUT/Rocket-$size.toml"
  SECRET="$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
  cat >"$CONFIG" <<EOF
[release]
address = "127.0.0.1"
port = $GH_PORT
base_url = "http://127.0.0.1:$GH_PORT"
secret_key = "$SECRET"
log_level = "off"

[release.databases.main]
url = "sqlite://$DB?mode=rwc"

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
  if curl -s -o /dev/null "http://127.0.0.1:$GH_PORT/"; then
    die "something already listens on port $GH_PORT; set GH_PORT"
  fi
  echo "Gatehouse: $BIN serve, ROCKET_CONFIG=$CONFIG (Items public: no credentials sent)"
  ROCKET_CONFIG="$CONFIG" ROCKET_PROFILE=release RUST_LOG=warn \
    "$BIN" serve >"$OUT/gatehouse-$size.log" 2>&1 &
  GH_PID=$!
  status=000
  for _ in $(seq 1 300); do
    kill -0 "$GH_PID" 2>/dev/null || { tail -20 "$OUT/gatehouse-$size.log" >&2; die "Gatehouse exited at start (log above)"; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "$GH_BASE/Items?\$top=1" || true)
    [[ "$status" != 000 ]] && break
    sleep 0.1
  done
  case "$status" in
    200) ;;
    000) die "Gatehouse did not answer on port $GH_PORT within 30 s" ;;
    404) die "GET /odata/Items answers 404: this build has no OData collection routes or did not declare the Items set from configuration" ;;
    *) curl -s "$GH_BASE/Items?\$top=1" | head -c 400 >&2; echo >&2; die "GET /odata/Items?\$top=1 answers $status" ;;
  esac
  printf '%s\tgatehouse_rss_idle_kb\t%s\n' "$size" "$(rss_kb "$GH_PID")" >>"$FACTS"
  check_same "$size"

  SERVERS=(gatehouse)
  [[ "$size" == "$PEER_ROWS" ]] && SERVERS=(peer gatehouse)
  echo "warm-up $WARMUP per query and server"
  for q in "${!QUERIES[@]}"; do
    for server in "${SERVERS[@]}"; do
      base=$GH_BASE; [[ $server == peer ]] && base=$PEER_BASE
      wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" "$(url "$base" "$q")" >/dev/null
    done
  done
  echo "SQL Gatehouse generates (run by bench/odata_raw.rs for the raw limit):"
  "$RAW" "$DB" 0 "$PAGE_SIZE" | sed -n 's/^# /  /p'
  echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency and ${RAW_SECONDS}s raw SQL, $ROUNDS interleaved rounds"
  for q in "${!QUERIES[@]}"; do
    for round in $(seq 1 "$ROUNDS"); do
      for server in "${SERVERS[@]}"; do
        if [[ $server == peer ]]; then
          bench "$size" peer "$PEER_PID" "$PEER_BASE" "$q" "$round" "$CONNS"
        else
          bench "$size" gatehouse "$GH_PID" "$GH_BASE" "$q" "$round" "$CONNS"
        fi
      done
      raw "$size" "$DB" "$q" "$round"
      raw "$size" "$DB" "$q" "$round" --json
    done
  done
  printf '%s\tgatehouse_hwm_c%s_kb\t%s\n' "$size" "$CONNS" "$(hwm_kb "$GH_PID")" >>"$FACTS"
  [[ "$size" == "$PEER_ROWS" ]] && printf '%s\tpeer_hwm_kb\t%s\n' "$size" "$(hwm_kb "$PEER_PID")" >>"$FACTS"

  echo "Gatehouse alone at $RSS_CONNS connections"
  for q in "${!QUERIES[@]}"; do
    bench "$size" gatehouse "$GH_PID" "$GH_BASE" "$q" 1 "$RSS_CONNS"
  done
  printf '%s\tgatehouse_hwm_c%s_kb\t%s\n' "$size" "$RSS_CONNS" "$(hwm_kb "$GH_PID")" >>"$FACTS"
  kill "$GH_PID"; wait "$GH_PID" 2>/dev/null || true; GH_PID=""
done

# --- report --------------------------------------------------------------------
python3 - "$OUT" "$PEER_ROWS" "$PAGE_SIZE" "$CONNS" "$RSS_CONNS" "$DURATION" "$ROUNDS" "$RAW_SECONDS" >"$OUT/results.md" <<'EOF'
import csv, os, re, statistics, sys
out, peer_rows, page, conns, rss_conns, duration, rounds, raw_seconds = sys.argv[1:9]
NAMES = ["q1-default-page", "q2-filter-orderby-top200", "q3-count-top50", "q4-skip90000-top100"]
UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}

def ms(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    return float(m.group(1)) * UNIT[m.group(2)] if m else float("nan")

def parse(path):
    r = {"rps": float("nan"), "p50": float("nan"), "p99": float("nan"), "bad": 0, "err": 0}
    for line in open(path):
        f = line.split()
        if line.startswith("Requests/sec"):
            r["rps"] = float(f[1])
        elif f[:1] == ["50%"]:
            r["p50"] = ms(f[1])
        elif f[:1] == ["99%"]:
            r["p99"] = ms(f[1])
        elif "Non-2xx" in line:
            r["bad"] = int(f[-1])
        elif line.lstrip().startswith("Socket errors"):
            r["err"] = sum(int(x) for x in re.findall(r"\d+", line))
    return r

runs = {}
for row in csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"):
    if row["server"] in ("raw", "rawjson"):
        text = open(row["file"]).read()
        m = re.search(r" qps=([0-9.]+)", text)
        r = {"rps": float(m.group(1)) if m else float("nan")}
    else:
        r = parse(row["file"])
        r["cpu"] = float(row["cpu"])
        r["busy"] = float(row["busy"])
    r["round"] = row["round"]
    runs.setdefault((row["size"], row["server"], row["query"], row["conns"]), []).append(r)
facts = {}
for line in open(os.path.join(out, "facts.tsv")):
    size, key, value = line.rstrip("\n").split("\t")
    facts[(size, key)] = int(value)
sizes = sorted({k[0] for k in runs}, key=int)

def med(key, field):
    xs = [r[field] for r in runs.get(key, [])]
    return statistics.median(xs) if xs else None

def ratio(top, bottom):
    """Median over rounds of top/bottom, each round's pair measured seconds apart."""
    b = {r["round"]: r["rps"] for r in runs.get(bottom, [])}
    xs = [r["rps"] / b[r["round"]] for r in runs.get(top, []) if b.get(r["round"])]
    return statistics.median(xs) if xs else None

def fmt(x, spec="%.1f"):
    return "—" if x is None else spec % x

print("# OData benchmark: Gatehouse vs the CAP peer\n")
busy = [r["busy"] for k, rs in runs.items() if k[1] in ("peer", "gatehouse") for r in rs]
print("wrk -t2 -c%s -d%s --latency; %s rounds per query, each: peer, Gatehouse, raw SQL (%s s);"
      " medians, ratios are medians of per-round ratios. Page size %s on both."
      " Items is declared public (no credentials sent); the peer runs without authentication."
      " Raw SQL: the statements Gatehouse generates, on the same pool, 16 tasks on 2 threads,"
      " every column decoded, no HTTP or JSON; raw SQL+JSON: the same, each page also written as"
      " the response's JSON by Gatehouse's row encoder (`--json`), still no HTTP. wrk shares the two cores with the server"
      " (whole machine busy %.0f %% on median during the HTTP runs; server CPU is in %% of one core).\n"
      % (conns, duration, rounds, raw_seconds, page, statistics.median(busy) if busy else float("nan")))
goals = []
for size in sizes:
    print("## %s rows\n" % format(int(size), ","))
    print("| query | peer req/s | peer p50 ms | peer p99 ms | Gatehouse req/s | p50 ms | p99 ms | Gatehouse / peer | raw SQL q/s | Gatehouse / raw | raw SQL+JSON q/s | SQL+JSON / raw | Gatehouse / SQL+JSON | server CPU peer / Gatehouse |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in NAMES:
        p = (size, "peer", name, conns); g = (size, "gatehouse", name, conns); w = (size, "raw", name, "-")
        j = (size, "rawjson", name, "-")
        vs_peer, vs_raw = ratio(g, p), ratio(g, w)
        json_vs_raw, vs_json = ratio(j, w), ratio(g, j)
        bad = sum(r["bad"] + r["err"] for r in runs.get(p, []) + runs.get(g, []))
        print("| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%% / %s%% |" % (
            name, " (%d non-2xx/errors)" % bad if bad else "",
            fmt(med(p, "rps")), fmt(med(p, "p50"), "%.2f"), fmt(med(p, "p99"), "%.2f"),
            fmt(med(g, "rps")), fmt(med(g, "p50"), "%.2f"), fmt(med(g, "p99"), "%.2f"),
            fmt(vs_peer, "%.2f×"), fmt(med(w, "rps")), fmt(vs_raw and vs_raw * 100, "%.0f %%"),
            fmt(med(j, "rps")), fmt(json_vs_raw and json_vs_raw * 100, "%.0f %%"),
            fmt(vs_json and vs_json * 100, "%.0f %%"),
            fmt(med(p, "cpu"), "%.0f"), fmt(med(g, "cpu"), "%.0f")))
        if vs_peer is not None and name != NAMES[3]:
            goals.append(("%s rows, %s: ≥ 5× the peer" % (size, name), vs_peer >= 5, "%.2f×" % vs_peer))
        if vs_raw is not None:
            goals.append(("%s rows, %s: ≥ 80 %% of raw SQL" % (size, name), vs_raw >= 0.8, "%.0f %%" % (vs_raw * 100)))
    print()
    print("Gatehouse alone at %s connections:\n" % rss_conns)
    print("| query | req/s | p50 ms | p99 ms |")
    print("|---|---|---|---|")
    for name in NAMES:
        g = (size, "gatehouse", name, rss_conns)
        print("| %s | %s | %s | %s |" % (name, fmt(med(g, "rps")), fmt(med(g, "p50"), "%.2f"), fmt(med(g, "p99"), "%.2f")))
    print()
    mb = lambda k: facts.get((size, k), 0) / 1024
    print("Gatehouse RSS: idle %.1f MB; peak (VmHWM) %.1f MB after the %s-connection runs, %.1f MB after the %s-connection runs."
          % (mb("gatehouse_rss_idle_kb"), mb("gatehouse_hwm_c%s_kb" % conns), conns, mb("gatehouse_hwm_c%s_kb" % rss_conns), rss_conns))
    if (size, "peer_hwm_kb") in facts:
        print("Peer (node) peak RSS: %.1f MB." % mb("peer_hwm_kb"))
    print()
    peak = mb("gatehouse_hwm_c%s_kb" % rss_conns)
    goals.append(("%s rows: peak RSS under 64 MB at %s connections" % (size, rss_conns), 0 < peak < 64, "%.1f MB" % peak))

if len(sizes) > 1:
    print("## Page latency by table size (Gatehouse, %s connections)\n" % conns)
    print("| query | " + " | ".join("%s rows p50 / p99 ms" % format(int(s), ",") for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in NAMES:
        cells = ["%s / %s" % (fmt(med((s, "gatehouse", name, conns), "p50"), "%.2f"),
                              fmt(med((s, "gatehouse", name, conns), "p99"), "%.2f")) for s in sizes]
        print("| %s | %s |" % (name, " | ".join(cells)))
    print("\nq1, q2 and q4 read pages through the key or the (category, price) index; q3 counts the whole table.\n")

print("## Goals\n")
for what, ok, value in goals:
    print("- %s: %s — **%s**" % (what, value, "met" if ok else "not met"))
EOF
echo
cat "$OUT/results.md"
cp "$OUT/results.md" "$ROOT/target/bench-odata/latest.md"
echo
echo "results: $OUT/results.md (wrk outputs and logs beside it)"

#!/usr/bin/env bash
# OData $batch benchmark: a batch of 10 page requests against the same 10
# requests sent alone, on SQLite and PostgreSQL (MariaDB too if asked), with
# the Items data and the Gatehouse configuration of bench/odata.sh (both from
# bench/odata_lib.sh: the SQLite file bench/out/data/items-<rows>.db, the
# PostgreSQL/MariaDB database gh_bench at 100,000 rows, gh_bench_<rows>
# otherwise; Items public, page size PAGE_SIZE).
#
#   bash bench/batch.sh
#
# The 10 pages: what an OpenUI5 list sends for its first page, with the
# count ($count=true), and the nine pages after it, 20 rows each, in the
# key's order (Gatehouse's default order):
#   Items?$count=true&$skip=0&$top=20
#   Items?$skip=20&$top=20 ... Items?$skip=180&$top=20
# Three ways of asking for them, each one wrk run (-t2 -c16 -dDURATION
# --latency --timeout WRK_TIMEOUT, after a WARMUP run of the same requests):
#   multipart: POST /odata/$batch, multipart/mixed, one application/http
#     part per page ("GET Items?... HTTP/1.1", Content-ID p0..p9): one
#     request = 10 pages;
#   alone:     the 10 GETs /odata/Items?..., in turn (each wrk thread hands
#     them out one after the other to its connections; bench/batch.lua):
#     one request = 1 page;
#   json:      POST /odata/$batch, application/json,
#     {"requests":[{"id":"p0","method":"GET","url":"Items?..."}, ...]}:
#     one request = 10 pages.
# pages/s = 10 x req/s for the batches, req/s for the GETs alone; p50/p99 are
# per request (a whole batch of 10 pages, or one page).
#
# ROUNDS rounds; in each, per engine: one Gatehouse process is started on
# that engine (never two at once; stopped after), then the three ways, their
# order rotated from round to round (round 1: multipart, alone, json; round 2:
# alone, json, multipart; ...), so that neighbouring measurements are
# compared. Before round 1's measurements each engine is checked: every page
# alone answers 200, and each batch answers 200 with 10 parts, each 200 with
# the Content-ID/id sent and a body equal to that page's body alone (JSON:
# the same JSON value); a failed check stops the script. The warm-up runs of
# the batches read every answer (batch.lua with BATCH_CHECK=1) and count the
# parts that are not 200 under load; results.md shows them. Medians over
# rounds of req/s, pages/s, p50 and p99; "pages/s vs alone" is the median of
# per-round ratios. Gatehouse's CPU in % of one core over each measurement.
#
# Environment (defaults):
#   ENGINES="sqlite postgres" (also: mariadb)   WAYS="multipart alone json"
#   ROUNDS=3  DURATION=8s  WARMUP=2s (whole seconds)  WRK_TIMEOUT=30s
#   ROWS=100000 (the data set's size; loaded by bench/odata_data.py and
#     bench/odata_engines_data.py unless already there, as bench/odata.sh does)
#   FRESH_DATA=1  reload the data sets even if they look complete
#   PAGE_SIZE=1000 (Gatehouse's pagination.default and .max, as in
#     bench/odata.sh; the pages here ask for 20 rows)
#   TARGET_DIR=/work/target-release  SKIP_BUILD=1: do not run
#     `CARGO_TARGET_DIR=$TARGET_DIR cargo build --release --bin gatehouse`
#   GH_BIN=$TARGET_DIR/release/gatehouse  GH_PORT=8711
# Output: bench/out/batch-<timestamp>/ (results.md, the request bodies and
# URL list, the checked answers in check/, every wrk output, runs.tsv,
# Gatehouse's logs and configs); results.md is printed and copied to
# bench/out/batch-latest.md. bench/out is ignored by git.
# Duration: ROUNDS x engines x ways x (WARMUP + DURATION) plus about 5 s per
# engine and round: about 3.5 minutes with the defaults (when the data sets
# already exist).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ENGINES="${ENGINES:-sqlite postgres}"
WAYS="${WAYS:-multipart alone json}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-8s}"
WARMUP="${WARMUP:-2s}"
WRK_TIMEOUT="${WRK_TIMEOUT:-30s}"
ROWS="${ROWS:-100000}"
PAGE_SIZE="${PAGE_SIZE:-1000}"
TARGET_DIR="${TARGET_DIR:-/work/target-release}"
GH_BIN="${GH_BIN:-$TARGET_DIR/release/gatehouse}"
GH_PORT="${GH_PORT:-8711}"
CONNS=16
THREADS=2
BASE_ROWS=100000 # the size whose database is gh_bench, as in bench/odata.sh
GH_ROOT="http://127.0.0.1:$GH_PORT"
GH_BASE="$GH_ROOT/odata"
DATA="$ROOT/bench/out/data"
OUT="$ROOT/bench/out/batch-$(date +%Y%m%d-%H%M%S)"
LUA="$ROOT/bench/batch.lua"
BOUNDARY=batch_bench

PAGES=("Items?\$count=true&\$skip=0&\$top=20")
for k in $(seq 1 9); do PAGES+=("Items?\$skip=$((20 * k))&\$top=20"); done

die() { echo "batch.sh: $*" >&2; exit 1; }
# has, secs, db_name, db_url, load_data, write_config, start_gh, stop_gh
source "$ROOT/bench/odata_lib.sh"
secs "$DURATION" >/dev/null
secs "$WARMUP" >/dev/null
for e in $ENGINES; do
  [[ "$e" =~ ^(sqlite|postgres|mariadb)$ ]] || die "unknown engine '$e' (sqlite, postgres, mariadb)"
done
for w in $WAYS; do
  [[ "$w" =~ ^(multipart|alone|json)$ ]] || die "unknown way '$w' (multipart, alone, json)"
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS is a positive number, not '$ROUNDS'"
[[ "$ROWS" =~ ^[0-9]+$ ]] || die "ROWS is a row count, not '$ROWS'"
for tool in curl python3 wrk; do
  command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk)"
done
if has "$ENGINES" postgres || has "$ENGINES" mariadb; then
  has "$ENGINES" postgres && { command -v psql >/dev/null || die "psql is required (postgresql-client)"; }
  has "$ENGINES" mariadb && { command -v mariadb >/dev/null || die "mariadb is required (mariadb-client)"; }
fi

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "== building the release binary into $TARGET_DIR"
  CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet --bin gatehouse
fi
[[ -x "$GH_BIN" ]] || die "no Gatehouse binary at $GH_BIN (set GH_BIN, or run without SKIP_BUILD=1)"
mkdir -p "$OUT/check" "$DATA"
echo "output: $OUT"

trap stop_gh EXIT
trap 'exit 130' INT TERM

load_data "$ENGINES" "$ROWS"

# --- the requests ---------------------------------------------------------------------
# urls.txt (the GETs alone), batch-multipart.txt and batch.json (the batches).
: >"$OUT/urls.txt"
: >"$OUT/batch-multipart.txt"
json_requests=()
for k in "${!PAGES[@]}"; do
  printf '/odata/%s\n' "${PAGES[$k]}" >>"$OUT/urls.txt"
  printf -- '--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: p%s\r\n\r\nGET %s HTTP/1.1\r\n\r\n\r\n' \
    "$BOUNDARY" "$k" "${PAGES[$k]}" >>"$OUT/batch-multipart.txt"
  json_requests+=("{\"id\":\"p$k\",\"method\":\"GET\",\"url\":\"${PAGES[$k]}\"}")
done
printf -- '--%s--\r\n' "$BOUNDARY" >>"$OUT/batch-multipart.txt"
printf '{"requests":[%s]}' "$(IFS=,; echo "${json_requests[*]}")" >"$OUT/batch.json"
MULTIPART_TYPE="multipart/mixed; boundary=$BOUNDARY"
JSON_TYPE="application/json"

# --- checks ---------------------------------------------------------------------------
CHECKS="$OUT/checks.txt"
: >"$CHECKS"
check() { # check ENGINE: the pages alone, then each batch against them; dies on a difference
  local engine=$1 dir="$OUT/check/$1" k status
  mkdir -p "$dir"
  for k in "${!PAGES[@]}"; do
    status=$(curl -sS -o "$dir/page$k.body" -w '%{http_code}' "$GH_BASE/${PAGES[$k]}")
    [[ "$status" == 200 ]] || { head -c 400 "$dir/page$k.body" >&2; echo >&2; die "$engine: GET /odata/${PAGES[$k]} answers $status"; }
  done
  curl -sS -o "$dir/multipart.body" -D "$dir/multipart.headers" -H "Content-Type: $MULTIPART_TYPE" \
    --data-binary "@$OUT/batch-multipart.txt" "$GH_BASE/\$batch"
  curl -sS -o "$dir/json.body" -D "$dir/json.headers" -H "Content-Type: $JSON_TYPE" \
    --data-binary "@$OUT/batch.json" "$GH_BASE/\$batch"
  python3 - "$dir" "$engine" "${#PAGES[@]}" <<'EOF' | tee -a "$CHECKS" || die "$engine: the batch answers differ from the pages alone (see $CHECKS)"
import json, os, re, sys
d, engine, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pages = [open(os.path.join(d, "page%d.body" % k), "rb").read() for k in range(n)]
failed = []

def head(name):
    lines = open(os.path.join(d, name + ".headers"), "rb").read().decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
    return status, fields

def multipart():
    status, fields = head("multipart")
    body = open(os.path.join(d, "multipart.body"), "rb").read()
    if status != 200:
        return False, "answered %d: %r" % (status, body[:200])
    m = re.search(r"boundary=([^;\s]+)", fields.get("content-type", ""))
    if not m:
        return False, "no boundary in Content-Type %r" % fields.get("content-type")
    delim = b"--" + m.group(1).strip('"').encode()
    chunks = body.split(delim)
    if chunks[0].strip() or not chunks[-1].startswith(b"--"):
        return False, "not a multipart body with that boundary"
    parts = chunks[1:-1]
    if len(parts) != n:
        return False, "%d parts, not %d" % (len(parts), n)
    for k, part in enumerate(parts):
        part = part[2:] if part.startswith(b"\r\n") else part
        mime, _, http = part.partition(b"\r\n\r\n")
        if b"content-id: p%d\r\n" % k not in mime.lower() + b"\r\n":
            return False, "part %d: no Content-ID p%d in %r" % (k, k, mime)
        top, _, inner = http.partition(b"\r\n\r\n")
        line = top.split(b"\r\n")[0].split()
        if len(line) < 2 or line[1] != b"200":
            return False, "part %d answered %r" % (k, top.split(b"\r\n")[0])
        length = re.search(rb"(?im)^content-length:\s*(\d+)", top)
        inner = inner[:int(length.group(1))] if length else inner[:-2]
        if inner != pages[k]:
            return False, "part %d: the body differs from the page alone (%d vs %d B)" % (k, len(inner), len(pages[k]))
    return True, "%d parts, each 200 with its Content-ID and the body of its page alone; %d B" % (n, len(body))

def json_batch():
    status, fields = head("json")
    raw = open(os.path.join(d, "json.body"), "rb").read()
    if status != 200:
        return False, "answered %d: %r" % (status, raw[:200])
    try:
        responses = json.loads(raw)["responses"]
    except (ValueError, KeyError, TypeError):
        return False, "no JSON with responses: %r" % raw[:200]
    if len(responses) != n:
        return False, "%d responses, not %d" % (len(responses), n)
    for k, r in enumerate(responses):
        if r.get("id") != "p%d" % k or r.get("status") != 200:
            return False, "response %d: id %r, status %r" % (k, r.get("id"), r.get("status"))
        if r.get("body") != json.loads(pages[k]):
            return False, "response %d: the body differs from the page alone" % k
    return True, "%d responses, each 200 with its id and the body (as JSON) of its page alone; %d B" % (n, len(raw))

counts = [json.loads(p).get("@odata.count") for p in pages]
rows = [len(json.loads(p)["value"]) for p in pages]
print("- %s: the 10 pages alone: each 200, %s rows each, @odata.count %s on the first; %d B together" % (
    engine, "/".join(map(str, sorted(set(rows)))), counts[0], sum(map(len, pages))))
for name, f in (("multipart", multipart), ("json", json_batch)):
    ok, result = f()
    if not ok:
        failed.append(name)
    print("- %s: %s batch: %s%s" % (engine, name, "" if ok else "FAILED: ", result))
sys.exit(1 if failed else 0)
EOF
}

# --- measurements ---------------------------------------------------------------------
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ="$(getconf CLK_TCK)"
RUNS="$OUT/runs.tsv" # one line per measurement
printf 'engine\tway\tround\tcpu\tfile\n' >"$RUNS"

wrk_way() { # wrk_way WAY DURATION CHECK [WRK_ARGS...]: wrk with that way's requests, output on stdout
  local way=$1 duration=$2 check=$3 # CHECK=1: read the batch answers (batch.lua)
  shift 3
  case "$way" in
    multipart) BATCH_BODY="$OUT/batch-multipart.txt" BATCH_TYPE="$MULTIPART_TYPE" BATCH_CHECK=$check \
      wrk -t"$THREADS" -c"$CONNS" -d"$duration" --timeout "$WRK_TIMEOUT" -s "$LUA" "$@" "$GH_BASE/\$batch" ;;
    json) BATCH_BODY="$OUT/batch.json" BATCH_TYPE="$JSON_TYPE" BATCH_CHECK=$check \
      wrk -t"$THREADS" -c"$CONNS" -d"$duration" --timeout "$WRK_TIMEOUT" -s "$LUA" "$@" "$GH_BASE/\$batch" ;;
    alone) BATCH_URLS="$OUT/urls.txt" \
      wrk -t"$THREADS" -c"$CONNS" -d"$duration" --timeout "$WRK_TIMEOUT" -s "$LUA" "$@" "$GH_ROOT" ;;
  esac
}

bench() { # bench ENGINE WAY ROUND
  local engine=$1 way=$2 round=$3 file="$OUT/$1-$2-r$3.txt" c0 c1 t0 t1 cpu pages=10
  wrk_way "$way" "$WARMUP" 1 >"$file.warmup"
  c0=$(cpu_ticks "$GH_PID"); t0=$(date +%s.%N)
  wrk_way "$way" "$DURATION" 0 --latency >"$file"
  c1=$(cpu_ticks "$GH_PID"); t1=$(date +%s.%N)
  cpu=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" 'BEGIN {printf "%.0f", 100 * (b - a) / hz / (e - s)}')
  printf '%s\t%s\t%s\t%s\t%s\n' "$engine" "$way" "$round" "$cpu" "$file" >>"$RUNS"
  [[ "$way" == alone ]] && pages=1
  printf '  %-8s %-9s r%s %s  server cpu %s%%%s\n' "$engine" "$way" "$round" \
    "$(awk -v k="$pages" '/Requests\/sec/ {printf "%8.1f req/s %8.1f pages/s", $2, k * $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2} /Non-2xx/ {bad = "  NON-2xx: " $NF} /Socket errors/ {bad = bad "  " $0} END {printf "  p50 %s  p99 %s%s", p50, p99, bad}' "$file")" \
    "$cpu" "$(sed -n 's/^batch parts: \([0-9]*\), not 200: \([0-9]*\)$/  (warm-up: \1 parts, \2 not 200)/p' "$file.warmup")"
}

read -ra WAY_LIST <<<"$WAYS"
echo "== $ROUNDS rounds, $ROWS rows; wrk -t$THREADS -c$CONNS -d$DURATION --latency after a $WARMUP warm-up; pages:"
printf '   %s\n' "${PAGES[@]}"
start=$(date +%s)
for round in $(seq 1 "$ROUNDS"); do
  echo "-- round $round ($(date +%H:%M:%S))"
  for engine in $ENGINES; do
    start_gh "$engine" "$ROWS"
    [[ "$round" == 1 ]] && check "$engine"
    n=${#WAY_LIST[@]}
    for j in $(seq 0 $((n - 1))); do
      bench "$engine" "${WAY_LIST[$(((j + round - 1) % n))]}" "$round"
    done
    stop_gh
  done
done
echo "measured in $(($(date +%s) - start)) s"

printf '%s\n' "${PAGES[@]}" >"$OUT/pages.txt"
python3 bench/batch_report.py "$OUT" --engines "$ENGINES" --ways "$WAYS" --rounds "$ROUNDS" --rows "$ROWS" \
  --duration "$DURATION" --warmup "$WARMUP" --conns "$CONNS" --threads "$THREADS" --page-size "$PAGE_SIZE" >"$OUT/results.md"
echo
cat "$OUT/results.md"
cp "$OUT/results.md" "$ROOT/bench/out/batch-latest.md"
echo
echo "output: $OUT"

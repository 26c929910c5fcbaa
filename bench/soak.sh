#!/usr/bin/env bash
# Soak and fault run (release build, wrk, PostgreSQL): two `gatehouse serve`
# instances on one fresh PostgreSQL database, and four parts, each ending in
# PASS/FAIL lines with figures that can be pasted into BENCHMARKS.md:
#   mixed    64 connections of mixed traffic for DURATION seconds: screens,
#            failed and successful sign-ins, sign-outs, forgot-password, OData
#            with a bearer token, two-factor users' sign-ins followed by wrong
#            codes, over both instances; meanwhile other two-factor users sign
#            in with the right code (bench/soak_probe.py tf-probe). No 5xx but
#            503 busy, and every right-code two-factor sign-in succeeds.
#   flood    300 connections of sign-ins for unknown addresses from one client
#            address for FLOOD_SECONDS; meanwhile a user at another address
#            signs in (>= 10 tries): every try 200 in under a second.
#   kill     under load, kill -9 one instance; everything it answered 2xx
#            (sessions, forgot-password requests, password changes, a token)
#            is there after the restart, every forgot-password mail is sent.
#   restart  PostgreSQL is stopped for PG_DOWN_SECONDS and started again under
#            a light load: failures only while it is down, the first success
#            within 5 s of it being back, no Gatehouse restart.
#
#   bash bench/soak.sh                      (all parts, DURATION=180)
#   PARTS="flood kill" bash bench/soak.sh   (some parts)
#
# Not part of cargo test or CI. It restarts the local PostgreSQL server (part
# restart): every other client of that server loses its connections.
# Environment: DURATION (180), FLOOD_SECONDS (30), PG_DOWN_SECONDS (15: longer
# than the pool's 10 s acquire timeout, so requests do fail while it is down),
# MAIL_WAIT (130), PORT_A/PORT_B (8711/8712), SOAK_DB (gh_soak),
# PG_BASE (postgres://postgres@127.0.0.1:5432), GATEHOUSE_BIN (default
# $CARGO_TARGET_DIR or target, /release/gatehouse; built when missing),
# FLOOD_CONNECTIONS (300, split over the instances), KEEP=1 keeps the
# database. Output: bench/out/soak-<time>/ (results.txt, wrk outputs, logs, mail).
set -euo pipefail
cd "$(dirname "$0")/.."
PARTS="${PARTS:-mixed flood kill restart}"
DURATION="${DURATION:-180}"
FLOOD_SECONDS="${FLOOD_SECONDS:-30}"
FLOOD_CONNECTIONS="${FLOOD_CONNECTIONS:-300}"
PG_DOWN_SECONDS="${PG_DOWN_SECONDS:-15}"
MAIL_WAIT="${MAIL_WAIT:-130}"
PORT_A="${PORT_A:-8711}"
PORT_B="${PORT_B:-8712}"
SOAK_DB="${SOAK_DB:-gh_soak}"
PG_BASE="${PG_BASE:-postgres://postgres@127.0.0.1:5432}"
BIN="${GATEHOUSE_BIN:-${CARGO_TARGET_DIR:-target}/release/gatehouse}"
OUT="${OUT:-bench/out/soak-$(date +%Y%m%d-%H%M%S)}"
PASSWORD="correct horse battery staple"
USERS=50
TF_USERS=20     # two-factor users the load sends wrong codes for
TF_OK_USERS=4   # two-factor users the probe signs in with the right code
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
command -v psql >/dev/null || { echo "psql is required" >&2; exit 1; }
if [ ! -x "$BIN" ]; then
  ROCKET_SECRET_KEY="$(head -c32 /dev/urandom | base64)" cargo build --release --quiet --bin gatehouse
fi
mkdir -p "$OUT/mail"
OUT="$(cd "$OUT" && pwd)"
URL_A="http://127.0.0.1:$PORT_A"
URL_B="http://127.0.0.1:$PORT_B"
PROBE=(python3 bench/soak_probe.py)
RESULTS="$OUT/results.txt"
: >"$RESULTS"

export ROCKET_PROFILE=release
ROCKET_SECRET_KEY="$(head -c32 /dev/urandom | base64)"
export ROCKET_SECRET_KEY
export ROCKET_DATABASES="{main={url=\"$PG_BASE/$SOAK_DB\"}}"
export ROCKET_BASE_URL="$URL_A"
# Defaults everywhere (throttle_attempts 5, ip_throttle_attempts 100,
# hash_queue 64); the load generator stands behind a "proxy" on 127.0.0.1 and
# names its clients in X-Forwarded-For.
export ROCKET_AUTH='{trusted_proxies=["127.0.0.1"]}'
export ROCKET_MAIL="{transport=\"file\",dir=\"$OUT/mail\"}"
export ROCKET_LOG_LEVEL=critical RUST_LOG=warn NO_COLOR=1

psql_admin() { psql -X -q -v ON_ERROR_STOP=1 "$PG_BASE/postgres" "$@"; }
psql_soak() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$PG_BASE/$SOAK_DB" "$@"; }
say() { echo "$*" | tee -a "$RESULTS"; }
now() { date +%s.%N; }

# How PostgreSQL is run here: a Debian cluster (pg_ctlcluster) or a bare data
# directory (pg_ctl as the postgres user).
PG_CLUSTER=""
PG_DATADIR=""
find_pg() {
  if command -v pg_lsclusters >/dev/null; then
    PG_CLUSTER="$(pg_lsclusters -h 2>/dev/null | awk '$3 == 5432 && $4 == "online" {print $1 " " $2; exit}')"
  fi
  if [ -z "$PG_CLUSTER" ]; then
    PG_DATADIR="$(ps -o args= -C postgres | sed -n 's/.* -D \([^ ]*\).*/\1/p' | head -1)"
  fi
}
pg_stop() {
  if [ -n "$PG_CLUSTER" ]; then pg_ctlcluster $PG_CLUSTER stop -m fast
  else su postgres -c "pg_ctl -D '$PG_DATADIR' stop -m fast -w" >/dev/null; fi
}
pg_start() {
  if [ -n "$PG_CLUSTER" ]; then pg_ctlcluster $PG_CLUSTER start
  else su postgres -c "pg_ctl -D '$PG_DATADIR' start -w -l '$OUT/postgres.log'" >/dev/null; fi
}
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
PG_STOPPED=0

PIDS_A="" PIDS_B=""
BG=()
cleanup() {
  set +e
  for pid in "${BG[@]}"; do kill "$pid" 2>/dev/null; done
  [ -n "$PIDS_A" ] && kill "$PIDS_A" 2>/dev/null
  [ -n "$PIDS_B" ] && kill "$PIDS_B" 2>/dev/null
  sleep 0.5
  if [ "$PG_STOPPED" = 1 ] || ! pg_up; then
    echo "starting PostgreSQL again" >&2
    pg_start
  fi
  if [ "${KEEP:-0}" != 1 ]; then
    psql_admin -c "DROP DATABASE IF EXISTS $SOAK_DB WITH (FORCE)" >/dev/null 2>&1
  fi
  echo "work directory: $OUT" >&2
}
trap cleanup EXIT

start_instance() { # name port
  local name=$1 port=$2
  ROCKET_PORT="$port" "$BIN" serve >>"$OUT/$name.log" 2>&1 &
  local pid=$!
  if [ "$name" = a ]; then PIDS_A=$pid; else PIDS_B=$pid; fi
  for _ in $(seq 1 200); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/login" && return 0
    kill -0 "$pid" 2>/dev/null || { echo "instance $name died on start:" >&2; tail -20 "$OUT/$name.log" >&2; exit 1; }
    sleep 0.05
  done
  echo "instance $name did not answer" >&2
  exit 1
}
# Log lines of level WARN or ERROR, and panics, since a mark.
log_mark() { for n in a b; do wc -l <"$OUT/$n.log"; done | paste -sd' '; }
log_since() { # "la lb" label
  local la lb
  read -r la lb <<<"$1"
  for n in a b; do
    local from=$la
    [ "$n" = b ] && from=$lb
    tail -n +"$((from + 1))" "$OUT/$n.log" | sed 's/\x1b\[[0-9;]*m//g' | grep -E ' (WARN|ERROR) |panicked' >"$OUT/$2-$n.warnings" || true
    local w e
    w=$(grep -c ' WARN ' "$OUT/$2-$n.warnings" || true)
    e=$(grep -cE ' ERROR |panicked' "$OUT/$2-$n.warnings" || true)
    echo "  instance $n log during $2: $w WARN, $e ERROR/panic lines"
    grep -E ' ERROR |panicked' "$OUT/$2-$n.warnings" | head -5 | sed 's/^/    /' || true
    grep ' WARN ' "$OUT/$2-$n.warnings" | sed -E 's/^[^ ]+ +WARN +//; s/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -5 | sed 's/^/    /' || true
  done
}
# CPU ticks (1/100 s) of a process by thread name (numbers stripped): "name=ticks ...".
thread_cpu() {
  awk '{name = $2; gsub(/[()]/, "", name); sub(/[0-9]+$/, "", name); sub(/-$/, "", name); a[name] += $14 + $15}
       END {for (k in a) printf "%s=%d ", k, a[k]}' /proc/"$1"/task/*/stat 2>/dev/null || true
}
cpu_diff() { # before after t_before t_after -> "name N % ..."
  awk -v a="$1" -v b="$2" -v dt="$(awk -v x="$3" -v y="$4" 'BEGIN {print y - x}')" 'BEGIN {
    n = split(a, xs, " "); for (i = 1; i <= n; i++) { split(xs[i], kv, "="); before[kv[1]] = kv[2] }
    n = split(b, ys, " "); out = ""
    for (i = 1; i <= n; i++) { split(ys[i], kv, "="); d = (kv[2] - before[kv[1]]) / dt
      if (d >= 0.5) out = out sprintf("%s%s %.0f", out == "" ? "" : ", ", kv[1], d) }
    print out }'
}
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# whole machine: busy= and idle= ticks over all cores (/proc/stat)
machine_ticks() { awk '/^cpu / {print "machine-busy=" $2 + $3 + $4 + $7 + $8 " machine-idle=" $5 + $6}' /proc/stat; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# ------------------------------------------------------------------ set-up
find_pg
echo "== set-up: database $SOAK_DB, binary $BIN ($(date -r "$BIN" '+%F %T')), work directory $OUT"
echo "   PostgreSQL: ${PG_CLUSTER:+cluster $PG_CLUSTER}${PG_DATADIR:+data directory $PG_DATADIR}"
psql_admin -c "DROP DATABASE IF EXISTS $SOAK_DB WITH (FORCE)" -c "CREATE DATABASE $SOAK_DB" >/dev/null
"$BIN" migrate >"$OUT/setup.log" 2>&1
add_user() { printf '%s\n' "$PASSWORD" | "$BIN" user add "$1" --name "$2" --password-stdin >>"$OUT/setup.log" 2>&1; }
add_user soak-1@example.org "Soak 1"
# Every other account gets the same argon2id hash (a user add hashes once).
psql_soak >/dev/null <<SQL
INSERT INTO users (name, email, password, created_at, updated_at)
SELECT n, e, (SELECT password FROM users WHERE email = 'soak-1@example.org'), now(), now()
FROM (
  SELECT 'Soak ' || i AS n, 'soak-' || i || '@example.org' AS e FROM generate_series(2, $USERS) i
  UNION ALL SELECT 'Kill session ' || i, 'ks-' || i || '@example.org' FROM generate_series(1, 20) i
  UNION ALL SELECT 'Kill forgot ' || i, 'kf-' || i || '@example.org' FROM generate_series(1, 400) i
  UNION ALL SELECT 'Two-factor ' || i, 'tf-' || i || '@example.org' FROM generate_series(1, $TF_USERS) i
  UNION ALL SELECT 'Two-factor ok ' || i, 'tfok-' || i || '@example.org' FROM generate_series(1, $TF_OK_USERS) i
  UNION ALL VALUES ('Password HTTP', 'kp-http@example.org'), ('Password CLI', 'kp-cli@example.org'),
    ('Flood user', 'flood-user@example.org'), ('PG user', 'pg-user@example.org'),
    ('OData', 'odata@example.org')
) AS t;
SQL
TOKEN="$("$BIN" token create odata@example.org --name soak 2>>"$OUT/setup.log" | tail -1)"
echo "   users: $(psql_soak -c 'SELECT count(*) FROM users'), bearer token for odata@example.org"
start_instance a "$PORT_A"
start_instance b "$PORT_B"
echo "   instances: a $URL_A (pid $PIDS_A), b $URL_B (pid $PIDS_B)"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL_B/odata/Users")" = 200 ] \
  || { echo "the bearer token does not read /odata/Users" >&2; exit 1; }
tf_emails() { seq 1 "$2" | sed "s/.*/$1-&@example.org/" | paste -sd,; }
"${PROBE[@]}" tf-enrol --url "$URL_A" --password "$PASSWORD" --out "$OUT/tf-attacked.json" \
  --emails "$(tf_emails tf "$TF_USERS")" >>"$OUT/setup.log"
"${PROBE[@]}" tf-enrol --url "$URL_B" --password "$PASSWORD" --out "$OUT/tf-ok.json" \
  --emails "$(tf_emails tfok "$TF_OK_USERS")" >>"$OUT/setup.log"
echo "   two-factor on for $TF_USERS users under wrong codes and $TF_OK_USERS signing in with the right one"
VERDICT=0
verdict() { # PASS|FAIL line
  say "$1 $2"
  [ "$1" = PASS ] || VERDICT=1
}

# Sums the SOAK lines of wrk outputs: prints "key=value ..." totals.
sum_soak() {
  awk '/^SOAK / { for (i = 2; i <= NF; i++) { split($i, kv, "=")
                    if (kv[1] ~ /_ms$/) { if (kv[2] > m[kv[1]]) m[kv[1]] = kv[2] }
                    else if (kv[1] ~ /^first/) { if (kv[2] > 0 && (!(kv[1] in f) || kv[2] < f[kv[1]])) f[kv[1]] = kv[2] }
                    else s[kv[1]] += kv[2] } }
       END { for (k in s) printf "%s=%s ", k, s[k]; for (k in m) printf "%s=%s ", k, m[k]
             for (k in f) printf "%s=%s ", k, f[k]; print "" }' "$@"
}
get() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

# ------------------------------------------------------------------ mixed
if [[ " $PARTS " == *" mixed "* ]]; then
  echo "== mixed: 64 connections (32 per instance) for ${DURATION}s"
  mark=$(log_mark)
  export SOAK_MODE=mixed SOAK_TOKEN="$TOKEN" SOAK_USERS="$USERS" SOAK_PASSWORD="$PASSWORD" SOAK_TF_USERS="$TF_USERS"
  rm -f "$OUT/tf-stop"
  "${PROBE[@]}" tf-probe --urls "$URL_A,$URL_B" --secrets "$OUT/tf-ok.json" --password "$PASSWORD" \
    --stop "$OUT/tf-stop" >"$OUT/tf-probe.txt" 2>&1 &
  wp=$!; BG+=("$wp")
  wrk -t1 -c32 -d"${DURATION}s" --timeout 10s -s bench/soak.lua "$URL_A" >"$OUT/mixed-a.txt" 2>&1 &
  wa=$!; BG+=("$wa")
  wrk -t1 -c32 -d"${DURATION}s" --timeout 10s -s bench/soak.lua "$URL_B" >"$OUT/mixed-b.txt" 2>&1 &
  wb=$!; BG+=("$wb")
  peak_a=0 peak_b=0
  while kill -0 "$wa" 2>/dev/null || kill -0 "$wb" 2>/dev/null; do
    sleep 5
    r=$(rss_kb "$PIDS_A"); if [ "$r" -gt "$peak_a" ]; then peak_a=$r; fi
    r=$(rss_kb "$PIDS_B"); if [ "$r" -gt "$peak_b" ]; then peak_b=$r; fi
  done
  wait "$wa" "$wb" || true
  touch "$OUT/tf-stop"
  wait "$wp" || true
  t=$(sum_soak "$OUT/mixed-a.txt" "$OUT/mixed-b.txt")
  req=$(get requests "$t"); dur=$(awk -v d="$(grep -h '^SOAK' "$OUT/mixed-a.txt" | sed 's/.*duration_us=\([0-9]*\).*/\1/')" 'BEGIN {print d / 1e6}')
  rps=$(awk -v r="$req" -v d="$dur" 'BEGIN {printf "%.1f", r / d}')
  c2=$(get s2 "$t"); c3=$(get s3 "$t"); c4=$(get s4 "$t"); c429=$(get s429 "$t"); busy=$(get busy "$t"); c5=$(get s5 "$t")
  errs=$(( $(get err_connect "$t") + $(get err_read "$t") + $(get err_write "$t") + $(get err_timeout "$t") ))
  say "mixed: $req requests in ${dur}s over 64 connections, $rps req/s (a $(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$OUT/mixed-a.txt"), b $(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$OUT/mixed-b.txt"))"
  say "mixed: 2xx $c2, 3xx $c3, 4xx $c4 (422 $(get s422 "$t"), 401 $(get s401 "$t")), 429 $c429, 503 busy $busy, other 5xx $c5, other $(get other "$t"), socket errors $errs (timeouts $(get err_timeout "$t"))"
  say "mixed: by kind: screens $(get screens "$t"), sign-ins ok $(get login_ok "$t"), failed sign-ins $(get login_fail "$t"), sign-outs $(get logouts "$t"), forgot-password $(get forgot_ok "$t"), OData pages $(get odata_ok "$t"), two-factor pending $(get tf_pending "$t"), wrong codes counted $(get tf_failed "$t"), other 2xx $(get other2xx "$t")"
  tfp=$(grep -h '^TFPROBE' "$OUT/tf-probe.txt" || echo "TFPROBE sign_ins=0 ok=0")
  say "mixed: right-code two-factor sign-ins meanwhile: ${tfp#TFPROBE }"
  say "mixed: latency p50 $(grep -h '^SOAK' "$OUT"/mixed-[ab].txt | sed 's/.*p50_ms=\([0-9.]*\).*/\1/' | paste -sd/) ms, p99 $(grep -h '^SOAK' "$OUT"/mixed-[ab].txt | sed 's/.*p99_ms=\([0-9.]*\).*/\1/' | paste -sd/) ms (a/b); server RSS peak a $((peak_a / 1024)) MB, b $((peak_b / 1024)) MB"
  grep -h '^SAMPLES' "$OUT"/mixed-[ab].txt | sed 's/^/mixed: samples of unexpected answers:/' | tee -a "$RESULTS" || true
  log_since "$mark" mixed | tee -a "$RESULTS"
  if [ "$c5" = 0 ] && [ "$req" -gt 0 ]; then
    verdict PASS "mixed: no 5xx but $busy × 503 busy in $req requests"
  else
    verdict FAIL "mixed: $c5 5xx other than 503 busy in $req requests"
  fi
  tf_n=$(get sign_ins "$tfp"); tf_ok=$(get ok "$tfp")
  if [ "${tf_n:-0}" -gt 0 ] && [ "$tf_n" = "$tf_ok" ]; then
    verdict PASS "mixed: $tf_ok of $tf_n right-code two-factor sign-ins succeeded"
  else
    verdict FAIL "mixed: $tf_ok of $tf_n right-code two-factor sign-ins succeeded"
  fi
  [ "$errs" = 0 ] || say "mixed: NOTE $errs socket errors (see $OUT/mixed-[ab].txt)"
fi

# ------------------------------------------------------------------ flood
if [[ " $PARTS " == *" flood "* ]]; then
  echo "== flood: $FLOOD_CONNECTIONS connections ($((FLOOD_CONNECTIONS / 2)) per instance) of unknown-address sign-ins from 198.51.100.1 for ${FLOOD_SECONDS}s"
  mark=$(log_mark)
  export SOAK_MODE=flood SOAK_FLOOD_IP=198.51.100.1
  t_flood=$(date +%s)
  wrk -t1 -c"$((FLOOD_CONNECTIONS / 2))" -d"${FLOOD_SECONDS}s" --timeout 10s -s bench/soak.lua "$URL_A" >"$OUT/flood-a.txt" 2>&1 &
  wa=$!; BG+=("$wa")
  wrk -t1 -c"$((FLOOD_CONNECTIONS / 2))" -d"${FLOOD_SECONDS}s" --timeout 10s -s bench/soak.lua "$URL_B" >"$OUT/flood-b.txt" 2>&1 &
  wb=$!; BG+=("$wb")
  # CPU by thread group from +2 s to 2 s before the end of the flood
  cpu_snap() {
    local t w m pg a b
    t=$(now); w=$(( $(proc_ticks "$wa") + $(proc_ticks "$wb") )); m=$(machine_ticks)
    pg=$(pgrep -x postgres | sed 's|.*|/proc/&/stat|' | xargs awk '{s += $14 + $15} END {print s + 0}' 2>/dev/null || echo 0)
    a=$(thread_cpu "$PIDS_A"); b=$(thread_cpu "$PIDS_B")
    echo "$t | $a | $b | wrk=$w postgres=$pg $m"
  }
  ( sleep 2; cpu_snap >"$OUT/flood-cpu1"; sleep "$((FLOOD_SECONDS - 5))"; cpu_snap >"$OUT/flood-cpu2" ) &
  BG+=("$!")
  sleep 2
  # a try every 2 s while the flood lasts (no try starts in its last second)
  "${PROBE[@]}" realuser --urls "$URL_A,$URL_B" --email flood-user@example.org --password "$PASSWORD" \
    --ip 203.0.113.50 --tries 1000 --interval 2 --t0 "$t_flood" --until "$((t_flood + FLOOD_SECONDS - 1))" \
    | tee "$OUT/flood-user.txt"
  wait "$wa" "$wb" || true
  sleep 0.2
  IFS='|' read -r t_cpu1 cpu_a1 cpu_b1 cpu_w1 <"$OUT/flood-cpu1"
  IFS='|' read -r t_cpu2 cpu_a2 cpu_b2 cpu_w2 <"$OUT/flood-cpu2"
  t=$(sum_soak "$OUT/flood-a.txt" "$OUT/flood-b.txt")
  u=$(grep '^REALUSER' "$OUT/flood-user.txt")
  say "flood: $(get requests "$t") sign-ins from 198.51.100.1 in ${FLOOD_SECONDS}s: 422 $(get s422 "$t"), 429 $(get s429 "$t"), 503 busy $(get busy "$t"), 2xx $(get s2 "$t"), other 4xx $(( $(get s4 "$t") - $(get s422 "$t") )), other 5xx $(get s5 "$t"), socket errors $(( $(get err_connect "$t") + $(get err_read "$t") + $(get err_write "$t") + $(get err_timeout "$t") ))"
  f429=$(get first429 "$t"); fbusy=$(get firstbusy "$t")
  say "flood: first 503 busy at +$(awk -v a="${fbusy:-0}" -v b="$t_flood" 'BEGIN {if (a > 0) printf "%.0f s", a - b; else print "never"}'), first 429 at +$(awk -v a="${f429:-0}" -v b="$t_flood" 'BEGIN {if (a > 0) printf "%.0f s", a - b; else print "never"}') (1 s resolution)"
  say "flood: CPU from +2 s to +$((FLOOD_SECONDS - 3)) s, in % of one core (machine: 2 cores = 200): a $(cpu_diff "$cpu_a1" "$cpu_a2" "$t_cpu1" "$t_cpu2"); b $(cpu_diff "$cpu_b1" "$cpu_b2" "$t_cpu1" "$t_cpu2"); $(cpu_diff "$cpu_w1" "$cpu_w2" "$t_cpu1" "$t_cpu2")"
  grep '^try' "$OUT/flood-user.txt" | sed 's/^/flood: /' >>"$RESULTS"
  say "flood: user at 203.0.113.50, $(get tries "$u") tries during the flood, alternating a/b: $(get ok "$u") answered 200, p50 $(get p50_ms "$u") ms, max $(get max_ms "$u") ms, answers $(get statuses "$u")"
  grep -h '^SAMPLES' "$OUT"/flood-[ab].txt | sed 's/^/flood: samples of unexpected answers:/' | tee -a "$RESULTS" || true
  log_since "$mark" flood | tee -a "$RESULTS"
  if [ "$(get ok "$u")" = "$(get tries "$u")" ] && [ "$(get tries "$u")" -ge 10 ] && awk -v m="$(get max_ms "$u")" 'BEGIN {exit !(m < 1000)}' && [ "$(get s5 "$t")" = 0 ]; then
    verdict PASS "flood: every sign-in of the other client answered 200 in under 1 s (max $(get max_ms "$u") ms); no 5xx but busy"
  else
    verdict FAIL "flood: the other client's sign-ins: $(get statuses "$u"), max $(get max_ms "$u") ms; other 5xx $(get s5 "$t")"
  fi
fi

# ------------------------------------------------------------------ kill
if [[ " $PARTS " == *" kill "* ]]; then
  echo "== kill: kill -9 instance b under load, restart it, check what it answered"
  mark=$(log_mark)
  rm -f "$OUT/kill.stop" "$OUT/kill-records.jsonl"
  export SOAK_MODE=mixed SOAK_TOKEN="$TOKEN" SOAK_USERS="$USERS" SOAK_PASSWORD="$PASSWORD"
  wrk -t1 -c8 -d16s --timeout 10s -s bench/soak.lua "$URL_A" >"$OUT/kill-load-a.txt" 2>&1 &
  wa=$!; BG+=("$wa")
  wrk -t1 -c8 -d16s --timeout 10s -s bench/soak.lua "$URL_B" >"$OUT/kill-load-b.txt" 2>&1 &
  wb=$!; BG+=("$wb")
  # a reset token for the password reset the killed instance will answer
  curl -sf -o /dev/null -H 'Content-Type: application/json' -H 'X-Forwarded-For: 192.0.2.7' \
    -d '{"email":"kp-http@example.org"}' "$URL_A/auth/forgot-password"
  pw_token=$("${PROBE[@]}" reset-token --maildir "$OUT/mail" --email kp-http@example.org)
  sleep 1
  "${PROBE[@]}" kill-record --urls "a=$URL_A,b=$URL_B" --victim b --password "$PASSWORD" \
    --pw-email kp-http@example.org --pw-token "$pw_token" --new-password "a brand new soak password 1" --pw-after 3 \
    --stop "$OUT/kill.stop" --out "$OUT/kill-records.jsonl" >"$OUT/kill-record.txt" 2>&1 &
  probe=$!; BG+=("$probe")
  sleep 5
  # right before the kill: a password change and a token through the CLI
  printf '%s\n' "a brand new soak password 2" | "$BIN" user set-password kp-cli@example.org --password-stdin >>"$OUT/setup.log" 2>&1
  t_cli=$(now)
  TOKEN2="$("$BIN" token create odata@example.org --name before-kill 2>>"$OUT/setup.log" | tail -1)"
  kill -9 "$PIDS_B"
  t_kill=$(now)
  wait "$PIDS_B" 2>/dev/null || true
  PIDS_B=""
  sleep 2
  touch "$OUT/kill.stop"
  wait "$probe" || true
  wait "$wa" "$wb" || true
  pending=$(psql_soak -c "SELECT count(*) FROM gatehouse_reset_requests")
  start_instance b "$PORT_B"
  t_back=$(now)
  say "kill: instance b killed (SIGKILL) at +$(awk -v a="$t_kill" -v b="$t_cli" 'BEGIN {printf "%.3f", a - b}') s after the CLI password change, restarted $(awk -v a="$t_back" -v b="$t_kill" 'BEGIN {printf "%.1f", a - b}') s later (pid $PIDS_B); reset requests still stored at restart: $pending"
  say "kill: requests during the kill: $(sed -n 's/^KILLRECORD //p' "$OUT/kill-record.txt")"
  "${PROBE[@]}" kill-verify --urls "a=$URL_A,b=$URL_B" --victim b --records "$OUT/kill-records.jsonl" \
    --maildir "$OUT/mail" --mail-wait "$MAIL_WAIT" --token "$TOKEN2" --t-kill "$t_kill" \
    --password-record "{\"via\":\"gatehouse user set-password\",\"t\":$t_cli,\"email\":\"kp-cli@example.org\",\"old\":\"$PASSWORD\",\"new\":\"a brand new soak password 2\"}" \
    >"$OUT/kill-verify.txt" 2>&1 && kv=0 || kv=$?
  sed -n 's/^KILLVERIFY /kill: /p' "$OUT/kill-verify.txt" | tee -a "$RESULTS"
  grep -v '^KILLVERIFY' "$OUT/kill-verify.txt" | head -20 || true
  say "kill: reset requests still stored after the check: $(psql_soak -c "SELECT count(*) FROM gatehouse_reset_requests")"
  log_since "$mark" kill | tee -a "$RESULTS"
  if [ "$kv" = 0 ]; then
    verdict PASS "kill: nothing answered 2xx was lost ($(grep -c '"session"' "$OUT/kill-records.jsonl") sessions, $(grep -c '"forgot"' "$OUT/kill-records.jsonl") forgot-password requests, 2 password changes, 1 token)"
  else
    verdict FAIL "kill: something answered 2xx was lost (see above and $OUT/kill-verify.txt)"
  fi
fi

# ------------------------------------------------------------------ restart
if [[ " $PARTS " == *" restart "* ]]; then
  echo "== restart: PostgreSQL stopped for ${PG_DOWN_SECONDS}s under a light load"
  mark=$(log_mark)
  # Other clients of this server lose their connections: wait a while for
  # them to finish (PG_QUIET_WAIT seconds), then go ahead anyway.
  others_now() { psql_admin -t -A -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM '$SOAK_DB' AND pid <> pg_backend_pid()"; }
  waited=0
  while [ "$(others_now)" != 0 ] && [ "$waited" -lt "${PG_QUIET_WAIT:-300}" ]; do sleep 5; waited=$((waited + 5)); done
  say "restart: other clients of the PostgreSQL server right before the restart: $(others_now) (waited ${waited} s for them)"
  rm -f "$OUT/pg.stop" "$OUT/pg-probe.jsonl"
  "${PROBE[@]}" pg-probe --urls "a=$URL_A,b=$URL_B" --token "$TOKEN" --email pg-user@example.org \
    --password "$PASSWORD" --stop "$OUT/pg.stop" --out "$OUT/pg-probe.jsonl" 2>"$OUT/pg-probe.err" &
  probe=$!; BG+=("$probe")
  sleep 5
  t_stop=$(now)
  PG_STOPPED=1
  pg_stop
  t_down=$(now)
  sleep "$PG_DOWN_SECONDS"
  t_start=$(now)
  pg_start
  until pg_up; do sleep 0.05; done
  t_up=$(now)
  PG_STOPPED=0
  sleep 15
  touch "$OUT/pg.stop"
  wait "$probe" || true
  say "restart: stop took $(awk -v a="$t_down" -v b="$t_stop" 'BEGIN {printf "%.2f", a - b}') s, down $(awk -v a="$t_start" -v b="$t_down" 'BEGIN {printf "%.2f", a - b}') s, start took $(awk -v a="$t_up" -v b="$t_start" 'BEGIN {printf "%.2f", a - b}') s: unavailable from stop to ready $(awk -v a="$t_up" -v b="$t_stop" 'BEGIN {printf "%.2f", a - b}') s"
  "${PROBE[@]}" pg-analyze --records "$OUT/pg-probe.jsonl" --t-stop "$t_stop" --t-up "$t_up" >"$OUT/pg-analyze.txt"
  sed -n 's/^PGRESTART /restart: /p' "$OUT/pg-analyze.txt" | tee -a "$RESULTS"
  log_since "$mark" restart | tee -a "$RESULTS"
  same=$([ -n "$PIDS_A" ] && kill -0 "$PIDS_A" && [ -n "$PIDS_B" ] && kill -0 "$PIDS_B" && echo yes || echo no)
  rec=$(sed -n 's/.*recovery_s=\([0-9.inf]*\).*/\1/p' "$OUT/pg-analyze.txt")
  out=$(sed -n 's/.*outside=\([0-9]*\).*/\1/p' "$OUT/pg-analyze.txt")
  if [ "$same" = yes ] && [ "$out" = 0 ] && awk -v r="$rec" 'BEGIN {exit !(r <= 5)}'; then
    verdict PASS "restart: failures only while PostgreSQL was down, first success ${rec} s after it was back (≤ 5 s), same processes"
  else
    verdict FAIL "restart: recovery ${rec} s, $out failures outside the down window, instances still running: $same"
  fi
fi

echo "== summary ($RESULTS)"
grep -E '^(PASS|FAIL) ' "$RESULTS"
exit "$VERDICT"

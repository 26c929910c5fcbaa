#!/usr/bin/env bash
# Sign-in benchmark (release build, wrk): the raw argon2id verification rate of
# this machine, sign-in throughput at concurrency 4 and 16, and GET /login
# latency while sign-ins saturate the CPU. Each measurement runs ROUNDS times;
# BENCHMARKS.md quotes the medians.
#   bash bench/auth.sh            (ROUNDS=5 SECONDS_PER_RUN=8 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"
DURATION="${SECONDS_PER_RUN:-8}"
PORT="${PORT:-8700}"
OUT="${OUT:-bench/out}"
mkdir -p "$OUT"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
cargo build --release --quiet --bin gatehouse --example hash_rate
BIN=target/release/gatehouse
WORK="$(mktemp -d)"
export ROCKET_PROFILE=release
export ROCKET_SECRET_KEY="hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk="
export ROCKET_DATABASES="{main={url=\"sqlite://$WORK/bench.db?mode=rwc\"}}"
export ROCKET_PORT="$PORT" ROCKET_BASE_URL="http://127.0.0.1:$PORT" ROCKET_LOG_LEVEL=off RUST_LOG=warn
# The throttle must not interfere: every request here signs in successfully.
export ROCKET_AUTH='{throttle_attempts=1000000}'
printf 'correct horse battery staple\n' | "$BIN" user add bench@example.org --name Bench --password-stdin >/dev/null
"$BIN" serve >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/login" >/dev/null && break; sleep 0.1; done
URL="http://127.0.0.1:$PORT"

# Throughput: each login run is bracketed by raw-rate runs right before it
# (argon2's own verification) and right after it (verification into working
# memory kept across calls, as the server does), so a ratio compares
# measurements seconds apart (this machine's speed drifts).
rate() { sed 's/.*rate=\([0-9.]*\).*/\1/' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round"
  for c in 4 16; do
    target/release/examples/hash_rate "$DURATION" >"$OUT/hash-c$c-$round.txt"
    wrk -t2 -c"$c" -d"${DURATION}s" -s bench/login.lua "$URL/auth/login" >"$OUT/login-c$c-$round.txt"
    target/release/examples/hash_rate "$DURATION" reuse >"$OUT/hash-reuse-c$c-$round.txt"
    raw=$(rate "$OUT/hash-c$c-$round.txt")
    reused=$(rate "$OUT/hash-reuse-c$c-$round.txt")
    got=$(awk '/Requests\/sec/ {print $2}' "$OUT/login-c$c-$round.txt")
    echo "c$c raw=$raw/s raw_reused=$reused/s login=$got/s ratio=$(ratio "$got" "$raw") ratio_reused=$(ratio "$got" "$reused") $(grep -h 'Non-2xx' "$OUT/login-c$c-$round.txt" || true)"
  done
done

# Latency: GET /login while 16 connections keep signing in.
for round in $(seq 1 "$ROUNDS"); do
  wrk -t1 -c16 -d"$((DURATION + 4))s" -s bench/login.lua "$URL/auth/login" >"$OUT/load-$round.txt" &
  LOAD=$!
  sleep 2
  wrk -t1 -c4 -d"${DURATION}s" --latency "$URL/login" >"$OUT/getlogin-$round.txt"
  wait $LOAD
  echo "GET /login under load: p50 $(awk '$1 == "50%" {print $2}' "$OUT/getlogin-$round.txt") p99 $(awk '$1 == "99%" {print $2}' "$OUT/getlogin-$round.txt") $(grep Requests/sec "$OUT/getlogin-$round.txt"); logins meanwhile $(awk '/Requests\/sec/ {print $2}' "$OUT/load-$round.txt")/s"
done

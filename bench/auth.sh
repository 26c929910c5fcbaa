#!/usr/bin/env bash
# Sign-in benchmark (release build, wrk): the raw argon2id verification rate of
# this machine, sign-in throughput at concurrency 4 and 16, and GET /login
# latency while sign-ins saturate the CPU. Each measurement runs ROUNDS times;
# BENCHMARKS.md quotes the medians.
#   bash bench/auth.sh            (ROUNDS=5 SECONDS_PER_RUN=8 by default)
# The server and the sign-in client are bench/auth_lib.sh's, shared with
# bench/auth_ab.sh (two builds, or one build under two settings, side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ROUNDS="${ROUNDS:-5}"
DURATION="${SECONDS_PER_RUN:-8}"
PORT="${PORT:-8700}"
OUT="${OUT:-bench/out}"
die() { echo "auth.sh: $*" >&2; exit 1; }
# AUTH_CONNS, auth_env, auth_url, auth_start, auth_stop (AUTH_PID), login_run, login_rate
# shellcheck source=bench/auth_lib.sh
source "$ROOT/bench/auth_lib.sh"
mkdir -p "$OUT"
command -v wrk >/dev/null || die "wrk is required (apt-get install wrk)"
cargo build --release --quiet --bin gatehouse --example hash_rate
BIN=target/release/gatehouse
WORK="$(mktemp -d)"
trap 'auth_stop; rm -rf "$WORK"' EXIT
auth_env
auth_start "$BIN" "$WORK/bench.db" "$WORK/server.log"
URL="$(auth_url)"

# Throughput: each login run is bracketed by raw-rate runs right before it
# (argon2's own verification) and right after it (verification into working
# memory kept across calls, as the server does), so a ratio compares
# measurements seconds apart (this machine's speed drifts).
rate() { sed 's/.*rate=\([0-9.]*\).*/\1/' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round"
  for c in $AUTH_CONNS; do
    target/release/examples/hash_rate "$DURATION" >"$OUT/hash-c$c-$round.txt"
    login_run "$c" "$DURATION" "$OUT/login-c$c-$round.txt"
    target/release/examples/hash_rate "$DURATION" reuse >"$OUT/hash-reuse-c$c-$round.txt"
    raw=$(rate "$OUT/hash-c$c-$round.txt")
    reused=$(rate "$OUT/hash-reuse-c$c-$round.txt")
    got=$(login_rate "$OUT/login-c$c-$round.txt")
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

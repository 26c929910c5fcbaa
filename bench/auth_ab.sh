#!/usr/bin/env bash
# Sign-in throughput of two Gatehouse release builds side by side, in one run:
# A (before a change) and B (after), or one build under two settings given by
# A_ENV/B_ENV (Rocket reads settings from ROCKET_* variables too), e.g. with
# and without Prometheus counting (ops.metrics):
#
#   A_BIN=/path/to/before/gatehouse B_BIN=/path/to/after/gatehouse bash bench/auth_ab.sh
#   A_BIN=x B_BIN=x B_ENV='ROCKET_OPS={metrics=false}' bash bench/auth_ab.sh
#
# What: bench/auth.sh's sign-in throughput, with its server and client
# (bench/auth_lib.sh): wrk -t2 -cCONNS -dDURATION -s bench/login.lua against
# POST /auth/login, every request a full sign-in of bench@example.org (the
# throttle out of the way), at auth.sh's connection counts, 4 and 16.
# Method: never two Gatehouse processes at once. ROUNDS rounds; in each:
# start A on a fresh SQLite file (migrated and given the user by A itself),
# a WARMUP-second sign-in run at 16 connections (discarded), then the
# measured runs at 4 and at 16 connections, each after one sign-in that
# succeeds (bench/auth_lib.sh's login_settle: the previous run's queued
# sign-ins are hashed before it, rather than turning the next run's first
# requests into 503 busy), stop A; the same for B; A goes
# first in odd rounds, B in even ones, so that neither always runs on the
# warmer machine. A round's B/A compares measurements made seconds apart
# (this machine's speed drifts); unlike auth.sh, no raw argon2 rate runs
# between them (A and B are each other's reference) and GET /login latency
# is not measured. A_ENV/B_ENV reach only that side's processes (after
# auth_lib.sh's settings, so they override them). Right after each start GET
# /metrics is fetched once: a side whose env says metrics=false must answer
# 404, one whose env says metrics=true 200 (else the run stops: the setting
# did not reach the process); the answers are listed in results.md.
# The sides (A_BIN/B_BIN, A_ENV/B_ENV, their checks and order, the /metrics
# check) are bench/ab_lib.sh's, shared with bench/odata_ab.sh.
#
# Environment (defaults):
#   A_BIN, B_BIN  the two gatehouse release binaries (required; may be the same)
#   A_ENV, B_ENV  space-separated NAME=VALUE assignments for that side's
#                 processes only (default none; no value may hold a space)
#   ROUNDS=5  DURATION=8 (auth.sh's SECONDS_PER_RUN)  WARMUP=1 (0: none)
#   (whole seconds, 8 or 8s)  PORT=8715
# Output: bench/out/auth-ab-<timestamp>/: results.md (also copied to
# bench/out/auth-ab-latest.md and printed): each side's binary and env, its
# GET /metrics answers, and per connection count the median sign-ins/s of A
# and of B over rounds, the median of the per-round ratios B/A and those
# ratios, wrk's mean latency, errors (non-2xx responses, socket errors). Also
# runs.tsv (conns, bin, round, slot, file), metrics.tsv (bin, round, status),
# wrk/ (every wrk output) and the gatehouse logs. All of bench/out is ignored
# by git. The defaults take about 3 minutes (per round 2 x 17 s of wrk).
set -euo pipefail
# ab_sides, ab_check, ab_show, ab_order, ab_side (AB_BIN, AB_ENV),
# ab_check_metrics, ab_command_env
# shellcheck source=bench/ab_lib.sh
source "$(dirname "$0")/ab_lib.sh"
ab_sides # A_BIN, B_BIN (the binaries as given, before the cd below), A_ENV, B_ENV
cd "$(dirname "$0")/.."
ROOT="$PWD"
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-${SECONDS_PER_RUN:-8}}"
WARMUP="${WARMUP:-1}"
PORT="${PORT:-8715}"
RUN="$ROOT/bench/out/auth-ab-$(date +%Y%m%d-%H%M%S)"
die() { echo "auth_ab.sh: $*" >&2; exit 1; }
# AUTH_CONNS, auth_env, auth_url, auth_start, auth_stop (AUTH_PID),
# login_settle, login_run, login_rate
# shellcheck source=bench/auth_lib.sh
source "$ROOT/bench/auth_lib.sh"

DURATION="${DURATION%s}"
WARMUP="${WARMUP%s}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS is a positive whole number, not '$ROUNDS'"
[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION is whole seconds (8s or 8), not '$DURATION'"
[[ "$WARMUP" =~ ^[0-9]+$ ]] || die "WARMUP is whole seconds (1s, 1 or 0), not '$WARMUP'"
ab_check
for tool in curl python3 wrk; do command -v "$tool" >/dev/null || die "$tool is required (wrk: apt-get install wrk)"; done
mkdir -p "$RUN/wrk"
echo "output: $RUN"
ab_show
started=$(date +%s)

WORK="$(mktemp -d)" # the SQLite files, one per process
trap 'auth_stop; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
auth_env

printf 'conns\tbin\tround\tslot\tfile\n' >"$RUN/runs.tsv"
printf 'bin\tround\tstatus\n' >"$RUN/metrics.tsv"

echo "== $ROUNDS rounds: wrk -t2 -c{${AUTH_CONNS// /,}} -d${DURATION}s -s bench/login.lua POST /auth/login, after a ${WARMUP}s warm-up at -c16"
for round in $(seq 1 "$ROUNDS"); do
  order=$(ab_order "$round")
  echo "-- round $round: ${order^^} ($(date +%H:%M:%S))"
  slot=0
  for bin in $order; do
    slot=$((slot + 1))
    ab_side "$bin"
    auth_start "$AB_BIN" "$WORK/$bin-r$round.db" "$RUN/gatehouse-$bin.log" "$AB_ENV"
    # GET /metrics once (metrics.tsv: bin, round, status), checked against AB_ENV.
    ab_check_metrics "$(auth_url)" "$bin" "$AB_ENV" "$RUN/metrics.tsv" "$bin" "$round"
    if ((WARMUP > 0)); then login_run 16 "$WARMUP" "$RUN/wrk/warmup-$bin-r$round.txt"; fi
    for c in $AUTH_CONNS; do
      file="$RUN/wrk/login-c$c-$bin-r$round.txt"
      login_settle
      login_run "$c" "$DURATION" "$file"
      printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$bin" "$round" "$slot" "$file" >>"$RUN/runs.tsv"
      printf '  c%-3s %s r%s %9s sign-ins/s%s\n' "$c" "${bin^^}" "$round" "$(login_rate "$file")" \
        "$(awk '/Non-2xx/ {printf "  NON-2xx: %s", $NF} /Socket errors/ {printf "  %s", $0}' "$file")"
    done
    auth_stop
  done
done

# --- report ---------------------------------------------------------------------------
python3 "$ROOT/bench/auth_ab_report.py" --run "$RUN" --a-bin "$A_BIN" --b-bin "$B_BIN" \
  --a-env "$A_ENV" --b-env "$B_ENV" --rounds "$ROUNDS" --duration "$DURATION" --warmup "$WARMUP" \
  --command "$(ab_command_env)ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP bash bench/auth_ab.sh" \
  >"$RUN/results.md"
cp "$RUN/results.md" "$ROOT/bench/out/auth-ab-latest.md"
echo
cat "$RUN/results.md"
echo
echo "total: $(($(date +%s) - started)) s"
echo "output: $RUN"

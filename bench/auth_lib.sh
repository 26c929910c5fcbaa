# shellcheck shell=bash
# Shared by bench/auth.sh and bench/auth_ab.sh (sourced, not run): the
# sign-in benchmark's server and client, so that both measure the same
# sign-ins on the same settings.
#
# Server: one gatehouse process (release profile, log off) on a SQLite file
# holding one user, bench@example.org, whose password bench/login.lua sends;
# the throttle set out of the way (every request signs in successfully).
# Client: wrk -t2 -cCONNS with bench/login.lua, POST /auth/login, each
# request a full sign-in (throttle, lookup, argon2 verification, new
# session, intent); AUTH_CONNS are the connection counts measured.
#
# The sourcing script sets ROOT (the repository), PORT and a die() function,
# and calls auth_env once. auth_start/auth_stop keep the running process's id
# in AUTH_PID; its output goes to the LOG given. login_settle before a
# login_run keeps the previous run's leftover sign-ins out of it.

# shellcheck disable=SC2034 # AUTH_CONNS: read by the sourcing scripts
AUTH_CONNS="4 16"
AUTH_PID=""
# bench/login.lua's body: the user auth_start adds.
AUTH_BODY='{"email":"bench@example.org","password":"correct horse battery staple"}'

auth_env() { # auth_env: export the settings every sign-in server runs with (PORT)
  export ROCKET_PROFILE=release
  export ROCKET_SECRET_KEY="hPRYyVRiMyxpw5sBB1XeCMN1kFsDCqKvBi2QJxBVHQk="
  export ROCKET_PORT="$PORT" ROCKET_BASE_URL="http://127.0.0.1:$PORT" ROCKET_LOG_LEVEL=off RUST_LOG=warn
  # The throttle must not interfere: every request here signs in successfully.
  export ROCKET_AUTH='{throttle_attempts=1000000}'
}

auth_url() { echo "http://127.0.0.1:$PORT"; }

# Checks that every word of ENV is a NAME=VALUE assignment.
auth_check_env() { # auth_check_env "NAME=VALUE ..." WHAT
  local kv kvs=()
  read -r -a kvs <<<"$1"
  for kv in "${kvs[@]}"; do
    [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "$2: '$kv' is not a NAME=VALUE assignment"
  done
}

# BIN serving on PORT from the SQLite file DB (created, migrated and given the
# user by BIN first if it does not exist), answering GET /login. ENV: space-
# separated NAME=VALUE assignments for BIN's processes only (after auth_env's
# and ROCKET_DATABASES, so they override them; no value may hold a space).
auth_start() { # auth_start BIN DB LOG [ENV]
  local bin=$1 db=$2 log=$3 extra=() status=000
  [[ -z "$AUTH_PID" ]] || die "auth_start: a gatehouse process is still running"
  auth_check_env "${4:-}" "env"
  read -r -a extra <<<"${4:-}"
  if curl -s -o /dev/null "$(auth_url)/"; then
    die "something already listens on port $PORT; set PORT"
  fi
  extra=("ROCKET_DATABASES={main={url=\"sqlite://$db?mode=rwc\"}}" "${extra[@]}")
  echo "--- $(date +%H:%M:%S) $bin${4:+ with $4}" >>"$log"
  if [[ ! -f "$db" ]]; then
    printf 'correct horse battery staple\n' |
      env "${extra[@]}" "$bin" user add bench@example.org --name Bench --password-stdin >>"$log" 2>&1 ||
      { tail -20 "$log" >&2; die "$bin user add failed (log above)"; }
  fi
  # env execs the binary: AUTH_PID is gatehouse's own process id.
  env "${extra[@]}" "$bin" serve >>"$log" 2>&1 &
  AUTH_PID=$!
  for _ in $(seq 1 300); do
    kill -0 "$AUTH_PID" 2>/dev/null || { tail -20 "$log" >&2; AUTH_PID=""; die "$bin exited at start (log above)"; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "$(auth_url)/login" || true)
    [[ "$status" != 000 ]] && break
    sleep 0.1
  done
  [[ "$status" == 200 ]] || die "$bin: GET /login answers $status on port $PORT (000: nothing within 30 s)"
}

auth_stop() { # auth_stop: the process auth_start started, if any
  if [[ -n "$AUTH_PID" ]] && kill -0 "$AUTH_PID" 2>/dev/null; then
    kill "$AUTH_PID" 2>/dev/null || true
    wait "$AUTH_PID" 2>/dev/null || true
  fi
  AUTH_PID=""
}

# CONNS connections signing in for SECONDS against the running server; wrk's
# output to FILE.
login_run() { # login_run CONNS SECONDS FILE
  wrk -t2 -c"$1" -d"$2s" -s "$ROOT/bench/login.lua" "$(auth_url)/auth/login" >"$3"
}
# Waits until one sign-in succeeds. When a wrk run ends, its clients are gone
# but the sign-ins they had queued are still hashed; until they are, a new run
# is partly answered 503 busy (the hash queue is full), fast answers that wrk
# counts as requests. A sign-in answered 200 was queued behind them: the next
# run starts on an idle server.
login_settle() { # login_settle
  local status=000
  for _ in $(seq 1 300); do
    status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' \
      --data-raw "$AUTH_BODY" "$(auth_url)/auth/login" || true)
    [[ "$status" == 200 ]] && return 0
    sleep 0.1
  done
  die "POST /auth/login keeps answering $status, not 200"
}
login_rate() { awk '/Requests\/sec/ {print $2}' "$1"; } # login_rate FILE: wrk's req/s

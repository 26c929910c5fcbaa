# shellcheck shell=bash
# Shared by bench/auth_ab.sh and bench/odata_ab.sh (sourced, not run): their
# two sides, A (before a change) and B (after), or one binary under two
# settings, so that both take, check and alternate the sides the same way.
#
#   A_BIN, B_BIN  the two gatehouse release binaries (required; may be the same)
#   A_ENV, B_ENV  space-separated NAME=VALUE assignments for that side's
#                 processes only (default none; no value may hold a space)
#
# The sourcing script sources it and calls ab_sides before it changes
# directory (the binaries are taken as given, relative to the directory it was
# started in), and sets a die() function before ab_check or ab_check_metrics.
# The sides are named a and b; ab_side sets AB_BIN and AB_ENV, the side's
# binary and env.

ab_sides() { # ab_sides: A_BIN and B_BIN (required, made absolute), A_ENV and B_ENV (default none)
  A_BIN="${A_BIN:?A_BIN: the gatehouse release binary before the change}"
  B_BIN="${B_BIN:?B_BIN: the gatehouse release binary after the change}"
  A_BIN="$(readlink -f "$A_BIN" || echo "$A_BIN")"
  B_BIN="$(readlink -f "$B_BIN" || echo "$B_BIN")"
  A_ENV="${A_ENV:-}"
  B_ENV="${B_ENV:-}"
}

# Dies unless both binaries are executable files and every word of A_ENV and
# of B_ENV is a NAME=VALUE assignment.
ab_check() { # ab_check
  local b v kv kvs=()
  for b in "$A_BIN" "$B_BIN"; do [[ -x "$b" && -f "$b" ]] || die "no executable gatehouse binary at $b"; done
  for v in A_ENV B_ENV; do
    read -r -a kvs <<<"${!v}"
    for kv in "${kvs[@]}"; do
      [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "$v: '$kv' is not a NAME=VALUE assignment"
    done
  done
}

ab_show() { # ab_show: the two sides, a line each
  echo "A: $A_BIN${A_ENV:+ with $A_ENV}"
  echo "B: $B_BIN${B_ENV:+ with $B_ENV}"
}

# The sides in the order they run in round ROUND: A first in odd rounds, B in
# even ones, so that neither always runs on the warmer machine.
ab_order() { # ab_order ROUND
  if (($1 % 2 == 0)); then echo "b a"; else echo "a b"; fi
}

ab_side() { # ab_side SIDE (a or b): AB_BIN, AB_ENV
  # shellcheck disable=SC2034 # AB_BIN, AB_ENV: read by the sourcing scripts
  if [[ "$1" == b ]]; then AB_BIN="$B_BIN" AB_ENV="$B_ENV"; else AB_BIN="$A_BIN" AB_ENV="$A_ENV"; fi
}

# GET BASE/metrics of the running side SIDE (its env ENV), recorded in FILE
# as a line of the COLUMNs and the status (tab-separated); 404 required when
# ENV turns metrics off, 200 when it turns them on (proof that the env reached
# the process).
ab_check_metrics() { # ab_check_metrics BASE SIDE ENV FILE COLUMN...
  local base=$1 side=$2 env=$3 file=$4 status
  shift 4
  status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$base/metrics" || true)
  (IFS=$'\t'; printf '%s\t%s\n' "$*" "$status") >>"$file"
  if [[ "$env" == *metrics=false* && "$status" != 404 ]] || [[ "$env" == *metrics=true* && "$status" != 200 ]]; then
    die "${side^^} runs with '$env' but GET /metrics answers $status: the setting did not reach the process"
  fi
}

# A_ENV and B_ENV as a command line sets them, for the report's command
# ("A_ENV='...' B_ENV='...' ", a side without env left out).
ab_command_env() { # ab_command_env
  local envs=""
  if [[ -n "$A_ENV" ]]; then envs+="A_ENV='$A_ENV' "; fi
  if [[ -n "$B_ENV" ]]; then envs+="B_ENV='$B_ENV' "; fi
  printf '%s' "$envs"
}

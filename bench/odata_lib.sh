# Shared by bench/odata.sh, bench/odata_ladder.sh, bench/builds.sh,
# bench/batch.sh, bench/odata_walk.sh, bench/odata_apply.sh and
# bench/odata_ab.sh (sourced, not run): the reference queries (and the
# $apply queries), the Items data sets, Gatehouse's configuration for them
# and starting/stopping one Gatehouse process on an engine, so that every
# benchmark measures the same queries on the same rows with the same settings.
#
# The sourcing script sets: ROOT, DATA (SQLite files), OUT (configs and logs
# are written there), GH_BIN, GH_PORT, GH_BASE (http://127.0.0.1:$GH_PORT/odata),
# PAGE_SIZE (pagination.default and .max), BASE_ROWS (the size whose
# PostgreSQL/MariaDB database is gh_bench), and a die() function.
# Optional, read by write_config/start_gh (defaults keep the settings above):
# GH_PROFILE (the Rocket profile the config is written for and Gatehouse runs
# with; default release, a debug build serves debug), PAGE_MAX
# (pagination.max; default PAGE_SIZE) and STATEMENT_TIMEOUT_MS
# (odata.statement_timeout_ms; default unset: Gatehouse's own), GH_SET
# (the entity set start_gh asks for to see the process answer; default Items)
# and GH_ENV (space-separated NAME=VALUE assignments given to the started
# process only, after the ones start_gh sets, e.g. 'ROCKET_OPS={metrics=false}';
# no value may hold a space; default none).
# write_config's [profile] header (listen address, secret key, log level,
# database) is bench/rocket_lib.sh's profile_header, sourced here and shared
# with bench/odata_tree_lib.sh.
# start_gh/stop_gh keep the running process's id in GH_PID. slap and sized
# (mariadb-slap runs) use CONNS. write_statements runs RAW_BIN (the release
# example odata_raw) and writes below $OUT/sql, which pgbench_script and
# pg_bound read.

# profile_header
# shellcheck source=bench/rocket_lib.sh
source "$ROOT/bench/rocket_lib.sh"

# The peer's four reference queries (its scripts/bench.sh), as sent in the
# URL, and their names; url BASE INDEX is a query's URL on BASE.
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

# bench/odata_apply.sh's $apply queries on Items (grouped by category, a sum
# and a count; then the same over filtered rows), as sent in the URL.
# shellcheck disable=SC2034 # APPLY_NAMES, APPLY_QUERIES: read by the sourcing script
APPLY_NAMES=(groupby-sum-count filtered-groupby-sum-count)
# shellcheck disable=SC2034
APPLY_QUERIES=(
  "\$apply=groupby((category),aggregate(price%20with%20sum%20as%20Total,\$count%20as%20N))"
  "\$apply=filter(price%20gt%2050)/groupby((category),aggregate(price%20with%20sum%20as%20Total,\$count%20as%20N))"
)

GH_PID=""

has() { [[ " $1 " == *" $2 "* ]]; } # has LIST WORD
secs() { # whole seconds of "8s" / "8"
  local v="${1%s}"
  [[ "$v" =~ ^[0-9]+$ && "$v" -gt 0 ]] || die "durations are whole seconds (8s or 8), not '$1'"
  echo "$v"
}

db_name() { # db_name SIZE: the PostgreSQL/MariaDB database of that size
  if [[ "$1" == "$BASE_ROWS" ]]; then echo gh_bench; else echo "gh_bench_$1"; fi
}
db_url() { # db_url ENGINE SIZE
  case "$1" in
    sqlite) echo "sqlite://$DATA/items-$2.db?mode=rwc" ;;
    postgres) echo "postgres://postgres@127.0.0.1:5432/$(db_name "$2")" ;;
    mariadb) echo "mysql://root@127.0.0.1:3306/$(db_name "$2")" ;;
  esac
}

# One data set per engine and size (kept when complete, unless FRESH_DATA=1):
# bench/odata_data.py writes $DATA/items-<size>.db, bench/odata_engines_data.py
# the PostgreSQL and MariaDB databases (db_name).
load_data() { # load_data "ENGINES" "SIZES"
  local servers=() fresh=() e size
  for e in postgres mariadb; do [[ " $1 " == *" $e "* ]] && servers+=("$e"); done
  [[ "${FRESH_DATA:-0}" == 1 ]] && fresh=(--force)
  mkdir -p "$DATA"
  for size in $2; do
    if [[ " $1 " == *" sqlite "* ]]; then
      python3 "$ROOT/bench/odata_data.py" --rows "$size" --db "$DATA/items-$size.db" "${fresh[@]}"
    fi
    if ((${#servers[@]})); then
      python3 "$ROOT/bench/odata_engines_data.py" --rows "$size" --db "$(db_name "$size")" \
        --engines "$(IFS=,; echo "${servers[*]}")" "${fresh[@]}"
    fi
  done
}

write_config() { # write_config ENGINE SIZE: $OUT/Rocket-ENGINE-SIZE.toml
  local p="${GH_PROFILE:-release}" timeout=""
  if [[ -n "${STATEMENT_TIMEOUT_MS:-}" ]]; then
    timeout="[$p.odata]"$'\n'"statement_timeout_ms = $STATEMENT_TIMEOUT_MS"$'\n\n'
  fi
  {
    profile_header "$p" "$(db_url "$1" "$2")"
    cat <<TOML
${timeout}[$p.odata.pagination]
default = $PAGE_SIZE
max = ${PAGE_MAX:-$PAGE_SIZE}

# Public: wrk sends no credentials, as the peer runs without authentication.
[$p.odata.sets.Items]
table = "items"
key = "ID"
public = true
searchable = ["name"]

# The peer's EDM types (its \$metadata).
[$p.odata.sets.Items.types]
ID = "Edm.Int32"
quantity = "Edm.Int32"
price = "Edm.Decimal"
created = "Edm.DateTimeOffset"
active = "Edm.Boolean"
TOML
  } >"$OUT/Rocket-$1-$2.toml"
}

start_gh() { # start_gh ENGINE SIZE: one Gatehouse process, answering GET /odata/Items (GH_SET)
  local engine=$1 size=$2 status=000 log="$OUT/gatehouse-$1-$2.log" set="${GH_SET:-Items}" kv extra=()
  [[ -z "$GH_PID" ]] || die "start_gh: a Gatehouse process is still running"
  read -r -a extra <<<"${GH_ENV:-}"
  for kv in "${extra[@]}"; do
    [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "GH_ENV: '$kv' is not a NAME=VALUE assignment"
  done
  [[ -f "$OUT/Rocket-$engine-$size.toml" ]] || write_config "$engine" "$size"
  if curl -s -o /dev/null "http://127.0.0.1:$GH_PORT/"; then
    die "something already listens on port $GH_PORT; set GH_PORT"
  fi
  echo "--- $(date +%H:%M:%S) start${GH_ENV:+ with $GH_ENV}" >>"$log"
  # env execs the binary: GH_PID is Gatehouse's own process id.
  ROCKET_CONFIG="$OUT/Rocket-$engine-$size.toml" ROCKET_PROFILE="${GH_PROFILE:-release}" RUST_LOG=warn \
    env "${extra[@]}" "$GH_BIN" serve >>"$log" 2>&1 &
  GH_PID=$!
  for _ in $(seq 1 300); do
    kill -0 "$GH_PID" 2>/dev/null || { tail -20 "$log" >&2; GH_PID=""; die "Gatehouse ($engine, $size rows) exited at start (log above)"; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "$GH_BASE/$set?\$top=1" || true)
    [[ "$status" != 000 ]] && break
    sleep 0.1
  done
  case "$status" in
    200) ;;
    000) die "Gatehouse ($engine, $size rows) did not answer on port $GH_PORT within 30 s" ;;
    404) die "Gatehouse ($engine): GET /odata/$set answers 404: no OData routes, or the $set set was not declared" ;;
    *) curl -s "$GH_BASE/$set?\$top=1" | head -c 400 >&2; echo >&2; die "Gatehouse ($engine, $size rows): GET /odata/$set?\$top=1 answers $status" ;;
  esac
}

stop_gh() { # stop_gh: the process start_gh started, if any
  if [[ -n "$GH_PID" ]] && kill -0 "$GH_PID" 2>/dev/null; then
    kill "$GH_PID" 2>/dev/null || true
    wait "$GH_PID" 2>/dev/null || true
  fi
  GH_PID=""
}

# mariadb-slap: QUERIES statements over CONNS clients (QUERIES / CONNS each,
# every row fetched); appends its output to FILE, prints the seconds taken.
slap() { # slap DATABASE SQL_FILE QUERIES FILE
  mariadb-slap -h 127.0.0.1 -P 3306 -u root --create-schema="$1" --no-drop --concurrency="$CONNS" \
    --iterations=1 --number-of-queries="$3" --query="$2" >>"$4" 2>&1 || return 1
  sed -n 's/.*Average number of seconds to run all queries: \([0-9.]*\) seconds.*/\1/p' "$4" | tail -1
}
sized() { # sized QUERIES SECONDS TARGET_SECONDS: the multiple of CONNS taking about TARGET_SECONDS
  awk -v n="$1" -v s="$2" -v t="$3" -v c="$CONNS" 'BEGIN {
    rate = (s > 0 ? n / s : 1000 * n); m = c * int(rate * t / c + 0.5); print (m < c ? c : m) }'
}

# The statements the engines' limits run: what Gatehouse sends for each query,
# printed by odata_raw from the library's own planner (BASE_ROWS data set):
#   sql/<engine>.txt                text and binds, as Gatehouse sends them;
#   sql/<engine>-<query>.sql        the limit's statement. PostgreSQL: each
#                                   bind a pgbench variable (:b1...), whose
#                                   values sql/<engine>-<query>.vars holds (a
#                                   -D argument per line): pgbench -M prepared
#                                   sends them as parameters, so the engine
#                                   prepares, binds and plans the statement as
#                                   it does Gatehouse's. MariaDB (mariadb-slap
#                                   has no parameters): the values written in;
#   sql/<engine>-<query>-inline.sql PostgreSQL: the values written in, as a
#                                   reference (a statement planned once).
write_statements() { # write_statements ENGINE
  local engine=$1 url name sql vars
  url="$(db_url "$engine" "$BASE_ROWS")"
  mkdir -p "$OUT/sql"
  "$RAW_BIN" "$url" 0 "$PAGE_SIZE" >"$OUT/sql/$engine.txt"
  "$RAW_BIN" "$url" 0 "$PAGE_SIZE" --inline >"$OUT/sql/$engine-inline.tsv"
  while IFS=$'\t' read -r name sql; do
    case "$engine" in
      postgres) printf '%s;\n' "$sql" >"$OUT/sql/$engine-$name-inline.sql" ;;
      *) printf '%s' "$sql" >"$OUT/sql/$engine-$name.sql" ;; # mariadb-slap: no delimiter
    esac
  done <"$OUT/sql/$engine-inline.tsv"
  if [[ "$engine" == postgres ]]; then
    "$RAW_BIN" "$url" 0 "$PAGE_SIZE" --bound >"$OUT/sql/$engine-bound.tsv"
    while IFS=$'\t' read -r name sql vars; do
      printf '%s;\n' "$sql" >"$OUT/sql/$engine-$name.sql"
      if [[ -n "$vars" ]]; then tr '\t' '\n' <<<"$vars" | sed 's/^/-D/'; fi >"$OUT/sql/$engine-$name.vars"
    done <"$OUT/sql/$engine-bound.tsv"
  fi
  for name in "${NAMES[@]}"; do
    [[ -s "$OUT/sql/$engine-$name.sql" ]] || die "odata_raw printed no statement for $engine $name"
  done
}

# pgbench's script arguments for query NAME: PGBENCH_SCRIPT=(-f FILE [-D...]),
# the limit's bound statement, or with "inline" the one with its values
# written in.
pgbench_script() { # pgbench_script NAME [inline]
  if [[ "${2:-}" == inline ]]; then
    PGBENCH_SCRIPT=(-f "$OUT/sql/postgres-$1-inline.sql")
  else
    PGBENCH_SCRIPT=(-f "$OUT/sql/postgres-$1.sql")
    mapfile -t -O 2 PGBENCH_SCRIPT <"$OUT/sql/postgres-$1.vars"
  fi
}
# Whether the statement of query NAME has binds (its inline form differs).
pg_bound() { [[ -s "$OUT/sql/postgres-$1.vars" ]]; } # pg_bound NAME

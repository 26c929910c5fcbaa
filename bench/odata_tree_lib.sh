# shellcheck shell=bash
# Shared by bench/odata_tree.sh and bench/odata_ab.sh (sourced, not run): the
# tree benchmark's two reads on /odata/Nodes as UI5's tree table sends them,
# its data set and Gatehouse's configuration for it, so that both measure the
# same reads on the same tree with the same settings.
#
# The sourcing script sets: ROOT, DATA (SQLite files), GH_PORT and TREE_ROWS
# (the nodes: bench/odata_tree.sh's 100,000), and a die() function.
# Optional: GH_PROFILE (the Rocket profile the config is written for; default
# release); TREE_ROOTS (the hierarchy's `roots`: `null_parent` or
# `missing_parent`; left out when unset, which means `missing_parent`). write_tree_config's [profile] header (listen address, secret key,
# log level, database) is bench/rocket_lib.sh's profile_header, sourced here,
# the same as bench/odata_lib.sh's write_config.

# profile_header
# shellcheck source=bench/rocket_lib.sh
source "$ROOT/bench/rocket_lib.sh"

# The two reads, as sent in the URL after /odata/Nodes?:
#   toplevels  TopLevels(…,Levels=2) with $count, $skip=0, $top=110 and the
#              computed properties selected: 110 rows;
#   children   descendants(…,filter(ID eq 7),1) with $count: node 7's ten
#              children.
# shellcheck disable=SC2034 # TREE_NAMES, TREE_QUERIES: read by the sourcing script
TREE_NAMES=(toplevels children)
# shellcheck disable=SC2034
TREE_QUERIES=(
  "\$apply=com.sap.vocabularies.Hierarchy.v1.TopLevels(HierarchyNodes=\$root/Nodes,HierarchyQualifier='NodesHierarchy',NodeProperty='ID',Levels=2)&\$select=ID,name,DistanceFromRoot,DrillState,LimitedDescendantCount,LimitedRank&\$count=true&\$skip=0&\$top=110"
  "\$apply=descendants(\$root/Nodes,NodesHierarchy,ID,filter(ID%20eq%207),1)&\$select=ID,name,DrillState&\$count=true&\$skip=0&\$top=110"
)

# The tree (bench/odata_tree_data.py: 10 roots, ten children per node): the
# SQLite file $DATA/tree-TREE_ROWS.db always (bench/odata_tree.sh explains
# PostgreSQL's statements on it too), the database gh_tree on the server
# engines among ENGINES; each kept when it holds TREE_ROWS nodes.
load_tree_data() { # load_tree_data "ENGINES"
  local servers=() e
  for e in postgres mariadb; do [[ " $1 " == *" $e "* ]] && servers+=("$e"); done
  mkdir -p "$DATA"
  python3 "$ROOT/bench/odata_tree_data.py" --rows "$TREE_ROWS" --sqlite "$DATA/tree-$TREE_ROWS.db" \
    --engines "$(IFS=,; echo "${servers[*]:-}")"
}

tree_db_url() { # tree_db_url ENGINE
  case "$1" in
    sqlite) echo "sqlite://$DATA/tree-$TREE_ROWS.db?mode=rwc" ;;
    postgres) echo "postgres://postgres@127.0.0.1:5432/gh_tree" ;;
    mariadb) echo "mysql://root@127.0.0.1:3306/gh_tree" ;;
  esac
}

write_tree_config() { # write_tree_config ENGINE FILE: Gatehouse serving the set Nodes
  local p="${GH_PROFILE:-release}"
  local roots=""
  [[ -n "${TREE_ROOTS:-}" ]] && roots=", roots = \"$TREE_ROOTS\""
  {
    profile_header "$p" "$(tree_db_url "$1")"
    cat <<TOML
[$p.odata.pagination]
default = 1000
max = 1000

# Public: the peer runs without authentication.
[$p.odata.sets.Nodes]
table = "nodes"
key = "ID"
public = true
navigation = { parent = { target = "Nodes", column = "parent_ID" } }
hierarchy = { qualifier = "NodesHierarchy", parent = "parent"$roots }

[$p.odata.sets.Nodes.types]
ID = "Edm.Int32"
parent_ID = "Edm.Int32"
TOML
  } >"$2"
}

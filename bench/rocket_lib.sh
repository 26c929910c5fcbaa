# shellcheck shell=bash
# Sourced by bench/odata_lib.sh and bench/odata_tree_lib.sh (not run
# directly): the [PROFILE] header their Rocket.toml files for Gatehouse start
# with, so that every benchmark's process listens, names itself and logs the
# same way: address 127.0.0.1, port GH_PORT and its base_url, a fresh random
# secret_key per file, log_level off, and the main database's URL.
#
# The sourcing script sets GH_PORT.

profile_header() { # profile_header PROFILE DB_URL: the header on stdout, a blank line after it
  local secret
  secret="$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
  cat <<TOML
[$1]
address = "127.0.0.1"
port = $GH_PORT
base_url = "http://127.0.0.1:$GH_PORT"
secret_key = "$secret"
log_level = "off"

[$1.databases.main]
url = "$2"

TOML
}

#!/usr/bin/env bash
# The real MCP peers of the MCP tests, installed at pinned versions:
#   - npm `@modelcontextprotocol/server-everything` (scripts/mcp/package.json and its lock file),
#     the server the client-side tests (`#[mcp_tool]`, whole servers' tools) talk to over stdio;
#   - PyPI `mcp` (scripts/mcp/requirements.txt) in a virtual environment, the client the
#     server-side tests (`App::serve_mcp`) drive over stdio and streamable HTTP.
#
#   scripts/mcp-peers.sh install   installs both if needed (reinstalls when a pin changes) and
#                                  prints `export AGBOSS_TEST_MCP_EVERYTHING=...` (the server's
#                                  entry script, run with `node ... stdio`) and
#                                  `export AGBOSS_TEST_MCP_PYTHON=...` (the venv's python)
#
# They live in $AGBOSS_MCP_PEERS (default target/mcp-peers). Nothing is started: each test
# starts the processes it needs and they end with it.
set -euo pipefail
# log, die, sum_of, port_in_use, stop_group
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="${AGBOSS_MCP_PEERS:-$ROOT/target/mcp-peers}"
SRC="$ROOT/scripts/mcp"

install_npm() {
    local dir="$PEERS/node" sum
    sum="$(sum_of "$SRC/package.json" "$SRC/package-lock.json")"
    if [[ -f $dir/.sum && $(cat "$dir/.sum") == "$sum" && -d $dir/node_modules ]]; then
        return 0
    fi
    command -v npm >/dev/null 2>&1 || die "npm is missing (server-everything is an npm package; on Debian: apt-get install nodejs npm)"
    log "installing the npm MCP peers into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2) || die "npm ci failed in $dir"
    echo "$sum" >"$dir/.sum"
}

install_python() {
    local venv="$PEERS/venv" sum
    sum="$(sum_of "$SRC/requirements.txt")"
    if [[ -x $venv/bin/python && -f $venv/.sum && $(cat "$venv/.sum") == "$sum" ]]; then
        return 0
    fi
    command -v python3 >/dev/null 2>&1 || die "python3 is missing (the MCP test client is the Python mcp package)"
    log "installing the Python MCP client into $venv"
    rm -rf "$venv"
    mkdir -p "$PEERS"
    python3 -m venv "$venv" >&2 || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$SRC/requirements.txt" >&2 ||
        die "pip install -r $SRC/requirements.txt failed"
    echo "$sum" >"$venv/.sum"
}

case "${1:-}" in
install)
    install_npm
    install_python
    entry="$PEERS/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    [[ -f $entry ]] || die "server-everything has no $entry"
    echo "export AGBOSS_TEST_MCP_EVERYTHING=$entry"
    echo "export AGBOSS_TEST_MCP_PYTHON=$PEERS/venv/bin/python"
    ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac

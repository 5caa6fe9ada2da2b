#!/usr/bin/env bash
# The Restate server of the Restate backend's tests (agboss-restate/tests), pinned from npm.
#
#   scripts/restate.sh start   installs `@restatedev/restate-server` (scripts/restate/package.json
#                              and its lock file: the platform package ships the binary) into
#                              $AGBOSS_RESTATE_HOME (default target/restate) if needed, starts one
#                              single-node server on free ports of 127.0.0.1 with a base dir of its
#                              own and telemetry off, and prints
#                              `export AGBOSS_TEST_RESTATE_INGRESS=http://127.0.0.1:PORT`,
#                              `export AGBOSS_TEST_RESTATE_ADMIN=http://127.0.0.1:PORT`
#   scripts/restate.sh stop    stops it and removes its base dir
#   scripts/restate.sh status  tells whether it runs, and its URLs
#
# The ports are the first free ones from 28080 (ingress), 29070 (admin) and 25122 (node to node)
# up. The state (pid, ports, base dir, log) is kept in $AGBOSS_RESTATE_STATE (default
# target/restate/state), so several servers can run side by side with different state files.
set -euo pipefail
# log, die, sum_of, port_in_use, stop_group
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${AGBOSS_RESTATE_STATE:-$ROOT/target/restate/state}"
HOME_DIR="${AGBOSS_RESTATE_HOME:-$ROOT/target/restate/server}"
SRC="$ROOT/scripts/restate"

# The first free port from $1 up, not one of the others already taken ($2...).
free_port() {
    local first=$1 p q taken
    shift
    for ((p = first; p < first + 100; p++)); do
        taken=
        for q in "$@"; do [[ $p == "$q" ]] && taken=1; done
        [[ -z $taken ]] && ! port_in_use "$p" && {
            echo "$p"
            return 0
        }
    done
    return 1
}

install() {
    local sum
    sum="$(sum_of "$SRC/package.json" "$SRC/package-lock.json")"
    if [[ -f $HOME_DIR/.sum && $(cat "$HOME_DIR/.sum") == "$sum" && -x $(binary) ]]; then
        return 0
    fi
    command -v npm >/dev/null 2>&1 || die "npm is missing (the Restate server is pinned from npm; on Debian: apt-get install nodejs npm)"
    log "installing the Restate server into $HOME_DIR"
    rm -rf "$HOME_DIR"
    mkdir -p "$HOME_DIR"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$HOME_DIR/"
    # No install scripts: the platform package is the binary itself (and the wrapper's
    # dependency, scarf, would report the install).
    (cd "$HOME_DIR" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2) ||
        die "npm ci failed in $HOME_DIR"
    [[ -x $(binary) ]] || die "no Restate server binary for $(uname -s)/$(uname -m) in $HOME_DIR"
    echo "$sum" >"$HOME_DIR/.sum"
}

# The platform package's binary.
binary() {
    local os arch
    case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) os=unknown ;;
    esac
    case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=unknown ;;
    esac
    echo "$HOME_DIR/node_modules/@restatedev/restate-server-$os-$arch/bin/restate-server"
}

load_state() {
    [[ -f $STATE ]] || return 1
    # shellcheck disable=SC1090
    source "$STATE"
}

running() { [[ -n ${PID:-} ]] && kill -0 "$PID" 2>/dev/null; }

exports() {
    echo "export AGBOSS_TEST_RESTATE_INGRESS=http://127.0.0.1:$INGRESS"
    echo "export AGBOSS_TEST_RESTATE_ADMIN=http://127.0.0.1:$ADMIN"
}

# Waits (60 s at most) until the admin API and the ingress answer.
wait_ready() {
    local i
    for ((i = 0; i < 600; i++)); do
        running || return 1
        if curl -fsS -o /dev/null "http://127.0.0.1:$ADMIN/health" 2>/dev/null &&
            curl -fsS -o /dev/null "http://127.0.0.1:$INGRESS/restate/health" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

start() {
    if load_state; then
        if running; then
            log "already running (pid $PID)"
            exports
            return 0
        fi
        log "removing a stale server state ($STATE)"
        rm -rf "$BASE"
        rm -f "$STATE"
    fi
    command -v curl >/dev/null 2>&1 || die "curl is missing (it checks the server is up)"
    install

    INGRESS="$(free_port 28080)" || die "no free ingress port"
    ADMIN="$(free_port 29070 "$INGRESS")" || die "no free admin port"
    FABRIC="$(free_port 25122 "$INGRESS" "$ADMIN")" || die "no free node port"

    mkdir -p "$(dirname "$STATE")"
    BASE="$(mktemp -d "${TMPDIR:-/tmp}/agboss-restate.XXXXXX")"
    LOG="$BASE/server.log"
    # A small single-node server: two partitions, small caches, no telemetry, no web UI.
    cat >"$BASE/restate.toml" <<TOML
cluster-name = "agboss-test"
node-name = "agboss-test"
default-num-partitions = 2
disable-telemetry = true
rocksdb-total-memory-size = "256 MiB"
bind-address = "127.0.0.1:$FABRIC"
advertised-address = "http://127.0.0.1:$FABRIC/"
log-format = "compact"
log-disable-ansi-codes = true

[admin]
bind-address = "127.0.0.1:$ADMIN"
disable-web-ui = true

[admin.query-engine]
memory-size = "64 MiB"

[ingress]
bind-address = "127.0.0.1:$INGRESS"
advertised-ingress-endpoint = "http://127.0.0.1:$INGRESS/"
TOML
    # Its own process group, so that stop ends the server and nothing else.
    setsid "$(binary)" --config-file "$BASE/restate.toml" --base-dir "$BASE/data" --no-logo \
        --listen-mode tcp >"$LOG" 2>&1 </dev/null &
    PID=$!
    {
        printf 'PID=%q\n' "$PID"
        printf 'INGRESS=%q\n' "$INGRESS"
        printf 'ADMIN=%q\n' "$ADMIN"
        printf 'BASE=%q\n' "$BASE"
        printf 'LOG=%q\n' "$LOG"
    } >"$STATE"
    wait_ready || {
        tail -50 "$LOG" >&2 || true
        stop
        die "the Restate server did not start"
    }
    log "$("$(binary)" --version) on 127.0.0.1: ingress $INGRESS, admin $ADMIN (pid $PID, log $LOG)"
    exports
}

stop() {
    if ! load_state; then
        log "no server to stop ($STATE)"
        return 0
    fi
    if running; then
        stop_group "$PID" 100
    fi
    rm -rf "$BASE"
    rm -f "$STATE"
    log "stopped (ingress $INGRESS, admin $ADMIN)"
}

status() {
    if load_state && running; then
        echo "running: ingress http://127.0.0.1:$INGRESS, admin http://127.0.0.1:$ADMIN (pid $PID)"
    else
        echo "not running"
        return 3
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac

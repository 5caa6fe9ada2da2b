#!/usr/bin/env bash
# fakellm, the third-party mock OpenAI/Anthropic server of the provider tests
# (agboss-core/tests/fakellm.rs).
#
#   scripts/fakellm.sh start   installs fakellm (scripts/fakellm/requirements.txt, pinned) into a
#                              virtual environment if needed, starts it on 127.0.0.1 with the rules
#                              of scripts/fakellm/fakellm.yaml and prints
#                              `export AGBOSS_TEST_FAKELLM_URL=http://127.0.0.1:PORT`
#   scripts/fakellm.sh stop    stops it
#   scripts/fakellm.sh status  tells whether it runs, and its URL
#
# The server takes the first free port from 19999 up. The virtual environment lives in
# $AGBOSS_FAKELLM_VENV (default target/fakellm-venv) and is reinstalled when the requirements
# change. The state (pid, port, log) is kept in $AGBOSS_FAKELLM_STATE (default
# target/fakellm/state), so several servers can run side by side with different state files.
set -euo pipefail
# log, die, sum_of, port_in_use, stop_group
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${AGBOSS_FAKELLM_STATE:-$ROOT/target/fakellm/state}"
VENV="${AGBOSS_FAKELLM_VENV:-$ROOT/target/fakellm-venv}"
REQUIREMENTS="$ROOT/scripts/fakellm/requirements.txt"
CONFIG="$ROOT/scripts/fakellm/fakellm.yaml"
FIRST_PORT=19999
LAST_PORT=20099

# The installed requirements are those of the file (its checksum is kept in the venv).
install() {
    local sum
    sum="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
    if [[ -x $VENV/bin/fakellm && -f $VENV/.requirements.sha256 && $(cat "$VENV/.requirements.sha256") == "$sum" ]]; then
        return 0
    fi
    command -v python3 >/dev/null 2>&1 || die "python3 is missing (fakellm is a Python package)"
    log "installing fakellm into $VENV"
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV" >&2 || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2 ||
        die "pip install -r $REQUIREMENTS failed"
    echo "$sum" >"$VENV/.requirements.sha256"
}

load_state() {
    [[ -f $STATE ]] || return 1
    # shellcheck disable=SC1090
    source "$STATE"
}

url() { echo "http://127.0.0.1:$PORT"; }

running() { [[ -n ${PID:-} ]] && kill -0 "$PID" 2>/dev/null; }

# Waits (30 s at most) until the server answers on its admin endpoint.
wait_ready() {
    local i
    for ((i = 0; i < 300; i++)); do
        running || return 1
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

start() {
    if load_state; then
        if running; then
            log "already running on port $PORT (pid $PID)"
            echo "export AGBOSS_TEST_FAKELLM_URL=$(url)"
            return 0
        fi
        log "removing a stale server state ($STATE)"
        rm -f "$STATE"
    fi
    install

    PORT=
    local p
    for ((p = FIRST_PORT; p <= LAST_PORT; p++)); do
        port_in_use "$p" || {
            PORT=$p
            break
        }
    done
    [[ -n $PORT ]] || die "no free port in $FIRST_PORT..$LAST_PORT"

    mkdir -p "$(dirname "$STATE")"
    LOG="$(dirname "$STATE")/fakellm.$PORT.log"
    # Its own process group, so that stop ends the server and nothing else.
    setsid "$VENV/bin/fakellm" serve --host 127.0.0.1 --port "$PORT" --config "$CONFIG" \
        >"$LOG" 2>&1 </dev/null &
    PID=$!
    {
        printf 'PID=%q\n' "$PID"
        printf 'PORT=%q\n' "$PORT"
        printf 'LOG=%q\n' "$LOG"
    } >"$STATE"
    wait_ready || {
        cat "$LOG" >&2 || true
        stop
        die "fakellm did not start"
    }
    log "fakellm $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("fakellm"))') on 127.0.0.1:$PORT (pid $PID, log $LOG)"
    echo "export AGBOSS_TEST_FAKELLM_URL=$(url)"
}

stop() {
    if ! load_state; then
        log "no server to stop ($STATE)"
        return 0
    fi
    if running; then
        stop_group "$PID" 50
    fi
    rm -f "$STATE"
    log "stopped (port $PORT)"
}

status() {
    if load_state && running; then
        echo "running: $(url) (pid $PID)"
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

#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the console's browser tests, from Debian's packages.
#
#   scripts/chromium.sh install   installs `chromium` and `chromium-driver` with apt-get if
#                                 either binary is missing, both at one version: the
#                                 candidate Debian offers, or $AGBOSS_CHROMIUM_VERSION if set
#                                 (a driver of another version refuses the browser)
#   scripts/chromium.sh start     installs if needed, starts chromedriver on 127.0.0.1 at the
#                                 first free port from 9515 up and prints
#                                 `export AGBOSS_TEST_WEBDRIVER_URL=http://127.0.0.1:PORT` and
#                                 `export AGBOSS_TEST_CHROMIUM=/usr/bin/chromium`
#   scripts/chromium.sh stop      stops that chromedriver
#   scripts/chromium.sh status    tells whether it runs, and its URL
#
# The state (pid, port) is kept in $AGBOSS_CHROMIUM_STATE (default target/chromium/state), so
# several drivers can run side by side with different state files. The tests start their own
# headless browser sessions through the driver; nothing else is started.
set -euo pipefail
# log, die, sum_of, port_in_use, stop_group
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${AGBOSS_CHROMIUM_STATE:-$ROOT/target/chromium/state}"
CHROMIUM=/usr/bin/chromium
DRIVER=/usr/bin/chromedriver
FIRST_PORT=9515
LAST_PORT=9615

install() {
    if [[ -x $CHROMIUM && -x $DRIVER ]]; then
        return 0
    fi
    [[ $(id -u) -eq 0 ]] ||
        die "chromium or chromedriver is missing, and only root can install them: apt-get install chromium chromium-driver"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    local version="${AGBOSS_CHROMIUM_VERSION:-}"
    if [[ -z $version ]]; then
        version="$(apt-cache policy chromium | awk '/Candidate:/ { print $2 }')"
    fi
    [[ -n $version && $version != "(none)" ]] || die "Debian offers no chromium package here"
    log "installing chromium and chromium-driver $version with apt-get"
    apt-get -y -q -o Dpkg::Options::=--force-confold --no-install-recommends install \
        "chromium=$version" "chromium-driver=$version" >&2 ||
        die "apt-get install chromium=$version chromium-driver=$version failed"
}

load_state() {
    [[ -f $STATE ]] || return 1
    # shellcheck disable=SC1090
    source "$STATE"
}

running() { load_state && [[ -n ${PID:-} ]] && kill -0 "$PID" 2>/dev/null; }

start() {
    install
    if running; then
        log "chromedriver already runs (pid $PID, port $PORT)"
    else
        local port=$FIRST_PORT
        while port_in_use "$port"; do
            port=$((port + 1))
            ((port <= LAST_PORT)) || die "no free port in $FIRST_PORT..$LAST_PORT"
        done
        mkdir -p "$(dirname "$STATE")"
        local logfile="${STATE}.log"
        # setsid: the driver outlives this script, and a stop ends it and its browsers.
        setsid "$DRIVER" --port="$port" --allowed-ips=127.0.0.1 >"$logfile" 2>&1 </dev/null &
        local pid=$!
        local i
        for i in $(seq 1 100); do
            if port_in_use "$port"; then
                break
            fi
            kill -0 "$pid" 2>/dev/null || die "chromedriver exited: $(tail -5 "$logfile")"
            sleep 0.1
        done
        port_in_use "$port" || die "chromedriver does not listen on $port: $(tail -5 "$logfile")"
        printf 'PID=%s\nPORT=%s\n' "$pid" "$port" >"$STATE"
        PORT=$port
        log "chromedriver $("$DRIVER" --version | awk '{ print $2 }') on 127.0.0.1:$port (pid $pid)"
    fi
    echo "export AGBOSS_TEST_WEBDRIVER_URL=http://127.0.0.1:$PORT"
    echo "export AGBOSS_TEST_CHROMIUM=$CHROMIUM"
}

stop() {
    if running; then
        # The driver's process group: the driver and the browsers it started.
        kill -- "-$PID" 2>/dev/null || kill "$PID" 2>/dev/null || true
        log "stopped chromedriver (pid $PID)"
    fi
    rm -f "$STATE" "${STATE}.log"
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
status)
    if running; then
        echo "running: http://127.0.0.1:$PORT (pid $PID)"
    else
        echo "not running"
        exit 1
    fi
    ;;
*)
    echo "usage: $0 install|start|stop|status" >&2
    exit 2
    ;;
esac

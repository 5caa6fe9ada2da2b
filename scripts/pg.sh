#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests.
#
#   scripts/pg.sh start   starts a server in a new temporary directory (installing Debian's
#                         postgresql-15 first if initdb/pg_ctl are missing) and prints
#                         `export AGBOSS_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/agboss_test`
#   scripts/pg.sh stop    stops it and removes its directory
#   scripts/pg.sh status  tells whether it runs, and its URL
#
# Trust authentication, on a unix socket in the temporary directory and on 127.0.0.1 only, at
# the first free port from 54329 up. As root, the server runs as the system user `agboss-pg`
# (created if missing: PostgreSQL refuses to run as root); as anyone else, as that user.
# The state (directory, port) is kept in $AGBOSS_PG_STATE (default target/pg-test/state), so
# several servers can run side by side with different state files.
set -euo pipefail
# log, die, sum_of, port_in_use, stop_group
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# runuser and useradd live in sbin, which a non-login PATH may lack.
PATH="$PATH:/usr/sbin:/sbin"
STATE="${AGBOSS_PG_STATE:-$ROOT/target/pg-test/state}"
DB=agboss_test
SERVICE_USER=agboss-pg
FIRST_PORT=54329
LAST_PORT=54429

# The directory holding initdb and pg_ctl, if any.
find_bin() {
    local d
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return 0
    fi
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

install_postgres() {
    [[ $(id -u) -eq 0 ]] ||
        die "PostgreSQL is not installed (no initdb/pg_ctl), and only root can install it: apt-get install postgresql-15"
    log "installing PostgreSQL 15 with apt-get"
    # Only the binaries: no cluster of the package's own, no service started.
    if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
        mkdir -p /etc/postgresql-common
        echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    fi
    export DEBIAN_FRONTEND=noninteractive
    local apt=(apt-get -y -q -o Dpkg::Options::=--force-confold --no-install-recommends)
    apt-get update -q >&2
    "${apt[@]}" install postgresql-15 >&2 || "${apt[@]}" install postgresql >&2
}

# Runs a command as the server's user.
as_server() {
    if [[ -n ${RUN_AS:-} ]]; then
        # From /: the server's user may not enter the caller's directory (paths are absolute).
        (cd / && runuser -u "$RUN_AS" -- "$@")
    else
        "$@"
    fi
}

load_state() {
    [[ -f $STATE ]] || return 1
    # shellcheck disable=SC1090
    source "$STATE"
}

url() { echo "postgres://postgres@127.0.0.1:$PORT/$DB"; }

running() { as_server "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; }

start() {
    if load_state; then
        if running; then
            log "already running on port $PORT ($DIR)"
            echo "export AGBOSS_TEST_POSTGRES_URL=$(url)"
            return 0
        fi
        log "removing a stale server state ($DIR)"
        rm -rf "$DIR"
        rm -f "$STATE"
    fi

    BIN="$(find_bin)" || {
        install_postgres
        BIN="$(find_bin)" || die "no initdb/pg_ctl after installing PostgreSQL"
    }

    RUN_AS=
    if [[ $(id -u) -eq 0 ]]; then
        RUN_AS=$SERVICE_USER
        if ! id -u "$RUN_AS" >/dev/null 2>&1; then
            log "creating the system user $RUN_AS"
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$RUN_AS"
        fi
    fi

    DIR="$(mktemp -d "${TMPDIR:-/tmp}/agboss-pg.XXXXXX")"
    [[ -n $RUN_AS ]] && chown "$RUN_AS" "$DIR"
    chmod 700 "$DIR"
    as_server "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
        --no-sync >"$DIR/initdb.log" 2>&1 || {
        cat "$DIR/initdb.log" >&2
        rm -rf "$DIR"
        die "initdb failed"
    }

    PORT=
    local p
    for ((p = FIRST_PORT; p <= LAST_PORT; p++)); do
        port_in_use "$p" && continue
        # A throwaway server: no fsync, enough connections for parallel tests.
        if as_server "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
            -o "-p $p -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
            start >&2; then
            PORT=$p
            break
        fi
        # Taken between the check and the start: try the next port.
        grep -q "could not bind\|could not create any TCP/IP sockets\|already in use" "$DIR/server.log" 2>/dev/null || {
            cat "$DIR/server.log" >&2 || true
            rm -rf "$DIR"
            die "the server did not start"
        }
    done
    [[ -n $PORT ]] || {
        rm -rf "$DIR"
        die "no free port in $FIRST_PORT..$LAST_PORT"
    }

    mkdir -p "$(dirname "$STATE")"
    {
        printf 'BIN=%q\n' "$BIN"
        printf 'DIR=%q\n' "$DIR"
        printf 'PORT=%q\n' "$PORT"
        printf 'RUN_AS=%q\n' "$RUN_AS"
    } >"$STATE"

    as_server "$BIN/createdb" -h "$DIR" -p "$PORT" -U postgres "$DB" || {
        stop
        die "createdb failed"
    }
    log "PostgreSQL $("$BIN/pg_ctl" --version | sed -E 's/^[^0-9]*([0-9.]+).*/\1/') on 127.0.0.1:$PORT ($DIR)"
    echo "export AGBOSS_TEST_POSTGRES_URL=$(url)"
}

stop() {
    if ! load_state; then
        log "no server to stop ($STATE)"
        return 0
    fi
    if running; then
        as_server "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 60 stop >&2 ||
            as_server "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >&2 || true
    fi
    rm -rf "$DIR"
    rm -f "$STATE"
    log "stopped and removed $DIR"
}

status() {
    if load_state && running; then
        echo "running: $(url) ($DIR)"
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

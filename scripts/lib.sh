# Helpers the service scripts (pg.sh, fakellm.sh, restate.sh, chromium.sh, mcp-peers.sh) share.
# Sourced, not run: `source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"`. Messages name the
# script that was run.

log() { echo "$(basename "$0"): $*" >&2; }
die() {
    log "$*"
    exit 1
}
sum_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Stops process $1's group (else the process): TERM, then up to $2 tenths of a second for it to
# end, then KILL.
stop_group() {
    local pid=$1 tries=$2 i
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < tries; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

#!/usr/bin/env bash
# Measures what a new user waits for, on a clean clone of this repository (nothing reused but
# cargo's download cache):
#   demo   `cargo run --example support_desk` from an empty target dir, then a one-line edit of
#          examples/support_desk.rs rebuilt, and `cargo build --timings` kept for reading
#   tests  `bash scripts/test.sh` from an empty target dir (PostgreSQL, fakellm and the MCP
#          peers installed as on a fresh machine), and the size of target/ afterwards
#
#   scripts/measure-build.sh [demo|tests|all] [REV]     (default: all, HEAD)
#
# Prints one line per figure (`figure: value`), and keeps each clone's logs under
# target/measure/. Takes 20-30 minutes for `all` on 2 cores.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
what="${1:-all}"
rev="$(git -C "$ROOT" rev-parse "${2:-HEAD}")"
out="$ROOT/target/measure/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
unset CARGO_TARGET_DIR

clone() {
    local dir
    dir="$(mktemp -d /tmp/agboss-measure.XXXXXX)"
    git clone -q --no-hardlinks "$ROOT" "$dir/repo"
    git -C "$dir/repo" checkout -q "$rev"
    echo "$dir/repo"
}

seconds() { # runs "$@", prints the wall time in seconds on fd 3
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    printf '%.1f\n' "$(echo "$end - $start" | bc)" >&3
}

figure() { printf '%s: %s\n' "$1" "$2" | tee -a "$out/figures.txt"; }

demo() {
    local repo t
    repo="$(clone)"
    cd "$repo"
    t=$( { seconds cargo run --example support_desk >"$out/demo-run.log" 2>&1; } 3>&1 )
    figure "demo first run (clean target, s)" "$t"
    echo "// one-line edit" >>examples/support_desk.rs
    t=$( { seconds cargo build --example support_desk >"$out/demo-edit.log" 2>&1; } 3>&1 )
    figure "demo rebuilt after a one-line edit (s)" "$t"
    git checkout -q examples/support_desk.rs
    cargo build --example support_desk --timings >/dev/null 2>&1 || true
    cp target/cargo-timings/cargo-timing.html "$out/demo-timings.html" 2>/dev/null || true
    figure "demo target/ (GB)" "$(du -sb target | awk '{printf "%.2f", $1/1e9}')"
    cd "$ROOT"
    rm -rf "$(dirname "$repo")"
}

tests() {
    local repo t
    repo="$(clone)"
    cd "$repo"
    t=$( { seconds bash -c 'bash scripts/test.sh; echo $? >"$0"' "$out/tests.status" >"$out/tests.log" 2>&1; } 3>&1 )
    figure "test command (clean target, s)" "$t"
    figure "test command exit status" "$(cat "$out/tests.status")"
    figure "tests passed/failed" "$(grep -E '^test result:' "$out/tests.log" | awk '{p+=$4; f+=$6} END {print p"/"f}')"
    figure "tests target/ (GB)" "$(du -sb target | awk '{printf "%.2f", $1/1e9}')"
    cd "$ROOT"
    rm -rf "$(dirname "$repo")"
}

figure "revision" "$rev"
figure "date (UTC)" "$(date -u +%F)"
figure "machine" "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
case "$what" in
    demo) demo ;;
    tests) tests ;;
    all) demo; tests ;;
    *) echo "usage: scripts/measure-build.sh [demo|tests|all] [REV]" >&2; exit 2 ;;
esac
echo "figures and logs: $out"

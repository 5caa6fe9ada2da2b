#!/usr/bin/env bash
# The whole test suite, PostgreSQL backend and provider tests included: starts a throwaway
# PostgreSQL 15 (scripts/pg.sh) and fakellm, the mock OpenAI/Anthropic server
# (scripts/fakellm.sh, installed into a virtual environment on first use), installs the MCP test
# peers (scripts/mcp-peers.sh: npm server-everything, the PyPI mcp client, pinned), starts
# chromedriver for the console's browser tests (scripts/chromium.sh: Debian's chromium and
# chromium-driver, installed on first use), starts the pinned Restate server (scripts/restate.sh,
# npm `@restatedev/restate-server`) for the Restate backend's tests, runs
# `cargo test --workspace "$@"` against them, and
# stops them on exit (also when the tests fail or are interrupted). Exits with cargo's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# A state file of this run's own: another run's server is not this one's.
export AGBOSS_PG_STATE="${AGBOSS_PG_STATE:-$ROOT/target/pg-test/state.$$}"
export AGBOSS_FAKELLM_STATE="${AGBOSS_FAKELLM_STATE:-$ROOT/target/fakellm/state.$$}"
export AGBOSS_CHROMIUM_STATE="${AGBOSS_CHROMIUM_STATE:-$ROOT/target/chromium/state.$$}"
export AGBOSS_RESTATE_STATE="${AGBOSS_RESTATE_STATE:-$ROOT/target/restate/state.$$}"

cleanup() {
    bash "$ROOT/scripts/restate.sh" stop || true
    bash "$ROOT/scripts/chromium.sh" stop || true
    bash "$ROOT/scripts/fakellm.sh" stop || true
    bash "$ROOT/scripts/pg.sh" stop || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

exports="$(bash "$ROOT/scripts/pg.sh" start)"
eval "$exports"
[[ -n ${AGBOSS_TEST_POSTGRES_URL:-} ]] || {
    echo "test.sh: scripts/pg.sh start gave no AGBOSS_TEST_POSTGRES_URL" >&2
    exit 1
}
echo "test.sh: AGBOSS_TEST_POSTGRES_URL=$AGBOSS_TEST_POSTGRES_URL" >&2

exports="$(bash "$ROOT/scripts/fakellm.sh" start)"
eval "$exports"
[[ -n ${AGBOSS_TEST_FAKELLM_URL:-} ]] || {
    echo "test.sh: scripts/fakellm.sh start gave no AGBOSS_TEST_FAKELLM_URL" >&2
    exit 1
}
echo "test.sh: AGBOSS_TEST_FAKELLM_URL=$AGBOSS_TEST_FAKELLM_URL" >&2

# The MCP peers (pinned npm server-everything, the PyPI mcp client): installed, not started.
exports="$(bash "$ROOT/scripts/mcp-peers.sh" install)"
eval "$exports"
echo "test.sh: AGBOSS_TEST_MCP_EVERYTHING=$AGBOSS_TEST_MCP_EVERYTHING" >&2

# Headless Chromium's driver for the console's browser tests (agboss-core/tests/console).
exports="$(bash "$ROOT/scripts/chromium.sh" start)"
eval "$exports"
[[ -n ${AGBOSS_TEST_WEBDRIVER_URL:-} ]] || {
    echo "test.sh: scripts/chromium.sh start gave no AGBOSS_TEST_WEBDRIVER_URL" >&2
    exit 1
}
echo "test.sh: AGBOSS_TEST_WEBDRIVER_URL=$AGBOSS_TEST_WEBDRIVER_URL" >&2

# The Restate server of the Restate backend's tests (agboss-restate/tests).
exports="$(bash "$ROOT/scripts/restate.sh" start)"
eval "$exports"
[[ -n ${AGBOSS_TEST_RESTATE_INGRESS:-} && -n ${AGBOSS_TEST_RESTATE_ADMIN:-} ]] || {
    echo "test.sh: scripts/restate.sh start gave no AGBOSS_TEST_RESTATE_INGRESS/ADMIN" >&2
    exit 1
}
echo "test.sh: AGBOSS_TEST_RESTATE_INGRESS=$AGBOSS_TEST_RESTATE_INGRESS AGBOSS_TEST_RESTATE_ADMIN=$AGBOSS_TEST_RESTATE_ADMIN" >&2

# No incremental compilation data (8 GB of target/ for the whole suite, and slower from clean);
# set CARGO_INCREMENTAL=1 to keep it while you iterate.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
status=0
cargo test --workspace "$@" || status=$?
exit "$status"

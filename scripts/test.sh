#!/usr/bin/env bash
# Runs every test Mailroom has: the native tests (the whole core on SQLite built
# from migrations/), then the end-to-end tests against the built Worker on real
# workerd with a fresh local D1 per test file, driven over HTTP and in Chromium.
#
#   scripts/test.sh              everything (what CI runs)
#   scripts/test.sh e2e audit    only end-to-end files whose names contain "audit"
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh" --browser
log "setup done after ${SECONDS}s"

if [ "${1:-}" != "e2e" ]; then
  log "formatting and lints (rustfmt, clippy natively and for the Worker's wasm32 target)"
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  cargo clippy --target wasm32-unknown-unknown --quiet -- -D warnings
  log "native tests"
  cargo test --workspace --quiet
  log "mutations of delegation, each of which the native tests must catch"
  "$ROOT/scripts/mutations.sh"
  log "native tests and mutations done after ${SECONDS}s"
fi

"$ROOT/scripts/build.sh"

log "end-to-end tests on workerd"
"$NODE" "$ROOT/tests/e2e/run.mjs" "${@:2}"
log "all tests passed in ${SECONDS}s"

#!/usr/bin/env bash
# Runs every test Mailroom has: the native tests (the whole core on SQLite built
# from migrations/), then the end-to-end tests against the built Worker on real
# workerd with a fresh local D1 per test file, driven over HTTP and in Chromium.
# Prints how long each phase took at the end, passed or not.
#
#   scripts/test.sh              everything (what CI runs)
#   scripts/test.sh e2e audit    only end-to-end files whose names contain "audit"
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

phases=()
phase_started=$SECONDS
# Ends the phase that was running, under the name given, and starts the next.
phase_done() {
  phases+=("$(printf '%6ss  %s' "$((SECONDS - phase_started))" "$1")")
  phase_started=$SECONDS
}
report_phases() {
  local status=$?
  if [ ${#phases[@]} -gt 0 ]; then
    printf '\nphases (%s):\n' "$([ "$status" = 0 ] && echo "all passed" || echo "stopped by a failure")" >&2
    printf '  %s\n' "${phases[@]}" >&2
    printf '%6ss  in all\n' "$SECONDS" >&2
  fi
}
trap report_phases EXIT

"$ROOT/scripts/setup.sh" --browser
phase_done "setup (toolchain, CLIs, npm packages, Chromium)"

if [ "${1:-}" != "e2e" ]; then
  log "formatting and lints (rustfmt, clippy natively and for the Worker's wasm32 target)"
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  cargo clippy --target wasm32-unknown-unknown --quiet -- -D warnings
  phase_done "formatting and lints"
  log "native tests"
  cargo test --workspace --quiet
  phase_done "native tests"
  log "mutations of delegation, each of which the native tests must catch"
  "$ROOT/scripts/mutations.sh"
  phase_done "mutations"
fi

"$ROOT/scripts/build.sh"
phase_done "the Worker's release build"

log "end-to-end tests on workerd"
"$NODE" "$ROOT/tests/e2e/run.mjs" "${@:2}"
phase_done "end-to-end tests"
log "all tests passed in ${SECONDS}s"

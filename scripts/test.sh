#!/usr/bin/env bash
# Runs every test Mailroom has: the native tests (the whole core on SQLite built
# from migrations/), the deploy script (its dry run, and deploys against a
# stand-in for wrangler's account commands), then the end-to-end tests against
# the built Worker on real workerd with a fresh local D1 per test file, driven
# over HTTP and in Chromium.
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
  local status=${1:-$?}
  if [ ${#phases[@]} -gt 0 ]; then
    printf '\nphases (%s):\n' "$([ "$status" = 0 ] && echo "all passed" || echo "stopped by a failure")" >&2
    printf '  %s\n' "${phases[@]}" >&2
    printf '%6ss  in all\n' "$SECONDS" >&2
  fi
}
trap report_phases EXIT

"$ROOT/scripts/setup.sh" --browser
phase_done "setup (toolchain, CLIs, npm packages, Chromium)"

# The Worker's release build (linted for wasm32 as it compiles, by clippy-driver:
# scripts/build.sh) ends in one long link-time optimisation on one core, so it
# runs beside the native phases, in its own target directory (two cargos on one
# would wait for each other's lock); the end-to-end tests wait for it.
mkdir -p target
build_log="$ROOT/target/release-build.log"
(
  started=$SECONDS
  "$ROOT/scripts/build.sh"
  echo "(the Worker's linted release build took $((SECONDS - started))s)"
) >"$build_log" 2>&1 &
build_pid=$!
# A failing native phase ends the run: the build beside it (cargo, wasm-opt and
# all) ends with it.
stop_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do stop_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
trap 'status=$?; stop_tree "$build_pid"; report_phases "$status"' EXIT

if [ "${1:-}" != "e2e" ]; then
  log "formatting (rustfmt) and Biome's lints of the JavaScript"
  cargo fmt --all --check
  # Every JavaScript file (the interface's modules, the end-to-end tests, the
  # scripts) against Biome's recommended rules, as biome.jsonc configures them.
  "$ROOT/node_modules/.bin/biome" lint --error-on-warnings
  phase_done "formatting and JavaScript lints"
  # One native build serves clippy and the tests: the workspace is compiled by
  # clippy-driver with -D warnings (every target, as `cargo clippy
  # --all-targets` lints them), and the tests and mutations run what it built.
  lint_while_building
  log "native build, linted by clippy as it compiles (every target)"
  cargo test --workspace --all-targets --no-run --quiet
  phase_done "native build and clippy"
  log "native tests"
  cargo test --workspace --quiet
  phase_done "native tests"
  log "mutations of delegation, each of which the native tests must catch"
  "$ROOT/scripts/mutations.sh"
  phase_done "mutations"
elif [ ! -f target/e2e-inputs/mailbox-move.json ]; then
  # The batches a mail move sends, which mailbox-objects.test.mjs sends to real
  # objects, are recorded by a native test: the one run here when the native
  # phases are not.
  log "recording a mail move's batches for the mailbox objects' end-to-end test"
  cargo test --quiet --test native the_batches_of_a_move_and_their_answers
fi

log "waiting for the Worker's linted release build"
if ! wait "$build_pid"; then
  cat "$build_log" >&2
  exit 1
fi
cat "$build_log"
phase_done "the rest of the Worker's linted release build"
# What follows tests that build, as it is: wrangler runs scripts/build.sh
# itself (`[build]` in wrangler.toml), which would otherwise build again if a
# source changed since.
export MAILROOM_REUSE_BUILD=1

log "the deploy script: its dry run, and deploys against a stand-in account"
deploy_log="$ROOT/target/deploy-dry-run.log"
if ! "$ROOT/scripts/deploy.sh" --dry-run >"$deploy_log" 2>&1; then
  cat "$deploy_log" >&2
  exit 1
fi
grep -E '^Total Upload' "$deploy_log" || true
"$NODE" --test --test-reporter=dot "$ROOT/tests/deploy/deploy.test.mjs"
phase_done "the deploy script (dry run, stand-in account)"

log "end-to-end tests on workerd"
"$NODE" "$ROOT/tests/e2e/run.mjs" "${@:2}"
phase_done "end-to-end tests"
log "all tests passed in ${SECONDS}s"

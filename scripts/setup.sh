#!/usr/bin/env bash
# Installs what a fresh machine lacks to build, run and test Mailroom, from the
# package registries only (crates.io, npm, PyPI, Debian). Idempotent: a second run
# checks versions and returns in seconds.
#
#   scripts/setup.sh            the toolchain, CLIs, npm packages and the Python test clients
#   scripts/setup.sh --browser  also Debian's Chromium, for the browser tests
#
# The downloads (npm packages, Chromium) run beside the two CLIs cargo compiles,
# which keep both cores busy; everything is waited for before it returns.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

background=()
# Runs a step in the background, its output kept in target/setup-<name>.log
# and shown only if it fails.
in_background() {
  local name="$1"
  shift
  mkdir -p target
  ("$@" >"target/setup-$name.log" 2>&1 || { cat "target/setup-$name.log" >&2; exit 1; }) &
  background+=("$!:$name")
}

# npm packages: wrangler (workerd, local D1), Node 22 for it, binaryen's
# wasm-opt, esbuild, Biome (the JavaScript linter; its binary for this platform
# is an optional dependency the lockfile pins), and the test clients.
# Reinstalled only when the lockfile changed.
stamp="node_modules/.mailroom-installed"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  log "installing npm packages (in the background)"
  in_background npm sh -c "npm ci --no-audit --no-fund --loglevel=error && touch '$stamp'"
fi

# The official Python MCP client the end-to-end tests drive (tests/e2e/python/,
# its version pinned in requirements.txt), in a virtual environment of its own,
# from PyPI. Reinstalled only when the requirements changed.
python_stamp=".venv-tests/.mailroom-installed"
if [ ! -f "$python_stamp" ] || [ tests/e2e/python/requirements.txt -nt "$python_stamp" ]; then
  log "installing the Python test clients (in the background)"
  in_background python sh -c "rm -rf .venv-tests && python3 -m venv .venv-tests \
    && .venv-tests/bin/pip install --quiet --disable-pip-version-check -r tests/e2e/python/requirements.txt \
    && touch '$python_stamp'"
fi

if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null; then
  log "installing Debian's chromium for the browser tests (in the background)"
  install_chromium() {
    sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    sudo_if_needed apt-get install -y --no-install-recommends chromium \
      || { sudo_if_needed apt-get update && sudo_if_needed apt-get install -y --no-install-recommends chromium; }
  }
  in_background chromium install_chromium
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
# The tests lint with clippy-driver as they build (scripts/lib.sh,
# lint_while_building) and check formatting with rustfmt.
for component in clippy rustfmt; do
  if ! rustup component list --installed | grep -q "^$component"; then
    log "adding the $component component"
    rustup component add "$component"
  fi
done

# The two CLIs are compiled once per machine. They do seconds of work per build,
# so they are compiled for compile time (opt-level 1, no debug info) rather than
# for speed, sharing one target directory for the dependencies they have in common.
cargo_install() {
  CARGO_TARGET_DIR="$ROOT/target/cli" CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --quiet "$@"
}
# First with the Cargo.lock the crate was published with, then, if that cannot
# be used, with its dependencies resolved afresh. A published lockfile can name
# a version the registry does not serve (wasm-bindgen-cli 0.2.130's pins
# webpki-roots 1.0.11; the index serves up to 1.0.10), so the first attempt's refusal is
# expected, not an error of the setup: it is kept in
# target/setup-<crate>-locked.log and shown only if the second attempt fails too.
cli() {
  local locked_log="target/setup-$1-locked.log"
  mkdir -p target
  if cargo_install "$1" --version "=$2" --locked >"$locked_log" 2>&1; then
    return 0
  fi
  log "$1 $2's published Cargo.lock cannot be used here ($locked_log says why); resolving its dependencies afresh"
  if ! cargo_install "$1" --version "=$2"; then
    log "with its published Cargo.lock, the install had said:"
    cat "$locked_log" >&2
    return 1
  fi
}

# wasm-bindgen's CLI must match the library in Cargo.lock exactly. worker-build
# would download it from GitHub, which is not reachable; build it from crates.io.
want="$(wasm_bindgen_version)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $NF}' || true)"
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want"
  cli wasm-bindgen-cli "$want"
fi

want="$(worker_version)"
have="$(worker-build --version 2>/dev/null | awk '{print $NF}' || true)"
if [ "$have" != "$want" ]; then
  log "installing worker-build $want"
  cli worker-build "$want"
fi

for job in "${background[@]}"; do
  if ! wait "${job%%:*}"; then
    log "setup failed: ${job#*:} (its log is above)"
    exit 1
  fi
done
log "setup complete (node $("$NODE" --version), wasm-bindgen $(wasm_bindgen_version), worker-build $(worker_version))"

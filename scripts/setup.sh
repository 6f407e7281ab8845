#!/usr/bin/env bash
# Installs what a fresh machine lacks to build, run and test Mailroom, from the
# package registries only (crates.io, npm, Debian). Idempotent: a second run
# checks versions and returns in seconds.
#
#   scripts/setup.sh            the toolchain, CLIs and npm packages
#   scripts/setup.sh --browser  also Debian's Chromium, for the browser tests
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen's CLI must match the library in Cargo.lock exactly. worker-build
# would download it from GitHub, which is not reachable; build it from crates.io.
want="$(wasm_bindgen_version)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $NF}' || true)"
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want"
  cargo install --quiet wasm-bindgen-cli --version "=$want" --locked \
    || cargo install --quiet wasm-bindgen-cli --version "=$want"
fi

want="$(worker_version)"
have="$(worker-build --version 2>/dev/null | awk '{print $NF}' || true)"
if [ "$have" != "$want" ]; then
  log "installing worker-build $want"
  cargo install --quiet worker-build --version "=$want" --locked \
    || cargo install --quiet worker-build --version "=$want"
fi

# npm packages: wrangler (workerd, local D1), Node 22 for it, binaryen's
# wasm-opt, and the test clients. Reinstalled only when the lockfile changed.
stamp="node_modules/.mailroom-installed"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  log "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi

if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null; then
  log "installing Debian's chromium for the browser tests"
  sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_if_needed apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
    || { sudo_if_needed apt-get update >/dev/null && sudo_if_needed apt-get install -y --no-install-recommends chromium >/dev/null; }
fi
log "setup complete (node $("$NODE" --version), wasm-bindgen $(wasm_bindgen_version), worker-build $(worker_version))"

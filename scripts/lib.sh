# shellcheck shell=bash
# Shared by the scripts: where things are, and which Node runs wrangler.
# Sourced, never run. Everything it names is installed by scripts/setup.sh.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

# Wrangler needs Node 22 or newer. Use the system's when it is new enough,
# otherwise the one the npm package `node` (a devDependency) provides.
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if command -v node >/dev/null && [ "$(node_major node)" -ge 22 ]; then
  NODE="$(command -v node)"
else
  NODE="$ROOT/node_modules/node/bin/node"
fi
export NODE
# Child processes (wrangler's own helpers, npm bins) find the same Node first.
PATH="$(dirname "$NODE"):$ROOT/node_modules/.bin:$PATH"
export PATH

# No telemetry, and no fetch of Cloudflare's `Request.cf` sample: the machine
# reaches only package registries, and tests talk only to 127.0.0.1.
export WRANGLER_SEND_METRICS=false
export CLOUDFLARE_CF_FETCH_ENABLED=false

wrangler() { "$NODE" "$ROOT/node_modules/wrangler/bin/wrangler.js" "$@"; }

# The wasm-bindgen version the Worker is linked against, from Cargo.lock.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}
# The worker crate's version; worker-build is kept in step with it.
worker_version() {
  awk '/^name = "worker"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

# Clippy's lints applied while the code compiles for real, instead of in a check
# build of their own: cargo runs clippy-driver (rustc with clippy's lints, what
# `cargo clippy` runs) in place of rustc for the workspace's own crates, and
# CLIPPY_ARGS is how `cargo clippy` hands it `-D warnings`. The dependencies are
# then compiled once, for the tests, instead of once more for the lints. The
# same settings must hold for every build of one target directory, or cargo
# rebuilds the workspace.
lint_while_building() {
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
  export RUSTC_WORKSPACE_WRAPPER
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

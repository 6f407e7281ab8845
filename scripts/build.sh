#!/usr/bin/env bash
# Builds the Worker (release WASM, optimised by binaryen's wasm-opt from npm) into
# build/, and prints the gzipped size of what would be deployed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
log "building the Worker"
mkdir -p target
if ! worker-build --release >target/worker-build.log 2>&1; then
  cat target/worker-build.log >&2
  exit 1
fi

wasm="build/index_bg.wasm"
# worker-build keeps the names section (function names for stack traces). A panic
# is a defect the native tests catch, not something to debug in production, and
# the names are an eighth of the compressed Worker, so they go.
wasm-opt "$wasm" --strip-debug --strip-producers \
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory \
  --enable-multivalue --enable-reference-types --enable-exception-handling -o "$wasm"
raw=$(wc -c <"$wasm")
gzipped=$(gzip -9 -c "$wasm" | wc -c)
printf 'release WASM: %s bytes, %s bytes gzipped (%s KiB)\n' "$raw" "$gzipped" "$((gzipped / 1024))"

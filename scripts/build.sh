#!/usr/bin/env bash
# Builds the Worker (release WASM, optimised by binaryen's wasm-opt from npm) into
# build/, prints the raw and gzipped size of what would be deployed, and holds
# its startup to its budget (scripts/startup.sh).
#
# wrangler runs this itself before `wrangler dev`, `deploy` and `check startup`
# (`[build]` in wrangler.toml), so it returns at once when build/ is already what
# the inputs build into: a hash of every input (the sources, the lockfiles, the
# toolchain's version, this script) is kept beside what it built, in
# build/.inputs, and compared first. MAILROOM_REUSE_BUILD=1 skips even that, for
# a caller that has just set the machine up and built, and must test exactly
# that build while the tree may change under it (scripts/test.sh, and through it
# scripts/deploy.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

stamp="build/.inputs"
if [[ "${MAILROOM_REUSE_BUILD:-}" = 1 && -f build/index.js && -f build/index_bg.wasm ]]; then
  log "using the Worker in build/ as it was built (MAILROOM_REUSE_BUILD=1)"
  exit 0
fi
# Everything that goes into build/. A file added or removed changes the hash
# too, since each file's name is hashed with its contents.
inputs_hash() {
  {
    rustc --version
    find src crates contract migrations -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    sha256sum build.rs Cargo.toml Cargo.lock package-lock.json scripts/build.sh scripts/lib.sh
  } | sha256sum | cut -d' ' -f1
}
hash="$(inputs_hash)"
if [[ -z "${MAILROOM_KEEP_NAMES:-}" && -f "$stamp" && "$(cat "$stamp")" = "$hash" ]]; then
  log "the Worker in build/ is current (its inputs are unchanged): nothing to build"
  exit 0
fi
# Gone while build/ is rewritten, so a build that stops half way is never
# taken for a finished one.
rm -f "$stamp"

export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
# Its own target directory, so it can run beside the native phases (scripts/test.sh).
export CARGO_TARGET_DIR="$ROOT/target/worker"
log "building the Worker"
mkdir -p target
# The interface's style and modules go into the Worker minified (about a third of
# their compressed size); build.rs compiles them in from here instead of
# src/interface/, and the page pins whatever bytes it serves by their hash.
interface="$ROOT/target/interface"
rm -rf "$interface" && mkdir -p "$interface/scripts" "$interface/vendor"
cp src/interface/index.html "$interface/"
esbuild="$ROOT/node_modules/.bin/esbuild"
mkdir -p "$interface/style"
for stylesheet in src/interface/*.css src/interface/style/*.css; do
  "$esbuild" "$stylesheet" --minify --log-level=warning --outfile="$interface/${stylesheet#src/interface/}"
done
# The page's stylesheet is written in parts that interface.rs joins. esbuild
# ends each file with a line end; all but the last part's go, so the parts
# joined are one line, as the stylesheet minified whole was.
parts=(src/interface/style/*.css)
for part in "${parts[@]:0:${#parts[@]}-1}"; do
  minified="$interface/${part#src/interface/}"
  if [ -z "$(tail -c 1 "$minified")" ]; then truncate -s -1 "$minified"; fi
done
# The message frame's one script, a classic script pinned by its hash.
"$esbuild" src/interface/message-frame.js --minify --log-level=warning --outfile="$interface/message-frame.js"
for module in src/interface/scripts/*.js; do
  "$esbuild" "$module" --minify --format=esm --log-level=warning --outfile="$interface/scripts/$(basename "$module")"
done
# DOMPurify, the sanitiser a message's HTML goes through (decision 0020): a
# pinned devDependency, minified like the rest (its licence comment kept).
"$esbuild" node_modules/dompurify/dist/purify.es.mjs --minify --format=esm --log-level=warning \
  --outfile="$interface/vendor/purify.js"
export MAILROOM_MINIFIED_INTERFACE="$interface"
# Linted as it compiles (clippy-driver, -D warnings: scripts/lib.sh): the only
# build of src/adapter/, which is wasm32 alone, so this is its lint.
lint_while_building
if ! worker-build --release >target/worker-build.log 2>&1; then
  cat target/worker-build.log >&2
  exit 1
fi

wasm="build/index_bg.wasm"
# For measuring what grew (`twiggy top`, `twiggy diff`): a copy with its names.
if [[ -n "${MAILROOM_KEEP_NAMES:-}" ]]; then cp "$wasm" "$MAILROOM_KEEP_NAMES"; fi
# worker-build keeps the names section (function names for stack traces). A panic
# is a defect the native tests catch, not something to debug in production, and
# the names are an eighth of the compressed Worker, so they go.
wasm-opt "$wasm" --strip-debug --strip-producers \
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory \
  --enable-multivalue --enable-reference-types --enable-exception-handling -o "$wasm"
raw=$(wc -c <"$wasm")
gzipped=$(gzip -9 -c "$wasm" | wc -c)
printf 'release WASM: %s bytes, %s bytes gzipped (%s KiB)\n' "$raw" "$gzipped" "$((gzipped / 1024))"
# What size still costs is startup: measured on what was just built (wrangler
# runs this script first, which returns at once under MAILROOM_REUSE_BUILD=1),
# and a Worker over its budget is no finished build (decision 0004).
MAILROOM_REUSE_BUILD=1 "$ROOT/scripts/startup.sh"
# The inputs as they were when the build began: a file changed meanwhile makes
# the next run build again.
printf '%s\n' "$hash" >"$stamp"

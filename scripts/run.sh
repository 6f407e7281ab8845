#!/usr/bin/env bash
# Runs Mailroom locally: installs what is missing, builds the Worker, applies
# migrations/ to a local D1, starts it on workerd (wrangler dev), seeds a demo
# organisation and prints how to sign in. Ctrl-C stops it; the data stays in
# .wrangler/local for the next run.
#
#   scripts/run.sh              http://127.0.0.1:8787
#   PORT=9000 scripts/run.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"

state="$ROOT/.wrangler/local"
secrets="$state/secrets.env"
port="${PORT:-8787}"
mkdir -p "$state"
if [ ! -f "$secrets" ]; then
  # Local secrets, made once and kept beside the local database they belong to.
  printf 'SESSION_SECRET=%s\nSETUP_TOKEN=%s\n' \
    "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$secrets"
fi
if ! grep -q '^AUDIT_KEY=' "$secrets"; then
  # Keys the audit chain; added to local state made before the chain was keyed.
  printf 'AUDIT_KEY=%s\n' "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" >>"$secrets"
fi
# The node answers only at its own origin (what defeats DNS rebinding locally).
environment="$state/environment.env"
cp "$secrets" "$environment"
printf 'PUBLIC_ORIGIN=http://127.0.0.1:%s\n' "$port" >>"$environment"
# The demo runs agent messaging, which a deployment turns on in wrangler.toml.
printf 'FEATURE_AGENT_NETWORK=true\n' >>"$environment"

log "applying migrations to the local D1"
wrangler d1 migrations apply DB --local --persist-to "$state" >/dev/null

log "starting the Worker on workerd"
wrangler dev --local --ip 127.0.0.1 --port "$port" --persist-to "$state" --env-file "$environment" \
  --show-interactive-dev-session=false --log-level warn --test-scheduled &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT INT TERM

"$NODE" "$ROOT/scripts/seed.mjs" "http://127.0.0.1:$port" "$secrets"
wait "$server"

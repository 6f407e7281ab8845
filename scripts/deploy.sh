#!/usr/bin/env bash
# Deploys Mailroom to your own Cloudflare account, as many times as you like:
# each run creates only what is missing and changes nothing else.
#
#   scripts/deploy.sh                          deploy (or deploy again)
#   scripts/deploy.sh --setup EMAIL "NAME"     and then create the first administrator
#   scripts/deploy.sh --dry-run                everything that needs no account
#
# In order: what the machine lacks is installed (scripts/setup.sh), wrangler.toml
# is checked against the code (every secret, variable and binding the code reads
# is declared; scripts/deploy-kit.mjs), the Worker is built (scripts/build.sh)
# and bundled by `wrangler deploy --dry-run`; that is the dry run, which never
# talks to Cloudflare. Then, on the account wrangler is
# signed in to (`scripts/wrangler.sh login`, or CLOUDFLARE_API_TOKEN and
# CLOUDFLARE_ACCOUNT_ID): the D1 database and the R2 bucket wrangler.toml names
# are created if missing; each secret in its [secrets] required that the Worker
# lacks is generated and set with the deploy (none is ever printed but a new
# SETUP_TOKEN, once); migrations/ is applied to the database; the Worker is
# deployed. With --setup, POST /api/setup then creates the first administrator
# (the password from MAILROOM_ADMIN_PASSWORD, or asked for). It ends by saying
# what only the dashboard can do: route mail to the Worker, and send from a
# domain.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

# The wrangler it drives: the project's own, or a stand-in for the script's
# tests (tests/deploy/).
if [[ -n "${MAILROOM_WRANGLER:-}" ]]; then
  wrangler() { "$MAILROOM_WRANGLER" "$@"; }
fi
kit() { "$NODE" "$ROOT/scripts/deploy-kit.mjs" "$@"; }

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

dry_run=false
setup_email=""
setup_name=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry_run=true ;;
    --setup)
      [[ $# -ge 3 ]] || usage
      setup_email="$2"
      setup_name="$3"
      shift 2
      ;;
    -h | --help) usage ;;
    *)
      echo "deploy.sh: unknown argument $1" >&2
      usage
      ;;
  esac
  shift
done

# Secrets and wrangler's records live here, readable by this user alone, and
# go when the script ends, however it ends.
work="$(umask 077 && mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A caller that has just set the machine up and built the Worker (the test
# command, MAILROOM_REUSE_BUILD=1) has nothing to install.
if [[ "${MAILROOM_REUSE_BUILD:-}" != 1 ]]; then "$ROOT/scripts/setup.sh"; fi

log "checking wrangler.toml against the code"
kit check >"$work/facts"
while IFS='=' read -r key value; do
  case "$key" in
    worker) worker="$value" ;;
    database) database="$value" ;;
    bucket) bucket="$value" ;;
    secrets) read -r -a required_secrets <<<"$value" ;;
    public_origin) public_origin="$value" ;;
    inbound_fallback) inbound_fallback="$value" ;;
  esac
done <"$work/facts"

"$ROOT/scripts/build.sh"

log "bundling it as a deploy would (wrangler deploy --dry-run)"
if ! wrangler deploy --dry-run --outdir "$work/bundle" >"$work/dry-run.log" 2>&1; then
  cat "$work/dry-run.log" >&2
  exit 1
fi
grep -E '^Total Upload' "$work/dry-run.log" || true

# What only the dashboard can do, said at the end of every run.
what_is_left() {
  cat <<EOF

What this script cannot do for you, in the Cloudflare dashboard (https://dash.cloudflare.com):

  1. Receive mail. Select the domain the mailboxes are on, then Email > Email Routing.
     Turn Email Routing on if it is off (it adds its MX and TXT records). Under
     Routing rules, either edit the Catch-all address (action: Send to a Worker,
     destination: $worker), or create a custom address for each mailbox with that
     action. Mail to an address with no mailbox is refused with 550 5.1.1.
  2. Send mail (approved sends, reminder emails). Go to Email Sending, choose
     Onboard Domain, pick the same domain and let it add its DNS records (MX, SPF
     and DKIM on cf-bounce.<domain>, DMARC on _dmarc.<domain>). Until a domain is
     onboarded, and on the Workers Free plan, mail goes only to addresses verified
     in the account.
EOF
  if [[ -z "$inbound_fallback" ]]; then
    printf '\n%s\n' "INBOUND_FALLBACK_ADDRESS is empty in wrangler.toml: mail the node fails to store is bounced to its sender. Set it to a destination address verified in Email Routing."
  fi
  if [[ -z "$public_origin" ]]; then
    printf '\n%s\n' "PUBLIC_ORIGIN is empty in wrangler.toml: the node answers on any host name. Set it to the address people use (such as https://mail.example.org) and run this again."
  fi
}

if $dry_run; then
  log "dry run passed: nothing was sent to Cloudflare"
  what_is_left
  exit 0
fi

# Asked before anything changes on the account, so a missing password stops
# the run while there is nothing to undo.
if [[ -n "$setup_email" && -z "${MAILROOM_ADMIN_PASSWORD:-}" ]]; then
  if [[ ! -t 0 ]]; then
    echo "--setup needs the administrator's password: set MAILROOM_ADMIN_PASSWORD, or run this in a terminal" >&2
    exit 1
  fi
  read -r -s -p "Password for $setup_email: " MAILROOM_ADMIN_PASSWORD && echo >&2
  read -r -s -p "The same password again: " again && echo >&2
  if [[ "$MAILROOM_ADMIN_PASSWORD" != "$again" ]]; then
    echo "the two passwords differ" >&2
    exit 1
  fi
fi

log "checking that wrangler is signed in"
if ! wrangler whoami --json >"$work/whoami.json" 2>"$work/whoami.log"; then
  cat "$work/whoami.log" >&2
  echo "wrangler is not signed in: run scripts/wrangler.sh login, or set CLOUDFLARE_API_TOKEN (and CLOUDFLARE_ACCOUNT_ID)" >&2
  exit 1
fi

log "the D1 database $database"
wrangler d1 list --json >"$work/d1.json"
if kit d1-names <"$work/d1.json" | grep -qxF "$database"; then
  echo "exists: reused"
else
  # Named in wrangler.toml with no id, so nothing is written back to it:
  # wrangler finds the database by its name (decision 0041).
  wrangler d1 create "$database" >"$work/d1-create.log" 2>&1 || {
    cat "$work/d1-create.log" >&2
    exit 1
  }
  echo "created"
fi

log "the R2 bucket $bucket"
wrangler r2 bucket list >"$work/r2.txt"
if kit r2-names <"$work/r2.txt" | grep -qxF "$bucket"; then
  echo "exists: reused"
else
  wrangler r2 bucket create "$bucket" >"$work/r2-create.log" 2>&1 || {
    cat "$work/r2-create.log" >&2
    exit 1
  }
  echo "created"
fi

log "the Worker's secrets"
existing=()
if wrangler secret list --format json >"$work/secrets.json" 2>"$work/secrets.log"; then
  kit secret-names <"$work/secrets.json" >"$work/secret-names"
  mapfile -t existing <"$work/secret-names"
elif kit worker-missing "$worker" <"$work/secrets.log"; then
  # A first deploy: no Worker yet, so no secrets, and every one is generated.
  echo "no Worker named $worker yet: this is its first deploy"
else
  cat "$work/secrets.log" >&2
  exit 1
fi
generated=()
printf '{' >"$work/secrets-file.json"
for name in "${required_secrets[@]}"; do
  if printf '%s\n' "${existing[@]}" | grep -qxF "$name"; then
    echo "$name: set, kept"
    continue
  fi
  # 32 random bytes as 64 hexadecimal characters: more than the 32 characters
  # SESSION_SECRET and AUDIT_KEY need.
  value="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
  [[ ${#generated[@]} -eq 0 ]] || printf ',' >>"$work/secrets-file.json"
  printf '"%s":"%s"' "$name" "$value" >>"$work/secrets-file.json"
  generated+=("$name")
  if [[ "$name" = SETUP_TOKEN ]]; then setup_token="$value"; fi
  echo "$name: missing, generated (set with the deploy)"
done
printf '}\n' >>"$work/secrets-file.json"

# The token --setup sends: the one made now, or, when the Worker already had
# one (which cannot be read back), the one its operator kept.
if [[ -n "$setup_email" && -z "${setup_token:-}" ]]; then
  setup_token="${MAILROOM_SETUP_TOKEN:-}"
  if [[ -z "$setup_token" ]]; then
    echo "--setup: the Worker already has a SETUP_TOKEN, which cannot be read back; pass it as MAILROOM_SETUP_TOKEN" >&2
    exit 1
  fi
fi

log "applying migrations/ to $database"
# Without a terminal on its input, wrangler applies without asking (it still
# takes its backup first).
wrangler d1 migrations apply DB --remote </dev/null

log "deploying the Worker"
deploy_arguments=()
if [[ ${#generated[@]} -gt 0 ]]; then deploy_arguments+=(--secrets-file "$work/secrets-file.json"); fi
WRANGLER_OUTPUT_FILE_PATH="$work/deploy-output.ndjson" wrangler deploy "${deploy_arguments[@]}"
url="$public_origin"
if [[ -z "$url" ]]; then url="$(kit deployed-url "$work/deploy-output.ndjson" || true)"; fi

if [[ -n "${setup_token:-}" && " ${generated[*]} " == *" SETUP_TOKEN "* ]]; then
  # The only secret ever shown, once: POST /api/setup needs it.
  printf '\nSETUP_TOKEN (shown once; POST /api/setup needs it until the first administrator exists):\n  %s\n' "$setup_token"
fi

if [[ -n "$setup_email" ]]; then
  if [[ -z "$url" ]]; then
    echo "--setup: the deploy named no https address; set PUBLIC_ORIGIN in wrangler.toml" >&2
    exit 1
  fi
  log "creating the first administrator, $setup_email, at $url"
  MAILROOM_SETUP_TOKEN="$setup_token" MAILROOM_SETUP_EMAIL="$setup_email" MAILROOM_SETUP_NAME="$setup_name" \
    MAILROOM_SETUP_PASSWORD="$MAILROOM_ADMIN_PASSWORD" kit setup "$url"
  echo "done: sign in at $url"
fi

log "deployed${url:+ at $url}"
what_is_left

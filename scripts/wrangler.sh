#!/usr/bin/env bash
# The project's wrangler, run with a Node new enough for it (22+), for deploying:
#   scripts/wrangler.sh deploy
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
wrangler "$@"

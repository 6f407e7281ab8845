#!/usr/bin/env bash
# Delegation's terms are load-bearing: each mutation below removes one term of
# the intersection (or the ceiling, the content marking, or the recorded
# delegator), and the native tests must fail for every one of them. A mutation
# the tests survive means the suite no longer guards that term.
#
#   scripts/mutations.sh            every mutation
#   scripts/mutations.sh sponsor    only those whose name contains "sponsor"
#
# Each mutation is made in the tree itself, built, run and undone before the
# next, so its build is incremental from the native tests' own (scripts/test.sh
# builds them with the same settings, so cargo rebuilds only what one changed
# file touches). The file is put back as it was whatever ends the run: on any
# exit, an interrupt or a termination.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
lint_while_building

work_marker="$ROOT/target/mutations-built-after"
mkdir -p "$ROOT/target"
mutated_file=""
original=""
put_back() {
  if [ -n "$mutated_file" ] && [ -n "$original" ]; then
    cp "$original" "$mutated_file" && rm -f "$original"
    mutated_file=""
  fi
}
trap put_back EXIT
trap 'put_back; exit 130' INT
trap 'put_back; exit 143' TERM

# name | file | text to find | replacement [| the tests that guard it]
# Without the last field every native test runs until the first fails; with it,
# only those whose names contain it (a term whose guard runs late in the suite).
mutations=(
  'the agent'"'"'s own tuple|src/authz/store/tuples.rs|"(t.subject = {agent} \|"({agent} IS NOT NULL \'
  "the sponsor holds the same relation|src/authz/store/tuples.rs|WHERE s.relation = t.relation AND s.object = t.object|WHERE s.object = t.object"
  "the sponsor holds it on the same object|src/authz/store/tuples.rs|WHERE s.relation = t.relation AND s.object = t.object|WHERE s.relation = t.relation"
  "the sponsor's teams count|src/authz/store/tuples.rs|OR s.subject IN (SELECT m.team_id|OR s.subject IN (SELECT NULL AND m.team_id"
  "the agent and its sponsor are live|src/authz/store/tuples.rs|WHERE a.id = {agent} AND a.revoked_at IS NULL AND a.paused_at IS NULL AND p.disabled_at IS NULL|WHERE a.id = {agent}"
  "the agent has not expired|src/authz/store/tuples.rs|AND (a.expires_at IS NULL OR a.expires_at > ?)|AND (a.expires_at IS NULL OR a.expires_at > ? OR 1)"
  "the ceiling binds every route|src/authz/checks.rs|if tier != Tier::Surface {|if tier == Tier::Surface {"
  "a route that reads content says so|contract/src/route/declaration.rs|self.reaches_content = true;|self.reaches_content = false;"
  "the delegator is recorded|src/core/context/note.rs|delegator: self.delegator.clone(),|delegator: None,"
  "a mention reaches only who reads the notes|src/mail/store/notes.rs|WHERE p.disabled_at IS NULL AND {holds}|WHERE p.disabled_at IS NULL AND ({holds} OR 1)|notes::"
  "a peer speaks only for agents on its domain|src/core/outbound.rs|above.ends_with('.')|above.ends_with(\"\")|peers::"
  "a peer reaches only agents listed on the card|src/messaging/store/sending.rs|WHERE agent_id = a.id), 0) AS listed|WHERE agent_id = a.id), 1) AS listed|peers::"
  "the outbound policy is judged at every attempt|src/a2a/outbox.rs|peers::reaches(&entries, &address)|peers::reaches(&entries, &address) ^ entries.is_empty()|peers::"
)

survived=()
for mutation in "${mutations[@]}"; do
  IFS='|' read -r name file find replace guards <<<"$mutation"
  case "$name" in *"${1:-}"*) ;; *) continue ;; esac
  started=$SECONDS
  original="$(mktemp)"
  cp "$file" "$original"
  mutated_file="$file"
  python3 - "$file" "$find" "$replace" <<'PY'
import sys
path, find, replace = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
if find not in text:
    sys.exit(f"mutation target not found in {path}: {find!r}")
open(path, "w").write(text.replace(find, replace, 1))
PY
  # The binary must be one built from this mutation, never a stale one that an
  # earlier mutation left, which would be "caught" for the wrong reason.
  touch "$work_marker"
  binary="$(cargo test --quiet --test native --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys; print(*[m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1:])' || true)"
  built=$((SECONDS - started))
  # Put the file back as it was (with a new modification time, so the next build
  # sees the change back) before anything can stop the loop.
  put_back
  if [ -z "$binary" ]; then
    log "mutation '$name' does not compile: fix the mutation, not the code"
    exit 1
  fi
  if [ ! "$binary" -nt "$work_marker" ]; then
    log "mutation '$name' was not built into $binary: a stale binary would be caught for the wrong reason"
    exit 1
  fi
  # One failing test is enough to catch a mutation, so the run stops at the
  # first: grep exits, and the test binary ends on its next write.
  if ! grep -q -m1 -E '^test .* \.\.\. FAILED$' < <("$binary" ${guards:+"$guards"} 2>&1); then
    survived+=("$name")
    log "SURVIVED: without $name, every test still passes ($((SECONDS - started))s)"
  else
    log "caught: without $name, a test fails (built in ${built}s, $((SECONDS - started))s in all)"
  fi
done

if [ ${#survived[@]} -gt 0 ]; then
  printf 'mutations the tests did not catch:\n' >&2
  printf '  - %s\n' "${survived[@]}" >&2
  exit 1
fi

// The audit chain on real D1: every change recorded under contention without a
// writer ever retrying, sealed after the answers, tampering found at the entry
// where it happened, and a truncated tail found against the checkpoint the
// scheduled upkeep keeps in R2.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startNode, setUp } from "./harness.mjs";

let node, call, token, admin;

before(async () => {
  node = await startNode();
  nodes.push(node);
  ({ call, token, admin } = await setUp(node));
});
const nodes = [];
after(() => Promise.all(nodes.map((started) => started.stop())));

async function chain() {
  const entries = [];
  let cursor;
  do {
    const page = await call("GET", `/api/audit?limit=200${cursor ? `&cursor=${cursor}` : ""}`, { token });
    assert.equal(page.status, 200, page.text);
    entries.push(...page.body.entries);
    cursor = page.body.next_cursor;
  } while (cursor);
  return entries.reverse();
}

test("many concurrent changes leave a contiguous chain with every one recorded", async () => {
  const before = (await chain()).length;
  const count = 40;
  const responses = await Promise.all(
    Array.from({ length: count }, (_, index) => call("POST", "/api/teams", { token, body: { name: `Concurrent ${index}` } })),
  );
  for (const response of responses) assert.equal(response.status, 201, response.text);

  const entries = await chain();
  assert.equal(entries.length, before + count);
  entries.forEach((entry, index) => assert.equal(entry.seq, index + 1));
  const created = entries.filter((entry) => entry.action === "create_team" && entry.outcome === "ok");
  assert.deepEqual(
    new Set(created.map((entry) => entry.detail.name)),
    new Set(Array.from({ length: count }, (_, index) => `Concurrent ${index}`)),
  );
  for (const entry of created) assert.equal(entry.actor, admin.id);
  const verification = await call("GET", "/api/audit/verify", { token });
  assert.equal(verification.body.intact, true, verification.text);
  assert.equal(verification.body.checked, entries.length);
});

/** Verifies until nothing awaits its seal (sealing follows each answer), or gives up after a few seconds. */
async function verifiedWhenSealed() {
  for (let attempt = 0; ; attempt++) {
    const verification = (await call("GET", "/api/audit/verify", { token })).body;
    if (verification.awaiting_seal === 0 || attempt === 40) return verification;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("thirty writers at once: each commits at its first attempt, none is busy, and the chain is sealed whole", async () => {
  const before = (await chain()).length;
  const responses = await Promise.all(
    Array.from({ length: 30 }, (_, index) => call("POST", "/api/teams", { token, body: { name: `Thirty ${index}` } })),
  );
  for (const response of responses) {
    assert.equal(response.status, 201, response.text);
    assert.equal(response.headers.get("x-mailroom-commit-attempts"), "1", "no writer retries");
  }
  const verification = await verifiedWhenSealed();
  assert.equal(verification.intact, true, JSON.stringify(verification));
  assert.equal(verification.awaiting_seal, 0, "sealed after the answers");
  assert.equal(verification.head.seq, before + 30);
});

test("altering, deleting or reordering rows in D1 is found at that seq", async () => {
  await call("POST", "/api/teams", { token, body: { name: "Tamper A" } });
  await call("POST", "/api/teams", { token, body: { name: "Tamper B" } });
  const entries = await chain();
  const target = entries[entries.length - 2].seq;

  const original = (await node.sql(`SELECT outcome FROM audit_entries WHERE seq = ${target}`))[0].outcome;
  await node.sql(`UPDATE audit_entries SET outcome = 'refused' WHERE seq = ${target}`);
  let verification = (await call("GET", "/api/audit/verify", { token })).body;
  assert.equal(verification.intact, false);
  assert.equal(verification.first_bad_seq, target);
  await node.sql(`UPDATE audit_entries SET outcome = '${original}' WHERE seq = ${target}`);
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true, "restoring the field restores the chain");

  const swap = `UPDATE audit_entries SET seq = -1 WHERE seq = 2; UPDATE audit_entries SET seq = 2 WHERE seq = 3; UPDATE audit_entries SET seq = 3 WHERE seq = -1;`;
  await node.sql(swap);
  verification = (await call("GET", "/api/audit/verify", { token })).body;
  assert.equal(verification.first_bad_seq, 2);
  await node.sql(swap);

  await node.sql(`DELETE FROM audit_entries WHERE seq = ${target}`);
  verification = (await call("GET", "/api/audit/verify", { token })).body;
  assert.equal(verification.intact, false);
  assert.equal(verification.first_bad_seq, target);
});

test("the scheduled upkeep keeps a signed checkpoint outside D1, and a tail truncated after it is found", async () => {
  // A node of its own: the tests above leave this one's chain tampered with.
  node = await startNode();
  nodes.push(node);
  ({ call, token, admin } = await setUp(node));
  for (const name of ["One", "Two", "Three"]) await call("POST", "/api/teams", { token, body: { name } });
  await node.scheduled();
  let verification = await verifiedWhenSealed();
  assert.equal(verification.intact, true, JSON.stringify(verification));
  assert.ok(verification.checkpoint, "a checkpoint was kept in R2");
  assert.equal(verification.checkpoint.seq, verification.head.seq);
  const checkpointed = verification.checkpoint.seq;

  const made = await call("POST", "/api/audit/checkpoints", { token });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.seq, checkpointed, "an administrator's checkpoint is of the head before its own entry");

  await node.sql(`DELETE FROM audit_entries WHERE seq >= ${checkpointed - 1}`);
  verification = (await call("GET", "/api/audit/verify", { token })).body;
  assert.equal(verification.intact, false);
  assert.equal(verification.first_bad_seq, checkpointed - 1);
  assert.match(verification.problem, new RegExp(`^truncated after checkpoint ${checkpointed}`));
});

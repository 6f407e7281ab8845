// The audit chain on real D1: every change recorded under contention without a
// writer ever retrying, sealed after the answers, tampering found at the entry
// where it happened, and a truncated tail found against the checkpoint the
// scheduled upkeep keeps in R2; a copy of a real entry never sealed nor signed
// over, with administrators told; a tail cut with R2's checkpoints still found
// against D1's record; each checkpoint posted, signed, to the witness; and the
// mailboxes' segments reached in their own objects by the same upkeep.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { startNode, setUp, assertRefusal } from "./harness.mjs";
import { startReceiver } from "./fixtures.mjs";

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
  for (const [index, entry] of entries.entries()) assert.equal(entry.seq, index + 1);
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
  // Each mailbox's segment of the chain is kept in the mailbox's own Durable
  // Object (decision 0040): verification reaches every one, on workerd.
  const mailboxes = [];
  for (const address of ["support@mailroom.test", "sales@mailroom.test"]) {
    const made = await call("POST", "/api/mailboxes", { token, body: { address, display_name: "Desk" } });
    assert.equal(made.status, 201, made.text);
    mailboxes.push(made.body.id);
  }
  await node.scheduled();
  let verification = await verifiedWhenSealed();
  assert.deepEqual(
    verification.segments.map(({ mailbox_id, intact, checked, anchored }) => ({ mailbox_id, intact, checked, anchored })),
    mailboxes.sort().map((mailbox_id) => ({ mailbox_id, intact: true, checked: 0, anchored: null })),
  );
  const segment = await call("GET", `/api/audit/verify?mailbox_id=${mailboxes[0]}`, { token });
  assert.equal(segment.status, 200, segment.text);
  assert.equal(segment.body.intact, true, segment.text);
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

// ---- Replays, rollbacks, the alarm and the witness (decision 0027) ----

/** The columns a copy of an entry carries: all but its place and its seal. */
async function entryColumns(node) {
  const columns = await node.sql("SELECT name FROM pragma_table_info('audit_entries')");
  return columns.map((column) => column.name).filter((name) => !["seq", "prev_hash", "hash"].includes(name)).join(", ");
}

test("a real entry replayed at the end is never sealed, nothing is signed over it, and administrators are told", async () => {
  const fresh = await startNode();
  nodes.push(fresh);
  const { call: freshCall, token: freshToken } = await setUp(fresh);
  for (const name of ["Red", "Green"]) await freshCall("POST", "/api/teams", { token: freshToken, body: { name } });
  await fresh.scheduled();
  const verify = async () => (await freshCall("GET", "/api/audit/verify", { token: freshToken })).body;
  let verification = await verify();
  assert.equal(verification.intact, true, JSON.stringify(verification));
  assert.equal(verification.checkpoint.number, 1);
  assert.deepEqual(verification.database_checkpoint, verification.checkpoint, "D1 and R2 hold the same checkpoint");

  const granted = (await fresh.sql("SELECT seq FROM audit_entries WHERE action = 'create_team' ORDER BY seq LIMIT 1"))[0].seq;
  const columns = await entryColumns(fresh);
  await fresh.sql(`INSERT INTO audit_entries (seq, ${columns}) SELECT (SELECT MAX(seq) + 1 FROM audit_entries), ${columns} FROM audit_entries WHERE seq = ${granted}`);
  const copy = (await fresh.sql("SELECT MAX(seq) AS seq FROM audit_entries"))[0].seq;
  verification = await verify();
  assert.equal(verification.intact, false);
  assert.equal(verification.fault, "copied_entry", JSON.stringify(verification));
  assert.equal(verification.first_bad_seq, copy);
  assert.match(verification.problem, new RegExp(`copy of entry ${granted}`));

  const refused = await freshCall("POST", "/api/audit/checkpoints", { token: freshToken });
  assertRefusal(assert, refused, 409, "audit_chain_broken");
  await fresh.scheduled();
  assert.equal((await verify()).checkpoint.number, 1, "nothing was signed");
  const feed = await freshCall("GET", "/api/me/notifications", { token: freshToken });
  const alarms = feed.body.notifications.filter((item) => item.kind === "audit_chain_broken");
  assert.equal(alarms.length, 1, feed.text);
  assert.match(alarms[0].detail, new RegExp(`entry ${copy}`));
});

test("cutting the newest entries is found even when R2's checkpoints are deleted with them", async () => {
  const fresh = await startNode();
  nodes.push(fresh);
  const { call: freshCall, token: freshToken } = await setUp(fresh);
  await freshCall("POST", "/api/teams", { token: freshToken, body: { name: "Kept" } });
  const first = await freshCall("POST", "/api/audit/checkpoints", { token: freshToken });
  assert.equal(first.status, 201, first.text);
  await freshCall("POST", "/api/teams", { token: freshToken, body: { name: "To be cut" } });
  const second = await freshCall("POST", "/api/audit/checkpoints", { token: freshToken });
  assert.equal(second.body.number, 2);

  await fresh.sql(`DELETE FROM audit_entries WHERE seq > ${first.body.seq}`);
  for (const key of ["audit/checkpoints/latest.json", `audit/checkpoints/${String(second.body.seq).padStart(12, "0")}.json`]) {
    await fresh.deleteObject(key);
  }
  const verification = (await freshCall("GET", "/api/audit/verify", { token: freshToken })).body;
  assert.equal(verification.intact, false, JSON.stringify(verification));
  assert.equal(verification.fault, "rolled_back_against_d1");
  assert.equal(verification.database_checkpoint.number, 2);
});

test("each checkpoint is posted to the witness an administrator sets, signed with the secret it is shown", async () => {
  const fresh = await startNode();
  nodes.push(fresh);
  const { call: freshCall, token: freshToken } = await setUp(fresh);
  const receiver = await startReceiver();
  const { received } = receiver;
  try {
    const hook = `${receiver.url}/witness`;
    assertRefusal(assert, await freshCall("PUT", "/api/audit/witness", { token: freshToken, body: {} }), 400, "invalid_body");
    const set = await freshCall("PUT", "/api/audit/witness", { token: freshToken, body: { webhook_url: hook } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.witness, hook);
    const secret = set.body.signing_secret;

    const made = await freshCall("POST", "/api/audit/checkpoints", { token: freshToken });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.witness, hook);
    assert.equal(received.length, 1);
    const [posted] = received;
    assert.equal(posted.headers["mailroom-delivery"], `audit-checkpoint-${made.body.number}`);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(posted.headers["mailroom-signature"]);
    assert.equal(createHmac("sha256", secret).update(`${t}.${posted.body}`).digest("hex"), v1, "signed with the secret shown");
    assert.deepEqual(JSON.parse(posted.body).checkpoint, made.body);

    const shown = await freshCall("GET", "/api/audit/witness", { token: freshToken });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.witness, hook);
    assert.equal(shown.body.latest_checkpoint.number, made.body.number);
    assert.equal(typeof shown.body.delivered_at, "string", shown.text);

    await freshCall("POST", "/api/teams", { token: freshToken, body: { name: "Witnessed" } });
    await fresh.scheduled();
    assert.equal(received.length, 2, "the scheduled checkpoint too");
    assert.equal(JSON.parse(received[1].body).checkpoint.number, made.body.number + 1);

    const removed = await freshCall("DELETE", "/api/audit/witness", { token: freshToken });
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.witness, undefined);
    const entries = await freshCall("GET", "/api/audit?limit=5", { token: freshToken });
    assert.deepEqual(
      entries.body.entries.filter((entry) => entry.action.endsWith("_audit_witness")).map((entry) => [entry.action, entry.outcome]),
      [["remove_audit_witness", "ok"], ["set_audit_witness", "ok"], ["set_audit_witness", "refused"]],
      "setting and removing the witness are audited acts",
    );
  } finally {
    await receiver.close();
  }
});

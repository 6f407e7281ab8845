// The node under load and under a flood, on real workerd and D1: a burst of
// inbound mail while people write is stored whole, and refused attempts made
// without a credential write nothing to the audit chain, while an
// administrator's writes go through at their first attempt.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./harness.mjs";
import { messagesIn, startDesk } from "./fixtures.mjs";

/** How many messages the burst delivers, and how many at a time (`BURST=3000,16`). */
const [MESSAGES, AT_ONCE] = (process.env.BURST ?? "3000,16").split(",").map(Number);

let node, call, token, mailbox;

before(async () => {
  let desk, admin;
  ({ node, call, token, desk, admin } = await startDesk());
  mailbox = await desk.mailbox("support@mailroom.test", "Support");
  // The administrator lists the mailbox's messages to count them.
  await desk.grant(admin.id, ["mailbox.metadata.read"], mailbox.id);
});
after(() => node?.stop());

const count = async (sql) => Number(Object.values((await node.sql(sql))[0])[0]);

test(`a burst of ${MESSAGES} messages, ${AT_ONCE} at a time while people write, is stored whole`, async () => {
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "latin1");
  const rejections = [];
  let next = 0;
  async function deliverer() {
    for (let index = next++; index < MESSAGES; index = next++) {
      const message = raw.replace("invoice-question-1", `burst-${index}`);
      const rejected = await node.deliver("ana@customer.example", "support@mailroom.test", message);
      if (rejected !== null) rejections.push(rejected);
    }
  }
  let writing = true;
  let writes = 0;
  async function writer() {
    while (writing) {
      const created = await call("POST", "/api/teams", { token, body: { name: `Writing ${writes++}` } });
      assert.equal(created.status, 201, created.text);
    }
  }
  const writers = [writer(), writer()];
  await Promise.all(Array.from({ length: AT_ONCE }, deliverer));
  writing = false;
  await Promise.all(writers);
  assert.deepEqual(rejections, [], "nothing is refused for contention");
  assert.equal(await messagesIn(call, token, mailbox.id), MESSAGES);
  assert.ok(writes > 0, "people wrote meanwhile");
  // The documented rejections are still rejections, read from the handler.
  assert.match(await node.deliver("ana@customer.example", "nobody@mailroom.test", raw), /^550 5\.1\.1/);
});

test("a flood of refused attempts without a credential writes no entry, and an administrator is never busy", async () => {
  const entries = await count("SELECT COUNT(*) FROM audit_entries");
  // Twenty at a time: as hard as one client on one connection pool pushes.
  const attempts = Array.from({ length: 400 }, (_, index) =>
    index % 2 === 0
      ? () => call("POST", "/api/agents/pair", { body: { code: `mr_pair_${index}` } })
      : () => call("POST", "/api/sessions", { body: { email: "ada@example.com", password: `guess ${index}` } }),
  );
  const refused = [];
  async function flooder() {
    for (let attempt = attempts.shift(); attempt; attempt = attempts.shift()) refused.push(await attempt());
  }
  const writes = Array.from({ length: 10 }, (_, index) => call("POST", "/api/teams", { token, body: { name: `During ${index}` } }));
  const [, written] = await Promise.all([Promise.all(Array.from({ length: 20 }, flooder)), Promise.all(writes)]);
  for (const response of refused) assert.ok([401, 429].includes(response.status), response.text);
  for (const response of written) {
    assert.equal(response.status, 201, response.text);
    assert.equal(response.headers.get("x-mailroom-commit-attempts"), "1");
  }
  assert.equal(await count("SELECT COUNT(*) FROM audit_entries"), entries + 10, "only the administrator's writes");
  assert.equal(await count("SELECT SUM(attempts) FROM audit_attempts"), 400, "every refused attempt is counted");
  assert.ok((await count("SELECT COUNT(*) FROM audit_attempts")) <= 4, "a row per window, action and code");
});

// Webhooks on real workerd: an administrator subscribes an endpoint on this
// machine to a mailbox, and a sponsor one to their agent's inbox; mail received
// through the email handler and a message sent to the agent are posted after the
// answer, each verified with the official Standard Webhooks library; a receiver
// that fails is tried again by the per-minute cron with the same message id;
// an address inside a network is refused naming its field.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { assertRefusal } from "./harness.mjs";
import { startReceiver } from "./fixtures.mjs";
import { startAgentNetwork } from "./agent-network.mjs";

const SUPPORT = "support@mailroom.test";

let node, call, token, ben, benToken, messenger, mailbox;

before(async () => {
  ({ node, call, token, ben, benToken, messenger } = await startAgentNetwork());
  const created = await call("POST", "/api/mailboxes", { token, body: { address: SUPPORT, display_name: "Support" } });
  assert.equal(created.status, 201, created.text);
  mailbox = created.body;
});
after(() => node?.stop());

function message(id, subject) {
  return (
    `From: Ana Lima <ana@customer.example>\r\nTo: Support <${SUPPORT}>\r\nSubject: ${subject}\r\n` +
    `Message-ID: <${id}>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello from Ana.\r\n`
  );
}

/** Waits (a few seconds at most) until `received` holds `count` requests. */
async function receivedAtLeast(received, count) {
  for (let waited = 0; received.length < count && waited < 10_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(received.length >= count, `expected ${count} deliveries, got ${received.length}`);
}

/**
 * The webhook `webhookId` as `path` lists it once `settled` holds of its
 * deliveries: the node records how a post went in a batch after the receiver
 * answered, so a receiver can hold the post a moment before the node's record
 * of it says so. At most five seconds.
 */
async function listedOnce(path, webhookId, settled) {
  let shown;
  for (let waited = 0; waited < 5_000; waited += 100) {
    shown = (await call("GET", path, { token })).body.webhooks.find((each) => each.id === webhookId);
    if (settled(shown.deliveries)) return shown;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return shown;
}

/** The payload of a delivery, verified by the official library (it throws on a bad signature or an old timestamp). */
function verified(secret, delivery) {
  return new Webhook(secret).verify(delivery.body, delivery.headers);
}

test("mail received is posted to a mailbox's webhook, signed as Standard Webhooks verify, with ids and never content", async () => {
  const receiver = await startReceiver();
  try {
    const created = await call("POST", `/api/mailboxes/${mailbox.id}/webhooks`, {
      token,
      body: { url: `${receiver.url}/mailroom`, kinds: ["receive_mail"] },
    });
    assert.equal(created.status, 201, created.text);
    const { secret, webhook } = created.body;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, message("hook-1@customer.example", "Order 12")), null);
    await receivedAtLeast(receiver.received, 1);
    const [delivery] = receiver.received;
    assert.equal(delivery.path, "/mailroom");
    const payload = verified(secret, delivery);
    assert.equal(payload.type, "receive_mail");
    assert.equal(payload.data.topic, `mailbox:${mailbox.id}`);
    assert.equal(payload.data.webhook_id, webhook.id);
    assert.match(payload.data.object, /^rcp_/);
    assert.ok(!delivery.body.includes("Ana") && !delivery.body.includes("Order 12"), delivery.body);
    // Someone holding another secret cannot pass it off.
    assert.throws(() => verified(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, delivery));
    const path = `/api/mailboxes/${mailbox.id}/webhooks`;
    const shown = await listedOnce(path, webhook.id, (deliveries) => deliveries[0]?.state !== "pending");
    assert.equal(shown.deliveries[0].state, "delivered");
    assert.equal(shown.deliveries[0].id, delivery.headers["webhook-id"]);
    const listed = await call("GET", path, { token });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(!listed.text.includes(secret), "the secret is shown once");
    const removed = await call("DELETE", `/api/mailboxes/${mailbox.id}/webhooks/${webhook.id}`, { token });
    assert.equal(removed.status, 200, removed.text);
  } finally {
    await receiver.close();
  }
});

test("a receiver that fails is tried again by the per-minute cron, with the same message id", async () => {
  let answers = 0;
  const receiver = await startReceiver((response) => {
    answers += 1;
    response.writeHead(answers === 1 ? 503 : 204).end();
  });
  try {
    const created = await call("POST", `/api/mailboxes/${mailbox.id}/webhooks`, { token, body: { url: `${receiver.url}/flaky` } });
    assert.equal(created.status, 201, created.text);
    const { secret, webhook } = created.body;
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, message("hook-2@customer.example", "Order 13")), null);
    await receivedAtLeast(receiver.received, 1);
    const path = `/api/mailboxes/${mailbox.id}/webhooks`;
    const shown = await listedOnce(path, webhook.id, (deliveries) => deliveries[0]?.attempts === 1);
    const first = shown.deliveries.find((delivery) => delivery.kind === "receive_mail");
    assert.deepEqual([first.state, first.attempts, first.last_status], ["pending", 1, 503]);
    assert.ok(Date.parse(first.next_attempt_at) > Date.now(), "it waits before trying again");
    // A minute passes: the wait is over.
    await node.sql(`UPDATE webhook_deliveries SET next_attempt_at = 0 WHERE webhook_id = '${webhook.id}'`);
    await node.scheduled("* * * * *");
    await receivedAtLeast(receiver.received, 2);
    const [failed, landed] = receiver.received;
    assert.equal(landed.headers["webhook-id"], failed.headers["webhook-id"], "a repeat keeps its id");
    assert.equal(verified(secret, landed).type, "receive_mail");
    const after = await listedOnce(path, webhook.id, (deliveries) => deliveries.find((delivery) => delivery.id === first.id)?.attempts === 2);
    const settled = after.deliveries.find((delivery) => delivery.id === first.id);
    assert.deepEqual([settled.state, settled.attempts], ["delivered", 2]);
    await call("DELETE", `${path}/${webhook.id}`, { token });
  } finally {
    await receiver.close();
  }
});

test("a sponsor's webhook wakes for a message waiting in their agent's inbox", async () => {
  const receiver = await startReceiver();
  try {
    const agent = await messenger("Hooked");
    const asker = await messenger("Asker");
    const created = await call("POST", `/api/agents/${agent.id}/webhooks`, { token: benToken, body: { url: `${receiver.url}/agent` } });
    assert.equal(created.status, 201, created.text);
    // The agent itself may not subscribe: its owner's plane is for people.
    const refused = await call("POST", `/api/agents/${agent.id}/webhooks`, { token: agent.credential, body: { url: `${receiver.url}/agent` } });
    assert.equal(refused.status, 403, refused.text);
    const sent = await call("POST", "/api/agent-messages", {
      token: asker.credential,
      body: { recipient: agent.id, kind: "request", content: { text: "Are you there?" }, idempotency_key: randomUUID() },
    });
    assert.equal(sent.status, 202, sent.text);
    await receivedAtLeast(receiver.received, 1);
    const payload = verified(created.body.secret, receiver.received[0]);
    assert.deepEqual([payload.type, payload.data.topic, payload.data.object], ["send_agent_message", `agent:${agent.id}`, sent.body.id]);
    assert.ok(!receiver.received[0].body.includes("Are you there"), "never the message's content");
    assert.equal(ben.id, created.body.webhook.created_by);
  } finally {
    await receiver.close();
  }
});

test("an address inside a network is refused naming its field", async () => {
  for (const url of ["https://10.1.2.3/hook", "https://169.254.169.254/latest", "https://localhost.localdomain/x", "ftp://hooks.example.com/"]) {
    const refused = await call("POST", `/api/mailboxes/${mailbox.id}/webhooks`, { token, body: { url } });
    assertRefusal(assert, refused, 400, "invalid_body");
    assert.match(refused.body.error.message, /`url`/, url);
  }
  const badKind = await call("POST", `/api/mailboxes/${mailbox.id}/webhooks`, { token, body: { url: "https://hooks.example.com/x", kinds: ["DROP TABLE"] } });
  assertRefusal(assert, badKind, 400, "invalid_body");
  assert.match(badKind.body.error.message, /`kinds\[0\]`/);
});

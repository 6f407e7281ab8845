// Agents across organisations (issue 33, decision 0050) on real workerd: two
// nodes, each with its own D1, whose administrators connect them with peer
// credentials; an agent on A asks an agent on B and the answer comes back;
// B's pause holds A's message and A's revocation stops it; a foreign A2A
// server built with the official @a2a-js/sdk answers A's outbox; and remote
// faults are recorded for the owner, nothing lost and nothing sent twice.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { startAgentNetwork } from "./agent-network.mjs";
import { ok } from "./fixtures.mjs";
import { startForeignAgent } from "./foreign-a2a.mjs";
import { startFaultyAgent, PRIVATE_ENDPOINT } from "./faulty-a2a.mjs";

let a, b;
const closers = [];

before(async () => {
  [a, b] = await Promise.all([startAgentNetwork(), startAgentNetwork()]);
});
after(async () => {
  for (const close of closers) await close();
  await Promise.all([a?.node.stop(), b?.node.stop()]);
});

const cardOf = (side, agentId) => `${side.node.url}/a2a/${agentId}/.well-known/agent-card.json`;

/** A connects B and B connects A, each giving the other the credential it issued. */
async function connect() {
  const issued = async (side, name) =>
    ok(side.call("POST", "/api/peers", { token: side.token, body: { domain: "127.0.0.1", name } }), 201);
  const [atA, atB] = await Promise.all([issued(a, "Node B"), issued(b, "Node A")]);
  assert.match(atA.credential, /^mr_per_/);
  // Each node presents the credential the other issued to it.
  await ok(a.call("PATCH", `/api/peers/${atA.peer.id}`, { token: a.token, body: { outbound_credential: atB.credential } }));
  await ok(b.call("PATCH", `/api/peers/${atB.peer.id}`, { token: b.token, body: { outbound_credential: atA.credential } }));
  return { atA, atB };
}

/** A new agent of Ben's on `side`, with `policy` set by Ben. */
async function agentOn(side, name, policy) {
  const agent = await side.messenger(name);
  if (policy) await ok(side.call("PATCH", `/api/agents/${agent.id}/messaging`, { token: side.benToken, body: policy }));
  return agent;
}

async function send(side, agent, recipient, content, kind = "request") {
  return ok(side.call("POST", "/api/agent-messages", {
    token: agent.credential,
    body: { recipient, kind, content, idempotency_key: randomUUID() },
  }), 202);
}

/** What `agent` may claim now. */
const inbox = async (side, agent) => (await ok(side.call("GET", "/api/agent-inbox", { token: agent.credential }))).messages;

/** Polls `read` until `done(value)`, within `seconds`. */
async function until(read, done, seconds = 20, what = "the condition") {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what} did not hold within ${seconds} s: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const deliveries = async (side, agent) =>
  (await ok(side.call("GET", `/api/agents/${agent.id}/remote-deliveries`, { token: side.benToken }))).deliveries;

const deliveryOf = async (side, agent, messageId) => (await deliveries(side, agent)).find((one) => one.message_id === messageId);

const auditOf = async (side) => (await ok(side.call("GET", "/api/audit?limit=100", { token: side.token }))).entries;

test("an agent on A asks an agent on B, B's agent answers, and the answer reaches A's agent; each node audits the other party, never the content", async () => {
  await connect();
  const bob = await agentOn(b, "Bob", { listed_on_node_card: true });
  const alice = await agentOn(a, "Alice", { remote_recipients: ["127.0.0.1"] });

  const sent = await send(a, alice, cardOf(b, bob.id), "37 + 58?");
  assert.equal(sent.state, "queued");
  assert.equal(sent.remote.card_url, cardOf(b, bob.id));
  assert.equal(sent.remote.domain, "127.0.0.1");

  // Delivered by A's outbox after the answer: Bob finds it, from Alice, marked external.
  const [waiting] = await until(() => inbox(b, bob), (messages) => messages.length === 1, 20, "Bob's inbox holding A's message");
  assert.match(waiting.sender, /^rag_/);
  assert.equal(waiting.remote.card_url, cardOf(a, alice.id));
  assert.deepEqual(waiting.content, { parts: [{ text: "37 + 58?" }] });
  assert.match(waiting.content_notice, /outside this organisation/);

  const claimed = await ok(b.call("POST", "/api/agent-inbox/leases", { token: bob.credential, body: { max: 1 } }));
  const lease = claimed.messages[0];
  await ok(b.call("POST", `/api/agent-inbox/${lease.id}/reply`, { token: bob.credential, body: { fencing_token: lease.fencing_token, content: "95" } }));

  // B pushes the task's change to A (the push config A's send carried), and
  // A asks after it at once: no cron runs here.
  const message = await until(
    () => ok(a.call("GET", `/api/agent-messages/${sent.id}`, { token: alice.credential })),
    (found) => found.state === "answered",
    20,
    "Alice's message answered",
  );
  assert.deepEqual(message.reply.content, { parts: [{ text: "95" }] });
  assert.match(message.content_notice, /outside this organisation/);
  const [reply] = await until(() => inbox(a, alice), (messages) => messages.length === 1, 10, "the reply in Alice's inbox");
  assert.equal(reply.in_reply_to, sent.id);
  assert.equal(reply.sender, sent.recipient);

  // Alice goes on in the same conversation: at B it goes on in Bob's.
  const next = await ok(a.call("POST", "/api/agent-messages", {
    token: alice.credential,
    body: { recipient: cardOf(b, bob.id), kind: "request", content: "and times 2?", idempotency_key: randomUUID(), conversation_id: sent.conversation_id },
  }), 202);
  assert.equal(next.conversation_id, sent.conversation_id);
  const [followUp] = await until(() => inbox(b, bob), (messages) => messages.length === 1, 20, "Bob's inbox holding the next message");
  assert.equal(followUp.conversation_id, waiting.conversation_id, "the same conversation on B");
  assert.deepEqual(followUp.content, { parts: [{ text: "and times 2?" }] });

  const delivery = await deliveryOf(a, alice, sent.id);
  assert.equal(delivery.state, "done");
  assert.deepEqual(delivery.attempts.map((attempt) => [attempt.step, attempt.outcome]), [["send", "ok"], ["poll", "ok"]]);

  // Each node names the other party, and neither writes what was said.
  const atA = await auditOf(a);
  const sentEntry = atA.find((entry) => entry.action === "send_agent_message" && entry.object === sent.id);
  assert.equal(sentEntry.detail.remote.card_url, cardOf(b, bob.id));
  const ended = atA.find((entry) => entry.action === "deliver_remote_message" && entry.object === sent.id);
  assert.equal(ended.outcome, "ok");
  assert.equal(ended.detail.remote.domain, "127.0.0.1");
  const atB = await auditOf(b);
  const received = atB.find((entry) => entry.action === "send_agent_message" && entry.object === waiting.id);
  assert.match(received.actor, /^per_/);
  assert.equal(received.detail.remote_sender.card_url, cardOf(a, alice.id));
  for (const entry of [...atA, ...atB]) {
    const text = JSON.stringify(entry);
    assert.ok(!text.includes("37 + 58?") && !text.includes('"95"'), `the audit holds no content: ${text}`);
  }
});

test("B pausing its agent holds A's message, and A revoking its agent stops the delivery for good", async () => {
  const bob = await agentOn(b, "Paused Bob", { listed_on_node_card: true });
  const alice = await agentOn(a, "Revoked Alice", { remote_recipients: [cardOf(b, bob.id)] });
  await ok(b.call("POST", `/api/agents/${bob.id}/pause`, { token: b.benToken }));

  const sent = await send(a, alice, cardOf(b, bob.id), "while paused");
  // Accepted by B as a task, and held there: B's owner sees why.
  const accepted = await until(() => deliveryOf(a, alice, sent.id), (found) => found?.state === "sent", 20, "B accepting the task");
  assert.ok(accepted.remote_task_id);
  const held = (await ok(b.call("GET", `/api/agents/${bob.id}/inbox`, { token: b.benToken }))).messages;
  assert.equal(held.length, 1);
  assert.equal(held[0].state, "held");
  assert.equal(held[0].held_because, "paused");

  await ok(a.call("POST", `/api/agents/${alice.id}/revoke`, { token: a.token }));
  await a.node.scheduled("* * * * *");
  const stopped = await until(() => deliveryOf(a, alice, sent.id), (found) => found?.state === "dead", 20, "the delivery stopped");
  assert.match(stopped.last_error, /revoked/);
  const attempts = stopped.attempts.length;
  const message = await ok(a.call("GET", `/api/agent-messages/${sent.id}`, { token: a.benToken }));
  assert.equal(message.state, "failed");
  // Nothing more is tried for it.
  await a.node.scheduled("* * * * *");
  assert.equal((await deliveryOf(a, alice, sent.id)).attempts.length, attempts);
});

test("a peer's credential opens only messaging, speaks only for its own domain, and a disconnected peer's opens nothing", async () => {
  const created = await ok(b.call("POST", "/api/peers", { token: b.token, body: { domain: "partner.example", name: "Partner" } }), 201);
  const bob = await agentOn(b, "Guarded Bob", { listed_on_node_card: true });
  const call = (path, init = {}) => fetch(`${b.node.url}${path}`, { ...init, headers: { authorization: `Bearer ${created.credential}`, "content-type": "application/json", ...init.headers } });
  // Not a REST credential for anything else.
  assert.equal((await call("/api/mailboxes")).status, 403);
  // Its agents are on its own domain: it cannot speak for another organisation's.
  const rpc = (sender) => call(`/a2a/${bob.id}`, {
    method: "POST",
    headers: { "a2a-version": "1.0", "mailroom-sender": sender },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } } }),
  });
  const outside = await rpc("https://elsewhere.example/a2a/agt_1/.well-known/agent-card.json");
  assert.equal(outside.status, 403);
  assert.equal((await outside.json()).error.code, "peer_sender_outside_domain");
  await ok(b.call("DELETE", `/api/peers/${created.peer.id}`, { token: b.token }));
  const gone = await rpc("https://agents.partner.example/a2a/agt_1/.well-known/agent-card.json");
  assert.equal(gone.status, 401);
  assert.equal((await gone.json()).error.code, "peer_disconnected");
});

test("an agent reaches only what its owner's outbound policy names, and is told which rule refused it", async () => {
  const alice = await agentOn(a, "Fenced Alice");
  const refused = await a.call("POST", "/api/agent-messages", {
    token: alice.credential,
    body: { recipient: "https://agents.example.org/.well-known/agent-card.json", kind: "request", content: "hi", idempotency_key: "k" },
  });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.code, "remote_not_allowed");
  assert.match(refused.body.error.reason, /remote_recipients/);
  const inward = await a.call("POST", "/api/agent-messages", {
    token: alice.credential,
    body: { recipient: "https://10.0.0.1/.well-known/agent-card.json", kind: "request", content: "hi", idempotency_key: "k2" },
  });
  assert.equal(inward.status, 400);
  assert.match(inward.body.error.message, /`recipient`/);
});

for (const version of ["1.0", "0.3"]) {
  test(`A's outbox asks a foreign A2A ${version} server built with @a2a-js/sdk, once, and its answer comes back as the reply`, async () => {
    const foreign = await startForeignAgent({ version, answer: (text) => `echo: ${text}` });
    closers.push(() => foreign.close());
    const alice = await agentOn(a, `Alice ${version}`, { remote_recipients: [foreign.cardUrl] });
    const sent = await send(a, alice, foreign.cardUrl, "hello");
    await until(() => deliveryOf(a, alice, sent.id), (found) => found?.state !== "pending", 20, "the foreign server accepting it");
    await a.node.scheduled("* * * * *");
    const message = await until(
      () => ok(a.call("GET", `/api/agent-messages/${sent.id}`, { token: alice.credential })),
      (found) => found.state === "answered",
      20,
      "the foreign answer",
    );
    assert.deepEqual(message.reply.content, { parts: [{ text: "echo: hello" }] });
    assert.deepEqual(foreign.received.map((one) => one.messageId), [sent.id], "sent once, under the message's own id");
  });
}

test("a foreign server that pushes is given the node's push address and token, and its push brings the answer back without waiting for the minute", async () => {
  const foreign = await startForeignAgent({ push: true });
  closers.push(() => foreign.close());
  const alice = await agentOn(a, "Pushed Alice", { remote_recipients: [foreign.cardUrl] });
  const sent = await send(a, alice, foreign.cardUrl, "push it");
  await until(() => deliveryOf(a, alice, sent.id), (found) => found && found.state !== "pending", 20, "the task accepted");
  const [sending] = foreign.requests.filter((request) => request.body?.method === "SendMessage");
  const config = sending.body.params.configuration.taskPushNotificationConfig;
  assert.equal(config.url, `${a.node.url}/a2a/outbox/${sent.id}`);
  assert.ok(config.token);
  // A push that does not carry the token is refused.
  const forged = await fetch(config.url, { method: "POST", headers: { "content-type": "application/json", "x-a2a-notification-token": "forged" }, body: "{}" });
  assert.equal(forged.status, 401);
  // The agent elsewhere answered the send with its task working, finished
  // it, and its SDK pushed: no cron runs here.
  const message = await until(
    () => ok(a.call("GET", `/api/agent-messages/${sent.id}`, { token: alice.credential })),
    (found) => found.state === "answered",
    30,
    "the answer brought back by the push",
  );
  assert.deepEqual(message.reply.content, { parts: [{ text: "echo: push it" }] });
  const steps = (await deliveryOf(a, alice, sent.id)).attempts.map((attempt) => attempt.step);
  assert.deepEqual(steps, ["send", "poll"], "accepted working, then asked after because of the push");
});

test("remote faults are recorded for the owner with what happened, and nothing is sent twice or followed inward", async () => {
  const faulty = await startFaultyAgent("down");
  closers.push(() => faulty.close());
  // A card that names an endpoint inside a network.
  const inwardCard = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      name: "Inward", supportedInterfaces: [{ url: PRIVATE_ENDPOINT, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    }));
  });
  await new Promise((resolve) => inwardCard.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => inwardCard.close(resolve)));
  const inwardUrl = `http://127.0.0.1:${inwardCard.address().port}/.well-known/agent-card.json`;
  const alice = await agentOn(a, "Faulty Alice", { remote_recipients: ["127.0.0.1"], maximum_attempts: 5 });

  const cases = [
    ["down", /could not be reached|did not answer/],
    ["garbage", /not JSON/],
    ["wrong-shape", /neither a task nor a message/],
    ["redirect-private", /redirect to http:\/\/10\.0\.0\.1\/a2a, which the node does not follow/],
  ];
  for (const [mode, words] of cases) {
    faulty.setMode(mode);
    const before = faulty.requests.filter((request) => request.method === "POST").length;
    const sent = await send(a, alice, faulty.cardUrl, `in ${mode}`);
    const delivery = await until(() => deliveryOf(a, alice, sent.id), (found) => found?.attempts.length > 0, 20, `the ${mode} attempt`);
    assert.equal(delivery.state, "pending", `${mode}: kept to be tried again`);
    assert.equal(delivery.attempts[0].outcome, "retrying");
    assert.match(delivery.attempts[0].detail, words, mode);
    assert.ok(delivery.next_attempt_at);
    assert.equal(faulty.requests.filter((request) => request.method === "POST").length - before, 1, `${mode}: one request`);
    const message = await ok(a.call("GET", `/api/agent-messages/${sent.id}`, { token: alice.credential }));
    assert.equal(message.state, "queued", `${mode}: the message is kept`);
  }

  faulty.setMode("redirect-card");
  const redirected = await send(a, alice, `${faulty.url}/.well-known/agent-card.json?fresh=${randomUUID()}`, "card moved inward");
  const [cardAttempt] = (await until(() => deliveryOf(a, alice, redirected.id), (found) => found?.attempts.length > 0, 20, "the card read")).attempts;
  assert.equal(cardAttempt.step, "card");
  assert.match(cardAttempt.detail, /redirect to http:\/\/169\.254\.169\.254/);

  const inward = await send(a, alice, inwardUrl, "to an inward endpoint");
  const dead = await until(() => deliveryOf(a, alice, inward.id), (found) => found?.state === "dead", 20, "the inward endpoint refused");
  assert.match(dead.last_error, /may not be reached/);
  const message = await ok(a.call("GET", `/api/agent-messages/${inward.id}`, { token: alice.credential }));
  assert.equal(message.state, "failed");
});

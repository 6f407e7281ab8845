// Agent messaging (SPEC §10, issue 13) on real workerd with a local D1, in real
// time: two agents exchanging a request and its reply; sends racing under one
// idempotency key all answering the original; receivers that claim and
// die, race each other, and crash at random while nothing is lost, nothing is
// finished twice and nothing is delivered after it was acknowledged; policy at
// delivery; expiry swept by the cron trigger; the feature switched off; and the
// A2A gateway driven by the official @a2a-js/sdk client in A2A 1.0 and 0.3.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { TaskNotFoundError, TaskNotCancelableError } from "@a2a-js/sdk/errors";
import * as Legacy from "a2a-sdk-03/client";
import { startNode, setUp, assertRefusal, checkedFetch } from "./harness.mjs";
import { startAgentNetwork, bearerFetch, a2aFactory } from "./agent-network.mjs";

const EVERY_MINUTE = "* * * * *";
const sleep = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

let node, call, ben, benToken, messenger;

before(async () => {
  ({ node, call, ben, benToken, messenger } = await startAgentNetwork());
});
after(() => node?.stop());

async function send(from, to, kind, content, extra = {}) {
  const sent = await call("POST", "/api/agent-messages", {
    token: from.credential ?? from,
    body: { recipient: to.id, kind, content, idempotency_key: randomUUID(), ...extra },
  });
  assert.equal(sent.status, 202, sent.text);
  return sent.body;
}

async function claim(agent, max = 1, leaseSeconds) {
  const body = { max, ...(leaseSeconds ? { lease_seconds: leaseSeconds } : {}) };
  const claimed = await call("POST", "/api/agent-inbox/leases", { token: agent.credential, body });
  assert.equal(claimed.status, 200, claimed.text);
  return claimed.body.messages;
}

const finish = (agent, id, action, body) => call("POST", `/api/agent-inbox/${id}/${action}`, { token: agent.credential, body });
const seen = async (who, id) => (await call("GET", `/api/agent-messages/${id}`, { token: who.credential ?? who })).body;

test("two agents exchange a request and its reply, at least once, in one conversation", async () => {
  const asker = await messenger("Asker");
  const answerer = await messenger("Answerer");
  const request = await send(asker, answerer, "request", { text: "37 + 58?" });
  assert.equal(request.state, "queued");
  // Repeating the send with its key answers the original; another body is refused.
  const again = await call("POST", "/api/agent-messages", {
    token: asker.credential,
    body: { recipient: answerer.id, kind: "request", content: { text: "37 + 58?" }, idempotency_key: "fixed-key" },
  });
  const repeated = await call("POST", "/api/agent-messages", {
    token: asker.credential,
    body: { recipient: answerer.id, kind: "request", content: { text: "37 + 58?" }, idempotency_key: "fixed-key" },
  });
  assert.equal(repeated.body.id, again.body.id);
  assert.equal(repeated.body.deduplicated, true);
  const conflicting = await call("POST", "/api/agent-messages", {
    token: asker.credential,
    body: { recipient: answerer.id, kind: "event", content: {}, idempotency_key: "fixed-key" },
  });
  assertRefusal(assert, conflicting, 409, "idempotency_key_reused");

  const [leased] = await claim(answerer);
  assert.equal(leased.id, request.id, "oldest first");
  assert.equal(leased.sender, asker.id);
  const replied = await finish(answerer, leased.id, "reply", { fencing_token: leased.fencing_token, content: { sum: 95 } });
  assert.equal(replied.status, 200, replied.text);
  assert.deepEqual((await seen(asker, request.id)).reply.content, { sum: 95 });
  const [reply] = await claim(asker, 5);
  assert.equal(reply.kind, "reply");
  assert.equal(reply.in_reply_to, request.id);
  assert.equal(reply.conversation_id, request.conversation_id);
  assert.equal((await finish(asker, reply.id, "ack", { fencing_token: reply.fencing_token })).status, 200);
  const history = await call("GET", `/api/agent-conversations/${request.conversation_id}`, { token: benToken });
  assert.deepEqual(history.body.messages.map((message) => [message.kind, message.state]), [["request", "answered"], ["reply", "acknowledged"]]);
});

test("sends with one key at once over HTTP all answer the original; another body racing the key is refused naming it", async () => {
  const sender = await messenger("Retrying sender");
  const receiver = await messenger("Busy receiver");
  // Twelve at once, as a client retrying on its own timeout would. Whether
  // workerd interleaves them is its own scheduling, so this asserts only what
  // must hold under any interleaving; the racing path itself (every call reads
  // before any commits, the losers' commits fail and repeat) is forced and
  // counted natively, in tests/native/messaging.rs.
  const body = { recipient: receiver.id, kind: "request", content: { text: "37 + 58?", numbers: [37, 58] }, idempotency_key: `race-${randomUUID()}` };
  const answers = await Promise.all(Array.from({ length: 12 }, () => call("POST", "/api/agent-messages", { token: sender.credential, body })));
  for (const answer of answers) assert.equal(answer.status, 202, answer.text);
  const ids = new Set(answers.map((answer) => answer.body.id));
  assert.equal(ids.size, 1, `every one answers the original: ${[...ids]}`);
  assert.equal(answers.filter((answer) => answer.body.deduplicated === false).length, 1, "one stored it");
  // The same body, its keys in another order and the default expiry written out.
  const respelled = await call("POST", "/api/agent-messages", {
    token: sender.credential,
    body: { ...body, content: { numbers: [37, 58], text: "37 + 58?" }, expires_in_seconds: 4 * 24 * 3600 },
  });
  assert.equal(respelled.status, 202, respelled.text);
  assert.equal(respelled.body.id, answers[0].body.id);
  assert.equal((await claim(receiver, 10)).length, 1, "one message waited in the inbox");

  const key = `race-${randomUUID()}`;
  const mixed = await Promise.all(["first", "second", "first", "second"].map((text) =>
    call("POST", "/api/agent-messages", { token: sender.credential, body: { recipient: receiver.id, kind: "event", content: { text }, idempotency_key: key } }),
  ));
  const stored = mixed.filter((answer) => answer.status === 202);
  const refused = mixed.filter((answer) => answer.status === 409);
  assert.equal(stored.length + refused.length, 4, mixed.map((answer) => answer.text).join("\n"));
  assert.equal(new Set(stored.map((answer) => answer.body.id)).size, 1, "one message under the key");
  assert.equal(stored.length, 2, "the winner's body, sent twice, answers the winner");
  for (const answer of refused) {
    assertRefusal(assert, answer, 409, "idempotency_key_reused");
    assert.ok(answer.body.error.message.includes(stored[0].body.id), `the refusal names the original: ${answer.text}`);
  }
});

test("a receiver that claims and dies loses nothing: the lease lapses and the next claim wins with a larger token", async () => {
  const sender = await messenger("Sender");
  const receiver = await messenger("Receiver");
  const sent = await send(sender, receiver, "request", "work");
  const [first] = await claim(receiver, 1, 1);
  assert.equal(first.fencing_token, 1);
  // The first receiver dies holding the lease.
  await sleep(1_200);
  assert.equal((await seen(sender, sent.id)).state, "queued", "waiting again once the lease lapsed");
  const [second] = await claim(receiver, 1, 30);
  assert.equal(second.id, sent.id);
  assert.equal(second.fencing_token, 2);
  // The first comes back to life: its token is stale whatever it tries.
  assertRefusal(assert, await finish(receiver, sent.id, "reply", { fencing_token: 1, content: "late" }), 409, "stale_lease");
  assertRefusal(assert, await finish(receiver, sent.id, "ack", { fencing_token: 1 }), 409, "stale_lease");
  assert.equal((await finish(receiver, sent.id, "reply", { fencing_token: 2, content: "on time" })).status, 200);
  assert.equal((await seen(sender, sent.id)).reply.content, "on time");
});

test("receivers racing for one message: exactly one lease wins, and the loser's late reply is refused", async () => {
  const sender = await messenger("Racer sender");
  const receiver = await messenger("Racers");
  const sent = await send(sender, receiver, "request", "only once");
  const claims = await Promise.all(Array.from({ length: 8 }, () => claim(receiver, 1, 1)));
  const winners = claims.filter((messages) => messages.length === 1);
  assert.equal(winners.length, 1, JSON.stringify(claims));
  await sleep(1_200);
  const [next] = await claim(receiver, 1, 30);
  assert.equal(next.fencing_token, 2);
  // The first winner's lease lapsed and another holds it now.
  assertRefusal(assert, await finish(receiver, sent.id, "reply", { fencing_token: winners[0][0].fencing_token, content: 1 }), 409, "stale_lease");
  assert.equal((await finish(receiver, sent.id, "ack", { fencing_token: next.fencing_token })).status, 200);
});

test("N messages under random receiver crashes: every one acknowledged or visibly failed, none lost, none delivered after its ack", async () => {
  const sender = await messenger("Load sender");
  const receiver = await messenger("Crashy receiver");
  const policy = await call("PATCH", `/api/agents/${receiver.id}/messaging`, { token: benToken, body: { maximum_attempts: 3, rate_per_minute: 10_000 } });
  assert.equal(policy.status, 200, policy.text);
  const count = 24;
  const ids = new Set();
  for (let index = 0; index < count; index += 1) ids.add((await send(sender, receiver, "event", { index })).id);

  const acknowledged = new Map(); // id -> time of its successful ack
  const deliveredAfterAck = [];
  let random = 7;
  const chance = () => {
    random = (random * 48271) % 2147483647;
    return random / 2147483647;
  };
  const worker = async () => {
    for (let idle = 0; idle < 4; ) {
      const messages = await claim(receiver, 3, 1);
      if (messages.length === 0) {
        idle += 1;
        await sleep(400);
        continue;
      }
      idle = 0;
      for (const message of messages) {
        if (acknowledged.has(message.id)) deliveredAfterAck.push(message.id);
        if (chance() < 0.35) continue; // crashed: the lease lapses
        const acked = await finish(receiver, message.id, "ack", { fencing_token: message.fencing_token });
        if (acked.status === 200) {
          assert.ok(!acknowledged.has(message.id), `${message.id} acknowledged twice`);
          acknowledged.set(message.id, Date.now());
        } else {
          assertRefusal(assert, acked, 409, "stale_lease");
        }
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  await sleep(1_200);
  await node.scheduled(EVERY_MINUTE);

  const inbox = [];
  for (let cursor = null; ; ) {
    const page = await call("GET", `/api/agents/${receiver.id}/inbox?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { token: benToken });
    inbox.push(...page.body.messages);
    if (!page.body.next_cursor) break;
    cursor = page.body.next_cursor;
  }
  assert.equal(inbox.length, count, "none lost");
  const states = Object.groupBy(inbox, (message) => message.state);
  assert.deepEqual(Object.keys(states).sort(), Object.keys(states).filter((state) => ["acknowledged", "failed"].includes(state)).sort(), JSON.stringify(Object.keys(states)));
  assert.equal((states.acknowledged ?? []).length, acknowledged.size);
  for (const message of states.failed ?? []) assert.equal(message.attempts, 3, JSON.stringify(message));
  assert.deepEqual(deliveredAfterAck, [], "nothing is delivered after it was acknowledged");
  assert.ok(acknowledged.size > 0);
});

test("policy applies at delivery: a paused agent receives nothing, an allowlist refuses, and sender and owner see why", async () => {
  const sender = await messenger("Policy sender");
  const receiver = await messenger("Policy receiver");
  assert.equal((await call("POST", `/api/agents/${receiver.id}/pause`, { token: benToken })).status, 200);
  const held = await send(sender, receiver, "event", "while paused");
  const asSender = await seen(sender, held.id);
  assert.deepEqual([asSender.state, asSender.held_because], ["held", "paused"]);
  assert.equal((await call("POST", `/api/agents/${receiver.id}/resume`, { token: benToken })).status, 200);
  const allow = await call("PATCH", `/api/agents/${receiver.id}/messaging`, { token: benToken, body: { allowed_peers: [ben.id] } });
  assert.deepEqual(allow.body.allowed_peers, [ben.id]);
  assert.deepEqual(await claim(receiver, 5), [], "the waiting message is refused at delivery");
  const refused = await seen(sender, held.id);
  assert.equal(refused.state, "refused");
  const owner = await call("GET", `/api/agents/${receiver.id}/inbox`, { token: benToken });
  assert.equal(owner.body.messages[0].state, "refused");
  const fromBen = await send(benToken, receiver, "request", "allowed");
  const [delivered] = await claim(receiver, 5);
  assert.equal(delivered.id, fromBen.id);
  const connection = await call("GET", `/api/agents/${receiver.id}/messaging`, { token: benToken });
  assert.ok(connection.body.last_seen_at, "the owner sees when it last looked");
  assert.equal(connection.body.leased, 1);
});

test("the cron trigger sweeps what expired", async () => {
  const sender = await messenger("Expiry sender");
  const receiver = await messenger("Expiry receiver");
  const short = await send(sender, receiver, "event", "soon stale", { expires_in_seconds: 1 });
  await sleep(1_200);
  assert.equal((await seen(sender, short.id)).state, "expired", "judged against the clock at once");
  await node.scheduled(EVERY_MINUTE);
  const stored = await node.sql(`SELECT state FROM agent_messages WHERE id = '${short.id}'`);
  assert.deepEqual(stored.map((row) => row.state), ["expired"], "and recorded by the sweep");
  assert.deepEqual(await claim(receiver, 5), []);
});

test("an agent works its inbox over MCP with the same routes", async () => {
  const sender = await messenger("MCP sender");
  const receiver = await messenger("MCP receiver");
  await send(sender, receiver, "event", "over MCP");
  const rpc = async (method, params) => {
    const response = await checkedFetch(`${node.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${receiver.credential}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await response.json()).result;
  };
  const tools = (await rpc("tools/list", {})).tools.map((tool) => tool.name);
  assert.ok(tools.includes("claim_agent_messages") && tools.includes("ack_agent_message"), tools.join(", "));
  const claimed = await rpc("tools/call", { name: "claim_agent_messages", arguments: { max: 1 } });
  const [message] = claimed.structuredContent.messages;
  assert.equal(message.content, "over MCP");
  const acked = await rpc("tools/call", { name: "ack_agent_message", arguments: { agent_message_id: message.id, fencing_token: message.fencing_token } });
  assert.equal(acked.structuredContent.state, "acknowledged", JSON.stringify(acked));
});

const text = (value) => ({ content: { $case: "text", value } });

test("an A2A 1.0 client sends a task, the agent's reply becomes its artifact, and A2A's own errors answer", async () => {
  const caller = await messenger("A2A caller");
  const agent = await messenger("A2A agent");
  const cardUrl = `${node.url}/a2a/${agent.id}/.well-known/agent-card.json`;
  const client = await a2aFactory(caller.credential).createFromUrl(cardUrl, "");
  assert.equal(client.protocolVersion, "1.0");

  const task = await client.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [text("37 + 58?")] } });
  assert.equal(TaskState[task.status.state], "TASK_STATE_SUBMITTED");
  const [leased] = await claim(agent);
  assert.equal(leased.id, task.id);
  assert.equal(leased.sender, caller.id, "the sender is the bearer");
  assert.deepEqual(leased.content, { parts: [{ text: "37 + 58?" }] });
  assert.equal(TaskState[(await client.getTask({ id: task.id })).status.state], "TASK_STATE_WORKING");
  await finish(agent, leased.id, "reply", { fencing_token: leased.fencing_token, content: "95" });
  const done = await client.getTask({ id: task.id });
  assert.equal(TaskState[done.status.state], "TASK_STATE_COMPLETED");
  assert.equal(done.artifacts[0].parts[0].content.value, "95");

  const page = await client.listTasks({ pageSize: 10 });
  assert.deepEqual(page.tasks.map((listed) => listed.id), [task.id]);
  await assert.rejects(client.cancelTask({ id: task.id }), TaskNotCancelableError);
  await assert.rejects(client.getTask({ id: "amg_01M8MECXYJD8V8NXZMYC8H1337" }), TaskNotFoundError);
  const pending = await client.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [text("later")] } });
  assert.equal(TaskState[(await client.cancelTask({ id: pending.id })).status.state], "TASK_STATE_CANCELED");
  // Another caller sees none of these tasks.
  const other = await a2aFactory(benToken).createFromUrl(cardUrl, "");
  assert.deepEqual((await other.listTasks({ pageSize: 10 })).tasks, []);
  await assert.rejects(other.getTask({ id: task.id }), TaskNotFoundError);
  // Rejected and expired requests end REJECTED and FAILED.
  const rejected = await client.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [text("no")] } });
  const [toReject] = await claim(agent);
  await finish(agent, toReject.id, "reject", { fencing_token: toReject.fencing_token, reason: "Out of scope." });
  assert.equal(TaskState[(await client.getTask({ id: rejected.id })).status.state], "TASK_STATE_REJECTED");
});

test("A2A 0.3 clients: the 0.3.14 client and the 1.3 client in 0.3 mode", async () => {
  const caller = await messenger("Legacy caller");
  const agent = await messenger("Legacy agent");
  const cardUrl = `${node.url}/a2a/${agent.id}/.well-known/agent-card.json`;
  // A 0.3 client asks for 0.3's card: the query parameter, as it sends no header (decision 0031).
  const legacy = await new Legacy.ClientFactory(Legacy.ClientFactoryOptions.createFrom(Legacy.ClientFactoryOptions.default, {
    transports: [new Legacy.JsonRpcTransportFactory({ fetchImpl: bearerFetch(caller.credential) })],
  })).createFromUrl(`${cardUrl}?A2A-Version=0.3`, "");
  const task = await legacy.sendMessage({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hello" }] } });
  assert.equal(task.kind, "task");
  assert.equal(task.status.state, "submitted");
  const [leased] = await claim(agent);
  await finish(agent, leased.id, "reply", { fencing_token: leased.fencing_token, content: { greeting: "hi" } });
  const done = await legacy.getTask({ id: task.id });
  assert.equal(done.status.state, "completed");
  assert.deepEqual(done.artifacts[0].parts[0], { kind: "data", data: { greeting: "hi" } });
  const pending = await legacy.sendMessage({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "later" }] } });
  assert.equal((await legacy.cancelTask({ id: pending.id })).status.state, "canceled");

  // The 1.3 client speaks 0.3 to an interface that offers only 0.3.
  const card = await (await fetch(cardUrl)).json();
  card.supportedInterfaces = card.supportedInterfaces.filter((entry) => entry.protocolVersion.startsWith("0.3"));
  const compat = await a2aFactory(caller.credential, true).createFromAgentCard(card);
  assert.equal(compat.protocolVersion, "0.3");
  const compatTask = await compat.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [text("again")] } });
  assert.equal(TaskState[(await compat.getTask({ id: compatTask.id })).status.state], "TASK_STATE_SUBMITTED");
  await assert.rejects(compat.getTask({ id: "amg_01M8MECXYJD8V8NXZMYC8H1337" }), TaskNotFoundError);
});

test("switched off, every route of the feature refuses, nothing is stored, and no catalogue offers its tools", async () => {
  const off = await startNode();
  try {
    const offSetUp = await setUp(off);
    const agent = await offSetUp.call("POST", "/api/agents", {
      token: offSetUp.token,
      body: { name: "Idle", sponsor: offSetUp.admin.id, capabilities: ["agent.messaging"], mailboxes: [] },
    });
    const credential = agent.body.credential;
    const refused = await offSetUp.call("POST", "/api/agent-messages", {
      token: credential,
      body: { recipient: agent.body.agent.id, kind: "event", content: 1, idempotency_key: "k" },
    });
    assertRefusal(assert, refused, 404, "feature_disabled");
    assertRefusal(assert, await offSetUp.call("GET", `/a2a/${agent.body.agent.id}/.well-known/agent-card.json`), 404, "feature_disabled");
    assertRefusal(assert, await offSetUp.call("POST", "/api/agent-inbox/leases", { token: credential, body: {} }), 404, "feature_disabled");
    assert.deepEqual(await off.sql("SELECT COUNT(*) AS stored FROM agent_messages"), [{ stored: 0 }]);
    const listed = await offSetUp.call("POST", "/mcp", {
      token: offSetUp.token,
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    const names = listed.body.result.tools.map((tool) => tool.name);
    assert.ok(names.length > 0);
    assert.ok(!names.some((name) => /agent_message|inbox|agent_lease|agent_conversation/.test(name)), names.join(", "));
  } finally {
    await off.stop();
  }
});

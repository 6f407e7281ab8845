// Checks the two remote-agent fixtures themselves (foreign-a2a.mjs and
// faulty-a2a.mjs), without a node: the foreign agent driven by the official
// @a2a-js/sdk clients (1.0, and 0.3 through the 0.3 SDK), the faulty one by
// plain fetch. Not a *.test.mjs file, so the suite does not run it; run it
// after changing a fixture: node tests/e2e/foreign-a2a-fixtures.selfcheck.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import * as Legacy from "a2a-sdk-03/client";
import { startForeignAgent } from "./foreign-a2a.mjs";
import { startFaultyAgent, PRIVATE_ENDPOINT, METADATA_URL } from "./faulty-a2a.mjs";

const text = (value) => ({ content: { $case: "text", value } });
const sending = (value, messageId = randomUUID()) => ({ message: { messageId, role: Role.ROLE_USER, parts: [text(value)] } });
const artifactText = (task) => task.artifacts[0].parts[0].content.value;
const stateOf = (task) => TaskState[task.status.state];

/** A 1.0 client; with `credential`, every call carries it as a bearer token. */
function client(cardUrl, { credential, legacyCompat = false } = {}) {
  const fetchImpl = (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (credential) headers.set("authorization", `Bearer ${credential}`);
    return fetch(url, { ...init, headers });
  };
  const compatible = legacyCompat ? { legacyCompat: { enabled: true } } : {};
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, ...compatible })],
    cardResolver: new DefaultAgentCardResolver(compatible),
  }));
  return factory.createFromUrl(cardUrl, "");
}

const posts = (agent) => agent.requests.filter((request) => request.method === "POST");

test("the foreign agent is an SDK 1.0 agent: its card names its JSON-RPC endpoint, and a message gets one artifact", async (t) => {
  const agent = await startForeignAgent();
  t.after(() => agent.close());
  const card = await (await fetch(agent.cardUrl)).json();
  assert.deepEqual(card.supportedInterfaces, [{ url: agent.rpcUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }]);

  const task = await (await client(agent.cardUrl)).sendMessage(sending("hello"));
  assert.equal(stateOf(task), "TASK_STATE_COMPLETED");
  assert.equal(artifactText(task), "echo: hello");

  const [send] = posts(agent);
  assert.equal(send.path, "/a2a/jsonrpc");
  assert.equal(send.headers["a2a-version"], "1.0");
  assert.equal(send.body.method, "SendMessage");
  assert.equal(agent.received.length, 1);
  assert.equal(agent.received[0].messageId, send.body.params.message.messageId);
  assert.deepEqual(agent.received[0].parts, [{ text: "hello" }]);
});

test("the answer is the test's, a data part is read as its JSON, and a repeated messageId reaches the executor twice (the SDK does not deduplicate)", async (t) => {
  const agent = await startForeignAgent({ answer: async (said) => `42 (${said})` });
  t.after(() => agent.close());
  const a2a = await client(agent.cardUrl);
  const data = await a2a.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "data", value: { question: 6 } } }] } });
  assert.equal(artifactText(data), '42 ({"question":6})');

  const messageId = randomUUID();
  const first = await a2a.sendMessage(sending("again", messageId));
  const second = await a2a.sendMessage(sending("again", messageId));
  assert.notEqual(first.id, second.id, "two tasks for one messageId");
  assert.deepEqual(agent.received.filter((message) => message.messageId === messageId).map((message) => message.taskId), [first.id, second.id]);
});

test("a deferred task stays working, for a poller, until the test finishes it", async (t) => {
  const agent = await startForeignAgent({ deferred: true });
  t.after(() => agent.close());
  const a2a = await client(agent.cardUrl);
  const task = await a2a.sendMessage(sending("later"));
  assert.equal(stateOf(task), "TASK_STATE_WORKING");
  assert.equal(stateOf(await a2a.getTask({ id: task.id })), "TASK_STATE_WORKING");
  assert.deepEqual(await agent.finish(task.id), [task.id]);
  const done = await a2a.getTask({ id: task.id });
  assert.equal(stateOf(done), "TASK_STATE_COMPLETED");
  assert.equal(artifactText(done), "echo: later");
  await assert.rejects(agent.finish(task.id), /no deferred task/);

  const gets = posts(agent).filter((request) => request.body.method === "GetTask");
  assert.deepEqual(gets.map((request) => request.body.params.id), [task.id, task.id]);
});

test("with requireBearer the endpoint refuses a call without the token, and the card declares the scheme", async (t) => {
  const agent = await startForeignAgent({ requireBearer: "peer-secret" });
  t.after(() => agent.close());
  const card = await (await fetch(agent.cardUrl)).json();
  assert.deepEqual(card.securitySchemes, { bearer: { httpAuthSecurityScheme: { scheme: "Bearer", description: "", bearerFormat: "" } } });

  await assert.rejects((await client(agent.cardUrl)).sendMessage(sending("no token")), /401/);
  await assert.rejects((await client(agent.cardUrl, { credential: "wrong" })).sendMessage(sending("bad token")), /401/);
  assert.equal(agent.received.length, 0);
  const task = await (await client(agent.cardUrl, { credential: "peer-secret" })).sendMessage(sending("token"));
  assert.equal(artifactText(task), "echo: token");
  assert.equal(posts(agent).at(-1).headers.authorization, "Bearer peer-secret");
  assert.equal(posts(agent).length, 3, "refused requests are recorded too");
});

test("the 0.3 agent serves a 0.3 card whatever is asked, speaks message/send and tasks/get, defers alike, and does not deduplicate either", async (t) => {
  const agent = await startForeignAgent({ version: "0.3", deferred: true, cardMaxAge: 0 });
  t.after(() => agent.close());
  const response = await fetch(agent.cardUrl, { headers: { "a2a-version": "1.0" } });
  assert.equal(response.headers.get("cache-control"), "public, max-age=0");
  const card = await response.json();
  assert.equal(card.url, agent.rpcUrl);
  assert.equal(card.protocolVersion, "0.3.0");
  assert.equal(card.preferredTransport, "JSONRPC");
  assert.equal(card.supportedInterfaces, undefined);

  const legacy = await new Legacy.ClientFactory().createFromUrl(agent.cardUrl, "");
  const task = await legacy.sendMessage({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "old" }] } });
  assert.equal(task.status.state, "working");
  await agent.finish();
  const done = await legacy.getTask({ id: task.id });
  assert.equal(done.status.state, "completed");
  assert.deepEqual(done.artifacts[0].parts, [{ kind: "text", text: "echo: old" }]);
  assert.deepEqual(posts(agent).map((request) => request.body.method), ["message/send", "tasks/get"]);
  assert.deepEqual(agent.received[0].parts, [{ kind: "text", text: "old" }]);

  const refused = await fetch(agent.rpcUrl, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} }) });
  assert.equal((await refused.json()).error.code, -32601);

  // Nor does the 0.3 SDK deduplicate a repeated messageId.
  const again = { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "twice" }] } };
  const [one, two] = [await legacy.sendMessage(again), await legacy.sendMessage(again)];
  assert.notEqual(one.id, two.id);
  assert.equal(agent.received.filter((received) => received.messageId === again.message.messageId).length, 2);
});

test("the 1.0+0.3 agent answers each version its own card and dialect", async (t) => {
  const agent = await startForeignAgent({ version: "1.0+0.3" });
  t.after(() => agent.close());
  const current = await (await fetch(agent.cardUrl, { headers: { "a2a-version": "1.0" } })).json();
  assert.deepEqual(current.supportedInterfaces.map((face) => face.protocolVersion), ["1.0", "0.3"]);
  assert.equal(current.url, undefined);
  const old = await (await fetch(agent.cardUrl)).json();
  assert.equal(old.url, agent.rpcUrl);
  assert.equal(old.protocolVersion, "0.3");

  const task = await (await client(agent.cardUrl)).sendMessage(sending("new"));
  assert.equal(artifactText(task), "echo: new");
  const legacy = await new Legacy.ClientFactory().createFromUrl(agent.cardUrl, "");
  const legacyTask = await legacy.sendMessage({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "old" }] } });
  assert.deepEqual(legacyTask.artifacts[0].parts, [{ kind: "text", text: "echo: old" }]);
  assert.deepEqual(posts(agent).map((request) => [request.body.method, request.headers["a2a-version"]]), [["SendMessage", "1.0"], ["message/send", undefined]]);
});

/** A raw JSON-RPC call to the faulty agent's current endpoint. */
const call = (agent, method, params, init = {}) =>
  fetch(agent.rpcUrl, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }), ...init });
const message = (value) => ({ message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: value }] } });

test("the faulty agent in ok mode answers SendMessage and GetTask as the SDK's server does", async (t) => {
  const agent = await startFaultyAgent("ok");
  t.after(() => agent.close());
  const card = await (await fetch(agent.cardUrl)).json();
  assert.deepEqual(card.supportedInterfaces, [{ url: agent.rpcUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]);
  const sent = await (await call(agent, "SendMessage", message("hi"))).json();
  assert.equal(sent.id, 7);
  assert.equal(sent.result.task.status.state, "TASK_STATE_COMPLETED");
  assert.deepEqual(sent.result.task.artifacts[0].parts, [{ text: "ok: hi" }]);
  const got = await (await call(agent, "GetTask", { id: sent.result.task.id })).json();
  assert.deepEqual(got.result, sent.result.task);

  // And the SDK's own client reads it.
  const task = await (await client(agent.cardUrl)).sendMessage(sending("sdk"));
  assert.equal(artifactText(task), "ok: sdk");
  assert.equal(stateOf(await (await client(agent.cardUrl)).getTask({ id: task.id })), "TASK_STATE_COMPLETED");
});

test("the faulty agent's failure modes, switched at runtime", async (t) => {
  const agent = await startFaultyAgent("down", { delayMs: 400 });
  t.after(() => agent.close());
  await assert.rejects(call(agent, "SendMessage", message("down")), /fetch failed/);
  assert.equal((await fetch(agent.cardUrl)).status, 200, "the card is served while the endpoint is down");

  agent.setMode("slow");
  await assert.rejects(call(agent, "SendMessage", message("slow"), { signal: AbortSignal.timeout(100) }), { name: "TimeoutError" });
  const late = await (await call(agent, "SendMessage", message("slow"))).json();
  assert.deepEqual(late.result.task.artifacts[0].parts, [{ text: "ok: slow" }]);

  agent.setMode("garbage");
  const garbage = await call(agent, "SendMessage", message("garbage"));
  assert.equal(garbage.status, 200);
  await assert.rejects(garbage.json(), SyntaxError);

  agent.setMode("wrong-shape");
  const shape = await (await call(agent, "SendMessage", message("shape"))).json();
  assert.equal(shape.jsonrpc, "2.0");
  assert.equal(shape.result.task, undefined);
  assert.equal(shape.result.message, undefined);

  agent.setMode("redirect-private");
  const moved = await call(agent, "SendMessage", message("redirect"), { redirect: "manual" });
  assert.equal(moved.status, 307);
  assert.equal(moved.headers.get("location"), PRIVATE_ENDPOINT);

  agent.setMode("redirect-card");
  const card = await fetch(agent.cardUrl, { redirect: "manual" });
  assert.equal(card.status, 307);
  assert.equal(card.headers.get("location"), METADATA_URL);

  assert.throws(() => agent.setMode("sideways"), /unknown faulty-agent mode/);
  assert.deepEqual(agent.requests.map((request) => request.body?.params?.message?.parts[0].text ?? request.path),
    ["down", "/.well-known/agent-card.json", "slow", "slow", "garbage", "shape", "redirect", "/.well-known/agent-card.json"]);
});

test("the faulty agent can default to a 30 s delay, and stop listening and resume on the same port", async (t) => {
  const agent = await startFaultyAgent("slow");
  t.after(() => agent.close());
  const started = Date.now();
  await assert.rejects(call(agent, "SendMessage", message("slow"), { signal: AbortSignal.timeout(1000) }), { name: "TimeoutError" });
  assert.ok(Date.now() - started < 5000);

  agent.setMode("ok");
  await agent.stop();
  await assert.rejects(fetch(agent.cardUrl), (error) => error.cause?.code === "ECONNREFUSED");
  await agent.resume();
  assert.equal((await (await call(agent, "SendMessage", message("back"))).json()).result.task.artifacts[0].parts[0].text, "ok: back");
});

test("the faulty agent's endpoint moves: the old path answers 404 and the card, no longer cacheable, names the new one", async (t) => {
  const agent = await startFaultyAgent("ok");
  t.after(() => agent.close());
  const before = await fetch(agent.cardUrl);
  assert.equal(before.headers.get("cache-control"), "max-age=300");
  const old = (await before.json()).supportedInterfaces[0].url;
  assert.equal(new URL(old).pathname, "/rpc-1");

  agent.moveEndpoint();
  const gone = await fetch(old, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: message("x") }) });
  assert.equal(gone.status, 404);
  const after = await fetch(agent.cardUrl);
  assert.equal(after.headers.get("cache-control"), "max-age=0");
  const next = (await after.json()).supportedInterfaces[0].url;
  assert.equal(new URL(next).pathname, "/rpc-2");
  assert.equal(next, agent.rpcUrl);
  assert.equal((await (await call(agent, "SendMessage", message("moved"))).json()).result.task.artifacts[0].parts[0].text, "ok: moved");
});

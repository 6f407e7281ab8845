// A2A streaming on workerd (issue 29, decision 0036), driven by the official
// clients (@a2a-js/sdk 1.x for A2A 1.0, 0.3.x for 0.3): a streamed send opens
// with its task and is woken by the agent's claim and answer (well before the
// stream's own re-reading, so only the event path can bring them), tells the
// task working, the reply as an artifact and the finished state, then ends; a subscription does the same for
// an open task and is refused for a finished one; a caller revoked mid-stream
// is told and the stream ends; one caller's flood of streams is capped, the
// one too many told why; opening and closing are on the audit record.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import * as Legacy from "a2a-sdk-03/client";
import { startAgentNetwork, bearerFetch, a2aFactory } from "./agent-network.mjs";

let node, call, token, benToken, messenger;

before(async () => {
  ({ node, call, token, benToken, messenger } = await startAgentNetwork());
});
after(() => node?.stop());

const sending = (value) => ({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value } }] } });
const cardOf = (agent) => `${node.url}/a2a/${agent.id}/.well-known/agent-card.json`;

/** The agent claims its one waiting request, as a live agent would: the lease. */
async function claim(agent) {
  const claimed = await call("POST", "/api/agent-inbox/leases", { token: agent.credential, body: { max: 1 } });
  assert.equal(claimed.status, 200, claimed.text);
  const [leased] = claimed.body.messages;
  assert.ok(leased, "a request was waiting");
  return leased;
}

/** The agent answers the request it leased. */
async function reply(agent, leased, content) {
  const replied = await call("POST", `/api/agent-inbox/${leased.id}/reply`, {
    token: agent.credential,
    body: { fencing_token: leased.fencing_token, content },
  });
  assert.equal(replied.status, 200, replied.text);
}

/**
 * The stream's next event (`undefined` once it ended), failing after `ms`:
 * well under the stream's own re-reading (25 s), so a change that arrives in
 * time was told by the event path.
 */
async function next(stream, ms = 8000) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms);
  });
  try {
    const step = await Promise.race([stream.next(), late]);
    return step.done ? undefined : step.value;
  } finally {
    clearTimeout(timer);
  }
}

const stateOf = (status) => TaskState[status.state];

test("a streamed send opens with its task and is woken by the agent's answer: the reply, then completed, then the end", async () => {
  const agent = await messenger("Streaming agent");
  const caller = await messenger("Streaming caller");
  const client = await a2aFactory(caller.credential).createFromUrl(cardOf(agent), "");
  assert.equal(client.agentCard.capabilities.streaming, true, "the card says it streams");
  const stream = client.sendMessageStream(sending("hello"));
  const first = await next(stream);
  assert.equal(first.payload.$case, "task");
  assert.equal(stateOf(first.payload.value.status), "TASK_STATE_SUBMITTED");
  const taskId = first.payload.value.id;
  const leased = await claim(agent);
  const working = await next(stream);
  assert.equal(working.payload.$case, "statusUpdate");
  assert.equal(stateOf(working.payload.value.status), "TASK_STATE_WORKING");
  await reply(agent, leased, "done");
  const artifact = await next(stream);
  assert.equal(artifact.payload.$case, "artifactUpdate", JSON.stringify(artifact));
  assert.equal(artifact.payload.value.taskId, taskId);
  assert.equal(artifact.payload.value.artifact.parts[0].content.value, "done");
  const completed = await next(stream);
  assert.equal(completed.payload.$case, "statusUpdate");
  assert.equal(stateOf(completed.payload.value.status), "TASK_STATE_COMPLETED");
  assert.equal(await next(stream), undefined, "a finished task ends the stream");
  // Subscribing to it now is refused at once, as A2A 1.0 has it.
  await assert.rejects(drain(client.resubscribeTask({ id: taskId })), UnsupportedOperationError);
});

test("a subscription to an open task starts with the task and follows it; a person may stream as an agent may", async () => {
  const agent = await messenger("Subscribed agent");
  const client = await a2aFactory(benToken).createFromUrl(cardOf(agent), "");
  const task = await client.sendMessage(sending("for later"));
  const subscription = client.resubscribeTask({ id: task.id });
  const first = await next(subscription);
  assert.equal(first.payload.$case, "task", "the task is the first event");
  assert.equal(first.payload.value.id, task.id);
  const leased = await claim(agent);
  assert.equal(stateOf((await next(subscription)).payload.value.status), "TASK_STATE_WORKING");
  await reply(agent, leased, "later is now");
  const events = [await next(subscription), await next(subscription)];
  assert.deepEqual(events.map((event) => event.payload.$case), ["artifactUpdate", "statusUpdate"]);
  assert.equal(stateOf(events[1].payload.value.status), "TASK_STATE_COMPLETED");
  assert.equal(await next(subscription), undefined);
});

test("A2A 0.3's client streams a send and resubscribes: kinds, and the last update marked final", async () => {
  const agent = await messenger("Legacy streaming agent");
  const caller = await messenger("Legacy streaming caller");
  const legacy = await new Legacy.ClientFactory(Legacy.ClientFactoryOptions.createFrom(Legacy.ClientFactoryOptions.default, {
    transports: [new Legacy.JsonRpcTransportFactory({ fetchImpl: bearerFetch(caller.credential) })],
  })).createFromUrl(`${cardOf(agent)}?A2A-Version=0.3`, "");
  const stream = legacy.sendMessageStream({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }] } });
  const first = await next(stream);
  assert.equal(first.kind, "task");
  assert.equal(first.status.state, "submitted");
  const resubscribed = legacy.resubscribeTask({ id: first.id });
  assert.equal((await next(resubscribed)).id, first.id);
  const leased = await claim(agent);
  for (const followed of [stream, resubscribed]) {
    const working = await next(followed);
    assert.equal(working.kind, "status-update");
    assert.equal(working.status.state, "working");
    assert.equal(working.final, false);
  }
  await reply(agent, leased, "done");
  for (const followed of [stream, resubscribed]) {
    const artifact = await next(followed);
    assert.equal(artifact.kind, "artifact-update");
    assert.equal(artifact.artifact.parts[0].text, "done");
    const status = await next(followed);
    assert.equal(status.kind, "status-update");
    assert.equal(status.status.state, "completed");
    assert.equal(status.final, true);
    assert.equal(await next(followed), undefined);
  }
});

test("a caller revoked mid-stream is told, and its stream ends; opening and closing are on the audit record", async () => {
  const agent = await messenger("Revoking agent");
  const caller = await messenger("Revoked caller");
  const client = await a2aFactory(caller.credential).createFromUrl(cardOf(agent), "");
  const stream = client.sendMessageStream(sending("are you there?"));
  assert.equal((await next(stream)).payload.$case, "task");
  const revoked = await call("POST", `/api/agents/${caller.id}/revoke`, { token });
  assert.equal(revoked.status, 200, revoked.text);
  // The access hub asks every listener again; the stream's last reading is refused.
  await assert.rejects(next(stream), (error) => !/no event within/.test(error.message));
  let entries = [];
  const deadline = Date.now() + 3000;
  while (!entries.some((entry) => entry.action === "stop_listening" && entry.actor === caller.id)) {
    assert.ok(Date.now() < deadline, "the stream's close was recorded within three seconds");
    await new Promise((resolve) => setTimeout(resolve, 100));
    entries = (await call("GET", "/api/audit?limit=200", { token })).body.entries;
  }
  // Opened as the caller's own listener, through the gateway (the hub's
  // question after the revocation is on the record too, refused).
  const openings = entries.filter((entry) => entry.action === "listen_to_agent_inbox" && entry.actor === caller.id);
  assert.ok(openings.some((entry) => entry.outcome === "ok" && entry.surface === "a2a"), JSON.stringify(openings));
  const closing = entries.find((entry) => entry.action === "stop_listening" && entry.actor === caller.id);
  assert.equal(closing.object, caller.id);
});

test("one caller's flood of streams is capped: the one too many opens with its task, then ends with the reason", async () => {
  const agent = await messenger("Popular agent");
  const caller = await messenger("Flooding caller");
  const client = await a2aFactory(caller.credential).createFromUrl(cardOf(agent), "");
  const task = await client.sendMessage(sending("watch this"));
  const stop = new AbortController();
  try {
    const held = [];
    for (let index = 0; index < 8; index += 1) {
      const subscription = client.resubscribeTask({ id: task.id }, { signal: stop.signal });
      assert.equal((await next(subscription)).payload.value.id, task.id);
      held.push(subscription);
    }
    const over = client.resubscribeTask({ id: task.id }, { signal: stop.signal });
    assert.equal((await next(over)).payload.value.id, task.id);
    await assert.rejects(next(over), /too many of your streams/);
    // The eight held go on: the agent's claim reaches each of them.
    await claim(agent);
    for (const subscription of held) assert.equal(stateOf((await next(subscription)).payload.value.status), "TASK_STATE_WORKING");
  } finally {
    stop.abort();
  }
});

/** Reads a stream to its end. */
async function drain(stream) {
  for await (const _ of stream) {
    // Nothing is kept: only how it ends matters.
  }
}

// A2A push notifications on workerd (issue 29), driven by the official clients
// (@a2a-js/sdk 1.x for A2A 1.0, 0.3.x for 0.3): a caller sets a push config on
// its task, the agent claims and answers it, and a receiver on this machine is
// posted the task at each move (1.0: a StreamResponse read back by the SDK's
// own type; 0.3: the task itself) with the config's token and authentication;
// configs are read, listed and deleted; an inward address is refused.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Role, TaskState, StreamResponse, A2A_CONTENT_TYPE } from "@a2a-js/sdk";
import * as Legacy from "a2a-sdk-03/client";
import { startAgentNetwork, bearerFetch, a2aFactory } from "./agent-network.mjs";
import { startReceiver } from "./fixtures.mjs";

let node, call, messenger;

before(async () => {
  ({ node, call, messenger } = await startAgentNetwork());
});
after(() => node?.stop());

const sending = (value) => ({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value } }] } });
const cardOf = (agent) => `${node.url}/a2a/${agent.id}/.well-known/agent-card.json`;

async function receivedAtLeast(received, count) {
  for (let waited = 0; received.length < count && waited < 10_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(received.length, count, `expected ${count} notifications`);
}

async function claim(agent) {
  const claimed = await call("POST", "/api/agent-inbox/leases", { token: agent.credential, body: { max: 1 } });
  assert.equal(claimed.status, 200, claimed.text);
  return claimed.body.messages[0];
}

test("an A2A 1.0 client's push config is posted the task as it moves, with its token and authentication", async () => {
  const receiver = await startReceiver();
  try {
    const agent = await messenger("Pushed agent");
    const caller = await messenger("Pushed caller");
    const card = await (await fetch(cardOf(agent))).json();
    assert.equal(card.capabilities.pushNotifications, true);
    const client = await a2aFactory(caller.credential).createFromUrl(cardOf(agent), "");
    const task = await client.sendMessage(sending("Sum 37 and 58"));
    const url = `${receiver.url}/push`;
    const config = { taskId: task.id, id: "cfg-1", url, token: "tok-1", authentication: { scheme: "Bearer", credentials: "receiver-secret" } };
    const created = await client.createTaskPushNotificationConfig(config);
    assert.deepEqual([created.id, created.taskId, created.url, created.token], ["cfg-1", task.id, url, "tok-1"]);
    const got = await client.getTaskPushNotificationConfig({ taskId: task.id, id: "cfg-1" });
    assert.equal(got.authentication.scheme, "Bearer");
    const listed = await client.listTaskPushNotificationConfig({ taskId: task.id });
    assert.deepEqual(listed.configs.map((each) => each.id), ["cfg-1"]);

    const leased = await claim(agent);
    await receivedAtLeast(receiver.received, 1);
    const [working] = receiver.received;
    assert.equal(working.headers["content-type"], A2A_CONTENT_TYPE);
    assert.equal(working.headers["x-a2a-notification-token"], "tok-1");
    assert.equal(working.headers.authorization, "Bearer receiver-secret");
    const first = StreamResponse.fromJSON(JSON.parse(working.body));
    assert.equal(first.payload.$case, "task");
    assert.equal(first.payload.value.id, task.id);
    assert.equal(TaskState[first.payload.value.status.state], "TASK_STATE_WORKING");

    const replied = await call("POST", `/api/agent-inbox/${leased.id}/reply`, {
      token: agent.credential,
      body: { fencing_token: leased.fencing_token, content: { sum: 95 } },
    });
    assert.equal(replied.status, 200, replied.text);
    await receivedAtLeast(receiver.received, 2);
    const done = StreamResponse.fromJSON(JSON.parse(receiver.received[1].body));
    assert.equal(TaskState[done.payload.value.status.state], "TASK_STATE_COMPLETED");
    assert.ok(receiver.received[1].body.includes("95"), "the answer is the task's artifact");

    await client.deleteTaskPushNotificationConfig({ taskId: task.id, id: "cfg-1" });
    assert.deepEqual((await client.listTaskPushNotificationConfig({ taskId: task.id })).configs, []);
  } finally {
    await receiver.close();
  }
});

test("an A2A 0.3 client's push config is posted the task itself, and an inward address is refused", async () => {
  const receiver = await startReceiver();
  try {
    const agent = await messenger("Legacy pushed agent");
    const caller = await messenger("Legacy pushed caller");
    const legacy = await new Legacy.ClientFactory(Legacy.ClientFactoryOptions.createFrom(Legacy.ClientFactoryOptions.default, {
      transports: [new Legacy.JsonRpcTransportFactory({ fetchImpl: bearerFetch(caller.credential) })],
    })).createFromUrl(`${cardOf(agent)}?A2A-Version=0.3`, "");
    const task = await legacy.sendMessage({ message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }] } });
    const set = await legacy.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { url: `${receiver.url}/legacy`, token: "legacy-token" } });
    assert.equal(set.pushNotificationConfig.id, task.id, "named by its task, as 0.3's reference server names it");
    await assert.rejects(
      legacy.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { url: "https://169.254.169.254/latest" } }),
      /cannot be used/,
    );
    await claim(agent);
    await receivedAtLeast(receiver.received, 1);
    const pushed = JSON.parse(receiver.received[0].body);
    assert.deepEqual([pushed.kind, pushed.id, pushed.status.state], ["task", task.id, "working"]);
    assert.equal(receiver.received[0].headers["x-a2a-notification-token"], "legacy-token");
    assert.equal(receiver.received[0].headers["content-type"], "application/json");
  } finally {
    await receiver.close();
  }
});

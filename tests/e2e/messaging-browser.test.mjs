// Agent messaging's owner plane in a real browser: headless Chromium against the
// built Worker on workerd with FEATURE_AGENT_NETWORK on, at a desktop's width and
// a phone's. Each of two sponsors (one per width, neither an administrator) finds
// their agents in Connections, one connected a moment ago and one never; pauses
// one and sees a message to it held because it is paused, resumes it and sees
// the message queued; lets it receive only from their other agent, chosen by
// name; sends messages as themselves (one the allowlist refuses, one the other
// agent answers through its own credential) and opens the answered one's
// conversation. What agents do (a message arriving, a claim, an answer) shows
// without a reload. An administrator sees every agent with its sponsor. On a node
// without the feature, the section says messaging is off and how to turn it on.
// No view may be wider than the window, and every console error and CSP
// violation fails the file, apart from the refusals provoked on purpose.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startNode, setUp, client, ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn, openSection } from "./browser-helpers.mjs";
import { ok, startDesk, startReceiver } from "./fixtures.mjs";

const LAYOUTS = [
  {
    name: "desktop",
    person: { name: "Sam Sponsor", email: "sam@example.com", password: "sam's first long password" },
    agents: { watched: "Scout", other: "Courier" },
    viewport: { width: 1280, height: 900 },
  },
  {
    name: "phone",
    person: { name: "Pia Phone", email: "pia@example.com", password: "pia's first long password" },
    agents: { watched: "Pathfinder", other: "Runner" },
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  },
];

let node, call, token, desk, browser;
const watch = new PageWatch();

before(async () => {
  ({ node, call, token, desk } = await startDesk({ vars: { FEATURE_AGENT_NETWORK: "true" } }));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** Mints an agent with agent.messaging for `sponsor`: `{ agent, credential }`. */
async function mint(name, sponsor) {
  return ok(call("POST", "/api/agents", { token, body: { name, sponsor, capabilities: ["agent.messaging"], mailboxes: [], delivery: "credential" } }), 201);
}

const runs = {};

for (const layout of LAYOUTS) {
  const run = {};
  runs[layout.name] = run;
  const page = () => run.page;
  const { watched: WATCHED, other: OTHER } = layout.agents;
  const statusSaying = (text) => page().getByRole("status").filter({ hasText: text });
  const card = (name) => page().getByRole("article").filter({ has: page().getByRole("heading", { name, exact: true }) });
  const inbox = () => page().getByRole("region", { name: /^Inbox \(/ });
  const sent = () => page().getByRole("region", { name: "Messages you sent" });
  const messaging = (agent) => ok(call("GET", `/api/agents/${agent.agent.id}/messaging`, { token: run.token }));

  async function openConnections() {
    await openSection(page(), "Connections");
    await page().getByRole("heading", { name: "Connections", level: 1 }).waitFor();
    await page().getByRole("region", { name: "Your agents" }).waitFor();
  }

  test(`${layout.name}: a sponsor sees their agents' connections: one seen a moment ago, one never`, async () => {
    run.person = await desk.person(layout.person);
    run.watched = await mint(WATCHED, run.person.id);
    run.other = await mint(OTHER, run.person.id);
    // The watched agent looks at its inbox, as a connected agent does; the other never does.
    await ok(call("GET", "/api/agent-inbox", { token: run.watched.credential }));
    run.token = await desk.signIn(layout.person);

    const { name, person: _, agents: __, ...options } = layout;
    ({ page: run.page } = await watch.open(browser, { who: name, ...options, locale: "en-US" }));
    await signIn(page(), node.url, layout.person);
    assert.equal((await assertFits(page(), "after signing in")).width, layout.viewport.width, "the window is as wide as the layout");
    await openConnections();

    await card(WATCHED).getByText("Last seen just now").waitFor();
    await card(OTHER).getByText("Never connected").waitFor();
    // What waits, once each agent's messaging has been read.
    await card(WATCHED).getByText("0 messages waiting, 0 leased now").waitFor();
    assert.match(await card(WATCHED).textContent(), /Active.*Last seen just now.*0 messages waiting, 0 leased now/s);
    // Names, not ids: the agents' ids are nowhere in the cards' text.
    for (const agent of [run.watched, run.other]) assert.equal((await card(agent.agent.name).textContent()).includes(agent.agent.id), false);
    // The interface never asks for an agent's credential.
    assert.equal(await page().locator("input[type=password]").count(), 0);
    await assertFits(page(), "the agents");
  });

  test(`${layout.name}: pausing an agent holds a message to it, and resuming delivers it`, async () => {
    await card(WATCHED).getByRole("link", { name: `Inbox and policy of ${WATCHED}` }).click();
    await page().getByRole("heading", { name: "Connection", level: 2 }).waitFor();
    await inbox().getByText(`Nothing has been sent to ${WATCHED} yet.`).waitFor();
    await page().getByRole("button", { name: `Pause ${WATCHED}`, exact: true }).click();
    await statusSaying(`Paused ${WATCHED}: it receives nothing`).waitFor();
    assert.equal((await messaging(run.watched)).paused, true);
    assert.ok(await page().getByRole("button", { name: `Resume ${WATCHED}`, exact: true }).isVisible());

    // The other agent sends it an event, with its own credential.
    await ok(call("POST", "/api/agent-messages", {
      token: run.other.credential,
      body: { recipient: run.watched.agent.id, kind: "event", content: { stock: "low", item: "paper" }, idempotency_key: `${layout.name}-stock` },
    }), 202);
    // No reload: the agent's page follows its inbox's stream.
    const message = inbox().getByRole("article").filter({ has: page().getByRole("heading", { name: `Event from ${OTHER} to ${WATCHED}` }) });
    await message.waitFor();
    assert.match(await message.textContent(), /Held.*Held: paused It is delivered once the agent is resumed\./s);
    // Pretty JSON, as the node keeps it (an object's keys in order).
    assert.match(await message.getByLabel("Content of the event").textContent(), /^\{\n {2}"item": "paper",\n {2}"stock": "low"\n\}$/);
    // The count and the list are two reads: a refresh begun before the message arrived may show it with the
    // older count, and the event's own refresh follows. What the owner is left with agrees.
    await inbox().getByRole("heading", { level: 2, name: /^Inbox \(1 message waiting, 0 leased\)$/ }).waitFor();
    await assertFits(page(), "a held message");

    await page().getByRole("button", { name: `Resume ${WATCHED}`, exact: true }).click();
    await statusSaying(`Resumed ${WATCHED}`).waitFor();
    assert.equal((await messaging(run.watched)).paused, false);
    assert.match(await message.textContent(), /Queued.*Queued: waiting to be claimed/s);
    assert.equal((await message.textContent()).includes("Held"), false, "no longer held");
  });

  test(`${layout.name}: the sponsor lets the agent receive only from their other agent, chosen by name`, async () => {
    const form = page().getByRole("form", { name: `Delivery policy of ${WATCHED}` });
    assert.equal(await form.getByLabel("Everyone on this node").isChecked(), true, "everyone, until told otherwise");
    const peers = form.getByRole("group", { name: `Who ${WATCHED} receives from` }).getByRole("checkbox");
    // The sponsor's other agent and the sponsor, by name; never the agent itself.
    assert.deepEqual((await peers.evaluateAll((boxes) => boxes.map((box) => box.labels[0].textContent))).sort(),
      [`${OTHER} agent`, `${layout.person.name} (you) person`].sort());
    await form.getByRole("checkbox", { name: `${OTHER} agent` }).check();
    assert.equal(await form.getByLabel("Only those chosen").isChecked(), true, "choosing someone chooses an allowlist");
    await form.getByLabel("Attempts before failing").fill("3");
    await assertFits(page(), "the policy form");
    await form.getByRole("button", { name: "Save policy" }).click();
    await statusSaying(`Saved the policy of ${WATCHED}: it receives from only ${OTHER}; at most 60 a minute, 100 leases at once, 3 attempts before a message fails.`).waitFor();
    const saved = await messaging(run.watched);
    assert.deepEqual(saved.allowed_peers, [run.other.agent.id]);
    assert.equal(saved.maximum_attempts, 3);
    // The form shows what was saved.
    assert.equal(await form.getByRole("checkbox", { name: `${OTHER} agent` }).isChecked(), true);
    assert.equal(await form.getByLabel("Attempts before failing").inputValue(), "3");

    // The agent claims the event (its sender is allowed) with its own credential: the owner sees the lease.
    const claimed = await ok(call("POST", "/api/agent-inbox/leases", { token: run.watched.credential, body: { max: 1, lease_seconds: 600 } }));
    assert.equal(claimed.messages.length, 1, JSON.stringify(claimed));
    // No reload: the claim is told on the agent's stream, and the policy form keeps what it shows.
    const message = inbox().getByRole("article").filter({ has: page().getByRole("heading", { name: `Event from ${OTHER} to ${WATCHED}` }) });
    await message.getByText("Leased", { exact: true }).waitFor();
    // The browser is en-US: "Leased until 8:47 PM (attempt 1 of 3)", 3 being the policy just saved, or the day
    // when the lease ends on another day than today ("Dec 4": a run near midnight), in the page's one format.
    const standing = message.locator(".standing");
    assert.match(await standing.textContent(), /^Leased until (\d{1,2}:\d{2}\s[AP]M|[A-Z][a-z]{2} \d{1,2}) \(attempt 1 of 3\)$/);
    assert.equal(await standing.locator("time").getAttribute("datetime"), claimed.messages[0].lease_expires_at, "the time shown is the lease's own end");
    await inbox().getByRole("heading", { level: 2, name: /^Inbox \(0 messages waiting, 1 leased\)$/ }).waitFor();
  });

  test(`${layout.name}: the sponsor sends messages as themselves: one the allowlist refuses, one answered, and opens its conversation`, async () => {
    await page().getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Connections" }).click();
    const form = page().getByRole("region", { name: "Send a message" });
    await form.waitFor();
    await sent().getByText("You have not sent an agent a message yet.").waitFor();

    await form.getByLabel("To", { exact: true }).selectOption({ label: WATCHED });
    await form.getByLabel("Kind").selectOption("request");
    await form.getByLabel("Content").fill('{"city": "Lisbon"}');
    await form.getByRole("button", { name: "Send message" }).click();
    await statusSaying(`Sent a request to ${WATCHED}. Refused: not on the allowlist.`).waitFor();
    const refused = sent().getByRole("article").filter({ has: page().getByRole("heading", { name: `Request from ${layout.person.name} (you) to ${WATCHED}` }) });
    assert.match(await refused.textContent(), /Refused.*Refused: not on the allowlist/s);

    await form.getByLabel("To", { exact: true }).selectOption({ label: OTHER });
    await form.getByLabel("Content").fill("What is the weather in Lisbon?");
    await form.getByRole("button", { name: "Send message" }).click();
    await statusSaying(`Sent a request to ${OTHER}. Queued: waiting to be claimed.`).waitFor();
    const mine = (await ok(call("GET", "/api/agent-messages", { token: run.token }))).messages;
    assert.deepEqual(mine.map(({ recipient, state, content }) => ({ recipient, state, content })), [
      { recipient: run.other.agent.id, state: "queued", content: "What is the weather in Lisbon?" },
      { recipient: run.watched.agent.id, state: "refused", content: { city: "Lisbon" } },
    ], "JSON is sent as JSON, text as a string, newest first");
    assert.notEqual(mine[0].id, mine[1].id);

    // The other agent claims the request with its own credential and answers it.
    const [request] = (await ok(call("POST", "/api/agent-inbox/leases", { token: run.other.credential, body: { max: 1 } }))).messages;
    assert.equal(request.id, mine[0].id);
    await ok(call("POST", `/api/agent-inbox/${request.id}/reply`, {
      token: run.other.credential,
      body: { fencing_token: request.fencing_token, content: { forecast: "sun", high: 24 } },
    }));

    // No reload: the answer is told on the person's own stream, and the list shows it.
    const answered = sent().getByRole("article").filter({ has: page().getByRole("heading", { name: `Request from ${layout.person.name} (you) to ${OTHER}` }) });
    await answered.getByText("Answered", { exact: true }).first().waitFor();
    assert.match(await answered.getByLabel("The reply").textContent(), /"forecast": "sun",\n {2}"high": 24/);
    await assertFits(page(), "the messages sent");

    await answered.getByRole("link", { name: /^Open its conversation/ }).click();
    const messages = page().getByRole("region", { name: "Messages, in order" });
    await messages.waitFor();
    assert.deepEqual(await messages.getByRole("heading", { level: 3 }).allTextContents(), [
      `Request from ${layout.person.name} (you) to ${OTHER}`,
      `Reply from ${OTHER} to ${layout.person.name} (you)`,
    ]);
    const [asked, answer] = await messages.getByRole("article").all();
    assert.match(await asked.textContent(), /Answered/);
    assert.equal(await asked.getByLabel("Content of the request").textContent(), '"What is the weather in Lisbon?"');
    assert.match(await answer.textContent(), /Delivered/);
    assert.match(await answer.getByLabel("Content of the reply").textContent(), /^\{\n {2}"forecast": "sun",\n {2}"high": 24\n\}$/);
    const between = page().getByRole("region", { name: "Conversation" });
    assert.match(await between.textContent(), new RegExp(`Between.*(${OTHER} and ${layout.person.name} \\(you\\)|${layout.person.name} \\(you\\) and ${OTHER}).*Messages2`, "s"));
    // Ids on request only.
    assert.equal(await between.getByText(request.conversation_id).isVisible(), false);
    await assertFits(page(), "a conversation");
  });
}

test("an administrator sees every agent in Connections, with its sponsor, and never an agent's credential", async () => {
  const { page } = await watch.open(browser, { who: "administrator", locale: "en-US" });
  await signIn(page, node.url, ADMIN);
  await openSection(page, "Connections");
  const every = page.getByRole("region", { name: "Every agent" });
  await every.waitFor();
  const cards = every.getByRole("article");
  await cards.first().waitFor();
  assert.deepEqual((await cards.getByRole("heading", { level: 3 }).allTextContents()).sort(), ["Courier", "Pathfinder", "Runner", "Scout"]);
  const scout = cards.filter({ has: page.getByRole("heading", { name: "Scout", exact: true }) });
  await scout.getByText("Sponsored by Sam Sponsor").waitFor();
  // The administrator reads each agent's connection from its messaging.
  await scout.getByText(/^Last seen/).first().waitFor();
  assert.equal(await page.locator("input[type=password]").count(), 0);
  await assertFits(page, "every agent");
  await page.context().close();
});

test("a sponsor subscribes a webhook to their agent's inbox, sees its secret once and its delivery, and removes it", async () => {
  const run = runs.desktop;
  const page = run.page;
  const receiver = await startReceiver();
  try {
    await page.goto(`${node.url}/#/connections/agent/${run.watched.agent.id}`);
    const webhooks = page.getByRole("region", { name: "Webhooks" });
    await webhooks.getByText("No webhook is told of Scout's inbox yet.").waitFor();
    await webhooks.getByLabel("Address (https)").fill(`${receiver.url}/scout`);
    await webhooks.getByLabel("Only these kinds (optional)").fill("send_agent_message");
    await webhooks.getByRole("button", { name: "Subscribe webhook" }).click();
    const secret = webhooks.getByLabel("Signing secret");
    await secret.waitFor();
    assert.match(await secret.inputValue(), /^whsec_/);
    await ok(call("POST", "/api/agent-messages", {
      token: run.other.credential,
      body: { recipient: run.watched.agent.id, kind: "event", content: { stock: "ok" }, idempotency_key: "webhook-browser" },
    }), 202);
    for (let waited = 0; receiver.received.length === 0 && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(JSON.parse(receiver.received[0].body).type, "send_agent_message");
    await page.reload();
    const card = webhooks.getByRole("article").filter({ has: page.getByRole("heading", { name: `${receiver.url}/scout` }) });
    await card.getByText(/send_agent_message: Delivered \(tried once\)/).waitFor();
    assert.equal(await webhooks.getByLabel("Signing secret").count(), 0, "the secret is shown only once");
    await assertFits(page, "an agent's webhooks");
    await card.getByRole("button", { name: `Remove the webhook to ${receiver.url}/scout` }).click();
    await card.getByRole("button", { name: "Remove it" }).click();
    await webhooks.getByText(`Removed the webhook to ${receiver.url}/scout.`).waitFor();
    await webhooks.getByText("No webhook is told of Scout's inbox yet.").waitFor();
  } finally {
    await receiver.close();
  }
});

test("an administrator subscribes a webhook to a mailbox from Mailboxes, and an inward address is refused naming the field", async () => {
  const mailbox = await ok(call("POST", "/api/mailboxes", { token, body: { address: "hooks@mailroom.test", display_name: "Hooks" } }), 201);
  const { page } = await watch.open(browser, { who: "administrator's webhooks", locale: "en-US", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  watch.expectRefusal(400, `/api/mailboxes/${mailbox.id}/webhooks`);
  await signIn(page, node.url, ADMIN);
  await openSection(page, "Mailboxes");
  await page.getByRole("link", { name: "Webhooks of hooks@mailroom.test" }).click();
  const webhooks = page.getByRole("region", { name: "Webhooks" });
  await webhooks.getByText("No webhook is told of hooks@mailroom.test's changes yet.").waitFor();
  await webhooks.getByLabel("Address (https)").fill("https://10.0.0.1/hook");
  await webhooks.getByRole("button", { name: "Subscribe webhook" }).click();
  await webhooks.getByText("The webhook was not subscribed: check “Address (https)”.").waitFor();
  assert.match(await webhooks.getByRole("alert").innerText(), /“Address \(https\)” was not accepted as it is\.\n+Why: .*(inside a network|private)/);
  await webhooks.getByLabel("Address (https)").fill("http://127.0.0.1:9/hooks");
  await webhooks.getByRole("button", { name: "Subscribe webhook" }).click();
  await webhooks.getByLabel("Signing secret").waitFor();
  await webhooks.getByRole("heading", { name: "http://127.0.0.1:9/hooks" }).waitFor();
  await assertFits(page, "a mailbox's webhooks");
  await page.context().close();
});

test("nothing went wrong in any page", () => {
  watch.assertNothingWentWrong(node.url);
});

test("on a node without agent messaging, Connections says it is off and how to turn it on", async () => {
  const off = await startNode();
  const offWatch = new PageWatch();
  try {
    const { token: offToken } = await setUp(off);
    const { page } = await offWatch.open(browser, { who: "feature off", locale: "en-US" });
    await signIn(page, off.url, ADMIN);
    offWatch.expectRefusal(404, "/api/agent-messages");
    await openSection(page, "Connections");
    const notice = page.getByRole("status").filter({ hasText: "Agent messaging is off on this node." });
    await notice.waitFor();
    assert.match(await notice.textContent(), /To turn it on: .*FEATURE_AGENT_NETWORK = "true"/);
    // The node refuses as the page says.
    const refused = await client(off.url)("GET", "/api/agent-messages", { token: offToken });
    assert.equal(refused.body.error.code, "feature_disabled");
    assert.equal(await page.getByRole("region", { name: "Send a message" }).count(), 0, "nothing to send with");
    await assertFits(page, "messaging off");
    await page.context().close();
    offWatch.assertNothingWentWrong(off.url);
  } finally {
    await off.stop();
  }
});


// Reminders (SPEC §9, issue 12) on real workerd with a local D1, in real time:
// the per-minute cron delivering to a local webhook receiver once, signed, and
// not inside quiet hours; a failed delivery tried again once its wait is over; a
// receiver that never answers delaying no one else's; webhook addresses inside a
// network refused when set and, stored before the rule, when they would be posted; the
// email channel, failing by name without REMINDER_SENDER and, with one, through
// the send_email binding; an agent creating, rescheduling
// and closing an event over MCP with the official client; and a source's
// upsert and withdraw, its credential good for nothing else and dead once revoked.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startNode, setUp, assertRefusal, checkedFetch } from "./harness.mjs";
import { deskOf, startDesk, startReceiver } from "./fixtures.mjs";

const REMINDERS_CRON = "* * * * *";
const SENDER = "reminders@mailroom.test";

// workerd's clock is the real one, so the people here live in a fixed-offset zone
// where it is around noon now: "today" then stays today for the whole run, and
// quiet hours around now never straddle a change of day.
const OFFSET = 12 - new Date().getUTCHours(); // hours east of UTC, -11..12
const ZONE = OFFSET === 0 ? "UTC" : `Etc/GMT${OFFSET > 0 ? "-" : "+"}${Math.abs(OFFSET)}`; // POSIX signs: Etc/GMT-3 is UTC+3
const localNow = () => new Date(Date.now() + OFFSET * 3_600_000);
const today = () => localNow().toISOString().slice(0, 10);
const dayAfter = (day, days) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
/** The local wall-clock time `minutes` from now, as HH:MM. */
function clockIn(minutes) {
  const now = localNow();
  const total = (((now.getUTCHours() * 60 + now.getUTCMinutes() + minutes) % 1440) + 1440) % 1440;
  return `${String(Math.floor(total / 60)).padStart(2, "0")}:${String(total % 60).padStart(2, "0")}`;
}

let node, call, token, desk;
/** Per path, the statuses to answer next (then 200); "never" holds the request open until the file ends. */
const answers = new Map();
/** The local webhook receiver, what it got (`{ path, headers, body, at }`, in order) and its origin. */
let receiver, received, hooks;

before(async () => {
  receiver = await startReceiver((response, request) => {
    if (answers.get(request.path)?.[0] === "never") return;
    const status = answers.get(request.path)?.shift() ?? 200;
    response.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "not now");
  });
  ({ received, url: hooks } = receiver);
  // As wrangler.toml ships it: no REMINDER_SENDER (the email test starts its own node with one).
  ({ node, call, token, desk } = await startDesk());
});
after(async () => {
  await node?.stop();
  await receiver?.close();
});

/** A new person in ZONE, signed in: `{ person, token }`. */
async function person(email, profile = {}) {
  const { token: own, ...created } = await desk.colleague({ email, name: email.split("@")[0], password: `${email}'s long enough password` });
  const set = await call("PATCH", "/api/me/profile", { token: own, body: { tz: ZONE, ...profile } });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.body.tz, ZONE);
  return { person: created, token: own };
}

async function createEvent(own, event) {
  const created = await call("POST", "/api/me/events", { token: own, body: event });
  assert.equal(created.status, 201, created.text);
  return created.body;
}

async function getEvent(own, id) {
  const got = await call("GET", `/api/me/events/${id}`, { token: own });
  assert.equal(got.status, 200, got.text);
  return got.body;
}

const runReminders = () => node.scheduled(REMINDERS_CRON);
const postedTo = (path) => received.filter((each) => each.path === path);

/** Whether `header` (`t=…,v1=…`) signs `body` with `secret`, as the contract says. */
function signedWith(secret, header, body) {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${body}`).digest("hex");
  return expected === match[2];
}

test("the per-minute cron posts a signed webhook once, and not inside quiet hours", async () => {
  // Quiet hours that wrap midnight (from an hour ago until two hours before now, the
  // next day), so the node must read a window with start > end as containing now.
  const { token: kei } = await person("kei@example.com", { quiet_start: clockIn(-60), quiet_end: clockIn(-120) });
  const set = await call("PUT", "/api/me/profile/webhook", { token: kei, body: { url: `${hooks}/kei` } });
  assert.equal(set.status, 200, set.text);
  assert.match(set.body.secret, /^whsec_/);
  assert.equal(set.body.profile.channels.webhook_url, `${hooks}/kei`);
  const profile = await call("GET", "/api/me/profile", { token: kei });
  assert.ok(!profile.text.includes(set.body.secret), "the secret is shown once");

  const event = await createEvent(kei, { title: "Pay the rent", due_at: today() });
  assert.equal(event.state, "today", JSON.stringify(event));
  assert.deepEqual(event.deliveries, []);

  await runReminders();
  assert.equal(postedTo("/kei").length, 0, "nothing inside quiet hours");
  assert.deepEqual((await getEvent(kei, event.id)).deliveries, [], "not even tried");

  // Quiet hours that start in an hour: now is outside them. The webhook stays,
  // and the secret shown when it was set still signs.
  const moved = await call("PATCH", "/api/me/profile", { token: kei, body: { quiet_start: clockIn(60), quiet_end: clockIn(120) } });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.channels.webhook_url, `${hooks}/kei`);
  const secret = set.body.secret;
  const before = Math.floor(Date.now() / 1000);
  await runReminders();
  const posted = postedTo("/kei");
  assert.equal(posted.length, 1, JSON.stringify(received));
  const [hook] = posted;
  assert.equal(hook.method, "POST");
  assert.match(hook.headers["content-type"], /^application\/json/);
  const signature = hook.headers["mailroom-signature"];
  assert.ok(signedWith(secret, signature, hook.body), `signed with the shown secret: ${signature}`);
  assert.ok(!signedWith("whsec_someone_else", signature, hook.body));
  const stamped = Number(/^t=(\d+)/.exec(signature)[1]);
  assert.ok(stamped >= before - 1 && stamped <= Math.ceil(Date.now() / 1000) + 1, `t=${stamped} is now`);
  const delivered = JSON.parse(hook.body);
  assert.equal(delivered.type, "reminder.state");
  assert.equal(delivered.state, "today");
  assert.equal(delivered.event.id, event.id);
  assert.equal(delivered.event.title, "Pay the rent");
  assert.equal(delivered.event.state, "today");
  assert.equal(hook.headers["mailroom-delivery"], delivered.delivery);

  await runReminders();
  assert.equal(postedTo("/kei").length, 1, "once per checkpoint");
  const shown = await getEvent(kei, event.id);
  assert.equal(shown.deliveries.length, 1, JSON.stringify(shown.deliveries));
  assert.deepEqual(
    (({ channel, state, outcome, attempts, last_error }) => ({ channel, state, outcome, attempts, last_error }))(shown.deliveries[0]),
    { channel: "webhook", state: "today", outcome: "delivered", attempts: 1, last_error: null },
  );
});

test("a webhook that answers 500 is failed with its error, waits, is then delivered, and never twice", async () => {
  const { token: flo } = await person("flo@example.com");
  const set = await call("PUT", "/api/me/profile/webhook", { token: flo, body: { url: `${hooks}/flo` } });
  assert.equal(set.status, 200, set.text);
  answers.set("/flo", [500]);
  const event = await createEvent(flo, { title: "Water the plants", due_at: today() });

  await runReminders();
  assert.equal(postedTo("/flo").length, 1);
  const failed = (await getEvent(flo, event.id)).deliveries;
  assert.equal(failed.length, 1, JSON.stringify(failed));
  assert.equal(failed[0].outcome, "failed");
  assert.equal(failed[0].last_error, "the webhook answered 500");
  assert.equal(failed[0].attempts, 1);
  // It waits a minute, to the minute: the run that comes right after leaves it.
  const next = Date.parse(failed[0].next_attempt_at);
  assert.equal(next % 60_000, 0, failed[0].next_attempt_at);
  assert.ok(next > Date.now() && next <= Date.now() + 60_000, `next attempt ${failed[0].next_attempt_at}`);
  await runReminders();
  assert.equal(postedTo("/flo").length, 1, "not before its wait is over");

  // The minute passes (as the clock would have it): the next run tries again.
  await node.sql(`UPDATE reminder_deliveries SET next_attempt_at = ${Date.now() - 1} WHERE event_id = '${event.id}'`);
  await runReminders();
  const posted = postedTo("/flo");
  assert.equal(posted.length, 2, "tried again");
  assert.equal(posted[1].headers["mailroom-delivery"], posted[0].headers["mailroom-delivery"], "the same delivery, so the receiver can tell");
  assert.ok(signedWith(set.body.secret, posted[1].headers["mailroom-signature"], posted[1].body));
  const delivered = (await getEvent(flo, event.id)).deliveries;
  assert.deepEqual(
    delivered.map(({ outcome, attempts, last_error, next_attempt_at }) => ({ outcome, attempts, last_error, next_attempt_at })),
    [{ outcome: "delivered", attempts: 2, last_error: null, next_attempt_at: null }],
  );

  await runReminders();
  assert.equal(postedTo("/flo").length, 2, "no duplicate after delivery");
});

test("a receiver that never answers holds its own delivery for ten seconds and delays no one else's", async () => {
  const { token: sil } = await person("sil@example.com");
  const { token: pia } = await person("pia@example.com");
  assert.equal((await call("PUT", "/api/me/profile/webhook", { token: sil, body: { url: `${hooks}/sil` } })).status, 200);
  assert.equal((await call("PUT", "/api/me/profile/webhook", { token: pia, body: { url: `${hooks}/pia` } })).status, 200);
  answers.set("/sil", ["never"]);
  // Sil's first: in the run's order, the silent receiver comes before Pia's three.
  const silent = await createEvent(sil, { title: "Call the bank", due_at: today() });
  for (const title of ["Book the hall", "Send the invites", "Order the cake"]) await createEvent(pia, { title, due_at: today() });
  const started = Date.now();
  await runReminders();
  const took = Date.now() - started;
  const prompt = postedTo("/pia");
  assert.equal(prompt.length, 3, JSON.stringify(received.map((each) => each.path)));
  for (const each of prompt) assert.ok(each.at - started < 5_000, `Pia's reminder came ${each.at - started} ms after the run began`);
  assert.equal(postedTo("/sil").length, 1);
  assert.ok(took >= 9_000 && took < 30_000, `the run ended at the silent receiver's deadline: ${took} ms`);
  const [delivery] = (await getEvent(sil, silent.id)).deliveries;
  assert.equal(delivery.outcome, "failed", JSON.stringify(delivery));
  assert.equal(delivery.last_error, "the webhook did not answer within 10 seconds");
  answers.delete("/sil");
});

test("a webhook inside a network is refused naming `url` and its range, in every spelling fetch reads", async () => {
  const { token: ivy } = await person("ivy@example.com");
  for (const [url, range] of [
    ["https://10.0.0.1/hook", "a private address (10.0.0.0/8)"],
    ["https://169.254.169.254/latest/meta-data/", "a link-local address (169.254.0.0/16"],
    ["https://0xa9fea9fe/latest/meta-data/", "(read as `169.254.169.254`) is a link-local address"],
    ["https://2852039166/latest/", "(read as `169.254.169.254`)"],
    ["https://0251.0376.0251.0376/latest/", "(read as `169.254.169.254`)"],
    ["https://10.1/hook", "(read as `10.0.0.1`) is a private address"],
    ["https://100.64.0.1/hook", "a shared address (100.64.0.0/10"],
    ["https://[::ffff:10.0.0.1]/hook", "the IPv4-mapped form of a private address"],
    ["https://[64:ff9b::a9fe:a9fe]/hook", "the NAT64 form of a link-local address"],
    ["https://[fd00::1]/hook", "a unique-local address (fc00::/7)"],
    ["https://metadata.google.internal./computeMetadata/v1/", "(.internal)"],
    ["https://printer.local/hook", "(.local, multicast DNS)"],
    ["https://hooks.example.org@10.0.0.1/hook", "credentials before an `@`"],
    ["http://hooks.example.org/hook", "not an https address"],
  ]) {
    const refused = await call("PUT", "/api/me/profile/webhook", { token: ivy, body: { url } });
    assertRefusal(assert, refused, 400, "invalid_webhook_url");
    assert.equal(refused.body.error.message, "`url` cannot be used as a webhook.");
    assert.ok(refused.body.error.reason.includes(range), `${url}: ${refused.body.error.reason}`);
  }
  assert.equal((await call("GET", "/api/me/profile", { token: ivy })).body.channels.webhook_url, null, "nothing was set");
});

test("a webhook address stored before the rule is refused when it would be posted, and never fetched", async () => {
  const { person: old, token: oli } = await person("oli@example.com");
  assert.equal((await call("PUT", "/api/me/profile/webhook", { token: oli, body: { url: `${hooks}/oli` } })).status, 200);
  // As a deployment that stored it under the looser rule would hold it.
  await node.sql(`UPDATE reminder_profiles SET webhook_url = 'https://169.254.169.254/latest/meta-data/' WHERE person_id = '${old.id}'`);
  const event = await createEvent(oli, { title: "Renew the lease", due_at: today() });
  await runReminders();
  const [delivery] = (await getEvent(oli, event.id)).deliveries;
  assert.equal(delivery.outcome, "failed", JSON.stringify(delivery));
  assert.match(delivery.last_error, /^the webhook may not be posted to: its host `169\.254\.169\.254` is a link-local address/);
  assert.equal(postedTo("/oli").length, 0);
});

test("changing the time zone moves open events to it, in one statement on D1", async () => {
  const { token: ida } = await person("ivo@example.com");
  assert.equal((await call("PATCH", "/api/me/profile", { token: ida, body: { tz: "UTC" } })).status, 200);
  const dentist = await createEvent(ida, { title: "Dentist", due_at: "2027-01-12T09:00" });
  const flight = await createEvent(ida, { title: "Flight", due_at: "2027-01-13T01:00+09:00" });
  assert.equal(dentist.due_moment, "2027-01-12T09:00:00.000Z");
  const moved = await call("PATCH", "/api/me/profile", { token: ida, body: { tz: "America/New_York" } });
  assert.equal(moved.status, 200, moved.text);
  assert.equal((await getEvent(ida, dentist.id)).due_moment, "2027-01-12T14:00:00.000Z", "09:00 in New York");
  assert.equal((await getEvent(ida, flight.id)).due_moment, "2027-01-12T16:00:00.000Z", "a place's time does not move");
});

test("changing the profile of a person with a webhook keeps the webhook", async () => {
  const { token: gus } = await person("gus@example.com");
  const set = await call("PUT", "/api/me/profile/webhook", { token: gus, body: { url: `${hooks}/gus` } });
  assert.equal(set.status, 200, set.text);
  const changed = await call("PATCH", "/api/me/profile", { token: gus, body: { quiet_start: "22:00", quiet_end: "07:00", email: false } });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.channels.webhook_url, `${hooks}/gus`);
  assert.equal(changed.body.quiet_start, "22:00");
  // The secret shown when the webhook was set still signs.
  const event = await createEvent(gus, { title: "Feed the cat", due_at: today() });
  await runReminders();
  const [hook] = postedTo("/gus");
  assert.ok(hook && signedWith(set.body.secret, hook.headers["mailroom-signature"], hook.body), JSON.stringify(hook));
  assert.equal(JSON.parse(hook.body).event.id, event.id);
});

test("without REMINDER_SENDER the email channel fails, naming it, and webhooks still go", async () => {
  const { token: ida } = await person("ida@example.com", { email: true });
  const set = await call("PUT", "/api/me/profile/webhook", { token: ida, body: { url: `${hooks}/ida` } });
  assert.equal(set.status, 200, set.text);
  const event = await createEvent(ida, { title: "Book the flight", due_at: today() });
  await runReminders();
  assert.equal(postedTo("/ida").length, 1);
  const byChannel = Object.fromEntries((await getEvent(ida, event.id)).deliveries.map((each) => [each.channel, each]));
  assert.equal(byChannel.webhook?.outcome, "delivered", JSON.stringify(byChannel));
  assert.equal(byChannel.email?.outcome, "failed", JSON.stringify(byChannel));
  assert.match(byChannel.email.last_error, /REMINDER_SENDER/);
  assert.equal(node.sentMail().length, 0, "nothing reached the send_email binding");
});

test("with REMINDER_SENDER the email channel hands one message to the send_email binding for the person's own address", async () => {
  // Its own node: REMINDER_SENDER is the node's configuration.
  const sending = await startNode({ vars: { REMINDER_SENDER: SENDER } });
  try {
    const { call: ask, token: adminToken } = await setUp(sending);
    const { token: eve } = await deskOf(ask, adminToken).colleague({ email: "eve@example.com", name: "Eve", password: "eve's long enough password" });
    assert.equal((await ask("PATCH", "/api/me/profile", { token: eve, body: { tz: ZONE, email: true } })).status, 200);
    const created = await ask("POST", "/api/me/events", { token: eve, body: { title: "Renew the passport", due_at: today(), subtitle: "Bring two photos" } });
    assert.equal(created.status, 201, created.text);
    const event = created.body;

    await sending.scheduled(REMINDERS_CRON);
    let sent = [];
    for (let attempt = 0; attempt < 40 && sent.length === 0; attempt++) {
      sent = sending.sentMail();
      if (!sent.length) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(sent.length, 1, sending.output().slice(-4000));
    const [message] = sent;
    assert.match(message, /^From: "?Mailroom reminders"? <reminders@mailroom\.test>/m);
    assert.match(message, /^To: <?eve@example\.com>?\r?$/m);
    assert.match(message, /^Subject: Today: Renew the passport\r?$/m);
    assert.match(message, /Bring two photos/);
    // A machine wrote it: auto-responders leave it unanswered (RFC 3834).
    assert.match(message, /^Auto-Submitted: auto-generated\r?$/m);
    assert.match(message, /^Date: \w{3}, \d{1,2} \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}\r?$/m);
    // The mail service writes the Message-ID itself, as in mail-browser-sending.test.mjs: one, at the sending domain.
    assert.equal(message.match(/^Message-ID: <[^>\s]+@mailroom\.test>\r?$/gm)?.length, 1, message);

    const shown = (await ask("GET", `/api/me/events/${event.id}`, { token: eve })).body;
    assert.deepEqual(
      shown.deliveries.map(({ channel, state, outcome }) => ({ channel, state, outcome })),
      [{ channel: "email", state: "today", outcome: "delivered" }],
    );
    await sending.scheduled(REMINDERS_CRON);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(sending.sentMail().length, 1, "once");
  } finally {
    await sending.stop();
  }
});

const MODERN = "2026-07-28";

/** The official MCP client, connected with `credential`, in the initialize era unless `modern`. */
async function connect(credential, { modern = false } = {}) {
  const client = new Client({ name: "mailroom-reminders-e2e", version: "1.0.0" }, modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => credential }, fetch: checkedFetch }),
  );
  assert.equal(client.getProtocolEra(), modern ? "modern" : "legacy");
  return client;
}

test("an agent creates, reschedules, acknowledges and closes its person's event over MCP, and nothing else", async () => {
  const { person: ben, token: benToken } = await person("ben@example.com");
  const { token: cyToken } = await person("cy@example.com");
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Reminders bot", sponsor: ben.id, capabilities: ["reminders.read", "reminders.manage"] },
  });
  assert.equal(minted.status, 201, minted.text);
  const { agent, credential } = minted.body;

  const client = await connect(credential);
  const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
  for (const name of ["list_events", "get_event", "create_event", "update_event", "delete_event", "mark_done", "reopen_event", "mark_ack", "get_profile", "update_profile"]) {
    assert.ok(names.includes(name), `${name} is offered: ${names}`);
  }
  for (const name of ["push_event", "withdraw_event", "set_reminder_webhook", "remove_reminder_webhook", "create_reminder_source", "list_messages"]) {
    assert.ok(!names.includes(name), `${name} is not offered: ${names}`);
  }

  const profile = await client.callTool({ name: "get_profile", arguments: {} });
  assert.equal(profile.isError, false, JSON.stringify(profile));
  assert.equal(profile.structuredContent.email, "ben@example.com", "the sponsor's profile");
  assert.equal(profile.structuredContent.tz, ZONE);

  const tomorrow = dayAfter(today(), 1);
  const created = await client.callTool({ name: "create_event", arguments: { title: "Call the embassy", due_at: `${tomorrow}T09:00` } });
  assert.equal(created.isError, false, JSON.stringify(created));
  const event = created.structuredContent;
  assert.equal(event.source, "manual");
  assert.equal(event.editable, true);
  assert.equal(event.state, "preparing", "due tomorrow, preparing since 30 days before");
  assert.match(event.id, /^evt_/);
  // In the sponsor's inbox, as one of their own.
  const inbox = await call("GET", "/api/me/events", { token: benToken });
  assert.equal(inbox.status, 200, inbox.text);
  const mine = inbox.body.events.find((each) => each.id === event.id);
  assert.equal(mine?.source, "manual", inbox.text);
  assert.equal(mine.title, "Call the embassy");

  const later = dayAfter(today(), 3);
  const rescheduled = await client.callTool({ name: "update_event", arguments: { event_id: event.id, due_at: later } });
  assert.equal(rescheduled.isError, false, JSON.stringify(rescheduled));
  assert.equal(rescheduled.structuredContent.due_at, later);
  assert.equal(rescheduled.structuredContent.id, event.id);
  assert.equal((await getEvent(benToken, event.id)).due_at, later, "the person sees the new due day");

  const acknowledged = await client.callTool({ name: "mark_ack", arguments: { event_id: event.id } });
  assert.equal(acknowledged.isError, false, JSON.stringify(acknowledged));
  assert.equal(acknowledged.structuredContent.acknowledged, true);
  assert.ok(acknowledged.structuredContent.quiet_until, "silenced until its next checkpoint");
  assert.equal(acknowledged.structuredContent.state, "preparing", "acknowledging is not done");

  const done = await client.callTool({ name: "mark_done", arguments: { event_id: event.id } });
  assert.equal(done.isError, false, JSON.stringify(done));
  assert.equal(done.structuredContent.state, "done");
  assert.equal(done.structuredContent.closed_as, "Done");

  const open = await client.callTool({ name: "list_events", arguments: {} });
  assert.ok(!open.structuredContent.events.some((each) => each.id === event.id), "closed events leave the open list");
  const archive = await client.callTool({ name: "list_events", arguments: { archive: true } });
  assert.equal(archive.isError, false, JSON.stringify(archive));
  const closed = archive.structuredContent.events.find((each) => each.id === event.id);
  assert.equal(closed?.closed_as, "Done", JSON.stringify(archive.structuredContent));
  assert.equal(closed.state, "done");
  assert.equal(closed.source, "manual");

  // The agent takes its Done back, and closes it again.
  const reopened = await client.callTool({ name: "reopen_event", arguments: { event_id: event.id } });
  assert.equal(reopened.isError, false, JSON.stringify(reopened));
  assert.equal(reopened.structuredContent.state, "preparing", "open again, as its moments say");
  assert.equal((await getEvent(benToken, event.id)).closed_as ?? null, null, "the person sees it open");
  assert.equal((await client.callTool({ name: "mark_done", arguments: { event_id: event.id } })).isError, false);

  // Another source's event: the refusal names the source, which would overwrite an edit.
  const source = await call("POST", "/api/reminder-sources", { token, body: { name: "embassy-portal" } });
  assert.equal(source.status, 201, source.text);
  const pushed = await call("PUT", "/api/source/events", {
    token: source.body.credential,
    body: { person: "ben@example.com", source_ref: "visa-4471", topic: "interview", title: "Visa interview", due_at: later },
  });
  assert.equal(pushed.status, 200, pushed.text);
  const refused = await client.callTool({ name: "update_event", arguments: { event_id: pushed.body.id, title: "Mine now" } });
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.equal(refused.structuredContent.error.code, "other_sources_event");
  assert.match(refused.structuredContent.error.message + refused.structuredContent.error.reason, /embassy-portal/);
  assert.match(refused.content[0].text, /embassy-portal/);
  assert.equal((await getEvent(benToken, pushed.body.id)).title, "Visa interview", "unchanged");
  // It may still close it.
  const ack = await client.callTool({ name: "mark_ack", arguments: { event_id: pushed.body.id } });
  assert.equal(ack.structuredContent.acknowledged, true, JSON.stringify(ack));

  // Someone else's event does not exist for it.
  const cys = await createEvent(cyToken, { title: "Cy's dentist", due_at: tomorrow });
  for (const [name, args] of [["get_event", {}], ["mark_done", {}], ["update_event", { title: "Gotcha" }]]) {
    const answer = await client.callTool({ name, arguments: { event_id: cys.id, ...args } });
    assert.equal(answer.isError, true, `${name}: ${JSON.stringify(answer)}`);
    assert.equal(answer.structuredContent.error.code, "not_found", name);
  }
  const untouched = await getEvent(cyToken, cys.id);
  assert.equal(untouched.state, "preparing");
  assert.equal(untouched.title, "Cy's dentist");
  await client.close();

  // The stateless era offers and answers the same.
  const modern = await connect(credential, { modern: true });
  const modernNames = (await modern.listTools()).tools.map((tool) => tool.name).sort();
  assert.deepEqual(modernNames, names);
  const listed = await modern.callTool({ name: "list_events", arguments: { archive: true } });
  assert.ok(listed.structuredContent.events.some((each) => each.id === event.id && each.closed_as === "Done"));
  await modern.close();

  // The audit names the agent acting for its sponsor, over MCP.
  const entries = (await call("GET", "/api/audit?limit=200", { token })).body.entries;
  const recorded = entries.find((entry) => entry.action === "create_event" && entry.object === event.id);
  assert.equal(recorded?.actor, agent.id, JSON.stringify(recorded));
  assert.equal(recorded.delegator, ben.id);
  assert.equal(recorded.surface, "mcp");
});

test("a source upserts and withdraws its own events only, its credential opens nothing else, and dies when revoked", async () => {
  const { token: dan } = await person("dan@example.com");
  const office = await call("POST", "/api/reminder-sources", { token, body: { name: "visa-office" } });
  assert.equal(office.status, 201, office.text);
  assert.match(office.body.credential, /^mr_src_/);
  const visas = office.body.credential;
  const bank = (await call("POST", "/api/reminder-sources", { token, body: { name: "bank" } })).body;
  const listed = await call("GET", "/api/reminder-sources", { token });
  assert.ok(listed.body.sources.some((each) => each.id === office.body.source.id));
  assert.ok(!listed.text.includes("mr_src_"), "the credential is shown once");

  const push = (credential, body) => call("PUT", "/api/source/events", { token: credential, body });
  const key = { person: "Dan@Example.com", source_ref: "visa-4471", topic: "renewal" };
  const due = dayAfter(today(), 20);
  const first = await push(visas, { ...key, title: "Visa renewal", due_at: due });
  assert.equal(first.status, 200, first.text);
  const id = first.body.id;
  assert.equal(first.body.source, "visa-office");
  assert.equal(first.body.editable, false);
  assert.equal(first.body.state, "preparing");

  // The same key updates the one event.
  const renamed = await push(visas, { ...key, title: "Visa renewal (passport ready)", due_at: due });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.id, id);
  assert.equal(renamed.body.title, "Visa renewal (passport ready)");
  const inbox = (await call("GET", "/api/me/events", { token: dan })).body.events;
  assert.deepEqual(inbox.map((each) => [each.id, each.title]), [[id, "Visa renewal (passport ready)"]]);

  // Done by the person; the same due_at leaves it done; a new one reopens it.
  assert.equal((await call("POST", `/api/me/events/${id}/done`, { token: dan })).body.state, "done");
  const same = await push(visas, { ...key, title: "Visa renewal (passport ready)", due_at: due, subtitle: "Counter 3" });
  assert.equal(same.body.state, "done", same.text);
  assert.equal(same.body.subtitle, "Counter 3");
  const later = dayAfter(today(), 60);
  const reopened = await push(visas, { ...key, title: "Visa renewal (passport ready)", due_at: later });
  assert.equal(reopened.status, 200, reopened.text);
  assert.equal(reopened.body.id, id);
  assert.equal(reopened.body.state, "scheduled", "reopened, and 60 days out it is before its fire_at");
  assert.equal(reopened.body.closed_as, null);
  assert.equal(reopened.body.due_at, later);

  // The person cannot edit it; the refusal names the source.
  const edit = await call("PATCH", `/api/me/events/${id}`, { token: dan, body: { title: "Mine" } });
  assertRefusal(assert, edit, 403, "other_sources_event");
  assert.match(edit.text, /visa-office/);

  // The bank, with the same key, reaches only its own event.
  const banks = await push(bank.credential, { ...key, title: "Card expires", due_at: due });
  assert.equal(banks.status, 200, banks.text);
  assert.notEqual(banks.body.id, id);
  assert.equal(banks.body.source, "bank");
  const withdraw = (credential) =>
    call("DELETE", `/api/source/events?person=dan%40example.com&source_ref=visa-4471&topic=renewal`, { token: credential });
  const bankWithdrew = await withdraw(bank.credential);
  assert.equal(bankWithdrew.status, 200, bankWithdrew.text);
  assert.equal(bankWithdrew.body.id, banks.body.id);
  assert.equal(bankWithdrew.body.state, "withdrawn");
  assert.equal((await getEvent(dan, id)).state, "scheduled", "the bank withdrew its own, not the office's");

  const withdrawn = await withdraw(visas);
  assert.equal(withdrawn.status, 200, withdrawn.text);
  assert.equal(withdrawn.body.id, id);
  assert.equal(withdrawn.body.state, "withdrawn");
  assert.equal(withdrawn.body.closed_as, "Withdrawn");
  const archive = (await call("GET", "/api/me/events?archive=true", { token: dan })).body.events;
  assert.ok(archive.some((each) => each.id === id && each.closed_as === "Withdrawn"), JSON.stringify(archive));
  assertRefusal(assert, await call("DELETE", "/api/source/events?person=dan%40example.com&source_ref=nothing&topic=", { token: visas }), 404, "not_found");

  // Each credential on its own side only.
  assertRefusal(assert, await push(dan, { ...key, title: "Forged", due_at: due }), 403, "sources_only");
  assertRefusal(assert, await call("GET", "/api/me", { token: visas }), 403, "source_only_pushes");
  assertRefusal(assert, await call("GET", "/api/me/events", { token: visas }), 403, "source_only_pushes");

  // Every push and the withdrawal are the source's own in the audit chain.
  const entries = (await call("GET", "/api/audit?limit=200", { token })).body.entries;
  const mine = entries.filter((entry) => entry.object === id && entry.actor === office.body.source.id);
  assert.deepEqual(
    mine.map((entry) => entry.action).sort(),
    ["push_event", "push_event", "push_event", "push_event", "withdraw_event"],
    JSON.stringify(mine),
  );
  for (const entry of mine) {
    assert.equal(entry.delegator ?? null, null, "no one behind a source");
    assert.equal(entry.outcome, "ok");
  }

  // Revoked: its next push is refused as a dead credential, the events stay.
  const revoked = await call("POST", `/api/reminder-sources/${office.body.source.id}/revoke`, { token });
  assert.equal(revoked.status, 200, revoked.text);
  assert.ok(revoked.body.revoked_at);
  const dead = await push(visas, { ...key, title: "Visa renewal", due_at: due });
  assertRefusal(assert, dead, 401, "source_revoked");
  assert.match(dead.headers.get("www-authenticate") ?? "", /invalid_token/);
  assertRefusal(assert, await call("POST", `/api/reminder-sources/${office.body.source.id}/revoke`, { token }), 409, "source_revoked");
  assert.equal((await getEvent(dan, id)).state, "withdrawn");
});

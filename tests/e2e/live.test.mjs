// Listening on real workerd: people open WebSockets on a mailbox and on their
// own data, through the Worker, to the Durable Object hub of that topic. Mail
// received through the email handler, a colleague's change over REST and a
// person's own change each reach the listeners as frames of ids and kinds,
// never content; who is reading or writing a reply where is told to the
// others on a mailbox; a stranger, a person without the relation and a request that
// is not an upgrade are refused with the route's own answers; revoking the
// relation and signing out close the affected streams within a second, with
// the close codes a client acts on; one caller's flood of streams is capped;
// opening and closing are on the audit record.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, assertRefusal } from "./harness.mjs";
import { ok, personNamed, startDesk } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
const CUSTOMER = "ana@customer.example";
const SECRET_SUBJECT = "Quarterly numbers, not for listeners";
// The node's cap on one caller's streams on one topic (src/live/listener.rs).
const MAXIMUM_STREAMS_PER_CALLER = Number(/MAXIMUM_STREAMS_PER_CALLER: usize = (\d+);/.exec(readFileSync(join(ROOT, "src", "live", "listener.rs"), "utf8"))[1]);
// How often a hub asks its listeners again of its own accord (src/live/listener.rs).
const RECHECK_EVERY_MS = Number(/RECHECK_EVERY_MS: i64 = ([\d_]+);/.exec(readFileSync(join(ROOT, "src", "live", "listener.rs"), "utf8"))[1].replaceAll("_", ""));

let node, call, token, desk, mailbox, ben, cleo, dee;
const opened = [];

function message(id) {
  return (
    `From: Ana Lima <${CUSTOMER}>\r\nTo: Support <${SUPPORT}>\r\nSubject: ${SECRET_SUBJECT}\r\n` +
    `Message-ID: <${id}>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: text/plain; charset=utf-8\r\n\r\nThe body stays in the mailbox.\r\n`
  );
}

/**
 * A stream opened with `bearer` on `path`: `next(kind)` waits for the first
 * frame of that kind not yet taken, `closed` settles with `{ code, reason }`.
 */
function listen(path, bearer) {
  const socket = new WebSocket(`${node.url.replace("http", "ws")}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
  opened.push(socket);
  const frames = [];
  const waiting = [];
  socket.addEventListener("message", (event) => {
    frames.push(JSON.parse(event.data));
    for (const wake of waiting.splice(0)) wake();
  });
  const open = new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", () => reject(new Error(`the stream on ${path} did not open`)), { once: true });
  });
  const closed = new Promise((resolve) => socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason }), { once: true }));
  async function next(kind, within = 5000) {
    const deadline = Date.now() + within;
    for (;;) {
      const index = frames.findIndex((frame) => frame.kind === kind);
      if (index >= 0) return frames.splice(index, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${kind} on ${path} within ${within} ms; heard ${JSON.stringify(frames)}`);
      await new Promise((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, left);
      });
    }
  }
  return { socket, open, closed, frames, next };
}

/** The HTTP answer to a WebSocket upgrade on `path`, as a client that is refused sees it. */
function upgradeAnswer(path, bearer) {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(node.url);
    const headers = { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const sent = httpRequest({ hostname, port, path, headers });
    sent.on("upgrade", (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode, body: null });
    });
    sent.on("response", (response) => {
      let text = "";
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode, body: JSON.parse(text || "null"), text }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

/** Waits up to three seconds for `condition`, asked again and again, or fails naming `what`. */
async function waitUntilAsync(condition, what) {
  const deadline = Date.now() + 3000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} took over three seconds`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits up to a second for `condition`, or fails naming `what`. */
async function waitUntil(condition, what) {
  const deadline = Date.now() + 1000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} took over a second`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

before(async () => {
  ({ node, call, token, desk } = await startDesk({ vars: { FEATURE_AGENT_NETWORK: "true" } }));
  mailbox = await desk.mailbox(SUPPORT, "Support");
  ben = await desk.colleague(personNamed("Ben"), ["mailbox.metadata.read"], mailbox.id);
  cleo = await desk.colleague(personNamed("Cleo"), ["mailbox.metadata.read", "send.propose"], mailbox.id);
  dee = await desk.colleague(personNamed("Dee"));
});

after(async () => {
  for (const socket of opened) socket.close();
  await node?.stop();
});

test("mail received and a colleague's change reach a mailbox's listeners as ids and kinds, never content", async () => {
  const benHears = listen(`/api/mailboxes/${mailbox.id}/live`, ben.token);
  const cleoHears = listen(`/api/mailboxes/${mailbox.id}/live`, cleo.token);
  await Promise.all([benHears.open, cleoHears.open]);

  assert.equal(await node.deliver(CUSTOMER, SUPPORT, message("numbers@customer.example")), null);
  const received = await benHears.next("receive_mail");
  assert.deepEqual(Object.keys(received).sort(), ["at", "kind", "object", "topic"], "a frame is ids and kinds");
  assert.match(received.object, /^rcp_/);
  assert.equal(received.topic, `mailbox:${mailbox.id}`);
  assert.equal(JSON.stringify(received).includes("Quarterly"), false, "no content in a frame");
  assert.deepEqual(await cleoHears.next("receive_mail"), received, "every listener hears the same frame");

  const threads = await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: ben.token }));
  const thread = threads.threads[0];
  await ok(call("PATCH", `/api/mailboxes/${mailbox.id}/threads/${thread.id}`, { token: cleo.token, body: { status: "waiting" } }));
  const changed = await benHears.next("update_thread");
  assert.equal(changed.object, thread.id);
  await ok(call("PUT", `/api/mailboxes/${mailbox.id}/threads/${thread.id}/read`, { token: ben.token }));
  assert.equal((await cleoHears.next("mark_thread_read")).object, thread.id, "a colleague's read mark is heard too");
  benHears.socket.close();
  cleoHears.socket.close();
});

test("a stranger, a person without the relation and a request that is no upgrade are refused by the route itself", async () => {
  const path = `/api/mailboxes/${mailbox.id}/live`;
  const stranger = await upgradeAnswer(path);
  assert.equal(stranger.status, 401, stranger.text);
  const outsider = await upgradeAnswer(path, dee.token);
  assert.ok([403, 404].includes(outsider.status), outsider.text);
  assert.ok(outsider.body?.error?.code, "a refusal in four parts");
  assertRefusal(assert, await call("GET", path, { token: ben.token }), 426, "upgrade_required");
  const deeHears = listen(path, dee.token);
  await assert.rejects(deeHears.open, /did not open/);
});

test("a person's own changes reach their own stream, and nobody else's", async () => {
  const benOwn = listen("/api/me/live", ben.token);
  const cleoOwn = listen("/api/me/live", cleo.token);
  await Promise.all([benOwn.open, cleoOwn.open]);
  const event = await ok(call("POST", "/api/me/events", { token: ben.token, body: { title: "Renew the passport", due_at: "2027-06-30" } }), 201);
  const created = await benOwn.next("create_event");
  assert.equal(created.object, event.id ?? event.event?.id);
  assert.match(created.topic, /^person:usr_/);
  await assert.rejects(cleoOwn.next("create_event", 700), /no create_event/, "Cleo hears nothing of Ben's");
  benOwn.socket.close();
  cleoOwn.socket.close();
});

test("who is reading or writing a reply where is told to the others on the mailbox, to one who joins later, and gone idle on leaving", async () => {
  const [fay, gus, hal] = [
    await desk.colleague(personNamed("Fay"), ["mailbox.metadata.read"], mailbox.id),
    await desk.colleague(personNamed("Gus"), ["mailbox.metadata.read"], mailbox.id),
    await desk.colleague(personNamed("Hal"), ["mailbox.metadata.read"], mailbox.id),
  ];
  const thread = (await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: fay.token }))).threads[0];
  const path = `/api/mailboxes/${mailbox.id}/live`;
  const fayHears = listen(path, fay.token);
  const gusHears = listen(path, gus.token);
  await Promise.all([fayHears.open, gusHears.open]);

  // What is not presence is not read, and tells nobody anything.
  for (const frame of ["hello", JSON.stringify({ presence: "writing", object: "rcp_01J00000000000000000000000" }), JSON.stringify({ presence: "shouting", object: thread.id })]) {
    fayHears.socket.send(frame);
  }
  fayHears.socket.send(JSON.stringify({ presence: "writing", object: thread.id }));
  const writing = await gusHears.next("presence");
  assert.deepEqual([writing.actor, writing.actor_name, writing.activity, writing.object, writing.topic], [fay.id, "Fay", "writing", thread.id, `mailbox:${mailbox.id}`]);
  assert.equal(gusHears.frames.length, 0, "nothing else reached Gus");
  fayHears.socket.send(JSON.stringify({ presence: "writing", object: thread.id }));
  assert.equal(fayHears.frames.some((frame) => frame.kind === "presence"), false, "Fay is not told of herself");

  const halHears = listen(path, hal.token);
  const already = await halHears.next("presence");
  assert.deepEqual([already.actor, already.activity], [fay.id, "writing"], "one who joins is told who is already writing");

  // Fay reads in a second tab: she is still writing, as far as the others go.
  const faySecondTab = listen(path, fay.token);
  await faySecondTab.open;
  faySecondTab.socket.send(JSON.stringify({ presence: "reading", object: thread.id }));
  // Her first tab stops writing, and reads: now she reads.
  fayHears.socket.send(JSON.stringify({ presence: "reading", object: thread.id }));
  assert.deepEqual(await presenceOf(gusHears, fay.id), ["reading", thread.id], "told once she no longer writes anywhere, and not of the second tab's reading before");

  // One tab moves to another conversation: she still reads the first in the other tab.
  assert.equal(await node.deliver(CUSTOMER, SUPPORT, message("second-thread@customer.example")), null);
  const other = (await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: fay.token }))).threads.find((listed) => listed.id !== thread.id);
  faySecondTab.socket.send(JSON.stringify({ presence: "writing", object: other.id }));
  assert.deepEqual(await presenceOf(gusHears, fay.id), ["writing", other.id]);
  // The first tab closes: she has left the first conversation, not the second.
  fayHears.socket.close(1000, "done");
  assert.deepEqual(await presenceOf(gusHears, fay.id), ["idle", thread.id]);
  // An idle for a conversation a stream is not in changes nothing.
  faySecondTab.socket.send(JSON.stringify({ presence: "idle", object: thread.id }));
  faySecondTab.socket.close(1000, "done");
  assert.deepEqual(await presenceOf(gusHears, fay.id), ["idle", other.id]);
  assert.equal(gusHears.frames.filter((frame) => frame.kind === "presence").length, 0, "nothing more was told of Fay");
  gusHears.socket.close();
  halHears.socket.close();
});

/** The next presence `stream` is told of `actor`: [activity, conversation]. */
async function presenceOf(stream, actor) {
  for (;;) {
    const told = await stream.next("presence");
    if (told.actor === actor) return [told.activity, told.object];
  }
}

test("revoking the relation closes that person's stream within a second (4403), and signing out closes theirs (4401)", async () => {
  const benHears = listen(`/api/mailboxes/${mailbox.id}/live`, ben.token);
  const cleoHears = listen(`/api/mailboxes/${mailbox.id}/live`, cleo.token);
  const cleoOwn = listen("/api/me/live", cleo.token);
  await Promise.all([benHears.open, cleoHears.open, cleoOwn.open]);

  const revoked = Date.now();
  await ok(call("POST", "/api/relations/revoke", { token, body: { subject: ben.id, relation: "mailbox.metadata.read", object: mailbox.id } }));
  const farewell = await benHears.next("stream_closed", 1000);
  assert.equal(farewell.code, 4403, JSON.stringify(farewell));
  assert.ok(Date.now() - revoked < 1000, "within a second of the revocation");
  await waitUntil(() => benHears.socket.readyState !== WebSocket.OPEN, "the node closing the stream");
  // Cleo still holds the relation: her stream stays and still hears the mailbox.
  assert.equal(await node.deliver(CUSTOMER, SUPPORT, message("after-revoke@customer.example")), null);
  await cleoHears.next("receive_mail");
  assert.equal(benHears.frames.length, 0, "nothing reached the revoked listener after its close");

  await ok(call("DELETE", "/api/sessions/current", { token: cleo.token }));
  for (const stream of [cleoHears, cleoOwn]) {
    assert.equal((await stream.next("stream_closed", 1000)).code, 4401);
    await waitUntil(() => stream.socket.readyState !== WebSocket.OPEN, "the node closing a signed-out stream");
  }
});

test("a session that ends with nobody acting (no event tells it) closes its streams at the hub's own check, within a minute (4401)", async () => {
  const eli = await desk.colleague(personNamed("Eli"), ["mailbox.metadata.read"], mailbox.id);
  const eliHears = listen(`/api/mailboxes/${mailbox.id}/live`, eli.token);
  const eliOwn = listen("/api/me/live", eli.token);
  await Promise.all([eliHears.open, eliOwn.open]);
  // Straight into the database, as a lapse would be: no route, so no event.
  await node.sql(`UPDATE sessions SET revoked_at = 1 WHERE person_id = '${eli.id}'`);
  const ended = Date.now();
  for (const stream of [eliHears, eliOwn]) {
    const farewell = await stream.next("stream_closed", RECHECK_EVERY_MS + 15_000);
    assert.equal(farewell.code, 4401, JSON.stringify(farewell));
  }
  assert.ok(Date.now() - ended < RECHECK_EVERY_MS + 15_000);
});

test("an agent is woken by a message waiting in its inbox, the asker by its answer, and a paused agent's stream is closed", async () => {
  const messenger = async (name) => {
    const minted = await ok(call("POST", "/api/agents", { token, body: { name, sponsor: ben.id, capabilities: ["agent.messaging"], mailboxes: [] } }), 201);
    return { id: minted.agent.id, credential: minted.credential };
  };
  const [asker, answerer] = [await messenger("Asker"), await messenger("Answerer")];
  const askerHears = listen("/api/agent-inbox/live", asker.credential);
  const answererHears = listen("/api/agent-inbox/live", answerer.credential);
  await Promise.all([askerHears.open, answererHears.open]);

  const sent = await ok(call("POST", "/api/agent-messages", { token: asker.credential, body: { recipient: answerer.id, kind: "request", content: "37 + 58?", idempotency_key: "live-sum" } }), 202);
  const waiting = await answererHears.next("send_agent_message");
  assert.deepEqual([waiting.object, waiting.topic], [sent.id, `agent:${answerer.id}`]);
  const [claimed] = (await ok(call("POST", "/api/agent-inbox/leases", { token: answerer.credential, body: { max: 1 } }))).messages;
  await ok(call("POST", `/api/agent-inbox/${claimed.id}/reply`, { token: answerer.credential, body: { fencing_token: claimed.fencing_token, content: "95" } }));
  assert.equal((await askerHears.next("reply_to_agent_message")).object, claimed.id);

  await ok(call("POST", `/api/agents/${answerer.id}/pause`, { token: ben.token }));
  assert.equal((await answererHears.next("stream_closed", 1000)).code, 4403, "paused: it may not read its inbox now");
  assert.equal(askerHears.socket.readyState, WebSocket.OPEN, "the asker is not paused");
  askerHears.socket.close();
});

test("one person's flood of streams on a topic is capped: the one too many is told why and closed", async () => {
  const streams = Array.from({ length: MAXIMUM_STREAMS_PER_CALLER }, () => listen("/api/me/live", dee.token));
  await Promise.all(streams.map((stream) => stream.open));
  const tooMany = listen("/api/me/live", dee.token);
  const farewell = await tooMany.next("stream_closed", 2000);
  assert.equal(farewell.code, 4429, JSON.stringify(farewell));
  // The others still hear Dee's own changes.
  await ok(call("POST", "/api/me/events", { token: dee.token, body: { title: "Water the plants", due_at: "2027-01-31" } }), 201);
  await streams[0].next("create_event");
  for (const stream of streams) stream.socket.close(1000, "done");
});

test("opening and closing a stream are on the audit record, with who, on what and how it ended", async () => {
  const benOwn = listen("/api/me/live", ben.token);
  await benOwn.open;
  benOwn.socket.close(1000, "done");
  let entries;
  await waitUntilAsync(async () => {
    entries = await ok(call("GET", "/api/audit?limit=200", { token }));
    return entries.entries.some((entry) => entry.action === "stop_listening" && entry.actor === ben.id && entry.object === ben.id);
  }, "recording the close");
  const openings = entries.entries.filter((entry) => entry.action === "listen_to_mailbox" && entry.outcome === "ok");
  assert.ok(openings.some((entry) => entry.actor === ben.id && entry.object === mailbox.id), JSON.stringify(openings));
  const refused = entries.entries.filter((entry) => entry.action === "listen_to_mailbox" && entry.outcome === "refused");
  assert.ok(refused.some((entry) => entry.actor === dee.id), "a refused opening is recorded too");
  const closing = entries.entries.find((entry) => entry.action === "stop_listening" && entry.actor === ben.id);
  assert.equal(closing.detail?.code, 1000, JSON.stringify(closing));
  // Entries the hubs wrote keep the chain whole.
  assert.equal((await ok(call("GET", "/api/audit/verify", { token }))).intact, true);
});

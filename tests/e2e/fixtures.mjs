// What the end-to-end files set up alike, so each file states only what its
// tests are about: a desk (a node set up by its administrator, who adds the
// mailboxes, the people and what they hold), and a receiver on this machine
// for what the node or a page sends out (a webhook, an OAuth redirect, a
// message's attempt to load something).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startNode, setUp } from "./harness.mjs";

/** The body of the API answer `promise` gives, after asserting its status (200 by default). */
export async function ok(promise, status = 200) {
  const answer = await promise;
  assert.equal(answer.status, status, answer.text);
  return answer.body;
}

/** A person's sign-up as the desk makes them: `name`, `name@example.com` in lower case, `password`. */
export const personNamed = (name, password = "a long enough password") => ({ name, email: `${name.toLowerCase()}@example.com`, password });

/**
 * What the administrator (`token`) adds to a desk, each asserted made:
 * `mailbox(address, displayName)`, `person({ name, email, password })`,
 * `grant(subject, relations, object)` (each relation in order, on a mailbox's
 * id or "org"), `signIn({ email, password })` (an access token), and
 * `colleague(who, relations, object)`: a person holding `relations` on
 * `object`, signed in, as the person with their `token`.
 */
export function deskOf(call, token) {
  const desk = {
    mailbox: (address, display_name) => ok(call("POST", "/api/mailboxes", { token, body: { address, display_name } }), 201),
    person: (who) => ok(call("POST", "/api/people", { token, body: who }), 201),
    async grant(subject, relations, object) {
      for (const relation of relations) await ok(call("POST", "/api/relations", { token, body: { subject, relation, object } }), 201);
    },
    signIn: async ({ email, password }) => (await ok(call("POST", "/api/sessions", { body: { email, password } }), 201)).session.access_token,
    async colleague(who, relations = [], object = undefined) {
      const person = await desk.person(who);
      await desk.grant(person.id, relations, object);
      return { ...person, token: await desk.signIn(who) };
    },
  };
  return desk;
}

/**
 * The audit trail as an administrator (`token`) reads it, newest first: the
 * organisation's chain and every mailbox's segment of it (what is done to
 * mail kept in the mailbox's own database), the newest `limit` of each,
 * merged by time (decision 0040).
 */
export async function auditTrail(call, token, limit = 100) {
  const entries = [...(await ok(call("GET", `/api/audit?limit=${limit}`, { token }))).entries];
  for (const mailbox of (await ok(call("GET", "/api/mailboxes/all", { token }))).mailboxes) {
    entries.push(...(await ok(call("GET", `/api/audit?limit=${limit}&mailbox_id=${mailbox.id}`, { token }))).entries);
  }
  return entries.sort((one, other) => (one.at < other.at ? 1 : one.at > other.at ? -1 : 0));
}

/** How many messages mailbox `mailboxId` holds, paged through as `token` lists them. */
export async function messagesIn(call, token, mailboxId) {
  let count = 0;
  for (let cursor = ""; ; ) {
    const page = await ok(call("GET", `/api/mailboxes/${mailboxId}/messages?limit=100${cursor}`, { token }));
    count += page.messages.length;
    if (!page.next_cursor) return count;
    cursor = `&cursor=${encodeURIComponent(page.next_cursor)}`;
  }
}

/**
 * Starts a node (`startNode`'s options) and sets it up: `{ node, call, admin,
 * token, desk }`, where `desk` adds to it as the administrator (`deskOf`).
 */
export async function startDesk(options) {
  const node = await startNode(options);
  const { call, admin, token } = await setUp(node);
  return { node, call, admin, token, desk: deskOf(call, token) };
}

/**
 * `startDesk` with `people` (sign-ups keyed by a short name) added and signed
 * in: `{ node, call, admin, token, desk, made }`, where `made[key]` is each
 * person and `made[`${key}Token`]` their access token.
 */
export async function startDeskWith(people, options) {
  const started = await startDesk(options);
  const made = {};
  for (const [key, person] of Object.entries(people)) {
    made[key] = await started.desk.person(person);
    made[`${key}Token`] = await started.desk.signIn(person);
  }
  return { ...started, made };
}

/**
 * A server on 127.0.0.1 for what is sent out of the node or a page. It records
 * every request in `received`, in order, as `{ method, path, headers, body,
 * bytes, at }` once its body has arrived (`body` as UTF-8 text, `bytes` as
 * sent), and answers it with `answer(response, entry)`: by default 200 "ok";
 * an answer that never ends the response holds the request open until
 * `close()`. Answers `{ url, host, received, close }`, `url` being its origin.
 */
export async function startReceiver(answer = (response) => response.writeHead(200).end("ok")) {
  const received = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const bytes = Buffer.concat(chunks);
      const entry = { method: request.method, path: request.url, headers: request.headers, body: bytes.toString("utf8"), bytes, at: Date.now() };
      received.push(entry);
      answer(response, entry);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${server.address().port}`;
  return {
    url: `http://${host}`,
    host,
    received,
    /** Stops listening, letting go of every request still held open. */
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The messages `node` handed its send_email binding after the first `before`
 * of them, waiting up to ten seconds for one to arrive: a dispatch is made
 * after the approval's answer.
 */
export async function sentMailAfter(node, before = 0) {
  let sent = [];
  for (let attempt = 0; attempt < 40 && sent.length === 0; attempt++) {
    sent = node.sentMail().slice(before);
    if (!sent.length) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return sent;
}

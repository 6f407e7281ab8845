// The attacks of a security review, on real workerd and D1. Limits that hold
// under concurrency: an attempt is counted before its secret is checked, so of a
// hundred parallel guesses only those within the limit are ever checked, and the
// right secret sent among them past the limit is refused like the rest. Dual
// control that cannot be switched: an agent changing its submission over MCP
// after a person was shown it never gets the changed one approved. Mail that
// cannot bloat a mailbox: a message beyond what the node reads is refused, the
// rest is kept within the limits the contract publishes, so a page of the list or
// of a search has a ceiling computed from them, and an administrator can delete
// a received message with its search entries and its bytes in R2. And only
// the OAuth and MCP endpoints answer browser pages of other origins (CORS):
// nothing a session cookie reaches.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ADMIN, ROOT, assertRefusal } from "./harness.mjs";
import { startDesk, sentMailAfter } from "./fixtures.mjs";

const PASSWORD = "a long enough password";
let node, call, token, admin, desk, carol, carolToken;

before(async () => {
  // Messages as big as miniflare takes locally (1 MiB), for the bloat attack.
  ({ node, call, token, admin, desk } = await startDesk({ vars: { MAXIMUM_MESSAGE_BYTES: "1000000" } }));
  // Signed in before the guessing tests spend this address's sign-in window.
  ({ token: carolToken, ...carol } = await desk.colleague({ email: "carol@example.com", name: "Carol", password: PASSWORD }));
});
after(() => node?.stop());

/** How many of `responses` reached the secret check (answered `checked`) and how many were paused (429). */
function tally(responses, checked) {
  const codes = responses.map((response) => response.body?.error?.code ?? String(response.status));
  return { checked: codes.filter((code) => code === checked).length, paused: codes.filter((code) => code.startsWith("too_many")).length, codes };
}

test("a hundred parallel wrong passwords for one account from one address: at most ten are checked", async () => {
  const person = (await call("POST", "/api/people", { token, body: { email: "ben@example.com", name: "Ben", password: "ben's first long password" } })).body;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/sessions", { body: { email: person.email, password: `guess number ${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_email_or_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("in a burst of forty, the right password past the limit is refused like the guesses", async () => {
  const burst = Array.from({ length: 40 }, (_, index) => ({ email: ADMIN.email, password: index === 34 ? ADMIN.password : `guess ${index}` }));
  const answers = await Promise.all(burst.map((body) => call("POST", "/api/sessions", { body })));
  const { checked, paused } = tally(answers, "wrong_email_or_password");
  const signedIn = answers.filter((answer) => answer.status === 201).length;
  assert.ok(checked + signedIn <= 10, `${checked + signedIn} attempts were checked`);
  assert.ok(paused >= 30);
  // Which attempts got a slot depends on arrival order; the limit does not.
});

test("a hundred parallel wrong current passwords through one session: at most ten are checked", async () => {
  const session = token;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) =>
      call("POST", "/api/me/password", { token: session, body: { current_password: `guess ${index}`, new_password: "a new long password here" } }),
    ),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_current_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("a hundred parallel wrong pairing codes from one address: at most twenty are checked", async () => {
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/agents/pair", { body: { code: `mr_pair_guess_${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "pairing_code_invalid");
  assert.ok(checked <= 20, `${checked} codes were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
  assert.equal(admin.email, ADMIN.email);
});

test("an agent that switches its submission over MCP after the approver was shown it never has the switch approved", async () => {
  const mailbox = await desk.mailbox("billing@mailroom.test", "Billing");
  const dan = await desk.person({ email: "dan@example.com", name: "Dan", password: PASSWORD });
  await desk.grant(dan.id, ["send.propose"], mailbox.id);
  await desk.grant(carol.id, ["approval.decide"], mailbox.id);
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Billing bot", sponsor: dan.id, capabilities: ["mail.draft"], mailboxes: [{ mailbox: mailbox.id, relations: ["send.propose"] }] },
  });
  assert.equal(minted.status, 201, minted.text);
  const client = new Client({ name: "mailroom-security-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => minted.body.credential } }));
  try {
    const tool = async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      assert.ok(!result.isError, `${name}: ${JSON.stringify(result)}`);
      return result.structuredContent;
    };
    const draft = await tool("create_draft", { mailbox_id: mailbox.id, to: ["customer@example.org"], subject: "Invoice", text: "Invoice, 100 EUR." });
    const ids = { mailbox_id: mailbox.id, send_id: draft.id };
    await tool("submit_send", ids);

    // Carol is shown the submission; then the agent switches it.
    const shown = (await call("GET", "/api/approvals", { token: carolToken })).body.sends.find((send) => send.id === draft.id);
    assert.deepEqual(shown.to, ["customer@example.org"]);
    await tool("cancel_send", ids);
    await tool("update_draft", { ...ids, to: ["attacker@evil.example"], text: "Pay to this account instead." });
    const resubmitted = await tool("submit_send", ids);
    assert.notEqual(resubmitted.version, shown.version);

    const approve = `/api/mailboxes/${mailbox.id}/sends/${draft.id}/approve`;
    const refused = await call("POST", approve, { token: carolToken, body: { version: shown.version } });
    assertRefusal(assert, refused, 409, "send_changed");
    assert.match(refused.body.error.message, /the recipients, the text/);
    const sentBefore = node.sentMail().length;
    // Approving both at once, the shown version and the current one: only the current is sealed.
    const [stale, current] = await Promise.all([
      call("POST", approve, { token: carolToken, body: { version: shown.version } }),
      call("POST", approve, { token: carolToken, body: { version: resubmitted.version } }),
    ]);
    assert.equal(stale.status, 409, stale.text);
    assert.equal(current.status, 200, current.text);
    assert.equal(current.body.version, resubmitted.version);
    assert.deepEqual(current.body.to, ["attacker@evil.example"], "what Carol approved knowingly");
    for (let attempt = 0; attempt < 40 && node.sentMail().length === sentBefore; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(node.sentMail().length, sentBefore + 1, "one message: the version approved");
  } finally {
    await client.close();
  }
});

test("a Message-ID carrying a CR and a Bcc is never kept, and a reply to it leaves with no header it did not write", async () => {
  const mailbox = await desk.mailbox("help@mailroom.test", "Help");
  await desk.grant(admin.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"], mailbox.id);
  await desk.grant(carol.id, ["approval.decide"], mailbox.id);
  const hostile = [
    "From: Mallory <mallory@evil.example>",
    "To: help@mailroom.test",
    "Subject: Invoice",
    "Message-ID: <m@evil.example\rBcc: hidden@evil.example>",
    "References: <ok@evil.example> <r@evil.example\rBcc: also@evil.example>",
    "",
    "Please reply.",
    "",
  ].join("\r\n");
  assert.equal(await node.deliver("mallory@evil.example", "help@mailroom.test", Buffer.from(hostile)), null);
  const [received] = (await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token })).body.messages;
  const stored = (await call("GET", `/api/mailboxes/${mailbox.id}/messages/${received.id}`, { token })).body;
  assert.doesNotMatch(JSON.stringify(stored), /hidden@evil|also@evil|\\r/);

  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await call("POST", sends, { token, body: { to: ["mallory@evil.example"], subject: "Re: Invoice", text: "No.", reply_to: received.id } });
  assert.equal(draft.status, 201, draft.text);
  assert.ok(draft.body.references.includes("ok@evil.example"));
  const { version } = (await call("POST", `${sends}/${draft.body.id}/submit`, { token })).body;
  const sentBefore = node.sentMail().length;
  const approved = await call("POST", `${sends}/${draft.body.id}/approve`, { token: carolToken, body: { version } });
  assert.equal(approved.body.state, "dispatched", approved.text);
  const sent = await sentMailAfter(node, sentBefore);
  assert.equal(sent.length, 1);
  assert.doesNotMatch(sent[0], /^Bcc:/im);
  assert.doesNotMatch(sent[0], /hidden@evil|also@evil/);
  assert.match(sent[0], /^References: <ok@evil\.example>/m);
});

// ---- Inbound mail cannot bloat a mailbox (issue 11, item 3).

const BLOAT = "bloat@mailroom.test";
const schemas = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8")).components.schemas;
/** The limits as the contract publishes them. */
const published = {
  shown: schemas.MessageSummary.properties.to.maxItems,
  subject: schemas.MessageSummary.properties.subject.maxLength,
  address: schemas.EmailAddress.properties.address.maxLength,
  name: schemas.EmailAddress.properties.name.maxLength,
  snippet: schemas.SearchHit.properties.snippet.maxLength,
};
/** The most bytes a string of `characters` takes in JSON: each escaped at worst (`\u0001`), and its quotes. */
const jsonText = (characters) => 6 * characters + 2;
/** The most bytes a page of `count` summaries (or search hits) takes in JSON, from the published limits alone. */
function pageCeiling(count, hits) {
  const address = jsonText(published.address) + jsonText(published.name) + 20;
  const summary = 2 * jsonText(40) + address * (1 + 2 * published.shown) + jsonText(published.subject) + 2 * jsonText(30) + 100 + 200;
  return count * (summary + (hits ? jsonText(published.snippet) + 40 : 0) + 1) + 100;
}

/** A message `to` To recipients wide, with a long subject and names, and one word of 20,000 letters in its text. */
function wide(messageId, to) {
  const recipients = Array.from({ length: to }, (_, n) => `u${n}@bloat.example`).join(", ");
  return Buffer.from([
    `From: "${"F".repeat(600)}" <flood@evil.example>`,
    `To: ${recipients}`,
    `Cc: "${"C".repeat(600)}" <cc@evil.example>`,
    `Subject: ${messageId} ${"Bloat ".repeat(500)}`,
    `Message-ID: <${messageId}@evil.example>`,
    "Date: Fri, 27 Nov 2026 09:15:00 +0000",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `needle ${"a".repeat(20_000)} needle`,
    "",
  ].join("\r\n"));
}

test("inbound mail cannot bloat a mailbox: refused beyond the limits, kept within them, every page bounded, deletable", async () => {
  const mailbox = await desk.mailbox(BLOAT, "Bloat");
  await desk.grant(admin.id, ["mailbox.metadata.read", "mailbox.content.read", "message.export"], mailbox.id);

  // The attack as it was found: 30,000 To addresses, some 540 KB of header. Refused, stored nowhere.
  const attack = wide("attack", 30_000);
  assert.ok(attack.length > 500_000, `${attack.length} bytes`);
  assert.match(await node.deliver("flood@evil.example", BLOAT, attack), /^552 5\.3\.4 /);
  // MIME parts nested past the limit: refused, and the isolate does not fall over.
  const deep = Buffer.from(["From: a@evil.example", `To: ${BLOAT}`, "Subject: deep", "Message-ID: <deep@evil.example>", ...Array(150).fill("Content-Type: message/rfc822\r\n\r\nSubject: inner"), "Content-Type: text/plain", "", "hi", ""].join("\r\n"));
  assert.match(await node.deliver("a@evil.example", BLOAT, deep), /^554 5\.6\.0 /);
  const list = () => call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token });
  assert.deepEqual((await list()).body.messages, [], "refused mail is stored nowhere");

  // Just within the header limit, eight times over: kept, cut to the limits.
  const kept = Array.from({ length: 8 }, (_, n) => wide(`kept${n}`, 20_000));
  for (const raw of kept) assert.equal(await node.deliver("flood@evil.example", BLOAT, raw), null);
  const page = await list();
  assert.equal(page.status, 200);
  assert.equal(page.body.messages.length, 8);
  for (const summary of page.body.messages) {
    assert.equal(summary.to.length, published.shown);
    assert.equal(summary.to_count, 20_000);
    assert.equal([...summary.subject].length, published.subject);
  }
  assert.ok(page.text.length <= pageCeiling(8, false), `the list answered ${page.text.length} bytes for eight messages`);
  for (const q of ["bloat", "needle", "a*"]) {
    const found = await call("GET", `/api/search?q=${encodeURIComponent(q)}`, { token });
    assert.equal(found.status, 200, found.text);
    assert.equal(found.body.results.length, 8, q);
    assert.ok(found.text.length <= pageCeiling(8, true), `${q}: the search answered ${found.text.length} bytes`);
  }
  const one = page.body.messages.find((summary) => summary.subject.startsWith("kept3 "));
  const message = await call("GET", `/api/mailboxes/${mailbox.id}/messages/${one.id}`, { token });
  assert.equal(message.body.to.length, schemas.Message.properties.to.maxItems);
  assert.equal(message.body.cc[0].name.length, published.name);

  // An administrator deletes one: its receipt, its search entries and its bytes in R2 go.
  const key = `raw/${mailbox.id}/${one.id}`;
  assert.equal(await node.hasObject(key), true, "the original is in R2");
  const deleted = await call("DELETE", `/api/mailboxes/${mailbox.id}/messages/${one.id}`, { token });
  assert.equal(deleted.status, 200, deleted.text);
  assert.deepEqual(deleted.body, { id: one.id, mailbox_id: mailbox.id, original: "deleted" });
  assert.equal(await node.hasObject(key), false, "the original is gone from R2");
  for (const suffix of ["", "/body", "/original"]) {
    assertRefusal(assert, await call("GET", `/api/mailboxes/${mailbox.id}/messages/${one.id}${suffix}`, { token }), 404, "not_found");
  }
  assert.deepEqual((await call("GET", "/api/search?q=kept3", { token })).body.results, [], "no search finds it");
  assert.equal((await list()).body.messages.length, 7);
  assertRefusal(assert, await call("DELETE", `/api/mailboxes/${mailbox.id}/messages/${one.id}`, { token }), 404, "not_found");
  const entry = (await call("GET", "/api/audit?limit=5", { token })).body.entries.find((row) => row.action === "delete_message");
  assert.equal(entry?.object, one.id);
});

test("a browser client of another origin (the MCP Inspector) is answered its preflights and may read the OAuth and MCP answers", async () => {
  const inspector = "http://localhost:6274";
  for (const [path, methods] of [["/mcp", "POST, OPTIONS"], ["/oauth/token", "POST, OPTIONS"], ["/.well-known/oauth-authorization-server", "GET, OPTIONS"]]) {
    const asked = await fetch(`${node.url}${path}`, {
      method: "OPTIONS",
      headers: { origin: inspector, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, mcp-protocol-version" },
    });
    assert.equal(asked.status, 204, path);
    assert.equal(asked.headers.get("access-control-allow-origin"), "*", path);
    assert.equal(asked.headers.get("access-control-allow-methods"), methods, path);
    assert.match(asked.headers.get("access-control-allow-headers"), /authorization.*content-type.*mcp-protocol-version/, path);
  }
  const challenged = await fetch(`${node.url}/mcp`, {
    method: "POST",
    headers: { origin: inspector, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(challenged.status, 401);
  assert.equal(challenged.headers.get("access-control-allow-origin"), "*");
  assert.match(challenged.headers.get("access-control-expose-headers"), /www-authenticate/);
  // Nothing a session cookie reaches is opened to other origins.
  const teams = await fetch(`${node.url}/api/teams`, { method: "OPTIONS", headers: { origin: inspector, "access-control-request-method": "POST" } });
  assert.equal(teams.status, 405);
  assert.equal(teams.headers.get("access-control-allow-origin"), null);
});

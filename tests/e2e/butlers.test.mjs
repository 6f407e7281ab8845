// Butlers on real workerd: an administrator builds one over REST, dry-runs it
// over a past delivery from their own session with the official MCP client
// (which changes nothing in D1), publishes it, and watches it act on the next
// message delivered through the Worker's email handler, audited as the butler
// for its sponsor, its assignee told as a person's would be. An effect that
// could not apply (an assignee who lost the relation, a reply with nowhere
// outside the node to go, a webhook that failed) is recorded as such, in the
// audit chain and the dry run, never as done. D1 itself keeps a published
// version as published. An agent is never offered the dry run.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createHmac } from "node:crypto";
import { checkedFetch } from "./harness.mjs";
import { auditTrail, startDesk, startReceiver, personNamed } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";

let node, call, token, admin, desk, mailbox, ben, cleo;

function message(id, subject) {
  return (
    `From: Ana Lima <ana@customer.example>\r\nTo: Support <${SUPPORT}>\r\nSubject: ${subject}\r\n` +
    `Message-ID: <${id}>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello.\r\n`
  );
}

async function deliver(id, subject) {
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, message(id, subject)), null);
  const listed = await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token });
  return listed.body.messages.find((received) => received.subject === subject);
}

async function connect(bearer) {
  const client = new Client({ name: "mailroom-butlers", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), {
    authProvider: { token: async () => bearer },
    fetch: checkedFetch,
  });
  await client.connect(transport);
  return client;
}

async function threadOf(receipt) {
  const listed = await call("GET", `/api/mailboxes/${mailbox.id}/threads?limit=100`, { token });
  return listed.body.threads.find((thread) => thread.subject === receipt.subject);
}

async function rows(sql) {
  return (await node.sql(sql))[0];
}

before(async () => {
  ({ node, call, token, admin, desk } = await startDesk());
  mailbox = await desk.mailbox(SUPPORT, "Support");
  const person = async (name) => {
    const created = await desk.person(personNamed(name));
    await desk.grant(created.id, ["mailbox.metadata.read", "send.propose"], mailbox.id);
    return created;
  };
  ben = await person("Ben");
  cleo = await person("Cleo");
  // The administrator reads the mailbox's conversations to watch.
  await desk.grant(admin.id, ["mailbox.metadata.read"], mailbox.id);
});
after(() => node?.stop());

test("an administrator builds a butler, dry-runs it over a past message, publishes it and watches it act", async () => {
  const past = await deliver("past@customer.example", "Invoice 4471");
  const created = await call("POST", `/api/mailboxes/${mailbox.id}/butlers`, {
    token,
    body: {
      name: "Invoices to Cleo",
      sponsor: ben.id,
      rules: {
        conditions: [{ on: "subject", contains: "invoice" }],
        effects: [{ do: "assign", assignee: cleo.id }, { do: "set_status", status: "waiting" }],
      },
    },
  });
  assert.equal(created.status, 201, created.text);
  const butler = created.body;

  // The dry run, from the administrator's own session over MCP: offered, and
  // it changes nothing in D1 (not even the audit chain).
  const before = await rows("SELECT (SELECT COUNT(*) FROM audit_entries) AS audited, (SELECT COUNT(*) FROM butler_runs) AS runs, (SELECT COUNT(*) FROM mail_threads WHERE assignee IS NOT NULL) AS assigned");
  const admin = await connect(token);
  const { tools } = await admin.listTools();
  const names = tools.map((listed) => listed.name);
  assert.ok(names.includes("simulate_butler"), names.join(", "));
  assert.ok(!names.includes("publish_butler"), "publishing is an operator's act");
  const simulated = await admin.callTool({
    name: "simulate_butler",
    arguments: { mailbox_id: mailbox.id, butler_id: butler.id, receipt_id: past.id },
  });
  assert.ok(!simulated.isError, JSON.stringify(simulated.content));
  const run = simulated.structuredContent;
  assert.equal(run.matched, true);
  assert.equal(run.conditions[0].found, "Invoice 4471");
  assert.deepEqual(run.effects.map((effect) => effect.would_run), [true, true]);
  assert.match(run.effects[1].outcome, /waiting/);
  assert.deepEqual(await rows("SELECT (SELECT COUNT(*) FROM audit_entries) AS audited, (SELECT COUNT(*) FROM butler_runs) AS runs, (SELECT COUNT(*) FROM mail_threads WHERE assignee IS NOT NULL) AS assigned"), before);
  await admin.close();

  const published = await call("POST", `/api/mailboxes/${mailbox.id}/butlers/${butler.id}/publish`, { token, body: { version: 1 } });
  assert.equal(published.status, 200, published.text);
  assert.deepEqual(published.body.versions[0].pinned_relations, ["mailbox.metadata.read", "send.propose"]);

  const next = await deliver("next@customer.example", "Re: invoice 4472");
  const thread = await threadOf(next);
  assert.equal(thread.assignee, cleo.id, JSON.stringify(thread));
  assert.equal(thread.assignee_name, "Cleo");
  assert.equal(thread.status, "waiting");
  const untouched = await threadOf(await deliver("lunch@customer.example", "Lunch?"));
  assert.equal(untouched.assignee, undefined);

  const audit = (await auditTrail(call, token, 200));
  const acts = audit.filter((entry) => entry.action === "butler_effect");
  assert.equal(acts.length, 2, JSON.stringify(acts));
  for (const act of acts) {
    assert.equal(act.actor, butler.id);
    assert.equal(act.actor_kind, "butler");
    assert.equal(act.delegator, ben.id);
  }
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true);
});

test("the butler's assignee is told as when a person assigns; one who no longer works the mailbox is skipped, with why, and never recorded as done", async () => {
  const cleoToken = await desk.signIn(personNamed("Cleo"));
  const benToken = await desk.signIn(personNamed("Ben"));
  const feed = async (bearer) => (await call("GET", "/api/me/notifications", { token: bearer })).body.notifications;
  const told = (await feed(cleoToken)).find((item) => item.kind === "conversation_assigned");
  assert.ok(told, "Cleo was told of the butler's assignment");
  assert.equal(told.title, "Re: invoice 4472");
  assert.equal(told.actor_name, "Invoices to Cleo");

  const butler = (await call("GET", `/api/mailboxes/${mailbox.id}/butlers`, { token })).body.butlers.find((each) => each.name === "Invoices to Cleo");
  const revoked = await call("POST", "/api/relations/revoke", { token, body: { subject: cleo.id, relation: "send.propose", object: mailbox.id } });
  assert.equal(revoked.status, 200, revoked.text);
  try {
    const receipt = await deliver("lost@customer.example", "Invoice 4473");
    assert.equal((await threadOf(receipt)).assignee, undefined);
    const acts = (await auditTrail(call, token, 50))
      .filter((entry) => entry.action === "butler_effect" && entry.detail.receipt === receipt.id);
    const assigning = acts.find((entry) => entry.detail.effect.do === "assign");
    assert.equal(assigning.outcome, "skipped", JSON.stringify(acts));
    assert.match(assigning.detail.outcome, new RegExp(`${cleo.id} does not work the mailbox`));
    assert.equal(acts.find((entry) => entry.detail.effect.do === "set_status").outcome, "ok");
    const skipped = (await feed(benToken)).find((item) => item.kind === "butler_effect_skipped");
    assert.match(skipped?.detail ?? "", /does not work the mailbox/);
    const run = await call("POST", `/api/mailboxes/${mailbox.id}/butlers/${butler.id}/simulate`, { token, body: { receipt_id: receipt.id } });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.effects[0].would_run, false);
    assert.match(run.body.effects[0].outcome, /does not work the mailbox/);
  } finally {
    await call("POST", "/api/relations", { token, body: { subject: cleo.id, relation: "send.propose", object: mailbox.id } });
  }
});

test("D1 refuses deleting a published butler version or moving when it was published", async () => {
  const [version] = await node.sql("SELECT butler_id, version, published_at FROM butler_versions WHERE published_at IS NOT NULL LIMIT 1");
  const where = `butler_id = '${version.butler_id}' AND version = ${version.version}`;
  for (const change of [`DELETE FROM butler_versions WHERE ${where}`, `UPDATE butler_versions SET published_at = published_at + 1 WHERE ${where}`]) {
    await assert.rejects(node.sql(change), (error) => /butler_version_published/.test(`${error.message}${error.stdout}${error.stderr}`), change);
  }
  assert.deepEqual(await node.sql(`SELECT published_at FROM butler_versions WHERE ${where}`), [{ published_at: version.published_at }]);
});

test("an agent is never offered the dry run, and cannot call it", async () => {
  const minted = await call("POST", "/api/agents", {
    token,
    body: {
      name: "Reader",
      sponsor: ben.id,
      capabilities: ["mail.triage"],
      mailboxes: [{ mailbox: mailbox.id, relations: ["mailbox.metadata.read"] }],
    },
  });
  assert.equal(minted.status, 201, minted.text);
  const agent = await connect(minted.body.credential);
  const { tools } = await agent.listTools();
  assert.ok(!tools.some((listed) => listed.name.includes("butler")), tools.map((listed) => listed.name).join(", "));
  const refused = await call("GET", `/api/mailboxes/${mailbox.id}/butlers`, { token: minted.body.credential });
  assert.equal(refused.status, 403, refused.text);
  await agent.close();
});

test("a published butler posts a delivery's metadata, signed, to its webhook on this machine", async () => {
  const receiver = await startReceiver();
  const { received } = receiver;
  try {
    const created = await call("POST", `/api/mailboxes/${mailbox.id}/butlers`, {
      token,
      body: {
        name: "Refunds to the ledger",
        sponsor: ben.id,
        rules: { conditions: [{ on: "subject", contains: "refund" }], effects: [{ do: "notify_webhook", url: `${receiver.url}/mail` }] },
      },
    });
    assert.equal(created.status, 201, created.text);
    const secret = created.body.webhook_secret;
    assert.match(secret, /^whsec_[0-9a-f]{64}$/);
    const path = `/api/mailboxes/${mailbox.id}/butlers/${created.body.id}`;
    assert.equal((await call("POST", `${path}/publish`, { token, body: { version: 1 } })).status, 200);
    const receipt = await deliver("refund-1@customer.example", "Refund for order 88");
    assert.equal(received.length, 1, "posted before the email handler answered");
    const [timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(received[0].headers["mailroom-signature"]).slice(1);
    assert.equal(createHmac("sha256", secret).update(`${timestamp}.${received[0].body}`).digest("hex"), signature);
    const posted = JSON.parse(received[0].body);
    assert.equal(posted.receipt, receipt.id);
    assert.equal(posted.subject, "Refund for order 88");
    assert.ok(!received[0].body.includes("Hello."), "never the message's text");
  } finally {
    await receiver.close();
  }
  // Nobody listens there now: the post fails once the delivery is stored, and is recorded so.
  const unheard = await deliver("refund-2@customer.example", "Refund for order 89");
  const acts = (await auditTrail(call, token, 50))
    .filter((entry) => entry.action === "butler_effect" && entry.detail.receipt === unheard.id);
  assert.deepEqual(acts.map((entry) => entry.outcome).sort(), ["failed", "ok"], JSON.stringify(acts));
  assert.match(acts.find((entry) => entry.outcome === "failed").detail.outcome, /^failed: http:\/\/127\.0\.0\.1:\d+\/mail /);
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true);
});

test("a butler's webhook inside a network is refused naming its field, and one stored before the rule is never posted", async () => {
  const butlers = `/api/mailboxes/${mailbox.id}/butlers`;
  const notifying = (url) => ({ conditions: [{ on: "subject", contains: "inward" }], effects: [{ do: "notify_webhook", url }] });
  for (const [url, range] of [
    ["https://169.254.169.254/latest/meta-data/", "a link-local address (169.254.0.0/16"],
    ["https://0xa9.0xfe.0xa9.0xfe/latest/meta-data/", "(read as `169.254.169.254`)"],
    ["https://[::ffff:192.168.1.1]/hook", "the IPv4-mapped form of a private address (192.168.0.0/16)"],
    ["https://[fe80::1]/hook", "a link-local address (fe80::/10)"],
    ["https://vault.internal/hook", "(.internal)"],
  ]) {
    const refused = await call("POST", butlers, { token, body: { name: "Inward", sponsor: ben.id, rules: notifying(url) } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, "invalid_body");
    assert.ok(refused.body.error.reason.startsWith("`rules.effects[0].url`: its host"), refused.text);
    assert.ok(refused.body.error.reason.includes(range), `${url}: ${refused.body.error.reason}`);
  }
  // A draft written before the rule (stored as it was), then published: the
  // delivery is stored and the post is refused just before it would leave.
  const created = await call("POST", butlers, { token, body: { name: "Old rule", sponsor: ben.id, rules: notifying("https://hooks.example.org/in") } });
  assert.equal(created.status, 201, created.text);
  await node.sql(`UPDATE butler_versions SET rules_json = replace(rules_json, 'https://hooks.example.org/in', 'https://169.254.169.254/latest') WHERE butler_id = '${created.body.id}'`);
  assert.equal((await call("POST", `${butlers}/${created.body.id}/publish`, { token, body: { version: 1 } })).status, 200);
  const receipt = await deliver("inward-1@customer.example", "An inward hook");
  assert.ok(receipt, "the delivery stands");
  // Refused before it leaves, and recorded as the failure it is: in the audit and the log.
  let refusedPost;
  for (let attempt = 0; attempt < 20 && !refusedPost; attempt++) {
    refusedPost = (await auditTrail(call, token, 50))
      .find((entry) => entry.action === "butler_effect" && entry.detail.receipt === receipt.id && entry.outcome === "failed");
    if (!refusedPost) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(refusedPost, node.output().slice(-3000));
  assert.match(refusedPost.detail.outcome, /^failed: https:\/\/169\.254\.169\.254\/latest may not be posted to: its host `169\.254\.169\.254` is a link-local address/);
  assert.ok(node.output().includes(`butler ${created.body.id}: its webhook failed: https://169.254.169.254/latest may not be posted to`), node.output().slice(-3000));
});

test("a butler's drafted reply waits, submitted in its sponsor's name, for a second person", async () => {
  const created = await call("POST", `/api/mailboxes/${mailbox.id}/butlers`, {
    token,
    body: {
      name: "Acknowledge quotes",
      sponsor: ben.id,
      rules: { conditions: [{ on: "subject", contains: "quote" }], effects: [{ do: "draft_reply", text: "Thank you: we will answer {subject} today." }] },
    },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal((await call("POST", `/api/mailboxes/${mailbox.id}/butlers/${created.body.id}/publish`, { token, body: { version: 1 } })).status, 200);
  const receipt = await deliver("quote-1@customer.example", "Quote for 40 chairs");
  // The administrator decides on the mailbox's sends, so sees them.
  await desk.grant(admin.id, ["approval.decide"], mailbox.id);
  const sends = (await call("GET", `/api/mailboxes/${mailbox.id}/sends?limit=100`, { token })).body.sends;
  const reply = sends.find((send) => send.reply_to === receipt.id);
  assert.equal(reply.state, "submitted");
  assert.equal(reply.author, ben.id);
  assert.equal(reply.text, "Thank you: we will answer Quote for 40 chairs today.");
  assert.equal(reply.in_reply_to, "quote-1@customer.example");
  assert.equal(node.sentMail().length, 0, "nothing left the node");

  // A Reply-To naming the mailbox itself would answer it: the reply goes to the From.
  const reflected = `From: Ana Lima <ana@customer.example>\r\nReply-To: ${SUPPORT.toUpperCase()}\r\nTo: Support <${SUPPORT}>\r\n` +
    `Subject: Quote for 2 desks\r\nMessage-ID: <quote-2@customer.example>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello.\r\n`;
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, reflected), null);
  // From the mailbox itself, with no other address: no reply, and why.
  const looping = `From: Support <${SUPPORT}>\r\nTo: Support <${SUPPORT}>\r\n` +
    `Subject: Quote for 3 lamps\r\nMessage-ID: <quote-3@customer.example>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello.\r\n`;
  assert.equal(await node.deliver(SUPPORT, SUPPORT, looping), null);
  const listed = (await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token })).body.messages;
  const answered = (await call("GET", `/api/mailboxes/${mailbox.id}/sends?limit=100`, { token })).body.sends;
  const to = (subject) => answered.find((send) => send.reply_to === listed.find((received) => received.subject === subject).id)?.to;
  assert.deepEqual(to("Quote for 2 desks"), ["Ana Lima <ana@customer.example>"]);
  assert.equal(to("Quote for 3 lamps"), undefined);
  const lamps = listed.find((received) => received.subject === "Quote for 3 lamps").id;
  const skipped = (await auditTrail(call, token, 50)).find((entry) => entry.action === "butler_effect" && entry.detail.receipt === lamps);
  assert.equal(skipped.outcome, "skipped");
  assert.match(skipped.detail.outcome, /this node's own \(support@mailroom\.test\)/);
});

test("a butler files a copy in another mailbox its sponsor reads, where it joins its conversation", async () => {
  const billing = await desk.mailbox("billing@mailroom.test", "Billing");
  await desk.grant(admin.id, ["mailbox.metadata.read", "mailbox.content.read"], billing.id);
  await desk.grant(ben.id, ["mailbox.content.read"], mailbox.id);
  const created = await call("POST", `/api/mailboxes/${mailbox.id}/butlers`, {
    token,
    body: { name: "Receipts to billing", sponsor: ben.id, rules: { conditions: [{ on: "subject", contains: "receipt" }], effects: [{ do: "forward", mailbox: billing.id }] } },
  });
  assert.equal(created.status, 201, created.text);
  const publish = () => call("POST", `/api/mailboxes/${mailbox.id}/butlers/${created.body.id}/publish`, { token, body: { version: 1 } });
  const refused = await publish();
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.body.error.code, "sponsor_lacks");
  assert.match(refused.body.error.message, new RegExp(billing.id));
  await desk.grant(ben.id, ["mailbox.content.read"], billing.id);
  assert.equal((await publish()).status, 200);

  await deliver("receipt-1@customer.example", "Receipt 1");
  const reply = `From: Ana Lima <ana@customer.example>\r\nTo: Support <${SUPPORT}>\r\nSubject: Re: Receipt 1\r\n` +
    `Message-ID: <receipt-2@customer.example>\r\nIn-Reply-To: <receipt-1@customer.example>\r\nDate: Tue, 1 Dec 2026 10:00:00 +0000\r\n` +
    `Content-Type: text/plain\r\n\r\nThe corrected receipt.\r\n`;
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, reply), null);
  const threads = (await call("GET", `/api/mailboxes/${billing.id}/threads`, { token })).body.threads;
  assert.equal(threads.length, 1, JSON.stringify(threads));
  const thread = (await call("GET", `/api/mailboxes/${billing.id}/threads/${threads[0].id}`, { token })).body;
  const copies = thread.entries.map((entry) => entry.received);
  assert.deepEqual(copies.map((copy) => copy.subject), ["Receipt 1", "Re: Receipt 1"]);
  assert.ok(copies.every((copy) => copy.filed_by === created.body.id));
  assert.equal(copies[1].text.trim(), "The corrected receipt.");
  // Its original is the one delivered, in R2, under billing's own key: each
  // mailbox's receipts refer to their own copy of the bytes.
  await desk.grant(admin.id, ["message.export"], billing.id);
  const original = await call("GET", `/api/mailboxes/${billing.id}/messages/${copies[0].id}/original`, { token });
  assert.equal(original.status, 200);
  assert.match(original.text, /Message-ID: <receipt-1@customer\.example>/);
  // (Each receipt's key naming its own mailbox is held natively, where a
  // mailbox's own database can be read: tests/native/moving_delivery.rs.)
  const audit = (await auditTrail(call, token, 100)).filter((entry) => entry.actor === created.body.id);
  assert.deepEqual(audit.map((entry) => entry.outcome), ["ok", "ok"]);
});

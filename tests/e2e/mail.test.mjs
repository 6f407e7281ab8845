// Mail on real workerd: inbound through the Worker's email handler (the path
// Cloudflare Email Routing takes), reading on the metadata/content line, search,
// and a reply sent under dual control to the send_email binding.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, assertRefusal, checkedFetch } from "./harness.mjs";
import { auditTrail, startDesk, sentMailAfter } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
const FALLBACK = "postmaster@fallback.example";
// The only destination the send_email binding accepts, as Email Routing allows
// only verified destinations: mail to anyone else fails, as it would deployed.
const ALLOWED = "ana@customer.example";
const fixture = (name) => readFileSync(join(ROOT, "tests", "fixtures", "mail", `${name}.eml`));
let node, call, token, admin, mailbox;
const people = {};

before(async () => {
  let desk;
  ({ node, call, token, admin, desk } = await startDesk({ vars: { INBOUND_FALLBACK_ADDRESS: FALLBACK }, sendEmail: { allowed_destination_addresses: [ALLOWED] } }));
  mailbox = await desk.mailbox(SUPPORT, "Support");
  await desk.mailbox("billing@mailroom.test", "Billing");
  for (const [name, relations] of [
    ["meta", ["mailbox.metadata.read"]],
    ["writer", ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]],
    ["approver", ["mailbox.metadata.read", "mailbox.content.read", "approval.decide"]],
    ["exporter", ["mailbox.metadata.read", "mailbox.content.read", "message.export"]],
  ]) {
    const { id, token } = await desk.colleague({ email: `${name}@example.com`, name, password: `${name} has a long password` }, relations, mailbox.id);
    people[name] = { id, token };
  }
});
after(() => node?.stop());

const messages = (who) => call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token: people[who].token });
const message = (who, id, suffix = "") => call("GET", `/api/mailboxes/${mailbox.id}/messages/${id}${suffix}`, { token: people[who].token });

test("real messages arrive through the email handler and are parsed", async () => {
  for (const name of ["plain", "multipart-attachment", "html-only", "latin1", "encoded-headers"]) {
    assert.equal(await node.deliver("sender@outside.example", SUPPORT, fixture(name)), null, name);
  }
  const listed = (await messages("meta")).body.messages;
  assert.equal(listed.length, 5);
  const bySubject = Object.fromEntries(listed.map((item) => [item.subject, item]));
  assert.ok(bySubject["Confirmación de pedido"], "ISO-8859-1 encoded word decoded");
  assert.ok(bySubject["Вопрос по счёту — urgent"], "UTF-8 encoded words decoded");
  assert.equal(bySubject["Signed contract attached"].attachment_count, 1);

  const contract = (await message("writer", bySubject["Signed contract attached"].id)).body;
  assert.deepEqual(contract.attachments, [{ index: 0, name: "contract.pdf", content_type: "application/pdf", size: 78 }]);
  const pdf = await checkedFetch(`${node.url}/api/mailboxes/${mailbox.id}/messages/${contract.id}/attachments/0`, {
    headers: { authorization: `Bearer ${people.writer.token}` },
  });
  assert.equal(pdf.headers.get("content-disposition"), 'attachment; filename="contract.pdf"');
  assert.ok(Buffer.from(await pdf.arrayBuffer()).subarray(0, 8).equals(Buffer.from("%PDF-1.4")));

  const html = (await message("writer", bySubject["Quarterly update"].id, "/body")).body;
  assert.equal(html.text_source, "html");
  assert.match(html.text, /Revenue grew by twelve percent/);
  const latin = (await message("writer", bySubject["Confirmación de pedido"].id, "/body")).body;
  assert.match(latin.text, /El pedido está confirmado/);

  const original = await checkedFetch(`${node.url}/api/mailboxes/${mailbox.id}/messages/${bySubject["Where is my invoice?"].id}/original`, {
    headers: { authorization: `Bearer ${people.exporter.token}` },
  });
  assert.equal(original.status, 200);
  assert.equal(original.headers.get("content-type"), "message/rfc822");
  assert.ok(Buffer.from(await original.arrayBuffer()).equals(fixture("plain")), "the original, byte for byte, from R2");
});

test("Japanese and Chinese mail is decoded by the runtime's TextDecoder, not left as escapes", async () => {
  // The Worker carries no charset tables of its own (decision 0025): this is
  // the test that the runtime decodes each of these for the Worker as
  // encoding_rs decodes them natively (tests/native/mail.rs).
  const address = "asia@mailroom.test";
  const asia = (await call("POST", "/api/mailboxes", { token, body: { address, display_name: "Asia" } })).body;
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read"]) {
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation, object: asia.id } });
  }
  const expected = {
    "iso-2022-jp": ["会議の確認", "山田太郎", "明日の会議は午後三時からです。よろしくお願いします。"],
    "shift-jis": ["請求書の送付について", "鈴木花子", "今月分の請求書を添付いたします。ご確認ください。"],
    gb18030: ["发货时间确认", "王小明", "您好，请确认订单的发货时间。谢谢！"],
    big5: ["會議時間變更", "陳大文", "明天的會議改到下午四點。"],
  };
  for (const name of Object.keys(expected)) {
    assert.equal(await node.deliver("sender@outside.example", address, fixture(name)), null, name);
  }
  const listed = (await call("GET", `/api/mailboxes/${asia.id}/messages`, { token })).body.messages;
  assert.equal(listed.length, Object.keys(expected).length);
  for (const [name, [subject, sender, text]] of Object.entries(expected)) {
    const item = listed.find((candidate) => candidate.subject === subject);
    assert.ok(item, `${name}: subject decoded; the node has ${JSON.stringify(listed.map((each) => each.subject))}`);
    const metadata = (await call("GET", `/api/mailboxes/${asia.id}/messages/${item.id}`, { token })).body;
    assert.equal(metadata.from.name, sender, name);
    const body = (await call("GET", `/api/mailboxes/${asia.id}/messages/${item.id}/body`, { token })).body;
    assert.equal(body.text.trimEnd(), text, name);
  }
});

test("unknown recipients, oversized and repeated messages", async () => {
  const before = (await messages("meta")).body.messages.length;
  const unknown = await node.deliver("sender@outside.example", "nobody@mailroom.test", fixture("reply"));
  assert.match(unknown, /^550 5\.1\.1 /);
  const padding = "x".repeat(200_001);
  const huge = Buffer.concat([fixture("reply").subarray(0, -2), Buffer.from(`\r\n${padding}\r\n`)]);
  assert.match(await node.deliver("sender@outside.example", SUPPORT, huge), /^552 5\.3\.4 /);
  assert.equal((await messages("meta")).body.messages.length, before, "rejected mail is stored nowhere");
  assert.equal(await node.deliver("sender@outside.example", SUPPORT, fixture("plain")), null, "a repeat is accepted");
  assert.equal((await messages("meta")).body.messages.length, before, "and stored once");

  assert.equal(await node.deliver("sender@outside.example", "billing@mailroom.test", fixture("multipart-attachment")), null);
  const billing = (await call("GET", "/api/mailboxes/all", { token })).body.mailboxes.find((box) => box.address === "billing@mailroom.test");
  await call("POST", "/api/relations", { token, body: { subject: admin.id, relation: "mailbox.metadata.read", object: billing.id } });
  const inBilling = (await call("GET", `/api/mailboxes/${billing.id}/messages`, { token })).body.messages;
  assert.equal(inBilling.length, 1, "a message to two mailboxes makes one receipt in each");
});

test("a sender is authenticated only for the From it shows, and a reused Message-ID is kept, marked and recorded", async () => {
  /** A message as Email Routing hands it over: its trace and stamp on top. */
  const routed = ({ id, from = "CEO <ceo@customer.example>", stamp = "", trace = "09:00:00", headers = "", subject = "Transfer", body = "Wire it today." }) =>
    `Received: from mail.outside.example by mx.cloudflare.net; Tue, 1 Dec 2026 ${trace} +0000\r\n` +
    (stamp ? `Authentication-Results: mx.cloudflare.net; ${stamp}\r\n` : "") +
    `${headers}From: ${from}\r\nTo: Support <${SUPPORT}>\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\n` +
    `Date: Tue, 1 Dec 2026 09:00:00 +0000\r\n\r\n${body}\r\n`;
  const passFor = (domain) => `dkim=pass header.d=${domain}; dmarc=pass header.from=${domain}; spf=pass smtp.mailfrom=ceo@${domain}`;
  const received = async (raw) => {
    assert.equal(await node.deliver("ceo@outside.example", SUPPORT, raw), null);
    return (await messages("meta")).body.messages[0];
  };
  // The attack: the stamp passes the attacker's domain, the From shows the customer's.
  const attack = await received(routed({ id: "t1@evil.example", stamp: passFor("evil.example") }));
  assert.equal(attack.sender_authentication, "unverified");
  const shown = (await message("meta", attack.id)).body;
  assert.equal(shown.authentication.basis, "pass_for_another_domain");
  assert.equal(shown.authentication.verified_domain, "evil.example");
  assert.match(shown.authentication.detail, /evil\.example, not for customer\.example/);
  const genuine = await received(routed({ id: "t2@customer.example", stamp: passFor("customer.example"), subject: "Genuine" }));
  assert.equal(genuine.sender_authentication, "authenticated");
  // The same pass on two From lines, or on a From naming two addresses, vouches for nobody.
  const twoLines = await received(routed({ id: "t3@customer.example", stamp: passFor("customer.example"), headers: "From: Mallory <mallory@evil.example>\r\n", subject: "Two lines" }));
  assert.equal((await message("meta", twoLines.id)).body.authentication.basis, "several_from_lines");
  const twoAddresses = await received(routed({ id: "t4@customer.example", stamp: passFor("customer.example"), from: "ceo@customer.example, mallory@evil.example", subject: "Two addresses" }));
  assert.equal((await message("meta", twoAddresses.id)).body.authentication.basis, "several_from_addresses");
  assert.equal(twoAddresses.sender_authentication, "unverified");

  // The customer's server delivers the genuine one again (a new trace): kept once, recorded.
  const count = (await messages("meta")).body.messages.length;
  assert.equal(await node.deliver("ceo@customer.example", SUPPORT, routed({ id: "t2@customer.example", stamp: passFor("customer.example"), subject: "Genuine", trace: "09:07:00" })), null);
  assert.equal((await messages("meta")).body.messages.length, count, "not stored again");
  // Another message claiming its Message-ID, with other words: kept and marked, never dropped.
  const reusing = await received(routed({ id: "t2@customer.example", subject: "Genuine", body: "Pay account 1234 instead." }));
  assert.notEqual(reusing.id, genuine.id);
  const marked = (await message("meta", reusing.id)).body;
  assert.equal(marked.message_id, "t2@customer.example");
  assert.equal(marked.message_id_reused, true);
  assert.equal((await message("meta", genuine.id)).body.message_id_reused, undefined);
  const audit = (await auditTrail(call, token, 20)).filter((entry) => entry.action === "receive_mail");
  assert.ok(audit.some((entry) => entry.object === genuine.id && entry.detail.delivered_again === true), JSON.stringify(audit));
  assert.equal(audit.find((entry) => entry.object === reusing.id).detail.message_id_reused_from, genuine.id);
  await node.scheduled();
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true);
});

test("mail the node cannot store goes to the fallback address instead of bouncing", async () => {
  const before = (await messages("meta")).body.messages.length;
  // D1 cannot be read, as during an outage: the mailbox is not even found,
  // wherever its mail is kept.
  await node.sql("ALTER TABLE mailboxes RENAME TO mailboxes_during_outage");
  try {
    const mark = node.output().length;
    const raw = Buffer.from(fixture("plain").toString("latin1").replace("invoice-question-1@", "outage-1@"), "latin1");
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, raw), null, "not bounced");
    // The node logs what it did after the forward lands: wait for both lines.
    const logged = /could not store mail for support@mailroom\.test; forwarded it to/;
    let forwarded = null;
    for (let attempt = 0; attempt < 40 && !(forwarded && logged.test(node.output().slice(mark))); attempt++) {
      forwarded = /Email handler forwarded message with\s+rcptTo: (\S+)/.exec(node.output().slice(mark));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(forwarded?.[1], FALLBACK, node.output().slice(mark));
    assert.match(node.output().slice(mark), /could not store mail for support@mailroom\.test; forwarded it to postmaster@fallback\.example/);
  } finally {
    await node.sql("ALTER TABLE mailboxes_during_outage RENAME TO mailboxes");
  }
  assert.equal((await messages("meta")).body.messages.length, before, "nothing half-stored");
  // Rejections that are the sender's to fix still bounce.
  assert.match(await node.deliver("sender@outside.example", "nobody@mailroom.test", fixture("reply")), /^550 5\.1\.1 /);
});

test("metadata and content are separate, and content reads are audited", async () => {
  const [first] = (await messages("meta")).body.messages;
  assert.equal((await message("meta", first.id)).status, 200);
  assertRefusal(assert, await message("meta", first.id, "/body"), 403, "missing_relation");
  assertRefusal(assert, await message("writer", first.id, "/original"), 403, "missing_relation");
  assert.equal((await message("writer", first.id, "/body")).status, 200);
  const audit = (await auditTrail(call, token, 5));
  assert.ok(audit.some((entry) => entry.action === "get_message_body" && entry.actor === people.writer.id && entry.object === first.id));
});

test("search never reveals a body to a metadata reader", async () => {
  const metaHits = (await call("GET", "/api/search?q=4471", { token: people.meta.token })).body.results;
  assert.deepEqual(metaHits, [], "the term is only in a body");
  const contentHits = (await call("GET", "/api/search?q=4471", { token: people.writer.token })).body.results;
  assert.equal(contentHits.length, 1);
  assert.equal(contentHits[0].matched_in, "body");
  assert.match(contentHits[0].snippet, /\[4471\]/);
  const subjectHits = (await call("GET", "/api/search?q=invoice", { token: people.meta.token })).body.results;
  assert.equal(subjectHits[0].matched_in, "headers");
  assertRefusal(assert, await call("GET", "/api/search?q=%22open", { token: people.meta.token }), 400, "unclosed_quote");
  const hostile = await call("GET", "/api/search?q=NEAR(a%20b)%20OR%20c%3Ad", { token: people.meta.token });
  assert.equal(hostile.status, 200, hostile.text);
});

/** `text` as a quoted-printable body, as newsletters are sent: UTF-8, `=` escaped, lines softly broken. */
function quotedPrintable(text) {
  const escaped = (byte) => `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return text.split("\n").map((line) => {
    const tokens = [...Buffer.from(line, "utf8")].map((byte) => (byte === 61 || byte > 126 ? escaped(byte) : String.fromCharCode(byte)));
    const lines = [""];
    for (const token of tokens) {
      if (lines.at(-1).length + token.length > 72) lines.push("");
      lines[lines.length - 1] += token;
    }
    return lines.join("=\r\n");
  }).join("\r\n");
}

test("an HTML-only message is read as text with its paragraphs, and its HTML is handed out only when asked for", async () => {
  const html = [
    "<html><head><title>The Ledger</title><style>h1 { color: #c00 }</style></head><body>",
    '<div style="display:none">Revenue up, a new office&nbsp;&zwnj;&nbsp;&zwnj;</div>',
    '<table width="600"><tr><td><h1>Quarterly update</h1>',
    "<p>Revenue grew by <b>twelve</b> percent,",
    "   and we opened an office in Lisbon.</p>",
    "<p>What&rsquo;s next:</p><ul><li>A reporting tool</li><li>Two more hires</li></ul>",
    '<p><a href="https://letters.example/report">Read the full report</a></p></td></tr></table>',
    "</body></html>",
  ].join("\n");
  const raw = Buffer.from([
    "From: The Ledger <news@letters.example>",
    `To: ${SUPPORT}`,
    "Subject: The Ledger, November",
    "Date: Mon, 30 Nov 2026 07:00:00 +0000",
    "Message-ID: <ledger-november@letters.example>",
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    quotedPrintable(html),
    "",
  ].join("\r\n"));
  assert.equal(await node.deliver("news@letters.example", SUPPORT, raw), null);
  const listed = (await messages("meta")).body.messages;
  const ledger = listed.find((item) => item.subject === "The Ledger, November");
  const plain = listed.find((item) => item.subject === "Where is my invoice?");

  const body = (await message("writer", ledger.id, "/body")).body;
  assert.equal(body.text_source, "html");
  assert.equal(body.text, [
    "Quarterly update",
    "",
    "Revenue grew by twelve percent, and we opened an office in Lisbon.",
    "",
    "What’s next:",
    "",
    "• A reporting tool",
    "• Two more hires",
    "",
    "Read the full report",
  ].join("\n"), "paragraphs kept, not run together; what the message hides, its head and its style left out");
  assert.equal(body.html, undefined, "the HTML only when asked for");
  const found = (await call("GET", "/api/search?q=updateRevenue", { token: people.writer.token })).body.results;
  assert.deepEqual(found, [], "words of two paragraphs are not indexed as one");

  const asked = (await message("writer", ledger.id, "/body?html=true")).body;
  assert.equal(asked.html, `${html.replaceAll("\n", "\r\n")}\r\n`, "the HTML part as it was sent (its lines as mail ends them), decoded, unsanitised");
  assert.equal(asked.html_truncated, false);
  assert.equal(asked.text, body.text);
  const none = (await message("writer", plain.id, "/body?html=true")).body;
  assert.equal(none.html, undefined, "a text message has no HTML to hand out");
  assertRefusal(assert, await message("writer", ledger.id, "/body?html=please"), 400, "invalid_query_parameter");
  assertRefusal(assert, await message("meta", ledger.id, "/body?html=true"), 403, "missing_relation");
});

test("a reply is drafted, approved by a second person, sealed and handed to the send_email binding", async () => {
  const [question] = (await messages("meta")).body.messages.filter((item) => item.subject === "Where is my invoice?");
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await call("POST", sends, {
    token: people.writer.token,
    body: { to: ["ana@customer.example"], subject: "Re: Where is my invoice?", text: "Hello Ana,\n\nIt is on its way.\n", reply_to: question.id },
  });
  assert.equal(draft.status, 201, draft.text);
  const id = draft.body.id;
  const submitted = await call("POST", `${sends}/${id}/submit`, { token: people.writer.token });
  assert.equal(submitted.body.state, "submitted");
  const { version } = submitted.body;
  assertRefusal(assert, await call("POST", `${sends}/${id}/approve`, { token: people.writer.token, body: { version } }), 403, "missing_relation");
  const queue = (await call("GET", "/api/approvals", { token: people.approver.token })).body.sends;
  assert.deepEqual(queue.map((send) => send.id), [id]);
  assert.equal(queue[0].version, version, "the queue shows the version submitted");

  const approved = await call("POST", `${sends}/${id}/approve`, { token: people.approver.token, body: { version: queue[0].version } });
  assert.equal(approved.status, 200, approved.text);
  assert.equal(approved.body.state, "dispatched");

  const sent = await sentMailAfter(node);
  assert.equal(sent.length, 1, node.output());
  assert.match(sent[0], /^From: "?Support"? <support@mailroom\.test>/m);
  assert.match(sent[0], /^To: <?ana@customer\.example>?/m);
  assert.match(sent[0], /^In-Reply-To: <invoice-question-1@customer\.example>/m);
  assert.match(sent[0], /^References: <invoice-question-1@customer\.example>/m);
  // The mail service writes the Message-ID itself (Cloudflare Email Service
  // replaces the one the node composed, as wrangler's simulator does): one, at
  // the sending domain.
  assert.equal(sent[0].match(/^Message-ID: <[^>\s]+@mailroom\.test>\r?$/gm)?.length, 1, sent[0]);

  let stored;
  for (let attempt = 0; attempt < 40; attempt++) {
    stored = (await call("GET", `${sends}/${id}`, { token: people.writer.token })).body;
    if (stored.state === "dispatched") break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(stored.state, "dispatched", "the outcome recorded after the answer reached D1");
  const sealing = (await auditTrail(call, token, 20)).find((entry) => entry.action === "approve_send");
  assert.equal(sealing.detail.manifest_hash, stored.manifest_hash);
  assertRefusal(assert, await call("PATCH", `${sends}/${id}`, { token: people.writer.token, body: { text: "changed" } }), 409, "wrong_state");
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true);
});

test("a send the binding refuses for one recipient fails saying who has it, and sending it again never repeats it", async () => {
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const blocked = "bea@unverified.example";
  const draft = await call("POST", sends, { token: people.writer.token, body: { to: [ALLOWED, blocked], subject: "Your refund", text: "It is on its way." } });
  assert.equal(draft.status, 201, draft.text);
  const id = draft.body.id;
  const submitted = await call("POST", `${sends}/${id}/submit`, { token: people.writer.token });
  assert.equal(submitted.status, 200);
  const sentBefore = node.sentMail().length;
  const approved = await call("POST", `${sends}/${id}/approve`, { token: people.approver.token, body: { version: submitted.body.version } });
  assert.equal(approved.status, 200, approved.text);
  assert.equal(approved.body.state, "failed");
  assert.deepEqual(approved.body.delivered_to, [ALLOWED]);
  assert.match(approved.body.dispatch_error, new RegExp(`not delivered to ${blocked.replaceAll(".", "\\.")}: .*not allowed`));
  assert.doesNotMatch(approved.body.dispatch_error, /JsValue|PhantomData|obj:/, `the runtime's words, not a debug dump: ${approved.body.dispatch_error}`);

  /** The send as stored, once its deferred outcome has reached D1. */
  const settled = async () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const stored = (await call("GET", `${sends}/${id}`, { token: people.writer.token })).body;
      if (stored.state !== "sealed") return stored;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the send stayed sealed");
  };
  assert.deepEqual((await settled()).delivered_to, [ALLOWED]);

  const retried = await call("POST", `${sends}/${id}/retry`, { token: people.writer.token });
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.state, "failed", "the binding still refuses that destination");
  const stored = await settled();
  assert.deepEqual(stored.delivered_to, [ALLOWED]);
  assert.equal(stored.manifest_intact, true);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const toAna = node.sentMail().slice(sentBefore).filter((raw) => raw.includes("Your refund"));
  assert.equal(toAna.length, 1, "Ana has it once, however often it is sent again");
  const audit = (await auditTrail(call, token, 5));
  assert.equal(audit[0].action, "retry_send");
  assert.equal(audit[0].detail.recipients, 1, "only the recipient it had not reached");
});

test("a boundary written inside a line cuts neither the text nor the file short on workerd (decision 0042)", async () => {
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, fixture("boundary-in-text")), null);
  const visit = (await messages("meta")).body.messages.find((item) => item.subject === "Dates for the visit");
  assert.equal(visit.attachment_count, 1);
  const text = (await message("writer", visit.id, "/body")).body.text.replaceAll("\r\n", "\n");
  assert.equal(text, "Hello,\n\nWe can meet this week or --next week, whichever suits you.\n--nextcloud holds the plans; the agenda is attached.\n\nAna");
  const file = await checkedFetch(`${node.url}/api/mailboxes/${mailbox.id}/messages/${visit.id}/attachments/0`, {
    headers: { authorization: `Bearer ${people.writer.token}` },
  });
  assert.equal(Buffer.from(await file.arrayBuffer()).toString(), "1. Site tour\r\n2. --next steps");
  const original = await checkedFetch(`${node.url}/api/mailboxes/${mailbox.id}/messages/${visit.id}/original`, {
    headers: { authorization: `Bearer ${people.exporter.token}` },
  });
  assert.ok(Buffer.from(await original.arrayBuffer()).equals(fixture("boundary-in-text")), "the original is kept as it came");
});

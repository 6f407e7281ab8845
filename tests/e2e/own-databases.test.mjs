// A node set to keep each new mailbox's mail in the mailbox's own database
// from the start (NEW_MAILBOXES_IN_OWN_DATABASES, decision 0040), on real
// workerd with its Durable Objects: real mail through the email handler lands
// in the mailbox's object, not in D1; the mailbox reads empty before it and
// whole after; a search across mailboxes and within one finds it; a reply is
// approved by a second person and sent from there; the mailbox's segment of
// the chain walks intact, sealed by the email handler and the routes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startDesk, personNamed, sentMailAfter } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
let node, call, token, desk;

before(async () => {
  ({ node, call, token, desk } = await startDesk({ vars: { NEW_MAILBOXES_IN_OWN_DATABASES: "true" } }));
});
after(() => node?.stop());

const every = ["mailbox.metadata.read", "mailbox.content.read", "send.propose", "approval.decide"];

test("a new mailbox keeps its mail in its own Durable Object from its first message to its sent reply", async () => {
  const mailbox = await desk.mailbox(SUPPORT, "Support");
  const [{ moved }] = await node.sql(`SELECT mail_moved_at IS NOT NULL AS moved FROM mailboxes WHERE id = '${mailbox.id}'`);
  assert.equal(moved, 1);
  const ben = await desk.colleague(personNamed("Ben"), every, mailbox.id);
  const cleo = await desk.colleague(personNamed("Cleo"), every, mailbox.id);
  const messages = `/api/mailboxes/${mailbox.id}/messages`;
  const empty = await call("GET", messages, { token: ben.token });
  assert.equal(empty.status, 200, empty.text);
  assert.deepEqual(empty.body.messages, []);

  const raw = "From: Ana Lima <ana@customer.example>\r\nTo: Support <support@mailroom.test>\r\nSubject: Quarterly figures\r\n" +
    "Message-ID: <own-1@customer.example>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\n\r\nThe quarterly figures are attached.\r\n";
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, raw), null);
  const [{ inD1 }] = await node.sql("SELECT COUNT(*) AS inD1 FROM receipts");
  assert.equal(inD1, 0, "nothing of the mail in D1");
  const listed = await call("GET", messages, { token: ben.token });
  assert.equal(listed.body.messages.length, 1, listed.text);
  const receipt = listed.body.messages[0].id;
  const text = await call("GET", `${messages}/${receipt}/body`, { token: ben.token });
  assert.match(text.body.text, /quarterly figures are attached/);
  // A second message, to an address the isolate now knows keeps its mail in
  // its own database: its lookups are asked there beside D1's first read.
  const followUp = raw.replace("own-1@", "own-2@").replace("Subject: Quarterly figures", "Subject: Re: Quarterly figures")
    .replace("\r\n\r\n", "\r\nIn-Reply-To: <own-1@customer.example>\r\n\r\n");
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, followUp), null);
  const threads = await call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: ben.token });
  assert.equal(threads.body.threads.length, 1, threads.text);
  assert.equal(threads.body.threads[0].message_count, 2, "the follow-up joined its conversation");
  for (const path of ["/api/search?q=quarterly", `/api/search?q=quarterly&mailbox=${mailbox.id}`]) {
    const found = await call("GET", path, { token: ben.token });
    assert.equal(found.status, 200, found.text);
    assert.ok(found.body.results.some((hit) => hit.id === receipt), path);
  }

  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await call("POST", sends, { token: ben.token, body: { reply_to: receipt, text: "Thank you, Ana." } });
  assert.equal(draft.status, 201, draft.text);
  const send = `${sends}/${draft.body.id}`;
  const submitted = await call("POST", `${send}/submit`, { token: ben.token });
  assert.equal(submitted.status, 200, submitted.text);
  const queue = (await call("GET", "/api/approvals", { token: cleo.token })).body.sends;
  assert.deepEqual(queue.map((waiting) => waiting.id), [draft.body.id], "the reply waits in Cleo's queue, from D1's note");
  const approved = await call("POST", `${send}/approve`, { token: cleo.token, body: { version: queue[0].version } });
  assert.equal(approved.status, 200, approved.text);
  assert.equal(approved.body.state, "dispatched");
  const sent = await sentMailAfter(node);
  assert.equal(sent.length, 1, node.output());
  assert.match(sent[0], /^In-Reply-To: <own-1@customer\.example>/m);
  const [{ sendsInD1 }] = await node.sql("SELECT COUNT(*) AS sendsInD1 FROM sends");
  assert.equal(sendsInD1, 0, "the send is kept where the mailbox's mail is");

  const walked = await call("GET", `/api/audit/verify?mailbox_id=${mailbox.id}`, { token });
  assert.equal(walked.status, 200, walked.text);
  assert.equal(walked.body.intact, true, walked.text);
});

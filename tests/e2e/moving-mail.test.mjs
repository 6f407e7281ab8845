// A node that moves the mail of mailboxes already in D1 into their own
// databases (MOVE_MAIL_INTO_OWN_DATABASES, decision 0040), on real workerd
// with its D1 and Durable Objects, through the scheduled upkeep: mail keeps
// arriving through the email handler and the mailbox keeps being worked while
// the runs copy, verify and switch it; then every message, the conversation's
// labels and the draft are read from the mailbox's object, a search finds
// what came during the move, what arrives next lands in the object alone,
// D1's copy is removed by the runs after, and the organisation's chain records
// the move and walks intact.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startDesk, personNamed } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
let node, call, token, desk;

before(async () => {
  // Mailboxes created in D1, as a node from before kept them, then moved.
  ({ node, call, token, desk } = await startDesk({ vars: { NEW_MAILBOXES_IN_OWN_DATABASES: "false", MOVE_MAIL_INTO_OWN_DATABASES: "true" } }));
});
after(() => node?.stop());

const every = ["mailbox.metadata.read", "mailbox.content.read", "message.export", "send.propose", "approval.decide"];

function message(n, subject, extra = "") {
  return `From: Ana Lima <ana@customer.example>\r\nTo: Support <support@mailroom.test>\r\nSubject: ${subject}\r\n` +
    `Message-ID: <move-${n}@customer.example>\r\nDate: Tue, 1 Dec 2026 09:0${n % 10}:00 +0000\r\n${extra}\r\n` +
    `Message number ${n} about the zeppelin${n}.\r\n`;
}

test("a mailbox in D1 is moved into its own Durable Object by the upkeep while mail keeps arriving", async () => {
  const mailbox = await desk.mailbox(SUPPORT, "Support");
  const ben = await desk.colleague(personNamed("Ben"), every, mailbox.id);
  const messages = `/api/mailboxes/${mailbox.id}/messages`;
  for (const n of [1, 2, 3]) {
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, message(n, `Order ${n}`)), null);
  }
  const first = (await call("GET", messages, { token: ben.token })).body.messages.at(-1).id;
  const threads = (await call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: ben.token })).body.threads;
  const thread = `/api/mailboxes/${mailbox.id}/threads/${threads.at(-1).id}`;
  const labelled = await call("PATCH", thread, { token: ben.token, body: { add_labels: ["vip"] } });
  assert.equal(labelled.status, 200, labelled.text);
  const draft = await call("POST", `/api/mailboxes/${mailbox.id}/sends`, { token: ben.token, body: { reply_to: first, text: "On its way." } });
  assert.equal(draft.status, 201, draft.text);

  // The upkeep's runs, mail arriving and the conversation worked between them.
  const movedAt = async () => (await node.sql(`SELECT mail_moved_at FROM mailboxes WHERE id = '${mailbox.id}'`))[0].mail_moved_at;
  let n = 4;
  for (let run = 0; (await movedAt()) === null; run++) {
    assert.ok(run < 20, `the move never switched: ${node.output()}`);
    await node.scheduled("*/5 * * * *");
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, message(n, `Re: Order 1`, "In-Reply-To: <move-1@customer.example>\r\n")), null);
    const marked = await call(n % 2 ? "PUT" : "DELETE", `${thread}/read`, { token: ben.token });
    assert.equal(marked.status, 200, marked.text);
    n += 1;
  }
  const [{ notes }] = await node.sql("SELECT COUNT(*) AS notes FROM mail_changes");
  assert.equal(notes, 0, "every noted write was replayed");

  // Read from the object: every message, the conversation as it was worked, the draft.
  const listed = await call("GET", `${messages}?limit=50`, { token: ben.token });
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.body.messages.length, n - 1, listed.text);
  const conversation = await call("GET", thread, { token: ben.token });
  assert.deepEqual(conversation.body.labels, ["vip"], conversation.text);
  assert.equal(conversation.body.message_count, n - 3, "the replies that came during the move joined it");
  const drafted = await call("GET", `/api/mailboxes/${mailbox.id}/sends/${draft.body.id}`, { token: ben.token });
  assert.equal(drafted.body.text, "On its way.", drafted.text);
  const found = await call("GET", `/api/search?q=zeppelin${n - 1}&mailbox=${mailbox.id}`, { token: ben.token });
  assert.equal(found.body.results.length, 1, found.text);

  // What arrives next lands in the object alone.
  const [{ before }] = await node.sql("SELECT COUNT(*) AS before FROM receipts");
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, message(n, "After the move")), null);
  const [{ afterwards }] = await node.sql("SELECT COUNT(*) AS afterwards FROM receipts");
  assert.equal(afterwards, before, "D1 holds nothing new of the mailbox's mail");
  const again = await call("GET", `${messages}?limit=50`, { token: ben.token });
  assert.equal(again.body.messages.length, n, again.text);

  // Then D1's copy is removed by the next runs, and nothing is lost by it.
  const moving = async () => (await node.sql(`SELECT mail_moving_since FROM mailboxes WHERE id = '${mailbox.id}'`))[0].mail_moving_since;
  for (let run = 0; (await moving()) !== null; run++) {
    assert.ok(run < 10, `D1's copy was never removed: ${node.output()}`);
    await node.scheduled("*/5 * * * *");
  }
  for (const table of ["receipts", "mail_threads", "sends"]) {
    const [{ left }] = await node.sql(`SELECT COUNT(*) AS left FROM ${table} WHERE mailbox_id = '${mailbox.id}'`);
    assert.equal(left, 0, `D1 holds none of the mailbox's ${table}`);
  }
  const still = await call("GET", `${messages}?limit=50`, { token: ben.token });
  assert.equal(still.body.messages.length, n, still.text);
  const original = await call("GET", `${messages}/${first}/original`, { token: ben.token });
  assert.equal(original.status, 200, original.text);
  assert.match(original.text, /Message number 1 about/);

  const audit = await call("GET", "/api/audit?limit=100", { token });
  assert.equal(audit.status, 200, audit.text);
  for (const action of ["move_mailbox_mail", "remove_moved_mail_from_d1"]) {
    assert.ok(audit.body.entries.some((entry) => entry.action === action && entry.object === mailbox.id), action);
  }
  for (const path of ["/api/audit/verify", `/api/audit/verify?mailbox_id=${mailbox.id}`]) {
    const walked = await call("GET", path, { token });
    assert.equal(walked.body.intact, true, walked.text);
  }
});

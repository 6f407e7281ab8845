// The node's database at its limit, on real workerd: D1 reports its size with
// every statement (locally, its main file's, which its write-ahead log keeps
// small), and a node whose DATABASE_LIMIT_BYTES the local database already
// exceeds refuses inbound mail through the email handler with a
// temporary failure, stores nothing of it, and tells its administrators in
// their feed; everything else still works.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startDesk } from "./fixtures.mjs";

let node, call, token, desk;

before(async () => {
  // Any database is past a kilobyte.
  ({ node, call, token, desk } = await startDesk({ vars: { DATABASE_LIMIT_BYTES: "1000" } }));
});
after(() => node?.stop());

test("mail to a node whose database is full is refused for later, nothing is stored, and administrators are told", async () => {
  const mailbox = await desk.mailbox("support@mailroom.test", "Support");
  const raw = "From: Ana <ana@customer.example>\r\nTo: support@mailroom.test\r\nSubject: Hello\r\nMessage-ID: <full-1@customer.example>\r\n\r\nHi.\r\n";
  const reason = await node.deliver("ana@customer.example", "support@mailroom.test", raw);
  assert.match(reason ?? "", /^452 4\.3\.1 Insufficient storage/);
  const [{ stored }] = await node.sql(`SELECT COUNT(*) AS stored FROM receipts WHERE mailbox_id = '${mailbox.id}'`);
  assert.equal(stored, 0);
  const feed = await call("GET", "/api/me/notifications", { token });
  const alarm = feed.body.notifications.find((notification) => notification.kind === "database_nearly_full");
  assert.ok(alarm, JSON.stringify(feed.body.notifications));
  assert.equal(alarm.title, "The node's database is full: inbound mail is refused");
  assert.match(alarm.detail, /DATABASE_LIMIT_BYTES/);
  // A second message the same day: refused again, and told once.
  await node.deliver("ana@customer.example", "support@mailroom.test", raw.replace("full-1", "full-2"));
  const again = await call("GET", "/api/me/notifications", { token });
  assert.equal(again.body.notifications.filter((notification) => notification.kind === "database_nearly_full").length, 1);
});

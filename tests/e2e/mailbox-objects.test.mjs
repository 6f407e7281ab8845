// Each mailbox's own database (decision 0040) on real workerd: the built
// Worker's MailboxObject class, SQLite-backed as wrangler.toml declares it,
// reached through its Durable Object binding and sent batches in the form the
// Worker sends them (core::mailbox_storage::WireBatch). It migrates itself
// from migrations/mailbox/ once, keeps what it stored across a restart, creates
// no database for a read asked only if it was created, runs
// a batch as one transaction (a failing write guard or constraint rolls all
// of it back, with SQLite's own message), carries values, rows, changes and
// its size exactly, takes the statements a page of a mail move sends, and
// answers every batch of a whole move and of the routes that then read and
// change the moved mailbox, recorded with the native twin's answers by
// tests/native/moving_mail.rs, as the twin did (started as
// mailbox-engine.mjs starts it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./harness.mjs";
import { startMailboxObjects, mailboxStub, batch as batchOn } from "./mailbox-engine.mjs";

const persisted = mkdtempSync(join(tmpdir(), "mailroom-mailbox-objects-"));
let engine;

before(() => {
  engine = startMailboxObjects(persisted);
});
after(async () => {
  await engine?.dispose();
  rmSync(persisted, { recursive: true, force: true });
});

const batch = (mailbox, statements, options) => batchOn(engine, mailbox, statements, options);

const NOTES = ["CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, n INTEGER)"];

test("a mailbox's object migrates itself from migrations/mailbox once, and keeps what it stored across a restart", async () => {
  const files = readdirSync(join(ROOT, "migrations", "mailbox")).filter((name) => name.endsWith(".sql")).sort();
  const first = await batch("mbx_restart", [NOTES, ["INSERT INTO notes (id, body) VALUES ('a', 'kept')"], ["SELECT name FROM mailbox_schema ORDER BY name"]]);
  assert.equal(first.outcome, "committed", JSON.stringify(first));
  assert.deepEqual(first.results[2].rows.map((row) => row.name), files);

  await engine.dispose();
  engine = startMailboxObjects(persisted);
  const again = await batch("mbx_restart", [["SELECT name FROM mailbox_schema ORDER BY name"], ["SELECT body FROM notes"]]);
  assert.deepEqual(again.results[0].rows.map((row) => row.name), files, "each migration recorded once");
  assert.deepEqual(again.results[1].rows, [{ body: "kept" }]);
});

test("a read asked only if the database was created creates none, across a restart, and runs in one that was", async () => {
  // workerd opens an empty file for the object (one page, no table, nothing in
  // its log); what is held here is that no schema, so no database, was made,
  // which a restart would keep.
  const read = [["SELECT count(*) AS n FROM receipts"]];
  assert.deepEqual(await batch("mbx_probed", read, { onlyIfCreated: true }), { outcome: "never_created" });
  assert.deepEqual(await batch("mbx_probed", read, { onlyIfCreated: true }), { outcome: "never_created" });
  await engine.dispose();
  engine = startMailboxObjects(persisted);
  assert.deepEqual(await batch("mbx_probed", read, { onlyIfCreated: true }), { outcome: "never_created" });

  assert.equal((await batch("mbx_probed", read)).outcome, "committed", "a batch not so marked creates it");
  const created = await batch("mbx_probed", read, { onlyIfCreated: true });
  assert.equal(created.outcome, "committed", JSON.stringify(created));
  assert.deepEqual(created.results[0].rows, [{ n: 0 }]);
});

test("a failing write guard rolls the whole batch back, answering SQLite's message naming its slot", async () => {
  await batch("mbx_guard", [NOTES]);
  const refused = await batch("mbx_guard", [
    ["INSERT INTO notes (id, body) VALUES ('a', 'written before the guard')"],
    ["INSERT INTO write_guards (slot_3) SELECT 1 WHERE NOT (EXISTS (SELECT 1 FROM notes WHERE id = ?1))", "b"],
  ]);
  assert.equal(refused.outcome, "rolled_back");
  assert.match(refused.message, /CHECK constraint failed: write_guard_3/);
  const left = await batch("mbx_guard", [["SELECT count(*) AS n FROM notes"]]);
  assert.deepEqual(left.results[0].rows, [{ n: 0 }], "nothing of the batch stayed");

  await batch("mbx_guard", [["INSERT INTO notes (id, body) VALUES ('a', 'one')"]]);
  const twice = await batch("mbx_guard", [["INSERT INTO notes (id, body) VALUES ('a', 'again')"]]);
  assert.equal(twice.outcome, "rolled_back");
  assert.match(twice.message, /UNIQUE constraint failed: notes\.id/);
});

test("values, rows, changes and the size come back exactly, and each mailbox is its own database", async () => {
  const before = await batch("mbx_values", [NOTES]);
  const body = "Grüße, ‘quoted’ and 😀".repeat(2000);
  const written = await batch("mbx_values", [
    ["INSERT INTO notes (id, body, n) VALUES (?1, ?2, ?3)", "a", body, 1795000000123],
    ["INSERT INTO notes (id, body, n) VALUES (?1, ?2, ?3)", "b", "two", null],
    ["UPDATE notes SET n = 7 WHERE n IS NULL OR n > 0"],
    ["SELECT id, body, n FROM notes ORDER BY id"],
  ]);
  assert.equal(written.outcome, "committed", JSON.stringify(written).slice(0, 500));
  assert.deepEqual(written.results.slice(0, 3).map((result) => result.changes), [1, 1, 2]);
  assert.equal(written.results[3].rows[0].body, body);
  assert.deepEqual(written.results[3].rows.map((row) => row.n), [7, 7]);
  assert.ok(written.size > before.size, `the size grows with what it holds: ${before.size} then ${written.size}`);

  const other = await batch("mbx_other", [NOTES, ["SELECT count(*) AS n FROM notes"]]);
  assert.deepEqual(other.results[1].rows, [{ n: 0 }]);
});

test("the object answers nothing but a batch", async () => {
  const stub = await mailboxStub(engine, "mbx_strange");
  assert.equal((await stub.fetch("https://mailbox/batch")).status, 404);
  assert.equal((await stub.fetch("https://mailbox/other", { method: "POST", body: "{}" })).status, 404);
  assert.equal((await stub.fetch("https://mailbox/batch", { method: "POST", body: "not json" })).status, 400);
  const wrong = await batch("mbx_strange", [["SELECT ?1 AS v", true]]);
  assert.equal(wrong.outcome, "rolled_back");
  assert.match(wrong.message, /null, a number or text/);
});

// The shapes of statement a page of a mail move sends (mail::store::moving,
// decision 0040), on the object's own SQLite: rows from one JSON parameter
// with their rowids, a receipt's text near a page's 1 MB, both search indexes
// written from the rowids, a trigger lifted and restored from the migration's
// text inside the batch, the position recorded behind its guard, and the page
// sent again refused whole.
const MAIL = readFileSync(join(ROOT, "migrations", "mailbox", "0003_mail.sql"), "utf8");
const trigger = (name) => {
  const start = MAIL.indexOf(`CREATE TRIGGER ${name}\n`);
  return MAIL.slice(start, MAIL.indexOf("\nEND;", start) + "\nEND".length);
};
const copied = (table, columns) =>
  `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${columns.map((column) => `json_extract(value, '$.${column}')`).join(", ")} FROM json_each(?1)`;
const positionIs = (table, lastKey, rows) =>
  lastKey === null
    ? ["INSERT INTO write_guards (slot_1) SELECT 1 WHERE NOT (NOT EXISTS (SELECT 1 FROM mail_moves WHERE table_name = ?))", table]
    : [
        "INSERT INTO write_guards (slot_1) SELECT 1 WHERE NOT (EXISTS (SELECT 1 FROM mail_moves WHERE table_name = ? AND last_key IS ? AND rows = ? AND finished = 0))",
        table,
        lastKey,
        rows,
      ];
const positionRecorded = (table, lastKey, rows, finished) => [
  "INSERT INTO mail_moves (table_name, last_key, rows, finished) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (table_name) DO UPDATE SET last_key = excluded.last_key, rows = excluded.rows, finished = excluded.finished",
  table,
  lastKey,
  rows,
  finished,
];

test("a page of a mail move commits in one transaction, its trigger restored, and a page sent again is refused whole", async () => {
  const mailbox = "mbx_moving";
  const receipt = {
    rowid: 4242, id: "rcp_1", mailbox_id: mailbox, message_id: "q1@customer.example", envelope_from: "ana@customer.example",
    from_address: "ana@customer.example", from_name: "Ana", to_json: "[]", cc_json: "[]", recipients: "support", subject: "Invoice",
    sent_at: 1795000000000, received_at: 1795000000001, in_reply_to_json: "[]", references_json: "[]", size: 900000, raw_key: "raw/1",
    text_body: `zeppelin ${"word ".repeat(180000)}`, text_source: "text", text_truncated: 0, attachments_json: "[]",
  };
  const receipts = [
    positionIs("receipts", null),
    [copied("receipts", Object.keys(receipt)), JSON.stringify([receipt])],
    ...[
      ["receipt_headers_index", "from_address, from_name, recipients, subject, mailbox_id"],
      ["receipt_bodies_index", "text_body, mailbox_id"],
    ].map(([index, columns]) => [
      `INSERT INTO ${index} (rowid, ${columns}) SELECT rowid, ${columns} FROM receipts WHERE rowid IN (SELECT value FROM json_each(?1))`,
      "[4242]",
    ]),
    positionRecorded("receipts", "[4242]", 1, 1),
  ];
  assert.ok(receipts[1][1].length > 900000, "a page near its 1 MB");
  const first = await batch(mailbox, receipts);
  assert.equal(first.outcome, "committed", JSON.stringify(first).slice(0, 500));
  const send = {
    rowid: 7, id: "snd_1", mailbox_id: mailbox, author: "usr_1", state: "sealed", to_json: "[]", cc_json: "[]", subject: "Re: Invoice",
    text: "Attached.", reply_to: "rcp_1", references_json: "[]", created_at: 1, updated_at: 2,
  };
  const sends = [positionIs("sends", null), [copied("sends", Object.keys(send)), JSON.stringify([send])], positionRecorded("sends", "[7]", 1, 1)];
  assert.equal((await batch(mailbox, sends)).outcome, "committed");
  const file = { send_id: "snd_1", position: 0, name: "invoice.pdf", content_type: "application/pdf", size: 21, sha256: "ab" };
  const lifted = "send_attachments_change_only_on_drafts_insert";
  const files = [
    positionIs("send_attachments", null),
    [`DROP TRIGGER ${lifted}`],
    [copied("send_attachments", Object.keys(file)), JSON.stringify([file])],
    [trigger(lifted)],
    positionRecorded("send_attachments", '["snd_1",0]', 1, 1),
  ];
  assert.equal((await batch(mailbox, files)).outcome, "committed");

  const again = await batch(mailbox, files);
  assert.equal(again.outcome, "rolled_back");
  assert.match(again.message, /CHECK constraint failed: write_guard_1/);
  const read = await batch(mailbox, [
    ["SELECT rowid, id FROM receipts"],
    ["SELECT count(*) AS n FROM receipt_bodies_index WHERE receipt_bodies_index MATCH 'zeppelin'"],
    ["INSERT INTO receipt_bodies_index (receipt_bodies_index) VALUES ('integrity-check')"],
    ["INSERT INTO receipt_headers_index (receipt_headers_index) VALUES ('integrity-check')"],
    ["SELECT sql FROM sqlite_schema WHERE name = ?1", lifted],
    ["SELECT count(*) AS n FROM send_attachments"],
    ["SELECT table_name, rows, finished FROM mail_moves ORDER BY table_name"],
  ]);
  assert.equal(read.outcome, "committed", JSON.stringify(read).slice(0, 500));
  assert.deepEqual(read.results[0].rows, [{ rowid: 4242, id: "rcp_1" }], "the rowid carried over");
  assert.deepEqual(read.results[1].rows, [{ n: 1 }]);
  assert.deepEqual(read.results[4].rows, [{ sql: trigger(lifted) }], "the trigger is back as the migration wrote it");
  assert.deepEqual(read.results[5].rows, [{ n: 1 }], "the file was copied once");
  assert.deepEqual(read.results[6].rows.map((row) => [row.table_name, row.rows, row.finished]), [
    ["receipts", 1, 1],
    ["send_attachments", 1, 1],
    ["sends", 1, 1],
  ]);
  const changed = await batch(mailbox, [["INSERT INTO send_attachments (send_id, position, name, content_type, size, sha256) VALUES ('snd_1', 1, 'x', 'y', 1, 'z')"]]);
  assert.equal(changed.outcome, "rolled_back", "a sealed send's files are guarded again");
  assert.match(changed.message, /send_attachments_only_on_drafts/);
});

test("the batches a mail move and the routes after it send, recorded by the native tests, are answered by the objects as the native twin answered them", async () => {
  // Written by tests/native/moving_mail.rs, which scripts/test.sh runs before these: mail::moving's own statements
  // (a whole move, a page sent twice, the verification), then those of the routes that read and change the
  // moved mailbox's mail (reads asked only if its database was created, changes with their entries in its
  // segment, another mailbox asked before it has one), each with the answer the twin gave.
  const recorded = join(ROOT, "target", "e2e-inputs", "mailbox-move.json");
  assert.ok(existsSync(recorded), `${recorded} is written by the native tests; run them first`);
  const batches = JSON.parse(readFileSync(recorded, "utf8"));
  assert.ok(batches.length > 10, `${batches.length} batches`);
  for (const [index, { mailbox, batch: sent, answer }] of batches.entries()) {
    const statements = sent.statements.map(({ sql, parameters }) => [sql, ...parameters]);
    const answered = await batch(`replayed_${mailbox}`, statements, { onlyIfCreated: sent.only_if_created === true });
    assert.equal(answered.outcome, answer.outcome, `batch ${index}: ${JSON.stringify(answered).slice(0, 300)}`);
    if (answer.outcome === "committed") {
      assert.deepEqual(answered.results, answer.results, `batch ${index}`);
    } else if (answer.outcome === "never_created") {
      assert.deepEqual(answered, { outcome: "never_created" }, `batch ${index}`);
    } else {
      assert.ok(answered.message.includes(answer.constraint), `batch ${index}: ${answered.message}`);
    }
  }
});

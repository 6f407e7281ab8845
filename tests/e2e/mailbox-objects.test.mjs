// Each mailbox's own database (decision 0040) on real workerd: the built
// Worker's MailboxObject class, SQLite-backed as wrangler.toml declares it,
// reached through its Durable Object binding and sent batches in the form the
// Worker sends them (core::mailbox_storage::WireBatch). It migrates itself
// from migrations/mailbox/ once, keeps what it stored across a restart, runs
// a batch as one transaction (a failing write guard or constraint rolls all
// of it back, with SQLite's own message), and carries values, rows, changes
// and its size exactly (started as mailbox-engine.mjs starts it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
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

const batch = (mailbox, statements) => batchOn(engine, mailbox, statements);

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

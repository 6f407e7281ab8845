// The benchmark's mailbox phase (scripts/bench.mjs; issue 30, decision 0040):
// what one mailbox's own Durable Object does with its mail as it grows, before
// the mail stores move into it. The built Worker's MailboxObject on workerd
// (tests/e2e/mailbox-engine.mjs), with the schema it builds itself from
// migrations/mailbox/ (D1's tables for mail), is given messages of about 3 KB
// of text (bench-capacity's), in batches as the Worker
// sends them. At each size it prints the object's bytes per message and what
// 10 GB holds, and the latency, from Node over loopback, of a page of the
// newest messages, a page deep in the list, and a search for a word in nearly
// every message and for one in a single message, beside that of `SELECT 1`,
// the way there and back alone. Asserts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMailboxObjects, batch } from "../tests/e2e/mailbox-engine.mjs";
import { percentile, table } from "./bench-kit.mjs";
import { text } from "./bench-capacity.mjs";

/** A Durable Object's storage limit, in bytes (Cloudflare's published limit for SQLite-backed objects). */
const OBJECT_LIMIT_BYTES = 10 * 1000 ** 3;
/** Messages per batch: each is its row and its two index entries. */
const PER_BATCH = 200;
/** Times each read is made at each size. */
const READS = 30;
const PAGE = 51;

/** The statements that store message `index` and index it, as the email handler's batch does. */
function stored(index) {
  const id = `rcp_${String(index).padStart(26, "0")}`;
  return [
    [
      `INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, from_address, from_name, to_json, cc_json, recipients, subject,
         sent_at, received_at, in_reply_to_json, references_json, size, raw_key, text_body, text_source, text_truncated, attachments_json)
       VALUES (?1, 'mbx_bench', ?2, 'ana@customer.example', 'ana@customer.example', 'Ana Lima', '[]', '[]', 'Support support@mailroom.test',
         ?3, ?4, ?4, '[]', '[]', 4096, ?5, ?6, 'text', 0, '[]')`,
      id,
      `bench-${index}@customer.example`,
      `Order ${index}: a question about the invoice`,
      1_795_000_000_000 + index,
      `raw/${id}`,
      `${text(index)} unique${index}token`,
    ],
    ["INSERT INTO receipt_headers_index (rowid, from_address, from_name, recipients, subject, mailbox_id) SELECT rowid, from_address, from_name, recipients, subject, mailbox_id FROM receipts WHERE id = ?1", id],
    ["INSERT INTO receipt_bodies_index (rowid, text_body, mailbox_id) SELECT rowid, text_body, mailbox_id FROM receipts WHERE id = ?1", id],
  ];
}

async function timed(engine, statements) {
  const started = performance.now();
  const answer = await batch(engine, "mbx_bench", statements);
  if (answer.outcome !== "committed") throw new Error(answer.message);
  return performance.now() - started;
}

export async function mailbox(sizes) {
  console.log(`== mailbox: one mailbox's own Durable Object at ${sizes.join(", ")} messages of about 3 KB of text (decision 0040)`);
  const persisted = mkdtempSync(join(tmpdir(), "mailroom-bench-mailbox-"));
  const engine = startMailboxObjects(persisted);
  const rows = [];
  try {
    let count = 0;
    let inserting = 0;
    for (const size of sizes) {
      const began = performance.now();
      for (; count < size; count += PER_BATCH) {
        const statements = [];
        for (let index = count; index < Math.min(size, count + PER_BATCH); index += 1) statements.push(...stored(index));
        await timed(engine, statements);
      }
      count = size;
      inserting = (performance.now() - began) / 1000;
      const { size: bytes } = await batch(engine, "mbx_bench", [["SELECT 1"]]);
      const reads = {
        // The way there and back alone (Node, Miniflare's proxy, the object): what the others include.
        nothing: ["SELECT 1"],
        newest: ["SELECT id, subject, received_at FROM receipts ORDER BY rowid DESC LIMIT ?1", PAGE],
        deep: ["SELECT id, subject, received_at FROM receipts WHERE rowid < ?1 ORDER BY rowid DESC LIMIT ?2", Math.floor(size / 2), PAGE],
        common: [
          "SELECT r.id, r.subject, snippet(receipt_bodies_index, 0, '[', ']', '…', 12) AS snippet FROM receipt_bodies_index JOIN receipts r ON r.rowid = receipt_bodies_index.rowid WHERE receipt_bodies_index MATCH ?1 ORDER BY receipt_bodies_index.rowid DESC LIMIT ?2",
          "text_body : invoice",
          PAGE,
        ],
        rare: [
          "SELECT r.id, r.subject, snippet(receipt_bodies_index, 0, '[', ']', '…', 12) AS snippet FROM receipt_bodies_index JOIN receipts r ON r.rowid = receipt_bodies_index.rowid WHERE receipt_bodies_index MATCH ?1 ORDER BY receipt_bodies_index.rowid DESC LIMIT ?2",
          `text_body : unique${Math.floor(size / 3)}token`,
          PAGE,
        ],
      };
      const latency = {};
      for (const [name, statement] of Object.entries(reads)) {
        const timings = [];
        for (let read = 0; read < READS; read += 1) timings.push(await timed(engine, [statement]));
        latency[name] = `${percentile(timings, 0.5)} / ${percentile(timings, 0.99)}`;
      }
      rows.push([
        size.toLocaleString("en"),
        inserting.toFixed(1),
        (bytes / size).toFixed(0),
        Math.floor(OBJECT_LIMIT_BYTES / (bytes / size)).toLocaleString("en"),
        latency.nothing,
        latency.newest,
        latency.deep,
        latency.common,
        latency.rare,
      ]);
    }
  } finally {
    await engine.dispose();
    rmSync(persisted, { recursive: true, force: true });
  }
  table(["messages", "stored in s", "bytes/message", "in 10 GB", "SELECT 1 p50/p99 ms", "newest page", "deep page", "common word", "rare word"], rows);
}

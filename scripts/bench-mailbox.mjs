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

/** The statements that store message `index` in mailbox `mailboxId` and index it, as the email handler's batch does. */
function stored(index, mailboxId = "mbx_bench") {
  const id = `rcp_${String(index).padStart(26, "0")}`;
  return [
    [
      `INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, from_address, from_name, to_json, cc_json, recipients, subject,
         sent_at, received_at, in_reply_to_json, references_json, size, raw_key, text_body, text_source, text_truncated, attachments_json)
       VALUES (?1, ?7, ?2, 'ana@customer.example', 'ana@customer.example', 'Ana Lima', '[]', '[]', 'Support support@mailroom.test',
         ?3, ?4, ?4, '[]', '[]', 4096, ?5, ?6, 'text', 0, '[]')`,
      id,
      `bench-${index}@customer.example`,
      `Order ${index}: a question about the invoice`,
      1_795_000_000_000 + index,
      `raw/${id}`,
      `${text(index)} unique${index}token`,
      mailboxId,
    ],
    ["INSERT INTO receipt_headers_index (rowid, from_address, from_name, recipients, subject, mailbox_id) SELECT rowid, from_address, from_name, recipients, subject, mailbox_id FROM receipts WHERE id = ?1", id],
    ["INSERT INTO receipt_bodies_index (rowid, text_body, mailbox_id) SELECT rowid, text_body, mailbox_id FROM receipts WHERE id = ?1", id],
  ];
}

async function timed(engine, statements, mailboxId = "mbx_bench") {
  const started = performance.now();
  const answer = await batch(engine, mailboxId, statements);
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

/** A Worker that asks each mailbox named in its request's body ([mailbox, statements] pairs) its statements, all at once, and answers their answers. */
const ASKER = `export default {
  async fetch(request, env) {
    const asks = await request.json();
    const answers = await Promise.all(
      asks.map(async ([id, statements]) => {
        const body = JSON.stringify({ statements });
        return (await env.MAILBOXES.get(env.MAILBOXES.idFromName(id)).fetch("https://mailbox/batch", { method: "POST", body })).json();
      }),
    );
    return Response.json(answers);
  },
};`;

/** A search's page in one mailbox's object: newest first in stored order, which is time order there (decision 0014). */
const SEARCH_PAGE =
  "SELECT r.id, r.received_at, r.subject, snippet(receipt_bodies_index, 0, '[', ']', '…', 12) AS snippet FROM receipt_bodies_index JOIN receipts r ON r.rowid = receipt_bodies_index.rowid WHERE receipt_bodies_index MATCH ?1 ORDER BY receipt_bodies_index.rowid DESC LIMIT ?2";

/** The first of two steps: a page of where, when and which, without snippets. */
const HEADS_PAGE =
  "SELECT r.rowid AS stored, r.id, r.received_at FROM receipt_bodies_index JOIN receipts r ON r.rowid = receipt_bodies_index.rowid WHERE receipt_bodies_index MATCH ?1 ORDER BY receipt_bodies_index.rowid DESC LIMIT ?2";
/** The second: the summary and snippet of the rows (rowids, a JSON array) the merged page kept. */
const SNIPPETS_OF =
  "SELECT r.id, r.received_at, r.subject, snippet(receipt_bodies_index, 0, '[', ']', '…', 12) AS snippet FROM receipt_bodies_index JOIN receipts r ON r.rowid = receipt_bodies_index.rowid WHERE receipt_bodies_index MATCH ?1 AND receipt_bodies_index.rowid IN (SELECT value FROM json_each(?2))";

/**
 * The fan-out phase (decision 0040): a person's search across `across` mailboxes, each its own object holding
 * `each` messages, asked at once for a page each and merged newest first by (time, id) as the Worker's
 * `paging::merge` does, beside the same search in one of them; and in two steps, snippets asked only of the rows the
 * merged page keeps. Mailboxes not searched cost a search nothing (each
 * object is on its own), so only those searched are filled. Asserts nothing.
 */
export async function fanout(across, each) {
  console.log(`== fanout: a search across ${across} mailboxes' objects of ${each.toLocaleString("en")} messages each, and in one (decision 0040)`);
  const persisted = mkdtempSync(join(tmpdir(), "mailroom-bench-fanout-"));
  const engine = startMailboxObjects(persisted, { "asker.js": ASKER });
  const asker = await engine.getWorker("alongside");
  // Asked from inside workerd, as the node's Worker asks: all at once, each its own subrequest.
  const ask = async (ids, statements) => askEach(ids.map((id) => [id, statements]));
  const askEach = async (asks) => {
    const response = await asker.fetch("http://asker/", { method: "POST", body: JSON.stringify(asks) });
    if (response.status !== 200) throw new Error(`the asker answered ${response.status}: ${await response.text()}`);
    return response.json();
  };
  const mailboxes = Array.from({ length: across }, (_, index) => `mbx_fan_${index}`);
  const rows = [];
  try {
    const began = performance.now();
    await Promise.all(
      mailboxes.map(async (mailboxId, which) => {
        for (let count = 0; count < each; count += PER_BATCH) {
          const statements = [];
          for (let index = count; index < Math.min(each, count + PER_BATCH); index += 1) statements.push(...stored(which * each + index, mailboxId));
          await timed(engine, statements, mailboxId);
        }
      }),
    );
    console.log(`stored ${(across * each).toLocaleString("en")} messages in ${((performance.now() - began) / 1000).toFixed(1)} s`);
    const words = { "common word": "text_body : invoice", "rare word": `text_body : unique${Math.floor(each / 3)}token` };
    for (const [name, query] of Object.entries(words)) {
      const one = [];
      const all = [];
      const twoSteps = [];
      const statements = [{ sql: SEARCH_PAGE, parameters: [query, PAGE] }];
      for (let read = 0; read < READS; read += 1) {
        let started = performance.now();
        await ask(mailboxes.slice(0, 1), statements);
        one.push(performance.now() - started);
        started = performance.now();
        const answers = await ask(mailboxes, statements);
        const merged = answers
          .flatMap((answer) => answer.results[0].rows)
          .sort((a, b) => b.received_at - a.received_at || (a.id < b.id ? 1 : -1))
          .slice(0, PAGE);
        if (answers.some((answer) => answer.outcome !== "committed") || merged.length === 0 && name === "common word") throw new Error("the fan-out answered nothing");
        all.push(performance.now() - started);
        // Two steps: each object's page of times and ids, merged; then snippets from the objects on the merged page only.
        started = performance.now();
        const heads = await ask(mailboxes, [{ sql: HEADS_PAGE, parameters: [query, PAGE] }]);
        const page = heads
          .flatMap((answer, which) => answer.results[0].rows.map((row) => ({ ...row, mailbox: mailboxes[which] })))
          .sort((a, b) => b.received_at - a.received_at || (a.id < b.id ? 1 : -1))
          .slice(0, PAGE);
        const wanted = Map.groupBy(page, (row) => row.mailbox);
        await askEach([...wanted].map(([id, rows]) => [id, [{ sql: SNIPPETS_OF, parameters: [query, JSON.stringify(rows.map((row) => row.stored))] }]]));
        twoSteps.push(performance.now() - started);
      }
      const ratio = (timings) => (percentile(timings, 0.5) / percentile(one, 0.5)).toFixed(2);
      const spread = (timings) => `${percentile(timings, 0.5)} / ${percentile(timings, 0.99)}`;
      rows.push([name, spread(one), spread(all), ratio(all), spread(twoSteps), ratio(twoSteps)]);
    }
  } finally {
    await engine.dispose();
    rmSync(persisted, { recursive: true, force: true });
  }
  table(["search", "one mailbox p50/p99 ms", `across ${across} p50/p99 ms`, "p50 ratio", "in two steps", "p50 ratio"], rows);
}

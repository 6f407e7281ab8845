// Received mail seeded straight into where the node keeps it, for the
// benchmark's scale and fanout phases (scripts/bench.mjs): each mailbox's own
// Durable Object, written with the node stopped, or D1 (OWN_DATABASES=false).
// A seeded receipt copies a template, a message really delivered through the
// email handler (so its raw bytes are in R2), with its own id, Message-ID,
// subject, text and time, and is indexed as `mail::inbound::receive` indexes it.
import { join } from "node:path";
import { startMailboxObjects, batch } from "../tests/e2e/mailbox-engine.mjs";
import { MAIL_VARS } from "./bench-kit.mjs";

/** A word in every seeded message, and one in 1 in 100. */
export const COMMON = "invoice";
export const RARE = "quartz";

/** The columns each seeded receipt copies from the template. */
const TEMPLATE_COLUMNS = [
  "envelope_from", "from_address", "from_name", "to_json", "cc_json", "recipients", "sent_at", "received_at", "in_reply_to_json",
  "references_json", "size", "raw_key", "text_source", "text_truncated", "attachments_json", "reply_to_json",
];

/** The SQL literal of `value`, a column as a database's JSON answers it. */
const literal = (value) => (value === null ? "NULL" : typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`);

/** The id of seeded receipt number `expression` (SQL). */
const seededId = (expression) => `printf('rcp_01SEED%020d', ${expression})`;

/**
 * The statement that stores in mailbox `mailboxId`'s database a receipt for
 * each row of `numbers` (a WITH clause's table `n`, whose `i` numbers the
 * message across the node) for which `kept` holds: a copy of `template` (its
 * columns as named SQL literals, `templateOf`; not a row read in place, as a
 * mailbox's own database holds only its own mail) with its own id, Message-ID,
 * `subject` and `body` (SQL expressions of `n`'s columns), and the template's
 * time plus `i`, so storage order and received time agree.
 */
export function receiptsStatement({ numbers, subject, body, kept = "1" }, template, mailboxId) {
  return `INSERT INTO receipts (id, mailbox_id, message_id, envelope_from, from_address, from_name, to_json, cc_json,
       recipients, subject, sent_at, received_at, in_reply_to_json, references_json, size, raw_key, text_body,
       text_source, text_truncated, attachments_json, reply_to_json)
     WITH ${numbers}
     SELECT ${seededId("i")}, '${mailboxId}', printf('seed-%d@bench.example', i),
       t.envelope_from, t.from_address, t.from_name, t.to_json, t.cc_json, t.recipients, ${subject},
       t.sent_at, t.received_at + i, t.in_reply_to_json, t.references_json, t.size, t.raw_key, ${body},
       t.text_source, t.text_truncated, t.attachments_json, t.reply_to_json
     FROM n, (SELECT ${template}) t WHERE ${kept}`;
}

/** The statements that index `mailboxId`'s seeded receipts numbered `from` to `to - 1`: their own values of the columns each index has (`indexed`). */
export function indexStatements(from, to, mailboxId, indexed) {
  return Object.entries(indexed).map(
    ([index, columns]) =>
      `INSERT INTO ${index} (rowid, ${columns.join(", ")})
       SELECT rowid, ${columns.join(", ")} FROM receipts WHERE mailbox_id = '${mailboxId}' AND id >= ${seededId(from)} AND id < ${seededId(to)}`,
  );
}

/** Receipt `receiptId`'s template (its columns as named SQL literals) and each full-text index's columns, asked through `ask` of `mailboxId`'s database. */
export async function templateOf(ask, mailboxId, receiptId) {
  const [row] = await ask(mailboxId, [`SELECT ${TEMPLATE_COLUMNS.join(", ")} FROM receipts WHERE id = '${receiptId}'`]);
  const template = TEMPLATE_COLUMNS.map((column) => `${literal(row[column])} AS ${column}`).join(", ");
  const indexed = {};
  for (const index of ["receipt_headers_index", "receipt_bodies_index"]) {
    indexed[index] = (await ask(mailboxId, [`SELECT name FROM pragma_table_info('${index}')`])).map((column) => column.name);
  }
  return { template, indexed };
}

/**
 * Runs `work(ask)`, where `ask(mailboxId, statements)` runs SQL statements in
 * the database that keeps `mailboxId`'s mail, from outside the Worker, and
 * answers the first one's rows: the node's D1 (`OWN_DATABASES=false`), or the
 * mailbox's own Durable Object, which also takes a statement as `[sql,
 * ...parameters]` (workerd holds a statement's text to 100 KB). An object is opened by a Miniflare of its own
 * on the node's state, with the node stopped meanwhile (one workerd at a time
 * holds an object's SQLite file), under the same worker and class names, so
 * the mailbox's id names the object the node's Worker reaches; and it takes
 * its statements as the Worker's batches, in one transaction each.
 */
export async function withMailStores(node, work) {
  if (MAIL_VARS.NEW_MAILBOXES_IN_OWN_DATABASES !== "true") return work((_mailboxId, statements) => node.sql(statements.join(";\n")));
  return node.whileStopped(async (state) => {
    // Where wrangler dev keeps its local resources under --persist-to.
    const engine = startMailboxObjects(join(state, "v3"));
    try {
      return await work(async (mailboxId, statements) => {
        const answer = await batch(engine, mailboxId, statements.map((statement) => (Array.isArray(statement) ? statement : [statement])));
        if (answer.outcome !== "committed") throw new Error(`${mailboxId}'s object: ${answer.message}`);
        return answer.results[0].rows;
      });
    } finally {
      await engine.dispose();
    }
  });
}

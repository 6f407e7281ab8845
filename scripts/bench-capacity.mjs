// The benchmark's capacity phase (scripts/bench.mjs; issue 30): what one
// received message costs the organisation's D1, with its mail kept there and
// with it kept in each mailbox's own Durable Object. A fresh node receives
// `count` messages of about 3 KB of text each through the Worker's email
// handler, as Email Routing delivers them; the local D1's SQLite file is then
// read (SQLite's own `dbstat`, through node:sqlite, beside workerd) before and
// after, and the growth per message printed by table (the receipt row with its
// text, the search index, conversations, the audit chain), with what D1's 10 GB
// holds at that rate. Asserts nothing.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { startNode, setUp } from "../tests/e2e/harness.mjs";
import { table, timedClient, mailboxFor } from "./bench-kit.mjs";

/** D1's size limit per database, in bytes (Cloudflare's published limit). */
const D1_LIMIT_BYTES = 10 * 1000 ** 3;

/** Words the messages are made of: enough of them that the search index grows as real mail's would. */
const WORDS = ("invoice order delivery warehouse statement payment account quarter finance return refund address " +
  "customer supplier contract renewal schedule meeting report budget forecast shipment tracking receipt balance " +
  "credit debit transfer approval review deadline update request question answer follow summary detail status " +
  "pallet courier customs export import license audit policy insurance claim damage replacement warranty service").split(" ");

/** About 3 KB of text for message `index`: sentences of the words above, with a number of its own. */
export function text(index) {
  const sentences = [];
  let length = 0;
  for (let sentence = 0; length < 3000; sentence += 1) {
    const words = Array.from({ length: 12 }, (_, word) => WORDS[(index * 31 + sentence * 7 + word * 13) % WORDS.length]);
    const line = `${words.join(" ")} ${index * 100 + sentence}.`;
    sentences.push(line[0].toUpperCase() + line.slice(1));
    length += line.length + 1;
  }
  return sentences.join(" ");
}

function message(index) {
  return [
    "From: Ana Lima <ana@customer.example>",
    "To: Support <support@mailroom.test>",
    `Subject: Order ${index}: a question about the invoice`,
    `Message-ID: <capacity-${index}@customer.example>`,
    "Date: Tue, 1 Dec 2026 09:00:00 +0000",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    text(index),
    "",
  ].join("\r\n");
}

/** The bytes each table and index of the node's D1 holds now, by name. */
function bytesByName(state) {
  const directory = join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(directory).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
  const database = new DatabaseSync(join(directory, file), { readOnly: true });
  try {
    return new Map(database.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all().map((row) => [row.name, row.bytes]));
  } finally {
    database.close();
  }
}

/** What a name's growth is part of, for the table. */
function partOf(name) {
  if (name.startsWith("receipt_headers_index") || name.startsWith("receipt_bodies_index")) return "search index";
  if (name.startsWith("receipt") || name.startsWith("sqlite_autoindex_receipts")) return "received messages and their lookups";
  if (name.startsWith("mail_thread") || name.startsWith("thread")) return "conversations";
  if (name.startsWith("audit")) return "audit chain";
  return "other";
}

/**
 * D1's growth per message, twice: with the mail kept in D1 (as a node kept it
 * before decision 0040), and with each mailbox's mail in its own Durable
 * Object, as nodes keep it now, where D1 holds the directory's part alone.
 */
export async function capacity(count) {
  await capacityOf(count, "mail in D1", { NEW_MAILBOXES_IN_OWN_DATABASES: "false" });
  await capacityOf(count, "mail in each mailbox's own Durable Object", { NEW_MAILBOXES_IN_OWN_DATABASES: "true" });
}

async function capacityOf(count, layout, vars) {
  const node = await startNode({ vars });
  try {
    const { token, admin } = await setUp(node);
    const call = timedClient(node.url);
    await mailboxFor(call, token, admin, "support@mailroom.test", "Support");
    // One first, so what every message shares (its conversation's first row, the pages tables start with) is paid before.
    await node.deliver("ana@customer.example", "support@mailroom.test", message(0));
    const before = bytesByName(node.state);
    for (let index = 1; index <= count; index += 1) {
      const refused = await node.deliver("ana@customer.example", "support@mailroom.test", message(index));
      if (refused) throw new Error(`message ${index} was refused: ${refused}`);
    }
    const after = bytesByName(node.state);
    const grown = new Map();
    for (const [name, bytes] of after) {
      const growth = bytes - (before.get(name) ?? 0);
      if (growth !== 0) grown.set(partOf(name), (grown.get(partOf(name)) ?? 0) + growth);
    }
    const total = [...grown.values()].reduce((sum, bytes) => sum + bytes, 0);
    const perMessage = total / count;
    console.log(`capacity, ${layout}: ${count} messages of ${Buffer.byteLength(text(1))} bytes of text each, through the email handler; D1 bytes per message`);
    table(["part", "bytes per message"], [
      ...[...grown.entries()].sort((left, right) => right[1] - left[1]).map(([part, bytes]) => [part, (bytes / count).toFixed(0)]),
      ["in all", perMessage.toFixed(0)],
    ]);
    const held = perMessage > 0 ? `${(D1_LIMIT_BYTES / perMessage / 1e6).toFixed(2)} million` : "any number of";
    console.log(`at that rate D1's 10 GB holds ${held} messages per organisation (the directory and the rest of the node share it)`);
    console.log();
  } finally {
    await node.stop();
  }
}

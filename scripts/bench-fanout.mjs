// The benchmark's fanout phase through the node's routes (scripts/bench.mjs;
// issue 30, decision 0040): "100 mailboxes × 10,000 messages: a person's search
// across 10 of them p50 <= 2x a single mailbox's". A node with `count`
// mailboxes, each holding `each` messages of about 3 KB of text
// (bench-capacity's) seeded into its own Durable Object (bench-seed.mjs), and
// a person who reads `read` of them: `GET /api/search` as that person for a
// word in every message and for one in 1 in 100, across every mailbox they
// read and in one of them; and as the administrator, who reads them all (a
// group of 20 a page). Asserts nothing.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startNode, setUp, ROOT, ADMIN } from "../tests/e2e/harness.mjs";
import { percentile, table, timedClient, measureInTurn, mean, mailboxFor, signIn, MAIL_VARS } from "./bench-kit.mjs";
import { text } from "./bench-capacity.mjs";
import { COMMON, RARE, receiptsStatement, indexStatements, templateOf, withMailStores } from "./bench-seed.mjs";

/** Times each search is asked, in turn with the others, after 5 rounds of warming up. */
const ROUNDS = 40;
/** Messages stored in one transaction of a mailbox's object (their texts, about 600 KB, a JSON array bound to one statement). */
const PER_BATCH = 200;

const plain = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "latin1");

/**
 * Mailbox number `which` of `count`'s messages `from` to `to - 1` (its own
 * numbering, `k`), and their index rows. Message `k` is number `i = 1 + k *
 * count + which` across the node, so the mailboxes' mail is interleaved in
 * time; "invoice" is in every one and "quartz" in each mailbox's 1 in 100.
 */
function fanoutStatements(which, count, from, to, template, mailboxId, indexed) {
  const number = (k) => 1 + k * count + which;
  const texts = Array.from({ length: to - from }, (_, offset) => text(number(from + offset)));
  const receipts = {
    numbers: `n(i, k, text) AS (SELECT 1 + (${from} + key) * ${count} + ${which}, ${from} + key, value FROM json_each(?1))`,
    subject: `printf('Invoice %d for order %d', i, i) || CASE WHEN k % 100 = 7 THEN ' (${RARE})' ELSE '' END`,
    body: `printf('Hello, this is about the ${COMMON} for order %d. ', i) || text || ' '
         || CASE WHEN k % 100 = 7 THEN 'The ${RARE} sample is ready. ' ELSE '' END || 'Regards, Ana'`,
  };
  return [[receiptsStatement(receipts, template, mailboxId), JSON.stringify(texts)], ...indexStatements(number(from), number(to - 1) + 1, mailboxId, indexed)];
}

/** Seeds `each` messages into each of `mailboxes` with the node stopped: the seconds it took. */
async function seed(node, mailboxes, each, templateId) {
  return withMailStores(node, async (ask) => {
    const began = performance.now();
    const { template, indexed } = await templateOf(ask, mailboxes[0].id, templateId);
    for (const [which, mailbox] of mailboxes.entries()) {
      for (let from = 0; from < each; from += PER_BATCH) {
        const to = Math.min(each, from + PER_BATCH);
        await ask(mailbox.id, fanoutStatements(which, mailboxes.length, from, to, template, mailbox.id, indexed));
      }
    }
    return (performance.now() - began) / 1000;
  });
}

/** A person who reads (metadata and content) each of `mailboxes`: their credentials. */
async function readerOf(call, token, mailboxes) {
  const reader = { email: "pat@example.com", password: "pat has a long password" };
  const pat = (await call("POST", "/api/people", { token, body: { email: reader.email, name: "Pat", password: reader.password } })).body;
  for (const mailbox of mailboxes) {
    for (const relation of ["mailbox.metadata.read", "mailbox.content.read"]) {
      await call("POST", "/api/relations", { token, body: { subject: pat.id, relation, object: mailbox.id } });
    }
  }
  return reader;
}

export async function fanoutThroughRoutes(count, read, each) {
  if (MAIL_VARS.NEW_MAILBOXES_IN_OWN_DATABASES !== "true") throw new Error("the fan-out is across mailboxes' own objects, which OWN_DATABASES=false has none of");
  console.log(`== fanout through the routes: ${count} mailboxes of ${each.toLocaleString("en")} messages each, a person who reads ${read} (decision 0040)`);
  // With Server-Timing (decision 0034), to say how much of each search was storage.
  const node = await startNode({ vars: { SERVER_TIMING: "true", ...MAIL_VARS } });
  try {
    const { admin } = await setUp(node);
    const call = timedClient(node.url);
    let token = await signIn(call, ADMIN.email, ADMIN.password);
    const mailboxes = [];
    for (let index = 0; index < count; index++) mailboxes.push(await mailboxFor(call, token, admin, `fan${index}@mailroom.test`, `Fan ${index}`));
    const reader = await readerOf(call, token, mailboxes.slice(0, read));
    if ((await node.deliver("ana@customer.example", mailboxes[0].address, plain)) !== null) throw new Error("the template was rejected");
    const templateId = (await call("GET", `/api/mailboxes/${mailboxes[0].id}/messages?limit=1`, { token })).body.messages[0].id;
    const seconds = await seed(node, mailboxes, each, templateId);
    console.log(`   seeded ${(count * each).toLocaleString("en")} messages into ${count} objects in ${seconds.toFixed(0)} s`);

    // Signed in after seeding: an access token lasts 15 minutes.
    token = await signIn(call, ADMIN.email, ADMIN.password);
    const readerToken = await signIn(call, reader.email, reader.password);
    const one = mailboxes[read - 1].id;
    const cases = [
      [`"${COMMON}", one mailbox`, readerToken, `/api/search?q=${COMMON}&mailbox=${one}`],
      [`"${COMMON}", across ${read}`, readerToken, `/api/search?q=${COMMON}`],
      [`"${RARE}", one mailbox`, readerToken, `/api/search?q=${RARE}&mailbox=${one}`],
      [`"${RARE}", across ${read}`, readerToken, `/api/search?q=${RARE}`],
      [`"${COMMON}", administrator across ${count}`, token, `/api/search?q=${COMMON}`],
      [`"${RARE}", administrator across ${count}`, token, `/api/search?q=${RARE}`],
    ];
    const searched = new Map();
    for (const [name, as, path] of cases) {
      const answer = (await call("GET", path, { token: as })).body;
      const group = answer.mailboxes_searched ? `, a group of ${answer.mailboxes_searched.mailbox_ids.length} of ${answer.mailboxes_searched.in_all}` : "";
      searched.set(name, `${answer.results.length} from ${new Set(answer.results.map((hit) => hit.mailbox_id)).size}${group}`);
    }
    const measured = await measureInTurn(
      cases.map(([name, as, path]) => [name, () => call("GET", path, { token: as })]),
      ROUNDS,
    );
    const p50 = (name) => percentile(measured.get(name), 0.5);
    const storage = (name) => mean(measured.get(name).phases.map((spent) => spent.storage));
    const rows = cases.map(([name]) => [name, searched.get(name), p50(name), percentile(measured.get(name), 0.95), storage(name)]);
    console.log(`   ${ROUNDS} requests each, in turn, after 5 warm-up rounds\n`);
    table(["search", "first page: results from mailboxes", "p50 ms", "p95 ms", "storage, mean ms"], rows);
    for (const word of [COMMON, RARE]) {
      const ratio = p50(`"${word}", across ${read}`) / p50(`"${word}", one mailbox`);
      console.log(`   "${word}": across ${read} / one mailbox, p50: ${ratio.toFixed(2)} (the issue's target: 2 at most)`);
    }
  } finally {
    await node.stop();
  }
}

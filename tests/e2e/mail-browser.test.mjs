// Mail in a real browser: headless Chromium against the built Worker on workerd.
// An administrator sets up a mailbox and two people through the page, a real
// message arrives through the Worker's email handler, one person reads it and
// replies, a second person approves the reply, and the reply leaves through the
// send_email binding, threaded. Three people, three browser contexts (three
// cookie jars); every console error and CSP violation in any of them fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { startNode, setUp, ROOT, ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { signIn as signInAt } from "./browser-helpers.mjs";

const SUPPORT = { address: "support@mailroom.test", name: "Support" };
const WRITER = { name: "Wren Writer", email: "wren@example.com", password: "wren's first long password" };
const APPROVER = { name: "Abe Approver", email: "abe@example.com", password: "abe's first long password" };
const QUESTION = "Where is my invoice?";
const REPLY_SUBJECT = `Re: ${QUESTION}`;
const FIRST_DRAFT = "Hello Ana,\n\nLet me check.\n";
const REPLY_TEXT = "Hello Ana,\n\nWe have sent the invoice for order 4471 again today.\n\nSupport\n";
const PERSON_ID = /usr_[0-9A-HJKMNP-TV-Z]{26}/;
const MAILBOX_ID = /mbx_[0-9A-HJKMNP-TV-Z]{26}/;
const fixture = (name) => readFileSync(join(ROOT, "tests", "fixtures", "mail", `${name}.eml`));
// How many messages a list or a search shows at a time, read from the page's own
// script (its pager module) so this file never restates it.
const PER_PAGE = Number(/const PER_PAGE = (\d+);/.exec(readFileSync(join(ROOT, "src", "interface", "scripts", "pager.js"), "utf8"))?.[1]);
const NEWS = { address: "news@mailroom.test", name: "Newsletters" };
/** A small message to the news mailbox, the `number`th of a run. */
const bulletin = (number) => Buffer.from([
  "From: Press Office <press@outside.example>",
  `To: ${NEWS.address}`,
  `Subject: Bulletin ${String(number).padStart(2, "0")}`,
  `Date: Sat, 28 Nov 2026 08:${String(number % 60).padStart(2, "0")}:00 +0000`,
  `Message-ID: <bulletin-${number}@outside.example>`,
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
  "",
  `Issue ${number} of the bulletin.`,
  "",
].join("\r\n"));
const REFUSED_SUBJECT = "Free upgrades for every customer";
const REFUSAL_REASON = "We do not promise upgrades by mail; offer a call instead.";
// Mail is written by strangers: markup in its name, subject and text must reach the page as text.
const HOSTILE_SUBJECT = `<img src=x onerror="document.title='owned'"> Urgent`;
const HOSTILE = Buffer.from([
  `From: "<b>Mallory</b>" <mallory@evil.example>`,
  "To: support@mailroom.test",
  `Subject: ${HOSTILE_SUBJECT}`,
  "Date: Fri, 27 Nov 2026 10:00:00 +0000",
  "Message-ID: <hostile-1@evil.example>",
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
  "",
  `<script>document.title = "owned"</script><a href="javascript:alert(1)">click</a>`,
  "",
].join("\r\n"));

let node, call, token, browser, mailboxId;
const ids = {};
/** Everything any page reported that it should not have, by who saw it. */
const watch = new PageWatch();

before(async () => {
  // Ana is the one destination the send_email binding accepts, as Email Routing
  // accepts only verified ones.
  node = await startNode({ sendEmail: { allowed_destination_addresses: ["ana@customer.example"] } });
  ({ call, token } = await setUp(node));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** A page in a browser context of its own (its own cookies), watched for errors and CSP violations. */
async function openPage(who) {
  return (await watch.open(browser, { who, acceptDownloads: true })).page;
}

const signIn = (page, person) => signInAt(page, node.url, person);

/**
 * Searches from the search box on the page, for `words`, in `scope` (a
 * mailbox's address) if given; from a mailbox's conversations, which have no
 * such box, through their link to the search of all mail.
 */
async function search(page, words, scope) {
  const box = page.getByRole("search", { name: "Search mail" });
  if (!(await box.count())) await page.getByRole("link", { name: "Search the text of mail" }).click();
  await box.getByLabel("Search for").fill(words);
  if (scope) await box.getByLabel("In", { exact: true }).selectOption({ label: scope });
  await box.getByRole("button", { name: "Search" }).click();
}

/** The rows of a table's body (its header row has no cells), as their cells' text. */
async function bodyRows(within) {
  const rows = within.getByRole("row").filter({ has: within.page().getByRole("cell") });
  return Promise.all((await rows.all()).map((row) => row.getByRole("cell").allTextContents()));
}

/** Every result of a search through the API, following `next_cursor`. */
async function searchAll(parameters, asToken) {
  const results = [];
  let cursor;
  do {
    const page = await call("GET", `/api/search?${new URLSearchParams({ ...parameters, ...(cursor ? { cursor } : {}) })}`, { token: asToken });
    assert.equal(page.status, 200, page.text);
    results.push(...page.body.results);
    cursor = page.body.next_cursor;
  } while (cursor);
  return results;
}

const section = (page, name) => page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true });

/** From Mail (a mailbox's conversations), the mailboxes and what the person holds on each. */
async function yourMailboxes(page) {
  await section(page, "Mail").click();
  await page.getByRole("link", { name: "Your mailboxes and what you hold" }).click();
  return page.getByRole("region", { name: "Mailboxes I can read" });
}

/** Every message a mailbox received, one by one (Mail itself shows conversations). */
async function everyMessage(page, address) {
  await (await yourMailboxes(page)).getByRole("link", { name: address, exact: true }).click();
  await page.getByRole("link", { name: "Every message" }).click();
  await page.getByRole("region", { name: "Messages, newest first" }).waitFor();
}
const statusSaying = (page, text) => page.getByRole("status").filter({ hasText: text });

/** An API token for a person, to check what the page did from outside it. */
async function tokenFor({ email, password }) {
  const signedIn = await call("POST", "/api/sessions", { body: { email, password } });
  assert.equal(signedIn.status, 201, signedIn.text);
  return signedIn.body.session.access_token;
}

/** The text of a single-part message, its transfer encoding undone. */
function bodyOf(raw) {
  const [head, ...rest] = raw.replace(/\r\n/g, "\n").split("\n\n");
  const body = rest.join("\n\n");
  const encoding = /^Content-Transfer-Encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding === "quoted-printable") {
    return Buffer.from(body.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, hex) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8");
  }
  return body;
}

let admin, writer, approver;

test("an administrator creates the mailbox in the Mailboxes section", async () => {
  admin = await openPage("administrator");
  await signIn(admin, ADMIN);
  for (const name of ["Mail", "Approvals", "People", "Teams", "Mailboxes", "Relations", "Audit", "Account"]) {
    assert.ok(await section(admin, name).isVisible(), name);
  }
  assert.equal(await section(admin, "People").getAttribute("aria-current"), "page", "an administrator lands on People");

  await section(admin, "Mailboxes").click();
  await admin.getByRole("heading", { name: "Mailboxes", level: 1 }).waitFor();
  await admin.getByLabel("Address").fill(SUPPORT.address);
  await admin.getByLabel("Display name").fill(SUPPORT.name);
  await admin.getByRole("button", { name: "Create mailbox" }).click();
  await statusSaying(admin, `Created ${SUPPORT.address}`).waitFor();

  const row = admin.getByRole("row").filter({ hasText: SUPPORT.address });
  await row.waitFor();
  mailboxId = (await row.textContent()).match(MAILBOX_ID)?.[0];
  assert.ok(mailboxId, "the new mailbox's id is shown");
  const all = (await call("GET", "/api/mailboxes/all", { token })).body.mailboxes;
  assert.deepEqual(all.map(({ id, address, display_name }) => ({ id, address, display_name })), [{ id: mailboxId, address: SUPPORT.address, display_name: SUPPORT.name }]);
});

test("an administrator renames the mailbox in place", async () => {
  const row = admin.getByRole("row").filter({ hasText: SUPPORT.address });
  await row.getByRole("button", { name: `Rename ${SUPPORT.address}` }).click();
  await admin.getByLabel(`New display name for ${SUPPORT.address}`).fill("Support desk");
  await admin.getByRole("button", { name: "Save name" }).click();
  await statusSaying(admin, `Renamed ${SUPPORT.address} to “Support desk”`).waitFor();
  assert.equal((await call("GET", "/api/mailboxes/all", { token })).body.mailboxes[0].display_name, "Support desk");

  // And back, so the sender's name on the reply is the one this file expects.
  await admin.getByRole("row").filter({ hasText: SUPPORT.address }).getByRole("button", { name: `Rename ${SUPPORT.address}` }).click();
  await admin.getByLabel(`New display name for ${SUPPORT.address}`).fill(SUPPORT.name);
  await admin.getByRole("button", { name: "Save name" }).click();
  await statusSaying(admin, `Renamed ${SUPPORT.address} to “${SUPPORT.name}”`).waitFor();
});

test("an administrator creates a writer and an approver, and grants them relations on the mailbox by its address", async () => {
  await section(admin, "People").click();
  await admin.getByRole("heading", { name: "People", level: 1 }).waitFor();
  for (const [key, person] of [["writer", WRITER], ["approver", APPROVER]]) {
    await admin.getByLabel("Name", { exact: true }).fill(person.name);
    await admin.getByLabel("Email", { exact: true }).fill(person.email);
    await admin.getByLabel("First password").fill(person.password);
    await admin.getByRole("button", { name: "Create person" }).click();
    const row = admin.getByRole("row").filter({ hasText: person.email });
    await row.waitFor();
    ids[key] = (await row.textContent()).match(PERSON_ID)?.[0];
    assert.ok(ids[key], `${person.name}'s id is shown`);
  }

  await section(admin, "Relations").click();
  await admin.getByRole("heading", { name: "Relations", level: 1 }).waitFor();
  // The Object list follows the relation: the organisation for org relations, the mailboxes for mailbox ones.
  await admin.getByLabel("Relation", { exact: true }).selectOption("org.admin");
  assert.deepEqual(await admin.getByLabel("Object", { exact: true }).locator("option").allTextContents(), ["The organisation"]);
  await admin.getByLabel("Relation", { exact: true }).selectOption("send.propose");
  assert.deepEqual(await admin.getByLabel("Object", { exact: true }).locator("option").allTextContents(), ["Choose a mailbox…", `${SUPPORT.address} (${SUPPORT.name})`]);

  const grants = [
    ["writer", WRITER, "mailbox.metadata.read"],
    ["writer", WRITER, "mailbox.content.read"],
    ["writer", WRITER, "send.propose"],
    ["approver", APPROVER, "mailbox.metadata.read"],
    ["approver", APPROVER, "mailbox.content.read"],
    ["approver", APPROVER, "approval.decide"],
  ];
  for (const [key, person, relation] of grants) {
    await admin.getByLabel("Subject", { exact: true }).selectOption(ids[key]);
    await admin.getByLabel("Relation", { exact: true }).selectOption(relation);
    await admin.getByLabel("Object", { exact: true }).selectOption({ label: `${SUPPORT.address} (${SUPPORT.name})` });
    await admin.getByRole("button", { name: "Grant", exact: true }).click();
    await statusSaying(admin, `Granted to ${person.name} on ${SUPPORT.address}:`).filter({ hasText: relation }).waitFor();
  }
  const row = admin.getByRole("row").filter({ hasText: ids.approver }).filter({ hasText: "approval.decide" });
  assert.match(await row.textContent(), new RegExp(SUPPORT.address.replace(/\./g, "\\.")), "the object is shown by its address");
  assert.ok(await row.getByRole("button", { name: new RegExp(`^Revoke “Approve or refuse .*” on ${SUPPORT.address.replace(/\./g, "\\.")} from ${APPROVER.name}$`) }).isVisible());

  const held = (await call("GET", `/api/relations`, { token })).body.relations
    .filter((tuple) => tuple.object === mailboxId)
    .map(({ subject, relation }) => `${subject} ${relation}`)
    .sort();
  assert.deepEqual(held, grants.map(([key, , relation]) => `${ids[key]} ${relation}`).sort());
});

test("real messages arrive through the Worker's email handler", async () => {
  assert.equal(await node.deliver("ana@customer.example", SUPPORT.address, fixture("plain")), null);
  assert.equal(await node.deliver("sender@outside.example", SUPPORT.address, fixture("multipart-attachment")), null);
  assert.equal(await node.deliver("mallory@evil.example", SUPPORT.address, HOSTILE), null);
});

test("someone who holds only metadata sees that a message exists, and is told what reading it needs", async () => {
  // The administrator grants themselves mailbox.metadata.read: administering confers no mail.
  await admin.getByLabel("Subject", { exact: true }).selectOption(await call("GET", "/api/me", { token }).then((me) => me.body.id));
  await admin.getByLabel("Relation", { exact: true }).selectOption("mailbox.metadata.read");
  await admin.getByLabel("Object", { exact: true }).selectOption({ label: `${SUPPORT.address} (${SUPPORT.name})` });
  await admin.getByRole("button", { name: "Grant", exact: true }).click();
  await statusSaying(admin, `Granted to ${ADMIN.name} on ${SUPPORT.address}:`).filter({ hasText: "mailbox.metadata.read" }).waitFor();

  await everyMessage(admin, SUPPORT.address);
  await admin.getByRole("link", { name: QUESTION }).click();
  await admin.getByRole("heading", { name: QUESTION, level: 2 }).waitFor();
  const text = admin.getByRole("region", { name: "Text" });
  await text.getByText("Reading the text needs the right to read mail's text here.").waitFor();
  assert.match(await text.textContent(), /you may see that this message exists, who sent it/);
  assert.doesNotMatch(await text.textContent(), /mailbox\.(metadata|content)\.read/, "words, not codes");
  assert.equal(await text.locator("pre").count(), 0, "no text is shown");
  assert.equal(await admin.getByRole("button", { name: "Reply" }).count(), 0, "no Reply without send.propose");
  assert.equal(await admin.getByRole("link", { name: /original/ }).count(), 0, "no original without content.read and export");

  const reads = (await call("GET", "/api/audit?limit=50", { token })).body.entries.filter((entry) => entry.action === "get_message_body");
  assert.deepEqual(reads, [], "the page never asked for the text");
});

test("the writer finds the message in Mail and reads its text, as plain text", async () => {
  writer = await openPage("writer");
  await signIn(writer, WRITER);
  assert.equal(await section(writer, "Mail").getAttribute("aria-current"), "page", "everyone else lands on Mail");
  for (const name of ["People", "Mailboxes", "Relations", "Audit"]) assert.equal(await section(writer, name).count(), 0, name);

  // Mail lands on the mailbox's conversations; what the writer holds is a step away, in words.
  await writer.getByRole("list", { name: `Conversations in ${SUPPORT.address}` }).waitFor();
  const readable = await yourMailboxes(writer);
  const { relations } = (await call("GET", "/api/agent-capabilities", { token })).body;
  const words = (name) => relations.find((relation) => relation.name === name).description;
  const held = await readable.getByRole("row").filter({ hasText: SUPPORT.address }).innerText();
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]) assert.ok(held.includes(words(relation)), `${words(relation)} in ${held}`);
  assert.doesNotMatch(held, /mailbox\.content\.read|send\.propose/, "in words, not codes");
  assert.match(await writer.getByRole("region", { name: "Mailboxes I can send from" }).textContent(), new RegExp(SUPPORT.address.replace(/\./g, "\\.")));
  await readable.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  await writer.getByRole("link", { name: "Every message" }).click();

  const row = writer.getByRole("row").filter({ hasText: QUESTION });
  await row.waitFor();
  const [from, , received, attachments] = await row.getByRole("cell").allTextContents();
  assert.match(from, /Ana Lima.*<ana@customer\.example>/);
  assert.ok(received.trim(), "the received time is shown");
  assert.equal(attachments, "—");
  const contract = writer.getByRole("row").filter({ hasText: "Signed contract attached" });
  assert.equal((await contract.getByRole("cell").allTextContents())[3], "1");

  await row.getByRole("link", { name: QUESTION }).click();
  await writer.getByRole("heading", { name: QUESTION, level: 2 }).waitFor();
  assert.match(new URL(writer.url()).hash, new RegExp(`^#/mail/${mailboxId}/rcp_[0-9A-HJKMNP-TV-Z]{26}$`));
  const text = writer.getByRole("region", { name: "Text" }).locator("pre");
  await text.waitFor();
  assert.match(await text.textContent(), /I have not received the invoice for order 4471\. Could you resend it\?/);
  assert.equal(await writer.getByRole("link", { name: /original/ }).count(), 0, "no original without message.export");
});

test("markup in a stranger's name, subject and text is shown as text, never run or rendered", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  await writer.getByRole("link", { name: "Every message" }).click();
  const row = writer.getByRole("row").filter({ hasText: HOSTILE_SUBJECT });
  assert.match(await row.getByRole("cell").first().textContent(), /^<b>Mallory<\/b>/);
  await row.getByRole("link", { name: HOSTILE_SUBJECT }).click();
  await writer.getByRole("heading", { name: HOSTILE_SUBJECT, level: 2 }).waitFor();
  const text = writer.getByRole("region", { name: "Text" }).locator("pre");
  await text.waitFor();
  assert.equal((await text.textContent()).trim(), `<script>document.title = "owned"</script><a href="javascript:alert(1)">click</a>`);
  const main = writer.getByRole("main");
  for (const tag of ["img", "b", "script", "a[href^='javascript']"]) assert.equal(await main.locator(tag).count(), 0, tag);
  assert.equal(await writer.title(), `${HOSTILE_SUBJECT} · Mail · Mailroom`, "the subject is in the title as text, and no script renamed it");
});

/**
 * The characters of `locator`'s text as laid out: in the order they were
 * written, and in the order they stand on the screen (line by line, left to
 * right), each leaving out what takes no room. A right-to-left override makes
 * the two differ.
 */
async function orderOnScreen(locator) {
  return locator.evaluate((element) => {
    const placed = [];
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      for (let at = 0; at < text.data.length; at += 1) {
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + 1);
        const box = range.getBoundingClientRect();
        if (box.width > 0 && text.data[at].trim()) placed.push({ character: text.data[at], top: Math.round(box.top), left: box.left });
      }
    }
    const written = placed.map((item) => item.character).join("");
    const seen = [...placed].sort((a, b) => a.top - b.top || a.left - b.left).map((item) => item.character).join("");
    return { written, seen };
  });
}

test("a right-to-left override in a stranger's subject, name and file name reverses nothing: each is shown in the order it was written", async () => {
  // Each holds U+202E, which would show `Statement cod.exe for November` as
  // `Statement rebmevoN rof exe.doc`, and `report`, U+202E, `fdp.exe` as `reportexe.pdf`.
  assert.equal(await node.deliver("billing@vendor.example", SUPPORT.address, fixture("direction-controls")), null);
  const subject = "Statement [U+202E]cod.exe for November";
  const inOrder = async (locator, expected) => {
    const { written, seen } = await orderOnScreen(locator);
    assert.equal(seen, written, `shown as written: ${expected}`);
    assert.ok(written.includes(expected.replace(/\s/g, "")), `${expected} in ${written}`);
  };

  // In the mailbox's conversations, each field isolated and the control shown.
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  const conversations = writer.getByRole("list", { name: `Conversations in ${SUPPORT.address}` });
  const listed = conversations.getByRole("link", { name: subject });
  await listed.waitFor();
  await inOrder(listed, subject);
  await inOrder(conversations.getByRole("listitem").filter({ hasText: "cod.exe" }).locator(".thread-who"), "Billing [U+202E]ecnaniF");

  // In every message, then on the message's own page and in the window's title.
  await writer.getByRole("link", { name: "Every message" }).click();
  const row = writer.getByRole("row").filter({ hasText: "cod.exe" });
  await inOrder(row.getByRole("link", { name: subject }), subject);
  await inOrder(row.getByRole("cell").first(), "Billing [U+202E]ecnaniF <billing@vendor.example>");
  await row.getByRole("link", { name: subject }).click();
  const heading = writer.getByRole("heading", { name: subject, level: 2 });
  await heading.waitFor();
  await inOrder(heading, subject);
  assert.equal(await writer.title(), `${subject} · Mail · Mailroom`, "no override reaches the window's title");
  const file = writer.getByRole("region", { name: "Attachments" }).getByRole("link", { name: /^report\[U\+202E\]fdp\.exe/ });
  await inOrder(file, "report[U+202E]fdp.exe");
  const [download] = await Promise.all([writer.waitForEvent("download"), file.click()]);
  assert.equal(download.suggestedFilename(), "report_fdp.exe", "saved under a name that reads as the .exe it is");
});

test("an HTML message is shown formatted in a sandboxed frame that runs nothing and loads nothing, or as its text in paragraphs", async () => {
  // A listener on 127.0.0.1: everything the message tries to load or call goes here, and nothing may arrive.
  const reached = [];
  const listener = createServer((request, response) => {
    reached.push(request.url);
    response.end();
  });
  await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const elsewhere = `http://127.0.0.1:${listener.address().port}`;
  const subject = "The Ledger: quarterly update";
  const html = [
    "<html><head><title>The Ledger</title><style>h1 { color: #c00 }</style></head><body style='margin:0'>",
    '<div style="display:none;max-height:0">Revenue up, a new office&nbsp;&zwnj;</div>',
    `<table width="600" background="${elsewhere}/background"><tr><td style="padding:24px; font-family:Georgia">`,
    '<h1 style="font-size:28px">Quarterly update</h1>',
    "<p style=color:#333>Revenue grew by <b>twelve</b> percent.</p>",
    "<ul><li>A new office in Lisbon</li><li>Two more hires</li></ul></td></tr></table>",
    `<p><img src="${elsewhere}/tracker" width="1" height="1" alt=""><img src="x" onerror="fetch('${elsewhere}/onerror')">`,
    '<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" alt="A dot">',
    `<script>fetch("${elsewhere}/script"); parent.document.title = "ran"</script></p>`,
    `<p><a href="https://letters.example/report" onclick="fetch('${elsewhere}/onclick')">Read the full report</a></p>`,
    `<p><a href="javascript:fetch('${elsewhere}/javascript')">Claim your reward</a> · <a href="/api/me">Your account</a></p>`,
    "</body></html>",
  ].join("\n");
  assert.equal(await node.deliver("news@letters.example", SUPPORT.address, Buffer.from([
    "From: The Ledger <news@letters.example>",
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Sat, 28 Nov 2026 07:00:00 +0000",
    "Message-ID: <ledger-quarterly@letters.example>",
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "",
    html,
    "",
  ].join("\r\n"))), null);

  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: subject }).click();
  await writer.getByRole("heading", { name: subject, level: 2 }).waitFor();
  const text = writer.getByRole("region", { name: "Text" });
  const views = text.getByRole("group", { name: "Show the message" });
  assert.equal(await views.getByRole("button", { name: "Formatted" }).getAttribute("aria-pressed"), "true", "formatted first");

  // Formatted: sanitised, in a frame sandboxed without scripts and without this origin.
  const frame = text.locator("iframe");
  await frame.waitFor();
  const sandbox = await frame.getAttribute("sandbox");
  assert.notEqual(sandbox, null, "the frame is sandboxed");
  const allowed = sandbox.split(/\s+/);
  for (const token of ["allow-same-origin", "allow-scripts", "allow-top-navigation", "allow-forms"]) assert.ok(!allowed.includes(token), `${token} in ${sandbox}`);
  const srcdoc = await frame.getAttribute("srcdoc");
  assert.match(srcdoc, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:;/);
  for (const removed of ["<script", "onerror", "onclick", "javascript:", elsewhere, 'href="/api', "<style>h1", "style=", "Revenue up"]) {
    assert.ok(!srcdoc.includes(removed), `${removed} is not in what the frame shows`);
  }
  const shown = frame.contentFrame();
  await shown.getByRole("heading", { name: "Quarterly update" }).waitFor();
  assert.equal(await shown.getByRole("listitem").count(), 2);
  const report = shown.getByRole("link", { name: "Read the full report" });
  assert.equal(await report.getAttribute("href"), "https://letters.example/report");
  assert.equal(await report.getAttribute("target"), "_blank", "a link opens a tab of its own, never this page or the frame");
  assert.match(await report.getAttribute("rel"), /noopener/);
  assert.equal(await shown.getByRole("link").count(), 1, "javascript: and a link back to the node are left as text");
  await shown.getByText("Claim your reward").waitFor();
  assert.equal(await shown.locator("script, [onclick], [onerror]").count(), 0);
  assert.ok(await shown.getByRole("img", { name: "A dot" }).evaluate((image) => image.complete && image.naturalWidth === 1), "an image inside the message is shown");
  await text.getByText("Images from the web are not loaded (3 in this message)").waitFor();
  await writer.waitForTimeout(1000);
  assert.deepEqual(reached, [], "nothing in the message ran or loaded from elsewhere");
  assert.equal(await writer.title(), `${subject} · Mail · Mailroom`);

  // Plain text: the node's rendering, its paragraphs kept, in the page's own font.
  await views.getByRole("button", { name: "Plain text" }).click();
  assert.equal(await views.getByRole("button", { name: "Plain text" }).getAttribute("aria-pressed"), "true");
  const plain = text.locator("pre");
  assert.equal(await plain.textContent(), [
    "Quarterly update",
    "",
    "Revenue grew by twelve percent.",
    "",
    "• A new office in Lisbon",
    "• Two more hires",
    "",
    "Read the full report",
    "",
    "Claim your reward · Your account",
  ].join("\n"), "not run together");
  assert.doesNotMatch(await plain.evaluate((element) => getComputedStyle(element).fontFamily), /mono/i);
  assert.equal(await text.locator("iframe").count(), 0);
  await views.getByRole("button", { name: "Formatted" }).click();
  await text.locator("iframe").contentFrame().getByRole("heading", { name: "Quarterly update" }).waitFor();
  await writer.waitForTimeout(500);
  assert.deepEqual(reached, []);
  await fetch(`${elsewhere}/control`);
  assert.deepEqual(reached, ["/control"], "the listener hears what does reach it");
  await new Promise((resolve) => listener.close(resolve));
});

test("hostile HTML of every kind is shown formatted without a word in the console, and its text is shown as written", async () => {
  // Each line is something the page's policy would report if any document parsed
  // under it held it (Chrome reports what DOMPurify's inert parse holds): handlers in
  // every place the tokenizer starts an attribute, styles, SVG and MathML, forms,
  // javascript: addresses, and markup that hides a tag from a careless reader.
  const hostile = [
    `<body onload="alert(1)" style="margin:0" background="javascript:alert(1)">`,
    `<p>Meet on Monday; the "one" online 'style' guide, on/off and/onward.</p>`,
    `<img src=x onerror="alert(1)"><IMG SRC=x ONERROR=alert(1)><img/src/onerror=alert(1)><img src=""onerror=alert(1)>`,
    `<img\nsrc=x\r\nonerror=alert(1)><img\tsrc=x\fonerror=alert(1)><a href='https://letters.example/a'onclick='alert(1)'>quoted</a>`,
    `<p title="a>b" style="color:red" onclick="alert(1)">gt in a value</p><p STYLE=color:red>upper</p><p/style=color:red>slashed</p>`,
    `<style>p{color:red}</style><STYLE media=all>p{}</STYLE><div><style>p{}</style></div>`,
    `<svg onload="alert(1)"><circle r=1 onclick=alert(1) /><animate onbegin=alert(1) attributeName=x dur=1s /><set attributeName=onmouseover to=alert(1) />`,
    `<a xlink:href="javascript:alert(1)"><text>x</text></a><style>circle{fill:red}</style><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>`,
    `<svg><style><img src=x onerror=alert(1)></style></svg><math><mi xlink:href="javascript:alert(1)" onclick=alert(1)>x</mi><style>x{}</style></math>`,
    `<details open ontoggle="alert(1)">details</details><frameset onload=alert(1)>`,
    `<a href="javascript:alert(1)">js</a><a href="  JaVaScRiPt:alert(1)">js2</a><iframe src="javascript:alert(1)"></iframe>`,
    `<form action="javascript:alert(1)" onsubmit=alert(1)><input name=a onfocus="alert(1)" autofocus><button formaction="javascript:alert(1)">b</button>`,
    `<select onchange=alert(1)><option>1</option></select><textarea onfocus=alert(1)><img onerror=alert(1)></textarea></form>`,
    `<script>x = "<a title='";</script><img src=x onerror=alert(1)>`,
    `<!--><img src=x onerror=alert(1)>--><!---><img src=x onerror=alert(2)><!-- --!><img src=x onerror=alert(3)>`,
    `<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)"><iframe srcdoc="<script>alert(1)</script>"></iframe>`,
    `<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><base href="javascript:alert(1)//">`,
    `<video poster="x" onerror=alert(1)><source src=x onerror=alert(1)></video><noscript><img src=x onerror=alert(1)></noscript>`,
    `<template><img src=x onerror=alert(1)></template><xmp><img src=x onerror=alert(1)></xmp>`,
    `<p>The end.</p>`,
  ].join("\n");
  const subject = "Every trick in one message";
  assert.equal(await node.deliver("mallory@evil.example", SUPPORT.address, Buffer.from([
    "From: Mallory <mallory@evil.example>",
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Sat, 28 Nov 2026 07:30:00 +0000",
    "Message-ID: <every-trick@evil.example>",
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "",
    hostile,
    "",
  ].join("\r\n"))), null);

  const before = { console: watch.consoleErrors.length, csp: watch.cspViolations.length, errors: watch.pageErrors.length };
  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: subject }).click();
  const frame = writer.getByRole("region", { name: "Text" }).locator("iframe");
  await frame.waitFor();
  const shown = frame.contentFrame();
  await shown.getByText("The end.").waitFor();
  assert.equal(await shown.getByText(`Meet on Monday; the "one" online 'style' guide, on/off and/onward.`).count(), 1, "text that looks like an attribute is shown as written");
  assert.equal(await shown.getByText("<img onerror=alert(1)>").count(), 1, "a textarea's text stays text");
  // What the frame holds is DOMPurify's serialisation: every tag in it is well formed.
  const body = (await frame.getAttribute("srcdoc")).replace(/^[\s\S]*<body>/, "");
  const tags = body.match(/<[a-z][^>]*>/gi);
  assert.deepEqual(tags.filter((tag) => /\s(on|style|&#)/i.test(tag)), [], "no handler, style or renamed attribute is left");
  assert.deepEqual(tags.filter((tag) => /^<(svg|math|form|input|button|select|textarea|iframe|object|embed|base|meta|video|script)\b/i.test(tag)), []);
  assert.ok(!/javascript:/i.test(tags.join("")), "no javascript: address");
  await writer.waitForTimeout(500);
  assert.deepEqual([
    ...watch.consoleErrors.slice(before.console).map(({ who, text }) => `${who}: ${text}`),
    ...watch.cspViolations.slice(before.csp),
    ...watch.pageErrors.slice(before.errors),
  ], [], "nothing in the message made any console report");
});

test("the writer downloads an attachment", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  await writer.getByRole("link", { name: "Every message" }).click();
  await writer.getByRole("link", { name: "Signed contract attached" }).click();
  const link = writer.getByRole("region", { name: "Attachments" }).getByRole("link", { name: "contract.pdf" });
  const [download] = await Promise.all([writer.waitForEvent("download"), link.click()]);
  assert.equal(download.suggestedFilename(), "contract.pdf");
  const bytes = readFileSync(await download.path());
  assert.ok(bytes.subarray(0, 8).equals(Buffer.from("%PDF-1.4")), "the attachment's bytes");
  assert.equal(await writer.getByRole("heading", { name: "Signed contract attached", level: 2 }).count(), 1, "the page stayed where it was");
});

test("the writer searches every mailbox they can read, finds a message by its text, and opens it", async () => {
  ids.writerToken = await tokenFor(WRITER);
  await section(writer, "Mail").click();
  await search(writer, "4471");
  await writer.waitForURL((url) => url.hash === "#/mail/search/4471");
  const results = writer.getByRole("region", { name: "Results for “4471”" });
  await results.getByRole("table").waitFor();
  const audit = (await call("GET", "/api/audit?limit=20", { token })).body.entries.find((entry) => entry.action === "search_messages");
  assert.equal(audit?.actor, ids.writer, "the page's search is recorded as the writer's");
  assert.equal(audit.detail.q, "4471");

  const answer = await searchAll({ q: "4471" }, ids.writerToken);
  assert.deepEqual(answer.map((hit) => [hit.subject, hit.matched_in]), [[QUESTION, "body"]], "the node found it by its text");
  const [[from, subject, mailbox, received, found]] = await bodyRows(results);
  assert.match(from, /Ana Lima.*<ana@customer\.example>/);
  assert.equal(subject, QUESTION);
  assert.match(mailbox, /^support@mailroom\.test/);
  assert.ok(received.trim(), "the received time is shown");
  assert.match(found, /^Text: .*order \[4471\]/s, "the passage it was found in");

  await results.getByRole("link", { name: QUESTION }).click();
  await writer.getByRole("heading", { name: QUESTION, level: 2 }).waitFor();
  assert.equal(new URL(writer.url()).hash, `#/mail/${mailboxId}/${answer[0].id}`);
  await writer.goBack();
  await writer.getByRole("region", { name: "Results for “4471”" }).getByRole("link", { name: QUESTION }).waitFor();
});

test("a stranger's markup found by a search is shown as text", async () => {
  await search(writer, "owned");
  const results = writer.getByRole("region", { name: "Results for “owned”" });
  await results.getByRole("table").waitFor();
  const [[from, subject, , , found]] = await bodyRows(results);
  assert.match(from, /^<b>Mallory<\/b>/);
  assert.equal(subject, HOSTILE_SUBJECT);
  assert.match(found, /<script>document\.title = "\[owned\]"<\/script>/);
  const main = writer.getByRole("main");
  for (const tag of ["img", "b", "script", "a[href^='javascript']"]) assert.equal(await main.locator(tag).count(), 0, tag);
  assert.equal(await writer.title(), "“owned” · Search · Mail · Mailroom");
});

test("a search the node cannot read is refused on the page with its reason and what to do", async () => {
  for (const [words, expectedCode] of [['"late payment', "unclosed_quote"], ["!!", "empty_query"]]) {
    watch.expectRefusal(400, "/api/search");
    await search(writer, words);
    const alert = writer.getByRole("region", { name: `Results for “${words}”` }).getByRole("alert");
    await alert.waitFor();
    const refused = await call("GET", `/api/search?q=${encodeURIComponent(words)}`, { token: ids.writerToken });
    assert.equal(refused.status, 400);
    const { code, message, reason, fix } = refused.body.error;
    assert.equal(code, expectedCode);
    const shown = await alert.textContent();
    for (const part of ["The search was not run.", message, `Why: ${reason}`, `What to do: ${fix}`, code, "HTTP 400"]) {
      assert.ok(shown.includes(part), `${part} in ${shown}`);
    }
    assert.equal(await writer.getByRole("search", { name: "Search mail" }).getByLabel("Search for").inputValue(), words, "the words stay, to be corrected");
  }
  await section(writer, "Mail").click();
});

test("someone who reads metadata alone finds mail by its subject, and never by its text", async () => {
  await section(admin, "Mail").click();
  await search(admin, "4471");
  const byText = admin.getByRole("region", { name: "Results for “4471”" });
  await byText.getByText("Nothing in every mailbox I can read matches “4471”.").waitFor();
  assert.match(await byText.textContent(), /In support@mailroom\.test you may see who wrote to whom about what, but not read the text/);
  assert.deepEqual(await searchAll({ q: "4471" }, token), [], "the node found nothing for them");
  assert.equal((await searchAll({ q: "4471" }, ids.writerToken)).length, 1, "though the word is there, in the text");

  await search(admin, "invoice");
  const bySubject = admin.getByRole("region", { name: "Results for “invoice”" });
  await bySubject.getByRole("table").waitFor();
  assert.deepEqual((await bodyRows(bySubject)).map(([, subject, , , found]) => [subject, found]), [[QUESTION, "Sender, recipients or subject"]]);
  assert.deepEqual((await searchAll({ q: "invoice" }, token)).map((hit) => [hit.subject, hit.matched_in, hit.snippet]), [[QUESTION, "headers", undefined]]);
});

test("a draft from New message can be deleted", async () => {
  await section(writer, "Mail").click();
  await writer.getByRole("link", { name: "New message" }).click();
  await writer.getByRole("heading", { name: `New message from ${SUPPORT.address}` }).waitFor();
  await writer.getByLabel("To", { exact: true }).fill("someone@customer.example");
  await writer.getByLabel("Subject").fill("A thought");
  await writer.getByLabel("Text").fill("Never mind.");
  await writer.getByRole("button", { name: "Save draft" }).click();
  await statusSaying(writer, "Draft saved").waitFor();
  await writer.getByRole("button", { name: "Delete draft" }).click();
  await writer.getByRole("button", { name: "Delete for good" }).click();
  await statusSaying(writer, "Draft deleted.").waitFor();

  ids.writerToken = await tokenFor(WRITER);
  const sends = (await call("GET", `/api/mailboxes/${mailboxId}/sends`, { token: ids.writerToken })).body.sends;
  assert.deepEqual(sends, [], "the draft is gone");
});

test("the writer replies from a message: the draft is begun with the sender by name, saved, edited, submitted, taken back and submitted again", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  await writer.getByRole("link", { name: "Every message" }).click();
  await writer.getByRole("link", { name: QUESTION }).click();
  await writer.getByRole("button", { name: "Reply" }).click();

  // Reply begins the draft at once, as a mail client would: to whom the message asked, by name.
  const reply = writer.getByRole("region", { name: "Reply to ana@customer.example" });
  await reply.getByLabel("Text").waitFor();
  assert.equal(await reply.getByLabel("To", { exact: true }).inputValue(), "Ana Lima <ana@customer.example>");
  assert.equal(await reply.getByLabel("Subject").inputValue(), REPLY_SUBJECT);
  await reply.getByLabel("Text").fill(FIRST_DRAFT);
  await reply.getByRole("button", { name: "Save changes" }).click();
  await statusSaying(writer, "Changes saved.").waitFor();

  await reply.getByLabel("Text").fill(REPLY_TEXT);
  await reply.getByRole("button", { name: "Save changes" }).click();
  await statusSaying(writer, "Changes saved.").waitFor();
  let [draft] = (await call("GET", `/api/mailboxes/${mailboxId}/sends`, { token: ids.writerToken })).body.sends;
  assert.equal(draft.state, "draft");
  assert.equal(draft.text, REPLY_TEXT);
  assert.equal(draft.in_reply_to, "invoice-question-1@customer.example", "a reply carries the threading header");
  ids.send = draft.id;

  await reply.getByRole("button", { name: "Submit for approval" }).click();
  await statusSaying(writer, "Submitted for approval").waitFor();
  assert.equal(await reply.getByText("Awaiting approval", { exact: true }).count(), 1, "the state is shown, in words");

  await reply.getByRole("button", { name: "Cancel submission" }).click();
  await statusSaying(writer, "Submission cancelled").waitFor();
  assert.equal(await reply.getByLabel("Text").inputValue(), REPLY_TEXT, "a draft again, to edit");
  await reply.getByRole("button", { name: "Submit for approval" }).click();
  await statusSaying(writer, "Submitted for approval").waitFor();
  [draft] = (await call("GET", `/api/mailboxes/${mailboxId}/sends`, { token: ids.writerToken })).body.sends;
  assert.equal(draft.state, "submitted");
  assert.equal(draft.submitted_by, ids.writer);
});

test("the writer cannot approve their own submission: it is not in their Approvals", async () => {
  // Even holding approval.decide on the mailbox, the submitter is never the second person.
  const granted = await call("POST", "/api/relations", { token, body: { subject: ids.writer, relation: "approval.decide", object: mailboxId } });
  assert.equal(granted.status, 201, granted.text);

  await section(writer, "Approvals").click();
  await writer.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
  await writer.getByText("Nothing awaits your decision.").waitFor();
  assert.equal(await writer.getByRole("button", { name: /^Approve/ }).count(), 0);

  await section(writer, "Mail").click();
  await writer.getByRole("link", { name: "Outbound" }).click();
  const row = writer.getByRole("row").filter({ hasText: REPLY_SUBJECT });
  await row.waitFor();
  assert.equal((await row.getByRole("cell").allTextContents())[0], "Awaiting approval");
  assert.ok(await row.getByRole("button", { name: `Cancel submission of ${REPLY_SUBJECT}` }).isVisible());
});

test("the approver sees the reply and its full text in Approvals, approves it, and sees it dispatched", async () => {
  approver = await openPage("approver");
  await signIn(approver, APPROVER);
  await section(approver, "Approvals").click();
  const card = approver.getByRole("article", { name: REPLY_SUBJECT });
  await card.waitFor();
  const shown = await card.textContent();
  // The approver is no administrator: the writer is named from the send itself, not a directory.
  for (const part of [SUPPORT.address, "ana@customer.example", `${WRITER.name} ${ids.writer}`, "<invoice-question-1@customer.example>"]) {
    assert.ok(shown.includes(part), `${part} in ${shown}`);
  }
  assert.equal(await card.locator("pre").textContent(), REPLY_TEXT, "the full text, as written");

  // Approving asks first, in the page, naming whom it goes to.
  await card.getByRole("button", { name: `Approve “${REPLY_SUBJECT}”` }).click();
  const confirm = card.getByRole("group", { name: "Approve and send?" });
  assert.match(await confirm.innerText(), /to Ana Lima <ana@customer\.example>\?/);
  await confirm.getByRole("button", { name: "Approve and send" }).click();
  await card.getByRole("status").filter({ hasText: "Approved and dispatched." }).waitFor();
  assert.equal(await card.getByText("Sent", { exact: true }).count(), 1, "the state is shown, in words");
  assert.equal(await card.getByRole("button").count(), 0, "nothing left to decide");
});

test("exactly one message reached the send_email binding: to Ana, threaded, with the reply's text", async () => {
  let sent = [];
  for (let attempt = 0; attempt < 40 && sent.length === 0; attempt++) {
    sent = node.sentMail();
    if (!sent.length) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.equal(sent.length, 1, node.output());
  const [message] = sent;
  assert.match(message, /^From: "?Support"? <support@mailroom\.test>/m);
  assert.match(message, /^To: "?Ana Lima"? <ana@customer\.example>\r?$/m, "the recipient keeps their name");
  assert.match(message, /^Subject: Re: Where is my invoice\?\r?$/m);
  assert.match(message, /^In-Reply-To: <invoice-question-1@customer\.example>\r?$/m);
  // The mail service writes the Message-ID itself (Cloudflare Email Service
  // replaces the one the node composed, as wrangler's simulator does): one, at
  // the sending domain.
  assert.equal(message.match(/^Message-ID: <[^>\s]+@mailroom\.test>\r?$/gm)?.length, 1, message);
  assert.equal(bodyOf(message).trim(), REPLY_TEXT.trim());
});

test("the writer's Outbound shows the reply dispatched", async () => {
  await writer.reload();
  const row = writer.getByRole("row").filter({ hasText: REPLY_SUBJECT });
  await row.waitFor();
  assert.equal((await row.getByRole("cell").allTextContents())[0], "Sent");
  await row.getByRole("link", { name: REPLY_SUBJECT }).click();
  const details = writer.getByRole("region", { name: REPLY_SUBJECT });
  await details.getByText("Sent", { exact: true }).waitFor();
  assert.match(await details.textContent(), new RegExp(`Approved by ${APPROVER.name}.*${ids.approver}`));
  assert.equal(await details.getByRole("button").count(), 0, "a sealed send has nothing to change");
});

test("the approver refuses a submitted send with a reason, and nothing is sent", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).first().click();
  await writer.getByRole("link", { name: "New message" }).click();
  await writer.getByLabel("To", { exact: true }).fill("everyone@customer.example");
  await writer.getByLabel("Subject").fill(REFUSED_SUBJECT);
  await writer.getByLabel("Text").fill("Everyone gets a free upgrade.");
  await writer.getByRole("button", { name: "Save draft" }).click();
  await statusSaying(writer, "Draft saved").waitFor();
  await writer.getByRole("button", { name: "Submit for approval" }).click();
  await statusSaying(writer, "Submitted for approval").waitFor();
  const submitted = (await call("GET", `/api/mailboxes/${mailboxId}/sends`, { token: ids.writerToken })).body.sends.find((send) => send.subject === REFUSED_SUBJECT);
  assert.equal(submitted?.state, "submitted");

  await approver.reload();
  const card = approver.getByRole("article", { name: REFUSED_SUBJECT });
  await card.getByRole("button", { name: `Refuse “${REFUSED_SUBJECT}”` }).click();
  await card.getByLabel("Reason for refusing").fill(REFUSAL_REASON);
  await card.getByRole("button", { name: "Refuse send" }).click();
  await card.getByRole("status").filter({ hasText: "Refused." }).waitFor();
  assert.equal(await card.getByText("Refused", { exact: true }).count(), 1, "the state is shown, in words");
  assert.ok((await card.textContent()).includes(REFUSAL_REASON), "with the reason");
  assert.equal(await card.getByRole("button").count(), 0, "nothing left to decide");

  const refused = (await call("GET", `/api/mailboxes/${mailboxId}/sends/${submitted.id}`, { token: ids.writerToken })).body;
  assert.equal(refused.state, "refused");
  assert.equal(refused.refusal_reason, REFUSAL_REASON);
  assert.equal(refused.decided_by, ids.approver);
  // A refusal dispatches nothing: give the binding the time a dispatch took, then look.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const sent = node.sentMail();
  assert.equal(sent.length, 1, "still only the approved reply");
  assert.ok(!sent.some((message) => message.includes(REFUSED_SUBJECT)));
});

test("a send switched after the approver opened it is not approved: the card says what changed and shows it as it stands", async () => {
  const sends = `/api/mailboxes/${mailboxId}/sends`;
  const subject = "Invoice 2041";
  const drafted = await call("POST", sends, { token: ids.writerToken, body: { to: ["ana@customer.example"], subject, text: "Invoice, 100 EUR." } });
  assert.equal(drafted.status, 201, drafted.text);
  const id = drafted.body.id;
  assert.equal((await call("POST", `${sends}/${id}/submit`, { token: ids.writerToken })).status, 200);

  await approver.reload();
  const card = approver.getByRole("article", { name: subject });
  await card.getByText("ana@customer.example").first().waitFor();
  // While the approver reads it, the writer takes it back, switches it and submits again.
  assert.equal((await call("POST", `${sends}/${id}/cancel`, { token: ids.writerToken })).status, 200);
  const switched = await call("PATCH", `${sends}/${id}`, { token: ids.writerToken, body: { to: ["attacker@evil.example"], text: "Pay to this account instead." } });
  assert.equal(switched.status, 200, switched.text);
  assert.equal((await call("POST", `${sends}/${id}/submit`, { token: ids.writerToken })).status, 200);

  const sentBefore = node.sentMail().length;
  watch.expectRefusal(409, `${sends}/${id}/approve`);
  await card.getByRole("button", { name: `Approve “${subject}”` }).click();
  await card.getByRole("group", { name: "Approve and send?" }).getByRole("button", { name: "Approve and send" }).click();
  const alert = card.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.textContent(), /changed after you were shown it: the recipients, the text/);
  await card.getByText("attacker@evil.example").first().waitFor();
  assert.equal(await card.getByText("ana@customer.example").count(), 0, "the card shows the send as it now stands");
  assert.match(await card.textContent(), /Changed since you opened it/);
  const stored = (await call("GET", `${sends}/${id}`, { token: ids.writerToken })).body;
  assert.equal(stored.state, "submitted", "nothing was approved");

  // Refusing the version now on screen works: it names the version shown.
  await card.getByRole("button", { name: `Refuse “${subject}”` }).click();
  await card.getByLabel("Reason for refusing").fill("This is not where our invoices go.");
  await card.getByRole("button", { name: "Refuse send" }).click();
  await card.getByRole("status").filter({ hasText: "Refused." }).waitFor();
  const refused = (await call("GET", `${sends}/${id}`, { token: ids.writerToken })).body;
  assert.equal(refused.state, "refused");
  assert.equal(refused.version, stored.version);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(node.sentMail().length, sentBefore, "nothing was sent");
});

test("the writer's Outbound shows the send refused, with the approver's reason", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).first().click();
  await writer.getByRole("link", { name: "Outbound" }).click();
  const row = writer.getByRole("row").filter({ hasText: REFUSED_SUBJECT });
  await row.waitFor();
  assert.equal((await row.getByRole("cell").allTextContents())[0], "Refused");
  assert.ok((await row.textContent()).includes(REFUSAL_REASON), "the reason, beside it");
  assert.equal(await row.getByRole("button").count(), 1, "nothing to cancel");
  assert.ok(await row.getByRole("button", { name: `Write it again “${REFUSED_SUBJECT}”` }).isVisible(), "it can be written again");
  await row.getByRole("link", { name: REFUSED_SUBJECT }).click();
  const details = writer.getByRole("region", { name: REFUSED_SUBJECT });
  await details.getByText("Refused", { exact: true }).waitFor();
  const shown = await details.textContent();
  assert.ok(shown.includes(`Reason${REFUSAL_REASON}`), shown);
  assert.match(shown, new RegExp(`Refused by.*${ids.approver}`));
  assert.match(shown, new RegExp(`Refused by ${APPROVER.name}`), "the approver is named, not only identified");
  assert.equal(await details.getByRole("button").count(), 1, "a refused send cannot be changed");
  assert.ok(await details.getByRole("button", { name: /^Write it again/ }).isVisible(), "only written again");
});

test("more than a page of mail: the rest of a mailbox, and of a search, is shown on asking", async () => {
  assert.ok(PER_PAGE > 0, "the page size is read from pager.js");
  const created = await call("POST", "/api/mailboxes", { token, body: { address: NEWS.address, display_name: NEWS.name } });
  assert.equal(created.status, 201, created.text);
  const newsId = created.body.id;
  const granted = await call("POST", "/api/relations", { token, body: { subject: ids.writer, relation: "mailbox.metadata.read", object: newsId } });
  assert.equal(granted.status, 201, granted.text);
  const count = PER_PAGE + 5;
  for (let first = 1; first <= count; first += 10) {
    const numbers = Array.from({ length: Math.min(10, count - first + 1) }, (_, index) => first + index);
    const rejections = await Promise.all(numbers.map((number) => node.deliver("press@outside.example", NEWS.address, bulletin(number))));
    assert.deepEqual(rejections, numbers.map(() => null));
  }
  const listed = [];
  for (let cursor; ;) {
    const page = await call("GET", `/api/mailboxes/${newsId}/messages?${new URLSearchParams({ limit: String(PER_PAGE), ...(cursor ? { cursor } : {}) })}`, { token: ids.writerToken });
    listed.push(...page.body.messages.map((message) => message.subject));
    cursor = page.body.next_cursor;
    if (!cursor) break;
  }
  assert.equal(listed.length, count, "every bulletin arrived");

  await everyMessage(writer, NEWS.address);
  const messages = writer.getByRole("region", { name: "Messages, newest first" });
  await messages.getByRole("table").waitFor();
  const older = messages.getByRole("button", { name: "Older messages" });
  assert.deepEqual((await bodyRows(messages)).map(([, subject]) => subject), listed.slice(0, PER_PAGE), "the first page, newest first");
  await older.click();
  await messages.getByRole("row").filter({ hasText: listed.at(-1) }).waitFor();
  assert.deepEqual((await bodyRows(messages)).map(([, subject]) => subject), listed, "then the rest, after it");
  assert.ok(await older.isHidden(), "nothing older is offered once all is shown");

  // The mailbox's own search box looks in it alone.
  await search(writer, "bulletin");
  await writer.waitForURL((url) => url.hash === `#/mail/${newsId}/search/bulletin`);
  const results = writer.getByRole("region", { name: "Results for “bulletin”" });
  await results.getByRole("table").waitFor();
  assert.deepEqual(await results.getByRole("columnheader").allTextContents(), ["From", "Subject", "Received", "Found in"]);
  const found = (await searchAll({ q: "bulletin", mailbox: newsId, limit: String(PER_PAGE) }, ids.writerToken)).map((hit) => hit.subject);
  assert.deepEqual(found, listed, "the node finds every bulletin, newest first");
  assert.deepEqual((await bodyRows(results)).map(([, subject]) => subject), found.slice(0, PER_PAGE));
  const more = results.getByRole("button", { name: "More results" });
  await more.click();
  await results.getByRole("row").filter({ hasText: found.at(-1) }).waitFor();
  assert.deepEqual((await bodyRows(results)).map(([, subject]) => subject), found);
  assert.ok(await more.isHidden());

  // The invoice question is not in this mailbox; in every mailbox, it is.
  await search(writer, "invoice");
  await writer.getByRole("region", { name: "Results for “invoice”" }).getByText(`Nothing in ${NEWS.address} matches “invoice”.`).waitFor();
  assert.deepEqual(await searchAll({ q: "invoice", mailbox: newsId }, ids.writerToken), []);
  await search(writer, "invoice", "Every mailbox I can read");
  await writer.waitForURL((url) => url.hash === "#/mail/search/invoice");
  const everywhere = writer.getByRole("region", { name: "Results for “invoice”" });
  await everywhere.getByRole("table").waitFor();
  assert.deepEqual((await bodyRows(everywhere)).map(([, subject, mailbox]) => [subject, mailbox.split(" ")[0]]), [[QUESTION, SUPPORT.address]]);
});

test("a send the mail service refused for one recipient is sent again from its page, never twice to the other", async () => {
  const sends = `/api/mailboxes/${mailboxId}/sends`;
  const blocked = "bea@unverified.example";
  const drafted = await call("POST", sends, { token: ids.writerToken, body: { to: ["ana@customer.example", blocked], subject: "Your refund", text: "It is on its way." } });
  assert.equal(drafted.status, 201, drafted.text);
  const id = drafted.body.id;
  const submitted = await call("POST", `${sends}/${id}/submit`, { token: ids.writerToken });
  assert.equal(submitted.status, 200);
  const approved = await call("POST", `${sends}/${id}/approve`, { token: await tokenFor(APPROVER), body: { version: submitted.body.version } });
  assert.equal(approved.body.state, "failed", approved.text);
  const copies = () => node.sentMail().filter((raw) => raw.includes("Subject: Your refund")).length;

  await writer.goto(`${node.url}/#/mail/${mailboxId}/outbound/${id}`);
  const page = writer.getByRole("region", { name: "Your refund" });
  await page.getByText(`only to ${blocked}`).waitFor();
  assert.match(await page.textContent(), new RegExp(`not delivered to ${blocked.replaceAll(".", "\\.")}`));
  await page.getByRole("button", { name: "Send again" }).click();
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.textContent(), /refused it again/);
  assert.equal(await page.getByRole("button", { name: "Send again" }).count(), 1, "it can be tried again later");
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(copies(), 1, "Ana has it once");
});

test("more than a page of outbound mail, and of approvals: the rest is shown on asking", async () => {
  const newsId = (await call("GET", "/api/mailboxes/all", { token })).body.mailboxes.find((mailbox) => mailbox.address === NEWS.address).id;
  for (const [subject, relation] of [[ids.writer, "send.propose"], [ids.approver, "approval.decide"]]) {
    const granted = await call("POST", "/api/relations", { token, body: { subject, relation, object: newsId } });
    assert.equal(granted.status, 201, granted.text);
  }
  const sends = `/api/mailboxes/${newsId}/sends`;
  const count = PER_PAGE + 2;
  for (let first = 1; first <= count; first += 10) {
    const numbers = Array.from({ length: Math.min(10, count - first + 1) }, (_, index) => first + index);
    await Promise.all(numbers.map(async (number) => {
      const drafted = await call("POST", sends, { token: ids.writerToken, body: { to: ["press@outside.example"], subject: `Notice ${String(number).padStart(2, "0")}`, text: "Noted." } });
      assert.equal(drafted.status, 201, drafted.text);
      const submitted = await call("POST", `${sends}/${drafted.body.id}/submit`, { token: ids.writerToken });
      assert.equal(submitted.status, 200, submitted.text);
    }));
  }
  /** Every page of `path` through the API, following `next_cursor`: the subjects. */
  const everything = async (path, asToken) => {
    const subjects = [];
    for (let cursor; ;) {
      const page = await call("GET", `${path}?${new URLSearchParams({ limit: String(PER_PAGE), ...(cursor ? { cursor } : {}) })}`, { token: asToken });
      assert.equal(page.status, 200, page.text);
      subjects.push(...page.body.sends.map((send) => send.subject));
      cursor = page.body.next_cursor;
      if (!cursor) return subjects;
    }
  };
  const outbound = await everything(sends, ids.writerToken);
  assert.equal(outbound.length, count);

  await writer.goto(`${node.url}/#/mail/${newsId}/outbound`);
  const list = writer.getByRole("region", { name: `Outbound from ${NEWS.address}` });
  await list.getByRole("table").waitFor();
  assert.deepEqual((await bodyRows(list)).map(([, subject]) => subject), outbound.slice(0, PER_PAGE), "the first page, newest first");
  const older = list.getByRole("button", { name: "Show older mail" });
  await older.click();
  await list.getByRole("row").filter({ hasText: outbound.at(-1) }).waitFor();
  assert.deepEqual((await bodyRows(list)).map(([, subject]) => subject), outbound, "then the rest");
  assert.ok(await older.isHidden());

  // The approver's queue holds the earlier reply's mailbox too; all of it pages oldest first.
  const queue = await everything("/api/approvals", await tokenFor(APPROVER));
  assert.ok(queue.length > PER_PAGE, `${queue.length} awaiting`);
  await section(approver, "Mail").click();
  await section(approver, "Approvals").click();
  const awaiting = approver.getByRole("region", { name: "Awaiting my decision" });
  const headings = () => awaiting.getByRole("heading", { level: 3 }).allTextContents();
  await awaiting.getByRole("heading", { level: 3 }).first().waitFor();
  assert.deepEqual(await headings(), queue.slice(0, PER_PAGE));
  const later = awaiting.getByRole("button", { name: "Show later submissions" });
  await later.click();
  await awaiting.getByRole("heading", { name: queue.at(-1), level: 3 }).waitFor();
  assert.deepEqual(await headings(), queue);
  assert.ok(await later.isHidden());
});

test("an administrator deletes a received message from its page, after saying so twice, and nobody finds it again", async () => {
  const subject = "Win a prize today";
  const spam = Buffer.from([
    "From: Prize Desk <prizes@spam.example>",
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Sat, 28 Nov 2026 12:00:00 +0000",
    "Message-ID: <prize-1@spam.example>",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Claim your jackpot now.",
    "",
  ].join("\r\n"));
  assert.equal(await node.deliver("prizes@spam.example", SUPPORT.address, spam), null);
  const writerToken = await tokenFor(WRITER);
  const found = await searchAll({ q: "jackpot" }, writerToken);
  assert.equal(found.length, 1, "the writer finds it by its text");
  const path = `/api/mailboxes/${mailboxId}/messages/${found[0].id}`;

  // The writer reads it and is offered no Delete: deleting is an administrator's.
  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: subject }).click();
  await writer.getByRole("heading", { name: subject, level: 2 }).waitFor();
  assert.equal(await writer.getByRole("button", { name: "Delete message" }).count(), 0);

  await everyMessage(admin, SUPPORT.address);
  await admin.getByRole("link", { name: subject }).click();
  await admin.getByRole("heading", { name: subject, level: 2 }).waitFor();
  await admin.getByRole("button", { name: "Delete message" }).click();
  const question = admin.getByRole("group", { name: "Delete this message?" });
  assert.match(await question.textContent(), /cannot be brought back/);
  await question.getByRole("button", { name: "Keep it" }).click();
  assert.equal((await call("GET", path, { token: writerToken })).status, 200, "kept means kept");
  await admin.getByRole("button", { name: "Delete message" }).click();
  await admin.getByRole("button", { name: "Delete for good" }).click();
  await statusSaying(admin, `“${subject}” was deleted from ${SUPPORT.address}.`).waitFor();
  await admin.getByRole("link", { name: `Back to ${SUPPORT.address}` }).click();
  await admin.getByRole("link", { name: QUESTION }).waitFor();
  assert.equal(await admin.getByRole("link", { name: subject }).count(), 0, "gone from the list");

  assert.equal((await call("GET", path, { token: writerToken })).status, 404);
  assert.deepEqual(await searchAll({ q: "jackpot" }, writerToken), [], "and from search");
  const entries = (await call("GET", "/api/audit?limit=20", { token })).body.entries;
  assert.ok(entries.some((entry) => entry.action === "delete_message" && entry.object === found[0].id && entry.outcome === "ok"));
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

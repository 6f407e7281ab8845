// Mail in a real browser, set up and read: headless Chromium against the built
// Worker on workerd. An administrator sets up a mailbox and two people through
// the page, real messages arrive through the Worker's email handler, someone
// who holds only metadata is told what reading needs, the writer reads,
// downloads and searches, more than a page of mail is shown on asking, an
// administrator deletes a message, and a search across more mailboxes than one
// search asks at once goes through them in groups. Writing, approving and sending are
// mail-browser-sending's, hostile mail mail-browser-hostile's. Every console
// error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits } from "./browser-helpers.mjs";
import { auditTrail, startDesk } from "./fixtures.mjs";
import {
  MAIL_NODE, SUPPORT, WRITER, APPROVER, QUESTION, fixture, PER_PAGE, NEWS, HOSTILE_SUBJECT, HOSTILE,
  bodyRows, section, openSection, yourMailboxes, everyMessage, statusSaying, pagesOn,
} from "./mail-browser.mjs";

const PERSON_ID = /usr_[0-9A-HJKMNP-TV-Z]{26}/;
const MAILBOX_ID = /mbx_[0-9A-HJKMNP-TV-Z]{26}/;
/** A plain-text message, as it arrives: from, to, subject, when (a time on 28 November 2026), Message-ID and text. */
const plainMessage = ({ from, to, subject, at, id, text }) => Buffer.from([
  `From: ${from}`,
  `To: ${to}`,
  `Subject: ${subject}`,
  `Date: Sat, 28 Nov 2026 ${at} +0000`,
  `Message-ID: <${id}>`,
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
  "",
  text,
  "",
].join("\r\n"));
/** A small message to the news mailbox, the `number`th of a run. */
const bulletin = (number) => plainMessage({
  from: "Press Office <press@outside.example>",
  to: NEWS.address,
  subject: `Bulletin ${String(number).padStart(2, "0")}`,
  at: `08:${String(number % 60).padStart(2, "0")}:00`,
  id: `bulletin-${number}@outside.example`,
  text: `Issue ${number} of the bulletin.`,
});

let node, call, token, desk, browser, mailboxId;
const ids = {};
/** Everything any page reported that it should not have, by who saw it. */
const watch = new PageWatch();

before(async () => {
  ({ node, call, token, desk } = await startDesk(MAIL_NODE));
  browser = await launchChromium();
});

const { openPage, signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

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

/** An API token for a person, to check what the page did from outside it. */
const tokenFor = (person) => desk.signIn(person);

let admin, writer;

test("an administrator creates the mailbox in the Mailboxes section", async () => {
  admin = await openPage("administrator");
  await signIn(admin, ADMIN);
  for (const name of ["Mail", "Approvals", "People", "Teams", "Mailboxes", "Relations", "Audit", "Account"]) {
    assert.equal(await section(admin, name).count(), 1, name);
  }
  assert.equal(await section(admin, "People").getAttribute("aria-current"), "page", "an administrator lands on People");

  await openSection(admin, "Mailboxes");
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

  // With one mailbox, its butlers' page fits, and shows nothing a script let through as text.
  await openSection(admin, "Butlers");
  await admin.getByRole("region", { name: `Butlers on ${SUPPORT.address}` }).waitFor();
  await assertFits(admin, "the butlers of the only mailbox");
  await openSection(admin, "Mailboxes");
  await admin.getByRole("heading", { name: "Mailboxes", level: 1 }).waitFor();
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
  await openSection(admin, "People");
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

  await openSection(admin, "Relations");
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

  const reads = (await auditTrail(call, token, 50)).filter((entry) => entry.action === "get_message_body");
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
  await openSection(writer, "Mail");
  await search(writer, "4471");
  await writer.waitForURL((url) => url.hash === "#/mail/search/4471");
  const results = writer.getByRole("region", { name: "Results for “4471”" });
  await results.getByRole("table").waitFor();
  const audit = (await auditTrail(call, token, 20)).find((entry) => entry.action === "search_messages");
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
    const shown = await alert.innerText();
    // In the person's words: an example of the API's query (`q=invoice march`) is the words alone.
    // The field by the form's label: `q` is “Search for”.
    const worded = (text) => text.replace(/`q=([^`]*)`/g, "“$1”").replaceAll("`q`", "“Search for”");
    assert.match(shown, /^The search was not run(\.|: check “Search for”\.)/);
    for (const part of [worded(message), `Why: ${worded(reason)}`, `What to do: ${worded(fix)}`]) {
      assert.ok(shown.includes(part), `${part} in ${shown}`);
    }
    await alert.getByText("Technical details").click();
    const details = await alert.locator("details").innerText();
    for (const part of [code, "400"]) assert.ok(details.includes(part), `${part} in ${details}`);
    assert.equal(await writer.getByRole("search", { name: "Search mail" }).getByLabel("Search for").inputValue(), words, "the words stay, to be corrected");
  }
  await openSection(writer, "Mail");
});

test("someone who reads metadata alone finds mail by its subject, and never by its text", async () => {
  await openSection(admin, "Mail");
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

test("an administrator deletes a received message from its page, after saying so twice, and nobody finds it again", async () => {
  const subject = "Win a prize today";
  const spam = plainMessage({ from: "Prize Desk <prizes@spam.example>", to: SUPPORT.address, subject, at: "12:00:00", id: "prize-1@spam.example", text: "Claim your jackpot now." });
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
  const entries = (await auditTrail(call, token, 20));
  assert.ok(entries.some((entry) => entry.action === "delete_message" && entry.object === found[0].id && entry.outcome === "ok"));
});

test("someone who reads more mailboxes than one search asks at once finds mail in the last of them, with the groups said", async () => {
  const writerToken = await tokenFor(WRITER);
  // Mailboxes are added until the node says it searches the writer's a group at a time.
  const made = [];
  for (let number = 0; !(await call("GET", "/api/search?q=anything", { token: writerToken })).body.mailboxes_searched; number += 1) {
    assert.ok(number < 200, "the node never searched in groups");
    const created = await call("POST", "/api/mailboxes", { token, body: { address: `desk${number}@mailroom.test`, display_name: `Desk ${number}` } });
    assert.equal(created.status, 201, created.text);
    const granted = await call("POST", "/api/relations", { token, body: { subject: ids.writer, relation: "mailbox.metadata.read", object: created.body.id } });
    assert.equal(granted.status, 201, granted.text);
    made.push(created.body);
  }
  const last = made.at(-1);
  const subject = "Zeppelin timetable";
  const message = plainMessage({ from: "Airship Line <timetables@airship.example>", to: last.address, subject, at: "13:00:00", id: "zeppelin-1@airship.example", text: "Departures every hour." });
  assert.equal(await node.deliver("timetables@airship.example", last.address, message), null);
  const first = (await call("GET", "/api/search?q=zeppelin", { token: writerToken })).body;
  assert.deepEqual(first.results, [], "the first group holds nothing that matches");
  const { in_all: inAll, mailbox_ids: firstGroup } = first.mailboxes_searched;
  assert.ok(!firstGroup.includes(last.id) && first.next_cursor, "the last mailbox is in a later group");
  assert.deepEqual((await searchAll({ q: "zeppelin" }, writerToken)).map((hit) => hit.subject), [subject]);

  // The page goes on past the groups where nothing matched, and says how it searched.
  await openSection(writer, "Mail");
  await search(writer, "zeppelin");
  await writer.waitForURL((url) => url.hash === "#/mail/search/zeppelin");
  const results = writer.getByRole("region", { name: "Results for “zeppelin”" });
  await results.getByRole("table").waitFor();
  assert.deepEqual((await bodyRows(results)).map(([, found, mailbox]) => [found, mailbox.split(" ")[0]]), [[subject, last.address]]);
  await results.getByText(`${inAll} of your mailboxes are searched ${firstGroup.length} at a time`).waitFor();
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

// The shared inbox in a real browser (issue 14): headless Chromium against the
// built Worker on workerd, at a desktop's width (1280×800) and a phone's
// (390×844), each in a mailbox of its own. Real mail arrives through the
// Worker's email handler with Email Routing's stamp, and one forgery. A writer
// lands on the conversations, sees which are unread and which sender is not
// verified, opens one (it is read), marks it unread, replies (twice: one
// draft), quotes, is stopped submitting an empty text, sets the status and takes
// it, and finds it by the filters; an approver sees how many wait, sees the
// reply beside the message it answers, is asked to confirm naming who it goes
// to, and approves; a refused send offers its writer Write it again. At every
// step the page fits its window: no sideways scroll, every button in view.
// Past a page of conversations, More shows the rest, each once, by last
// activity, and coming back from one on the second page finds both pages and
// it in view; a next page that arrives after a filter changed is dropped. An
// administrator on a phone assigns a conversation from a list of names that
// fits the window. The keyboard moves through the list, opens, replies, submits
// and closes, and ? lists the shortcuts.
// Every console error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, leaveUnsaved, signIn as signInAt, sectionLink as section, openSection } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const WRITER = { name: "Wren Writer", email: "wren@example.com", password: "wren's first long password" };
const APPROVER = { name: "Abe Approver", email: "abe@example.com", password: "abe's first long password" };
/** Someone who works the phone's mailbox, whose name is longer than a phone is wide. */
const LONG = {
  name: "Maximiliana Konstantinopoulou-Worthington",
  email: "maximiliana.konstantinopoulou-worthington@example.com",
  password: "max's first long password",
};
const ANA = "ana@customer.example";
const BO = "bo@customer.example";
const QUESTION_TEXT = "Hello,\n\nI have not received the invoice for order 4471.\n\nCould you send it again?\n\nAna";
const REPLY_TEXT = "Hello Ana,\n\nWe have sent the invoice again today.";
const REFUSED_TEXT = "Everyone gets a free upgrade.";
const REFUSAL_REASON = "We do not promise upgrades by mail; offer a call instead.";

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, token, desk, browser;
const watch = new PageWatch();
const made = {};

/** A message as Email Routing hands it to the Worker: its stamp on top, when it has one. */
function message({ id, subject, body, from, to, headers = "", stamp }) {
  return Buffer.from(
    (stamp ? `Authentication-Results: mx.cloudflare.net; ${stamp}\r\n` : "") +
    `${headers}From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\n` +
    `Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body.replace(/\n/g, "\r\n")}\r\n`,
  );
}
const PASS = "dkim=pass header.d=customer.example header.s=s1; dmarc=pass header.from=customer.example; spf=pass smtp.mailfrom=ana@customer.example";
const FORGED = "dkim=none; dmarc=fail header.from=customer.example; spf=fail smtp.mailfrom=mallory@forger.example";

before(async () => {
  ({ node, call, token, desk } = await startDesk({ sendEmail: { allowed_destination_addresses: [ANA] } }));
  made.admin = await ok(call("GET", "/api/me", { token }));
  made.writer = await desk.person(WRITER);
  made.approver = await desk.person(APPROVER);
  made.long = await desk.person(LONG);
  for (const layout of LAYOUTS) {
    const address = `${layout.name}-support@mailroom.test`;
    const mailbox = await desk.mailbox(address, `Support (${layout.name})`);
    made[layout.name] = { mailbox, address, question: `Where is my invoice? (${layout.name})`, forged: `Change of bank details (${layout.name})`, delivery: `Delivery question (${layout.name})` };
    const grants = [
      [made.writer.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]],
      [made.approver.id, ["mailbox.metadata.read", "mailbox.content.read", "approval.decide"]],
      [made.admin.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]],
    ];
    if (layout.name === "phone") grants.push([made.long.id, ["mailbox.metadata.read", "send.propose"]]);
    for (const [subject, relations] of grants) await desk.grant(subject, relations, mailbox.id);
    const to = `Support <${address}>`;
    const { question, forged, delivery } = made[layout.name];
    assert.equal(await node.deliver(BO, address, message({ id: `delivery-${layout.name}@customer.example`, subject: delivery, body: "When will order 4471 arrive?", from: `Bo Berg <${BO}>`, to })), null);
    assert.equal(await node.deliver("mallory@forger.example", address, message({ id: `forged-${layout.name}@forger.example`, subject: forged, body: "Please pay invoices to our new account from today.", from: `Ana Lima <${ANA}>`, to, stamp: FORGED })), null);
    assert.equal(await node.deliver(ANA, address, message({ id: `question-${layout.name}@customer.example`, subject: question, body: QUESTION_TEXT, from: `Ana Lima <${ANA}>`, to, headers: `Cc: Bo Berg <${BO}>\r\n`, stamp: PASS })), null);
  }
  made.writerToken = await desk.signIn(WRITER);
  made.approverToken = await desk.signIn(APPROVER);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const signIn = (page, person) => signInAt(page, node.url, person);
const statusSaying = (page, text) => page.getByRole("status").filter({ hasText: text });
const conversations = (page) => page.getByRole("list", { name: /^Conversations in / });
const rowOf = (page, subject) => conversations(page).getByRole("listitem").filter({ hasText: subject });
/** The subjects the list shows, in order. */
const listedSubjects = async (page) => (await conversations(page).locator(".thread-subject").allInnerTexts()).map((text) => text.replace(/^Unread:\s*/, "").trim());
/** Waits until the list of conversations asked for again (a filter changed) has arrived. */
const settled = (page) => page.locator(".thread-list[aria-busy]").waitFor({ state: "detached" });

/** The writer's sends in a mailbox, through the API. */
async function sendsOf(mailbox, state) {
  return (await ok(call("GET", `/api/mailboxes/${mailbox.id}/sends${state ? `?state=${state}` : ""}`, { token: made.writerToken }))).sends;
}

/** A mailbox's conversations as the writer's API sees them, by subject. */
async function threadsOf(mailbox, parameters = {}) {
  const page = await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads?${new URLSearchParams(parameters)}`, { token: made.writerToken }));
  return new Map(page.threads.map((thread) => [thread.subject, thread]));
}

for (const layout of LAYOUTS) {
  const run = {};
  const { name, ...options } = layout;
  const data = () => made[name];

  test(`${name}: opening Mail lands on a mailbox's conversations, unread ones marked, and the forged sender not verified`, async () => {
    ({ page: run.writer } = await watch.open(browser, { who: `${name} writer`, ...options, locale: "en-GB", acceptDownloads: true }));
    const page = run.writer;
    await signIn(page, WRITER);
    assert.equal(await section(page, "Mail").getAttribute("aria-current"), "page");
    // Mail lands on conversations, not on a table of what the person holds.
    await conversations(page).waitFor();
    assert.equal(await page.getByRole("region", { name: "Mailboxes I can read" }).count(), 0);

    // Both mailboxes are offered; this layout's is chosen.
    await page.getByRole("navigation", { name: "Mailboxes" }).getByRole("link", { name: data().address }).click();
    await page.getByRole("list", { name: `Conversations in ${data().address}` }).waitFor();
    await rowOf(page, data().question).waitFor();

    const question = rowOf(page, data().question);
    const forged = rowOf(page, data().forged);
    const delivery = rowOf(page, data().delivery);
    for (const row of [question, forged, delivery]) {
      assert.match(await row.getAttribute("class"), /\bunread\b/, "new mail is unread");
      assert.equal(await row.getByText("Unread:").count(), 1, "and says so to a screen reader");
      assert.ok(await row.getByText("Open", { exact: true }).isVisible(), "its status, in words");
      assert.ok(await row.getByText("Unassigned").isVisible());
      assert.ok(await row.getByText("1 message").isVisible());
    }
    assert.match(await question.innerText(), /Ana Lima/, "participants by name");
    assert.match(await question.innerText(), /I have not received the invoice/, "the snippet");
    assert.match(await delivery.innerText(), /Bo Berg/);
    assert.ok(await forged.getByText("Sender not verified").isVisible(), "the forgery is marked");
    assert.equal(await question.getByText("Sender not verified").count(), 0, "Email Routing vouched for Ana's message");
    assert.equal(await delivery.getByText("Sender not verified").isVisible(), true, "no stamp: not verified either");
    const bold = await question.locator(".thread-subject").evaluate((element) => Number(getComputedStyle(element).fontWeight));
    assert.ok(bold >= 600, `an unread subject is bold (${bold})`);
    await assertFits(page, `${name}: the conversations`);
  });

  test(`${name}: opening a conversation shows its message with the sender checked, and marks it read; Mark unread undoes it`, async () => {
    const page = run.writer;
    const clicked = Date.now();
    await rowOf(page, data().question).getByRole("link", { name: data().question }).click();
    await page.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    const framed = Date.now() - clicked;
    const message = page.getByRole("article", { name: /Ana Lima/ });
    await message.locator(".entry-text").waitFor();
    // Measured, printed, never asserted: a timing is the machine's as much as the page's.
    console.log(`${name}: a conversation opened: its frame in ${framed} ms, its first message's text in ${Date.now() - clicked} ms`);
    assert.ok(await message.getByText("Sender authenticated", { exact: true }).isVisible(), "the check in words");
    const text = message.locator(".entry-text");
    assert.equal((await text.innerText()).trim(), QUESTION_TEXT, "the text, its paragraphs kept");
    const font = await text.evaluate((element) => getComputedStyle(element).fontFamily);
    assert.doesNotMatch(font, /mono/i, "in a proportional font");
    assert.equal(await text.evaluate((element) => getComputedStyle(element).whiteSpace), "pre-wrap");
    // SPF, DKIM and DMARC on request.
    assert.equal(await message.getByText("DMARC (the From domain's verdict)").isVisible(), false);
    await message.getByText("How the sender was checked").click();
    assert.match(await message.locator(".sender-checks").innerText(), /SPF[^\n]*\n?\s*passed[\s\S]*DKIM[^\n]*\n?\s*passed[\s\S]*DMARC[^\n]*\n?\s*passed/);
    assert.match(await message.innerText(), /Cc\s+Bo Berg/);
    await assertFits(page, `${name}: a conversation`);

    // Marked read as it opened, without the conversation waiting for it.
    let opened = (await threadsOf(data().mailbox)).get(data().question);
    for (const started = Date.now(); opened.unread && Date.now() - started < 5000; opened = (await threadsOf(data().mailbox)).get(data().question)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(opened.unread, false, "opening it marked it read");
    run.questionThread = opened.id;

    await page.getByRole("button", { name: "Mark unread" }).click();
    await statusSaying(page, "Marked unread").waitFor();
    assert.equal((await threadsOf(data().mailbox)).get(data().question).unread, true);
    await page.getByRole("link", { name: "Back to the conversations" }).click();
    await rowOf(page, data().question).waitFor();
    assert.match(await rowOf(page, data().question).getAttribute("class"), /\bunread\b/, "unread again in the list");

    // The forgery: its sender failed, and the conversation warns before anything else.
    await rowOf(page, data().forged).getByRole("link").click();
    await page.getByRole("heading", { name: data().forged, level: 2 }).waitFor();
    assert.ok(await page.getByText("A sender in this conversation is not verified.").isVisible());
    assert.ok(await page.getByRole("article", { name: /Ana Lima/ }).getByText("Sender authentication failed", { exact: true }).isVisible());
    await assertFits(page, `${name}: a forged conversation`);
    await page.getByRole("link", { name: "Back to the conversations" }).click();
    await rowOf(page, data().forged).waitFor();
    assert.doesNotMatch(await rowOf(page, data().forged).getAttribute("class"), /\bunread\b/, "read once opened");
  });

  test(`${name}: Reply drafts the answer with names, and Reply again resumes it rather than start a second`, async () => {
    const page = run.writer;
    await rowOf(page, data().question).getByRole("link").click();
    await page.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    await page.getByRole("button", { name: "Reply to Ana Lima" }).click();
    const composer = page.getByRole("region", { name: "Your reply" });
    await composer.getByLabel("Text").waitFor();
    assert.equal(await composer.getByLabel("To", { exact: true }).inputValue(), `Ana Lima <${ANA}>`, "the recipient with their name");
    assert.equal(await composer.getByLabel("Subject").inputValue(), `Re: ${data().question}`);
    let drafts = await sendsOf(data().mailbox, "draft");
    assert.equal(drafts.length, 1, "one draft");
    const first = drafts[0].id;

    // Reply again, on the page and after coming back to it: the same draft.
    await page.getByRole("button", { name: "Reply to Ana Lima" }).click();
    await composer.getByText("You had already begun a reply in this conversation").waitFor();
    await page.reload();
    await page.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    await page.getByRole("button", { name: "Reply to Ana Lima" }).click();
    await composer.getByText("You had already begun a reply in this conversation").waitFor();
    drafts = await sendsOf(data().mailbox, "draft");
    assert.deepEqual(drafts.map((draft) => draft.id), [first], "still the one draft");

    // Reply all adds everyone the message went to, to the same draft.
    await page.getByRole("button", { name: /^Reply all/ }).click();
    await composer.getByText("everyone the message went to is now copied on it").waitFor();
    assert.equal(await composer.getByLabel("Cc", { exact: true }).inputValue(), `Bo Berg <${BO}>`);
    drafts = await sendsOf(data().mailbox, "draft");
    assert.deepEqual(drafts.map((draft) => [draft.id, draft.cc]), [[first, [`Bo Berg <${BO}>`]]]);
    await assertFits(page, `${name}: the reply`);
  });

  test(`${name}: an empty reply cannot be submitted, and says why; Quote writes the message in, and it is submitted`, async () => {
    const page = run.writer;
    const composer = page.getByRole("region", { name: "Your reply" });
    await composer.getByLabel("Cc", { exact: true }).fill("");
    await composer.getByRole("button", { name: "Submit for approval" }).click();
    const alert = composer.getByRole("alert");
    await alert.waitFor();
    const said = await alert.innerText();
    for (const part of ["The draft was not submitted.", "There is nothing to submit: the text is empty.", "Why:", "What to do:"]) assert.ok(said.includes(part), `${part} in ${said}`);
    assert.equal(await composer.getByLabel("Text").getAttribute("aria-invalid"), "true");
    assert.equal((await sendsOf(data().mailbox, "submitted")).length, 0, "nothing was submitted");

    await composer.getByRole("button", { name: /^Quote/ }).click();
    await statusSaying(page, "Quoted and saved").waitFor();
    const quoted = await composer.getByLabel("Text").inputValue();
    assert.match(quoted, /^\n\nOn .*\d{4}.*, Ana Lima wrote:\n> Hello,\n>\n> I have not received the invoice for order 4471\.\n>\n> Could you send it again\?\n>\n> Ana\n$/);
    const [saved] = await sendsOf(data().mailbox, "draft");
    assert.equal(saved.text, quoted, "the quote is saved in the draft");

    // A file goes with the reply: too large is refused in the page, a PDF is attached.
    await composer.getByLabel("Attach a file").setInputFiles({ name: "huge.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(700 * 1024 + 1) });
    await composer.getByRole("alert").filter({ hasText: "huge.bin is too large to attach." }).waitFor();
    await composer.getByLabel("Attach a file").setInputFiles({ name: "invoice-4471.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.7 invoice 4471") });
    await statusSaying(page, "invoice-4471.pdf attached.").waitFor();
    assert.ok(await composer.getByRole("link", { name: "invoice-4471.pdf" }).isVisible(), "the file, listed with the draft");
    assert.deepEqual((await sendsOf(data().mailbox, "draft"))[0].attachments.map((file) => file.name), ["invoice-4471.pdf"]);

    await composer.getByLabel("Text").fill(`${REPLY_TEXT}\n${quoted}`);
    await composer.getByRole("button", { name: "Submit for approval" }).click();
    await statusSaying(page, "Submitted for approval").waitFor();
    assert.ok(await composer.getByText("Awaiting approval", { exact: true }).isVisible(), "its state, in words");
    const [submitted] = await sendsOf(data().mailbox, "submitted");
    assert.equal(submitted.id, saved.id);
    assert.deepEqual(submitted.cc, [], "the Cc emptied on the page was saved before submitting");
    assert.ok(submitted.text.startsWith(REPLY_TEXT));
    run.reply = submitted;
    await assertFits(page, `${name}: a submitted reply`);
  });

  test(`${name}: the status and the assignee set in a conversation are what the list's filters find`, async () => {
    const page = run.writer;
    await page.getByRole("group", { name: "Status" }).getByRole("button", { name: "Waiting" }).click();
    await statusSaying(page, "Now waiting.").waitFor();
    assert.equal(await page.getByRole("button", { name: "Waiting" }).getAttribute("aria-pressed"), "true");
    await page.getByRole("button", { name: "Assign to me" }).click();
    await statusSaying(page, "Assigned to you.").waitFor();
    assert.ok(await page.getByText(`Assigned to you (${WRITER.name})`).isVisible());
    const stored = (await threadsOf(data().mailbox, { status: "waiting" })).get(data().question);
    assert.equal(stored?.assignee, made.writer.id);

    await page.getByRole("link", { name: "Back to the conversations" }).click();
    await rowOf(page, data().delivery).waitFor();
    assert.equal(await rowOf(page, data().question).count(), 0, "no longer among the open ones");
    const filters = page.getByRole("search", { name: "Filter conversations" });
    await filters.getByLabel("Status").selectOption({ label: "Waiting" });
    await settled(page);
    assert.equal(await conversations(page).getByRole("listitem").count(), 1, "only the waiting one");
    assert.ok(await rowOf(page, data().question).getByText(`Assigned to ${WRITER.name}`).isVisible());
    assert.ok(await rowOf(page, data().question).getByText("Waiting", { exact: true }).isVisible());
    await filters.getByLabel("Assigned to").selectOption({ label: "Nobody" });
    await settled(page);
    assert.ok(await page.getByText("No waiting conversations assigned to nobody.").isVisible());
    await filters.getByLabel("Assigned to").selectOption({ label: "Me" });
    await filters.getByLabel("Status").selectOption({ label: "Every status" });
    await settled(page);
    assert.deepEqual(await listedSubjects(page), [data().question], "only mine");
    await filters.getByLabel("Assigned to").selectOption({ label: "Anyone" });
    await filters.getByLabel("Unread only").check();
    await settled(page);
    assert.deepEqual(await listedSubjects(page), [data().delivery], "read ones are left out");
    await filters.getByLabel("Unread only").uncheck();
    await filters.getByLabel("Find").fill("invoice");
    await filters.getByRole("button", { name: "Find" }).click();
    await settled(page);
    assert.deepEqual(await listedSubjects(page), [data().question], "found by its subject");
    await assertFits(page, `${name}: the filtered conversations`);
    // As it was, for what follows.
    await filters.getByLabel("Find").fill("");
    await filters.getByLabel("Status").selectOption({ label: "Open" });
    await settled(page);
  });

  test(`${name}: labels added in a conversation show as chips and come off there; a chip in the list filters by its label`, async () => {
    const page = run.writer;
    await rowOf(page, data().delivery).getByRole("link").click();
    await page.getByRole("heading", { name: data().delivery, level: 2 }).waitFor();
    const labels = page.getByRole("list", { name: "Labels" });
    const chipTexts = async () => labels.locator(".label-chip > span").allInnerTexts();
    // Kept as the node keeps them: trimmed, lower-case.
    for (const [typed, kept] of [[" VIP ", "vip"], ["Billing issue", "billing issue"], ["Later", "later"]]) {
      await page.getByLabel("Add a label").fill(typed);
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await labels.getByText(kept, { exact: true }).waitFor();
    }
    assert.deepEqual(await chipTexts(), ["billing issue", "later", "vip"]);
    assert.equal(await page.getByLabel("Add a label").inputValue(), "", "emptied once added");
    await assertFits(page, `${name}: a conversation's labels`);
    await page.getByRole("button", { name: "Remove the label “later”" }).click();
    await statusSaying(page, "The label “later” was removed.").waitFor();
    assert.deepEqual(await chipTexts(), ["billing issue", "vip"]);
    assert.deepEqual((await threadsOf(data().mailbox)).get(data().delivery).labels, ["billing issue", "vip"]);
    // Too long is refused in words, naming the field.
    watch.expectRefusal(400, `/api/mailboxes/${data().mailbox.id}/threads/${(await threadsOf(data().mailbox)).get(data().delivery).id}`);
    await page.getByLabel("Add a label").evaluate((input) => input.removeAttribute("maxlength"));
    await page.getByLabel("Add a label").fill("x".repeat(41));
    await page.getByRole("button", { name: "Add", exact: true }).click();
    const refusal = page.getByRole("alert");
    await refusal.waitFor();
    // By the label the person typed it in, and what it must be; the API's path only under the details.
    assert.match(await refusal.innerText(), /^The conversation was not changed: check “Add a label”\.\n+“Add a label” was not accepted as it is\.\n+Why: It must be .*\n+What to do: Change “Add a label”, then try again\./s);
    assert.equal(await page.getByLabel("Add a label").getAttribute("aria-invalid"), "true");

    // The refused label is still typed: leaving asks first, and the writer leaves.
    await leaveUnsaved(page, () => page.getByRole("link", { name: "Back to the conversations" }).click());
    const row = rowOf(page, data().delivery);
    await row.getByRole("button", { name: "vip", exact: true }).waitFor();
    await assertFits(page, `${name}: conversations with labels`);
    await ok(call("PATCH", `/api/mailboxes/${data().mailbox.id}/threads/${run.questionThread}`, { token: made.writerToken, body: { add_labels: ["vip"] } }));
    const filters = page.getByRole("search", { name: "Filter conversations" });
    await filters.getByLabel("Status").selectOption({ label: "Every status" });
    await settled(page);
    await row.getByRole("button", { name: "vip", exact: true }).click();
    await settled(page);
    assert.equal(await filters.getByLabel("Label").inputValue(), "vip", "the filter says which label");
    assert.deepEqual((await listedSubjects(page)).sort(), [data().delivery, data().question].sort());
    await rowOf(page, data().question).getByRole("button", { name: "vip", exact: true }).waitFor();
    await filters.getByLabel("Label").fill("billing issue");
    await filters.getByLabel("Label").press("Enter");
    await settled(page);
    assert.deepEqual(await listedSubjects(page), [data().delivery]);
    await filters.getByLabel("Label").fill("nothing like it");
    await filters.getByLabel("Label").press("Enter");
    await page.getByText("No conversations labelled “nothing like it”.").waitFor();
    // As it was, for what follows.
    await filters.getByLabel("Label").fill("");
    await filters.getByLabel("Label").press("Enter");
    await filters.getByLabel("Status").selectOption({ label: "Open" });
    await settled(page);
  });

  test(`${name}: the approver sees how many wait, the reply beside the message it answers, and confirms naming who it goes to`, async () => {
    ({ page: run.approver } = await watch.open(browser, { who: `${name} approver`, ...options, locale: "en-GB" }));
    const page = run.approver;
    await signIn(page, APPROVER);
    const waiting = (await ok(call("GET", "/api/approvals", { token: made.approverToken }))).sends;
    assert.equal(waiting.length, 1, "this layout's reply alone awaits a decision");
    // On a phone the count is behind Menu, which is marked while it shows.
    if (name === "phone") await page.getByRole("banner").getByRole("button", { name: /^Menu\b.*something awaits you$/ }).click();
    const count = page.getByRole("navigation", { name: "Sections" }).locator(".nav-count");
    await count.filter({ hasText: "1" }).waitFor();
    assert.equal(await section(page, "Approvals").count(), 1, "the link keeps its name");
    assert.match(await count.innerText(), /^1\b/);
    assert.equal(await count.getAttribute("title"), "1 awaiting your decision");

    await openSection(page, "Approvals");
    const card = page.getByRole("article", { name: `Re: ${data().question}` });
    await card.waitFor();
    const answered = card.getByRole("complementary", { name: "The message it answers" });
    await answered.locator(".entry-text").waitFor();
    assert.equal((await answered.locator(".entry-text").innerText()).trim(), QUESTION_TEXT, "the message answered, in full");
    assert.ok(await answered.getByText("Ana Lima").first().isVisible());
    assert.ok(await answered.getByText("Sender authenticated", { exact: true }).isVisible());
    assert.match(await card.innerText(), new RegExp(`Written by\\s+${WRITER.name}`), "the writer by name");
    assert.ok(await card.getByRole("link", { name: "invoice-4471.pdf" }).isVisible(), "the approver sees the file it carries");
    assert.doesNotMatch(await card.innerText(), /usr_[0-9A-Z]{26}/, "no ids unless asked for");
    await assertFits(page, `${name}: an approval`);

    // Approve asks first, naming whom it goes to; Not yet leaves it waiting.
    await card.getByRole("button", { name: `Approve “Re: ${data().question}”` }).click();
    const confirm = card.getByRole("group", { name: "Approve and send?" });
    await confirm.waitFor();
    assert.match(await confirm.innerText(), new RegExp(`to Ana Lima <${ANA.replaceAll(".", "\\.")}>\\?`));
    await assertFits(page, `${name}: the confirmation`);
    await confirm.getByRole("button", { name: "Not yet" }).click();
    assert.equal((await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/sends/${run.reply.id}`, { token: made.writerToken }))).state, "submitted");

    await card.getByRole("button", { name: `Approve “Re: ${data().question}”` }).click();
    await card.getByRole("group", { name: "Approve and send?" }).getByRole("button", { name: "Approve and send" }).click();
    await card.getByRole("status").filter({ hasText: "Approved and dispatched." }).waitFor();
    assert.ok(await card.getByText("Sent", { exact: true }).isVisible(), "its state, in words");
    await count.waitFor({ state: "hidden" });
    const sent = (await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/sends/${run.reply.id}`, { token: made.writerToken })));
    assert.equal(sent.state, "dispatched");
  });

  test(`${name}: a refused send shows its writer the reason, in the conversation and in Outbound, and Write it again drafts it anew`, async () => {
    const writer = run.writer;
    // The writer answers Bo's question; the approver refuses it.
    await rowOf(writer, data().delivery).getByRole("link").click();
    await writer.getByRole("heading", { name: data().delivery, level: 2 }).waitFor();
    await writer.getByRole("button", { name: "Reply to Bo Berg" }).click();
    const composer = writer.getByRole("region", { name: "Your reply" });
    await composer.getByLabel("Text").fill(REFUSED_TEXT);
    await composer.getByRole("button", { name: "Submit for approval" }).click();
    await statusSaying(writer, "Submitted for approval").waitFor();
    const [submitted] = await sendsOf(data().mailbox, "submitted");
    await ok(call("POST", `/api/mailboxes/${data().mailbox.id}/sends/${submitted.id}/refuse`, {
      token: made.approverToken, body: { version: submitted.version, reason: REFUSAL_REASON },
    }));

    await writer.reload();
    await writer.getByRole("heading", { name: data().delivery, level: 2 }).waitFor();
    const refused = writer.locator(`article[data-send="${submitted.id}"]`);
    const notice = refused.getByRole("note");
    await notice.waitFor();
    assert.match(await notice.innerText(), new RegExp(`Refused by ${APPROVER.name}`));
    assert.ok((await notice.innerText()).includes(`Their reason: ${REFUSAL_REASON}`));
    assert.ok(await refused.getByText("Refused", { exact: true }).isVisible());
    await assertFits(writer, `${name}: a refused send in its conversation`);

    await notice.getByRole("button", { name: /^Write it again/ }).click();
    await composer.getByText("Written again as a new draft").waitFor();
    assert.equal(await composer.getByLabel("Text").inputValue(), REFUSED_TEXT);
    const [again] = await sendsOf(data().mailbox, "draft");
    assert.ok(again && again.id !== submitted.id, "a new draft");
    assert.deepEqual([again.to, again.subject, again.text, again.reply_to, again.thread_id],
      [submitted.to, submitted.subject, submitted.text, submitted.reply_to, submitted.thread_id], "the same recipients, subject, text and conversation");

    // Outbound shows it too, the reason beside it, with Write it again.
    await writer.evaluate((href) => (location.hash = href), `#/mail/${data().mailbox.id}/outbound`);
    const row = writer.getByRole("row").filter({ hasText: REFUSAL_REASON });
    await row.waitFor();
    assert.equal((await row.getByRole("cell").first().innerText()).trim().split("\n").at(-1), "Refused");
    assert.ok(await row.getByRole("button", { name: /^Write it again/ }).isVisible());
    await assertFits(writer, `${name}: Outbound`);
  });
}

test("desktop: an administrator who works the mailbox assigns a conversation to someone who works it, from a list of them", async () => {
  const { page } = await watch.open(browser, { who: "administrator", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, ADMIN);
  const { mailbox, delivery } = made.desktop;
  const thread = (await threadsOf(mailbox)).get(delivery);
  await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}/${thread.id}`);
  await page.getByRole("heading", { name: delivery, level: 2 }).waitFor();
  const picker = page.getByLabel("Assigned to");
  await picker.locator("option", { hasText: WRITER.name }).waitFor({ state: "attached" });
  assert.deepEqual(await picker.locator("option").allTextContents(), ["Nobody", ADMIN.name, WRITER.name], "those who hold send.propose, by name");
  await picker.selectOption({ label: WRITER.name });
  await statusSaying(page, `Assigned to ${WRITER.name}.`).waitFor();
  assert.equal((await threadsOf(mailbox)).get(delivery).assignee, made.writer.id);
  await assertFits(page, "the administrator's conversation");
});

test("desktop: past a page of waiting sends, the navigation says 50+", async () => {
  const { mailbox } = made.desktop;
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  for (let first = 0; first < 51; first += 5) {
    await Promise.all(Array.from({ length: Math.min(5, 51 - first) }, async (_, index) => {
      const draft = await ok(call("POST", sends, { token: made.writerToken, body: { to: [ANA], subject: `Notice ${first + index}`, text: "Noted." } }), 201);
      await ok(call("POST", `${sends}/${draft.id}/submit`, { token: made.writerToken }));
    }));
  }
  const { page } = await watch.open(browser, { who: "approver, many", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, APPROVER);
  const count = page.getByRole("navigation", { name: "Sections" }).locator(".nav-count");
  await count.filter({ hasText: "50+" }).waitFor();
  assert.match(await count.getAttribute("title"), /50\+ awaiting your decision/);
});

/** How many conversations a page of the list holds: pager.js's PER_PAGE. */
const PAGE = 50;
const PAGING = "orders@mailroom.test";
let paging;
/** A mailbox of more conversations than a page holds, made once for both widths. */
const pagingMailbox = () => (paging ??= seedPaging());

/**
 * Delivers PAGE + 6 conversations to orders@, one at a time so each is later
 * than the last, then a reply to two of the oldest, which moves them to the
 * top: the list is by last activity, not by when a conversation began. Answers
 * the mailbox, the thread ids in the order the list must show them (latest
 * activity first), and each id's subject.
 */
async function seedPaging() {
  const mailbox = await desk.mailbox(PAGING, "Orders");
  await desk.grant(made.writer.id, ["mailbox.metadata.read", "mailbox.content.read"], mailbox.id);
  const order = (index) => `Order ${String(index).padStart(3, "0")}`;
  const count = PAGE + 6;
  for (let index = 1; index <= count; index++) {
    const raw = message({ id: `order-${index}@customer.example`, subject: order(index), body: `About order ${index}.`, from: `Ana Lima <${ANA}>`, to: PAGING });
    assert.equal(await node.deliver(ANA, PAGING, raw), null);
  }
  for (const index of [3, 1]) {
    const parent = `<order-${index}@customer.example>`;
    const raw = message({
      id: `order-${index}-again@customer.example`, subject: `Re: ${order(index)}`, body: "Any news?", from: `Ana Lima <${ANA}>`, to: PAGING,
      headers: `In-Reply-To: ${parent}\r\nReferences: ${parent}\r\n`,
    });
    assert.equal(await node.deliver(ANA, PAGING, raw), null);
  }
  const subjects = [order(1), order(3), ...Array.from({ length: count }, (_, at) => count - at).filter((index) => ![1, 3].includes(index)).map(order)];
  // Every conversation as the API lists them, page by page.
  const listed = [];
  for (let cursor; ;) {
    const answer = await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads?${new URLSearchParams({ limit: "20", ...(cursor ? { cursor } : {}) })}`, { token: made.writerToken }));
    listed.push(...answer.threads);
    cursor = answer.next_cursor;
    if (!cursor) break;
  }
  assert.deepEqual(listed.map((thread) => thread.subject), subjects, "the API lists them by last activity");
  assert.deepEqual(listed.map((thread) => thread.message_count), subjects.map((subject) => ([order(1), order(3)].includes(subject) ? 2 : 1)), "each reply joined its conversation");
  return { mailbox, expected: listed.map((thread) => thread.id), subjects: new Map(listed.map((thread) => [thread.id, thread.subject])) };
}

/** The conversations the list shows, by id, in order. */
const shownThreads = (page) => conversations(page).locator("li[data-thread]").evaluateAll((rows) => rows.map((row) => row.dataset.thread));
/** Whether an element lies within the window's height, as scrolled. */
const inView = (locator) => locator.evaluate((element) => {
  const box = element.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
});

for (const layout of LAYOUTS) {
  const { name, ...options } = layout;

  test(`${name}: past a page of conversations, More shows the rest, each once, latest activity first; back from one on the second page, the list is as it was left`, async () => {
    const { mailbox, expected, subjects } = await pagingMailbox();
    const { page } = await watch.open(browser, { who: `${name} pages`, ...options, locale: "en-GB" });
    await signIn(page, WRITER);
    await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}`);
    await page.getByRole("list", { name: `Conversations in ${PAGING}` }).waitFor();
    const more = page.getByRole("button", { name: "More conversations" });
    const row = (id) => conversations(page).locator(`li[data-thread="${id}"]`);

    assert.deepEqual(await shownThreads(page), expected.slice(0, PAGE), "the first page: a page's worth, latest activity first");
    assert.equal(await rowOf(page, subjects.get(expected[0])).getByText("2 messages").count(), 1, "the conversation answered last is on top");
    await more.waitFor();
    await assertFits(page, `${name}: a page of conversations`);

    await more.click();
    await row(expected.at(-1)).waitFor();
    await more.waitFor({ state: "hidden" });
    const shown = await shownThreads(page);
    assert.equal(new Set(shown).size, shown.length, "no conversation is shown twice");
    assert.deepEqual(shown, expected, "both pages, none lost, in order of last activity");
    await assertFits(page, `${name}: both pages of conversations`);

    // To a conversation on the second page, and back.
    const far = expected.at(-2);
    await row(far).getByRole("link", { name: subjects.get(far) }).click();
    await page.getByRole("heading", { name: subjects.get(far), level: 2 }).waitFor();
    await page.getByRole("link", { name: "Back to the conversations" }).click();
    await row(far).waitFor();
    assert.deepEqual(await shownThreads(page), expected, "back, both pages are shown again, in order");
    assert.ok(await more.isHidden(), "with nothing more to ask for");
    assert.ok(await inView(row(far)), "and the conversation just left is in view");
    assert.doesNotMatch(await row(far).getAttribute("class"), /\bunread\b/, "now read");

    // A filter changed while the next page is on its way: that page belonged to
    // the list no longer shown, and is not added to the new one.
    const unreadExpected = expected.filter((id) => id !== far);
    const filters = page.getByRole("search", { name: "Filter conversations" });
    await filters.getByLabel("Status").selectOption({ label: "Every status" });
    await settled(page);
    assert.deepEqual(await shownThreads(page), expected.slice(0, PAGE), "a filter changed shows its first page");
    let release;
    const held = new Promise((resolve) => (release = resolve));
    let asked;
    const askedFor = new Promise((resolve) => (asked = resolve));
    const nextPage = (url) => url.pathname === `/api/mailboxes/${mailbox.id}/threads` && url.searchParams.has("cursor");
    await page.route(nextPage, async (route) => {
      asked();
      await held;
      await route.continue();
    });
    await more.click();
    await askedFor;
    await filters.getByLabel("Unread only").check();
    await settled(page);
    const arrived = page.waitForResponse((response) => response.url().includes("cursor="));
    release();
    await arrived;
    await page.unroute(nextPage);
    await page.waitForFunction(() => !document.querySelector("button.more")?.disabled);
    assert.deepEqual(await shownThreads(page), unreadExpected.slice(0, PAGE), "only the unread ones' first page");
    await more.click();
    await row(unreadExpected.at(-1)).waitFor();
    assert.deepEqual(await shownThreads(page), unreadExpected, "and then the rest of them, each once");
    await more.waitFor({ state: "hidden" });
  });
}

test("phone: an administrator assigns a conversation from a list of names that fits the window, and the conversation says who has it", async () => {
  const { name, ...phone } = LAYOUTS.find((layout) => layout.name === "phone");
  const { page } = await watch.open(browser, { who: `administrator, ${name}`, ...phone, locale: "en-GB" });
  await signIn(page, ADMIN);
  const { mailbox, forged } = made.phone;
  const thread = (await threadsOf(mailbox)).get(forged);
  await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}/${thread.id}`);
  await page.getByRole("heading", { name: forged, level: 2 }).waitFor();
  const picker = page.getByLabel("Assigned to");
  await picker.locator("option", { hasText: LONG.name }).waitFor({ state: "attached" });
  await picker.focus();
  await assertFits(page, "the administrator's conversation on a phone");
  const box = await picker.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= phone.viewport.width, `the choice lies within the window: from ${box.x} to ${box.x + box.width}px`);
  const offered = await picker.locator("option").allTextContents();
  assert.deepEqual(offered, ["Nobody", ADMIN.name, LONG.name, WRITER.name], "those who hold send.propose, by name");
  assert.deepEqual(offered.filter((text) => /\b(?:usr|agt)_[0-9A-Z]{26}\b/.test(text)), [], "never by id");
  assert.equal(await picker.inputValue(), "", "nobody has it yet");

  await picker.selectOption({ label: LONG.name });
  await statusSaying(page, `Assigned to ${LONG.name}.`).waitFor();
  const facts = page.locator(".thread-facts");
  assert.match(await facts.innerText(), new RegExp(`Assigned to ${LONG.name}`), "the conversation says who has it, by name");
  assert.doesNotMatch(await facts.innerText(), /usr_/);
  const stored = (await threadsOf(mailbox)).get(forged);
  assert.deepEqual([stored.assignee, stored.assignee_name], [made.long.id, LONG.name], "the API confirms it");
  await assertFits(page, "the conversation once assigned, on a phone");

  // Coming back to it, the choice and the words still name who has it.
  await page.reload();
  await page.getByRole("heading", { name: forged, level: 2 }).waitFor();
  assert.match(await page.locator(".thread-facts").innerText(), new RegExp(`Assigned to ${LONG.name}`));
  assert.equal(await page.getByLabel("Assigned to").inputValue(), made.long.id);
  assert.equal(await page.getByLabel("Assigned to").locator("option:checked").textContent(), LONG.name);
  // Not left assigned, for what follows.
  await page.getByLabel("Assigned to").selectOption({ label: "Nobody" });
  await statusSaying(page, "Assigned to nobody.").waitFor();
});

test("desktop: a pass for another domain reads as not verified, naming that domain, and a reply to all past the limit says how many to remove", async () => {
  const { mailbox, address } = made.desktop;
  const to = `Support <${address}>`;
  // The issue's attack: the stamp passes the attacker's own domain, the From shows the customer's.
  const attack = "Urgent transfer (desktop)";
  const unaligned = "dkim=pass header.d=evil.example; dmarc=pass header.from=evil.example; spf=pass smtp.mailfrom=ceo@evil.example";
  assert.equal(await node.deliver("ceo@evil.example", address, message({ id: "transfer@evil.example", subject: attack, body: "Wire it today.", from: "CEO <ceo@customer.example>", to, stamp: unaligned })), null);
  const wide = "Town hall (desktop)";
  const copied = Array.from({ length: 60 }, (_, n) => `p${n}@customer.example`).join(", ");
  assert.equal(await node.deliver(ANA, address, message({ id: "town-hall@customer.example", subject: wide, body: "All of us.", from: `Ana Lima <${ANA}>`, to, headers: `Cc: ${copied}\r\n`, stamp: PASS })), null);

  const { page } = await watch.open(browser, { who: "writer, sender checks", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, WRITER);
  const threads = await threadsOf(mailbox);
  await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}/${threads.get(attack).id}`);
  await page.getByRole("heading", { name: attack, level: 2 }).waitFor();
  const card = page.getByRole("article", { name: /CEO/ });
  assert.ok(await card.getByText("Sender not verified", { exact: true }).isVisible(), "not the badge a pass would earn");
  const said = "A check passed for evil.example, not for customer.example, the domain of the From shown: nothing proves the From.";
  assert.ok(await card.locator(".entry-check-detail").getByText(said).isVisible(), await card.innerText());
  await assertFits(page, "a conversation with an unaligned sender");
  // The message's own page says the same.
  await card.getByRole("link", { name: /^Message details/ }).click();
  // Both pages are headed by the subject, and the conversation holds a folded list of facts too:
  // wait for the list only the message's page has, not for anything the conversation already shows.
  const details = page.locator("dl.facts").filter({ has: page.locator("dt", { hasText: /^Sender$/ }) });
  await details.waitFor();
  assert.match(await details.innerText(), /Sender\s+Sender not verified A check passed for evil\.example, not for customer\.example/);

  // Reply all on a message to 61 people: a draft to trim, and submitting it says how many.
  await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}/${threads.get(wide).id}`);
  await page.getByRole("heading", { name: wide, level: 2 }).waitFor();
  await page.getByRole("button", { name: /^Reply all/ }).click();
  const composer = page.getByRole("region", { name: "Your reply" });
  const trim = composer.locator(".trim-recipients");
  await trim.waitFor();
  assert.equal(await trim.innerText(), "This message has 61 recipients, and mail goes to at most 50: remove 11 recipients from To or Cc, then submit it.");
  await composer.getByLabel("Text").fill("Thanks, all.");
  watch.expectRefusal(409, `/api/mailboxes/${mailbox.id}/sends/${(await sendsOf(mailbox, "draft")).find((send) => send.subject === `Re: ${wide}`).id}/submit`);
  await composer.getByRole("button", { name: "Submit for approval" }).click();
  await composer.getByText("This draft has 61 recipients, so it was not submitted.").waitFor();
  assert.match(await composer.innerText(), /Remove 11 of its recipients/);
  await assertFits(page, "a reply to all past the limit");
});

test("desktop: the keyboard moves through the list, opens, replies, submits with Ctrl+Enter and closes; ? lists the shortcuts", async () => {
  const { mailbox, address } = made.desktop;
  const subject = "Keyboard question (desktop)";
  assert.equal(await node.deliver(BO, address, message({ id: "keyboard-desktop@customer.example", subject, body: "Is order 4471 on its way?", from: `Bo Berg <${BO}>`, to: `Support <${address}>` })), null);
  const { page } = await watch.open(browser, { who: "desktop keyboard", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, WRITER);
  await page.evaluate((href) => (location.hash = href), `#/mail/${mailbox.id}`);
  await rowOf(page, subject).waitFor();
  const listed = await listedSubjects(page);
  assert.equal(listed[0], subject, "the latest activity first");
  /** The subject of the conversation the keyboard moved to: focused, and marked as current. */
  const movedTo = () => page.evaluate(() => [document.activeElement?.closest("li[aria-current]")?.querySelector(".thread-subject")?.innerText.replace(/^Unread:\s*/, "").trim(), document.querySelectorAll("li[aria-current]").length]);

  await page.keyboard.press("j");
  assert.deepEqual(await movedTo(), [listed[0], 1]);
  await page.keyboard.press("j");
  assert.deepEqual(await movedTo(), [listed[1], 1]);
  await page.keyboard.press("k");
  assert.deepEqual(await movedTo(), [listed[0], 1]);
  // Typed into a field, a letter is text, not a shortcut.
  await page.getByRole("search", { name: "Filter conversations" }).getByLabel("Label").fill("jk");
  assert.deepEqual(await movedTo(), [undefined, 1]);
  await page.getByRole("search", { name: "Filter conversations" }).getByLabel("Label").fill("");
  await settled(page);
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement?.name), "q", "/ goes to the list's search");
  await page.evaluate(() => document.activeElement.blur());

  await page.keyboard.press("o");
  await page.getByRole("heading", { name: subject, level: 2 }).waitFor();
  await page.keyboard.press("r");
  const composer = page.getByRole("region", { name: "Your reply" });
  await composer.getByLabel("Text").waitFor();
  await composer.getByLabel("Text").fill("It left the warehouse this morning.");
  await page.keyboard.press("Control+Enter");
  await statusSaying(page, "Submitted for approval").waitFor();
  const submitted = (await sendsOf(mailbox, "submitted")).filter((send) => send.text === "It left the warehouse this morning.");
  assert.equal(submitted.length, 1, "Ctrl+Enter submitted the reply");

  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press("e");
  await statusSaying(page, "Now closed.").waitFor();
  assert.equal((await threadsOf(mailbox, { status: "closed" })).get(subject)?.status, "closed");

  await page.keyboard.press("?");
  const shortcuts = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await shortcuts.waitFor();
  for (const words of ["Move to the next conversation in the list", "Reply to everyone on the latest message", "Close the conversation"]) {
    assert.ok(await shortcuts.getByText(words).isVisible(), words);
  }
  await page.keyboard.press("j");
  assert.ok(await shortcuts.isVisible(), "no shortcut acts while the list is open");
  await page.keyboard.press("Escape");
  await shortcuts.waitFor({ state: "hidden" });
  await page.context().close();
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});

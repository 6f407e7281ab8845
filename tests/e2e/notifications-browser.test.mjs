// The notifications feed in a real browser (issue 15): headless Chromium against
// the built Worker on workerd, at a desktop's width (1280×800) and a phone's
// (390×844), each in a mailbox of its own. A writer's send is refused by a
// second person, another is sent, a conversation is assigned to them: the
// writer sees how many are unread beside Notifications, reads each in words
// with names (never ids), follows the refusal to the send (which marks it read)
// and writes it again, marks one unread, shows only the unread, and marks all
// read, which clears the count. A decider sees an approval waiting, follows it
// to Approvals, and once it is decided it looks done. Past a page, older ones
// are a button away. At every step the page fits its window. Every console
// error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits as fits, signIn as signInAt, sectionLink as section, openSection, showNavigation } from "./browser-helpers.mjs";
import { ok, startDeskWith } from "./fixtures.mjs";

const WRITER = { name: "Wren Writer", email: "wren@example.com", password: "wren's first long password" };
const DECIDER = { name: "Cleo Checker", email: "cleo@example.com", password: "cleo's first long password" };
const ANA = "ana@customer.example";
const REASON = "The invoice number is wrong.";
/** An id the node mints, as a person should never have to read one. */
const ID = /\b(?:usr|mbx|snd|thr|ntf|evt|agt)_[0-9A-HJKMNP-TV-Z]{26}\b/;

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, desk, browser;
const watch = new PageWatch();
const made = {};

/** A send written by the writer and submitted: `{ id, version, … }`. */
async function submitted(mailbox, subject, text = "Please find the invoice attached.") {
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await ok(call("POST", sends, { token: made.writerToken, body: { to: [`Ana Lima <${ANA}>`], subject, text } }), 201);
  return ok(call("POST", `${sends}/${draft.id}/submit`, { token: made.writerToken }));
}

/** Someone's feed through the API. */
const feed = (as, parameters = {}) => ok(call("GET", `/api/me/notifications?${new URLSearchParams(parameters)}`, { token: as }));

before(async () => {
  let people;
  ({ node, call, desk, made: people } = await startDeskWith({ writer: WRITER, decider: DECIDER }, { sendEmail: { allowed_destination_addresses: [ANA] } }));
  Object.assign(made, people);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/**
 * A layout's own mailbox and what happened in it, oldest first: a conversation
 * assigned to the writer, a send of theirs sent, one refused. Made when its
 * layout starts, so the other layout's Mark all read leaves it unread.
 */
async function seed(layout) {
  const address = `${layout.name}-billing@mailroom.test`;
  const mailbox = await desk.mailbox(address, `Billing (${layout.name})`);
  const grants = [
    [made.writer.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]],
    [made.decider.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose", "approval.decide"]],
  ];
  for (const [subject, relations] of grants) await desk.grant(subject, relations, mailbox.id);
  const data = {
    mailbox,
    address,
    refused: `Re: invoice 4471 (${layout.name})`,
    sent: `Your receipt (${layout.name})`,
    question: `Where is my parcel? (${layout.name})`,
    waiting: `Quarterly statement (${layout.name})`,
  };
  made[layout.name] = data;
  const sends = `/api/mailboxes/${mailbox.id}/sends`;

  // Oldest first: a conversation assigned to the writer, a send sent, a send refused.
  const raw = `From: Ana Lima <${ANA}>\r\nTo: ${address}\r\nSubject: ${data.question}\r\nMessage-ID: <parcel-${layout.name}@customer.example>\r\n` +
    "Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nIt has not arrived.\r\n";
  assert.equal(await node.deliver(ANA, address, raw), null);
  const [thread] = (await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: made.deciderToken }))).threads;
  data.thread = thread;
  await ok(call("PATCH", `/api/mailboxes/${mailbox.id}/threads/${thread.id}`, { token: made.deciderToken, body: { assignee: made.writer.id } }));
  const sent = await submitted(mailbox, data.sent);
  await ok(call("POST", `${sends}/${sent.id}/approve`, { token: made.deciderToken, body: { version: sent.version } }));
  const refused = await submitted(mailbox, data.refused, "Invoice 4417 is attached.");
  await ok(call("POST", `${sends}/${refused.id}/refuse`, { token: made.deciderToken, body: { version: refused.version, reason: REASON } }));
  data.refusedSend = refused;
}

const signIn = (page, person) => signInAt(page, node.url, person);
/** Fails where the page does not fit its window, or a notification's text runs past its own box. */
const assertFits = (page, where) => fits(page, where, { inside: "ul.notifications *, .feed-tools *" });
const unreadBadge = (page) => page.getByRole("navigation", { name: "Sections" }).locator(".nav-unread");
const notifications = (page) => page.getByRole("list", { name: "Notifications, newest first" });
const itemSaying = (page, text) => notifications(page).getByRole("listitem").filter({ hasText: text });
/** Waits until the feed asked for again has arrived. */
const settled = (page) => page.locator(".feed-list[aria-busy]").waitFor({ state: "detached" });

/** Waits until the navigation says `count` unread (hidden at none), and checks how it says it. */
async function navigationSays(page, count) {
  const badge = unreadBadge(page);
  // On a phone the count is behind Menu, opened to read it and closed again.
  const opened = await showNavigation(page);
  if (!count) {
    await badge.waitFor({ state: "hidden" });
  } else {
    await badge.filter({ hasText: new RegExp(`^${count}\\b`) }).waitFor();
    assert.equal(await badge.getAttribute("title"), `${count} unread notification${count === 1 ? "" : "s"}`);
    assert.equal(await section(page, "Notifications").count(), 1, "the link keeps its name");
  }
  if (opened) await page.keyboard.press("Escape");
}

/** What an item says, as read on screen (without what only a screen reader hears). */
const saying = async (item) => (await item.locator(".notification-says").innerText()).replace(/^Unread:\s*/, "").trim();

/** Whether a feed item is shown as unread: marked for the eye and for a screen reader. */
async function looksUnread(item) {
  const unread = /\bunread\b/.test(await item.getAttribute("class"));
  const dot = await item.locator(".unread-dot").isVisible();
  const said = (await item.getByRole("link").textContent()).startsWith("Unread: ");
  assert.equal(dot, unread, "the dot shows exactly when it is unread");
  assert.equal(said, unread, "and a screen reader hears it");
  return unread;
}

for (const layout of LAYOUTS) {
  const run = {};
  const { name, ...options } = layout;
  const data = () => made[name];

  test(`${name}: the writer sees how many are unread, and what happened in words, newest first`, async () => {
    await seed(layout);
    ({ page: run.writer } = await watch.open(browser, { who: `${name} writer`, ...options, locale: "en-GB" }));
    const page = run.writer;
    const before = await feed(made.writerToken);
    const here = before.notifications.filter((item) => item.mailbox_id === data().mailbox.id);
    assert.deepEqual(here.map((item) => [item.kind, item.read]), [["send_refused", false], ["send_sent", false], ["conversation_assigned", false]]);
    await signIn(page, WRITER);
    await navigationSays(page, before.unread_count);

    await openSection(page, "Notifications");
    await page.getByRole("heading", { name: "Notifications", level: 1 }).waitFor();
    const refusal = itemSaying(page, data().refused);
    await refusal.waitFor();
    const says = await saying(refusal);
    assert.equal(says, `${DECIDER.name} refused your send “${data().refused}”: ${REASON}`, "the refusal and its reason, by name");
    assert.ok(await refusal.getByText("Refused", { exact: true }).isVisible(), "its kind, in words");
    assert.equal(await looksUnread(refusal), true);
    const bold = await refusal.locator(".notification-says").evaluate((element) => Number(getComputedStyle(element).fontWeight));
    assert.ok(bold >= 600, `an unread one is bold (${bold})`);

    const sent = itemSaying(page, data().sent);
    assert.equal(await saying(sent), `Your send “${data().sent}” was sent, approved by ${DECIDER.name}.`);
    const assigned = itemSaying(page, data().question);
    assert.equal(await saying(assigned), `${DECIDER.name} assigned you “${data().question}” in ${data().address}.`);
    assert.ok(await refusal.locator("time").isVisible(), "with when");

    // Newest first: the refusal, the send, the assignment, as they happened.
    const order = await notifications(page).locator(".notification-says").allInnerTexts();
    const at = (text) => order.findIndex((said) => said.includes(text));
    assert.ok(at(data().refused) < at(data().sent) && at(data().sent) < at(data().question), order.join("\n"));
    assert.doesNotMatch(await page.getByRole("main").innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: the feed`);
  });

  test(`${name}: following the refusal opens the send, marks it read, and Write it again drafts it anew`, async () => {
    const page = run.writer;
    const before = (await feed(made.writerToken)).unread_count;
    const refusal = itemSaying(page, data().refused);
    await refusal.getByRole("link").click();
    await page.waitForURL(new RegExp(`#/mail/${data().mailbox.id}/outbound/${data().refusedSend.id}$`));
    const notice = page.getByRole("note");
    await notice.waitFor();
    assert.ok((await notice.innerText()).includes(REASON), "the send shows the reason too");
    await navigationSays(page, before - 1);
    const item = (await feed(made.writerToken)).notifications.find((entry) => entry.kind === "send_refused" && entry.object_id === data().refusedSend.id);
    assert.equal(item.read, true, "opening it marked it read");

    await notice.getByRole("button", { name: /^Write it again/ }).click();
    await page.getByText("Written again as a new draft").waitFor();
    assert.equal(await page.getByLabel("Text").inputValue(), "Invoice 4417 is attached.", "the new draft, to change");
    const drafts = (await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/sends?state=draft`, { token: made.writerToken }))).sends;
    assert.deepEqual(drafts.map((draft) => draft.subject), [data().refused], "a new draft of the refused send");
    await assertFits(page, `${name}: the refused send`);
  });

  test(`${name}: one is marked unread again, Only unread shows the unread, and Mark all read clears the count`, async () => {
    const page = run.writer;
    await openSection(page, "Notifications");
    const refusal = itemSaying(page, data().refused);
    await refusal.waitFor();
    assert.equal(await looksUnread(refusal), false, "read once opened");
    const before = (await feed(made.writerToken)).unread_count;

    await refusal.getByRole("button", { name: `Mark unread “${data().refused}”` }).click();
    await refusal.getByRole("button", { name: `Mark read “${data().refused}”` }).waitFor();
    assert.equal(await looksUnread(refusal), true);
    await navigationSays(page, before + 1);
    assert.equal((await feed(made.writerToken)).notifications.find((entry) => entry.object_id === data().refusedSend.id).read, false);

    // Only unread: the one read (the sent one, read here) is left out.
    await itemSaying(page, data().sent).getByRole("button", { name: /^Mark read/ }).click();
    await itemSaying(page, data().sent).getByRole("button", { name: /^Mark unread/ }).waitFor();
    await page.getByLabel("Only unread").check();
    await settled(page);
    const unread = (await feed(made.writerToken, { unread: "true" })).notifications;
    assert.equal(await notifications(page).getByRole("listitem").count(), unread.length, "exactly the unread");
    assert.equal(await itemSaying(page, data().sent).count(), 0, "the read one is left out");
    assert.equal(await itemSaying(page, data().refused).count(), 1);
    await assertFits(page, `${name}: only unread`);

    await page.getByRole("button", { name: "Mark all read" }).click();
    await page.getByRole("status").filter({ hasText: "marked read" }).waitFor();
    await navigationSays(page, 0);
    assert.ok(await page.getByText("Nothing unread.").isVisible());
    assert.equal((await feed(made.writerToken)).unread_count, 0);
    await page.getByLabel("Only unread").uncheck();
    await settled(page);
    for (const item of await notifications(page).getByRole("listitem").all()) assert.equal(await looksUnread(item), false);
    await assertFits(page, `${name}: all read`);
  });

  test(`${name}: a decider sees an approval waiting, follows it to Approvals, and once decided it looks done`, async () => {
    const waiting = await submitted(data().mailbox, data().waiting);
    ({ page: run.decider } = await watch.open(browser, { who: `${name} decider`, ...options, locale: "en-GB" }));
    const page = run.decider;
    await signIn(page, DECIDER);
    const before = (await feed(made.deciderToken)).unread_count;
    assert.ok(before >= 1);
    await navigationSays(page, before);

    await openSection(page, "Notifications");
    const item = itemSaying(page, data().waiting);
    await item.waitFor();
    assert.equal(await saying(item), `${WRITER.name} asked for approval of “${data().waiting}” from ${data().address}.`);
    assert.ok(await item.getByText("Needs a decision", { exact: true }).isVisible());
    assert.equal(await looksUnread(item), true);
    assert.doesNotMatch(await page.getByRole("main").innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: the decider's feed`);

    await item.getByRole("link").click();
    await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
    await page.getByRole("article", { name: data().waiting }).waitFor();
    await navigationSays(page, before - 1);

    // Decided (here, by the API), it needs nobody: it looks done, and is not counted.
    await ok(call("POST", `/api/mailboxes/${data().mailbox.id}/sends/${waiting.id}/refuse`, {
      token: made.deciderToken, body: { version: waiting.version, reason: "Not this quarter." },
    }));
    await page.evaluate(() => (location.hash = "#/notifications"));
    await page.getByRole("button", { name: `Mark unread “${data().waiting}”` }).click();
    const done = itemSaying(page, data().waiting);
    await done.getByRole("button", { name: /^Mark read/ }).waitFor();
    assert.ok(await done.getByText("No longer waiting", { exact: true }).isVisible(), "resolved, it says so");
    assert.ok(await done.getByText("Decided or taken back").isVisible());
    assert.match(await done.getAttribute("class"), /\bresolved\b/);
    const color = (locator) => locator.evaluate((element) => getComputedStyle(element).color);
    assert.notEqual(await color(done.getByRole("link")), await color(page.getByRole("heading", { level: 1 })), "and is shown muted");
    assert.equal((await feed(made.deciderToken)).unread_count, before - 1, "unread again, a resolved one is not counted");
    assert.match(await done.getByRole("link").getAttribute("href"), new RegExp(`#/mail/${data().mailbox.id}/outbound/${waiting.id}$`), "it leads to the send");
    await assertFits(page, `${name}: a resolved approval`);
  });
}

test("desktop: past a page, the feed shows older notifications a button away", async () => {
  // Each assignment to the writer from someone else's hands is a notification: 51 of them.
  const { mailbox, thread } = made.desktop;
  const path = `/api/mailboxes/${mailbox.id}/threads/${thread.id}`;
  for (let index = 0; index < 51; index++) {
    await ok(call("PATCH", path, { token: made.deciderToken, body: { assignee: made.decider.id } }));
    await ok(call("PATCH", path, { token: made.deciderToken, body: { assignee: made.writer.id } }));
  }
  const total = (await feed(made.writerToken, { limit: 100 })).notifications.length;
  assert.ok(total > 50, `${total} in the feed`);
  const { page } = await watch.open(browser, { who: "writer, many", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, WRITER);
  await navigationSays(page, (await feed(made.writerToken)).unread_count);
  await openSection(page, "Notifications");
  await notifications(page).waitFor();
  assert.equal(await notifications(page).getByRole("listitem").count(), 50, "a page at a time");
  await page.getByRole("button", { name: "Show older notifications" }).click();
  await notifications(page).getByRole("listitem").nth(total - 1).waitFor();
  assert.equal(await notifications(page).getByRole("listitem").count(), total, "and then the rest");
  assert.ok(await page.getByRole("button", { name: "Show older notifications" }).isHidden(), "nothing older");
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});

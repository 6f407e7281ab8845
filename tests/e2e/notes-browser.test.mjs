// Internal notes with @mentions in a real browser (decision 0047): headless
// Chromium against the built Worker on workerd, at a desktop's width
// (1280×800) and a phone's (390×844), each in a mailbox of its own, two
// people in two browser contexts.
//
// Tess opens a conversation and writes a note: typing @ offers the teammates
// who read the mailbox in a labelled listbox, chosen with the keyboard; the
// note shows among the messages on a card that says "Internal note". Bo,
// mentioned, has the conversation open in his own browser and sees the note
// arrive without reloading; his feed says Tess mentioned him, and following it
// opens the conversation. Replying there begins a draft that holds nothing of
// the note. Tess deletes her note; Bo's copy goes too. At every step the page
// fits its window and axe-core finds nothing; every console error and CSP
// violation fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, openSection, signIn as signInAt } from "./browser-helpers.mjs";
import { ok, startDeskWith } from "./fixtures.mjs";

const TESS = { name: "Tess Teller", email: "tess@example.com", password: "tess's first long password" };
const BO = { name: "Bo Baker", email: "bo@example.com", password: "bo's first long password" };
const ANA = "ana@customer.example";
const WORKS = ["mailbox.metadata.read", "mailbox.content.read", "send.propose"];
/** An id the node mints, as a person should never have to read one. */
const ID = /\b(?:usr|mbx|thr|ntf|nte)_[0-9A-HJKMNP-TV-Z]{26}\b/;

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, desk, browser;
const watch = new PageWatch();
const made = {};

before(async () => {
  let people;
  ({ node, call, desk, made: people } = await startDeskWith({ tess: TESS, bo: BO }, { sendEmail: { allowed_destination_addresses: [ANA] } }));
  Object.assign(made, people);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** A layout's own mailbox, which Tess and Bo work, and a conversation in it. */
async function seed(layout) {
  const address = `${layout.name}-help@mailroom.test`;
  const mailbox = await desk.mailbox(address, `Help (${layout.name})`);
  for (const person of [made.tess, made.bo]) await desk.grant(person.id, WORKS, mailbox.id);
  const subject = `A refund for order 5512 (${layout.name})`;
  const raw = `From: Ana Lima <${ANA}>\r\nTo: ${address}\r\nSubject: ${subject}\r\nMessage-ID: <refund-${layout.name}@customer.example>\r\n` +
    "Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe parcel came back; may I have my money?\r\n";
  assert.equal(await node.deliver(ANA, address, raw), null);
  const [thread] = (await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: made.tessToken }))).threads;
  return { mailbox, address, subject, thread, url: `${node.url}/#/mail/${mailbox.id}/${thread.id}` };
}

const signIn = (page, person) => signInAt(page, node.url, person);
const notes = (data, token) => ok(call("GET", `/api/mailboxes/${data.mailbox.id}/threads/${data.thread.id}/notes`, { token }));
const noteCards = (page) => page.locator("article.entry.note");

for (const layout of LAYOUTS) {
  const { name, ...options } = layout;
  const run = {};

  test(`${name}: Tess mentions Bo with the @ suggestions, and the note shows among the messages as internal`, async () => {
    run.data = await seed(layout);
    ({ page: run.tess } = await watch.open(browser, { who: `${name} Tess`, ...options, locale: "en-GB" }));
    ({ page: run.bo } = await watch.open(browser, { who: `${name} Bo`, ...options, locale: "en-GB" }));
    // Bo has the conversation open before the note is written.
    await signIn(run.bo, BO);
    await run.bo.goto(run.data.url);
    await run.bo.getByRole("heading", { name: run.data.subject, level: 2 }).waitFor();

    const page = run.tess;
    await signIn(page, TESS);
    await page.goto(run.data.url);
    const composer = page.getByRole("region", { name: "Internal note" });
    const text = composer.getByLabel("Write a note");
    await text.waitFor();
    await text.click();
    await text.pressSequentially("Refund approved by finance, @b");
    const suggestions = composer.getByRole("listbox", { name: "Teammates to mention" });
    await suggestions.waitFor();
    const offered = await suggestions.getByRole("option").allInnerTexts();
    assert.deepEqual(offered.map((said) => said.replace(/\s+/g, " ").trim()), [`${BO.name} @bo`], "teammates who read the mailbox, not Tess herself");
    assert.equal(await suggestions.getByRole("option", { selected: true }).count(), 1, "the first is chosen for the keyboard");
    assert.equal(await text.getAttribute("aria-activedescendant"), await suggestions.getByRole("option").first().getAttribute("id"));
    await assertFits(page, `${name}: the @ suggestions open`);
    await page.keyboard.press("Enter");
    await suggestions.waitFor({ state: "hidden" });
    await page.keyboard.type("please send it today.");
    assert.equal(await text.inputValue(), "Refund approved by finance, @bo please send it today.");
    // From here Bo's page hears of the note alone: it reads the notes, not the conversation again.
    const threadPath = `/api/mailboxes/${run.data.mailbox.id}/threads/${run.data.thread.id}`;
    const boReads = [];
    const onBoRequest = (request) => {
      if (request.method() === "GET") boReads.push(new URL(request.url()).pathname);
    };
    run.bo.on("request", onBoRequest);
    await composer.getByRole("button", { name: "Add note" }).click();
    await composer.getByRole("status").filter({ hasText: `Note added. ${BO.name} will be told.` }).waitFor();
    assert.equal(await text.inputValue(), "", "the composer is empty again");

    const card = noteCards(page).first();
    await card.waitFor();
    assert.ok(await card.getByText("Internal note", { exact: true }).isVisible(), "it says what it is");
    assert.ok((await card.innerText()).includes(TESS.name));
    assert.ok((await card.innerText()).includes("@bo please send it today."));
    // Among the messages, after the customer's.
    const order = await page.getByRole("list", { name: "Messages, oldest first" }).locator(":scope > li").evaluateAll((items) => items.map((item) => item.querySelector("article")?.className ?? ""));
    assert.deepEqual(order.map((kind) => kind.includes("note") ? "note" : "mail"), ["mail", "note"], order.join(" | "));
    const tinted = await card.evaluate((element) => getComputedStyle(element).backgroundColor);
    const mail = await page.locator("article.entry.received").first().evaluate((element) => getComputedStyle(element).backgroundColor);
    assert.notEqual(tinted, mail, "a note is tinted, unlike mail");
    const [kept] = (await notes(run.data, made.tessToken)).notes;
    assert.deepEqual(kept.mentions, [made.bo.id], "Bo is mentioned");
    assert.doesNotMatch(await page.getByRole("main").innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: a note in the conversation`);

    // Bo, with it open, sees it arrive.
    await noteCards(run.bo).filter({ hasText: "@bo please send it today." }).waitFor();
    await run.bo.waitForTimeout(500);
    run.bo.off("request", onBoRequest);
    assert.ok(boReads.includes(`${threadPath}/notes`), `the notes were read: ${boReads}`);
    assert.ok(!boReads.includes(threadPath), `a note read nothing else of the conversation: ${boReads}`);
  });

  test(`${name}: Bo's feed says he was mentioned, leads to the conversation, and his reply holds nothing of the note`, async () => {
    const page = run.bo;
    const mention = (await ok(call("GET", "/api/me/notifications", { token: made.boToken }))).notifications
      .find((item) => item.kind === "note_mention" && item.object_id === run.data.thread.id);
    assert.ok(mention, "told in his feed");
    const tessTold = (await ok(call("GET", "/api/me/notifications", { token: made.tessToken }))).notifications
      .filter((item) => item.kind === "note_mention");
    assert.deepEqual(tessTold, [], "the author is not told of her own note");

    await openSection(page, "Notifications");
    const item = page.getByRole("list", { name: "Notifications, newest first" }).getByRole("listitem")
      .filter({ hasText: run.data.subject });
    await item.waitFor();
    const says = (await item.locator(".notification-says").innerText()).replace(/^Unread:\s*/, "").trim();
    assert.equal(says, `${TESS.name} mentioned you in a note on “${run.data.subject}” in ${run.data.address}.`);
    assert.ok(await item.getByText("Mentioned", { exact: true }).isVisible());
    await assertFits(page, `${name}: the mention in the feed`);
    await item.getByRole("link").click();
    await page.waitForURL(new RegExp(`#/mail/${run.data.mailbox.id}/${run.data.thread.id}$`));
    await noteCards(page).filter({ hasText: "@bo please send it today." }).waitFor();

    await page.getByRole("button", { name: /^Reply to/ }).first().click();
    const reply = page.getByRole("region", { name: "Your reply" }).getByLabel("Text", { exact: true });
    await reply.waitFor();
    assert.ok(!(await reply.inputValue()).includes("finance"), "the note is not in the reply");
    const drafts = (await ok(call("GET", `/api/mailboxes/${run.data.mailbox.id}/sends?state=draft`, { token: made.boToken }))).sends;
    assert.equal(drafts.length, 1);
    assert.ok(!JSON.stringify(drafts[0]).includes("finance"), "nor in the draft kept");
    await assertFits(page, `${name}: a reply below the note`);
  });

  test(`${name}: Tess deletes her note, and it goes from Bo's page too`, async () => {
    const page = run.tess;
    const card = noteCards(page).first();
    await card.getByRole("button", { name: "Delete this note" }).click();
    await card.getByRole("group", { name: "Delete the note" }).getByRole("button", { name: "Delete the note" }).click();
    await noteCards(page).first().waitFor({ state: "detached" });
    assert.deepEqual((await notes(run.data, made.tessToken)).notes, []);
    await noteCards(run.bo).first().waitFor({ state: "detached" });
    await assertFits(page, `${name}: the note deleted`);
  });
}

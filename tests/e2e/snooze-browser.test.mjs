// Snoozing a conversation in a real browser (issue 31, decision 0048):
// headless Chromium against the built Worker on workerd, on a desktop
// (1280×800) and a phone (390×844), each with a conversation of its own
// assigned to the writer, whose time zone is Europe/Paris.
//
// The writer opens the conversation and snoozes it with Tomorrow (on the
// desktop by the keyboard's b): the node keeps 08:00 tomorrow in Paris, the
// conversation leaves the open list and the Snoozed filter shows it with
// when it wakes; on the phone Unsnooze brings it back at once. Then it is
// snoozed until a moment a few seconds on, the minute's cron is fired through
// the scheduled endpoint, and the conversation is open in the list again and
// the writer's notifications say it is back from snooze, once. On the
// desktop, two conversations selected in the list are snoozed until next
// week at once from the bulk bar. Every page
// measured fits its window and passes axe-core; every console error and CSP
// violation fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, openSection } from "./browser-helpers.mjs";
import { startDesk } from "./fixtures.mjs";
import { MAIL_NODE, SUPPORT, WRITER, furnishMailDesk, pagesOn, statusSaying } from "./mail-browser.mjs";

const ZONE = "Europe/Paris";
const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];
const subjectOf = (layout) => `Refund for order 88 (${layout.name})`;
const BULK = ["Bulk question one", "Bulk question two"];

let node, call, desk, browser, mailboxId, writer, writerToken;
const watch = new PageWatch();

before(async () => {
  ({ node, call, desk } = await startDesk(MAIL_NODE));
  let ids;
  ({ mailboxId, ids } = await furnishMailDesk(node, desk));
  writer = ids.writer;
  writerToken = await desk.signIn(WRITER);
  await api("PATCH", "/api/me/profile", { tz: ZONE });
  for (const layout of LAYOUTS) {
    const raw = Buffer.from(`From: Ana <ana@customer.example>\r\nTo: ${SUPPORT.address}\r\nSubject: ${subjectOf(layout)}\r\n` +
      `Message-ID: <refund-${layout.name}@customer.example>\r\nDate: Fri, 4 Dec 2026 09:00:00 +0000\r\n\r\nWhere is my refund?\r\n`);
    assert.equal(await node.deliver("ana@customer.example", SUPPORT.address, raw), null);
    await api("PATCH", threadPath(await threadOf(subjectOf(layout))), { assignee: writer });
  }
  for (const subject of BULK) {
    const raw = Buffer.from(`From: Bo <bo@customer.example>\r\nTo: ${SUPPORT.address}\r\nSubject: ${subject}\r\n` +
      `Message-ID: <${subject.replaceAll(" ", "-")}@customer.example>\r\nDate: Fri, 4 Dec 2026 10:00:00 +0000\r\n\r\nHello.\r\n`);
    assert.equal(await node.deliver("bo@customer.example", SUPPORT.address, raw), null);
  }
  browser = await launchChromium();
});

const { signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

async function api(method, path, body) {
  const answer = await call(method, path, { token: writerToken, body });
  assert.ok(answer.status < 300, answer.text);
  return answer.body;
}
const filters = (page) => page.getByRole("search", { name: "Filter conversations" });
const threadPath = (id) => `/api/mailboxes/${mailboxId}/threads/${id}`;

/** The conversation about `subject`, asleep or awake, by its id. */
async function threadOf(subject) {
  for (const snoozed of [false, true]) {
    const { threads } = await api("GET", `/api/mailboxes/${mailboxId}/threads${snoozed ? "?snoozed=true" : ""}`);
    const thread = threads.find((listed) => listed.subject === subject);
    if (thread) return thread.id;
  }
  assert.fail(`no conversation about ${subject}`);
}

/** 08:00 tomorrow in `ZONE`, as the page's Tomorrow counts it; or next Monday's, as Next week does. */
function tomorrowAtEight(now = new Date(), { monday = false } = {}) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", { timeZone: ZONE, year: "numeric", month: "numeric", day: "numeric", weekday: "short" })
    .formatToParts(now).map((part) => [part.type, part.type === "weekday" ? part.value : Number(part.value)]));
  const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day + (monday ? (8 - weekday) % 7 || 7 : 1), 8, 0);
  // Paris is one hour ahead of UTC in December (no change of clock before March).
  return new Date(wall - 3_600_000).toISOString();
}

for (const layout of LAYOUTS) {
  test(`on a ${layout.name}, a conversation snoozed until tomorrow leaves the list, and one whose moment comes is back and its assignee told`, async () => {
    const subject = subjectOf(layout);
    const id = await threadOf(subject);
    const { page } = await watch.open(browser, { who: `writer, ${layout.name}`, viewport: layout.viewport, isMobile: layout.isMobile, hasTouch: layout.hasTouch });
    await signIn(page, WRITER);

    await page.goto(`${node.url}/#/mail/${mailboxId}/${id}`);
    await page.getByRole("heading", { name: subject }).waitFor();
    // On the desktop by the keyboard (b, as in Gmail and Front), on the phone by touch.
    if (layout.name === "desktop") await page.keyboard.press("b");
    else await page.locator('summary[data-key="snooze"]').click();
    const choices = page.getByRole("group", { name: "Snooze until" });
    const tomorrow = choices.getByRole("button", { name: /^Tomorrow/ });
    await tomorrow.waitFor();
    await page.getByText(`Times are in your time zone, ${ZONE.replace("_", " ")}.`).waitFor();
    await assertFits(page, `the snooze choices, on a ${layout.name}`);
    await tomorrow.click();
    await statusSaying(page, "Snoozed until").waitFor();
    await page.getByText(/^Snoozed until .*08:00/).first().waitFor();
    assert.equal((await api("GET", threadPath(id))).snoozed_until, tomorrowAtEight(), "08:00 tomorrow in the writer's zone");
    await assertFits(page, `a snoozed conversation, on a ${layout.name}`);

    // The open list leaves it out; Snoozed shows it with when it wakes.
    await page.getByRole("link", { name: "Back to the conversations" }).click();
    const list = page.getByRole("list", { name: `Conversations in ${SUPPORT.address}` });
    await list.waitFor();
    assert.equal(await list.getByText(subject).count(), 0, "a snoozed conversation is not in the open list");
    await filters(page).getByLabel("Status").selectOption({ label: "Snoozed" });
    const row = list.locator("li[data-thread]").filter({ hasText: subject });
    await row.getByText(/^Snoozed until .*08:00/).waitFor();
    await assertFits(page, `the snoozed conversations, on a ${layout.name}`, { inside: ".thread-list" });

    if (layout.name === "phone") {
      // Unsnoozed by hand: back in the open list at once.
      await row.getByRole("link", { name: subject }).click();
      await page.getByRole("button", { name: "Unsnooze" }).click();
      await statusSaying(page, "No longer snoozed").waitFor();
      assert.equal((await api("GET", threadPath(id))).snoozed_until, undefined);
      await page.getByRole("link", { name: "Back to the conversations" }).click();
      await filters(page).getByLabel("Status").selectOption({ label: "Open" });
      await list.locator("li[data-thread]").filter({ hasText: subject }).waitFor();
    }

    // A moment a few seconds on, then the minute's run: it wakes, and the open list shows it again.
    await filters(page).getByLabel("Status").selectOption({ label: "Snoozed" });
    await api("PATCH", threadPath(id), { snoozed_until: new Date(Date.now() + 3_000).toISOString() });
    await row.waitFor();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await node.scheduled("* * * * *");
    const woken = await api("GET", threadPath(id));
    assert.deepEqual([woken.status, woken.snoozed_until], ["open", undefined]);
    await filters(page).getByLabel("Status").selectOption({ label: "Open" });
    await list.locator("li[data-thread]").filter({ hasText: subject }).waitFor();

    const { notifications } = await api("GET", "/api/me/notifications");
    const back = notifications.filter((item) => item.kind === "snooze_ended" && item.object_id === id);
    assert.equal(back.length, 1, JSON.stringify(notifications));
    await node.scheduled("* * * * *");
    assert.equal((await api("GET", "/api/me/notifications")).notifications.filter((item) => item.kind === "snooze_ended" && item.object_id === id).length, 1, "told once");

    await openSection(page, "Notifications");
    await page.getByText(`“${subject}” is back from snooze in ${SUPPORT.address}.`).waitFor();
    await assertFits(page, `a conversation back from snooze in the notifications, on a ${layout.name}`);
  });
}

test("on a desktop, two conversations selected in the list are snoozed until next week at once", async () => {
  const { page } = await watch.open(browser, { who: "writer, bulk", viewport: LAYOUTS[0].viewport });
  await signIn(page, WRITER);
  await page.goto(`${node.url}/#/mail/${mailboxId}`);
  const list = page.getByRole("list", { name: `Conversations in ${SUPPORT.address}` });
  for (const subject of BULK) await list.getByLabel(`Select “${subject}”`).check();
  const bar = page.getByRole("form", { name: "Change the selected conversations" });
  await bar.getByLabel("Snooze until").selectOption({ label: "Next week" });
  await bar.getByRole("button", { name: "Snooze", exact: true }).click();
  await statusSaying(page, "Snoozed until").filter({ hasText: "2 conversations" }).waitFor();
  for (const subject of BULK) {
    assert.equal((await api("GET", threadPath(await threadOf(subject)))).snoozed_until, tomorrowAtEight(new Date(), { monday: true }), subject);
    await list.locator("li[data-thread]").filter({ hasText: subject }).waitFor({ state: "detached" });
  }
  await filters(page).getByLabel("Status").selectOption({ label: "Snoozed" });
  for (const subject of BULK) await list.locator("li[data-thread]").filter({ hasText: subject }).getByText(/^Snoozed until .*08:00/).waitFor();
  await assertFits(page, "conversations snoozed from the bulk bar, on a desktop", { inside: ".thread-list" });
});

// Working several conversations at once, in a real browser (issue 31):
// headless Chromium against the built Worker on workerd, at a desktop's width
// (1280×800) and a phone's (390×844), each in a mailbox of its own. A
// conversation whose mail carries a file is marked in the list and one
// without is not. A writer selects three conversations by their boxes and
// closes exactly those; selects two with the keyboard (j, then x) and takes
// them; selects every one shown and labels them, one of which already carries
// as many labels as a conversation may: the bar says how many changed and
// names the one refused, which stays selected. A selection outlives the list
// drawn again when someone else changes a conversation. Every change is
// checked through the API; at every step the page fits its window, passes
// axe-core, and on a phone every control of the bar is at least 44 px tall.
// Every console error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn as signInAt } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const WRITER = { name: "Wren Writer", email: "wren@example.com", password: "wren's first long password" };
const ANA = "ana@customer.example";
const QUESTIONS = ["Refund for order 1", "Refund for order 2", "Refund for order 3", "Refund for order 4", "Refund for order 5"];
/** How many labels a conversation may carry (`label_limits::LABELS_PER_CONVERSATION`). */
const MOST_LABELS = 20;

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, token, desk, browser;
const watch = new PageWatch();
const made = {};

/** A message as Email Routing hands it to the Worker; with `file`, a PDF attached. */
function message({ id, subject, to, file = null }) {
  const head = `From: Ana Lima <${ANA}>\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n`;
  if (!file) return Buffer.from(`${head}Content-Type: text/plain; charset=utf-8\r\n\r\nWhere is my refund?\r\n`);
  return Buffer.from(`${head}Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe signed contract is attached.\r\n` +
    `--B\r\nContent-Type: application/pdf; name="${file}"\r\nContent-Disposition: attachment; filename="${file}"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJSVFT0YK\r\n--B--\r\n`);
}

before(async () => {
  ({ node, call, token, desk } = await startDesk());
  made.writer = await desk.person(WRITER);
  for (const layout of LAYOUTS) {
    const address = `${layout.name}-bulk@mailroom.test`;
    const mailbox = await desk.mailbox(address, `Bulk (${layout.name})`);
    await desk.grant(made.writer.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"], mailbox.id);
    await desk.grant((await ok(call("GET", "/api/me", { token }))).id, ["mailbox.metadata.read", "send.propose"], mailbox.id);
    const to = `Support <${address}>`;
    const subjects = {
      contract: `Signed contract (${layout.name})`,
      crowded: `Crowded (${layout.name})`,
      questions: QUESTIONS.map((question) => `${question} (${layout.name})`),
    };
    assert.equal(await node.deliver(ANA, address, message({ id: `contract-${layout.name}@customer.example`, subject: subjects.contract, to, file: "contract.pdf" })), null);
    assert.equal(await node.deliver(ANA, address, message({ id: `crowded-${layout.name}@customer.example`, subject: subjects.crowded, to })), null);
    for (const [index, subject] of subjects.questions.entries()) {
      assert.equal(await node.deliver(ANA, address, message({ id: `question-${index}-${layout.name}@customer.example`, subject, to })), null);
    }
    made[layout.name] = { mailbox, address, subjects };
  }
  made.writerToken = await desk.signIn(WRITER);
  // One conversation already carries as many labels as it may: adding one more to it is refused.
  for (const layout of LAYOUTS) {
    const { mailbox, subjects } = made[layout.name];
    const crowded = (await threadsOf(mailbox)).get(subjects.crowded);
    const labels = Array.from({ length: MOST_LABELS }, (_, index) => `tag ${index + 1}`);
    await ok(call("PATCH", `/api/mailboxes/${mailbox.id}/threads/${crowded.id}`, { token: made.writerToken, body: { add_labels: labels } }));
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** A mailbox's conversations as the writer's API sees them, by subject. */
async function threadsOf(mailbox, parameters = {}) {
  const page = await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads?${new URLSearchParams({ limit: "100", ...parameters })}`, { token: made.writerToken }));
  return new Map(page.threads.map((thread) => [thread.subject, thread]));
}

const conversations = (page) => page.getByRole("list", { name: /^Conversations in / });
const rowOf = (page, subject) => conversations(page).getByRole("listitem").filter({ hasText: subject });
const boxOf = (page, subject) => page.getByRole("checkbox", { name: `Select “${subject}”`, exact: true });
const bar = (page) => page.getByRole("form", { name: "Change the selected conversations" });
const selectedCount = (page) => page.locator(".bulk-count");

/** On a phone, fails on any control of the bar, or any row's box, less than 44 px tall or (a box) wide. */
async function assertTapTargets(page, where) {
  const small = await page.evaluate(() => {
    const found = [];
    for (const control of document.querySelectorAll(".bulk button, .bulk select, .bulk input:not([type=checkbox]), .bulk-all label, .thread-pick")) {
      const box = control.getBoundingClientRect();
      if (box.height === 0) continue;
      const narrow = control.classList.contains("thread-pick") && box.width < 44;
      if (box.height < 44 || narrow) found.push(`${control.tagName} “${control.textContent.trim().slice(0, 30)}” ${Math.round(box.width)}×${Math.round(box.height)}`);
    }
    return found;
  });
  assert.deepEqual(small, [], `${where}: tap targets under 44 px`);
}

for (const layout of LAYOUTS) {
  const run = {};
  const { name, ...options } = layout;
  const data = () => made[name];
  const phone = name === "phone";

  test(`${name}: a conversation carrying a file is marked in the list, one without is not`, async () => {
    ({ page: run.page } = await watch.open(browser, { who: `${name} writer`, ...options, locale: "en-GB" }));
    const page = run.page;
    await signInAt(page, node.url, WRITER);
    await page.evaluate((href) => (location.hash = href), `#/mail/${data().mailbox.id}`);
    await rowOf(page, data().subjects.contract).waitFor();
    assert.equal(await rowOf(page, data().subjects.contract).getByText("Has attachments").count(), 1, "the contract is marked");
    assert.ok(await rowOf(page, data().subjects.contract).locator(".thread-attachments").isVisible(), "and the mark is seen");
    for (const subject of [data().subjects.crowded, ...data().subjects.questions]) {
      assert.equal(await rowOf(page, subject).getByText("Has attachments").count(), 0, `${subject} carries no file`);
    }
    const listed = await threadsOf(data().mailbox);
    assert.equal(listed.get(data().subjects.contract).has_attachments, true);
    assert.equal(listed.get(data().subjects.questions[0]).has_attachments, false);
    assert.equal(await bar(page).isVisible(), false, "no bar until something is selected");
    await assertFits(page, `${name}: the list with its boxes`);
    if (phone) await assertTapTargets(page, `${name}: the list`);
  });

  test(`${name}: three conversations selected and closed are exactly the three closed`, async () => {
    const page = run.page;
    const [first, second, third] = data().subjects.questions;
    for (const subject of [first, second, third]) await boxOf(page, subject).check();
    assert.equal(await selectedCount(page).innerText(), "3 selected");
    await bar(page).waitFor();
    await assertFits(page, `${name}: three selected`);
    if (phone) await assertTapTargets(page, `${name}: the bar`);

    await bar(page).getByRole("button", { name: "Close", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Set to closed: 3 conversations." }).waitFor();
    const closed = await threadsOf(data().mailbox, { status: "closed" });
    assert.equal((await threadsOf(data().mailbox, { status: "open" })).size, 4, "the rest are open");
    assert.deepEqual([...closed.keys()].sort(), [first, second, third].sort(), "exactly those three, and nothing else, closed");
    // The list shows open conversations: the three left it, and the selection is cleared.
    for (const subject of [first, second, third]) await rowOf(page, subject).waitFor({ state: "detached" });
    assert.equal(await selectedCount(page).innerText(), "");
    assert.equal(await bar(page).isVisible(), false);
    assert.equal(await page.getByRole("checkbox", { checked: true }).count(), 0);
    await assertFits(page, `${name}: after closing three`);
  });

  test(`${name}: two selected with the keyboard are assigned together, and a selection outlives someone else's change`, async () => {
    const page = run.page;
    const shown = (await conversations(page).locator(".thread-subject").allInnerTexts()).map((text) => text.replace(/^Unread:\s*/, "").trim());
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press("j");
    await page.keyboard.press("x");
    await page.keyboard.press("j");
    await page.keyboard.press("x");
    assert.equal(await selectedCount(page).innerText(), "2 selected");
    assert.equal(await boxOf(page, shown[0]).isChecked(), true);
    assert.equal(await boxOf(page, shown[1]).isChecked(), true);
    // x again unselects the row moved to.
    await page.keyboard.press("x");
    assert.equal(await boxOf(page, shown[1]).isChecked(), false);
    await page.keyboard.press("x");

    // Someone else labels another conversation: the list is drawn again, the selection kept.
    const other = shown.find((subject) => subject !== shown[0] && subject !== shown[1] && subject !== data().subjects.crowded);
    const otherThread = (await threadsOf(data().mailbox)).get(other);
    await ok(call("PATCH", `/api/mailboxes/${data().mailbox.id}/threads/${otherThread.id}`, { token, body: { add_labels: ["seen by admin"] } }));
    await rowOf(page, other).getByRole("button", { name: "seen by admin" }).waitFor();
    assert.equal(await boxOf(page, shown[0]).isChecked(), true, "still selected after the list was drawn again");
    assert.equal(await boxOf(page, shown[1]).isChecked(), true);
    assert.equal(await selectedCount(page).innerText(), "2 selected");

    await bar(page).getByLabel("Assign to").selectOption({ label: `Me (${WRITER.name})` });
    await bar(page).getByRole("button", { name: "Assign", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Assigned to you: 2 conversations." }).waitFor();
    const listed = await threadsOf(data().mailbox);
    for (const subject of listed.keys()) {
      const expected = subject === shown[0] || subject === shown[1] ? made.writer.id : undefined;
      assert.equal(listed.get(subject).assignee, expected, `${subject}: assigned only if it was selected`);
    }
    assert.equal(await page.getByRole("checkbox", { checked: true }).count(), 0, "the selection is cleared");
    await assertFits(page, `${name}: after assigning two`);
  });

  test(`${name}: labelling every one shown reports the one refused by name and leaves it selected`, async () => {
    const page = run.page;
    const crowded = (await threadsOf(data().mailbox)).get(data().subjects.crowded);
    watch.expectRefusal(400, `/api/mailboxes/${data().mailbox.id}/threads/${crowded.id}`);
    await page.getByLabel("Select all shown").check();
    const shown = await conversations(page).locator(":scope > li").count();
    assert.equal(shown, 4, "the contract, the crowded one and two questions are open");
    assert.equal(await selectedCount(page).innerText(), `${shown} selected`);
    await bar(page).getByLabel("Label").fill("Priority");
    await bar(page).getByRole("button", { name: "Add label" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: `${shown - 1} of ${shown} changed; 1 was refused:` });
    await refusal.waitFor();
    assert.match(await refusal.innerText(), new RegExp(`${data().subjects.crowded.replace(/[()]/g, "\\$&")}: The labels in “Label” were not added\\.`));
    assert.match(await refusal.innerText(), /at most 20 labels/);
    assert.equal(await boxOf(page, data().subjects.crowded).isChecked(), true, "the refused one stays selected");
    assert.equal(await selectedCount(page).innerText(), "1 selected");
    assert.equal(await page.getByLabel("Select all shown").isChecked(), false);
    await assertFits(page, `${name}: a change partly refused`);
    if (phone) await assertTapTargets(page, `${name}: the bar with a refusal`);

    // The open ones were shown and selected; the closed were not.
    const listed = await threadsOf(data().mailbox, { status: "open" });
    assert.equal(listed.size, shown);
    for (const [subject, thread] of listed) {
      assert.equal(thread.labels.includes("priority"), subject !== data().subjects.crowded, `${subject}: labelled unless refused`);
    }
    // Taking a label off the one still selected works, and clears the selection.
    await bar(page).getByLabel("Label").fill("tag 1");
    await bar(page).getByRole("button", { name: "Remove label" }).click();
    await page.getByRole("status").filter({ hasText: "Took the label off “tag 1”: 1 conversation." }).waitFor();
    assert.equal((await threadsOf(data().mailbox)).get(data().subjects.crowded).labels.includes("tag 1"), false);
    assert.equal(await page.getByRole("checkbox", { checked: true }).count(), 0);
    await page.context().close();
  });
}

test("the shortcut list offers x", async () => {
  const { page } = await watch.open(browser, { who: "shortcuts", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signInAt(page, node.url, WRITER);
  await page.keyboard.press("?");
  const shortcuts = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await shortcuts.waitFor();
  assert.ok(await shortcuts.getByText("Select the conversation moved to, or unselect it").isVisible());
  await page.keyboard.press("Escape");
  await page.context().close();
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});

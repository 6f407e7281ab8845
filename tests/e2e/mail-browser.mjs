// What the mail-browser files share: the desk they work (support@, a writer and
// an approver, the mail that arrives), made through the page by the reading
// file and through the API (`furnishMailDesk`) by the files that begin where
// its set-up ends, the ways they find their way around Mail, and the check
// that a message's frame is as tall as its message.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./harness.mjs";
import { signIn as signInAt, sectionLink, openSection } from "./browser-helpers.mjs";

/** The node's options: Ana is the one destination the send_email binding accepts, as Email Routing accepts only verified ones. */
export const MAIL_NODE = { sendEmail: { allowed_destination_addresses: ["ana@customer.example"] } };
export const SUPPORT = { address: "support@mailroom.test", name: "Support" };
export const WRITER = { name: "Wren Writer", email: "wren@example.com", password: "wren's first long password" };
export const APPROVER = { name: "Abe Approver", email: "abe@example.com", password: "abe's first long password" };
export const QUESTION = "Where is my invoice?";
export const fixture = (name) => readFileSync(join(ROOT, "tests", "fixtures", "mail", `${name}.eml`));
// How many messages a list or a search shows at a time, read from the page's own
// script (its pager module) so no file restates it.
export const PER_PAGE = Number(/const PER_PAGE = (\d+);/.exec(readFileSync(join(ROOT, "src", "interface", "scripts", "pager.js"), "utf8"))?.[1]);
export const NEWS = { address: "news@mailroom.test", name: "Newsletters" };
// Mail is written by strangers: markup in its name, subject and text must reach the page as text.
export const HOSTILE_SUBJECT = `<img src=x onerror="document.title='owned'"> Urgent`;
export const HOSTILE = Buffer.from([
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

/**
 * Through the API, what the reading file's first tests make through the page:
 * support@, the writer and the approver holding there what they are granted
 * there (in that order), and the three messages that arrive. Answers the
 * mailbox's id and `ids` `{ writer, approver }`.
 */
export async function furnishMailDesk(node, desk) {
  const mailbox = await desk.mailbox(SUPPORT.address, SUPPORT.name);
  const writer = await desk.person(WRITER);
  const approver = await desk.person(APPROVER);
  await desk.grant(writer.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"], mailbox.id);
  await desk.grant(approver.id, ["mailbox.metadata.read", "mailbox.content.read", "approval.decide"], mailbox.id);
  assert.equal(await node.deliver("ana@customer.example", SUPPORT.address, fixture("plain")), null);
  assert.equal(await node.deliver("sender@outside.example", SUPPORT.address, fixture("multipart-attachment")), null);
  assert.equal(await node.deliver("mallory@evil.example", SUPPORT.address, HOSTILE), null);
  return { mailboxId: mailbox.id, ids: { writer: writer.id, approver: approver.id } };
}

/** The rows of a table's body (its header row has no cells), as their cells' text. */
export async function bodyRows(within) {
  const rows = within.getByRole("row").filter({ has: within.page().getByRole("cell") });
  return Promise.all((await rows.all()).map((row) => row.getByRole("cell").allTextContents()));
}

export { sectionLink as section, openSection };

/** From Mail (a mailbox's conversations), the mailboxes and what the person holds on each. */
export async function yourMailboxes(page) {
  await openSection(page, "Mail");
  await page.getByRole("link", { name: "Your mailboxes and what you hold" }).click();
  return page.getByRole("region", { name: "Mailboxes I can read" });
}

/** Every message a mailbox received, one by one (Mail itself shows conversations). */
export async function everyMessage(page, address) {
  await (await yourMailboxes(page)).getByRole("link", { name: address, exact: true }).click();
  await page.getByRole("link", { name: "Every message" }).click();
  await page.getByRole("region", { name: "Messages, newest first" }).waitFor();
}
export const statusSaying = (page, text) => page.getByRole("status").filter({ hasText: text });

/**
 * What each mail browser file does with its Chromium and its node, given how to
 * find them (`state()`, once its `before` has started them): `openPage(who)`, a
 * page in a browser context of its own (its own cookies) that `watch` holds to
 * no errors and no CSP violations; `signIn(page, person)` at the node; and
 * `close()`, for its `after`.
 */
export function pagesOn(watch, state) {
  return {
    openPage: async (who) => (await watch.open(state().browser, { who, acceptDownloads: true })).page,
    signIn: (page, person) => signInAt(page, state().node.url, person),
    async close() {
      await state().browser?.close();
      await state().node?.stop();
    },
  };
}

/**
 * Waits until `frame` (a message's) has been sized by what its script said,
 * then checks it is as tall inside as its message, and answers its height.
 */
export async function sizedToItsMessage(frame) {
  // Chromium renders a frame of another origin only once it is in view (an
  // opaque origin is another), as a reader scrolling to it brings it.
  await frame.scrollIntoViewIfNeeded();
  await frame.evaluate((element) => new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const sized = () => {
      if (element.dataset.sized === "content") resolve();
      else if (Date.now() > deadline) reject(new Error("the frame never said how tall its message is"));
      else setTimeout(sized, 20);
    };
    sized();
  }));
  const content = await frame.contentFrame().locator("html").evaluate((root) => Math.ceil(root.getBoundingClientRect().height));
  const inside = await frame.evaluate((element) => element.clientHeight);
  assert.ok(Math.abs(inside - content) <= 1, `the frame is ${inside}px inside for ${content}px of message`);
  return frame.evaluate((element) => element.getBoundingClientRect().height);
}

// Saved replies and signatures, in a real browser: headless Chromium against
// the built Worker on workerd, on the desk mail-browser-reading sets up (made
// here through the API), on a desktop (1280×800) and a phone (390×844).
//
// The writer sets their own signature on the account page, and on the
// mailbox's Saved replies page a saved reply with placeholders (one the node
// does not fill is refused, named) and the mailbox's signature. Replying in a
// conversation begins a draft holding both signatures once, the writer's
// first; inserting the saved reply fills the customer's name and the
// mailbox's, and the draft is saved and submitted with that text, as the API
// shows. Coming back to the reply resumes the draft without a second
// signature. Every console error and CSP violation fails the file, and axe
// checks each page measured.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits } from "./browser-helpers.mjs";
import { startDesk } from "./fixtures.mjs";
import { MAIL_NODE, QUESTION, SUPPORT, WRITER, furnishMailDesk, pagesOn, statusSaying } from "./mail-browser.mjs";

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const MY_SIGNATURE = "Wren Writer\n{{me.email}}";
const MAILBOX_SIGNATURE = "The {{mailbox.name}} team";
/** Both signatures filled, the writer's above the mailbox's, after two lines to write in. */
const SIGNED = `\n\nWren Writer\n${WRITER.email}\n\nThe ${SUPPORT.name} team`;
const SAVED = { name: "Invoice sent", body: "Hello {{customer.first_name}},\n\nYour invoice from {{mailbox.name}} is attached." };
const FILLED = "Hello Ana,\n\nYour invoice from Support is attached.";

let node, call, desk, browser, mailboxId, writerToken;
const watch = new PageWatch();

before(async () => {
  ({ node, call, desk } = await startDesk(MAIL_NODE));
  ({ mailboxId } = await furnishMailDesk(node, desk));
  writerToken = await desk.signIn(WRITER);
  browser = await launchChromium();
});

const { signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

const api = async (method, path, body) => {
  const answer = await call(method, path, { token: writerToken, body });
  assert.ok(answer.status < 300, answer.text);
  return answer.body;
};

/** The conversation a message with `subject` began, by its id. */
async function threadOf(subject) {
  const { threads } = await api("GET", `/api/mailboxes/${mailboxId}/threads`);
  const thread = threads.find((listed) => listed.subject === subject);
  assert.ok(thread, `a conversation about ${subject}`);
  return thread.id;
}

/** Opens the conversation about `subject` and replies to its message: the composer's text field. */
async function reply(page, subject) {
  await page.goto(`${node.url}/#/mail/${mailboxId}/${await threadOf(subject)}`);
  await page.getByRole("button", { name: /^Reply to/ }).first().click();
  const composer = page.getByRole("region", { name: "Your reply" });
  const text = composer.getByLabel("Text", { exact: true });
  await text.waitFor();
  return { composer, text };
}

const writerDraft = async () => (await api("GET", `/api/mailboxes/${mailboxId}/sends`)).sends.filter((send) => send.state !== "dispatched");

test("on a desktop, the writer keeps a signature and a saved reply, and a reply holds the signatures once and the reply filled in", async () => {
  const { page } = await watch.open(browser, { who: "writer, desktop", viewport: DESKTOP });
  await signIn(page, WRITER);

  await page.goto(`${node.url}/#/account`);
  const mine = page.getByRole("region", { name: "My signature" });
  await mine.getByLabel("Signature").fill(MY_SIGNATURE);
  await mine.getByRole("button", { name: "Save signature" }).click();
  await statusSaying(page, "Your signature is saved").waitFor();
  assert.equal((await api("GET", "/api/me/signature")).text, MY_SIGNATURE);
  await assertFits(page, "the account page with a signature, on a desktop");

  await page.goto(`${node.url}/#/mail/mailboxes`);
  await page.getByRole("link", { name: `Saved replies of ${SUPPORT.address}` }).click();
  const replies = page.getByRole("region", { name: `Saved replies of ${SUPPORT.address}` });
  await replies.getByText("None yet.").waitFor();
  // A placeholder the node does not fill is refused when saved, naming it.
  watch.expectRefusal(400, `/api/mailboxes/${mailboxId}/saved-replies`);
  await replies.getByLabel("Name").fill(SAVED.name);
  await replies.getByLabel("Text").fill("Hello {{customer.phone}}");
  await replies.getByRole("button", { name: "Save reply" }).click();
  // Named by the form's own label, the placeholder quoted.
  await replies.getByText(/^“Text” holds the placeholder \{\{customer\.phone\}\}, which the node does not fill/).waitFor();
  assert.deepEqual((await api("GET", `/api/mailboxes/${mailboxId}/saved-replies`)).saved_replies, []);

  await replies.getByLabel("Text").fill(SAVED.body);
  await replies.getByRole("button", { name: "Save reply" }).click();
  await statusSaying(page, `${SAVED.name} saved`).waitFor();
  await replies.getByRole("cell", { name: SAVED.name, exact: true }).waitFor();
  const [saved] = (await api("GET", `/api/mailboxes/${mailboxId}/saved-replies`)).saved_replies;
  assert.deepEqual([saved.name, saved.body], [SAVED.name, SAVED.body], "kept as written, placeholders and all");

  const theirs = page.getByRole("region", { name: `Signature of ${SUPPORT.address}` });
  await theirs.getByLabel("Signature").fill(MAILBOX_SIGNATURE);
  await theirs.getByRole("button", { name: "Save signature" }).click();
  await statusSaying(page, "The mailbox's signature is saved").waitFor();
  await assertFits(page, "a mailbox's saved replies and signature, on a desktop");

  // Replying begins a draft that holds both signatures, once, below where the reply is written.
  const { composer, text } = await reply(page, QUESTION);
  assert.equal(await text.inputValue(), SIGNED);
  let [draft] = await writerDraft();
  assert.equal(draft.text, SIGNED, "the signatures are saved with the draft as it is begun");

  await composer.getByLabel("Insert saved reply").selectOption({ label: SAVED.name });
  await composer.getByRole("button", { name: "Insert", exact: true }).click();
  await statusSaying(page, `${SAVED.name} inserted`).waitFor();
  assert.equal(await text.inputValue(), `${FILLED}${SIGNED}`, "filled for Ana and the mailbox, above the signatures");
  [draft] = await writerDraft();
  assert.equal(draft.text, `${FILLED}${SIGNED}`, "saved as it was inserted");
  await assertFits(page, "a reply with a saved reply inserted, on a desktop");

  // Coming back to the conversation resumes the draft: no second signature.
  await page.reload();
  const resumed = await reply(page, QUESTION);
  assert.equal(await resumed.text.inputValue(), `${FILLED}${SIGNED}`);
  assert.equal((await writerDraft()).length, 1, "one draft, resumed");

  await resumed.composer.getByRole("button", { name: "Submit for approval" }).click();
  await statusSaying(page, "Submitted for approval").waitFor();
  [draft] = await writerDraft();
  assert.deepEqual([draft.state, draft.text], ["submitted", `${FILLED}${SIGNED}`]);
});

test("on a phone, the signature form, the saved replies page and a reply with the saved reply fit, and a reply begun there is signed once", async () => {
  const { page } = await watch.open(browser, { who: "writer, phone", ...PHONE });
  await signIn(page, WRITER);
  await page.goto(`${node.url}/#/account`);
  assert.equal(await page.getByRole("region", { name: "My signature" }).getByLabel("Signature").inputValue(), MY_SIGNATURE);
  await assertFits(page, "the account page with a signature, on a phone");

  await page.goto(`${node.url}/#/mail/${mailboxId}/replies`);
  await page.getByRole("cell", { name: SAVED.name, exact: true }).waitFor();
  await assertFits(page, "a mailbox's saved replies and signature, on a phone");

  const { composer, text } = await reply(page, "Signed contract attached");
  assert.equal(await text.inputValue(), SIGNED);
  await composer.getByLabel("Insert saved reply").selectOption({ label: SAVED.name });
  await composer.getByRole("button", { name: "Insert", exact: true }).click();
  await statusSaying(page, `${SAVED.name} inserted`).waitFor();
  assert.equal(await text.inputValue(), `Hello Ben,\n\nYour invoice from Support is attached.${SIGNED}`, "filled for Ben Okafor");
  await assertFits(page, "a reply with a saved reply inserted, on a phone");
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

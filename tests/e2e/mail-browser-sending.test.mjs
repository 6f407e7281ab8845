// Mail in a real browser, written and sent: headless Chromium against the
// built Worker on workerd, on the desk mail-browser-reading sets up through the
// page (made here through the API). The writer drafts, replies and submits; an
// approver approves the reply, which leaves through the send_email binding,
// threaded, and refuses another send, and one switched after they opened it; a
// send the mail service refused for one recipient is sent again; more than a
// page of outbound mail and of approvals is shown on asking. Two people, two
// browser contexts (two cookie jars); every console error and CSP violation in
// either fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { startDesk, sentMailAfter } from "./fixtures.mjs";
import { assertAccessible } from "./browser-helpers.mjs";
import {
  MAIL_NODE, SUPPORT, WRITER, APPROVER, QUESTION, PER_PAGE, NEWS, furnishMailDesk, bodyRows, openSection, statusSaying, pagesOn,
} from "./mail-browser.mjs";

const REPLY_SUBJECT = `Re: ${QUESTION}`;
const FIRST_DRAFT = "Hello Ana,\n\nLet me check.\n";
const REPLY_TEXT = "Hello Ana,\n\nWe have sent the invoice for order 4471 again today.\n\nSupport\n";
const REFUSED_SUBJECT = "Free upgrades for every customer";
const REFUSAL_REASON = "We do not promise upgrades by mail; offer a call instead.";

let node, call, token, desk, browser, mailboxId;
const ids = {};
/** Everything any page reported that it should not have, by who saw it. */
const watch = new PageWatch();

let writer, approver;

before(async () => {
  ({ node, call, token, desk } = await startDesk(MAIL_NODE));
  let made;
  ({ mailboxId, ids: made } = await furnishMailDesk(node, desk));
  Object.assign(ids, made);
  // The mailbox mail-browser-reading fills with bulletins. Here it only sends,
  // and nobody holds anything on it until the test that writes from it: Mail
  // lands where the writer reads, and that is support@ alone.
  await desk.mailbox(NEWS.address, NEWS.name);
  browser = await launchChromium();
  writer = await openPage("writer");
  await signIn(writer, WRITER);
});

const { openPage, signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

/** An API token for a person, to check what the page did from outside it. */
const tokenFor = (person) => desk.signIn(person);

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

test("a draft from New message can be deleted", async () => {
  await openSection(writer, "Mail");
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
  // Typed and left alone, the draft saves itself a moment later, and says when.
  const typed = `${FIRST_DRAFT}\n\nTyped, and not saved by hand.`;
  await reply.getByLabel("Text").fill(typed);
  await reply.getByText(/^Draft saved /).waitFor();
  const [autosaved] = (await call("GET", `/api/mailboxes/${mailboxId}/sends`, { token: ids.writerToken })).body.sends;
  assert.equal(autosaved.text, typed, "saved as typed");

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

  await openSection(writer, "Approvals");
  await writer.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
  await writer.getByText("Nothing awaits your decision.").waitFor();
  assert.equal(await writer.getByRole("button", { name: /^Approve/ }).count(), 0);

  await openSection(writer, "Mail");
  await writer.getByRole("link", { name: "Outbound" }).click();
  const row = writer.getByRole("row").filter({ hasText: REPLY_SUBJECT });
  await row.waitFor();
  assert.equal((await row.getByRole("cell").allTextContents())[0], "Awaiting approval");
  assert.ok(await row.getByRole("button", { name: `Cancel submission of ${REPLY_SUBJECT}` }).isVisible());
});

test("the approver sees the reply and its full text in Approvals, approves it, and sees it dispatched", async () => {
  approver = await openPage("approver");
  await signIn(approver, APPROVER);
  await openSection(approver, "Approvals");
  const card = approver.getByRole("article", { name: REPLY_SUBJECT });
  await card.waitFor();
  const shown = await card.textContent();
  // The approver is no administrator: the writer is named from the send itself, not a directory.
  for (const part of [SUPPORT.address, "ana@customer.example", `${WRITER.name} ${ids.writer}`, "<invoice-question-1@customer.example>"]) {
    assert.ok(shown.includes(part), `${part} in ${shown}`);
  }
  assert.equal(await card.locator("pre").textContent(), REPLY_TEXT, "the full text, as written");
  await assertAccessible(approver, "Approvals");

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
  const sent = await sentMailAfter(node);
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

  // No reload: the approver's open Approvals is told of the submission and shows it.
  const card = approver.getByRole("article", { name: REFUSED_SUBJECT });
  await card.waitFor({ timeout: 5000 });
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
  await assertAccessible(writer, "a refused send");
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
  await openSection(approver, "Mail");
  await openSection(approver, "Approvals");
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

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

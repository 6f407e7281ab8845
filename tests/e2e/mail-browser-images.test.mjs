// Remote images in HTML mail, in a real browser: headless Chromium against the
// built Worker on workerd, on the desk mail-browser-reading sets up (made here
// through the API), on a desktop (1280×800) and a phone (390×844). A
// message's remote images are hidden at first, with a bar that says so, and
// nothing tries to load them; Show images shows them over https for that
// message and view alone, never over http; Always show images from a sender
// whose domain vouched for the message is kept on the node, so it holds after
// a reload, in the sender's next message and in the person's other browser,
// never in a message that only claims that sender, and is undone from the bar
// or the account page.
//
// The images' addresses are on a name that resolves nowhere: every request for
// them is answered by the browser context's own route (a 1-pixel PNG) and
// recorded, so nothing leaves 127.0.0.1 and the test sees exactly what loaded.
// Every console error and CSP violation fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits } from "./browser-helpers.mjs";
import { startDesk } from "./fixtures.mjs";
import { MAIL_NODE, SUPPORT, WRITER, furnishMailDesk, pagesOn, sizedToItsMessage } from "./mail-browser.mjs";

const SENDER = "news@letters.example";
const IMAGES = "https://images.letters.example";
/** Email Routing's stamp for a message letters.example vouched for, and for one it did not. */
const PASS = `dkim=pass header.d=letters.example header.s=s1; dmarc=pass header.from=letters.example; spf=pass smtp.mailfrom=${SENDER}`;
const FORGED = "dkim=none; dmarc=fail header.from=letters.example; spf=fail smtp.mailfrom=mallory@forger.example";
const PIXEL = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, desk, browser, mailboxId, writerToken;
/** Everything any page reported that it should not have, by who saw it. */
const watch = new PageWatch();
/** Every image address a page asked for, in order. */
const requested = [];
/** The receipts' ids, by subject. */
const receipts = {};

/** An HTML message as Email Routing hands it to the Worker, with its stamp on top. */
function htmlMessage({ id, subject, from = `The Ledger <${SENDER}>`, stamp, html }) {
  return Buffer.from([
    `Authentication-Results: mx.cloudflare.net; ${stamp}`,
    `From: ${from}`,
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Tue, 1 Dec 2026 07:00:00 +0000",
    `Message-ID: <${id}>`,
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "",
    html,
    "",
  ].join("\r\n"));
}

const LETTERS = {
  december: "The Ledger: December",
  january: "The Ledger: January",
  forged: "The Ledger: urgent account update",
  report: "The Ledger: the year in review",
};

before(async () => {
  ({ node, call, desk } = await startDesk(MAIL_NODE));
  ({ mailboxId } = await furnishMailDesk(node, desk));
  writerToken = await desk.signIn(WRITER);
  const deliveries = [
    // Three images on the web (two over https, one over http) and one carried inside.
    htmlMessage({ id: "december@letters.example", subject: LETTERS.december, stamp: PASS, html: [
      `<table width="600" background="${IMAGES}/paper.png"><tr><td>`,
      `<h1>December</h1><p><img src="${IMAGES}/header.png" srcset="${IMAGES}/header-2x.png 2x" alt="The Ledger's masthead"></p>`,
      "<p>Revenue grew by <b>twelve</b> percent.</p>",
      `<img src="http://images.letters.example/open.gif" width="1" height="1" alt="">`,
      '<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" alt="A dot">',
      "</td></tr></table>",
    ].join("\n") }),
    htmlMessage({ id: "january@letters.example", subject: LETTERS.january, stamp: PASS, html: `<h1>January</h1><p><img src="${IMAGES}/january.png" alt="January's chart"></p>` }),
    // Claims the same sender; its domain says it did not send it.
    htmlMessage({ id: "urgent@forger.example", subject: LETTERS.forged, stamp: FORGED, html: `<h1>Act now</h1><p><img src="${IMAGES}/forged.png" alt="A logo"></p>` }),
    // Long: its frame starts taller than a short one's.
    htmlMessage({ id: "review@letters.example", subject: LETTERS.report, stamp: PASS, html: `<h1>The year in review</h1>${Array.from({ length: 30 }, (_, month) => `<p>Part ${month + 1}: revenue held steady through the quarter, and costs fell.</p>`).join("")}` }),
  ];
  for (const raw of deliveries) assert.equal(await node.deliver(SENDER, SUPPORT.address, raw), null);
  const listed = await call("GET", `/api/mailboxes/${mailboxId}/messages?limit=100`, { token: writerToken });
  assert.equal(listed.status, 200, listed.text);
  for (const message of listed.body.messages) receipts[message.subject] = message.id;
  // A sandboxed frame in a process of its own is one the context's routes do not reach.
  browser = await launchChromium({ disableFeatures: ["IsolateSandboxedIframes"] });
});

const { signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

/** A page of the writer's at `layout`, its image requests answered by the route and recorded. */
async function writerAt(layout) {
  const { context, page } = await watch.open(browser, { who: `writer, ${layout.name}`, viewport: layout.viewport, isMobile: layout.isMobile, hasTouch: layout.hasTouch });
  await context.route(/^https?:\/\/images\.letters\.example\//, (route) => {
    requested.push(route.request().url());
    return route.fulfill({ status: 200, contentType: "image/png", body: PIXEL });
  });
  await signIn(page, WRITER);
  return page;
}

/** Opens the message with `subject` on its own page: its text region, its frame and the frame's document. */
async function open(page, subject) {
  await page.goto(`${node.url}/#/mail/${mailboxId}/${receipts[subject]}`);
  await page.getByRole("heading", { name: subject, level: 2 }).waitFor();
  const text = page.getByRole("region", { name: "Text" });
  const frame = text.locator("iframe");
  await frame.waitFor();
  return { text, frame, bar: text.getByRole("region", { name: "Remote images" }) };
}

/** What the frame was given: its own policy's img-src, and the addresses of its images (src and background). */
async function drawn(frame) {
  const srcdoc = await frame.getAttribute("srcdoc");
  const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(srcdoc)?.[1] ?? "";
  const addresses = [...srcdoc.matchAll(/\s(?:src|background|srcset)="([^"]*)"/g)].map((match) => match[1]).filter((address) => !address.startsWith("data:"));
  return { imageSources: policy.split(";").map((part) => part.trim()).find((part) => part.startsWith("img-src")), addresses };
}

/** Whether the image named `alt` in the frame has loaded. */
const loaded = (frame, alt) => frame.contentFrame().getByRole("img", { name: alt }).evaluate((image) => image.complete && image.naturalWidth > 0);

/** Waits until `check` answers true, for at most five seconds. */
async function until(check, what) {
  for (const started = Date.now(); !(await check()); ) {
    assert.ok(Date.now() - started < 5000, `${what}: not within five seconds`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The senders the writer always sees images from, as the node keeps them. */
async function keptSenders() {
  const listed = await call("GET", "/api/me/image-senders", { token: writerToken });
  assert.equal(listed.status, 200, listed.text);
  return listed.body.senders.map((sender) => sender.address);
}

/** What went wrong on any page since `before` (a count of each list). */
const reportsSince = (before) => [
  ...watch.consoleErrors.slice(before.console).map(({ who, text }) => `${who}: ${text}`),
  ...watch.cspViolations.slice(before.csp),
  ...watch.pageErrors.slice(before.errors),
];
const counts = () => ({ console: watch.consoleErrors.length, csp: watch.cspViolations.length, errors: watch.pageErrors.length });

test("on a desktop, remote images are hidden with a bar, load nothing and report nothing; Show images shows them over https for this message alone", async () => {
  const page = await writerAt(LAYOUTS[0]);
  const before = counts();
  const { text, frame, bar } = await open(page, LETTERS.december);
  await bar.getByText("Remote images are hidden to protect your privacy (2 images)").waitFor();
  await bar.getByText("1 image sent without encryption (http) stays hidden").waitFor();
  assert.deepEqual(await drawn(frame), { imageSources: "img-src data:", addresses: [] }, "nothing in the frame tries to load");
  const shown = frame.contentFrame();
  await shown.getByRole("heading", { name: "December" }).waitFor();
  assert.ok(await loaded(frame, "A dot"), "an image carried inside the message is shown");
  await page.waitForTimeout(500);
  assert.deepEqual(requested, [], "no image was asked for");
  assert.deepEqual(reportsSince(before), [], "hidden images make no console report");

  await bar.getByRole("button", { name: "Show images", exact: true }).click();
  await text.getByText("Remote images are shown for this message.").waitFor();
  const showing = await drawn(frame);
  assert.equal(showing.imageSources, "img-src data: https:", "the frame's own policy allows https, and only https");
  assert.deepEqual(showing.addresses.sort(), [`${IMAGES}/header.png`, `${IMAGES}/paper.png`], "https images are kept; http and srcset are not");
  await until(() => loaded(frame, "The Ledger's masthead"), "the masthead is shown");
  assert.ok(requested.includes(`${IMAGES}/header.png`), `asked for: ${requested}`);
  assert.deepEqual(requested.filter((address) => !address.startsWith(`${IMAGES}/`)), [], "nothing over http");
  await text.getByText("1 image sent without encryption (http) stays hidden").waitFor();

  // This view: the plain text and back keeps them shown; another visit hides them again.
  const views = text.getByRole("group", { name: "Show the message" });
  await views.getByRole("button", { name: "Plain text" }).click();
  await views.getByRole("button", { name: "Formatted" }).click();
  assert.equal((await drawn(text.locator("iframe"))).imageSources, "img-src data: https:");
  await page.reload();
  const again = await open(page, LETTERS.december);
  await again.bar.getByRole("button", { name: "Show images", exact: true }).waitFor();
  assert.equal((await drawn(again.frame)).imageSources, "img-src data:", "shown for that view only");
  assert.deepEqual(await keptSenders(), [], "showing once keeps nothing");
  assert.deepEqual(reportsSince(before), [], "showing images makes no console report");
  await page.context().close();
});

test("Always show images from a sender holds after a reload, in their next message and in the person's other browser, never in a forged one, and is undone from the bar and the account page", async () => {
  requested.length = 0;
  const desktop = await writerAt(LAYOUTS[0]);
  const before = counts();
  const december = await open(desktop, LETTERS.december);
  await december.bar.getByRole("button", { name: `Always show images from this sender (${SENDER})` }).click();
  await december.text.getByText(`Images from ${SENDER} will always be shown.`).waitFor();
  await december.bar.getByText(`Images from ${SENDER} are always shown, as you chose.`).waitFor();
  assert.equal((await drawn(december.frame)).imageSources, "img-src data: https:");
  assert.deepEqual(await keptSenders(), [SENDER], "kept on the node");

  await desktop.reload();
  const reloaded = await open(desktop, LETTERS.december);
  await reloaded.bar.getByText(`Images from ${SENDER} are always shown, as you chose.`).waitFor();
  assert.equal((await drawn(reloaded.frame)).imageSources, "img-src data: https:", "shown at once after a reload");
  const january = await open(desktop, LETTERS.january);
  await january.bar.getByText(`Images from ${SENDER} are always shown, as you chose.`).waitFor();
  assert.deepEqual((await drawn(january.frame)).addresses, [`${IMAGES}/january.png`], "and in the sender's next message");

  // A message that only claims the sender gets nothing of the choice, and is not offered it.
  const forged = await open(desktop, LETTERS.forged);
  await forged.bar.getByText("Remote images are hidden to protect your privacy (1 image)").waitFor();
  await forged.bar.getByText("offered only when their domain vouched for the message").waitFor();
  assert.equal(await forged.bar.getByRole("button", { name: /Always show images/ }).count(), 0);
  assert.deepEqual(await drawn(forged.frame), { imageSources: "img-src data:", addresses: [] });
  assert.ok(!requested.includes(`${IMAGES}/forged.png`), "the forged message's image was never asked for");

  // The same person on a phone: the choice followed them.
  const phone = await writerAt(LAYOUTS[1]);
  const onPhone = await open(phone, LETTERS.january);
  await onPhone.bar.getByText(`Images from ${SENDER} are always shown, as you chose.`).waitFor();
  assert.equal((await drawn(onPhone.frame)).imageSources, "img-src data: https:");
  await assertFits(phone, "a message with its images bar, on a phone");

  // Undone from the account page, on the phone.
  await phone.goto(`${node.url}/#/account`);
  const kept = phone.getByRole("table", { name: "Senders whose images you always see" });
  await kept.getByRole("row").filter({ hasText: SENDER }).waitFor();
  await assertFits(phone, "the account page, on a phone");
  await kept.getByRole("button", { name: `Remove ${SENDER}` }).click();
  await kept.getByRole("row").filter({ hasText: SENDER }).waitFor({ state: "detached" });
  assert.deepEqual(await keptSenders(), []);
  const hiddenAgain = await open(phone, LETTERS.january);
  await hiddenAgain.bar.getByRole("button", { name: "Show images", exact: true }).waitFor();
  assert.equal((await drawn(hiddenAgain.frame)).imageSources, "img-src data:");

  // And from the bar, on the desktop: Always, then Stop.
  const last = await open(desktop, LETTERS.january);
  await last.bar.getByRole("button", { name: `Always show images from this sender (${SENDER})` }).click();
  await last.bar.getByRole("button", { name: `Stop always showing them (images from ${SENDER})` }).click();
  await last.text.getByText(`Images from ${SENDER} are hidden again.`).waitFor();
  assert.equal((await drawn(last.frame)).imageSources, "img-src data:");
  assert.deepEqual(await keptSenders(), []);
  assert.deepEqual(reportsSince(before), [], "nothing in any console");
});

/** The conversation `subject` is in, opened in the writer's page; its first received message's card. */
async function openConversation(page, subject) {
  const listed = await call("GET", `/api/mailboxes/${mailboxId}/threads?limit=100`, { token: writerToken });
  assert.equal(listed.status, 200, listed.text);
  const thread = listed.body.threads.find((candidate) => candidate.subject === subject);
  assert.ok(thread, subject);
  await page.goto(`${node.url}/#/mail/${mailboxId}/${thread.id}`);
  return page.locator("article.entry.received").first();
}

for (const layout of LAYOUTS) {
  test(`${layout.name}: a conversation shows a message's HTML formatted, after its text, in a frame as tall as the message, its images on asking`, async () => {
    const page = await writerAt(layout);
    const before = counts();
    const asked = requested.length;
    const short = await openConversation(page, LETTERS.january);
    const frame = short.locator("iframe.message-frame");
    await frame.waitFor();
    await frame.contentFrame().getByRole("heading", { name: "January" }).waitFor();
    await short.getByRole("region", { name: "Remote images" }).getByRole("button", { name: "Show images", exact: true }).waitFor();
    const shortHeight = await sizedToItsMessage(frame);
    await assertFits(page, `${layout.name}: a conversation with HTML`);

    const long = await openConversation(page, LETTERS.report);
    const longFrame = long.locator("iframe.message-frame");
    await longFrame.waitFor();
    await longFrame.contentFrame().getByText("Part 30:").waitFor();
    const longHeight = await sizedToItsMessage(longFrame);
    assert.ok(longHeight > shortHeight + 100, `a longer message is taller: ${longHeight} against ${shortHeight}`);
    assert.ok(longHeight > layout.viewport.height, `all of it, past the window, with nothing to scroll inside: ${longHeight}`);
    // Plain text is a switch away, in the conversation as on the message's page.
    await long.getByRole("group", { name: "Show the message" }).getByRole("button", { name: "Plain text" }).click();
    await long.getByText("Part 30: revenue held steady").waitFor();
    assert.equal(requested.length, asked, "no image was asked for");
    assert.deepEqual(reportsSince(before), [], "nothing reported");
    await page.context().close();
  });
}

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

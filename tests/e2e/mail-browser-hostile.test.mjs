// Hostile mail in a real browser: headless Chromium against the built Worker
// on workerd, on the desk mail-browser-reading sets up through the page (made
// here through the API). Markup in a stranger's name, subject and text is shown
// as text; a right-to-left override reverses nothing; an HTML message is shown
// formatted in a sandboxed frame that runs and loads nothing, or as its text;
// hostile HTML of every kind makes no console report. Every console error and
// CSP violation fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { startDesk, startReceiver } from "./fixtures.mjs";
import { assertAccessible } from "./browser-helpers.mjs";
import { MAIL_NODE, SUPPORT, WRITER, QUESTION, fixture, HOSTILE_SUBJECT, furnishMailDesk, everyMessage, pagesOn, sizedToItsMessage } from "./mail-browser.mjs";

let node, browser, writer;
/** Everything any page reported that it should not have, by who saw it. */
const watch = new PageWatch();

before(async () => {
  let desk;
  ({ node, desk } = await startDesk(MAIL_NODE));
  await furnishMailDesk(node, desk);
  browser = await launchChromium();
  // The writer reads the question, where mail-browser-reading's reading leaves them.
  writer = await openPage("writer");
  await signIn(writer, WRITER);
  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: QUESTION }).click();
  await writer.getByRole("heading", { name: QUESTION, level: 2 }).waitFor();
});

const { openPage, signIn, close } = pagesOn(watch, () => ({ browser, node }));
after(close);

test("markup in a stranger's name, subject and text is shown as text, never run or rendered", async () => {
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  await writer.getByRole("link", { name: "Every message" }).click();
  const row = writer.getByRole("row").filter({ hasText: HOSTILE_SUBJECT });
  assert.match(await row.getByRole("cell").first().textContent(), /^<b>Mallory<\/b>/);
  await row.getByRole("link", { name: HOSTILE_SUBJECT }).click();
  await writer.getByRole("heading", { name: HOSTILE_SUBJECT, level: 2 }).waitFor();
  const text = writer.getByRole("region", { name: "Text" }).locator("pre");
  await text.waitFor();
  assert.equal((await text.textContent()).trim(), `<script>document.title = "owned"</script><a href="javascript:alert(1)">click</a>`);
  const main = writer.getByRole("main");
  for (const tag of ["img", "b", "script", "a[href^='javascript']"]) assert.equal(await main.locator(tag).count(), 0, tag);
  assert.equal(await writer.title(), `${HOSTILE_SUBJECT} · Mail · Mailroom`, "the subject is in the title as text, and no script renamed it");
  await assertAccessible(writer, "a hostile message");
});

/**
 * The characters of `locator`'s text as laid out: in the order they were
 * written, and in the order they stand on the screen (line by line, left to
 * right), each leaving out what takes no room. A right-to-left override makes
 * the two differ.
 */
async function orderOnScreen(locator) {
  return locator.evaluate((element) => {
    const placed = [];
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      for (let at = 0; at < text.data.length; at += 1) {
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + 1);
        const box = range.getBoundingClientRect();
        if (box.width > 0 && text.data[at].trim()) placed.push({ character: text.data[at], top: Math.round(box.top), left: box.left });
      }
    }
    const written = placed.map((item) => item.character).join("");
    const seen = [...placed].sort((a, b) => a.top - b.top || a.left - b.left).map((item) => item.character).join("");
    return { written, seen };
  });
}

test("a right-to-left override in a stranger's subject, name and file name reverses nothing: each is shown in the order it was written", async () => {
  // Each holds U+202E, which would show `Statement cod.exe for November` as
  // `Statement rebmevoN rof exe.doc`, and `report`, U+202E, `fdp.exe` as `reportexe.pdf`.
  assert.equal(await node.deliver("billing@vendor.example", SUPPORT.address, fixture("direction-controls")), null);
  const subject = "Statement [U+202E]cod.exe for November";
  const inOrder = async (locator, expected) => {
    const { written, seen } = await orderOnScreen(locator);
    assert.equal(seen, written, `shown as written: ${expected}`);
    assert.ok(written.includes(expected.replace(/\s/g, "")), `${expected} in ${written}`);
  };

  // In the mailbox's conversations, each field isolated and the control shown.
  await writer.getByRole("link", { name: SUPPORT.address, exact: true }).click();
  const conversations = writer.getByRole("list", { name: `Conversations in ${SUPPORT.address}` });
  const listed = conversations.getByRole("link", { name: subject });
  await listed.waitFor();
  await inOrder(listed, subject);
  await inOrder(conversations.getByRole("listitem").filter({ hasText: "cod.exe" }).locator(".thread-who"), "Billing [U+202E]ecnaniF");

  // In every message, then on the message's own page and in the window's title.
  await writer.getByRole("link", { name: "Every message" }).click();
  const row = writer.getByRole("row").filter({ hasText: "cod.exe" });
  await inOrder(row.getByRole("link", { name: subject }), subject);
  await inOrder(row.getByRole("cell").first(), "Billing [U+202E]ecnaniF <billing@vendor.example>");
  await row.getByRole("link", { name: subject }).click();
  const heading = writer.getByRole("heading", { name: subject, level: 2 });
  await heading.waitFor();
  await inOrder(heading, subject);
  assert.equal(await writer.title(), `${subject} · Mail · Mailroom`, "no override reaches the window's title");
  const file = writer.getByRole("region", { name: "Attachments" }).getByRole("link", { name: /^report\[U\+202E\]fdp\.exe/ });
  await inOrder(file, "report[U+202E]fdp.exe");
  const [download] = await Promise.all([writer.waitForEvent("download"), file.click()]);
  assert.equal(download.suggestedFilename(), "report_fdp.exe", "saved under a name that reads as the .exe it is");
});

test("an HTML message is shown formatted in a sandboxed frame that runs nothing and loads nothing, or as its text in paragraphs", async () => {
  // A listener on 127.0.0.1: everything the message tries to load or call goes here, and nothing may arrive.
  const listener = await startReceiver();
  const reached = () => listener.received.map((request) => request.path);
  const elsewhere = listener.url;
  const subject = "The Ledger: quarterly update";
  const html = [
    "<html><head><title>The Ledger</title><style>h1 { color: #c00 }</style></head><body style='margin:0'>",
    '<div style="display:none;max-height:0">Revenue up, a new office&nbsp;&zwnj;</div>',
    `<table width="600" background="${elsewhere}/background"><tr><td style="padding:24px; font-family:Georgia">`,
    '<h1 style="font-size:28px">Quarterly update</h1>',
    "<p style=color:#333>Revenue grew by <b>twelve</b> percent.</p>",
    "<ul><li>A new office in Lisbon</li><li>Two more hires</li></ul></td></tr></table>",
    `<p><img src="${elsewhere}/tracker" width="1" height="1" alt=""><img src="x" onerror="fetch('${elsewhere}/onerror')">`,
    '<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" alt="A dot">',
    `<script>fetch("${elsewhere}/script"); parent.document.title = "ran"</script></p>`,
    `<p><a href="https://letters.example/report" onclick="fetch('${elsewhere}/onclick')">Read the full report</a></p>`,
    `<p><a href="javascript:fetch('${elsewhere}/javascript')">Claim your reward</a> · <a href="/api/me">Your account</a></p>`,
    "</body></html>",
  ].join("\n");
  assert.equal(await node.deliver("news@letters.example", SUPPORT.address, Buffer.from([
    "From: The Ledger <news@letters.example>",
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Sat, 28 Nov 2026 07:00:00 +0000",
    "Message-ID: <ledger-quarterly@letters.example>",
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "",
    html,
    "",
  ].join("\r\n"))), null);

  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: subject }).click();
  await writer.getByRole("heading", { name: subject, level: 2 }).waitFor();
  const text = writer.getByRole("region", { name: "Text" });
  const views = text.getByRole("group", { name: "Show the message" });
  assert.equal(await views.getByRole("button", { name: "Formatted" }).getAttribute("aria-pressed"), "true", "formatted first");

  // Formatted: sanitised, in a frame sandboxed without this origin, whose one
  // script is the page's own, allowed by its hash alone, saying how tall it is.
  const frame = text.locator("iframe");
  await frame.waitFor();
  const sandbox = await frame.getAttribute("sandbox");
  assert.notEqual(sandbox, null, "the frame is sandboxed");
  const allowed = sandbox.split(/\s+/);
  for (const token of ["allow-same-origin", "allow-top-navigation", "allow-forms", "allow-modals"]) assert.ok(!allowed.includes(token), `${token} in ${sandbox}`);
  const srcdoc = await frame.getAttribute("srcdoc");
  assert.match(srcdoc, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+={0,2}'; img-src data:;/);
  const ours = await writer.evaluate(() => document.getElementById("message-frame-script").content.querySelector("script").textContent);
  assert.deepEqual(srcdoc.match(/<script>[\s\S]*?<\/script>/g), [`<script>${ours}</script>`], "the page's script, and no other");
  for (const removed of ["onerror", "onclick", "javascript:", elsewhere, 'href="/api', "<style>h1", "style=", "Revenue up", "fetch("]) {
    assert.ok(!srcdoc.includes(removed), `${removed} is not in what the frame shows`);
  }
  const shown = frame.contentFrame();
  await shown.getByRole("heading", { name: "Quarterly update" }).waitFor();
  assert.equal(await shown.getByRole("listitem").count(), 2);
  const report = shown.getByRole("link", { name: "Read the full report" });
  assert.equal(await report.getAttribute("href"), "https://letters.example/report");
  assert.equal(await report.getAttribute("target"), "_blank", "a link opens a tab of its own, never this page or the frame");
  assert.match(await report.getAttribute("rel"), /noopener/);
  assert.equal(await shown.getByRole("link").count(), 1, "javascript: and a link back to the node are left as text");
  await shown.getByText("Claim your reward").waitFor();
  assert.equal(await shown.locator("[onclick], [onerror]").count(), 0);
  assert.equal(await shown.locator("script").count(), 1, "only the page's");
  // Sized to the message: the frame's box is its content's height, borders aside, with nothing to scroll.
  await sizedToItsMessage(frame);
  assert.ok(await shown.getByRole("img", { name: "A dot" }).evaluate((image) => image.complete && image.naturalWidth === 1), "an image inside the message is shown");
  // Its two images on the listener are over http, which stay hidden even on asking.
  await text.getByRole("region", { name: "Remote images" }).getByText("2 images sent without encryption (http) stay hidden").waitFor();
  assert.equal(await text.getByRole("button", { name: "Show images", exact: true }).count(), 0, "nothing over https to show");
  await writer.waitForTimeout(1000);
  assert.deepEqual(reached(), [], "nothing in the message ran or loaded from elsewhere");
  assert.equal(await writer.title(), `${subject} · Mail · Mailroom`);

  // Plain text: the node's rendering, its paragraphs kept, in the page's own font.
  await views.getByRole("button", { name: "Plain text" }).click();
  assert.equal(await views.getByRole("button", { name: "Plain text" }).getAttribute("aria-pressed"), "true");
  const plain = text.locator("pre");
  assert.equal(await plain.textContent(), [
    "Quarterly update",
    "",
    "Revenue grew by twelve percent.",
    "",
    "• A new office in Lisbon",
    "• Two more hires",
    "",
    "Read the full report",
    "",
    "Claim your reward · Your account",
  ].join("\n"), "not run together");
  assert.doesNotMatch(await plain.evaluate((element) => getComputedStyle(element).fontFamily), /mono/i);
  assert.equal(await text.locator("iframe").count(), 0);
  await views.getByRole("button", { name: "Formatted" }).click();
  await text.locator("iframe").contentFrame().getByRole("heading", { name: "Quarterly update" }).waitFor();
  await writer.waitForTimeout(500);
  assert.deepEqual(reached(), []);
  await fetch(`${elsewhere}/control`);
  assert.deepEqual(reached(), ["/control"], "the listener hears what does reach it");
  await listener.close();
});

test("hostile HTML of every kind is shown formatted without a word in the console, and its text is shown as written", async () => {
  // Each line is something the page's policy would report if any document parsed
  // under it held it (Chrome reports what DOMPurify's inert parse holds): handlers in
  // every place the tokenizer starts an attribute, styles, SVG and MathML, forms,
  // javascript: addresses, and markup that hides a tag from a careless reader.
  const hostile = [
    `<body onload="alert(1)" style="margin:0" background="javascript:alert(1)">`,
    `<p>Meet on Monday; the "one" online 'style' guide, on/off and/onward.</p>`,
    `<img src=x onerror="alert(1)"><IMG SRC=x ONERROR=alert(1)><img/src/onerror=alert(1)><img src=""onerror=alert(1)>`,
    `<img\nsrc=x\r\nonerror=alert(1)><img\tsrc=x\fonerror=alert(1)><a href='https://letters.example/a'onclick='alert(1)'>quoted</a>`,
    `<p title="a>b" style="color:red" onclick="alert(1)">gt in a value</p><p STYLE=color:red>upper</p><p/style=color:red>slashed</p>`,
    `<style>p{color:red}</style><STYLE media=all>p{}</STYLE><div><style>p{}</style></div>`,
    `<svg onload="alert(1)"><circle r=1 onclick=alert(1) /><animate onbegin=alert(1) attributeName=x dur=1s /><set attributeName=onmouseover to=alert(1) />`,
    `<a xlink:href="javascript:alert(1)"><text>x</text></a><style>circle{fill:red}</style><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>`,
    `<svg><style><img src=x onerror=alert(1)></style></svg><math><mi xlink:href="javascript:alert(1)" onclick=alert(1)>x</mi><style>x{}</style></math>`,
    `<details open ontoggle="alert(1)">details</details><frameset onload=alert(1)>`,
    `<a href="javascript:alert(1)">js</a><a href="  JaVaScRiPt:alert(1)">js2</a><iframe src="javascript:alert(1)"></iframe>`,
    `<form action="javascript:alert(1)" onsubmit=alert(1)><input name=a onfocus="alert(1)" autofocus><button formaction="javascript:alert(1)">b</button>`,
    `<select onchange=alert(1)><option>1</option></select><textarea onfocus=alert(1)><img onerror=alert(1)></textarea></form>`,
    `<script>x = "<a title='";</script><img src=x onerror=alert(1)>`,
    `<!--><img src=x onerror=alert(1)>--><!---><img src=x onerror=alert(2)><!-- --!><img src=x onerror=alert(3)>`,
    `<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)"><iframe srcdoc="<script>alert(1)</script>"></iframe>`,
    `<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><base href="javascript:alert(1)//">`,
    `<video poster="x" onerror=alert(1)><source src=x onerror=alert(1)></video><noscript><img src=x onerror=alert(1)></noscript>`,
    `<template><img src=x onerror=alert(1)></template><xmp><img src=x onerror=alert(1)></xmp>`,
    `<p>The end.</p>`,
  ].join("\n");
  const subject = "Every trick in one message";
  assert.equal(await node.deliver("mallory@evil.example", SUPPORT.address, Buffer.from([
    "From: Mallory <mallory@evil.example>",
    `To: ${SUPPORT.address}`,
    `Subject: ${subject}`,
    "Date: Sat, 28 Nov 2026 07:30:00 +0000",
    "Message-ID: <every-trick@evil.example>",
    "MIME-Version: 1.0",
    "Content-Type: text/html; charset=utf-8",
    "",
    hostile,
    "",
  ].join("\r\n"))), null);

  const before = { console: watch.consoleErrors.length, csp: watch.cspViolations.length, errors: watch.pageErrors.length };
  await everyMessage(writer, SUPPORT.address);
  await writer.getByRole("link", { name: subject }).click();
  const frame = writer.getByRole("region", { name: "Text" }).locator("iframe");
  await frame.waitFor();
  const shown = frame.contentFrame();
  await shown.getByText("The end.").waitFor();
  assert.equal(await shown.getByText(`Meet on Monday; the "one" online 'style' guide, on/off and/onward.`).count(), 1, "text that looks like an attribute is shown as written");
  assert.equal(await shown.getByText("<img onerror=alert(1)>").count(), 1, "a textarea's text stays text");
  // What the frame holds is DOMPurify's serialisation: every tag in it is well formed.
  // The page's own script (the frame's height) is the one thing added to it.
  const ours = await writer.evaluate(() => document.getElementById("message-frame-script").content.querySelector("script").textContent);
  const body = (await frame.getAttribute("srcdoc")).replace(/^[\s\S]*<body>/, "").replace(`<script>${ours}</script>`, "");
  const tags = body.match(/<[a-z][^>]*>/gi);
  assert.deepEqual(tags.filter((tag) => /\s(on|style|&#)/i.test(tag)), [], "no handler, style or renamed attribute is left");
  assert.deepEqual(tags.filter((tag) => /^<(svg|math|form|input|button|select|textarea|iframe|object|embed|base|meta|video|script)\b/i.test(tag)), []);
  assert.ok(!/javascript:/i.test(tags.join("")), "no javascript: address");
  await writer.waitForTimeout(500);
  assert.deepEqual([
    ...watch.consoleErrors.slice(before.console).map(({ who, text }) => `${who}: ${text}`),
    ...watch.cspViolations.slice(before.csp),
    ...watch.pageErrors.slice(before.errors),
  ], [], "nothing in the message made any console report");
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

// eDiscovery exports in a real browser (decision 0024): headless Chromium against
// the built Worker on workerd, at a desktop's width (1280×800) and a phone's
// (390×844). A reviewer who holds ediscovery.export but administers nothing
// chooses a mailbox she reads from the list and names one she cannot see by
// its id, is shown the node's four-part refusal when the last day is before the
// first, requests the export of mail delivered through the Worker's email
// handler, sees it building, and, once the per-minute scheduled event has run,
// sees it ready without reloading: on the export's page (desktop) or in the
// list (phone), which then stops asking. She downloads a message and the
// manifest, and their bytes hash to what the page shows and the API recorded;
// each download is in the audit chain. Deleting asks first, then takes it away.
// An administrator without the relation is not offered the section.
// At every step the page fits its window; every console error and CSP
// violation not provoked on purpose fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn, sectionLink as section, openSection } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const RITA = { name: "Rita Reviewer", email: "rita@example.com", password: "rita's first long password" };
const SUPPORT = "support@mailroom.test";
const LEGAL = "legal@mailroom.test";
const ANA = "ana@customer.example";
const EVERY_MINUTE = "* * * * *";
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const today = () => new Date().toISOString().slice(0, 10);

const LAYOUTS = [
  { name: "desktop", follows: "the export's page", viewport: { width: 1280, height: 800 } },
  { name: "phone", follows: "the list", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, token, browser;
const watch = new PageWatch();
const made = {};

function message(id, subject, to) {
  return `From: Ana Lima <${ANA}>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${id}@customer.example>\r\n` +
    `Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nAbout ${subject}.\r\n`;
}

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk());
  made.rita = await desk.person(RITA);
  made.support = await desk.mailbox(SUPPORT, "Support");
  made.legal = await desk.mailbox(LEGAL, "Legal");
  // Rita reviews: she may export across mailboxes, and reads support@'s list, not legal@'s.
  await desk.grant(made.rita.id, ["ediscovery.export"], "org");
  await desk.grant(made.rita.id, ["mailbox.metadata.read"], made.support.id);
  made.raws = {
    "Invoice 4471": message("i4471", "Invoice 4471", SUPPORT),
    "Lunch on Friday": message("lunch", "Lunch on Friday", SUPPORT),
    "Invoice 4472, disputed": message("i4472", "Invoice 4472, disputed", LEGAL),
  };
  for (const [subject, raw] of Object.entries(made.raws)) {
    assert.equal(await node.deliver(ANA, subject.includes("4472") ? LEGAL : SUPPORT, raw), null);
  }
  made.ritaToken = await desk.signIn(RITA);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const ritasExports = async () => (await ok(call("GET", "/api/exports", { token: made.ritaToken }))).exports;
const downloadsAudited = async () => (await ok(call("GET", "/api/audit?limit=200", { token }))).entries
  .filter((entry) => entry.action === "get_export_object" && entry.actor === made.rita.id).length;

/** Clicks a download link and answers the bytes the browser saved. */
async function download(page, link) {
  const [saved] = await Promise.all([page.waitForEvent("download"), link.click()]);
  return readFileSync(await saved.path());
}

for (const { name, follows, ...options } of LAYOUTS) {
  const run = {};

  test(`${name}: a reviewer is refused an export whose last day is before its first, in four parts`, async () => {
    ({ page: run.page } = await watch.open(browser, { who: `${name} reviewer`, ...options, locale: "en-GB" }));
    const page = run.page;
    await signIn(page, node.url, RITA);
    await openSection(page, "Exports");
    const form = page.getByRole("region", { name: "Request an export" });
    await form.getByRole("checkbox", { name: SUPPORT }).waitFor();
    // She is offered the mailbox she reads, and names the other by id.
    assert.deepEqual(await form.getByRole("checkbox").evaluateAll((boxes) => boxes.map((box) => box.value)), [made.support.id]);
    assert.equal(await form.getByText(LEGAL).count(), 0);
    await assertFits(page, `${name}: the exports section`);

    const before = (await ritasExports()).length;
    await form.getByRole("checkbox", { name: SUPPORT }).check();
    await form.getByLabel("Received from").fill(today());
    await form.getByLabel("Received to").fill("2020-01-01");
    watch.expectRefusal(400, "/api/exports");
    await form.getByRole("button", { name: "Request the export" }).click();
    const refusal = form.getByRole("alert");
    await refusal.waitFor();
    const said = await refusal.innerText();
    assert.match(said, /The export was not requested: check “Received to”\./);
    assert.match(said, /“Received to” was not accepted as it is\./);
    assert.match(said, /Why: It must be a day on or after “Received from”\./);
    assert.match(said, /What to do: Change “Received to”, then try again\./);
    assert.equal(await form.getByLabel("Received to").getAttribute("aria-invalid"), "true");
    assert.equal((await ritasExports()).length, before, "nothing was requested");
    await assertFits(page, `${name}: the refusal`);
  });

  test(`${name}: she requests an export of two mailboxes, sees it building, and ready once the schedule has run`, async () => {
    const page = run.page;
    const form = page.getByRole("region", { name: "Request an export" });
    await form.getByLabel("Received to").fill(today());
    await form.getByLabel("Others, by id").fill(made.legal.id);
    await form.getByLabel("Matching").fill("invoice");
    await form.getByRole("button", { name: "Request the export" }).click();
    await page.getByText("Requested: 2 messages chosen, copied a minute at a time.").waitFor();

    const [requested] = await ritasExports();
    run.exportId = requested.id;
    assert.equal(requested.state, "building");
    assert.equal(requested.messages_total, 2);
    assert.deepEqual(requested.mailbox_ids, [made.support.id, made.legal.id]);
    assert.equal(await page.evaluate(() => location.hash), `#/exports/${requested.id}`);
    const facts = page.getByRole("region", { name: "Export", exact: true });
    assert.match(await facts.innerText(), /Building/);
    assert.match(await facts.innerText(), /0 of 2 messages copied/);
    assert.match(await facts.innerText(), new RegExp(`${SUPPORT}, ${made.legal.id}`), "a mailbox she cannot list, by its id");
    const holds = page.getByRole("table", { name: "What it holds" });
    await holds.getByRole("row").filter({ hasText: "Invoice 4472, disputed" }).getByText("Not copied yet").waitFor();
    assert.equal(await holds.getByRole("link").count(), 0, "nothing to download yet");
    await assertFits(page, `${name}: an export building`);

    if (follows === "the list") {
      await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Exports" }).click();
      const row = page.getByRole("table", { name: "Your exports, newest first" }).getByRole("row").filter({ hasText: "0 of 2 messages copied" });
      await row.getByText("Building").waitFor();
      await assertFits(page, `${name}: the list with an export building`);
    }
    await node.scheduled(EVERY_MINUTE);
    // The page asks again by itself every five seconds while it builds.
    if (follows === "the list") {
      const row = page.getByRole("table", { name: "Your exports, newest first" }).getByRole("row").filter({ hasText: "2 of 2 messages copied" });
      await row.getByText("Ready").waitFor();
      // And stops asking once nothing builds.
      const asked = [];
      const listen = (request) => request.url().includes("/api/exports") && asked.push(request.url());
      page.on("request", listen);
      await page.waitForTimeout(6_000);
      page.off("request", listen);
      assert.deepEqual(asked, [], "no more asking once nothing is building");
      await row.getByRole("link").click();
    }
    await facts.getByText("Ready", { exact: true }).waitFor();
    assert.match(await facts.innerText(), /2 of 2 messages copied/);
    const ready = (await ritasExports()).find((entry) => entry.id === requested.id);
    assert.equal(ready.state, "ready");
    assert.equal(await page.locator(`dt:text-is("Manifest's SHA-256") + dd`).innerText(), ready.manifest_sha256);
    await assertFits(page, `${name}: an export ready`);
  });

  test(`${name}: she downloads a message and the manifest, and their bytes hash to what the page shows`, async () => {
    const page = run.page;
    const holds = page.getByRole("table", { name: "What it holds" });
    const audited = await downloadsAudited();

    const invoice = holds.getByRole("row").filter({ hasText: "Invoice 4471" });
    const shown = await invoice.locator('td[data-label="SHA-256"]').innerText();
    const bytes = await download(page, invoice.getByRole("link", { name: "Download Invoice 4471" }));
    assert.equal(bytes.toString(), made.raws["Invoice 4471"], "byte for byte what was received");
    assert.equal(sha256(bytes), shown);

    const manifestHash = await page.locator(`dt:text-is("Manifest's SHA-256") + dd`).innerText();
    const manifest = await download(page, holds.getByRole("link", { name: "Download the manifest" }));
    assert.equal(sha256(manifest), manifestHash);
    const listed = JSON.parse(manifest.toString()).messages;
    assert.deepEqual(listed.map((entry) => entry.subject).sort(), ["Invoice 4471", "Invoice 4472, disputed"]);
    assert.equal(listed.find((entry) => entry.subject === "Invoice 4471").sha256, shown);
    assert.equal(await downloadsAudited(), audited + 2, "each download is in the audit chain");
  });

  test(`${name}: deleting asks first, then the export is gone`, async () => {
    const page = run.page;
    const facts = page.getByRole("region", { name: "Export", exact: true });
    await facts.getByRole("button", { name: "Delete the export" }).click();
    const question = facts.getByRole("group", { name: "Delete this export?" });
    await question.getByRole("button", { name: "Keep it" }).click();
    assert.equal(await question.count(), 0);
    assert.ok((await ritasExports()).some((entry) => entry.id === run.exportId), "kept");
    await facts.getByRole("button", { name: "Delete the export" }).click();
    await assertFits(page, `${name}: deleting`);
    await question.getByRole("button", { name: "Delete for good" }).click();
    await page.getByText("Deleted the export and its copies.").waitFor();
    assert.equal(await page.evaluate(() => location.hash), "#/exports");
    assert.equal((await ritasExports()).some((entry) => entry.id === run.exportId), false);
    assert.equal((await call("GET", `/api/exports/${run.exportId}`, { token: made.ritaToken })).status, 404);
    await page.getByText("You have requested no export yet.").waitFor();
    await page.context().close();
  });
}

test("an administrator who does not hold ediscovery.export is not offered Exports", async () => {
  const { page } = await watch.open(browser, { who: "administrator", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, node.url, ADMIN);
  // The navigation is drawn from GET /api/me, which says who may export.
  await section(page, "Mailboxes").waitFor({ state: "attached" });
  assert.equal((await call("GET", "/api/me", { token })).body.may_export, false);
  assert.equal(await section(page, "Exports").count(), 0);
  assert.equal((await call("GET", "/api/me", { token: made.ritaToken })).body.may_export, true);
  await page.context().close();
});

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

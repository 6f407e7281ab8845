// Butlers in a real browser (issue 15, decision 0023): headless Chromium against
// the built Worker on workerd, at a desktop's width (1280×800) and a phone's
// (390×844), each in a mailbox of its own. An administrator builds a butler with
// the form's rows (a condition, two effects, the assignee chosen by name), tries
// it on past messages and reads the dry run step by step (what each condition
// found, what each effect would do, and that nothing changed, which the API
// confirms), is shown the four-part refusal when publishing a butler whose
// sponsor holds nothing there, publishes theirs, and sees a message delivered
// through the Worker's email handler assigned and set waiting in the
// conversation. Editing writes a draft version beside the published one;
// deactivated, the butler leaves the next delivery alone. The kinds the form
// offers are exactly the contract's. At every step the page fits its window.
// Every console error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, ROOT } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn, openSection } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const BEN = { name: "Ben Sponsor", email: "ben@example.com", password: "ben's first long password" };
const CLEO = { name: "Cleo Accounts", email: "cleo@example.com", password: "cleo's first long password" };
const NELL = { name: "Nell Nobody", email: "nell@example.com", password: "nell's first long password" };
const ANA = "ana@customer.example";
/** An id the node mints, as a person should never have to read one. */
const ID = /\b(?:usr|mbx|btl|rcp|thr|agt)_[0-9A-HJKMNP-TV-Z]{26}\b/;

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];

let node, call, token, browser, vocabulary;
const watch = new PageWatch();
const made = {};

function message(id, subject, address) {
  return `From: Ana Lima <${ANA}>\r\nTo: Support <${address}>\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\n` +
    "Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello.\r\n";
}

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk());
  vocabulary = await ok(call("GET", "/api/agent-capabilities", { token }));
  made.admin = await ok(call("GET", "/api/me", { token }));
  made.ben = await desk.person(BEN);
  made.cleo = await desk.person(CLEO);
  made.nell = await desk.person(NELL);
  for (const layout of LAYOUTS) {
    const address = `${layout.name}-support@mailroom.test`;
    const mailbox = await desk.mailbox(address, `Support (${layout.name})`);
    const grants = [
      [made.ben.id, ["mailbox.metadata.read", "send.propose"]],
      [made.cleo.id, ["mailbox.metadata.read", "send.propose"]],
      // The administrator reads the mailbox, to choose a past message and watch.
      [made.admin.id, ["mailbox.metadata.read", "mailbox.content.read"]],
    ];
    for (const [subject, relations] of grants) await desk.grant(subject, relations, mailbox.id);
    const data = { mailbox, address, invoice: `Invoice 4471 (${layout.name})`, lunch: `Lunch? (${layout.name})` };
    made[layout.name] = data;
    for (const [id, subject] of [[`invoice-${layout.name}`, data.invoice], [`lunch-${layout.name}`, data.lunch]]) {
      assert.equal(await node.deliver(ANA, address, message(`${id}@customer.example`, subject, address)), null);
    }
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const statusSaying = (page, text) => page.getByRole("status").filter({ hasText: text });
const butlersOf = async (mailbox) => (await ok(call("GET", `/api/mailboxes/${mailbox.id}/butlers`, { token }))).butlers;
const threadOf = async (mailbox, subject) =>
  (await ok(call("GET", `/api/mailboxes/${mailbox.id}/threads?limit=100`, { token }))).threads.find((thread) => thread.subject === subject);
/** What the database counts that a dry run must leave alone. */
const untouched = async () => (await node.sql("SELECT (SELECT COUNT(*) FROM audit_entries) AS audited, (SELECT COUNT(*) FROM butler_runs) AS runs, (SELECT COUNT(*) FROM mail_threads WHERE assignee IS NOT NULL OR status <> 'open') AS touched"))[0];

/** Runs the dry run of `version` over the past message `subject`, and answers the result. */
async function tryOn(page, subject, version) {
  const region = page.getByRole("region", { name: "Try it on a past message" });
  const choice = region.getByLabel("Past message");
  await choice.selectOption(await choice.locator("option").filter({ hasText: new RegExp(`^${subject.replace(/[?()]/g, "\\$&")} · `) }).getAttribute("value"));
  await region.getByLabel("Version").selectOption(String(version));
  await region.getByRole("button", { name: "Try it" }).click();
  const result = region.getByRole("region", { name: "Dry run" }).filter({ hasText: subject });
  await result.waitFor();
  return result;
}

/** A step of a dry run: its badge and what it says. */
async function stepsOf(result, heading) {
  const list = result.locator(`h4:text-is("${heading}") + ol > li`);
  return (await list.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
}

test("the form offers exactly the condition and effect kinds the contract declares", async () => {
  const schemas = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8")).components.schemas;
  const tags = (schema, tag) => schema.oneOf.map((variant) => variant.properties[tag].const).sort();
  const { page } = await watch.open(browser, { who: "kinds", viewport: { width: 1280, height: 800 }, locale: "en-GB" });
  await signIn(page, node.url, ADMIN);
  await page.evaluate((href) => (location.hash = href), `#/butlers/${made.desktop.mailbox.id}`);
  const form = page.getByRole("region", { name: "Create a butler" });
  await form.getByRole("group", { name: "Effect 1" }).waitFor();
  const offered = async (group, label) => (await form.getByRole("group", { name: group }).getByLabel(label).locator("option")
    .evaluateAll((options) => options.map((option) => option.value))).sort();
  assert.deepEqual(await offered("Condition 1", "Looks at"), tags(schemas.ButlerCondition, "on"));
  assert.deepEqual(await offered("Effect 1", "Does"), tags(schemas.ButlerEffect, "do"));
  // The statuses and sender checks offered are the contract's too, in words.
  await form.getByRole("group", { name: "Condition 1" }).getByLabel("Looks at").selectOption("sender_authentication");
  const checks = await form.getByRole("group", { name: "Condition 1" }).getByLabel("Is").locator("option").allTextContents();
  assert.equal(checks.length, schemas.SenderAuthentication.oneOf.length, checks.join(", "));
  const statuses = await form.getByRole("group", { name: "Effect 1" }).getByLabel("To").locator("option").allTextContents();
  assert.equal(statuses.length, schemas.ThreadStatus.oneOf.length, statuses.join(", "));
  // A copy is filed in another mailbox, chosen by its address, never this one.
  await form.getByRole("group", { name: "Effect 1" }).getByLabel("Does").selectOption("forward");
  const targets = await form.getByRole("group", { name: "Effect 1" }).getByLabel("In mailbox").locator("option").allTextContents();
  assert.ok(targets.includes(made.phone.mailbox.address), targets.join(", "));
  assert.ok(!targets.includes(made.desktop.mailbox.address), targets.join(", "));
  await page.context().close();
});

for (const layout of LAYOUTS) {
  const run = {};
  const { name, ...options } = layout;
  const data = () => made[name];

  test(`${name}: an administrator builds a butler from rows of conditions and effects, the assignee chosen by name`, async () => {
    ({ page: run.page } = await watch.open(browser, { who: `${name} administrator`, ...options, locale: "en-GB" }));
    const page = run.page;
    await signIn(page, node.url, ADMIN);
    await openSection(page, "Butlers");
    await page.getByRole("heading", { name: "Butlers", level: 1 }).waitFor();
    await page.getByRole("navigation", { name: "Mailboxes" }).getByRole("link", { name: data().address }).click();
    await page.getByRole("heading", { name: `Butlers on ${data().address}` }).waitFor();
    assert.ok(await page.getByText("No butlers on this mailbox yet.").isVisible());

    const form = page.getByRole("region", { name: "Create a butler" });
    await form.getByLabel("Name").fill("Invoices to Cleo");
    await form.getByLabel("Sponsor").selectOption({ label: `${BEN.name} <${BEN.email}>` });
    const condition = form.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Looks at").selectOption({ label: "The subject" });
    await condition.getByLabel("Contains").fill("invoice");
    // A second condition, added and taken away again.
    await form.getByRole("button", { name: "Add a condition" }).click();
    await form.getByRole("group", { name: "Condition 2" }).getByLabel("Looks at").selectOption({ label: "Attachments" });
    await form.getByRole("button", { name: "Remove condition 2" }).click();
    assert.equal(await form.getByRole("group", { name: "Condition 2" }).count(), 0);

    const first = form.getByRole("group", { name: "Effect 1" });
    await first.getByLabel("Does").selectOption({ label: "Assign the conversation" });
    const assignees = await first.getByLabel("To").locator("option").allTextContents();
    assert.deepEqual(assignees, [BEN.name, CLEO.name], "those who work the mailbox, by name");
    await first.getByLabel("To").selectOption({ label: CLEO.name });
    await form.getByRole("button", { name: "Add an effect" }).click();
    const second = form.getByRole("group", { name: "Effect 2" });
    await second.getByLabel("Does").selectOption({ label: "Set the status" });
    await second.getByLabel("To").selectOption({ label: "Waiting" });
    await assertFits(page, `${name}: the form, filled`);
    await form.getByRole("button", { name: "Create butler" }).click();

    await page.getByRole("heading", { name: "Invoices to Cleo", level: 2 }).waitFor();
    await statusSaying(page, "Version 1 is a draft").waitFor();
    const [butler] = await butlersOf(data().mailbox);
    run.butler = butler;
    assert.equal(butler.sponsor, made.ben.id);
    assert.deepEqual(butler.versions[0].rules, {
      conditions: [{ on: "subject", contains: "invoice" }],
      effects: [{ do: "assign", assignee: made.cleo.id }, { do: "set_status", status: "waiting" }],
    });
    const card = page.getByRole("article", { name: "Version 1" });
    assert.match(await card.innerText(), /Draft/);
    assert.match(await card.innerText(), /The subject contains “invoice”/);
    assert.match(await card.innerText(), new RegExp(`Assign the conversation to ${CLEO.name}`));
    assert.match(await card.innerText(), /Set the status to Waiting/);
    assert.doesNotMatch(await page.getByRole("main").innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: a new butler`);
  });

  test(`${name}: the dry run over past messages shows each step, and changes nothing`, async () => {
    const page = run.page;
    const before = await untouched();
    const matching = await tryOn(page, data().invoice, 1);
    assert.match(await matching.innerText(), /Every condition holds/);
    assert.deepEqual(await stepsOf(matching, "Conditions"), [`Holds The subject contains “invoice” Found: “${data().invoice}”`]);
    assert.deepEqual(await stepsOf(matching, "Effects"), [
      `Would run Assign the conversation to ${CLEO.name} Assigns the conversation to ${CLEO.name}.`,
      "Would run Set the status to Waiting Sets the conversation's status to waiting.",
    ]);
    assert.ok(await matching.getByText("Nothing was changed").isVisible(), "it says nothing changed");
    assert.doesNotMatch(await matching.innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: a dry run that matches`);

    const other = await tryOn(page, data().lunch, 1);
    assert.match(await other.innerText(), /A condition does not hold/);
    assert.deepEqual(await stepsOf(other, "Conditions"), [`Does not hold The subject contains “invoice” Found: “${data().lunch}”`]);
    for (const effect of await stepsOf(other, "Effects")) assert.match(effect, /^Would not run .* a condition did not hold/, effect);
    assert.equal(await page.getByRole("region", { name: "Dry run" }).count(), 1, "one result at a time");
    assert.deepEqual(await untouched(), before, "no audit entry, no run, no conversation touched");
  });

  test(`${name}: publishing a butler whose sponsor holds nothing there is refused in four parts`, async () => {
    const page = run.page;
    const draft = await ok(call("POST", `/api/mailboxes/${data().mailbox.id}/butlers`, {
      token, body: { name: "Nell's butler", sponsor: made.nell.id, rules: { conditions: [], effects: [{ do: "set_status", status: "closed" }] } },
    }), 201);
    const path = `/api/mailboxes/${data().mailbox.id}/butlers/${draft.id}/publish`;
    const refusal = (await call("POST", path, { token, body: { version: 1 } })).body.error;
    assert.equal(refusal.code, "sponsor_lacks");
    await page.evaluate((href) => (location.hash = href), `#/butlers/${data().mailbox.id}/${draft.id}`);
    const card = page.getByRole("article", { name: "Version 1" });
    assert.match(await card.innerText(), /Every delivery/, "no condition: every delivery");
    watch.expectRefusal(409, path);
    await card.getByRole("button", { name: "Publish version 1" }).click();
    await card.getByRole("group", { name: "Publish version 1?" }).getByRole("button", { name: /^Publish it/ }).click();
    const shown = card.getByRole("alert");
    await shown.waitFor();
    const text = await shown.innerText();
    assert.ok(text.includes("Version 1 was not published."), text);
    assert.match(text, /Why: .+\nWhat to do: .+/s, text);
    // The relation by what it lets its holder do.
    assert.ok(text.includes("does not hold the permission to see that mail exists in a mailbox"), text);
    assert.doesNotMatch(text, /sponsor_lacks|mailbox\.[a-z]+\.read|mbx_/);
    await shown.getByText("Technical details").click();
    const details = await shown.locator("details").innerText();
    for (const part of ["sponsor_lacks", "409", refusal.message, refusal.fix]) assert.ok(details.includes(part), `${part} in ${details}`);
    assert.match(await card.innerText(), /Draft/, "still a draft");
    assert.equal((await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/butlers/${draft.id}`, { token }))).published_version, null);
    await assertFits(page, `${name}: a refused publication`);
  });

  test(`${name}: published, the butler acts on the next delivery, and the conversation shows it`, async () => {
    const page = run.page;
    await page.evaluate((href) => (location.hash = href), `#/butlers/${data().mailbox.id}/${run.butler.id}`);
    const card = page.getByRole("article", { name: "Version 1" });
    await card.getByRole("button", { name: "Publish version 1" }).click();
    // Asked once, saying what publishing does; kept, nothing is published.
    const asked = card.getByRole("group", { name: "Publish version 1?" });
    assert.match(await asked.innerText(), /acts on every delivery its conditions match/);
    await asked.getByRole("button", { name: "Keep it" }).click();
    assert.equal((await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/butlers/${run.butler.id}`, { token }))).published_version, null, "kept means kept");
    await card.getByRole("button", { name: "Publish version 1" }).click();
    await card.getByRole("group", { name: "Publish version 1?" }).getByRole("button", { name: /^Publish it/ }).click();
    await statusSaying(page, "Published version 1").waitFor();
    assert.match(await page.getByRole("article", { name: "Version 1" }).innerText(), /Published, acting/);
    const pinned = await page.getByRole("article", { name: "Version 1" }).locator("ul.relations li").allInnerTexts();
    const words = (relation) => vocabulary.relations.find((entry) => entry.name === relation).description;
    assert.deepEqual(pinned.map((text) => text.trim()), [words("mailbox.metadata.read"), words("send.propose")], "what was pinned, in words");
    const published = (await butlersOf(data().mailbox)).find((butler) => butler.id === run.butler.id);
    assert.deepEqual([published.published_version, published.active], [1, true]);
    await assertFits(page, `${name}: a published butler`);

    const subject = `Re: invoice 4472 (${name})`;
    assert.equal(await node.deliver(ANA, data().address, message(`next-${name}@customer.example`, subject, data().address)), null);
    const thread = await threadOf(data().mailbox, subject);
    await page.evaluate((href) => (location.hash = href), `#/mail/${data().mailbox.id}/${thread.id}`);
    await page.getByRole("heading", { name: subject, level: 2 }).waitFor();
    const facts = page.locator(".thread-facts");
    assert.match(await facts.innerText(), new RegExp(`Assigned to ${CLEO.name}`), "assigned by the butler");
    assert.ok(await facts.getByText("Waiting", { exact: true }).isVisible(), "and set waiting");
    await assertFits(page, `${name}: the conversation the butler acted on`);
  });

  test(`${name}: an edit is a new draft beside the published version, and a deactivated butler leaves mail alone`, async () => {
    const page = run.page;
    await page.evaluate((href) => (location.hash = href), `#/butlers/${data().mailbox.id}/${run.butler.id}`);
    const edit = page.getByRole("region", { name: "Edit: write version 2" });
    assert.equal(await edit.getByRole("group", { name: "Condition 1" }).getByLabel("Contains").inputValue(), "invoice", "the newest rules, to change");
    assert.equal(await edit.getByRole("group", { name: "Effect 1" }).getByLabel("To").locator("option:checked").textContent(), CLEO.name);
    await edit.getByRole("group", { name: "Condition 1" }).getByLabel("Contains").fill("refund");
    await edit.getByRole("button", { name: "Remove effect 1" }).click();
    await edit.getByRole("button", { name: "Save as a draft" }).click();
    await statusSaying(page, "Saved version 2, a draft.").waitFor();
    assert.match(await page.getByRole("article", { name: "Version 2" }).innerText(), /Draft[\s\S]*The subject contains “refund”/);
    assert.match(await page.getByRole("article", { name: "Version 1" }).innerText(), /Published, acting/, "the published one acts on");
    const [latest] = (await butlersOf(data().mailbox)).find((butler) => butler.id === run.butler.id).versions;
    assert.deepEqual(latest.rules, { conditions: [{ on: "subject", contains: "refund" }], effects: [{ do: "set_status", status: "waiting" }] });
    const draft = await tryOn(page, data().invoice, 2);
    assert.deepEqual(await stepsOf(draft, "Conditions"), [`Does not hold The subject contains “refund” Found: “${data().invoice}”`]);

    await page.getByRole("button", { name: `Deactivate ${run.butler.name}` }).click();
    await statusSaying(page, "is deactivated").waitFor();
    assert.ok(await page.getByText("Deactivated", { exact: true }).first().isVisible());
    assert.equal((await butlersOf(data().mailbox)).find((butler) => butler.id === run.butler.id).active, false);
    const subject = `Invoice 4473 (${name})`;
    assert.equal(await node.deliver(ANA, data().address, message(`later-${name}@customer.example`, subject, data().address)), null);
    const thread = await threadOf(data().mailbox, subject);
    assert.deepEqual([thread.assignee, thread.status], [undefined, "open"], "deactivated, it did nothing");

    await page.getByRole("button", { name: `Activate ${run.butler.name}` }).click();
    await statusSaying(page, "acts on new deliveries again").waitFor();
    assert.equal((await butlersOf(data().mailbox)).find((butler) => butler.id === run.butler.id).active, true);

    // The list says who sponsors each, which version acts, and where each stands.
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Butlers" }).click();
    const listed = page.getByRole("table", { name: `Butlers on ${data().address}` });
    await listed.waitFor();
    const rows = (await listed.getByRole("row").allInnerTexts()).slice(1).map((text) => text.replace(/\s+/g, " ").trim());
    assert.equal(rows.length, 2, rows.join("\n"));
    assert.match(rows.find((text) => text.includes("Invoices to Cleo")), new RegExp(`${BEN.name}.*Version 1.*Acting: version 1`));
    assert.match(rows.find((text) => text.includes("Nell's butler")), new RegExp(`${NELL.name}.*None.*Not published`));
    assert.doesNotMatch(await page.getByRole("main").innerText(), ID, "names, never ids");
    await assertFits(page, `${name}: the mailbox's butlers`);
  });
}

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});

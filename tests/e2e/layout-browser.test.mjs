// The administrator's sections in a real browser, at a phone's width (390×844)
// and a desktop's (1280×800), filled with real data made through the API: people
// (one with a long name, one disabled), teams, mailboxes, every relation, agents
// in every state, sources, reminders, notifications (a refusal with a long
// reason, an assignment, an approval waiting, reminders due), agents'
// messages (the node runs agent messaging), a butler, one version published
// and one a draft, with its dry run, and an export of two mailboxes, built by
// the per-minute run. In each section: the page never scrolls sideways, and
// every cell, button, link and field it shows lies inside the window; relations
// and capabilities read in the vocabulary's words, never as codes, unless the
// person asks for the codes; nobody whose name the page knows is shown by id;
// axe-core finds no accessibility violation (the phone in the dark colour
// scheme, the desktop in the light, so both palettes' contrast is checked);
// and on the phone every control is tall enough to tap. The banner: the daily
// sections first and the administration ones under one menu, worked by
// keyboard, and on the phone one row no taller than 64px with a Menu button.
// Every console error and CSP violation fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, ROOT } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFitted as assertFits, measure as measureShown, showNavigation, signIn } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const BEN = { name: "Ben Baker", email: "ben@example.com", password: "ben's first long password" };
const MAX = {
  name: "Maximiliana Konstantinopoulou-Worthington",
  email: "maximiliana.konstantinopoulou-worthington@subsidiary-of-the-organisation.example",
  password: "max's first long password",
};
const CLEO = { name: "Cleo Gone", email: "cleo@example.com", password: "cleo's first long password" };
const SUPPORT = { address: "support@mailroom.test", display_name: "Support" };
const FINANCE = { address: "accounts-receivable-and-payable@finance-department.mailroom.test", display_name: "Accounts receivable and payable" };
/** An id the node mints: a prefix and a ULID. */
const ID = /\b(?:usr|tm|mbx|agt|src)_[0-9A-HJKMNP-TV-Z]{26}\b/g;

const LAYOUTS = [
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: "dark" },
  { name: "desktop", viewport: { width: 1280, height: 800 } },
];

let node, call, token, browser, vocabulary;
const watch = new PageWatch();
/** What the data is: `{ ben, max, cleo, team, finance, support, agents, … }`. */
const made = {};

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk({ vars: { FEATURE_AGENT_NETWORK: "true" } }));
  const post = (path, body, status = 201, as = token) => ok(call("POST", path, { token: as, body }), status);
  vocabulary = await ok(call("GET", "/api/agent-capabilities", { token }), 200);

  made.admin = await ok(call("GET", "/api/me", { token }), 200);
  made.ben = await desk.person(BEN);
  made.max = await desk.person(MAX);
  made.cleo = await desk.person(CLEO);
  await post(`/api/people/${made.cleo.id}/disable`, undefined, 200);
  made.team = await post("/api/teams", { name: "Customer support and success" });
  made.quiet = await post("/api/teams", { name: "Finance" });
  for (const person of [made.ben, made.max, made.cleo]) await ok(call("PUT", `/api/teams/${made.team.id}/members/${person.id}`, { token }), 200);
  made.support = await desk.mailbox(SUPPORT.address, SUPPORT.display_name);
  made.finance = await desk.mailbox(FINANCE.address, FINANCE.display_name);

  // Every relation of the vocabulary is held by someone: the team on support@,
  // Ben and Max on finance@, and the organisation's own.
  const onMailbox = vocabulary.relations.filter((relation) => relation.on === "mailbox").map((relation) => relation.name);
  for (const relation of onMailbox) {
    await desk.grant(`${made.team.id}#member`, [relation], made.support.id);
    await desk.grant(made.ben.id, [relation], made.finance.id);
  }
  await desk.grant(made.max.id, ["mailbox.metadata.read"], made.finance.id);
  await desk.grant(made.max.id, ["ediscovery.export", "org.admin"], "org");

  // Agents: one reading finance@ for Ben, one paused, one revoked, and two that message each other.
  const mint = (name, capabilities, mailboxes = []) =>
    post("/api/agents", { name, sponsor: made.ben.id, capabilities, mailboxes, delivery: "credential" });
  made.triage = await mint("Invoice triage assistant", ["identity.read", "mail.triage", "mail.read", "mail.draft"],
    [{ mailbox: made.finance.id, relations: ["mailbox.metadata.read", "mailbox.content.read", "send.propose"] }]);
  made.paused = await mint("Weekend watcher", ["mail.triage"], [{ mailbox: made.finance.id, relations: ["mailbox.metadata.read"] }]);
  await post(`/api/agents/${made.paused.agent.id}/pause`, undefined, 200);
  made.revoked = await mint("Retired helper", ["identity.read"]);
  await post(`/api/agents/${made.revoked.agent.id}/revoke`, undefined, 200);
  made.travel = await mint("Travel desk", ["agent.messaging"]);
  made.calendar = await mint("Calendar assistant", ["agent.messaging"]);
  await post("/api/agent-messages", {
    recipient: made.calendar.agent.id, kind: "request", content: { ask: "free_slots", minutes: 90 }, idempotency_key: "layout-ask",
  }, 202, made.travel.credential);

  // Mail the administrator works in support@: a message, a conversation, a reply
  // with a file, submitted.
  await desk.grant(made.admin.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"], made.support.id);
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"));
  assert.equal(await node.deliver("ana@customer.example", SUPPORT.address, raw), null);
  made.receipt = (await ok(call("GET", `/api/mailboxes/${made.support.id}/messages`, { token }), 200)).messages[0];
  made.reply = await post(`/api/mailboxes/${made.support.id}/sends`, { reply_to: made.receipt.id, text: "Here it is again." });
  await post(`/api/mailboxes/${made.support.id}/sends/${made.reply.id}/attachments`,
    { name: "invoice-4471-with-a-long-descriptive-file-name.pdf", content_type: "application/pdf", content_base64: "JVBERi0xLjc=" });
  await post(`/api/mailboxes/${made.support.id}/sends/${made.reply.id}/submit`, undefined, 200);

  // The administrator's notifications: Ben refuses a send of theirs with a long
  // reason, assigns them the conversation, and asks them to approve one of his
  // in finance@, where they decide.
  const benToken = await desk.signIn(BEN);
  const refused = await post(`/api/mailboxes/${made.support.id}/sends`, {
    to: ["ana@customer.example"], subject: "Your invoice 4471, with the corrected amount and the new bank details we spoke about", text: "Attached.",
  });
  const version = (await post(`/api/mailboxes/${made.support.id}/sends/${refused.id}/submit`, undefined, 200)).version;
  await post(`/api/mailboxes/${made.support.id}/sends/${refused.id}/refuse`, {
    version, reason: "The amount is still the old one, and we never send bank details by mail: telephone Ana instead, and write again once the finance team has confirmed the total.",
  }, 200, benToken);
  await ok(call("PATCH", `/api/mailboxes/${made.support.id}/threads/${made.reply.thread_id}`, { token: benToken, body: { assignee: made.admin.id } }), 200);
  await desk.grant(made.admin.id, ["approval.decide"], made.finance.id);
  const asked = await post(`/api/mailboxes/${made.finance.id}/sends`, { to: ["supplier@vendor.example"], subject: "Payment run for December", text: "Ready." }, 201, benToken);
  await post(`/api/mailboxes/${made.finance.id}/sends/${asked.id}/submit`, undefined, 200, benToken);

  // Sources: one that keeps a reminder for the administrator, one revoked.
  const visa = await post("/api/reminder-sources", { name: "visa-office" });
  await ok(call("PUT", "/api/source/events", {
    token: visa.credential,
    body: { person: ADMIN.email, source_ref: "visa-4471", topic: "renewal", title: "Residence permit renewal", due_at: day(45) },
  }), 200);
  const old = await post("/api/reminder-sources", { name: "old-calendar-import" });
  await post(`/api/reminder-sources/${old.source.id}/revoke`, undefined, 200);
  for (const event of [
    { title: "Call the landlord about the boiler", due_at: day(0) },
    { title: "Dentist", subtitle: "Dr Okafor, 2nd floor", due_at: `${day(10)}T09:30` },
    { title: "Send the quarterly VAT return", due_at: day(-2), done_label: "Filed" },
  ]) await post("/api/me/events", event);

  // The administrator also reviews: an export of both mailboxes, which the
  // per-minute run below builds.
  await desk.grant(made.admin.id, ["ediscovery.export"], "org");
  made.export = await post("/api/exports", { mailbox_ids: [made.support.id, made.finance.id] });

  // Reminders due today and overdue reach the feed from the per-minute run.
  await node.scheduled("* * * * *");

  // A butler on support@, sponsored by Ben (through the team), with a condition
  // of every kind; its first version published, its second a draft.
  const butlers = `/api/mailboxes/${made.support.id}/butlers`;
  made.butler = await post(butlers, {
    name: "Invoices to Maximiliana, waiting",
    sponsor: made.ben.id,
    rules: {
      conditions: [
        { on: "subject", contains: "invoice" }, { on: "from", contains: "customer.example" }, { on: "recipients", contains: "support" },
        { on: "sender_authentication", is: "unverified" }, { on: "attachments", is: false },
      ],
      effects: [{ do: "assign", assignee: made.max.id }, { do: "set_status", status: "waiting" }],
    },
  });
  await post(`${butlers}/${made.butler.id}/publish`, { version: 1 }, 200);
  await ok(call("PATCH", `${butlers}/${made.butler.id}`, { token, body: { rules: { conditions: [], effects: [{ do: "set_status", status: "closed" }] } } }), 200);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** The day `offset` days from today (UTC), as `YYYY-MM-DD`. */
function day(offset) {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The sections, each with what shows it has loaded. `codes`: whether relations
 * and capabilities appear in it, and so must read in words.
 */
const SECTIONS = [
  { route: "people", title: "People", ready: (page) => page.getByRole("table", { name: "People on this node" }), codes: true },
  { route: "teams", title: "Teams", ready: (page) => page.getByRole("table", { name: "Members of Customer support and success" }), codes: true },
  { route: "mailboxes", title: "Mailboxes", ready: (page) => page.getByRole("table", { name: "Mailboxes on this node" }), codes: true },
  { route: "relations", title: "Relations", ready: (page) => page.getByRole("table", { name: "Relationship tuples" }), codes: true },
  { route: "agents", title: "Agents", ready: (page) => page.getByRole("table", { name: /^Agents on this node/ }), codes: true },
  { route: "sources", title: "Sources", ready: (page) => page.getByRole("table", { name: /^Reminder sources/ }), codes: true },
  { route: "organisations", title: "Connected organisations", ready: (page) => page.getByRole("region", { name: "Every organisation" }).getByText("No organisation is connected yet."), codes: true },
  { route: "butlers", title: "Butlers", ready: (page) => page.getByRole("region", { name: "Create a butler" }), codes: true },
  { route: "exports", title: "Exports", ready: (page) => page.getByRole("table", { name: "Your exports, newest first" }).getByText("Ready"), codes: true },
  { route: "audit", title: "Audit", ready: (page) => page.getByRole("table", { name: "Audit entries, newest first" }).getByRole("row").nth(5), codes: true },
  { route: "reminders", title: "Reminders", ready: (page) => page.getByText("Call the landlord about the boiler"), codes: false },
  { route: "notifications", title: "Notifications", ready: (page) => page.getByRole("list", { name: "Notifications, newest first" }).getByRole("listitem").filter({ hasText: "Reminder due: " }), codes: true },
  { route: "connections", title: "Connections", ready: (page) => page.getByRole("heading", { name: "Calendar assistant" }), codes: false },
];

/** The height a finger needs to press a control (WCAG 2.5.5's 44 CSS px). */
const TAP = 44;

/**
 * Every control shown in the banner and the view a finger presses that is less
 * than TAP px tall: buttons, form fields, summaries, links drawn as buttons,
 * links in a navigation (links inside running text are left out, as WCAG's
 * target size leaves them).
 */
const tooSmallToTap = (page) => page.evaluate((tap) => {
  const small = [];
  for (const element of document.querySelectorAll(
    "header :is(button, a, input, select), main :is(button, input, select, textarea, summary, a.button, nav a)")) {
    if (!element.checkVisibility({ checkVisibilityCSS: true })) continue;
    const box = element.getBoundingClientRect();
    // Visually hidden (a screen reader's), not a target.
    if (box.width <= 1 || box.height <= 1) continue;
    if (box.height < tap - 0.5) small.push(`${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replaceAll(" ", ".")}` : ""} “${(element.innerText || element.value || element.getAttribute("aria-label") || element.type || "").trim().slice(0, 40)}” ${Math.round(box.height)}px tall`);
  }
  return small;
}, TAP);

/** Fails where a phone shows a control too small to tap. */
async function assertTappable(page, where) {
  assert.deepEqual(await tooSmallToTap(page), [], `${where}: too small to tap on a phone`);
}

/** The page as shown (browser-helpers.mjs), with the text a person can see. */
const measure = (page) => measureShown(page, { text: true });

/** Every relation and capability code the vocabulary publishes, as a pattern for visible text. */
const codesPattern = () => new RegExp(`(?<![\\w.@-])(?:${[...vocabulary.relations, ...vocabulary.capabilities]
  .map((entry) => entry.name.replaceAll(".", "\\.")).join("|")})(?![\\w-]|\\.\\w)`, "g");

const runs = {};

for (const layout of LAYOUTS) {
  const run = {};
  runs[layout.name] = run;

  test(`${layout.name}: the administrator signs in`, async () => {
    const { name, ...options } = layout;
    ({ page: run.page } = await watch.open(browser, { who: name, ...options, locale: "en-GB" }));
    const page = run.page;
    await signIn(page, node.url, ADMIN);
    assert.equal(await page.evaluate(() => window.innerWidth), layout.viewport.width);
  });

  test(`${layout.name}: the banner is no taller than 64px, and on a phone its Menu button opens the navigation`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/mail"));
    await page.getByRole("heading", { name: "Mail", level: 1 }).waitFor();
    const banner = page.getByRole("banner");
    const { height } = await banner.boundingBox();
    assert.ok(height <= 64, `the banner is ${height}px tall`);
    const menu = banner.getByRole("button", { name: /^Menu\b/ });
    const navigation = page.getByRole("navigation", { name: "Sections", includeHidden: true });
    if (layout.name !== "phone") {
      assert.equal(await menu.isVisible(), false, "no Menu where the navigation fits");
      assert.ok(await navigation.getByRole("link", { name: "Notifications", exact: true }).isVisible());
      return;
    }
    assert.equal(await navigation.isVisible(), false, "the navigation waits behind Menu");
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    await menu.tap();
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await navigation.getByRole("link", { name: "Notifications", exact: true }).waitFor();
    assert.ok(await banner.getByText(ADMIN.name).isVisible(), "who is signed in, in the menu");
    assertFits(await measure(page), "the menu open");
    await assertTappable(page, "the menu open");
    await navigation.getByRole("button", { name: "Administration" }).tap();
    await navigation.getByRole("link", { name: "Audit", exact: true }).waitFor();
    assertFits(await measure(page), "the menu and the Administration menu open");
    await assertTappable(page, "the menu and the Administration menu open");

    // Escape closes it, the focus back on Menu; choosing a section closes it too.
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await navigation.isVisible(), false);
    assert.match(await page.evaluate(() => document.activeElement.textContent), /^Menu/);
    await menu.tap();
    await navigation.getByRole("link", { name: "Reminders", exact: true }).tap();
    await page.getByRole("heading", { name: "Reminders", level: 1 }).waitFor();
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await navigation.isVisible(), false);
  });

  test(`${layout.name}: the daily sections come first, and the administration ones wait under one menu that works by keyboard`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/mail"));
    await page.getByRole("heading", { name: "Mail", level: 1 }).waitFor();
    await showNavigation(page);
    // Found while closed too: on a phone, choosing a section closes Menu with it.
    const navigation = page.getByRole("navigation", { name: "Sections", includeHidden: true });
    const administration = navigation.getByRole("button", { name: "Administration", includeHidden: true });
    assert.equal(await administration.getAttribute("aria-expanded"), "false");
    const shown = async () => (await navigation.getByRole("link").allInnerTexts()).map((text) => text.trim());
    assert.deepEqual(await shown(), ["Mail", "Notifications", "Reminders", "Approvals", "Connections", "Account"], "the daily sections, and only they, in view");

    // Opened from the keyboard, the menu holds every administration section, reached with Tab.
    await administration.focus();
    await page.keyboard.press("Enter");
    assert.equal(await administration.getAttribute("aria-expanded"), "true");
    const menu = page.locator(`#${await administration.getAttribute("aria-controls")}`);
    const admin = ["People", "Teams", "Mailboxes", "Butlers", "Relations", "Agents", "Connected organisations", "Sources", "Exports", "Audit"];
    assert.deepEqual((await menu.getByRole("link").allInnerTexts()).map((text) => text.trim()), admin);
    assertFits(await measure(page), "the Administration menu open");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "People");

    // Escape closes it and gives the focus back to its button.
    await page.keyboard.press("Escape");
    assert.equal(await administration.getAttribute("aria-expanded"), "false");
    assert.equal(await menu.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "Administration");

    // Choosing a section closes it.
    await page.keyboard.press("Space");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Teams", level: 1 }).waitFor();
    assert.equal(await administration.getAttribute("aria-expanded"), "false");
    assert.equal(await menu.isVisible(), false);
    assert.equal(await menu.getByRole("link", { name: "Teams", includeHidden: true }).getAttribute("aria-current"), "page");
  });

  for (const section of SECTIONS) {
    test(`${layout.name}: ${section.title} fits the window, in words and names`, async () => {
      const page = run.page;
      await page.evaluate((route) => (location.hash = `#/${route}`), section.route);
      await page.getByRole("heading", { name: section.title, level: 1 }).waitFor();
      await section.ready(page).first().waitFor();
      await page.getByRole("main").getByText("Loading…").waitFor({ state: "detached" });
      const measured = await measure(page);
      assertFits(measured, section.title);
      if (layout.name === "phone") await assertTappable(page, section.title);

      // Whoever the page can name is named, not shown by id.
      const known = new Map([made.admin, made.ben, made.max, made.cleo, made.team, made.quiet, made.support, made.finance]
        .map((entry) => [entry.id, entry.name ?? entry.address])
        .concat([made.triage, made.paused, made.revoked, made.travel, made.calendar].map(({ agent }) => [agent.id, agent.name])));
      const ids = [...new Set(measured.text.match(ID) ?? [])].filter((id) => known.has(id));
      assert.deepEqual(ids.map((id) => `${id} (${known.get(id)})`), [], `${section.title}: ids shown where the name is known`);

      if (section.codes) {
        const codes = [...new Set(measured.text.match(codesPattern()) ?? [])];
        assert.deepEqual(codes, [], `${section.title}: codes shown instead of words`);
      }
    });
  }

  test(`${layout.name}: Mail's views fit the window, in words and names`, async () => {
    const page = run.page;
    const support = made.support.id;
    const views = [
      ["the inbox", "#/mail", () => page.getByRole("link", { name: made.receipt.subject }).first()],
      ["a conversation", `#/mail/${support}/${made.reply.thread_id}`, () => page.getByRole("heading", { name: made.receipt.subject, level: 2 })],
      ["every message", `#/mail/${support}/messages`, () => page.getByRole("link", { name: made.receipt.subject })],
      ["a message", `#/mail/${support}/${made.receipt.id}`, () => page.getByRole("heading", { name: made.receipt.subject, level: 2 })],
      ["a search", "#/mail/search/invoice", () => page.getByRole("link", { name: made.receipt.subject })],
      ["outbound", `#/mail/${support}/outbound`, () => page.getByText(made.reply.subject).first()],
      ["a send with a file", `#/mail/${support}/outbound/${made.reply.id}`, () => page.getByRole("link", { name: /invoice-4471/ })],
      ["your mailboxes", "#/mail/mailboxes", () => page.getByRole("table", { name: "Mailboxes I can read" })],
    ];
    for (const [where, hash, ready] of views) {
      await page.evaluate((at) => (location.hash = at), hash);
      await ready().waitFor();
      await page.getByRole("main").getByText("Loading…").waitFor({ state: "detached" });
      const measured = await measure(page);
      assertFits(measured, where);
      if (layout.name === "phone") await assertTappable(page, where);
      const codes = [...new Set(measured.text.match(codesPattern()) ?? [])];
      assert.deepEqual(codes, [], `${where}: codes shown instead of words`);
      const ids = [...new Set(measured.text.match(ID) ?? [])].filter((id) => [made.admin.id, support].includes(id));
      assert.deepEqual(ids, [], `${where}: ids shown where the name is known`);
    }
  });

  test(`${layout.name}: a mailbox's butlers, a butler's versions and its dry run fit the window, in words and names`, async () => {
    const page = run.page;
    const check = (measured, where) => {
      assertFits(measured, where);
      assert.deepEqual([...new Set(measured.text.match(codesPattern()) ?? [])], [], `${where}: codes shown instead of words`);
      const ids = [...new Set(measured.text.match(ID) ?? [])].filter((id) => [made.admin.id, made.ben.id, made.max.id, made.support.id].includes(id));
      assert.deepEqual(ids, [], `${where}: ids shown where the name is known`);
    };
    await page.evaluate((at) => (location.hash = at), `#/butlers/${made.support.id}`);
    await page.getByRole("table", { name: `Butlers on ${SUPPORT.address}` }).waitFor();
    check(await measure(page), "a mailbox's butlers");
    await page.getByRole("link", { name: made.butler.name }).click();
    const region = page.getByRole("region", { name: "Try it on a past message" });
    await region.getByRole("option", { name: new RegExp(`^${made.receipt.subject.replace("?", "\\?")} · `) }).waitFor({ state: "attached" });
    await region.getByLabel("Version").selectOption("1");
    await region.getByRole("button", { name: "Try it" }).click();
    const result = region.getByRole("region", { name: "Dry run" });
    await result.waitFor();
    const measured = await measure(page);
    check(measured, "a butler, its versions and a dry run");
    assert.ok(measured.text.includes(`Assign the conversation to ${MAX.name}`), "the assignee by name");
    for (const relation of ["mailbox.metadata.read", "send.propose"]) {
      assert.ok(measured.text.includes(vocabulary.relations.find((entry) => entry.name === relation).description), `${relation} pinned, in words`);
    }
  });

  test(`${layout.name}: an export's page, its objects and their hashes fit the window, in words and names`, async () => {
    const page = run.page;
    await page.evaluate((at) => (location.hash = at), `#/exports/${made.export.id}`);
    await page.getByRole("table", { name: "What it holds" }).getByRole("link", { name: `Download ${made.receipt.subject}` }).waitFor();
    const measured = await measure(page);
    assertFits(measured, "an export's page");
    assert.deepEqual([...new Set(measured.text.match(codesPattern()) ?? [])], [], "an export's page: codes shown instead of words");
    const ids = [...new Set(measured.text.match(ID) ?? [])].filter((id) => [made.support.id, made.finance.id].includes(id));
    assert.deepEqual(ids, [], "an export's page: ids shown where the name is known");
    for (const { address } of [SUPPORT, FINANCE]) assert.ok(measured.text.includes(address), `${address} by address`);
  });

  test(`${layout.name}: relations read in the vocabulary's words, and their codes are there on request`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/relations"));
    const tuples = page.getByRole("table", { name: "Relationship tuples" });
    await tuples.waitFor();
    const text = (await measure(page)).text;
    for (const relation of vocabulary.relations) assert.ok(text.includes(relation.description), `“${relation.description}” is shown for ${relation.name}`);
    // The team holds its relations as its members; Max by name.
    assert.ok(text.includes("Members of Customer support and success"));
    assert.ok(text.includes(MAX.name));

    // Granting offers the relations in words, with nothing chosen.
    const choice = page.getByLabel("Relation", { exact: true });
    assert.equal(await choice.inputValue(), "");
    const offered = await choice.locator("option").allTextContents();
    for (const relation of vocabulary.relations) assert.ok(offered.some((option) => option.includes(relation.description)), relation.name);
    assert.equal(offered.some((option) => vocabulary.relations.some((relation) => option.trim() === relation.name)), false, "no option is a bare code");

    // Asked for, the codes and ids are shown, and still fit the window.
    await page.getByLabel("Show ids and codes").check();
    const shown = await measure(page);
    assertFits(shown, "Relations with codes");
    for (const relation of vocabulary.relations) assert.ok(shown.text.includes(relation.name), `${relation.name} is shown on request`);
    assert.ok(shown.text.includes(`${made.team.id}#member`));
    await page.getByLabel("Show ids and codes").uncheck();
    assert.equal((await measure(page)).text.includes("mailbox.content.read"), false);
  });

  test(`${layout.name}: an agent's ceiling and mailboxes read in words, with its dates, state and actions in view`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/agents"));
    const row = page.getByRole("table", { name: /^Agents on this node/ }).getByRole("row").filter({ hasText: "Invoice triage assistant" });
    await row.waitFor();
    const text = (await measure(page)).text;
    for (const name of ["identity.read", "mail.triage", "mail.read", "mail.draft"]) {
      const capability = vocabulary.capabilities.find((entry) => entry.name === name);
      assert.ok(text.includes(capability.summary), `${name} reads “${capability.summary}”`);
    }
    for (const button of ["Pause Invoice triage assistant", "Issue pairing code Invoice triage assistant", "Revoke Invoice triage assistant"]) {
      assert.ok(await row.getByRole("button", { name: button }).isVisible(), button);
    }
    assert.ok(await page.getByRole("row").filter({ hasText: "Weekend watcher" }).getByText("paused", { exact: true }).isVisible());
    assert.ok(await page.getByRole("row").filter({ hasText: "Retired helper" }).getByText("revoked", { exact: true }).isVisible());

    // The mint form's grid, once a sponsor is chosen, fits too, in words.
    const form = page.getByRole("region", { name: "Mint an agent" });
    await form.getByLabel("Sponsor").selectOption(made.ben.id);
    await form.getByRole("group", { name: FINANCE.address }).getByRole("checkbox", { name: /^Read the bodies and attachments of mail/ }).waitFor();
    const minting = await measure(page);
    assertFits(minting, "the mint form with a sponsor");
    assert.deepEqual([...new Set(minting.text.match(codesPattern()) ?? [])], [], "the mint form speaks in words");
  });

  test(`${layout.name}: the audit trail names relations, people and mailboxes in words`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/audit"));
    const rows = page.getByRole("table", { name: "Audit entries, newest first" }).getByRole("row");
    const grant = rows.filter({ hasText: "Grant a relation" }).filter({ hasText: "ediscovery" }).filter({ hasText: MAX.name });
    // Every stream the pages before opened and closed is on the record too, so
    // the grant may be a page or two back: older entries are asked for as a
    // person would.
    await rows.nth(5).waitFor();
    for (let pages = 0; (await grant.count()) === 0 && pages < 5; pages += 1) {
      const shown = await rows.count();
      await page.getByRole("button", { name: "Show older entries" }).click();
      await rows.nth(shown).waitFor();
    }
    await grant.waitFor();
    const shown = await grant.evaluate((element) => element.innerText);
    const ediscovery = vocabulary.relations.find((relation) => relation.name === "ediscovery.export");
    assert.ok(shown.includes(ediscovery.description), shown);
    assert.ok(shown.includes(MAX.name), shown);
  });

  test(`${layout.name}: the audit trail narrows to who did what, and when`, async () => {
    const page = run.page;
    await page.evaluate(() => (location.hash = "#/audit"));
    const table = page.getByRole("table", { name: "Audit entries, newest first" });
    const rows = table.getByRole("row");
    await rows.nth(5).waitFor();
    const filters = page.getByRole("search", { name: "Narrow the audit trail" });
    const shownCells = (column) => rows.evaluateAll((all, at) => all.slice(1).map((one) => one.cells[at]?.innerText.trim()), column);
    const narrowed = async (change) => {
      await change();
      await filters.getByRole("button", { name: "Show", exact: true }).click();
      await page.getByRole("button", { name: "Show", exact: true }).and(page.locator(":enabled")).waitFor();
    };

    // What: an action met in the trail, in the contract's words.
    await narrowed(() => filters.getByLabel("What").selectOption({ label: "Grant a relation" }));
    const actions = await shownCells(2);
    assert.ok(actions.length > 0 && actions.every((action) => action === "Grant a relation"), actions.join(", "));
    // Who: the administrator made every grant; Max made none.
    await narrowed(() => filters.getByLabel("Who").selectOption({ label: ADMIN.name }));
    assert.deepEqual(await shownCells(2), actions, "the administrator made each grant");
    await narrowed(() => filters.getByLabel("Who").selectOption({ label: MAX.name }));
    await page.getByText("No entry matches.").waitFor();
    // When: today holds them; a day long past holds none.
    const today = new Date().toLocaleDateString("en-CA");
    await narrowed(async () => {
      await filters.getByLabel("Who").selectOption({ label: "Anyone" });
      await filters.getByLabel("From").fill(today);
      await filters.getByLabel("To").fill(today);
    });
    assert.deepEqual(await shownCells(2), actions);
    // A window that ends before it starts is refused, naming the field.
    watch.expectRefusal(400, "/api/audit");
    await narrowed(() => filters.getByLabel("To").fill("2020-01-01"));
    const refusal = filters.getByRole("alert");
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /^The trail was not narrowed: check “To”\./);
    await assertFits(await measure(page), `${layout.name}: the trail narrowed`);
    await filters.getByRole("button", { name: "Show everything" }).click();
    await refusal.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Show", exact: true }).and(page.locator(":enabled")).waitFor();
    assert.ok(new Set(await shownCells(2)).size > 1, "every action again");
  });
}

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

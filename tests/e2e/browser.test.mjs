// The browser interface in a real browser: headless Chromium against the built
// Worker on workerd, driven the way a person would, by label, role and text.
// The session travels in `__Host-` cookies; every refusal the page provokes on
// purpose is declared, and anything else the console reports fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { startNode, setUp, signAccessToken, ADMIN } from "./harness.mjs";
import { assertAccessible, sectionLink, openSection } from "./browser-helpers.mjs";

const ACCESS_COOKIE = "__Host-mailroom-access";
const REFRESH_COOKIE = "__Host-mailroom-refresh";
const BEN = { name: "Ben Baker", email: "ben@example.com", password: "ben's first long password" };
const PERSON_ID = /usr_[0-9A-HJKMNP-TV-Z]{26}/;

let node, call, token, browser, context, page;
let benId;
const watch = new PageWatch();

before(async () => {
  node = await startNode();
  ({ call, token } = await setUp(node));
  browser = await launchChromium();
  ({ context, page } = await watch.open(browser));
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const cookies = async () => Object.fromEntries((await context.cookies()).map((cookie) => [cookie.name, cookie]));
const section = (name) => sectionLink(page, name);

test("the page is served under a strict Content-Security-Policy and opens on the sign-in form", async () => {
  const shell = await call("GET", "/");
  assert.equal(shell.status, 200);
  const policy = shell.headers.get("content-security-policy");
  assert.match(policy, /default-src 'none'/);
  // Inline scripts by hash only (the import map and the entry); the modules they
  // import are trusted through them and pinned by the import map's integrity.
  assert.match(policy, /script-src (?:'sha256-[A-Za-z0-9+/=]+' )+'strict-dynamic';/);
  const importMap = JSON.parse(/<script type="importmap">(.*?)<\/script>/s.exec(shell.text)?.[1] ?? "{}");
  const modules = Object.entries(importMap.integrity ?? {});
  assert.ok(modules.length > 0, "the import map pins the interface's modules");
  for (const [path, integrity] of modules) {
    const module = await call("GET", path);
    assert.equal(module.status, 200, path);
    assert.match(module.headers.get("content-type"), /^text\/javascript/);
    const digest = createHash("sha256").update(module.text).digest("base64");
    assert.equal(integrity, `sha256-${digest}`, `${path} is served exactly as the page pins it`);
  }
  // Styles by hash only: the page's, and the frame a message's HTML is shown in (which inherits this policy).
  assert.match(policy, /style-src 'sha256-[A-Za-z0-9+/=]+' 'sha256-[A-Za-z0-9+/=]+';/);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);

  const response = await page.goto(node.url);
  assert.equal(response.status(), 200);
  // The form exists only if the page's script ran, so its hash matched.
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  assert.ok(await page.getByLabel("Email").isVisible());
  assert.ok(await page.getByLabel("Password").isVisible());
  await assertAccessible(page, "the sign-in form");
});

test("the page asks for every module at once, each by its version, and a browser keeps them: the sign-in's readiness printed", async () => {
  const importMap = JSON.parse(/<script type="importmap">(.*?)<\/script>/s.exec((await call("GET", "/")).text)?.[1] ?? "{}");
  const versioned = Object.values(importMap.imports ?? {});
  assert.ok(versioned.length > 0 && versioned.every((url) => /^\/interface\/[a-z0-9.-]+\.js\?v=[0-9a-f]{16}$/.test(url)), versioned.join(", "));
  assert.deepEqual(Object.keys(importMap.integrity).sort(), [...versioned].sort(), "each versioned URL is pinned by its hash");
  const kept = await call("GET", versioned[0]);
  assert.equal(kept.headers.get("cache-control"), "public, max-age=31536000, immutable");
  const unversioned = await call("GET", Object.keys(importMap.imports)[0]);
  assert.equal(unversioned.headers.get("cache-control"), "no-cache", "a module asked for without its version is checked again");

  const fresh = await watch.open(browser, { who: "a first visit" });
  const asked = [];
  fresh.page.on("request", (request) => request.url().includes("/interface/") && asked.push(new URL(request.url()).pathname + new URL(request.url()).search));
  const ready = async () => {
    await fresh.page.goto(node.url);
    await fresh.page.getByLabel("Email").waitFor();
    return fresh.page.evaluate(() => Math.round(performance.now()));
  };
  const first = await ready();
  assert.deepEqual([...new Set(asked)].sort(), [...versioned].sort(), "every module, preloaded, each once, by its version");
  // The node's own log counts what reached it: on the next visit, nothing of the interface's script.
  const reached = () => (node.output().match(/GET \/interface\//g) ?? []).length;
  const before = reached();
  const again = await ready();
  assert.equal(reached(), before, "the second visit asked the node for no module");
  console.log(`sign-in usable ${first} ms after navigation on a first visit, ${again} ms on the next (${versioned.length} modules; local workerd)`);
  await fresh.context.close();
});

test("an administrator signs in through the form, and the session is held in __Host- cookies", async () => {
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByLabel("Password").press("Enter");

  const header = page.getByRole("banner");
  await header.getByRole("button", { name: "Sign out" }).waitFor();
  assert.match(await header.textContent(), new RegExp(`${ADMIN.name}.*${ADMIN.email}.*Administrator`));
  for (const name of ["People", "Teams", "Relations", "Audit", "Account"]) assert.equal(await section(name).count(), 1, name);
  assert.equal(await section("People").getAttribute("aria-current"), "page");

  const jar = await cookies();
  for (const name of [ACCESS_COOKIE, REFRESH_COOKIE]) {
    assert.ok(jar[name], `${name} was not stored on ${node.url}`);
    assert.equal(jar[name].httpOnly, true);
    assert.equal(jar[name].secure, true);
    assert.equal(jar[name].sameSite, "Strict");
    assert.equal(jar[name].path, "/");
  }
  assert.equal(await page.evaluate(() => document.cookie), "", "the session cookies are out of the script's reach");
});

test("a refusal is shown beside the form that provoked it: message, reason and fix", async () => {
  const weak = { ...BEN, password: "too short" };
  const refusal = (await call("POST", "/api/people", { token, body: weak })).body.error;
  assert.equal(refusal.code, "weak_password");

  watch.expectRefusal(400, "/api/people");
  await page.getByLabel("Name", { exact: true }).fill(weak.name);
  await page.getByLabel("Email", { exact: true }).fill(weak.email);
  await page.getByLabel("First password").fill(weak.password);
  await page.getByRole("button", { name: "Create person" }).click();

  const alert = page.getByRole("region", { name: "Create a person" }).getByRole("alert");
  await alert.waitFor();
  const shown = await alert.innerText();
  for (const part of [refusal.message, refusal.reason, refusal.fix]) assert.ok(shown.includes(part), `${part} in ${shown}`);
  // The code and status are for whoever helps: behind "Technical details", closed until asked for.
  assert.ok(!shown.includes(refusal.code), `the code is not in the words: ${shown}`);
  await alert.getByText("Technical details").click();
  const details = await alert.locator("details").innerText();
  for (const part of [refusal.code, "400"]) assert.ok(details.includes(part), `${part} in ${details}`);
  // Words the node already put as a person would are not said twice.
  assert.ok(!details.includes(refusal.reason), details);
  await assertAccessible(page, "People, with a refusal");
});

test("an administrator creates a person through the form", async () => {
  await page.getByLabel("First password").fill(BEN.password);
  await page.getByRole("button", { name: "Create person" }).click();

  const row = page.getByRole("row").filter({ hasText: BEN.email });
  await row.waitFor();
  assert.match(await row.textContent(), new RegExp(BEN.name));
  benId = (await row.textContent()).match(PERSON_ID)?.[0];
  assert.ok(benId, "the new person's id is shown");
  assert.equal(await page.getByRole("region", { name: "Create a person" }).getByRole("alert").count(), 0, "the old refusal is gone");

  const person = await call("GET", `/api/people/${benId}`, { token });
  assert.equal(person.status, 200, person.text);
  assert.equal(person.body.email, BEN.email);
  assert.equal(person.body.disabled_at, undefined);
});

test("a later success anywhere on the page clears an earlier refusal", async () => {
  watch.expectRefusal(400, "/api/people");
  const form = page.getByRole("region", { name: "Create a person" });
  await page.getByLabel("Name", { exact: true }).fill("Short");
  await page.getByLabel("Email", { exact: true }).fill("short@example.com");
  await page.getByLabel("First password").fill("short");
  await page.getByRole("button", { name: "Create person" }).click();
  await form.getByRole("alert").waitFor();

  // Another action on the page succeeds: the old refusal no longer stands.
  const row = () => page.getByRole("row").filter({ hasText: BEN.email });
  await row().getByRole("button", { name: `Disable ${BEN.name}` }).click();
  await row().getByText("Disabled", { exact: true }).waitFor();
  assert.equal(await form.getByRole("alert").count(), 0, "the create form's refusal was cleared");
  await row().getByRole("button", { name: `Enable ${BEN.name}` }).click();
  await row().getByText("Active", { exact: true }).waitFor();
  assert.equal((await call("GET", `/api/people/${benId}`, { token })).body.disabled_at, undefined);
  // What was typed is put back as it was, so leaving the page has nothing to ask.
  for (const label of ["Name", "Email", "First password"]) await page.getByLabel(label, { exact: true }).fill("");
});

test("leaving a view with something typed and not saved asks first; staying keeps it, and the page stays as it was", async () => {
  await page.getByLabel("Name", { exact: true }).fill("Half typed");
  // Staying: the view, and what was typed, stay.
  const stay = new Promise((resolve) => page.once("dialog", (dialog) => {
    resolve([dialog.type(), dialog.message()]);
    dialog.dismiss();
  }));
  await openSection(page, "Relations");
  const [kind, said] = await stay;
  assert.equal(kind, "confirm");
  assert.match(said, /not saved/);
  await page.waitForURL((url) => url.hash === "#/people");
  assert.equal(await page.getByLabel("Name", { exact: true }).inputValue(), "Half typed");
  assert.ok(await page.getByRole("heading", { name: "People", level: 1 }).isVisible());
  // Closing the tab asks too (the browser's own question).
  const closing = new Promise((resolve) => page.once("dialog", (dialog) => {
    resolve(dialog.type());
    dialog.dismiss();
  }));
  await page.close({ runBeforeUnload: true });
  assert.equal(await closing, "beforeunload");
  assert.equal(page.isClosed(), false, "kept open");
  // Put back as it was, nothing is asked.
  await page.getByLabel("Name", { exact: true }).fill("");
  await openSection(page, "Teams");
  await page.getByRole("heading", { name: "Teams", level: 1 }).waitFor();
  await openSection(page, "People");
  await page.getByRole("heading", { name: "People", level: 1 }).waitFor();
});

test("an administrator grants the person org.admin through the form", async () => {
  await openSection(page, "Relations");
  await page.getByRole("heading", { name: "Relations", level: 1 }).waitFor();
  await page.getByLabel("Subject", { exact: true }).selectOption(benId);
  // Nothing is chosen for the administrator: choosing the person and granting grants nothing.
  assert.equal(await page.getByLabel("Relation", { exact: true }).inputValue(), "");
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  await page.getByLabel("Relation", { exact: true }).selectOption("org.admin");
  await page.getByLabel("Object", { exact: true }).selectOption("org");
  // Administration is asked for twice: unticked, the form does not send.
  await page.getByRole("button", { name: "Grant", exact: true }).click();
  const before = await call("GET", `/api/relations?subject=${benId}`, { token });
  assert.deepEqual(before.body.relations, [], "nothing granted without the choice and the confirmation");
  await page.getByLabel(/Make them an administrator of the whole node/).check();
  await page.getByRole("button", { name: "Grant", exact: true }).click();

  // Said in the vocabulary's words, and by name; the code is there on request.
  await page.getByRole("status").filter({ hasText: `Granted to ${BEN.name} on the organisation: Administer the node` }).waitFor();
  const row = page.getByRole("row").filter({ hasText: benId }).filter({ hasText: "org.admin" });
  await row.waitFor();
  assert.ok(await row.getByRole("button", { name: new RegExp(`^Revoke “Administer the node: .*” on the organisation from ${BEN.name}$`) }).isVisible());

  const held = await call("GET", `/api/relations?subject=${benId}`, { token });
  assert.deepEqual(held.body.relations.map(({ relation, object }) => ({ relation, object })), [{ relation: "org.admin", object: "org" }]);
});

test("the audit section shows the grant, and Verify reports the chain intact", async () => {
  await openSection(page, "Audit");
  const row = page.getByRole("row").filter({ hasText: "Grant a relation" }).filter({ hasText: benId });
  await row.waitFor();
  const cells = await row.getByRole("cell").allTextContents();
  const [when, actor, , object, , detail] = cells;
  const seq = when.match(/#(\d+)/)?.[1];
  assert.ok(seq, when);
  assert.match(actor, new RegExp(`^${ADMIN.name}`), "the actor is shown by name");
  // Read as words: what was done in the contract's words, and whether it was done.
  const [, , action, , outcome] = await row.getByRole("cell").evaluateAll((shown) => shown.map((cell) => cell.innerText));
  assert.equal(action, "Grant a relation");
  assert.match(object, /org/);
  assert.equal(outcome, "Done");
  assert.match(detail, /org\.admin/);
  assert.match(detail, new RegExp(BEN.name));
  await assertAccessible(page, "the audit trail");

  const entries = (await call("GET", "/api/audit?limit=200", { token })).body.entries;
  const grant = entries.find((entry) => entry.action === "grant_relation" && entry.detail?.subject === benId);
  assert.equal(String(grant.seq), seq);

  await page.getByRole("button", { name: "Verify chain" }).click();
  const verdict = page.getByText(/Chain intact: \d+ entries checked/);
  await verdict.waitFor();
  const checked = Number((await verdict.textContent()).match(/(\d+) entries/)[1]);
  const verification = (await call("GET", "/api/audit/verify", { token })).body;
  assert.equal(verification.intact, true);
  assert.equal(checked, verification.checked);
  assert.equal(checked, entries[0].seq, "every entry was checked");
});

test("disabling someone and revoking a relation are done at once, and Undo puts each back", async () => {
  await openSection(page, "Relations");
  await page.getByRole("heading", { name: "Relations", level: 1 }).waitFor();
  const held = async () => (await call("GET", `/api/relations?subject=${benId}`, { token })).body.relations.map(({ relation, object }) => `${relation} ${object}`);
  await page.getByRole("button", { name: new RegExp(`^Revoke “Administer the node: .*” on the organisation from ${BEN.name}$`) }).click();
  const revoked = page.getByRole("status").filter({ hasText: `from ${BEN.name}.` });
  await revoked.waitFor();
  assert.deepEqual(await held(), [], "revoked at once");
  await revoked.getByRole("button", { name: "Undo" }).click();
  await page.getByRole("status").filter({ hasText: `to ${BEN.name} again.` }).waitFor();
  assert.deepEqual(await held(), ["org.admin org"], "granted again");

  await openSection(page, "People");
  const row = () => page.getByRole("row").filter({ hasText: BEN.email });
  await row().getByRole("button", { name: `Disable ${BEN.name}` }).click();
  const disabled = page.getByRole("status").filter({ hasText: `Disabled ${BEN.name}` });
  await disabled.waitFor();
  assert.ok((await call("GET", `/api/people/${benId}`, { token })).body.disabled_at, "disabled at once");
  await disabled.getByRole("button", { name: "Undo" }).click();
  await page.getByRole("status").filter({ hasText: `Enabled ${BEN.name} again.` }).waitFor();
  await row().getByText("Active", { exact: true }).waitFor();
  assert.equal((await call("GET", `/api/people/${benId}`, { token })).body.disabled_at, undefined);
  // Back where the next test reloads the page.
  await openSection(page, "Audit");
  await page.getByRole("row").filter({ hasText: "grant_relation" }).first().waitFor();
});

test("when the access token expires, the page renews the session from the refresh cookie", async () => {
  // The access cookie outlives its 15-minute token, so an expired token is what
  // the browser presents. Make it one now: same person and session, signed with
  // the node's key, expired a second ago.
  const jar = await cookies();
  const refreshBefore = jar[REFRESH_COOKIE].value;
  const claims = JSON.parse(Buffer.from(jar[ACCESS_COOKIE].value.slice("mr_ses_".length).split(".")[0], "base64url"));
  assert.ok(claims.e - Date.now() <= 15 * 60 * 1000 && claims.e > Date.now(), "the token inside lasts 15 minutes");
  assert.ok(jar[ACCESS_COOKIE].expires * 1000 - Date.now() > 24 * 60 * 60 * 1000, "the cookie lasts as long as the session");
  const expired = signAccessToken(node.secrets.SESSION_SECRET, { ...claims, e: Date.now() - 1000 });
  // A __Host- cookie cannot be planted from outside the page, so the next
  // request for who is signed in carries the expired token instead, once.
  let substituted = false;
  await page.route("**/api/me", async (route) => {
    if (substituted) return route.continue();
    substituted = true;
    const headers = { ...route.request().headers() };
    headers.cookie = `${ACCESS_COOKIE}=${expired}; ${REFRESH_COOKIE}=${jar[REFRESH_COOKIE].value}`;
    await route.fulfill({ response: await route.fetch({ headers }) });
  });
  watch.expectRefusal(401, "/api/me");
  await page.reload();

  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).waitFor();
  await page.getByRole("heading", { name: "Audit", level: 1 }).waitFor();
  // The trail shown means the section has made its last request: signing out
  // (the next test) before then would have it refused, a 401 in the console.
  await page.getByRole("row").filter({ hasText: "grant_relation" }).first().waitFor();
  await page.unroute("**/api/me");
  assert.ok(substituted, "the expired token was presented");
  const renewed = await cookies();
  assert.notEqual(renewed[ACCESS_COOKIE].value, jar[ACCESS_COOKIE].value, "a new access cookie was set");
  assert.notEqual(renewed[REFRESH_COOKIE].value, refreshBefore, "the refresh token rotated");
});

test("a session that runs out keeps the page and what was typed: the person signs in again over it, and sends it", async () => {
  await openSection(page, "Reminders");
  const add = page.getByRole("region", { name: "Add a reminder" });
  await add.getByLabel("What is due").fill("Renew the lease");
  await add.getByLabel("Due date").fill("2027-01-15");
  // The session runs out: the browser holds no cookie the node would take.
  await context.clearCookies();
  watch.expectRefusal(401, "/api/me/events");
  await add.getByRole("button", { name: "Add reminder" }).click();
  const dialog = page.getByRole("dialog", { name: "Sign in again to go on" });
  await dialog.waitFor();
  assert.equal(await add.getByLabel("What is due").inputValue(), "Renew the lease", "the form behind it keeps what was typed");
  assert.equal(await dialog.getByLabel("Email").inputValue(), ADMIN.email, "whose session it was");
  await assertAccessible(page, "signing in again");
  await dialog.getByLabel("Password").fill(ADMIN.password);
  await dialog.getByRole("button", { name: "Sign in" }).click();
  await dialog.waitFor({ state: "detached" });
  await page.getByText("You are signed in again.").waitFor();
  assert.equal(await add.getByLabel("What is due").inputValue(), "Renew the lease", "still there once back");
  await add.getByRole("button", { name: "Add reminder" }).click();
  await page.getByRole("heading", { name: "Renew the lease" }).waitFor();
  const events = (await call("GET", "/api/me/events", { token })).body.events;
  assert.equal(events.filter((event) => event.title === "Renew the lease").length, 1, "added once, after signing in again");
});

test("signing out ends the session and clears the cookies", async () => {
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  const jar = await cookies();
  assert.equal(jar[ACCESS_COOKIE], undefined);
  assert.equal(jar[REFRESH_COOKIE], undefined);
  await page.reload();
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
});

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);

  // The detector itself works: a style attribute is exactly what the policy forbids.
  await page.evaluate(() => document.body.setAttribute("style", "outline: 1px solid red"));
  for (let attempt = 0; attempt < 50 && watch.cspViolations.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(watch.cspViolations.length, 1, "a deliberate violation is reported");
  assert.match(watch.cspViolations[0], /^page: style-src-attr/);
});

// Reminders in a real browser: headless Chromium against the built Worker on
// workerd, at a desktop's width and a phone's. Each of two administrators (one
// per width) sets their time zone, quiet hours and a webhook (its secret shown
// once), adds reminders that land under Today and Upcoming, is refused a
// malformed one with the field named, moves one by editing its due date, sees a
// failed notification, acknowledges one and closes another with its own done
// label (found in the archive under that label), and creates a source in the
// Sources section whose credential pushes a reminder that shows its source and
// cannot be edited. No view may be wider than the window, and every console
// error and CSP violation fails the file, apart from the refusals provoked on purpose.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ADMIN } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn, openSection } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const PAT = { name: "Pat Phone", email: "pat@example.com", password: "pat's first long password" };
/** A webhook receiver that refuses every connection, so a notification fails at once, with an error. */
const HOOK = "https://localhost:9/mailroom";
/** The cron trigger that delivers reminders (wrangler.toml's first). */
const REMINDERS_CRON = "* * * * *";

let node, call, desk, browser;
const watch = new PageWatch();

/**
 * The two widths, each with its own administrator and browser. The desktop's
 * device is in its person's zone, so the page offers that zone; the phone's is
 * elsewhere, so its person chooses one from the list.
 */
const LAYOUTS = [
  { name: "desktop", person: ADMIN, viewport: { width: 1280, height: 900 }, deviceInZone: true },
  { name: "phone", person: PAT, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceInZone: false },
];

/** The day it is in `zone` now, as `YYYY-MM-DD`, and the hour. */
function nowIn(zone) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", hourCycle: "h23",
  }).formatToParts(new Date()).map((part) => [part.type, part.value]));
  return { day: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour) };
}
/** A day as the page writes it (its browser is set to en-US). */
const dayWords = (day) => new Intl.DateTimeFormat("en-US", { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" }).format(Date.parse(`${day}T00:00:00Z`));
const addDays = (day, days) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * Zones where it is now between 04:00 and 21:00: a reminder due today at 23:30
 * is still ahead for the length of the file, the day does not turn, and quiet
 * hours from 00:30 to 03:00 are not now.
 */
const ZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "America/Los_Angeles", "Asia/Kolkata", "Pacific/Auckland", "America/Sao_Paulo", "Asia/Dubai"]
  .filter((zone) => nowIn(zone).hour >= 4 && nowIn(zone).hour < 21);

before(async () => {
  assert.ok(ZONES.length >= 2, "two of the zones are in their day");
  ({ node, call, desk } = await startDesk());
  const pat = await desk.person(PAT);
  await desk.grant(pat.id, ["org.admin"], "org");
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

/** Runs the cron that delivers reminders, as its trigger would. */
async function deliverReminders() {
  await node.scheduled(REMINDERS_CRON);
}

/** Everything one width's run holds: its page, its person's token, zone and day. */
const runs = {};

for (const layout of LAYOUTS) {
  const run = {};
  runs[layout.name] = run;
  const page = () => run.page;
  const tab = (name) => page().getByRole("navigation", { name: "Reminders" }).getByRole("link", { name, exact: true });
  const statusSaying = (text) => page().getByRole("status").filter({ hasText: text });
  const group = (name) => page().getByRole("region", { name: new RegExp(`^${name} \\(\\d+\\)$`) });
  const card = (title) => page().getByRole("article").filter({ has: page().getByRole("heading", { name: title, exact: true }) });
  const addForm = () => page().getByRole("region", { name: "Add a reminder" });
  const openEvents = async () => (await ok(call("GET", "/api/me/events", { token: run.token }))).events;
  const eventTitled = async (title) => (await openEvents()).find((event) => event.title === title);

  /** Adds a reminder through the form; `time` and `fire_at` only when given. */
  async function add({ title, due, time, fireAt, doneLabel }) {
    const form = addForm();
    await form.getByLabel("What is due").fill(title);
    await form.getByLabel("Due date").fill(due);
    if (time) await form.getByLabel("Time (optional)").fill(time);
    if (fireAt) await form.getByLabel("Starts preparing on (optional)").fill(fireAt);
    if (doneLabel) await form.getByLabel("Label of its done button").fill(doneLabel);
    await form.getByRole("button", { name: "Add reminder" }).click();
  }

  test(`${layout.name}: signs in, and sets a time zone, quiet hours and email in Reminders`, async () => {
    run.zone = layout.name === "desktop" ? ZONES[0] : ZONES[1];
    run.today = nowIn(run.zone).day;
    const { person, deviceInZone, name, ...options } = layout;
    ({ page: run.page } = await watch.open(browser, { who: name, ...options, locale: "en-US", timezoneId: deviceInZone ? run.zone : "Pacific/Honolulu" }));
    run.token = await desk.signIn(person);
    await signIn(page(), node.url, person);
    assert.equal((await assertFits(page(), "after signing in")).width, layout.viewport.width, "the window is as wide as the layout");

    await openSection(page(), "Reminders");
    await page().getByRole("heading", { name: "Reminders", level: 1 }).waitFor();
    await group("Today").waitFor();
    await assertFits(page(), "the empty inbox");
    await tab("Time zone and notifications").click();
    const zone = page().getByLabel("Time zone", { exact: true });
    await zone.waitFor();
    assert.equal(await zone.inputValue(), "UTC", "a new person's zone is the node's default");
    if (deviceInZone) {
      await page().getByRole("button", { name: `Use this device's zone, ${run.zone.replaceAll("_", " ")}` }).click();
      assert.equal(await zone.inputValue(), run.zone);
    } else {
      assert.equal(await page().getByRole("button", { name: /Use this device's zone/ }).textContent(), "Use this device's zone, Pacific/Honolulu");
      await zone.selectOption(run.zone);
    }
    await page().getByLabel("Quiet from").fill("00:30");
    await page().getByLabel("Quiet until").fill("03:00");
    await page().getByLabel(`Email me at ${person.email}`).check();
    await page().getByRole("button", { name: "Save", exact: true }).click();
    await statusSaying(`Saved: ${run.zone}, quiet from 00:30 to 03:00, emails on.`).waitFor();
    const profile = await ok(call("GET", "/api/me/profile", { token: run.token }));
    assert.deepEqual([profile.tz, profile.quiet_start, profile.quiet_end, profile.channels.email], [run.zone, "00:30", "03:00", true]);
    await assertFits(page(), "the settings");
  });

  test(`${layout.name}: a malformed webhook address is refused naming the field, and a good one's secret is shown once`, async () => {
    const address = page().getByLabel("Webhook address");
    await address.fill("http://hooks.example.org/mailroom");
    watch.expectRefusal(400, "/api/me/profile/webhook");
    await page().getByRole("button", { name: "Set webhook" }).click();
    const refusal = page().getByRole("alert").filter({ hasText: "The webhook was not set: check “Webhook address”." });
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /^The webhook was not set: check “Webhook address”\.\n+“Webhook address” cannot be used as a webhook\.\n+Why: .*https.*\n+What to do: .*\n+Technical details$/s);
    assert.equal(await address.getAttribute("aria-invalid"), "true");
    assert.equal((await ok(call("GET", "/api/me/profile", { token: run.token }))).channels.webhook_url, null, "nothing was set");

    await address.fill(HOOK);
    await page().getByRole("button", { name: "Set webhook" }).click();
    await statusSaying("Webhook set. Its signing secret is below.").waitFor();
    const once = page().getByRole("region", { name: "The webhook's signing secret" });
    assert.match(await once.textContent(), /Shown once\..*it is not shown again/s);
    assert.match(await once.textContent(), /Mailroom-Signature: t=…,v1=….*HMAC-SHA256 of <t>\.<body>/s);
    const secret = await once.getByLabel("Signing secret").inputValue();
    assert.match(secret, /^whsec_\S{20,}$/);
    await assertFits(page(), "the webhook's secret");
    assert.equal((await ok(call("GET", "/api/me/profile", { token: run.token }))).channels.webhook_url, HOOK);

    await once.getByRole("button", { name: "I have copied it: hide it" }).click();
    assert.equal((await page().content()).includes(secret), false, "the secret is gone from the page");
    await page().reload();
    await page().getByText(`Notifications are posted to ${HOOK}.`).waitFor();
    assert.equal((await page().content()).includes(secret), false, "and is not shown again");
    assert.ok(await page().getByRole("button", { name: "Remove webhook" }).isVisible());
  });

  test(`${layout.name}: reminders added land under Today and Upcoming, with their distance in words`, async () => {
    await tab("Inbox").click();
    await addForm().waitFor();
    const fireHint = addForm().getByText(/^Empty: from /);
    await addForm().getByLabel("Due date").fill(addDays(run.today, 10));
    assert.equal(await fireHint.textContent(), `Empty: from ${dayWords(addDays(run.today, -20))}, 30 days before it is due. On or before the due date.`, "the default is shown as a hint");

    await add({ title: "Pay the rent", due: run.today, time: "23:30", doneLabel: "Paid" });
    await statusSaying("Added “Pay the rent”").filter({ hasText: "under Today" }).waitFor();
    const rent = group("Today").getByRole("article");
    assert.equal(await rent.count(), 1);
    assert.match(await rent.textContent(), /Pay the rent.*Due today.*23:30 · today, by 23:30/s);

    await add({ title: "Renew the passport", due: addDays(run.today, 10) });
    await statusSaying("Added “Renew the passport”").filter({ hasText: "under Upcoming" }).waitFor();
    const passport = group("Upcoming").getByRole("article").filter({ hasText: "Renew the passport" });
    assert.match(await passport.textContent(), /Preparing.*in 10 days.*Preparing since/s);

    await add({ title: "Book the dentist", due: addDays(run.today, 40) });
    await statusSaying("Added “Book the dentist”").waitFor();
    const dentist = group("Upcoming").getByRole("article").filter({ hasText: "Book the dentist" });
    assert.match(await dentist.textContent(), /Scheduled.*in 40 days.*Starts preparing on/s);
    // Soonest first.
    assert.deepEqual(await group("Upcoming").getByRole("heading", { level: 3 }).allTextContents(), ["Renew the passport", "Book the dentist"]);

    const stored = await openEvents();
    assert.deepEqual(stored.map(({ title, due_at, state, fire_at, done_label }) => ({ title, due_at, state, fire_at, done_label })), [
      { title: "Pay the rent", due_at: `${run.today}T23:30`, state: "today", fire_at: addDays(run.today, -30), done_label: "Paid" },
      { title: "Renew the passport", due_at: addDays(run.today, 10), state: "preparing", fire_at: addDays(run.today, -20), done_label: "Done" },
      { title: "Book the dentist", due_at: addDays(run.today, 40), state: "scheduled", fire_at: addDays(run.today, 10), done_label: "Done" },
    ]);
    await assertFits(page(), "the inbox with reminders");
  });

  test(`${layout.name}: a reminder that starts preparing after it is due is refused, naming the field`, async () => {
    await addForm().getByLabel("What is due").fill("Impossible");
    await addForm().getByLabel("Due date").fill(addDays(run.today, 5));
    await addForm().getByLabel("Starts preparing on (optional)").fill(addDays(run.today, 6));
    watch.expectRefusal(400, "/api/me/events");
    await addForm().getByRole("button", { name: "Add reminder" }).click();
    const refusal = addForm().getByRole("alert");
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /^The reminder was not added: check “Starts preparing on”\.\n+“Starts preparing on” .* is after the day the event is due.*\n+Why: .*\n+What to do: .*\n+Technical details$/s);
    await refusal.getByText("Technical details").click();
    assert.match(await refusal.locator("details").innerText(), /fire_after_due.*400.*Field\s+fire_at.*`fire_at`/s);
    assert.equal(await addForm().getByLabel("Starts preparing on (optional)").getAttribute("aria-invalid"), "true");
    assert.equal(await eventTitled("Impossible"), undefined, "nothing was added");
    await assertFits(page(), "a refusal");
    await addForm().getByLabel("Starts preparing on (optional)").fill("");
    await addForm().getByLabel("What is due").fill("");
  });

  test(`${layout.name}: editing a manual reminder's due date moves it to another group`, async () => {
    const dentist = card("Book the dentist");
    await dentist.getByRole("button", { name: "Edit Book the dentist" }).click();
    const form = dentist.getByRole("form", { name: "Change “Book the dentist”" });
    assert.equal(await form.getByLabel("Due date").inputValue(), addDays(run.today, 40));
    await form.getByLabel("Due date").fill(addDays(run.today, -3));
    await assertFits(page(), "the edit form");
    await form.getByRole("button", { name: "Save changes Book the dentist" }).click();
    await statusSaying("Saved “Book the dentist”").filter({ hasText: "under Overdue" }).waitFor();
    const overdue = group("Overdue").getByRole("article");
    assert.equal(await overdue.count(), 1);
    assert.match(await overdue.textContent(), /Book the dentist.*Overdue.*3 days overdue/s);
    assert.equal(await group("Upcoming").getByRole("article").filter({ hasText: "Book the dentist" }).count(), 0);
    const stored = await eventTitled("Book the dentist");
    assert.deepEqual([stored.due_at, stored.state, stored.fire_at], [addDays(run.today, -3), "overdue", addDays(run.today, -33)], "the default fire_at followed the new date");
  });

  test(`${layout.name}: a notification the webhook did not take shows with its error`, async () => {
    await deliverReminders();
    await page().reload();
    const rent = card("Pay the rent");
    await rent.getByRole("list", { name: "Notifications" }).waitFor();
    assert.match(await rent.getByRole("list", { name: "Notifications" }).textContent(), /Webhook: not delivered \(tried once, last .*\): .+\. It is tried again at .+\./s);
    const stored = (await eventTitled("Pay the rent")).deliveries.find((delivery) => delivery.channel === "webhook");
    assert.equal(stored.outcome, "failed");
    assert.ok(stored.last_error);
    assert.ok(!Number.isNaN(Date.parse(stored.next_attempt_at)), `it says when it is tried again: ${stored.next_attempt_at}`);
  });

  test(`${layout.name}: acknowledging a reminder hides its button; one marked done with its own label is in the archive under it`, async () => {
    const passport = card("Renew the passport");
    await passport.getByRole("button", { name: "I remember Renew the passport" }).click();
    await statusSaying("Acknowledged “Renew the passport”").waitFor();
    assert.ok(await card("Renew the passport").getByText("Acknowledged", { exact: true }).isVisible());
    assert.equal(await card("Renew the passport").getByRole("button", { name: /I remember/ }).count(), 0);
    assert.match(await card("Renew the passport").textContent(), /You said you remember it: no notification until/);
    assert.equal((await eventTitled("Renew the passport")).acknowledged, true);

    await card("Pay the rent").getByRole("button", { name: "Paid Pay the rent" }).click();
    await statusSaying("Closed “Pay the rent” as Paid.").waitFor();
    assert.equal(await group("Today").getByRole("article").count(), 0);
    assert.equal(await eventTitled("Pay the rent"), undefined, "it is no longer open");
    // Done is done at once, with Undo beside the words for a few seconds: it
    // brings the reminder back as it was, in Today.
    await page().getByRole("button", { name: "Undo", exact: true }).click();
    await statusSaying("Opened “Pay the rent” again.").waitFor();
    await group("Today").getByRole("article").filter({ hasText: "Pay the rent" }).waitFor();
    assert.equal((await eventTitled("Pay the rent")).state, "today");
    await card("Pay the rent").getByRole("button", { name: "Paid Pay the rent" }).click();
    await statusSaying("Closed “Pay the rent” as Paid.").waitFor();

    await tab("Archive").click();
    const closed = card("Pay the rent");
    await closed.waitFor();
    assert.ok(await closed.getByText("Paid", { exact: true }).isVisible(), "the archive shows how it closed, in its own words");
    assert.match(await closed.textContent(), /Closed as Paid/);
    await assertFits(page(), "the archive");
    const archive = (await ok(call("GET", "/api/me/events?archive=true", { token: run.token }))).events;
    assert.deepEqual(archive.map(({ title, closed_as }) => ({ title, closed_as })), [{ title: "Pay the rent", closed_as: "Paid" }]);
  });

  test(`${layout.name}: a source created in Sources pushes a reminder, shown with its name and no Edit or Delete`, async () => {
    const name = `${layout.name}-passport-office`;
    await openSection(page(), "Sources");
    await page().getByRole("heading", { name: "Sources", level: 1 }).waitFor();
    await page().getByLabel("Name", { exact: true }).fill(name);
    await page().getByRole("button", { name: "Create source" }).click();
    await statusSaying(`Created ${name}. Its credential is below.`).waitFor();
    const once = page().getByRole("region", { name: `The credential for ${name}` });
    const credential = await once.getByLabel(`Credential for ${name}`).inputValue();
    assert.match(credential, /^mr_src_/);
    assert.match(await once.textContent(), new RegExp(`Shown once\\..*curl -X PUT ${node.url}/api/source/events`, "s"));
    await assertFits(page(), "a source's credential");

    const pushed = await call("PUT", "/api/source/events", {
      token: credential,
      body: { person: layout.person.email, source_ref: "passport-4471", topic: "interview", title: "Visa interview", due_at: addDays(run.today, 5), done_label: "Attended" },
    });
    assert.ok([200, 201].includes(pushed.status), pushed.text);

    await openSection(page(), "Reminders");
    const visa = card("Visa interview");
    await visa.waitFor();
    assert.ok(await visa.getByText(`From ${name}`, { exact: true }).isVisible());
    assert.match(await visa.textContent(), /in 5 days/);
    assert.ok(await visa.getByRole("button", { name: "Attended Visa interview" }).isVisible());
    assert.ok(await visa.getByRole("button", { name: "I remember Visa interview" }).isVisible());
    assert.equal(await visa.getByRole("button", { name: /^(Edit|Delete)/ }).count(), 0, "another source's reminder cannot be changed here");
    assert.ok(await card("Renew the passport").getByRole("button", { name: "Edit Renew the passport" }).isVisible(), "a manual one can");
    await assertFits(page(), "the inbox with a source's reminder");

    // Revoked through the page, with a confirmation, the credential pushes no more.
    await openSection(page(), "Sources");
    const row = page().getByRole("row").filter({ hasText: name });
    await row.getByRole("button", { name: `Revoke ${name}` }).click();
    await page().getByRole("group", { name: `Revoke ${name}?` }).getByRole("button", { name: `Revoke for good ${name}` }).click();
    await statusSaying(`Revoked ${name}`).waitFor();
    assert.ok(await page().getByRole("row").filter({ hasText: name }).getByText("Revoked", { exact: true }).isVisible());
    const again = await call("PUT", "/api/source/events", {
      token: credential,
      body: { person: layout.person.email, source_ref: "passport-4471", topic: "interview", title: "Visa interview", due_at: addDays(run.today, 6) },
    });
    assert.equal(again.status, 401, again.text);
    await assertFits(page(), "the sources");
  });

  test(`${layout.name}: a reminder made elsewhere shows without a reload; while a card is being edited, the list stays and offers the latest`, async () => {
    await openSection(page(), "Reminders");
    await group("Today").waitFor();
    const elsewhere = `Made elsewhere (${layout.name})`;
    // Made through the API, as another tab or an agent would.
    await ok(call("POST", "/api/me/events", { token: run.token, body: { title: elsewhere, due_at: addDays(run.today, 3) } }), 201);
    const made = card(elsewhere);
    await made.waitFor({ timeout: 5000 });
    assert.match(await made.textContent(), /in 3 days/);
    // Mid-edit, nothing moves under the person's hands.
    await made.getByRole("button", { name: `Edit ${elsewhere}` }).click();
    const form = made.getByRole("form", { name: `Change “${elsewhere}”` });
    await form.getByLabel("What is due").fill(`${elsewhere}, half typed`);
    const meanwhile = `Made meanwhile (${layout.name})`;
    await ok(call("POST", "/api/me/events", { token: run.token, body: { title: meanwhile, due_at: addDays(run.today, 4) } }), 201);
    const latest = page().getByRole("button", { name: "Show the latest" });
    await latest.waitFor({ timeout: 5000 });
    assert.equal(await card(meanwhile).count(), 0, "the list did not change under the open form");
    assert.equal(await form.getByLabel("What is due").inputValue(), `${elsewhere}, half typed`, "what was being typed is kept");
    await assertFits(page(), "the offer of the latest");
    await latest.click();
    await card(meanwhile).waitFor();
    assert.ok(await latest.isHidden(), "offered once, then gone");
  });

  if (layout.name === "desktop") {
    test(`${layout.name}: an inbox of more than a page shows the soonest, and the rest on asking`, async () => {
      const before = (await openEvents()).length;
      const far = Array.from({ length: 100 }, (_, index) => addDays(run.today, 200 + index));
      await Promise.all(far.map((due, index) =>
        ok(call("POST", "/api/me/events", { token: run.token, body: { title: `Far off ${index}`, due_at: due } }), 201)));
      await openSection(page(), "Mail");
      await openSection(page(), "Reminders");
      const cards = page().getByRole("article");
      await card("Far off 0").waitFor();
      assert.equal(await cards.count(), 100, "the first page: the 100 soonest");
      const later = page().getByRole("button", { name: "Show later reminders" });
      await later.click();
      await card("Far off 99").waitFor();
      assert.equal(await cards.count(), before + 100, "every open reminder, once");
      assert.ok(await later.isHidden(), "nothing later to show");
    });
  }
}

test("no page logged an error, threw, or broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});

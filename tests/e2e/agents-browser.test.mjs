// Agents in a real browser: headless Chromium against the built Worker on workerd.
// An administrator mints an agent through the Agents section for a sponsor who
// holds less than the form could offer; the form shows what the sponsor holds,
// warns about a capability no chosen mailbox lets work, and shows the credential
// once, all in the vocabulary's words (the codes on request). The official MCP client then connects with that credential and is held
// to exactly its ceiling; the page shows the ceiling held of total, the agent's
// act in the audit trail as one cell, and pauses, resumes and revokes it. A
// second agent is paired instead. Every console error and CSP violation fails
// the file, apart from the refusals the test provokes on purpose.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ROOT, ADMIN, assertRefusal, checkedFetch } from "./harness.mjs";
import { startDesk } from "./fixtures.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertAccessible, openSection } from "./browser-helpers.mjs";

const SUPPORT = "support@mailroom.test";
const SALES = "sales@mailroom.test";
const BEN = { name: "Ben", email: "ben@example.com", password: "ben's long password" };
const AGENT_ID = /agt_[0-9A-HJKMNP-TV-Z]{26}/;

let node, call, token, browser, page;
let support, ben, vocabulary, relations, mailboxRelations;
/** The agent minted with its credential shown, and that credential. */
let triage, credential;
const watch = new PageWatch();

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk());
  // Setup that is not the point of this file goes through the API.
  support = await desk.mailbox(SUPPORT, "Support");
  await desk.mailbox(SALES, "Sales");
  ben = await desk.person(BEN);
  // Ben reads support@ (metadata and content) but cannot export from it, and holds nothing on sales@.
  await desk.grant(ben.id, ["mailbox.metadata.read", "mailbox.content.read"], support.id);
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"))), null);
  const published = (await call("GET", "/api/agent-capabilities", { token })).body;
  vocabulary = published.capabilities;
  relations = published.relations;
  mailboxRelations = published.relations.filter((relation) => relation.on === "mailbox").map((relation) => relation.name);
  assert.ok(mailboxRelations.length >= 5, "the relation vocabulary is published");

  browser = await launchChromium();
  ({ page } = await watch.open(browser));
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const statusSaying = (text) => page.getByRole("status").filter({ hasText: text });
const mintForm = () => page.getByRole("region", { name: "Mint an agent" });
/** A capability's words (its summary), and a relation's (its description, as a sentence carries it). */
const summaryOf = (name) => vocabulary.find((entry) => entry.name === name).summary;
const wordsOf = (relation) => relations.find((entry) => entry.name === relation).description.replace(/\.$/, "");
const capability = (name) => mintForm().getByRole("checkbox", { name: summaryOf(name), exact: true });
const grant = (relation, address) => mintForm().getByRole("group", { name: address, exact: true }).getByRole("checkbox", { name: wordsOf(relation), exact: true });
/** What a person sees of an element: its text as shown, without what is hidden or there only on request. */
const shown = (locator) => locator.evaluate((element) => element.innerText);
const agentRow = (id) => page.getByRole("table", { name: /^Agents on this node/ }).getByRole("row").filter({ hasText: id });
const cellsOf = (row) => row.getByRole("cell").allTextContents();
const shownCellsOf = (row) => row.getByRole("cell").evaluateAll((cells) => cells.map((cell) => cell.innerText));
/** Held of total for a capability, in its words, as the vocabulary counts it now. */
const heldOfTotal = (name) => `${summaryOf(name)} ${vocabulary.find((entry) => entry.name === name).routes.length} of ${vocabulary.find((entry) => entry.name === name).routes.length}`;

async function openAgents() {
  await openSection(page, "Agents");
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
  await page.getByRole("region", { name: "Every agent" }).getByText(/No agents yet|Agents on this node/).first().waitFor();
}

async function connect(secret) {
  const client = new Client({ name: "mailroom-agents-browser-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => secret }, fetch: checkedFetch }),
  );
  return client;
}

test("the administrator mints an agent in the product's words; the form shows what the sponsor holds and what cannot work", async () => {
  await page.goto(node.url);
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).waitFor();
  await openAgents();

  const form = mintForm();
  // Every capability of the vocabulary, with its summary, what it needs, and whether it reaches content.
  for (const entry of vocabulary) {
    const box = capability(entry.name);
    assert.equal(await box.count(), 1, entry.name);
    const choice = box.locator("xpath=..");
    const text = await shown(choice);
    // Its summary and needs at a glance; what it does on request, with its tools.
    assert.ok(text.includes(entry.summary), `${entry.name} is named`);
    assert.ok((await choice.textContent()).includes(entry.description), `${entry.name} is described`);
    for (const relation of entry.requires) assert.ok((await choice.textContent()).includes(wordsOf(relation)), `${entry.name} says it needs ${relation}, in words`);
    assert.equal(text.includes(entry.name), false, `${entry.name}'s code is shown only on request`);
    assert.equal(text.includes("Reaches message content"), entry.reaches_content, `${entry.name}'s content flag`);
  }
  // Its tools, on request.
  const read = vocabulary.find((entry) => entry.name === "mail.read");
  const about = form.getByRole("group", { name: "Capabilities" }).locator("details.about").filter({ hasText: `: ${read.summary}` });
  const tools = about.locator("details.tools");
  assert.equal(await tools.getByText(read.routes[0].tool, { exact: true }).isVisible(), false, "the tools are shown on request");
  assert.equal(await about.getByText(read.description).isVisible(), false, "what it does too");
  await about.locator("> summary").click();
  assert.equal(await about.getByText(read.description).isVisible(), true);
  await tools.locator("summary").click();
  for (const route of read.routes) assert.ok(await tools.getByText(route.tool, { exact: true }).isVisible(), route.tool);

  await form.getByLabel("Name", { exact: true }).fill("Triage bot");
  await form.getByText("Choose a sponsor to see what they hold on each mailbox").waitFor();
  await form.getByLabel("Sponsor").selectOption(ben.id);

  // Every mailbox relation is listed on every mailbox; only what Ben holds can be chosen.
  await grant("mailbox.metadata.read", SUPPORT).waitFor();
  for (const relation of mailboxRelations) {
    const held = relation === "mailbox.metadata.read" || relation === "mailbox.content.read";
    assert.equal(await grant(relation, SUPPORT).isEnabled(), held, `${relation} on ${SUPPORT}`);
    assert.equal(await grant(relation, SALES).isDisabled(), true, `${relation} on ${SALES}`);
  }
  // The reason is shown beside the box, and is what describes it to a screen reader.
  const description = (box) => box.evaluate((element) => element.getAttribute("aria-describedby").split(" ").map((id) => document.getElementById(id).textContent).join(" "));
  assert.ok(await grant("message.export", SUPPORT).locator("xpath=..").getByText("Ben does not hold this here", { exact: true }).isVisible());
  assert.equal(await description(grant("message.export", SUPPORT)), "Ben does not hold this here");
  assert.match(await form.getByRole("group", { name: SALES, exact: true }).textContent(), /Ben holds nothing here/);
  assert.match(await description(grant("mailbox.metadata.read", SALES)), /^Ben holds nothing here/);

  // A capability ticked starts satisfiable: what it needs is chosen where Ben holds it, and nothing else.
  await capability("mail.triage").check();
  assert.equal(await grant("mailbox.metadata.read", SUPPORT).isChecked(), true, "what “See what mail exists” needs, chosen on support@");
  assert.equal(await grant("mailbox.content.read", SUPPORT).isChecked(), false, "nothing it does not need");
  await capability("mail.read").check();
  assert.equal(await grant("mailbox.content.read", SUPPORT).isChecked(), true);
  assert.equal(await form.getByText("cannot work").count(), 0, "no warning: support@ grants what both need");
  // Unticking what one needs says why it cannot work, and what would make it.
  const warning = (name) => form.getByRole("listitem").filter({ hasText: `“${summaryOf(name)}”` }).filter({ hasText: "cannot work" });
  await grant("mailbox.metadata.read", SUPPORT).uncheck();
  await grant("mailbox.content.read", SUPPORT).uncheck();
  await warning("mail.triage").waitFor();
  assert.ok((await shown(warning("mail.read"))).includes(
    `Select “${wordsOf("mailbox.metadata.read")}” and “${wordsOf("mailbox.content.read")}” on ${SUPPORT}`));
  assert.equal(await grant("mailbox.metadata.read", SUPPORT).isChecked(), false, "a box unticked stays unticked");
  await grant("mailbox.metadata.read", SUPPORT).check();
  await grant("mailbox.content.read", SUPPORT).check();
  assert.equal(await form.getByText("cannot work").count(), 0, "no warning once support@ grants what both need");

  // mail.export needs content.read and message.export on one mailbox; Ben holds export nowhere.
  await capability("mail.export").check();
  const exportWarning = warning("mail.export");
  await exportWarning.waitFor();
  const said = await shown(exportWarning);
  assert.ok(said.includes(`“${summaryOf("mail.export")}” cannot work: it needs “${wordsOf("mailbox.content.read")}” and “${wordsOf("message.export")}” together on one mailbox`), said);
  assert.ok(said.includes(`Grant Ben “${wordsOf("message.export")}” on ${SUPPORT} under Relations`), said);

  // The node refuses it anyway, and the page shows its refusal.
  watch.expectRefusal(400, "/api/agents");
  await form.getByRole("button", { name: "Mint agent" }).click();
  const refusal = form.getByRole("alert");
  await refusal.waitFor();
  const refused = await refusal.innerText();
  assert.match(refused, /The agent was not minted\./);
  // In the vocabulary's words; its code under "Technical details".
  assert.ok(refused.includes(`“${summaryOf("mail.export")}”`), refused);
  assert.doesNotMatch(refused, /mail\.export|capability_unsatisfiable/);
  await refusal.getByText("Technical details").click();
  assert.match(await refusal.locator("details").innerText(), /capability_unsatisfiable.*mail\.export/s);
  await assertAccessible(page, "the mint form, with a warning and a refusal");

  await capability("mail.export").uncheck();
  assert.equal(await form.getByText("cannot work").count(), 0, "the warning goes with the capability");
  await form.getByLabel("Show the credential").check();
  await form.getByRole("button", { name: "Mint agent" }).click();

  const handover = form.getByRole("region", { name: "The credential for Triage bot" });
  await handover.waitFor();
  assert.match(await handover.textContent(), /Shown once\..*will not be shown again.*leaving this page loses it/);
  const field = handover.getByLabel("Credential for Triage bot");
  assert.equal(await field.getAttribute("readonly"), "", "a read-only field to copy from");
  credential = await field.inputValue();
  assert.match(credential, /^mr_agt_/);
  await statusSaying("Minted Triage bot").waitFor();
  assert.equal(await form.getByRole("alert").count(), 0, "the earlier refusal is gone");
  await assertAccessible(page, "the credential shown once");

  const id = credential.match(AGENT_ID)?.[0];
  triage = (await call("GET", `/api/agents/${id}`, { token })).body;
  assert.equal(triage.name, "Triage bot");
  assert.equal(triage.sponsor, ben.id);
  assert.equal(triage.state, "active");
  assert.deepEqual(triage.capabilities.map((held) => held.name).sort(), ["mail.read", "mail.triage"]);
  assert.deepEqual(triage.mailboxes.map(({ mailbox, relations }) => ({ mailbox, relations: [...relations].sort() })),
    [{ mailbox: support.id, relations: ["mailbox.content.read", "mailbox.metadata.read"] }]);
});

test("with that credential, the official MCP client sees exactly its tools, reads the mail, and is refused the rest", async () => {
  const client = await connect(credential);
  const { tools } = await client.listTools();
  const expected = vocabulary.filter((entry) => entry.name === "mail.triage" || entry.name === "mail.read").flatMap((entry) => entry.routes.map((route) => route.tool));
  assert.deepEqual(tools.map((tool) => tool.name).sort(), expected.sort());

  const listed = await client.callTool({ name: "list_messages", arguments: { mailbox_id: support.id } });
  const message = listed.structuredContent.messages.find((entry) => entry.subject === "Where is my invoice?");
  assert.ok(message, JSON.stringify(listed.structuredContent));
  const body = await client.callTool({ name: "get_message_body", arguments: { mailbox_id: support.id, receipt_id: message.id } });
  assert.match(body.structuredContent.text, /invoice for order 4471/);

  // Outside its ceiling, a tool does not exist for it; and the REST surface holds it to the same ceiling.
  await assert.rejects(client.callTool({ name: "get_message_original", arguments: { mailbox_id: support.id, receipt_id: message.id } }), (error) => error.code === -32602);
  assertRefusal(assert, await call("GET", `/api/mailboxes/${support.id}/messages/${message.id}/original`, { token: credential }), 403, "outside_ceiling");
  // An administrator's route is refused to every agent, whatever its ceiling.
  assertRefusal(assert, await call("GET", "/api/people", { token: credential }), 403, "not_for_agents");
  await client.close();
});

test("the agent list shows the ceiling held of total, and the audit trail shows the agent's read as one cell", async () => {
  // Leaving the section loses the credential: it is nowhere in the page when it comes back.
  await openSection(page, "People");
  await page.getByRole("heading", { name: "People", level: 1 }).waitFor();
  await openAgents();
  assert.equal(await page.getByRole("region", { name: "The credential for Triage bot" }).count(), 0);
  assert.equal((await page.content()).includes(credential.split(".")[1]), false, "the secret is gone from the page");

  const row = agentRow(triage.id);
  const [agent, sponsor, state, , , actions] = await cellsOf(row);
  // The ids are there, on request; by name otherwise.
  assert.match(agent, new RegExp(`^Triage bot ${triage.id}`));
  assert.match(sponsor, new RegExp(`^Ben ${ben.id}`));
  assert.equal(state, "active");
  const [agentShown, sponsorShown, , ceiling, mailboxes] = await shownCellsOf(row);
  assert.match(agentShown, /^Triage bot\nminted /);
  assert.equal(sponsorShown, "Ben");
  for (const name of ["mail.triage", "mail.read"]) assert.ok(ceiling.includes(heldOfTotal(name)), `${heldOfTotal(name)} in ${ceiling}`);
  assert.ok(ceiling.includes(`${summaryOf("mail.triage")} 3 of 3`), ceiling);
  assert.match(mailboxes, new RegExp(`^${SUPPORT.replaceAll(".", "\\.")}`));
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read"]) assert.ok(mailboxes.includes(wordsOf(relation)), relation);
  assert.ok(!mailboxes.includes(wordsOf("message.export")));
  assert.match(actions, /Pause.*Issue pairing code.*Revoke/);

  await openSection(page, "Audit");
  const entry = page.getByRole("table", { name: "Audit entries, newest first" }).getByRole("row")
    .filter({ hasText: "Read a message's text" }).filter({ hasText: triage.id });
  await entry.waitFor();
  const [, actor] = await cellsOf(entry);
  // The action in the contract's words, its tool name on request.
  const [, , action, , outcome] = await shownCellsOf(entry);
  assert.equal(action, "Read a message's text");
  assert.equal(outcome, "Done");
  assert.match((await cellsOf(entry))[2], /get_message_body/);
  assert.equal(actor, `Triage bot ${triage.id} for Ben ${ben.id}`, "the agent, by name, for its sponsor, in one cell");
  assert.match(actor, /agt_[0-9A-Z]{26} for Ben/);
  await assertAccessible(page, "the audit trail");
});

test("pausing, resuming and revoking in the page take effect on the credential's next request", async () => {
  await openAgents();
  const probe = () => call("GET", "/api/mailboxes/readable", { token: credential });
  assert.equal((await probe()).status, 200);

  await agentRow(triage.id).getByRole("button", { name: "Pause Triage bot" }).click();
  await statusSaying("Paused Triage bot").waitFor();
  assert.match((await cellsOf(agentRow(triage.id)))[2], /^pausedsince /, "paused, and since when");
  assertRefusal(assert, await probe(), 403, "agent_paused");

  await agentRow(triage.id).getByRole("button", { name: "Resume Triage bot" }).click();
  await statusSaying("Resumed Triage bot").waitFor();
  assert.equal((await cellsOf(agentRow(triage.id)))[2], "active");
  assert.equal((await probe()).status, 200);

  // Revoking asks first, in the page; keeping it changes nothing.
  await agentRow(triage.id).getByRole("button", { name: "Revoke Triage bot" }).click();
  const question = page.getByRole("group", { name: "Revoke Triage bot?" });
  assert.match(await question.textContent(), /cannot be restored/);
  await question.getByRole("button", { name: "Keep it" }).click();
  assert.equal(await question.count(), 0);
  assert.equal((await probe()).status, 200);

  await agentRow(triage.id).getByRole("button", { name: "Revoke Triage bot" }).click();
  await page.getByRole("group", { name: "Revoke Triage bot?" }).getByRole("button", { name: "Revoke for good" }).click();
  await statusSaying("Revoked Triage bot").waitFor();
  assertRefusal(assert, await probe(), 401, "agent_revoked");
  const row = agentRow(triage.id);
  assert.match((await cellsOf(row))[2], /^revokedsince /);
  assert.equal(await row.getByRole("button").count(), 0, "nothing to do with a revoked agent");

  // And so it stays, on a fresh look.
  await page.reload();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
  await agentRow(triage.id).waitFor();
  assert.match((await cellsOf(agentRow(triage.id)))[2], /^revokedsince /);
  assert.equal((await call("GET", `/api/agents/${triage.id}`, { token })).body.state, "revoked");
});

test("a second agent is paired: the form's code, and a code issued from the list, each redeemed for a credential that works", async () => {
  const form = mintForm();
  await form.getByLabel("Name", { exact: true }).fill("Pairing bot");
  await form.getByLabel("Sponsor").selectOption(ben.id);
  await grant("mailbox.metadata.read", SUPPORT).check();
  await capability("mail.triage").check();
  // An expiry, typed in the browser's own time, reaches the node as that moment in UTC.
  const expiry = `${new Date().getFullYear() + 1}-06-30T17:45`;
  await form.getByLabel("Expires (optional)").fill(expiry);
  await form.getByLabel("Issue a pairing code").check();
  await form.getByRole("button", { name: "Mint agent" }).click();

  const handover = form.getByRole("region", { name: "A pairing code for Pairing bot" });
  await handover.waitFor();
  assert.match(await handover.textContent(), /Shown once\./);
  const first = await handover.getByLabel("Pairing code for Pairing bot").inputValue();
  const until = Date.parse(await handover.locator("time").getAttribute("datetime"));
  assert.ok(until > Date.now() && until - Date.now() <= 10 * 60 * 1000 + 5000, "it works for at most ten minutes");
  assert.equal(await form.getByRole("region", { name: /^The credential for/ }).count(), 0, "no credential is shown");

  const id = (await agentRow("Pairing bot").textContent()).match(AGENT_ID)[0];
  assert.match((await cellsOf(agentRow(id)))[2], /^awaiting pairinguntil /);
  const inBrowser = await page.evaluate((local) => new Date(local).getTime(), expiry);
  assert.equal(Date.parse((await call("GET", `/api/agents/${id}`, { token })).body.expires_at), inBrowser);
  const redeemed = await call("POST", "/api/agents/pair", { body: { code: first } });
  assert.equal(redeemed.status, 200, redeemed.text);
  assert.equal(redeemed.body.agent_id, id);
  const paired = redeemed.body.credential;
  const readable = await call("GET", "/api/mailboxes/readable", { token: paired });
  assert.equal(readable.status, 200, readable.text);
  assert.deepEqual(readable.body.mailboxes.map((mailbox) => mailbox.address), [SUPPORT]);

  // A code issued from the list pairs it again, and replaces the credential it had.
  await agentRow(id).getByRole("button", { name: "Issue pairing code Pairing bot" }).click();
  const again = page.getByRole("table", { name: /^Agents on this node/ }).getByRole("region", { name: "A pairing code for Pairing bot" });
  await again.waitFor();
  assert.match(await again.textContent(), /replaces any credential/);
  const second = await again.getByLabel("Pairing code for Pairing bot").inputValue();
  assert.notEqual(second, first);
  // What another action on the row says does not wipe a code shown once.
  await agentRow(id).getByRole("button", { name: "Pause Pairing bot" }).click();
  await statusSaying("Paused Pairing bot").waitFor();
  await agentRow(id).getByRole("button", { name: "Resume Pairing bot" }).click();
  await statusSaying("Resumed Pairing bot").waitFor();
  assert.equal(await again.getByLabel("Pairing code for Pairing bot").inputValue(), second);
  const repaired = await call("POST", "/api/agents/pair", { body: { code: second } });
  assert.equal(repaired.status, 200, repaired.text);
  assert.equal((await call("GET", "/api/mailboxes/readable", { token: repaired.body.credential })).status, 200);
  assertRefusal(assert, await call("GET", "/api/mailboxes/readable", { token: paired }), 401, "agent_credential_invalid");

  await openSection(page, "People");
  await openAgents();
  assert.match((await cellsOf(agentRow(id)))[2], /^activeuntil /);
});

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

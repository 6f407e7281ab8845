// The demo organisation scripts/run.sh seeds: the seed script runs against the
// built Worker on workerd, the sign-in details it prints work, and the people it
// makes find a shared mailbox with mail in it, and the second person's agents
// have exchanged messages (the run command turns agent messaging on, and so does
// this node). A second run changes nothing, a seed that cannot finish says so
// instead of printing details that do not work, and on a node without agent
// messaging the seed makes no agents and says nothing of them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNode, client, ROOT } from "./harness.mjs";

let node, call;

before(async () => {
  node = await startNode({ vars: { FEATURE_AGENT_NETWORK: "true" } });
  call = client(node.url);
});
after(() => node?.stop());

/** Runs scripts/seed.mjs against `target` (the file's node) with `setupToken`: `{ code, stdout, stderr }`. */
function seed(setupToken, target = node) {
  const directory = mkdtempSync(join(tmpdir(), "mailroom-seed-"));
  const secrets = join(directory, "secrets.env");
  writeFileSync(secrets, `SESSION_SECRET=${target.secrets.SESSION_SECRET}\nSETUP_TOKEN=${setupToken}\n`);
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, "scripts", "seed.mjs"), target.url, secrets], (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

/** Where each message to `agentId` stands, as its sponsor sees its inbox: `kind state`, oldest first. */
async function inboxOf(agentId, token) {
  const inbox = await call("GET", `/api/agents/${agentId}/inbox`, { token });
  assert.equal(inbox.status, 200, inbox.text);
  return inbox.body.messages.reverse();
}

/** The `email / password` pairs the seed printed, in the order it printed them. */
function printedSignIns(stdout) {
  return [...stdout.matchAll(/(\S+@\S+) \/ (\S+)/g)].map(([, email, password]) => ({ email, password }));
}

async function signIn({ email, password }) {
  const signedIn = await call("POST", "/api/sessions", { body: { email, password } });
  assert.equal(signedIn.status, 201, signedIn.text);
  return signedIn.body.session.access_token;
}

test("a seed that cannot set the node up fails and prints no sign-in details", async () => {
  const refused = await seed("not-the-setup-token");
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /could not be seeded/);
  assert.deepEqual(printedSignIns(refused.stdout), []);
});

test("the seeded people sign in with what was printed, and find mail to read, answer and approve", async () => {
  const seeded = await seed(node.secrets.SETUP_TOKEN);
  assert.equal(seeded.code, 0, seeded.stderr);
  const [admin, person] = printedSignIns(seeded.stdout);
  assert.ok(admin && person, seeded.stdout);
  const adminToken = await signIn(admin);
  const personToken = await signIn(person);

  const readable = (await call("GET", "/api/mailboxes/readable", { token: personToken })).body.mailboxes;
  assert.equal(readable.length, 1);
  const [mailbox] = readable;
  for (const tool of ["list_messages", "get_message_body", "create_draft", "submit_send"]) {
    assert.ok(mailbox.tools.includes(tool), `${person.email} may ${tool} in ${mailbox.address}: ${mailbox.tools}`);
  }
  const messages = (await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token: personToken })).body.messages;
  assert.equal(messages.length, 1);
  const body = await call("GET", `/api/mailboxes/${mailbox.id}/messages/${messages[0].id}/body`, { token: personToken });
  assert.equal(body.status, 200, body.text);
  assert.match(body.body.text, /kettle/);

  // The administrator is the second person for what the team submits.
  const adminsOwn = (await call("GET", "/api/mailboxes", { token: adminToken })).body.mailboxes;
  const held = (await call("GET", "/api/mailboxes/all", { token: adminToken })).body.mailboxes.find((each) => each.id === mailbox.id).held;
  assert.ok(held.includes("approval.decide"), held);
  assert.ok(adminsOwn.some((each) => each.id === mailbox.id), "the administrator is in the team that drafts there");
  // And may export, so the demo shows Exports; the second person may not.
  assert.equal((await call("GET", "/api/me", { token: adminToken })).body.may_export, true);
  assert.equal((await call("GET", "/api/me", { token: personToken })).body.may_export, false);
  assert.match(seeded.stdout, new RegExp(`Mailroom is running at ${node.url}`));

  // Ben's reminders: one due today, one coming up, one overdue, and the visa office's.
  const events = (await call("GET", "/api/me/events", { token: personToken })).body.events;
  assert.deepEqual(events.map((event) => event.state).sort(), ["overdue", "preparing", "scheduled", "today"]);
  assert.ok(events.some((event) => event.source === "visa-office" && !event.editable), JSON.stringify(events));

  // Ben's two agents have looked at their inboxes and exchanged messages: an
  // answered request, an event still waiting, a rejected request.
  assert.match(seeded.stdout, /Ben sponsors two agents, Travel desk and Calendar assistant/);
  const agents = (await call("GET", "/api/me/agents", { token: personToken })).body.agents;
  assert.deepEqual(agents.map((agent) => agent.name).sort(), ["Calendar assistant", "Travel desk"]);
  for (const agent of agents) {
    assert.ok(agent.last_seen_at && !agent.paused && !agent.revoked, JSON.stringify(agent));
    const minted = (await call("GET", `/api/agents/${agent.id}`, { token: adminToken })).body;
    assert.deepEqual(minted.capabilities.map((capability) => capability.name), ["agent.messaging"]);
  }
  const byName = Object.fromEntries(agents.map((agent) => [agent.name, agent.id]));
  const calendar = await inboxOf(byName["Calendar assistant"], personToken);
  assert.deepEqual(calendar.map((message) => `${message.kind} ${message.state}`), ["request answered", "event queued"]);
  assert.equal(calendar[0].sender, byName["Travel desk"]);
  assert.deepEqual(calendar[0].reply.content.free.length, 2);
  const travel = await inboxOf(byName["Travel desk"], personToken);
  assert.deepEqual(travel.map((message) => `${message.kind} ${message.state}`), ["reply acknowledged", "request rejected"]);
  assert.equal(travel[0].in_reply_to, calendar[0].id);
  assert.match(travel[1].reason, /booked by a person/);
  // The answered request's conversation holds the request and its reply, and Ben, their sponsor, reads it.
  const conversation = await call("GET", `/api/agent-conversations/${calendar[0].conversation_id}`, { token: personToken });
  assert.equal(conversation.status, 200, conversation.text);
  assert.deepEqual(conversation.body.messages.map((message) => message.kind), ["request", "reply"]);
});

test("seeding again changes nothing", async () => {
  const people = (token) => call("GET", "/api/people", { token });
  const again = await seed(node.secrets.SETUP_TOKEN);
  assert.equal(again.code, 0, again.stderr);
  const [admin] = printedSignIns(again.stdout);
  const token = await signIn(admin);
  const everyone = (await people(token)).body.people.length;
  const mailboxes = (await call("GET", "/api/mailboxes/all", { token })).body.mailboxes;
  assert.equal(everyone, 2);
  assert.equal(mailboxes.length, 1);
  const messages = (await call("GET", `/api/mailboxes/${mailboxes[0].id}/messages`, { token: await signIn(printedSignIns(again.stdout)[1]) })).body;
  assert.equal(messages.messages.length, 1, "no second welcome message");
  const agents = (await call("GET", "/api/agents", { token })).body.agents;
  assert.equal(agents.length, 2, "no second pair of agents");
});

test("on a node without agent messaging, the seed makes no agents and says nothing of them", async () => {
  const off = await startNode();
  try {
    const seeded = await seed(off.secrets.SETUP_TOKEN, off);
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.doesNotMatch(seeded.stdout, /agents/);
    const [admin] = printedSignIns(seeded.stdout);
    const signedIn = await client(off.url)("POST", "/api/sessions", { body: admin });
    const agents = await client(off.url)("GET", "/api/agents", { token: signedIn.body.session.access_token });
    assert.deepEqual(agents.body.agents, []);
  } finally {
    await off.stop();
  }
});

// The demo organisation scripts/run.sh seeds: the seed script runs against the
// built Worker on workerd, the sign-in details it prints work, and the people it
// makes find a shared mailbox with mail in it. A second run changes nothing, and a
// seed that cannot finish says so instead of printing details that do not work.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNode, client, ROOT } from "./harness.mjs";

let node, call;

before(async () => {
  node = await startNode();
  call = client(node.url);
});
after(() => node?.stop());

/** Runs scripts/seed.mjs against the node with `setupToken`: `{ code, stdout, stderr }`. */
function seed(setupToken) {
  const directory = mkdtempSync(join(tmpdir(), "mailroom-seed-"));
  const secrets = join(directory, "secrets.env");
  writeFileSync(secrets, `SESSION_SECRET=${node.secrets.SESSION_SECRET}\nSETUP_TOKEN=${setupToken}\n`);
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, "scripts", "seed.mjs"), node.url, secrets], (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
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
  assert.match(seeded.stdout, new RegExp(`Mailroom is running at ${node.url}`));

  // Ben's reminders: one due today, one coming up, one overdue, and the visa office's.
  const events = (await call("GET", "/api/me/events", { token: personToken })).body.events;
  assert.deepEqual(events.map((event) => event.state).sort(), ["overdue", "preparing", "scheduled", "today"]);
  assert.ok(events.some((event) => event.source === "visa-office" && !event.editable), JSON.stringify(events));
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
});

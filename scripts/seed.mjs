// Seeds a local node with a demo organisation through its own API, the way an
// operator would: the first administrator from the setup token, a second person,
// a team, a shared mailbox both work in, and a first message delivered to it
// through the email handler. Run by scripts/run.sh; run again on a node that is
// already set up, it changes nothing. Every answer is checked: a seed that half
// worked says so and exits non-zero rather than printing sign-in details for an
// organisation that is not there.
//
//   node scripts/seed.mjs <origin> <secrets.env>
import { readFileSync } from "node:fs";

const [base, secretsFile] = process.argv.slice(2);
const secrets = Object.fromEntries(
  readFileSync(secretsFile, "utf8").split("\n").filter(Boolean).map((line) => line.split(/=(.*)/s).slice(0, 2)),
);
const demo = {
  admin: { email: "ada@example.com", name: "Ada Admin", password: "mailroom-demo-ada" },
  person: { email: "ben@example.com", name: "Ben Baker", password: "mailroom-demo-ben" },
  team: "Support",
  mailbox: { address: "support@mailroom.example", display_name: "Support" },
  // The team reads and drafts; Ada, as the second person, approves what Ben submits.
  teamRelations: ["mailbox.metadata.read", "mailbox.content.read", "send.propose"],
  adminRelations: ["approval.decide"],
};

/** Calls the node and returns the body, or fails naming the step and the node's refusal. */
async function call(step, expected, method, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const answer = await response.json().catch(() => null);
  if (response.status !== expected) {
    throw new Error(`${step}: ${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  }
  return answer;
}

async function waitForNode() {
  for (let attempt = 0; attempt < 120; attempt++) {
    try {
      const response = await fetch(`${base}/api/me`);
      if (response.status === 401) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the node did not answer at ${base}`);
}

/** A first message, so the mailbox has something to read, answer and approve. */
function welcomeMessage() {
  return [
    "From: Ana Lima <ana@customer.example>",
    `To: ${demo.mailbox.display_name} <${demo.mailbox.address}>`,
    "Subject: Where is my order?",
    `Date: ${new Date().toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: <welcome-${Date.now()}@customer.example>`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Hello,",
    "",
    "I ordered a kettle two weeks ago and have heard nothing since. Could you tell me",
    "where it is?",
    "",
    "Ana",
    "",
  ].join("\r\n");
}

async function seed() {
  await waitForNode();
  const setup = await fetch(`${base}/api/setup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ setup_token: secrets.SETUP_TOKEN, ...demo.admin }),
  });
  const answer = await setup.json().catch(() => null);
  if (setup.status !== 201) {
    if (answer?.error?.code === "already_set_up") return;
    throw new Error(`setting up the demo organisation: ${setup.status} ${JSON.stringify(answer)}`);
  }
  const admin = answer.administrator;
  const session = await call("signing in", 201, "POST", "/api/sessions", { email: demo.admin.email, password: demo.admin.password });
  const token = session.session.access_token;
  const person = await call("adding Ben", 201, "POST", "/api/people", demo.person, token);
  const team = await call("creating the team", 201, "POST", "/api/teams", { name: demo.team }, token);
  for (const member of [person.id, admin.id]) {
    await call("filling the team", 200, "PUT", `/api/teams/${team.id}/members/${member}`, undefined, token);
  }
  const mailbox = await call("creating the mailbox", 201, "POST", "/api/mailboxes", demo.mailbox, token);
  const grants = [
    ...demo.teamRelations.map((relation) => [`${team.id}#member`, relation]),
    ...demo.adminRelations.map((relation) => [admin.id, relation]),
  ];
  for (const [subject, relation] of grants) {
    await call(`granting ${relation}`, 201, "POST", "/api/relations", { subject, relation, object: mailbox.id }, token);
  }
  const from = "ana@customer.example";
  const delivery = await fetch(
    `${base}/cdn-cgi/handler/email?from=${encodeURIComponent(from)}&to=${encodeURIComponent(demo.mailbox.address)}`,
    { method: "POST", body: welcomeMessage() },
  );
  if (delivery.status !== 200) throw new Error(`delivering the first message: ${delivery.status} ${await delivery.text()}`);
  await seedReminders(token);
}

/** The day `offset` days from today (UTC), as `YYYY-MM-DD`. */
function day(offset) {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
}

/** Ben's reminders: a few of his own, and one a source keeps for him. */
async function seedReminders(token) {
  const ben = await call("signing in as Ben", 201, "POST", "/api/sessions", { email: demo.person.email, password: demo.person.password });
  const benToken = ben.session.access_token;
  const events = [
    { title: "Call the landlord about the boiler", due_at: day(0) },
    { title: "Dentist", subtitle: "Dr Okafor, 2nd floor", due_at: `${day(10)}T09:30` },
    { title: "Send the quarterly VAT return", due_at: day(-2), done_label: "Filed" },
  ];
  for (const event of events) {
    await call(`adding the reminder "${event.title}"`, 201, "POST", "/api/me/events", event, benToken);
  }
  const source = await call("creating the source visa-office", 201, "POST", "/api/reminder-sources", { name: "visa-office" }, token);
  const pushed = { person: demo.person.email, source_ref: "visa-4471", topic: "renewal", title: "Residence permit renewal", due_at: day(45) };
  await call("pushing the visa office's reminder", 200, "PUT", "/api/source/events", pushed, source.credential);
}

try {
  await seed();
} catch (error) {
  console.error(`The demo organisation could not be seeded: ${error.message}`);
  process.exit(1);
}

console.log(`
Mailroom is running at ${base}

  Sign in as the administrator:  ${demo.admin.email} / ${demo.admin.password}
  or as a second person:         ${demo.person.email} / ${demo.person.password}
  (both are in the team "${demo.team}", which reads and drafts from ${demo.mailbox.address};
  Ada approves what Ben submits; Ben has a few reminders, one kept by the source visa-office)

  Send it mail:  curl -X POST '${base}/cdn-cgi/handler/email?from=you@example.com&to=${demo.mailbox.address}' --data-binary @message.eml
  API:           curl -X POST ${base}/api/sessions -d '{"email":"${demo.admin.email}","password":"${demo.admin.password}"}'
`);

// Seeds a local node with a demo organisation through its own API, the way an
// operator would: the first administrator from the setup token, a second person,
// a team, a shared mailbox both work in, and a first message delivered to it
// through the email handler; reminders for the second person; and, where the
// node runs agent messaging (scripts/run.sh turns it on), two agents the second
// person sponsors that have exchanged messages, each with its own credential,
// as agents would. Run by scripts/run.sh; run again on a node that is
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
  // The team reads and drafts; Ada, as the second person, approves what Ben submits,
  // and, holding ediscovery.export on the organisation, is offered Exports.
  teamRelations: ["mailbox.metadata.read", "mailbox.content.read", "send.propose"],
  adminRelations: ["approval.decide"],
  adminOrgRelations: ["ediscovery.export"],
  // Ben's agents: the travel desk asks the calendar, which answers, is told of a
  // booking (still waiting), and asks the travel desk something it rejects.
  agents: { travel: "Travel desk", calendar: "Calendar assistant" },
};

/** Whether the demo has agent messaging: set once the node has been asked. */
let messaging = false;

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
    ...demo.teamRelations.map((relation) => [`${team.id}#member`, relation, mailbox.id]),
    ...demo.adminRelations.map((relation) => [admin.id, relation, mailbox.id]),
    ...demo.adminOrgRelations.map((relation) => [admin.id, relation, "org"]),
  ];
  for (const [subject, relation, object] of grants) {
    await call(`granting ${relation}`, 201, "POST", "/api/relations", { subject, relation, object }, token);
  }
  const from = "ana@customer.example";
  const delivery = await fetch(
    `${base}/cdn-cgi/handler/email?from=${encodeURIComponent(from)}&to=${encodeURIComponent(demo.mailbox.address)}`,
    { method: "POST", body: welcomeMessage() },
  );
  if (delivery.status !== 200) throw new Error(`delivering the first message: ${delivery.status} ${await delivery.text()}`);
  await seedReminders(token);
  messaging = await seedMessaging(token, person);
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

/** A key for one message: the seed's own, so a repeated step would not send it twice. */
const key = (name) => `demo-${name}`;

/**
 * Two agents Ben sponsors with the agent.messaging capability, and their
 * messages, sent and worked through with each agent's own credential: an
 * answered request (claimed as a lease, replied to with its fencing token; the
 * reply taken and acknowledged), an event still waiting, and a rejected request. Answers false, having made
 * nothing, on a node that does not run agent messaging.
 */
async function seedMessaging(token, person) {
  const probe = await fetch(`${base}/api/agent-messages`, { headers: { authorization: `Bearer ${token}` } });
  if (probe.status === 404 && (await probe.json().catch(() => null))?.error?.code === "feature_disabled") return false;
  if (probe.status !== 200) throw new Error(`asking whether the node runs agent messaging: ${probe.status} ${await probe.text()}`);
  const mint = (name) => call(`minting ${name}`, 201, "POST", "/api/agents", { name, sponsor: person.id, capabilities: ["agent.messaging"], mailboxes: [], delivery: "credential" }, token);
  const travel = await mint(demo.agents.travel);
  const calendar = await mint(demo.agents.calendar);
  const send = (step, from, body) => call(step, 202, "POST", "/api/agent-messages", body, from.credential);
  /** The one message `agent` claims next, which must be `expected`. */
  async function claimOne(agent, expected) {
    const { messages } = await call(`${agent.agent.name} claiming`, 200, "POST", "/api/agent-inbox/leases", { max: 1, lease_seconds: 60 }, agent.credential);
    if (messages[0]?.id !== expected.id) throw new Error(`${agent.agent.name} claimed ${JSON.stringify(messages)}, not ${expected.id}`);
    return messages[0];
  }

  const question = await send("asking the calendar for free slots", travel, {
    recipient: calendar.agent.id,
    kind: "request",
    content: { ask: "free_slots", person: demo.person.email, between: [day(7), day(9)], minutes: 90 },
    idempotency_key: key("free-slots"),
  });
  const claimed = await claimOne(calendar, question);
  const answered = await call("the calendar answering", 200, "POST", `/api/agent-inbox/${claimed.id}/reply`, {
    fencing_token: claimed.fencing_token,
    content: { free: [`${day(7)}T09:00`, `${day(8)}T14:30`], zone: "UTC" },
  }, calendar.credential);
  // The answer waits in the travel desk's inbox, which takes it and acknowledges it.
  const answer = await claimOne(travel, answered.reply);
  await call("the travel desk taking the answer", 200, "POST", `/api/agent-inbox/${answer.id}/ack`, { fencing_token: answer.fencing_token }, travel.credential);

  await send("telling the calendar of a booking", travel, {
    recipient: calendar.agent.id,
    kind: "event",
    content: { event: "trip_booked", to: "Lisbon", leaves: `${day(8)}T14:30`, returns: day(11) },
    idempotency_key: key("trip-booked"),
  });

  const hotel = await send("asking the travel desk for a hotel", calendar, {
    recipient: travel.agent.id,
    kind: "request",
    content: "Book me a hotel near the office for the nights of the trip, please.",
    idempotency_key: key("hotel"),
  });
  const leased = await claimOne(travel, hotel);
  await call("the travel desk rejecting", 200, "POST", `/api/agent-inbox/${leased.id}/reject`, {
    fencing_token: leased.fencing_token,
    reason: "Hotels are booked by a person: ask Ben.",
  }, travel.credential);
  return true;
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
  Ada approves what Ben submits and may export mail (Exports); Ben has a few reminders, one kept by the source visa-office${messaging
    ? `;\n  Ben sponsors two agents, ${demo.agents.travel} and ${demo.agents.calendar}, that have exchanged messages: see Connections`
    : ""})

  Send it mail:  curl -X POST '${base}/cdn-cgi/handler/email?from=you@example.com&to=${demo.mailbox.address}' --data-binary @message.eml
  API:           curl -X POST ${base}/api/sessions -d '{"email":"${demo.admin.email}","password":"${demo.admin.password}"}'
`);

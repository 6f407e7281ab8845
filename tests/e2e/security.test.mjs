// The attacks of a security review, on real workerd and D1. Limits that hold
// under concurrency: an attempt is counted before its secret is checked, so of a
// hundred parallel guesses only those within the limit are ever checked, and the
// right secret sent among them past the limit is refused like the rest. Dual
// control that cannot be switched: an agent changing its submission over MCP
// after a person was shown it never gets the changed one approved.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startNode, setUp, ADMIN, assertRefusal } from "./harness.mjs";

const PASSWORD = "a long enough password";
let node, call, token, admin, carol, carolToken;

before(async () => {
  node = await startNode();
  ({ call, token, admin } = await setUp(node));
  // Signed in before the guessing tests spend this address's sign-in window.
  carol = (await call("POST", "/api/people", { token, body: { email: "carol@example.com", name: "Carol", password: PASSWORD } })).body;
  carolToken = (await call("POST", "/api/sessions", { body: { email: carol.email, password: PASSWORD } })).body.session.access_token;
});
after(() => node?.stop());

/** How many of `responses` reached the secret check (answered `checked`) and how many were paused (429). */
function tally(responses, checked) {
  const codes = responses.map((response) => response.body?.error?.code ?? String(response.status));
  return { checked: codes.filter((code) => code === checked).length, paused: codes.filter((code) => code.startsWith("too_many")).length, codes };
}

test("a hundred parallel wrong passwords for one account from one address: at most ten are checked", async () => {
  const person = (await call("POST", "/api/people", { token, body: { email: "ben@example.com", name: "Ben", password: "ben's first long password" } })).body;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/sessions", { body: { email: person.email, password: `guess number ${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_email_or_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("in a burst of forty, the right password past the limit is refused like the guesses", async () => {
  const burst = Array.from({ length: 40 }, (_, index) => ({ email: ADMIN.email, password: index === 34 ? ADMIN.password : `guess ${index}` }));
  const answers = await Promise.all(burst.map((body) => call("POST", "/api/sessions", { body })));
  const { checked, paused } = tally(answers, "wrong_email_or_password");
  const signedIn = answers.filter((answer) => answer.status === 201).length;
  assert.ok(checked + signedIn <= 10, `${checked + signedIn} attempts were checked`);
  assert.ok(paused >= 30);
  // Which attempts got a slot depends on arrival order; the limit does not.
});

test("a hundred parallel wrong current passwords through one session: at most ten are checked", async () => {
  const session = token;
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) =>
      call("POST", "/api/me/password", { token: session, body: { current_password: `guess ${index}`, new_password: "a new long password here" } }),
    ),
  );
  const { checked, paused, codes } = tally(guesses, "wrong_current_password");
  assert.ok(checked <= 10, `${checked} guesses were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
});

test("a hundred parallel wrong pairing codes from one address: at most twenty are checked", async () => {
  const guesses = await Promise.all(
    Array.from({ length: 100 }, (_, index) => call("POST", "/api/agents/pair", { body: { code: `mr_pair_guess_${index}` } })),
  );
  const { checked, paused, codes } = tally(guesses, "pairing_code_invalid");
  assert.ok(checked <= 20, `${checked} codes were checked: ${codes}`);
  assert.equal(checked + paused, 100, String(codes));
  assert.equal(admin.email, ADMIN.email);
});

test("an agent that switches its submission over MCP after the approver was shown it never has the switch approved", async () => {
  const mailbox = (await call("POST", "/api/mailboxes", { token, body: { address: "billing@mailroom.test", display_name: "Billing" } })).body;
  const dan = (await call("POST", "/api/people", { token, body: { email: "dan@example.com", name: "Dan", password: PASSWORD } })).body;
  await call("POST", "/api/relations", { token, body: { subject: dan.id, relation: "send.propose", object: mailbox.id } });
  await call("POST", "/api/relations", { token, body: { subject: carol.id, relation: "approval.decide", object: mailbox.id } });
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Billing bot", sponsor: dan.id, capabilities: ["mail.draft"], mailboxes: [{ mailbox: mailbox.id, relations: ["send.propose"] }] },
  });
  assert.equal(minted.status, 201, minted.text);
  const client = new Client({ name: "mailroom-security-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => minted.body.credential } }));
  try {
    const tool = async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      assert.ok(!result.isError, `${name}: ${JSON.stringify(result)}`);
      return result.structuredContent;
    };
    const draft = await tool("create_draft", { mailboxId: mailbox.id, to: ["customer@example.org"], subject: "Invoice", text: "Invoice, 100 EUR." });
    const ids = { mailboxId: mailbox.id, sendId: draft.id };
    await tool("submit_send", ids);

    // Carol is shown the submission; then the agent switches it.
    const shown = (await call("GET", "/api/approvals", { token: carolToken })).body.sends.find((send) => send.id === draft.id);
    assert.deepEqual(shown.to, ["customer@example.org"]);
    await tool("cancel_send", ids);
    await tool("update_draft", { ...ids, to: ["attacker@evil.example"], text: "Pay to this account instead." });
    const resubmitted = await tool("submit_send", ids);
    assert.notEqual(resubmitted.version, shown.version);

    const approve = `/api/mailboxes/${mailbox.id}/sends/${draft.id}/approve`;
    const refused = await call("POST", approve, { token: carolToken, body: { version: shown.version } });
    assertRefusal(assert, refused, 409, "send_changed");
    assert.match(refused.body.error.message, /the recipients, the text/);
    const sentBefore = node.sentMail().length;
    // Approving both at once, the shown version and the current one: only the current is sealed.
    const [stale, current] = await Promise.all([
      call("POST", approve, { token: carolToken, body: { version: shown.version } }),
      call("POST", approve, { token: carolToken, body: { version: resubmitted.version } }),
    ]);
    assert.equal(stale.status, 409, stale.text);
    assert.equal(current.status, 200, current.text);
    assert.equal(current.body.version, resubmitted.version);
    assert.deepEqual(current.body.to, ["attacker@evil.example"], "what Carol approved knowingly");
    for (let attempt = 0; attempt < 40 && node.sentMail().length === sentBefore; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(node.sentMail().length, sentBefore + 1, "one message: the version approved");
  } finally {
    await client.close();
  }
});

test("a Message-ID carrying a CR and a Bcc is never kept, and a reply to it leaves with no header it did not write", async () => {
  const mailbox = (await call("POST", "/api/mailboxes", { token, body: { address: "help@mailroom.test", display_name: "Help" } })).body;
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]) {
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation, object: mailbox.id } });
  }
  await call("POST", "/api/relations", { token, body: { subject: carol.id, relation: "approval.decide", object: mailbox.id } });
  const hostile = [
    "From: Mallory <mallory@evil.example>",
    "To: help@mailroom.test",
    "Subject: Invoice",
    "Message-ID: <m@evil.example\rBcc: hidden@evil.example>",
    "References: <ok@evil.example> <r@evil.example\rBcc: also@evil.example>",
    "",
    "Please reply.",
    "",
  ].join("\r\n");
  assert.equal(await node.deliver("mallory@evil.example", "help@mailroom.test", Buffer.from(hostile)), null);
  const [received] = (await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token })).body.messages;
  const stored = (await call("GET", `/api/mailboxes/${mailbox.id}/messages/${received.id}`, { token })).body;
  assert.doesNotMatch(JSON.stringify(stored), /hidden@evil|also@evil|\\r/);

  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = await call("POST", sends, { token, body: { to: ["mallory@evil.example"], subject: "Re: Invoice", text: "No.", reply_to: received.id } });
  assert.equal(draft.status, 201, draft.text);
  assert.ok(draft.body.references.includes("ok@evil.example"));
  const { version } = (await call("POST", `${sends}/${draft.body.id}/submit`, { token })).body;
  const sentBefore = node.sentMail().length;
  const approved = await call("POST", `${sends}/${draft.body.id}/approve`, { token: carolToken, body: { version } });
  assert.equal(approved.body.state, "dispatched", approved.text);
  let sent = [];
  for (let attempt = 0; attempt < 40 && sent.length === 0; attempt++) {
    sent = node.sentMail().slice(sentBefore);
    if (!sent.length) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(sent.length, 1);
  assert.doesNotMatch(sent[0], /^Bcc:/im);
  assert.doesNotMatch(sent[0], /hidden@evil|also@evil/);
  assert.match(sent[0], /^References: <ok@evil\.example>/m);
});

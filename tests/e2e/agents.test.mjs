// Agents on real workerd: minted by an administrator for a sponsor, connected
// with the official MCP client under their mr_agt_ credential, bound by their
// ceiling and by their sponsor's live authority, and recorded as "agt_… for usr_…".
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ROOT, assertRefusal, checkedFetch } from "./harness.mjs";
import { startDesk } from "./fixtures.mjs";

let node, call, token, desk, mailbox, ben, receipt;

before(async () => {
  ({ node, call, token, desk } = await startDesk());
  mailbox = await desk.mailbox("support@mailroom.test", "Support");
  ben = await desk.person({ email: "ben@example.com", name: "Ben", password: "ben's long password" });
  await desk.grant(ben.id, ["mailbox.metadata.read", "mailbox.content.read"], mailbox.id);
  assert.equal(await node.deliver("ana@customer.example", "support@mailroom.test", readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"))), null);
});
after(() => node?.stop());

async function mint(capabilities, relations, delivery) {
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Triage bot", sponsor: ben.id, capabilities, mailboxes: [{ mailbox: mailbox.id, relations }], ...(delivery ? { delivery } : {}) },
  });
  assert.equal(minted.status, 201, minted.text);
  return minted.body;
}

async function connect(credential) {
  const client = new Client({ name: "mailroom-agent-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => credential }, fetch: checkedFetch }),
  );
  return client;
}

test("a minted agent connects over MCP, sees exactly its tools, reads what it may and is refused the rest", async () => {
  const { agent, credential } = await mint(["mail.triage", "identity.read"], ["mailbox.metadata.read"]);
  const client = await connect(credential);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), ["get_me", "get_message", "list_messages", "list_readable_mailboxes"]);

  const me = await client.callTool({ name: "get_me", arguments: {} });
  assert.equal(me.structuredContent.kind, "agent");
  assert.equal(me.structuredContent.sponsor, ben.id);
  // Each mailbox names what the agent can do there: its relations, cut to its ceiling.
  const readable = await client.callTool({ name: "list_readable_mailboxes", arguments: {} });
  assert.deepEqual(readable.structuredContent.mailboxes.map((each) => [each.address, each.tools]), [["support@mailroom.test", ["list_messages", "get_message"]]]);
  const listed = await client.callTool({ name: "list_messages", arguments: { mailbox_id: mailbox.id } });
  receipt = listed.structuredContent.messages[0].id;
  assert.equal(listed.structuredContent.messages[0].subject, "Where is my invoice?");
  await assert.rejects(client.callTool({ name: "get_message_body", arguments: { mailbox_id: mailbox.id, receipt_id: receipt } }), (error) => {
    assert.equal(error.code, -32602);
    assert.equal(error.data.error.code, "outside_ceiling");
    assert.ok(error.data.error.fix);
    return true;
  });
  // An agent is never the second person on a send: no tool, and the refusal says why and what would change it.
  await assert.rejects(client.callTool({ name: "approve_send", arguments: { mailbox_id: mailbox.id, send_id: "snd_00000000000000000000000000" } }), (error) => {
    assert.equal(error.code, -32602);
    assert.equal(error.data.error.code, "not_for_agents");
    assert.match(error.data.error.reason, /never be that second person/);
    assert.match(error.message, /Fix: Ask a person/);
    return true;
  });

  // The ceiling binds the same route over REST.
  const rest = await call("GET", `/api/mailboxes/${mailbox.id}/messages/${receipt}/body`, { token: credential });
  assertRefusal(assert, rest, 403, "outside_ceiling");

  const audit = (await call("GET", "/api/audit?limit=10", { token })).body.entries;
  const read = audit.find((entry) => entry.action === "list_messages");
  assert.equal(read, undefined, "metadata reads are not audited");
  const refused = audit.find((entry) => entry.action === "get_message_body");
  assert.equal(refused.actor, agent.id);
  assert.equal(refused.delegator, ben.id);
  assert.equal(refused.actor_kind, "agent");
  assert.equal(refused.outcome, "refused");
  await client.close();
});

test("the agent loses what its sponsor loses, on its next request", async () => {
  const { credential } = await mint(["mail.read", "mail.triage"], ["mailbox.metadata.read", "mailbox.content.read"]);
  const body = () => call("GET", `/api/mailboxes/${mailbox.id}/messages/${receipt}/body`, { token: credential });
  assert.equal((await body()).status, 200);
  await call("POST", "/api/relations/revoke", { token, body: { subject: ben.id, relation: "mailbox.content.read", object: mailbox.id } });
  assertRefusal(assert, await body(), 403, "missing_relation");
  await call("POST", "/api/relations", { token, body: { subject: ben.id, relation: "mailbox.content.read", object: mailbox.id } });
  assert.equal((await body()).status, 200);
});

test("pairing: a code redeemed once for a credential that works, then revocation stops it", async () => {
  const { agent, pairing } = await mint(["identity.read"], ["mailbox.metadata.read"], "pairing_code");
  const redeemed = await call("POST", "/api/agents/pair", { body: { code: pairing.code } });
  assert.equal(redeemed.status, 200, redeemed.text);
  const credential = redeemed.body.credential;
  assert.equal((await call("GET", "/api/me", { token: credential })).body.id, agent.id);
  assertRefusal(assert, await call("POST", "/api/agents/pair", { body: { code: pairing.code } }), 401, "pairing_code_invalid");
  await call("POST", `/api/agents/${agent.id}/revoke`, { token });
  assertRefusal(assert, await call("GET", "/api/me", { token: credential }), 401, "agent_revoked");
  const shown = (await call("GET", `/api/agents/${agent.id}`, { token })).body;
  assert.equal(shown.state, "revoked");
  assert.deepEqual(shown.capabilities, [{ name: "identity.read", held: 1, total: 1 }]);
});

test("what the sponsor holds through a team the agent loses when the sponsor leaves it, on every reading predicate", async () => {
  const billing = await desk.mailbox("billing@mailroom.test", "Billing");
  assert.equal(await node.deliver("ana@customer.example", billing.address, readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"))), null);
  const team = (await call("POST", "/api/teams", { token, body: { name: "Billing" } })).body;
  assert.equal((await call("PUT", `/api/teams/${team.id}/members/${ben.id}`, { token })).status, 200);
  await desk.grant(`${team.id}#member`, ["mailbox.metadata.read", "mailbox.content.read"], billing.id);
  const minted = await call("POST", "/api/agents", {
    token,
    body: {
      name: "Billing reader",
      sponsor: ben.id,
      capabilities: ["mail.read", "mail.triage"],
      mailboxes: [{ mailbox: billing.id, relations: ["mailbox.metadata.read", "mailbox.content.read"] }],
    },
  });
  assert.equal(minted.status, 201, minted.text);
  const credential = minted.body.credential;
  const billingReceipt = (await call("GET", `/api/mailboxes/${billing.id}/messages`, { token: credential })).body.messages[0].id;
  /** What the agent sees of billing@: its listing, a message's text, and search by a word of the text. */
  const seen = async () => ({
    listed: (await call("GET", "/api/mailboxes/readable", { token: credential })).body.mailboxes.some((each) => each.id === billing.id),
    text: (await call("GET", `/api/mailboxes/${billing.id}/messages/${billingReceipt}/body`, { token: credential })).status,
    found: (await call("GET", `/api/search?q=invoice&mailbox=${billing.id}`, { token: credential })).body.results?.length ?? 0,
  });
  assert.deepEqual(await seen(), { listed: true, text: 200, found: 1 });

  assert.equal((await call("DELETE", `/api/teams/${team.id}/members/${ben.id}`, { token })).status, 200);
  const after = await seen();
  assert.equal(after.listed, false, "billing@ is no longer listed");
  assert.equal(after.text, 404, "holding nothing there, the mailbox answers as if it did not exist");
  assert.equal(after.found, 0);

  // Back in the team, the agent's own tuples count again; a disabled sponsor stops everything.
  assert.equal((await call("PUT", `/api/teams/${team.id}/members/${ben.id}`, { token })).status, 200);
  assert.deepEqual(await seen(), { listed: true, text: 200, found: 1 });
  assert.equal((await call("POST", `/api/people/${ben.id}/disable`, { token })).status, 200);
  assertRefusal(assert, await call("GET", "/api/mailboxes/readable", { token: credential }), 403, "sponsor_disabled");
  assert.equal((await call("POST", `/api/people/${ben.id}/enable`, { token })).status, 200);
  assert.deepEqual(await seen(), { listed: true, text: 200, found: 1 });
});

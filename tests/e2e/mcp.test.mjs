// The MCP server on real workerd, driven by the official TypeScript SDK client
// as an administrator, as a person who is not one and as a stranger, by raw HTTP for the stateless revision, and by
// the MCP conformance suite.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startNode, setUp, ROOT, checkedFetch } from "./harness.mjs";

const openapi = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8"));
const grantable = Object.values(openapi.paths)
  .flatMap((methods) => Object.values(methods))
  .filter((operation) => operation["x-mailroom-grantable"])
  .map((operation) => operation.operationId)
  .sort();

let node, call, token, admin, mailbox;

before(async () => {
  node = await startNode();
  ({ call, token, admin } = await setUp(node));
  mailbox = (await call("POST", "/api/mailboxes", { token, body: { address: "support@mailroom.test", display_name: "Support" } })).body;
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]) {
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation, object: mailbox.id } });
  }
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"));
  assert.equal(await node.deliver("ana@customer.example", "support@mailroom.test", raw), null);
});
after(() => node?.stop());

async function connect(bearer) {
  const client = new Client({ name: "mailroom-e2e", version: "1.0.0" });
  const headers = bearer ? { authorization: `Bearer ${bearer}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { requestInit: { headers }, fetch: checkedFetch }));
  return client;
}

test("a person's session sees read and act tools, calls them, and gets refusals as results", async () => {
  const client = await connect(token);
  assert.match(client.getInstructions(), /Mailroom/);
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  for (const name of ["get_me", "list_messages", "get_message_body", "create_draft", "search_messages", "list_people"]) {
    assert.ok(names.includes(name), `${name} is offered to an administrator's session`);
  }
  for (const name of ["approve_send", "create_person", "grant_relation", "list_audit_entries", "mcp_endpoint"]) {
    assert.ok(!names.includes(name), `${name} is never offered`);
  }

  const me = await client.callTool({ name: "get_me", arguments: {} });
  assert.equal(me.isError, false);
  assert.equal(me.structuredContent.id, admin.id);

  const { messages } = (await client.callTool({ name: "list_messages", arguments: { mailboxId: mailbox.id } })).structuredContent;
  assert.equal(messages[0].subject, "Where is my invoice?");
  const body = await client.callTool({ name: "get_message_body", arguments: { mailboxId: mailbox.id, receiptId: messages[0].id } });
  assert.match(body.structuredContent.text, /order 4471/);

  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailboxId: mailbox.id, to: ["ana@customer.example"], subject: "Re: Where is my invoice?", text: "On its way.", reply_to: messages[0].id },
  });
  assert.equal(draft.isError, false, JSON.stringify(draft));
  assert.equal(draft.structuredContent.state, "draft");
  const entries = (await call("GET", "/api/audit?limit=5", { token })).body.entries;
  const recorded = entries.find((entry) => entry.action === "create_draft");
  assert.equal(recorded.surface, "mcp");
  assert.equal(recorded.actor, admin.id);
  assert.equal(recorded.object, draft.structuredContent.id);

  const refused = await client.callTool({ name: "list_messages", arguments: { mailboxId: "mbx_00000000000000000000000000" } });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, "not_found");
  assert.ok(refused.structuredContent.error.fix);

  await assert.rejects(client.callTool({ name: "approve_send", arguments: { mailboxId: mailbox.id, sendId: draft.structuredContent.id } }), (error) => {
    assert.equal(error.code, -32602);
    assertWithheld(error, "never_offered", /second person/);
    return true;
  });
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (error) => {
    assert.equal(error.code, -32602);
    assert.match(error.message, /Unknown tool: no_such_tool/);
    assert.equal(error.data, undefined, "a name no route has carries no refusal");
    return true;
  });
  await client.close();
});

/** A withheld tool's -32602: the four-part refusal in `data`, and in the message a model reads. */
function assertWithheld(error, code, why) {
  const refusal = error.data?.error;
  assert.equal(refusal?.code, code, JSON.stringify(error.data));
  for (const part of ["message", "reason", "fix"]) {
    assert.ok(refusal[part]?.trim(), `the withheld tool's refusal has no ${part}`);
    assert.ok(error.message.includes(refusal[part]), `the error's message omits the ${part}`);
  }
  assert.match(refusal.reason, why);
}

test("a person who is not an administrator sees the mailbox tools they hold, reads, acts, and is told what is withheld", async () => {
  const ben = (await call("POST", "/api/people", { token, body: { email: "ben@example.com", name: "Ben", password: "ben's long password" } })).body;
  for (const relation of ["mailbox.metadata.read", "send.propose"]) {
    assert.equal((await call("POST", "/api/relations", { token, body: { subject: ben.id, relation, object: mailbox.id } })).status, 201);
  }
  const session = await call("POST", "/api/sessions", { body: { email: "ben@example.com", password: "ben's long password" } });
  assert.equal(session.status, 201, session.text);
  const client = await connect(session.body.session.access_token);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of ["get_me", "list_messages", "get_message", "create_draft", "submit_send"]) {
    assert.ok(names.includes(name), `${name} is offered to ben, who holds what it needs on support@`);
  }
  for (const name of ["list_people", "list_all_mailboxes", "get_message_body", "get_message_original", "approve_send"]) {
    assert.ok(!names.includes(name), `${name} is not offered to ben`);
  }

  const { messages } = (await client.callTool({ name: "list_messages", arguments: { mailboxId: mailbox.id } })).structuredContent;
  assert.equal(messages[0].subject, "Where is my invoice?");
  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailboxId: mailbox.id, to: ["ana@customer.example"], subject: "Re: Where is my invoice?", text: "Looking into it.", reply_to: messages[0].id },
  });
  assert.equal(draft.isError, false, JSON.stringify(draft));
  assert.equal(draft.structuredContent.state, "draft");
  const recorded = (await call("GET", "/api/audit?limit=5", { token })).body.entries.find((entry) => entry.object === draft.structuredContent.id);
  assert.equal(recorded.action, "create_draft");
  assert.equal(recorded.actor, ben.id);
  assert.equal(recorded.surface, "mcp");

  // Off his list by what he holds: the route's own refusal, as over REST.
  const body = await client.callTool({ name: "get_message_body", arguments: { mailboxId: mailbox.id, receiptId: messages[0].id } });
  assert.equal(body.isError, true);
  assert.equal(body.structuredContent.error.code, "missing_relation");
  // Withheld: no tool, with why and what would change it.
  await assert.rejects(client.callTool({ name: "list_people", arguments: {} }), (error) => {
    assert.equal(error.code, -32602);
    assertWithheld(error, "missing_relation", /org\.admin/);
    return true;
  });
  await client.close();
});

test("a stranger sees exactly the grantable tools and is refused by the routes themselves", async () => {
  const client = await connect(null);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), grantable);
  const me = await client.callTool({ name: "get_me", arguments: {} });
  assert.equal(me.isError, true);
  assert.equal(me.structuredContent.error.code, "not_signed_in");
  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailboxId: mailbox.id, to: ["ana@customer.example"], subject: "Hello", text: "From nobody." },
  });
  assert.equal(draft.isError, true, JSON.stringify(draft));
  assert.equal(draft.structuredContent.error.code, "not_signed_in");
  assert.ok(draft.structuredContent.error.fix);
  assert.match(draft.content[0].text, /not_signed_in/);
  await assert.rejects(client.callTool({ name: "list_people", arguments: {} }), (error) => {
    assert.equal(error.code, -32602);
    assertWithheld(error, "people_only", /no credential/);
    return true;
  });
  await client.close();
});

test("the stateless revision answers server/discover and checks its headers", async () => {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const post = (headers, body) =>
    checkedFetch(`${node.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const discover = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover", accept: "application/json" },
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } },
  );
  assert.equal(discover.status, 200);
  const result = (await discover.json()).result;
  assert.equal(result.resultType, "complete");
  assert.ok(result.supportedVersions.includes("2026-07-28"));
  const mismatch = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "list_people" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { _meta: meta, name: "get_me", arguments: {} } },
  );
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  // A method the server does not have is a JSON-RPC error with a 404 of its own in
  // this revision, which the contract lists for the endpoint.
  const unknown = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "resources/list" },
    { jsonrpc: "2.0", id: 5, method: "resources/list", params: { _meta: meta } },
  );
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).error.code, -32601);
  const call = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "get_me", authorization: `Bearer ${token}` },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { _meta: meta, name: "get_me", arguments: {} } },
  );
  const called = (await call.json()).result;
  assert.equal(called.resultType, "complete");
  assert.equal(called.structuredContent.id, admin.id);
  for (const method of ["GET", "DELETE"]) assert.equal((await checkedFetch(`${node.url}/mcp`, { method })).status, 405);
  const foreign = await post({ origin: "http://evil.example" }, { jsonrpc: "2.0", id: 4, method: "ping" });
  assert.equal(foreign.status, 403);
});

// Scenarios of the conformance suite that need fixture tools, prompts,
// resources, logging, completion, sampling, elicitation or SSE streams do not
// apply to this server; the README lists each with its reason.
const CONFORMANCE = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];
const conformanceCli = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

for (const scenario of CONFORMANCE) {
  test(`MCP conformance: ${scenario}`, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [conformanceCli, "server", "--url", `${node.url}/mcp`, "--scenario", scenario], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    }).catch((error) => {
      throw new Error(`${scenario} failed:\n${error.stdout}\n${error.stderr}`);
    });
    assert.doesNotMatch(stdout, /FAIL/, stdout);
  });
}

test("every server scenario of the pinned suite is run here or named in the README with its reason", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [conformanceCli, "list"], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
  const server = stdout.split(/Client scenarios/)[0];
  const scenarios = [...server.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]);
  assert.ok(scenarios.length > CONFORMANCE.length, stdout);
  for (const scenario of CONFORMANCE) assert.ok(scenarios.includes(scenario), `${scenario} is a scenario of the suite`);
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const paragraph = readme.slice(readme.indexOf("MCP conformance suite"), readme.indexOf("\n## ", readme.indexOf("MCP conformance suite")));
  const named = [...paragraph.matchAll(/`([a-z0-9-]+)(\*?)`/g)].map(([, name, wildcard]) => (wildcard ? new RegExp(`^${name}`) : new RegExp(`^${name}$`)));
  const unaccounted = scenarios.filter((scenario) => !CONFORMANCE.includes(scenario) && !named.some((pattern) => pattern.test(scenario)));
  assert.deepEqual(unaccounted, [], "scenarios neither run nor explained in the README");
});

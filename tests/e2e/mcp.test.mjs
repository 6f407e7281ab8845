// The MCP server on real workerd, driven by the official TypeScript client (v2)
// as an administrator and as a person who is not one, a stranger challenged, in both
// protocol eras (the initialize handshake, and 2026-07-28 stateless with its
// per-request `_meta`), with credentials that stop working under it, by raw HTTP
// for the stateless revision's header checks, and by the MCP conformance suite.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport, ProtocolError, SdkHttpError, UnauthorizedError } from "@modelcontextprotocol/client";
import { ROOT, checkedFetch, setUp, startNode } from "./harness.mjs";
import { auditTrail, personNamed, startDesk, startReceiver } from "./fixtures.mjs";

const openapi = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8"));
const grantable = Object.values(openapi.paths)
  .flatMap((methods) => Object.values(methods))
  // This node runs as wrangler.toml ships it: features an operator turns on are off.
  .filter((operation) => operation["x-mailroom-grantable"] && !operation["x-mailroom-feature"])
  .map((operation) => operation.operationId)
  .sort();

let node, call, token, admin, desk, mailbox;

before(async () => {
  ({ node, call, token, admin, desk } = await startDesk());
  mailbox = await desk.mailbox("support@mailroom.test", "Support");
  await desk.grant(admin.id, ["mailbox.metadata.read", "mailbox.content.read", "send.propose"], mailbox.id);
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"));
  assert.equal(await node.deliver("ana@customer.example", "support@mailroom.test", raw), null);
});
after(() => node?.stop());

const MODERN = "2026-07-28";

/**
 * The official client connected as the holder of `bearer` (a stranger with none),
 * in the initialize era unless `modern`, when it is pinned to 2026-07-28. `fetch`
 * lets a test see what went over the wire (through `checkedFetch`, as the default).
 */
async function connect(bearer, { modern = false, fetch } = {}) {
  const options = modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {};
  const client = new Client({ name: "mailroom-e2e", version: "1.0.0" }, options);
  const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), {
    ...(bearer ? { authProvider: { token: async () => bearer } } : {}),
    // Every answer is held to the OpenAPI document, as every REST call is.
    fetch: fetch ?? checkedFetch,
  });
  await client.connect(transport);
  assert.equal(client.getProtocolEra(), modern ? "modern" : "legacy");
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

  const { messages } = (await client.callTool({ name: "list_messages", arguments: { mailbox_id: mailbox.id } })).structuredContent;
  assert.equal(messages[0].subject, "Where is my invoice?");
  const body = await client.callTool({ name: "get_message_body", arguments: { mailbox_id: mailbox.id, receipt_id: messages[0].id } });
  assert.match(body.structuredContent.text, /order 4471/);

  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailbox_id: mailbox.id, to: ["ana@customer.example"], subject: "Re: Where is my invoice?", text: "On its way.", reply_to: messages[0].id },
  });
  assert.equal(draft.isError, false, JSON.stringify(draft));
  assert.equal(draft.structuredContent.state, "draft");
  const entries = (await auditTrail(call, token, 5));
  const recorded = entries.find((entry) => entry.action === "create_draft");
  assert.equal(recorded.surface, "mcp");
  assert.equal(recorded.actor, admin.id);
  assert.equal(recorded.object, draft.structuredContent.id);

  const refused = await client.callTool({ name: "list_messages", arguments: { mailbox_id: "mbx_00000000000000000000000000" } });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, "not_found");
  assert.ok(refused.structuredContent.error.fix);

  await assert.rejects(client.callTool({ name: "approve_send", arguments: { mailbox_id: mailbox.id, send_id: draft.structuredContent.id } }), (error) => {
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

test("every tool argument is snake_case, and a call is held to its tool's schema, in both eras", async () => {
  for (const modern of [false, true]) {
    const client = await connect(token, { modern });
    for (const tool of (await client.listTools()).tools) {
      for (const name of Object.keys(tool.inputSchema.properties ?? {})) {
        assert.match(name, /^[a-z0-9_]+$/, `${tool.name}: argument ${name} is not snake_case`);
      }
      assert.doesNotMatch(tool.description, /`[a-z]+[A-Z][A-Za-z]*Id`/, `${tool.name} names an argument it does not take`);
    }
    const invalid = async (name, args, says) =>
      assert.rejects(client.callTool({ name, arguments: args }), (error) => {
        assert.ok(error instanceof ProtocolError, String(error));
        assert.equal(error.code, -32602, error.message);
        assert.equal(error.data?.error?.code, "invalid_arguments", JSON.stringify(error.data));
        for (const part of ["message", "reason", "fix"]) assert.ok(error.message.includes(error.data.error[part]), `the message omits the ${part}`);
        assert.ok(error.data.error.message.includes(says), `${error.data.error.message} does not say ${says}`);
        assert.doesNotMatch(JSON.stringify(error.data), /:mailboxId|:receiptId/, "no route template");
        return true;
      });
    // An argument the schema does not declare, by name, whatever the tool.
    await invalid("list_messages", { mailbox_id: mailbox.id, colour: "red" }, "takes no argument `colour`");
    await invalid("get_me", { verbose: true }, "takes no argument `verbose`");
    // Required ones left out, named: a path argument (no template in sight), a query parameter.
    await invalid("list_messages", {}, "list_messages needs `mailbox_id`");
    await invalid("get_message_body", { mailbox_id: mailbox.id }, "needs `receipt_id`");
    await invalid("search_messages", {}, "needs `q`");
    // The camelCase name a client may have used before: refused, with the name it has now.
    await assert.rejects(client.callTool({ name: "list_messages", arguments: { mailboxId: mailbox.id } }), (error) => {
      assert.equal(error.code, -32602);
      assert.match(error.data.error.fix, /`mailboxId` is `mailbox_id`/);
      return true;
    });
    // A value the route cannot use is still the route's refusal, as a tool result.
    const wrong = await client.callTool({ name: "list_messages", arguments: { mailbox_id: mailbox.id, limit: 1000 } });
    assert.equal(wrong.isError, true);
    assert.equal(wrong.structuredContent.error.code, "invalid_query_parameter");
    await client.close();
  }
});

test("a parameter left out of a REST path or query is refused as missing, naming it, never as a missing object", async () => {
  for (const path of ["/api/mailboxes/:mailboxId/messages", "/api/mailboxes//messages", "/api/mailboxes/%7BmailboxId%7D/messages"]) {
    const answer = await call("GET", path, { token });
    assert.equal(answer.status, 400, `${path}: ${answer.text}`);
    assert.equal(answer.body.error.code, "missing_path_parameter");
    assert.match(answer.body.error.message, /`mailboxId`/);
  }
  const search = await call("GET", "/api/search", { token });
  assert.equal(search.status, 400, search.text);
  assert.equal(search.body.error.code, "missing_query_parameter");
  assert.match(search.body.error.message, /`q`/);
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
  const ben = await desk.colleague({ email: "ben@example.com", name: "Ben", password: "ben's long password" }, ["mailbox.metadata.read", "send.propose"], mailbox.id);
  const client = await connect(ben.token);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of ["get_me", "list_messages", "get_message", "create_draft", "submit_send"]) {
    assert.ok(names.includes(name), `${name} is offered to ben, who holds what it needs on support@`);
  }
  for (const name of ["list_people", "list_all_mailboxes", "get_message_body", "get_message_original", "approve_send"]) {
    assert.ok(!names.includes(name), `${name} is not offered to ben`);
  }

  const { messages } = (await client.callTool({ name: "list_messages", arguments: { mailbox_id: mailbox.id } })).structuredContent;
  assert.equal(messages[0].subject, "Where is my invoice?");
  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailbox_id: mailbox.id, to: ["ana@customer.example"], subject: "Re: Where is my invoice?", text: "Looking into it.", reply_to: messages[0].id },
  });
  assert.equal(draft.isError, false, JSON.stringify(draft));
  assert.equal(draft.structuredContent.state, "draft");
  const recorded = (await auditTrail(call, token, 5)).find((entry) => entry.object === draft.structuredContent.id);
  assert.equal(recorded.action, "create_draft");
  assert.equal(recorded.actor, ben.id);
  assert.equal(recorded.surface, "mcp");

  // Off his list by what he holds: the route's own refusal, as over REST.
  const body = await client.callTool({ name: "get_message_body", arguments: { mailbox_id: mailbox.id, receipt_id: messages[0].id } });
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

test("a stranger is challenged on every method, and the challenge leads to the node's OAuth metadata", async () => {
  // Clients start OAuth only on a 401 (decision 0026).
  await assert.rejects(connect(null), (error) => error instanceof UnauthorizedError || error instanceof SdkHttpError || /401/.test(String(error)));
  for (const method of ["initialize", "tools/list", "tools/call", "ping"]) {
    const answer = await checkedFetch(`${node.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: method === "tools/call" ? { name: "get_me", arguments: {} } : {} }),
    });
    assert.equal(answer.status, 401, method);
    const challenge = answer.headers.get("www-authenticate");
    assert.equal(challenge, `Bearer realm="mailroom", resource_metadata="${node.url}/.well-known/oauth-protected-resource/mcp"`, method);
    assert.equal((await answer.json()).error.code, "not_signed_in", method);
  }
  const metadata = await (await checkedFetch(`${node.url}/.well-known/oauth-protected-resource/mcp`)).json();
  assert.equal(metadata.resource, `${node.url}/mcp`);
  assert.deepEqual(metadata.authorization_servers, [node.url]);
  // What a stranger was once offered over MCP is published without a credential.
  const skill = readFileSync(join(ROOT, "skills", "mailroom", "SKILL.md"), "utf8");
  for (const tool of grantable) assert.ok(skill.includes(`\`${tool}\``), `the Skill names ${tool}`);
});

/** A fetch that records each exchange with the node: what was sent and what came back. */
function recordingFetch() {
  const exchanges = [];
  const recording = async (url, init) => {
    const response = await checkedFetch(url, init);
    const sent = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    const text = await response.clone().text();
    let answered = null;
    try {
      answered = JSON.parse(text);
    } catch {}
    exchanges.push({ headers: new Headers(init?.headers), sent, status: response.status, responseHeaders: response.headers, answered });
    return response;
  };
  return { recording, exchanges };
}

test("the official client speaks 2026-07-28 statelessly, and every result carries what that revision requires", async () => {
  const { recording, exchanges } = recordingFetch();
  const client = await connect(token, { modern: true, fetch: recording });
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.match(client.getInstructions() ?? "", /Mailroom/);

  // The client checks a 2026-07-28 tool list for its caching hints; listing is that check.
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  for (const name of ["get_me", "list_messages", "create_draft"]) assert.ok(names.includes(name), name);
  assert.ok(!names.includes("approve_send"));
  const me = await client.callTool({ name: "get_me", arguments: {} });
  assert.equal(me.isError, false);
  assert.equal(me.structuredContent.id, admin.id);
  const draft = await client.callTool({
    name: "create_draft",
    arguments: { mailbox_id: mailbox.id, to: ["ana@customer.example"], subject: "Stateless", text: "Sent with _meta." },
  });
  assert.equal(draft.isError, false, JSON.stringify(draft));
  const refused = await client.callTool({ name: "list_messages", arguments: { mailbox_id: "mbx_00000000000000000000000000" } });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, "not_found");

  // A withheld tool: no tool, and recorded as the route's refused call, which did
  // not run, though the administrator may decide here over REST.
  const decide = { subject: admin.id, relation: "approval.decide", object: mailbox.id };
  await desk.grant(decide.subject, [decide.relation], decide.object);
  await assert.rejects(client.callTool({ name: "approve_send", arguments: { mailbox_id: mailbox.id, send_id: draft.structuredContent.id } }), (error) => {
    assert.ok(error instanceof ProtocolError, String(error));
    assert.equal(error.code, -32602);
    assertWithheld(error, "never_offered", /second person/);
    return true;
  });
  const entries = (await auditTrail(call, token, 5));
  const withheld = entries.find((entry) => entry.action === "approve_send");
  assert.deepEqual(
    [withheld?.surface, withheld?.outcome, withheld?.actor, withheld?.detail?.code],
    ["mcp", "refused", admin.id, "never_offered"],
    JSON.stringify(entries),
  );
  assert.equal((await call("GET", `/api/mailboxes/${mailbox.id}/sends/${draft.structuredContent.id}`, { token })).body.state, "draft");
  assert.equal((await call("POST", "/api/relations/revoke", { token, body: decide })).status, 200);
  await client.close();

  // What went over the wire: no handshake, every request carrying its version in
  // `_meta` and mirrored in headers, every result its type, the server's identity
  // and, where the revision makes it cacheable, how long and for whom.
  const requests = exchanges.filter((exchange) => exchange.sent?.method && exchange.sent.id !== undefined);
  const methods = requests.map((exchange) => exchange.sent.method);
  assert.ok(!methods.includes("initialize"), methods.join());
  for (const method of ["tools/list", "tools/call"]) assert.ok(methods.includes(method), methods.join());
  for (const { headers, sent, status, responseHeaders, answered } of requests) {
    const what = `${sent.method}: ${JSON.stringify(answered)}`;
    assert.equal(sent.params?._meta?.["io.modelcontextprotocol/protocolVersion"], MODERN, what);
    assert.ok(sent.params._meta["io.modelcontextprotocol/clientCapabilities"], what);
    assert.equal(headers.get("mcp-protocol-version"), MODERN, what);
    assert.equal(headers.get("mcp-method"), sent.method, what);
    assert.equal(responseHeaders.get("mcp-session-id"), null, "stateless: no session");
    assert.equal(status, 200, what);
    const result = answered.result;
    if (!result) continue; // a withheld tool's -32602
    assert.equal(result.resultType, "complete", what);
    assert.equal(result._meta?.["io.modelcontextprotocol/serverInfo"]?.name, "mailroom", what);
    if (sent.method === "tools/list") {
      assert.deepEqual([result.ttlMs, result.cacheScope], [0, "private"], what);
    } else if (sent.method === "server/discover") {
      assert.ok(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, what);
      assert.equal(result.cacheScope, "public", what);
      assert.ok(result.supportedVersions.includes(MODERN), what);
    } else {
      assert.equal(result.ttlMs, undefined, what);
    }
  }
});

/** An agent of the administrator's that may read who it is: its id and credential. */
async function mintReader(name) {
  const minted = await call("POST", "/api/agents", { token, body: { name, sponsor: admin.id, capabilities: ["identity.read"], mailboxes: [] } });
  assert.equal(minted.status, 201, minted.text);
  return { agent: minted.body.agent.id, credential: minted.body.credential };
}

/** Requires `promise` to fail as the official client fails an HTTP refusal of its credential. */
async function assertCredentialRefused(promise, status, what) {
  await assert.rejects(promise, (error) => {
    if (status === 401) {
      assert.ok(error instanceof UnauthorizedError, `${what}: ${error}`);
    } else {
      assert.ok(error instanceof SdkHttpError, `${what}: ${error}`);
      assert.equal(error.status, status, what);
    }
    return true;
  }, what);
}

for (const modern of [false, true]) {
  const era = modern ? MODERN : "the initialize era";
  test(`in ${era}, a credential that stops working fails the official client's calls as authentication, not as tool results`, async () => {
    const { agent, credential } = await mintReader(`Reader (${era})`);
    const client = await connect(credential, { modern });
    assert.equal((await client.callTool({ name: "get_me", arguments: {} })).structuredContent.id, agent);

    assert.equal((await call("POST", `/api/agents/${agent}/pause`, { token })).status, 200);
    await assertCredentialRefused(client.callTool({ name: "get_me", arguments: {} }), 403, "paused: tools/call");
    await assertCredentialRefused(client.listTools(), 403, "paused: tools/list");
    assert.equal((await call("POST", `/api/agents/${agent}/resume`, { token })).status, 200);
    assert.equal((await client.callTool({ name: "get_me", arguments: {} })).structuredContent.id, agent, "resumed, it works again");

    assert.equal((await call("POST", `/api/agents/${agent}/revoke`, { token })).status, 200);
    await assertCredentialRefused(client.callTool({ name: "get_me", arguments: {} }), 401, "revoked: tools/call");
    await assertCredentialRefused(client.listTools(), 401, "revoked: tools/list");
    await client.close();

    // A person's session signed out under a connected client.
    const reader = { email: `reader-${modern ? "modern" : "legacy"}@example.com`, name: "Reader", password: "a reader's long password" };
    await desk.person(reader);
    const session = await desk.signIn(reader);
    const person = await connect(session, { modern });
    assert.equal((await person.callTool({ name: "get_me", arguments: {} })).isError, false);
    assert.equal((await call("DELETE", "/api/sessions/current", { token: session })).status, 200);
    await assertCredentialRefused(person.callTool({ name: "get_me", arguments: {} }), 401, "signed out: tools/call");
    await person.close();
  });
}

test("a dead credential's 401 says invalid_token and a stopped agent's 403 no challenge, over REST and MCP alike", async () => {
  const { agent, credential } = await mintReader("Challenged");
  assert.equal((await call("POST", `/api/agents/${agent}/revoke`, { token })).status, 200);
  const toolCall = (bearer) =>
    checkedFetch(`${node.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_me", arguments: {} } }),
    });
  for (const [what, answer] of [
    ["REST", await checkedFetch(`${node.url}/api/me`, { headers: { authorization: `Bearer ${credential}` } })],
    ["tools/call", await toolCall(credential)],
  ]) {
    assert.equal(answer.status, 401, what);
    // Every 401 from /mcp also says where its OAuth metadata is (decision 0026).
    const metadata = what === "REST" ? "" : `, resource_metadata="${node.url}/.well-known/oauth-protected-resource/mcp"`;
    assert.equal(answer.headers.get("www-authenticate"), `Bearer realm="mailroom", error="invalid_token"${metadata}`, what);
    assert.equal((await answer.json()).error.code, "agent_revoked", what);
  }
  const anonymous = await checkedFetch(`${node.url}/api/me`);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers.get("www-authenticate"), 'Bearer realm="mailroom"', "no credential, no error");
  const paused = await mintReader("Paused");
  assert.equal((await call("POST", `/api/agents/${paused.agent}/pause`, { token })).status, 200);
  const answer = await toolCall(paused.credential);
  assert.equal(answer.status, 403);
  assert.equal(answer.headers.get("www-authenticate"), null);
  assert.equal((await answer.json()).error.code, "agent_paused");
});

test("the stateless revision answers server/discover and checks its headers", async () => {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const post = (headers, body) =>
    checkedFetch(`${node.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
      body: JSON.stringify(body),
    });
  const discover = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover", accept: "application/json" },
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } },
  );
  assert.equal(discover.status, 200);
  const result = (await discover.json()).result;
  assert.equal(result.resultType, "complete");
  assert.ok(result.supportedVersions.includes("2026-07-28"));
  assert.equal(result.cacheScope, "public");
  const mismatch = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "list_people" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { _meta: meta, name: "get_me", arguments: {} } },
  );
  assert.equal(mismatch.status, 400);
  assert.equal((await mismatch.json()).error.code, -32020);
  // A method the server does not have is a JSON-RPC error with a 404 of its own in
  // this revision, which the contract lists for the endpoint.
  const unknown = await post(
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/list" },
    { jsonrpc: "2.0", id: 5, method: "prompts/list", params: { _meta: meta } },
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

test("resources: the official client lists what the caller may read, reads a mailbox and a conversation through their routes, in both eras", async () => {
  for (const modern of [false, true]) {
    const client = await connect(token, { modern });
    const { resources } = await client.listResources();
    const uris = resources.map((resource) => resource.uri);
    const mailboxUri = `mailroom://mailboxes/${mailbox.id}`;
    assert.ok(uris.includes(mailboxUri), JSON.stringify(uris));
    assert.ok(uris.includes("mailroom://me/notifications"));
    assert.equal(resources.find((resource) => resource.uri === mailboxUri).mimeType, "application/json");
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((template) => template.name), ["mailbox", "conversation"]);
    const listed = JSON.parse((await client.readResource({ uri: mailboxUri })).contents[0].text);
    const thread = listed.threads[0];
    assert.ok(thread?.id, JSON.stringify(listed));
    const conversationUri = `${mailboxUri}/conversations/${thread.id}`;
    const conversation = JSON.parse((await client.readResource({ uri: conversationUri })).contents[0].text);
    assert.equal(conversation.id, thread.id);
    assert.match(conversation.entries[0].received.text, /^\[untrusted_content_begin /, "mail read by a machine is fenced");
    // What is not there is MCP's resource-not-found, naming it.
    await assert.rejects(client.readResource({ uri: `${mailboxUri}/conversations/thr_01M8MECXYJD8V8NXZMYC8H1337` }), /Resource not found: mailroom:\/\/mailboxes\/.*thr_01M8MECXYJD8V8NXZMYC8H1337/);
    await client.close();
  }
});

test("subscriptions/listen: the official client is acknowledged, then woken by mail arriving in a mailbox it follows, without polling", async () => {
  const client = await connect(token, { modern: true });
  const mailboxUri = `mailroom://mailboxes/${mailbox.id}`;
  const updated = [];
  let wake;
  client.setNotificationHandler("notifications/resources/updated", (notification) => {
    updated.push(notification.params.uri);
    wake?.();
  });
  const subscription = await client.listen({ resourceSubscriptions: [mailboxUri], promptsListChanged: true });
  assert.deepEqual(subscription.honoredFilter, { resourceSubscriptions: [mailboxUri] }, "only what it can send, never prompts");
  const woken = new Promise((resolve) => {
    wake = resolve;
  });
  // A message of its own (the fixture again would be the same message, delivered twice, changing nothing).
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "utf8").replace("invoice-question-1@", "invoice-question-listen@");
  const sentAt = Date.now();
  assert.equal(await node.deliver("bo@customer.example", "support@mailroom.test", raw), null);
  // Well under the stream's own re-reading (25 s): only the event path brings it.
  await Promise.race([woken, new Promise((_, reject) => setTimeout(() => reject(new Error("not woken within 8 s")), 8000))]);
  assert.deepEqual(updated, [mailboxUri]);
  assert.ok(Date.now() - sentAt < 8000);
  await subscription.close();
  assert.equal(await subscription.closed, "local");
  // A mailbox the caller may not read refuses the whole subscription, naming it.
  const other = await desk.mailbox("private@mailroom.test", "Private");
  const stranger = await connect((await desk.colleague(personNamed("Sam"))).token, { modern: true });
  await assert.rejects(stranger.listen({ resourceSubscriptions: [`mailroom://mailboxes/${other.id}`] }), /Resource not found: mailroom:\/\/mailboxes\//);
  await client.close();
  await stranger.close();
});

test("subscriptions/listen: a reminder falling due (the cron's run, no request) wakes a client following its notifications", async () => {
  const client = await connect(token, { modern: true });
  const uri = "mailroom://me/notifications";
  let wake = () => {};
  client.setNotificationHandler("notifications/resources/updated", (notification) => {
    if (notification.params.uri === uri) wake();
  });
  const subscription = await client.listen({ resourceSubscriptions: [uri] });
  const today = new Date().toISOString().slice(0, 10);
  const made = await call("POST", "/api/me/events", { token, body: { title: "Renew the certificate", due_at: today } });
  assert.equal(made.status, 201, made.text);
  // Woken by the run, not by the request that made it (whatever that told has
  // had time to arrive first).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const woken = new Promise((resolve) => {
    wake = resolve;
  });
  await node.scheduled("* * * * *");
  await Promise.race([woken, new Promise((_, reject) => setTimeout(() => reject(new Error("not woken within 8 s")), 8000))]);
  const feed = JSON.parse((await client.readResource({ uri })).contents[0].text);
  assert.ok(JSON.stringify(feed).includes("Renew the certificate"), JSON.stringify(feed));
  await subscription.close();
  await client.close();
});

// Scenarios of the conformance suite that need fixture tools, prompts,
// resources, logging, completion, sampling, elicitation or SSE streams do not
// apply to this server; the README lists each with its reason.
const CONFORMANCE = ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"];
const conformanceCli = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/**
 * A loopback proxy to the node that adds the administrator's bearer token to
 * every request: the suite's server scenarios have no way to present a
 * credential, and the endpoint answers none without one. The proxy's own host
 * and origin become the node's; any other Host or Origin (the DNS rebinding
 * scenario's) goes through unchanged, for the node to refuse.
 */
async function withCredential(bearer) {
  const upstream = new URL(node.url);
  const proxy = await startReceiver((response, request) => {
    const headers = { ...request.headers, authorization: `Bearer ${bearer}` };
    if (headers.host === proxy.host) headers.host = upstream.host;
    if (headers.origin === proxy.url) headers.origin = upstream.origin;
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: request.path, method: request.method, headers },
      (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => response.destroy());
    forwarded.end(request.bytes);
  });
  return proxy;
}

for (const scenario of CONFORMANCE) {
  test(`MCP conformance: ${scenario}`, async () => {
    const proxy = await withCredential(token);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [conformanceCli, "server", "--url", `${proxy.url}/mcp`, "--scenario", scenario], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: "1" },
      }).catch((error) => {
        throw new Error(`${scenario} failed:\n${error.stdout}\n${error.stderr}`);
      });
      assert.doesNotMatch(stdout, /FAIL/, stdout);
    } finally {
      await proxy.close();
    }
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

test("mail text over MCP is fenced with the verdict the node holds: a pass for another domain is no pass", async () => {
  // The attack, as Email Routing hands it over: the stamp passes the
  // attacker's own domain; the From shows another.
  const attack = (domain, id) =>
    `Authentication-Results: mx.cloudflare.net; dkim=pass header.d=${domain}; dmarc=pass header.from=${domain}; spf=pass smtp.mailfrom=ceo@${domain}\r\n` +
    `From: CEO <ceo@customer.example>\r\nTo: support@mailroom.test\r\nSubject: Transfer ${id}\r\nMessage-ID: <${id}@${domain}>\r\n` +
    `Date: Tue, 1 Dec 2026 09:00:00 +0000\r\n\r\nWire the money today.\r\n`;
  assert.equal(await node.deliver("ceo@evil.example", "support@mailroom.test", attack("evil.example", "forged")), null);
  assert.equal(await node.deliver("ceo@customer.example", "support@mailroom.test", attack("customer.example", "genuine")), null);
  const client = await connect(token);
  const { messages } = (await client.callTool({ name: "list_messages", arguments: { mailbox_id: mailbox.id } })).structuredContent;
  const bySubject = Object.fromEntries(messages.map((message) => [message.subject, message]));
  assert.equal(bySubject["Transfer forged"].sender_authentication, "unverified");
  assert.equal(bySubject["Transfer genuine"].sender_authentication, "authenticated");
  for (const [subject, verdict] of [["Transfer forged", "unverified"], ["Transfer genuine", "authenticated"]]) {
    const body = await client.callTool({ name: "get_message_body", arguments: { mailbox_id: mailbox.id, receipt_id: bySubject[subject].id } });
    assert.match(body.structuredContent.text, new RegExp(`^\\[untrusted_content_begin [0-9a-f]{24} sender=${verdict}\\]\\n`), body.structuredContent.text);
    assert.equal(body.structuredContent.sender_authentication, verdict);
    assert.match(body.structuredContent.content_notice, /only `authenticated` means the domain of the From shown vouched/);
  }
  const forged = (await client.callTool({ name: "get_message", arguments: { mailbox_id: mailbox.id, receipt_id: bySubject["Transfer forged"].id } })).structuredContent;
  assert.equal(forged.authentication.basis, "pass_for_another_domain");
  assert.equal(forged.authentication.verified_domain, "evil.example");
  assert.match(forged.authentication.detail, /evil\.example, not for customer\.example/);
  assert.match(client.getInstructions(), /only `authenticated` means the domain of the From shown vouched for it/);
  await client.close();
});

test("only a node configured to measure itself says where a request's time went, and its phases add up (decision 0034)", async () => {
  const toolsList = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  // This file's node runs as wrangler.toml ships it: it tells no one.
  const untimed = await call("POST", "/mcp", { token, body: toolsList });
  assert.equal(untimed.status, 200, untimed.text);
  assert.equal(untimed.headers.get("server-timing"), null);
  assert.equal((await call("GET", "/api/me")).headers.get("server-timing"), null);

  const measured = await startNode({ vars: { SERVER_TIMING: "true" } });
  try {
    const { call: measuredCall, token: measuredToken } = await setUp(measured);
    const listed = await measuredCall("POST", "/mcp", { token: measuredToken, body: toolsList });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(listed.body.result.tools.length > 0, listed.text);
    const header = listed.headers.get("server-timing");
    const metrics = Object.fromEntries(header.split(", ").map((metric) => [metric.split(";")[0], Number(/;dur=([0-9.]+)/.exec(metric)[1])]));
    const phases = ["boundary", "parse", "authority", "storage", "handler", "serialise", "audit"];
    assert.deepEqual(Object.keys(metrics), [...phases, "total"], header);
    // tools/list reads what the person holds with their session's check: one round trip.
    assert.match(header, /storage;dur=[0-9.]+;desc="1 round trip"/);
    // One phase is current at a time, so together they are the whole request.
    assert.equal(phases.reduce((sum, phase) => sum + metrics[phase], 0), metrics.total, header);
  } finally {
    await measured.stop();
  }
});

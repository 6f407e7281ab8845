// OAuth 2.1 for MCP clients (issue 16) on real workerd: an MCP client that
// speaks only OAuth discovers the node, registers itself, sends a person's
// browser to the consent, and receives tokens bound to an agent that person
// sponsors, with the ceiling they chose there.
//
// The official MCP TypeScript client does the whole dance with an in-memory
// provider, and headless Chromium plays the person: Ben, who is no
// administrator, signs in on the authorization page, keeps one capability and
// the mailbox relations it needs, and allows it. The client then sees exactly
// that capability's tools, and the audit trail records its call as the agent's
// act for Ben. Plain requests hold the protocol's edges: discovery and the
// 401 challenge, registration, PKCE, the resource indicator, a replayed code,
// a reused refresh token, the access token's audience and revocation; the
// page holds the consent's refusals, Deny, its fit on a phone and a desktop,
// and Account's connected apps, whose Disconnect stops the client at once.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer as createNetServer } from "node:net";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { ROOT, checkedFetch, assertRefusal } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, signIn, openSection } from "./browser-helpers.mjs";
import { ok, startDesk, startReceiver } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
const SALES = "sales@mailroom.test";
const BEN = { name: "Ben", email: "ben@example.com", password: "ben's long password" };
/**
 * The capability Ben lets the client have, and the relations it needs on one
 * mailbox: reading mail's content, so that every call is in the audit trail.
 */
const CHOSEN = "mail.read";
const NEEDED = ["mailbox.metadata.read", "mailbox.content.read"];
const AGENT_ID = /^agt_[0-9A-HJKMNP-TV-Z]{26}$/;

let node, call, token, browser, callback;
let support, ben, benToken, vocabulary, relations;
/** Where an MCP client's access token is good: the node's MCP endpoint. */
let RESOURCE;
const watch = new PageWatch();

/**
 * The client's redirect target: a tiny server on 127.0.0.1 that records
 * every authorization response it is sent, and answers anything (a browser's
 * favicon included) with a page that says it is done.
 */
async function startCallbackServer() {
  const server = await startReceiver((response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end('<!doctype html><title>Signed in</title><link rel="icon" href="data:,"><p>You can close this window.</p>');
  });
  /** The authorization responses so far, as URLs. */
  const callbacks = () => server.received.map((request) => new URL(request.path, server.url)).filter((url) => url.pathname === "/callback");
  return {
    url: `${server.url}/callback`,
    host: server.host,
    get received() {
      return callbacks();
    },
    /** The authorization response that arrives after `seen` had (waits up to 15 s). */
    async after(seen) {
      const deadline = Date.now() + 15_000;
      while (callbacks().length <= seen) {
        if (Date.now() > deadline) throw new Error("no authorization response reached the client's redirect");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return callbacks()[seen];
    },
    close: () => server.close(),
  };
}

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk());
  RESOURCE = `${node.url}/mcp`;
  support = await desk.mailbox(SUPPORT, "Support");
  await desk.mailbox(SALES, "Sales");
  ben = await desk.person(BEN);
  // Ben reads support@ (its list and its content) and holds nothing on sales@.
  await desk.grant(ben.id, ["mailbox.metadata.read", "mailbox.content.read"], support.id);
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"))), null);
  benToken = await desk.signIn(BEN);
  ({ capabilities: vocabulary, relations } = await ok(call("GET", "/api/agent-capabilities", { token })));
  callback = await startCallbackServer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await callback?.close();
  await node?.stop();
});

/** A capability's words (its summary), and a relation's (its description, as a sentence carries it). */
const summaryOf = (name) => vocabulary.find((entry) => entry.name === name).summary;
const wordsOf = (relation) => relations.find((entry) => entry.name === relation).description.replace(/\.$/, "");
const toolsOf = (name) => vocabulary.find((entry) => entry.name === name).routes.map((route) => route.tool).sort();

/**
 * An OAuth client provider that keeps everything in memory, as a CLI would
 * for one run: its registration, tokens, PKCE verifier, state and what
 * discovery found; and, instead of opening a browser, the authorization URL
 * it was asked to send the person to.
 */
class MemoryProvider {
  constructor(name) {
    this.name = name;
    this.authorizationUrls = [];
  }
  get redirectUrl() {
    return callback.url;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [callback.url],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      // What it needs, as a client asks for scopes: the consent starts with it ticked.
      scope: CHOSEN,
    };
  }
  state() {
    this.sentState = randomBytes(16).toString("hex");
    return this.sentState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.client = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}

const transportFor = (provider) => new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider, fetch: checkedFetch });

/** A PKCE pair: the verifier the client keeps, and its S256 challenge. */
function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Registers a client dynamically (RFC 7591), redirecting to the callback server. */
const register = (name, redirectUris = [callback.url]) => ok(call("POST", "/oauth/register", {
  body: { redirect_uris: redirectUris, client_name: name, token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
}), 201);

/** The authorization request a client sends the person's browser to, as a URL on the node. */
function authorizeUrl(client, { challenge, state, redirectUri = callback.url, scope = CHOSEN } = {}) {
  const query = new URLSearchParams({
    response_type: "code", client_id: client.client_id, redirect_uri: redirectUri,
    code_challenge: challenge ?? pkce().challenge, code_challenge_method: "S256", resource: RESOURCE, scope,
  });
  if (state) query.set("state", state);
  return `${node.url}/oauth/authorize?${query}`;
}

/**
 * Ben allows `client` through the API the consent page calls (first reading
 * the request as the page does, then answering it), which is quicker than the
 * page where the page is not the point: answers the code, its verifier, the
 * state sent back and the agent minted.
 */
async function allowAsBen(client, { capabilities = [CHOSEN], mailboxes = [{ mailbox: support.id, relations: NEEDED }] } = {}) {
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString("hex");
  const request = { client_id: client.client_id, redirect_uri: callback.url, code_challenge: challenge, code_challenge_method: "S256", state, resource: RESOURCE };
  const consent = await ok(call("GET", `/api/oauth/consent?${new URLSearchParams({ response_type: "code", ...request, scope: capabilities.join(" ") })}`, { token: benToken }));
  assert.equal(consent.client.client_id, client.client_id);
  const answer = await ok(call("POST", "/api/oauth/consent", { token: benToken, body: { ...request, capabilities, mailboxes } }));
  const back = new URL(answer.redirect_to);
  assert.equal(`${back.origin}${back.pathname}`, callback.url);
  assert.equal(back.searchParams.get("state"), state);
  assert.equal(back.searchParams.get("iss"), node.url);
  return { code: back.searchParams.get("code"), verifier, agent: answer.agent };
}

/** A form-encoded request to the token endpoint, as RFC 6749 has it. */
const tokenRequest = (fields) => call("POST", "/oauth/token", {
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const exchange = (client, code, verifier, extra = {}) => tokenRequest({
  grant_type: "authorization_code", code, redirect_uri: callback.url, client_id: client.client_id,
  ...(verifier === undefined ? {} : { code_verifier: verifier }), ...extra,
});
const refresh = (client, refreshToken) => tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id });
/** A revocation (RFC 7009) of `tokenToRevoke` by `client`, which names itself. */
const revoke = (client, tokenToRevoke) => call("POST", "/oauth/revoke", {
  raw: new URLSearchParams({ token: tokenToRevoke, client_id: client.client_id }).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

/** Asserts an OAuth error answer (RFC 6749 §5.2): its status and `error`, and words for a person. */
function assertOAuthError(answer, status, error) {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body?.error, error, answer.text);
  assert.ok(answer.body.error_description?.trim(), `${error} says why`);
}

/** Asks /mcp for its tools with `bearer`, as a client that skips initialize may (the server is stateless). */
const listTools = (bearer) => checkedFetch(RESOURCE, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
});

/** Asserts that `bearer` works at /mcp: it lists exactly the chosen capability's tools. */
async function assertAliveAtMcp(bearer, what) {
  const answer = await listTools(bearer);
  assert.equal(answer.status, 200, what);
  assert.deepEqual((await answer.json()).result.tools.map((tool) => tool.name).sort(), toolsOf(CHOSEN), what);
}

/** The parameters of a `Bearer` challenge, by name. */
function challengeOf(answer) {
  const header = answer.headers.get("www-authenticate") ?? "";
  assert.match(header, /^Bearer /, header);
  return Object.fromEntries([...header.matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, name, value]) => [name, value]));
}

/** Asserts that `bearer` is refused at /mcp as a dead token, with the challenge that says where to start again. */
async function assertDeadAtMcp(bearer, what) {
  const answer = await listTools(bearer);
  assert.equal(answer.status, 401, what);
  const challenge = challengeOf(answer);
  assert.equal(challenge.error, "invalid_token", what);
  assert.equal(challenge.resource_metadata, `${node.url}/.well-known/oauth-protected-resource/mcp`, what);
}

test("discovery: the protected resource and the authorization server describe themselves, and /mcp challenges a caller with no credential", async () => {
  const capabilityNames = vocabulary.map((entry) => entry.name).sort();
  for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
    const resource = await ok(call("GET", path));
    assert.equal(resource.resource, RESOURCE, path);
    assert.deepEqual(resource.authorization_servers, [node.url], path);
    assert.deepEqual(resource.bearer_methods_supported, ["header"], path);
    assert.equal(resource.resource_name, "Mailroom", path);
    // A client asks for every scope the resource lists; the person chooses instead (decision 0026).
    assert.equal(resource.scopes_supported, undefined, path);
  }
  const server = await ok(call("GET", "/.well-known/oauth-authorization-server"));
  assert.equal(server.issuer, node.url);
  assert.equal(server.authorization_endpoint, `${node.url}/oauth/authorize`);
  assert.equal(server.token_endpoint, `${node.url}/oauth/token`);
  assert.equal(server.registration_endpoint, `${node.url}/oauth/register`);
  assert.equal(server.revocation_endpoint, `${node.url}/oauth/revoke`);
  assert.deepEqual(server.code_challenge_methods_supported, ["S256"]);
  assert.deepEqual(server.token_endpoint_auth_methods_supported, ["none"]);
  // A client may name itself by its metadata document (fetched for the person's consent; natively tested).
  assert.equal(server.client_id_metadata_document_supported, true);
  assert.equal(server.authorization_response_iss_parameter_supported, true);
  assert.deepEqual([...server.scopes_supported].sort(), capabilityNames);

  // Every method, the handshake included, is refused to a caller with no credential, with the way to get one.
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "oauth-e2e", version: "1.0.0" } } };
  for (const message of [initialize, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_me", arguments: {} } }]) {
    const answer = await checkedFetch(RESOURCE, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(message),
    });
    assert.equal(answer.status, 401, message.method);
    const challenge = challengeOf(answer);
    assert.equal(challenge.resource_metadata, `${node.url}/.well-known/oauth-protected-resource/mcp`, message.method);
    assert.equal(challenge.error, undefined, `${message.method}: no credential is not a dead one`);
  }
  await assertDeadAtMcp("mr_oat_not-a-token", "a token the node never issued");
});

test("registration takes only redirect addresses a client can own and public clients, and answers in RFC 7591's words", async () => {
  const registered = await register("Registration check", [callback.url, "https://app.example/callback"]);
  assert.ok(registered.client_id?.length > 0);
  assert.equal(typeof registered.client_id_issued_at, "number");
  assert.deepEqual(registered.redirect_uris, [callback.url, "https://app.example/callback"]);
  assert.equal(registered.client_name, "Registration check");
  assert.equal(registered.token_endpoint_auth_method, "none");
  assert.ok(registered.grant_types.includes("authorization_code"));
  assert.deepEqual(registered.response_types, ["code"]);

  const refused = async (body, error) => {
    const answer = await call("POST", "/oauth/register", { body });
    assertOAuthError(answer, 400, error);
    assert.ok(answer.body.fix?.trim(), `${error} says what would change the answer`);
  };
  // Without redirect_uris the body is not a registration at all: its metadata, not an address, is at fault.
  await refused({ client_name: "No address" }, "invalid_client_metadata");
  await refused({ client_name: "Plain http elsewhere", redirect_uris: ["http://app.example/callback"] }, "invalid_redirect_uri");
  await refused({ client_name: "A fragment", redirect_uris: ["https://app.example/callback#here"] }, "invalid_redirect_uri");
  await refused({ client_name: "A secret", redirect_uris: [callback.url], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata");
  for (const loopback of ["http://localhost:9/callback", "http://[::1]:9/callback"]) {
    assert.deepEqual((await register("Loopback", [loopback])).redirect_uris, [loopback]);
  }
  // A native app's own scheme (RFC 8252 §7.1), as Cursor registers it beside others; never one the browser runs.
  const native = ["cursor://anysphere.cursor-retrieval/oauth/user-mailroom/callback", callback.url, "https://app.example/callback"];
  assert.deepEqual((await register("Cursor", native)).redirect_uris, native);
  await refused({ client_name: "Script", redirect_uris: [native[0], "javascript:alert(1)"] }, "invalid_redirect_uri");
});

test("a native app sent back through its own scheme is shown to Ben as an app on this computer, by its link", async () => {
  const link = "cursor://anysphere.cursor-retrieval/oauth/user-mailroom/callback";
  const client = await register("Cursor", [link]);
  const { page } = await watch.open(browser, { who: "ben, a native app" });
  await signIn(page, node.url, BEN);
  await page.goto(authorizeUrl(client, { redirectUri: link, state: "native" }));
  const backTo = page.locator(".redirect-host");
  await backTo.waitFor();
  assert.equal(await backTo.innerText(), "Allowing or denying will send you back to cursor://anysphere.cursor-retrieval: an app running on this computer.");
  assert.ok(await page.getByRole("button", { name: "Allow" }).isVisible());
  await page.context().close();
});

// The official client's whole flow, shared by the tests that follow it.
const sdk = { provider: null, client: null };

test("the official MCP client discovers, registers, sends Ben to the consent, and is connected with the one capability he allows", async () => {
  const provider = new MemoryProvider("Claude Code (e2e)");
  sdk.provider = provider;
  const first = new Client({ name: "mailroom-oauth-e2e", version: "1.0.0" });
  await assert.rejects(first.connect(transportFor(provider)), (error) => error instanceof UnauthorizedError);
  assert.ok(provider.client?.client_id, "it registered dynamically");
  assert.equal(provider.authorizationUrls.length, 1, "and asked for the person's browser");
  const authorization = provider.authorizationUrls[0];
  assert.equal(`${authorization.origin}${authorization.pathname}`, `${node.url}/oauth/authorize`);
  assert.equal(authorization.searchParams.get("code_challenge_method"), "S256");
  assert.equal(authorization.searchParams.get("resource"), RESOURCE);

  // Ben is not signed in: the page asks him to, and keeps the request.
  const { page } = await watch.open(browser, { who: "ben, allowing" });
  await page.goto(authorization.href);
  await page.getByText("An app asks to connect to Mailroom as you").waitFor();
  await page.getByLabel("Email").fill(BEN.email);
  await page.getByLabel("Password").fill(BEN.password);
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("heading", { level: 1, name: "Connect Claude Code (e2e) to Mailroom" }).waitFor();
  assert.equal(new URL(page.url()).search, authorization.search, "the request survived signing in");
  assert.equal(await page.getByRole("navigation", { name: "Sections" }).count(), 0, "the consent is the whole page");

  // Who is asking, and where allowing sends Ben: the one fact he can trust.
  const asking = page.getByRole("region", { name: "Who is asking" });
  assert.match(await asking.innerText(), new RegExp(`will send you back to ${callback.host.replaceAll(".", "\\.")}`));
  assert.match(await asking.innerText(), /registered itself/);

  // What the client asked for is ticked to start with, and nothing else.
  const form = page.getByRole("region", { name: "What it may do" });
  const capability = (name) => form.getByRole("group", { name: "Capabilities" }).getByRole("checkbox", { name: summaryOf(name), exact: true });
  const grant = (relation, address) => form.getByRole("group", { name: address, exact: true }).getByRole("checkbox", { name: wordsOf(relation), exact: true });
  const requested = (authorization.searchParams.get("scope") ?? "").split(" ").filter(Boolean);
  assert.ok(requested.includes(CHOSEN), `the client asked for ${CHOSEN}: ${requested}`);
  for (const entry of vocabulary) assert.equal(await capability(entry.name).isChecked(), requested.includes(entry.name), entry.name);
  // Only what Ben holds can be passed on, and what he does not hold says so.
  for (const relation of NEEDED) assert.equal(await grant(relation, SUPPORT).isEnabled(), true, relation);
  assert.equal(await grant("message.export", SUPPORT).isDisabled(), true);
  assert.ok(await grant("message.export", SUPPORT).locator("xpath=..").getByText("You do not hold this here", { exact: true }).isVisible());
  assert.ok(await grant(NEEDED[0], SUPPORT).locator("xpath=..").getByText("You hold this", { exact: true }).isVisible());

  // What the asked-for capabilities need starts chosen where Ben holds it, so the form starts satisfiable.
  for (const relation of NEEDED) assert.equal(await grant(relation, SUPPORT).isChecked(), true, `${relation} starts chosen`);
  assert.equal(await form.getByText("cannot work").count(), 0, "nothing asked for starts unable to work");
  // Ben keeps one capability; with its mailbox relations unticked, the form says it cannot work.
  for (const entry of vocabulary) if (entry.name !== CHOSEN) await capability(entry.name).uncheck();
  for (const relation of NEEDED) await grant(relation, SUPPORT).uncheck();
  const warning = form.getByRole("listitem").filter({ hasText: `“${summaryOf(CHOSEN)}”` }).filter({ hasText: "cannot work" });
  await warning.waitFor();
  assert.ok((await warning.innerText()).includes(`Select ${NEEDED.map((relation) => `“${wordsOf(relation)}”`).join(" and ")} on ${SUPPORT} (you hold them there)`), await warning.innerText());
  for (const relation of NEEDED) await grant(relation, SUPPORT).check();
  assert.equal(await form.getByText("cannot work").count(), 0);
  await assertFits(page, "the consent at 1280px", { inside: "main" });

  const seen = callback.received.length;
  await form.getByRole("button", { name: "Allow" }).click();
  const back = await callback.after(seen);
  await page.waitForURL((url) => url.href.startsWith(callback.url));
  assert.equal(back.searchParams.get("state"), provider.sentState);
  assert.equal(back.searchParams.get("iss"), node.url);
  assert.ok(back.searchParams.get("code"));
  await page.context().close();

  // The client redeems the code (the SDK checks `iss` against the issuer it discovered) and connects.
  await transportFor(provider).finishAuth(back.searchParams);
  assert.match(provider.saved.access_token, /^mr_oat_/);
  assert.match(provider.saved.refresh_token, /^mr_ort_/);
  assert.equal(provider.saved.token_type.toLowerCase(), "bearer");
  assert.deepEqual(provider.saved.scope.split(" "), [CHOSEN]);

  const client = new Client({ name: "mailroom-oauth-e2e", version: "1.0.0" });
  await client.connect(transportFor(provider));
  sdk.client = client;
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), toolsOf(CHOSEN), "exactly the chosen capability's tools");

  const message = (await ok(call("GET", `/api/mailboxes/${support.id}/messages`, { token: benToken }))).messages[0];
  const body = await client.callTool({ name: "get_message_body", arguments: { mailbox_id: support.id, receipt_id: message.id } });
  assert.equal(body.isError, false, JSON.stringify(body));
  assert.match(body.structuredContent.text, /invoice for order 4471/);

  // Another capability's tool does not exist for it, though Ben could list the mailbox himself.
  assert.ok(!toolsOf(CHOSEN).includes("list_messages"));
  await assert.rejects(client.callTool({ name: "list_messages", arguments: { mailbox_id: support.id } }), (error) => error.code === -32602);
});

test("the audit trail records the client's call as its agent's act for Ben, and the agent is Ben's, pinned to what he chose", async () => {
  const entries = (await ok(call("GET", "/api/audit?limit=50", { token }))).entries;
  const act = entries.find((entry) => entry.action === "get_message_body" && entry.surface === "mcp" && entry.outcome === "ok");
  assert.ok(act, JSON.stringify(entries.map((entry) => entry.action)));
  assert.match(act.actor, AGENT_ID);
  assert.equal(act.actor_kind, "agent");
  assert.equal(act.delegator, ben.id);
  assert.equal(act.outcome, "ok");

  const agent = await ok(call("GET", `/api/agents/${act.actor}`, { token }));
  assert.equal(agent.sponsor, ben.id);
  assert.equal(agent.state, "active");
  assert.deepEqual(agent.capabilities.map((held) => held.name), [CHOSEN]);
  assert.deepEqual(agent.mailboxes.map(({ mailbox, relations }) => ({ mailbox, relations: [...relations].sort() })), [{ mailbox: support.id, relations: [...NEEDED].sort() }]);
  sdk.agent = agent;
});

test("an access token is good only at /mcp: the REST API refuses it", async () => {
  const answer = await call("GET", "/api/me", { token: sdk.provider.saved.access_token });
  assert.equal(answer.status, 401, answer.text);
  assert.ok(answer.body.error.code);
  assert.equal((await call("GET", `/api/mailboxes/${support.id}/messages`, { token: sdk.provider.saved.access_token })).status, 401);
});

test("a connector's subscription (its OAuth token good only at /mcp) stays open when access changes elsewhere, and is woken by mail", async () => {
  const client = await register("Listening connector");
  const { code, verifier } = await allowAsBen(client);
  const access = (await ok(exchange(client, code, verifier))).access_token;
  const uri = `mailroom://mailboxes/${support.id}`;
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
  const stop = new AbortController();
  const answer = await checkedFetch(RESOURCE, {
    method: "POST",
    signal: stop.signal,
    headers: {
      "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${access}`,
      "mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: "listen-1", method: "subscriptions/listen", params: { _meta: meta, notifications: { resourceSubscriptions: [uri] } } }),
  });
  assert.equal(answer.status, 200);
  const reader = answer.body.getReader();
  let heard = "";
  /** Reads the stream until it holds `what`, failing after `ms`. */
  const until = async (what, ms = 8000) => {
    const deadline = Date.now() + ms;
    while (!heard.includes(what)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms; heard ${heard}`);
      const step = await Promise.race([reader.read(), new Promise((resolve) => setTimeout(() => resolve({ timedOut: true }), left))]);
      if (step.timedOut) continue;
      if (step.done) throw new Error(`the stream ended before ${what}; heard ${heard}`);
      heard += new TextDecoder().decode(step.value);
    }
  };
  try {
    await until("notifications/subscriptions/acknowledged");
    // Access changes somewhere else: every listener is asked again, this one
    // as MCP asks (over REST its token would be refused, and the stream closed).
    await ok(call("POST", "/api/relations", { token, body: { subject: ben.id, relation: "send.propose", object: support.id } }), 201);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.ok(!heard.includes("\"error\""), `the stream was not closed: ${heard}`);
    const raw = `From: Ana Lima <ana@customer.example>\r\nTo: Support <${SUPPORT}>\r\nSubject: Listening\r\nMessage-ID: <listening-connector@customer.example>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nHello.\r\n`;
    assert.equal(await node.deliver("ana@customer.example", SUPPORT, raw), null);
    await until("notifications/resources/updated");
    assert.ok(heard.includes(uri), heard);
  } finally {
    stop.abort();
  }
});

test("a consent for an address the client did not register is refused in the page, which sends the browser nowhere, and mints nothing", async () => {
  const client = await register("Misdirected");
  const agentsBefore = (await ok(call("GET", "/api/agents", { token }))).agents.length;
  const elsewhere = "http://127.0.0.1:9/elsewhere";
  const wrong = authorizeUrl(client, { redirectUri: elsewhere, state: "misdirected" });
  // The request as the page reads it: a refusal in the node's four parts.
  const answer = await call("GET", `/api/oauth/consent?${new URL(wrong).search.slice(1)}`, { token: benToken });
  assert.ok(answer.status >= 400 && answer.status < 500, answer.text);
  for (const part of ["code", "message", "reason", "fix"]) assert.ok(answer.body.error[part]?.trim(), part);

  const { page } = await watch.open(browser, { who: "ben, misdirected" });
  await signIn(page, node.url, BEN);
  watch.expectRefusal(answer.status, "/api/oauth/consent");
  await page.goto(wrong);
  const refusal = page.getByRole("alert");
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /This request to connect an app cannot be shown\./);
  assert.equal(page.url(), wrong, "the browser stays on the node");
  assert.equal(await page.getByRole("button", { name: "Allow" }).count(), 0);
  await assertFits(page, "a refused consent", { inside: "main" });

  // Its code for the app's maker, under Technical details.
  await refusal.getByText("Technical details").click();
  assert.match(await refusal.locator("details").innerText(), new RegExp(answer.body.error.code));
  const post = await call("POST", "/api/oauth/consent", {
    token: benToken,
    body: { client_id: client.client_id, redirect_uri: elsewhere, code_challenge: pkce().challenge, code_challenge_method: "S256", state: "x", resource: RESOURCE, capabilities: [CHOSEN], mailboxes: [{ mailbox: support.id, relations: NEEDED }] },
  });
  assert.ok(post.status >= 400 && post.status < 500, post.text);
  assert.equal((await ok(call("GET", "/api/agents", { token }))).agents.length, agentsBefore, "nothing was minted");
  await page.context().close();
});

test("a client named by a metadata document inside a network is refused, naming `client_id` and the range, and nothing is fetched", async () => {
  // A listener on this machine that counts every connection: none may come.
  let connections = 0;
  const listener = createNetServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { challenge } = pkce();
  try {
    for (const [clientId, words] of [
      ["https://169.254.169.254/latest/client.json", "`client_id` cannot be fetched: its host `169.254.169.254` is a link-local address (169.254.0.0/16"],
      ["https://2852039166/client.json", "(read as `169.254.169.254`)"],
      ["https://10.0.0.1/client.json", "a private address (10.0.0.0/8)"],
      ["https://[::ffff:10.0.0.1]/client.json", "the IPv4-mapped form of a private address (10.0.0.0/8)"],
      ["https://metadata.google.internal./client.json", "(.internal)"],
      ["https://app.example@10.0.0.1/client.json", "credentials before an `@`"],
      // Loopback passes the rule on this node (it runs on 127.0.0.1), and a
      // metadata document's own rule still wants a DNS name on the default port.
      [`https://127.0.0.1:${listener.address().port}/client.json`, "a DNS name, on the default port"],
      [`https://localhost:${listener.address().port}/client.json`, "a DNS name, on the default port"],
    ]) {
      const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: callback.url, code_challenge: challenge, code_challenge_method: "S256", resource: RESOURCE });
      const answer = await call("GET", `/api/oauth/consent?${query}`, { token: benToken });
      assertRefusal(assert, answer, 404, "client_metadata_unusable");
      assert.ok(answer.body.error.reason.includes(words), `${clientId}: ${answer.body.error.reason}`);
    }
    assert.equal(connections, 0, "nothing was fetched");
  } finally {
    await new Promise((resolve) => listener.close(resolve));
  }
});

test("on a phone the consent fits, and Deny sends Ben back to the client with access_denied and its state", async () => {
  const client = await register("Phone app");
  const agentsBefore = (await ok(call("GET", "/api/agents", { token }))).agents.length;
  const { page } = await watch.open(browser, { who: "ben, on a phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await signIn(page, node.url, BEN);
  await page.goto(authorizeUrl(client, { state: "phone-state" }));
  await page.getByRole("heading", { level: 1, name: "Connect Phone app to Mailroom" }).waitFor();
  assert.equal(await page.getByRole("group", { name: "Capabilities" }).getByRole("checkbox", { name: summaryOf(CHOSEN), exact: true }).isChecked(), true, "what it asked for is ticked");
  await assertFits(page, "the consent at 390px", { inside: "main" });
  // Fits a phone without thousands of pixels of scrolling: what was not asked for is described on request.
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  assert.ok(height < 4000, `the consent is ${height}px tall at 390px`); // 5,391 px before, 3,602 after (issue 31)

  const seen = callback.received.length;
  await page.getByRole("button", { name: "Deny" }).click();
  const back = await callback.after(seen);
  assert.equal(back.searchParams.get("error"), "access_denied");
  assert.equal(back.searchParams.get("state"), "phone-state");
  assert.equal(back.searchParams.get("iss"), node.url);
  assert.equal(back.searchParams.get("code"), null);
  assert.equal((await ok(call("GET", "/api/agents", { token }))).agents.length, agentsBefore, "nothing was minted");
  await page.context().close();
});

test("PKCE is required and checked: no verifier is invalid_request, the wrong one invalid_grant", async () => {
  const client = await register("PKCE check");
  const missing = await allowAsBen(client);
  // A missing parameter is RFC 6749's invalid_request; a verifier that does not match, RFC 7636's invalid_grant.
  assertOAuthError(await exchange(client, missing.code, undefined), 400, "invalid_request");
  const wrong = await allowAsBen(client);
  assertOAuthError(await exchange(client, wrong.code, pkce().verifier), 400, "invalid_grant");
  assertOAuthError(await tokenRequest({ grant_type: "password", username: BEN.email, password: BEN.password, client_id: client.client_id }), 400, "unsupported_grant_type");
});

test("a code is good only for the client it was issued to, at the address it was sent to", async () => {
  const client = await register("Code binding check");
  const other = await register("Another client");
  const moved = await allowAsBen(client);
  assertOAuthError(await tokenRequest({ grant_type: "authorization_code", code: moved.code, redirect_uri: "https://app.example/callback", client_id: client.client_id, code_verifier: moved.verifier }), 400, "invalid_grant");
  // RFC 6749 §5.2: a code "issued to another client" is invalid_grant.
  const stolen = await allowAsBen(client);
  assertOAuthError(await exchange(other, stolen.code, stolen.verifier), 400, "invalid_grant");
});

test("a token for another audience is invalid_target", async () => {
  const client = await register("Audience check");
  const granted = await allowAsBen(client);
  assertOAuthError(await exchange(client, granted.code, granted.verifier, { resource: `${node.url}/api` }), 400, "invalid_target");
  const again = await allowAsBen(client);
  assertOAuthError(await exchange(client, again.code, again.verifier, { resource: "https://elsewhere.example/mcp" }), 400, "invalid_target");
});

test("a replayed code is refused and ends the grant: the first exchange's access token stops working at /mcp", async () => {
  const client = await register("Replay check");
  const granted = await allowAsBen(client);
  const tokens = await ok(exchange(client, granted.code, granted.verifier, { resource: RESOURCE }));
  assert.match(tokens.access_token, /^mr_oat_/);
  assert.match(tokens.refresh_token, /^mr_ort_/);
  assert.equal(tokens.token_type, "Bearer");
  assert.equal(tokens.expires_in, 900);
  assert.equal(tokens.scope, CHOSEN);
  await assertAliveAtMcp(tokens.access_token, "the token works at /mcp");

  assertOAuthError(await exchange(client, granted.code, granted.verifier), 400, "invalid_grant");
  await assertDeadAtMcp(tokens.access_token, "after the code was replayed");
  assertOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
  assert.equal((await ok(call("GET", `/api/agents/${granted.agent.id}`, { token }))).state, "revoked");
});

test("a refresh token rotates, and presenting one a second time ends the grant, the rotated tokens with it", async () => {
  const client = await register("Refresh check");
  const granted = await allowAsBen(client);
  const first = await ok(exchange(client, granted.code, granted.verifier));
  const second = await ok(refresh(client, first.refresh_token));
  assert.notEqual(second.refresh_token, first.refresh_token, "it rotates");
  assert.notEqual(second.access_token, first.access_token);
  assert.equal(second.scope, CHOSEN);
  await assertAliveAtMcp(second.access_token, "the rotated access token");

  assertOAuthError(await refresh(client, first.refresh_token), 400, "invalid_grant");
  await assertDeadAtMcp(second.access_token, "the rotated access token, after the old refresh token came back");
  assertOAuthError(await refresh(client, second.refresh_token), 400, "invalid_grant");
});

test("the revocation endpoint ends the grant", async () => {
  const client = await register("Revocation check");
  const granted = await allowAsBen(client);
  const tokens = await ok(exchange(client, granted.code, granted.verifier));
  await assertAliveAtMcp(tokens.access_token, "before revocation");
  const revoked = await revoke(client, tokens.refresh_token);
  assert.equal(revoked.status, 200, revoked.text);
  await assertDeadAtMcp(tokens.access_token, "after revocation");
  assertOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
  assert.equal((await ok(call("GET", `/api/agents/${granted.agent.id}`, { token }))).state, "revoked");
});

test("a client revokes only its own tokens: another client's revocation is refused and the grant goes on", async () => {
  const client = await register("Its own tokens");
  const other = await register("Someone else's app", ["https://other.example/callback"]);
  const granted = await allowAsBen(client);
  const tokens = await ok(exchange(client, granted.code, granted.verifier));
  for (const presented of [tokens.refresh_token, tokens.access_token]) {
    const refused = await revoke(other, presented);
    assertOAuthError(refused, 400, "invalid_grant");
    assert.match(refused.body.error_description, /another client/);
    await assertAliveAtMcp(tokens.access_token, "after another client tried to revoke it");
  }
  assert.equal((await revoke(client, tokens.access_token)).status, 200);
  await assertDeadAtMcp(tokens.access_token, "after its own client revoked it");
});

test("a loopback redirect URI is matched on any port, and the code goes back to the port the client listens on", async () => {
  // Registered on no port at all, as a native app that learns its port only when it listens.
  const client = await register("Native app", ["http://127.0.0.1/callback"]);
  const { verifier, challenge } = pkce();
  const request = { client_id: client.client_id, redirect_uri: callback.url, code_challenge: challenge, code_challenge_method: "S256", state: "native", resource: RESOURCE };
  const consent = await ok(call("GET", `/api/oauth/consent?${new URLSearchParams({ response_type: "code", ...request })}`, { token: benToken }));
  assert.equal(consent.client.redirect_host, callback.host);
  const answer = await ok(call("POST", "/api/oauth/consent", { token: benToken, body: { ...request, capabilities: [CHOSEN], mailboxes: [{ mailbox: support.id, relations: NEEDED }] } }));
  const back = new URL(answer.redirect_to);
  assert.equal(`${back.origin}${back.pathname}`, callback.url, "sent back to the port the client listens on");
  // The code is bound to the URI asked for, port included.
  assertOAuthError(await tokenRequest({ grant_type: "authorization_code", code: back.searchParams.get("code"), redirect_uri: "http://127.0.0.1/callback", client_id: client.client_id, code_verifier: verifier }), 400, "invalid_grant");
  // Any port, but nothing else moves; and localhost is matched exactly.
  for (const elsewhere of ["http://127.0.0.1:9/elsewhere", "http://[::1]:9/callback"]) {
    const refused = await call("GET", `/api/oauth/consent?${new URLSearchParams({ response_type: "code", ...request, redirect_uri: elsewhere })}`, { token: benToken });
    assert.equal(refused.status, 400, `${elsewhere}: ${refused.text}`);
  }
  const named = await register("Named host", ["http://localhost:9/callback"]);
  const moved = await call("GET", `/api/oauth/consent?${new URLSearchParams({ response_type: "code", ...request, client_id: named.client_id, redirect_uri: "http://localhost:10/callback" })}`, { token: benToken });
  assert.equal(moved.status, 400, moved.text);
});

test("a consent's agent waits on its code: not connected, able to do nothing, active only once the code is exchanged", async () => {
  const client = await register("Slow to exchange");
  const granted = await allowAsBen(client);
  assert.equal(granted.agent.state, "awaiting_exchange");
  assert.equal((await ok(call("GET", `/api/agents/${granted.agent.id}`, { token }))).state, "awaiting_exchange");
  const connected = async () => (await ok(call("GET", "/api/me/connected-apps", { token: benToken }))).apps.map((app) => app.agent.id);
  assert.ok(!(await connected()).includes(granted.agent.id), "no connected app until its code is exchanged");
  // Even a credential an administrator pairs for it does nothing meanwhile.
  const pairing = await ok(call("POST", `/api/agents/${granted.agent.id}/pairing-code`, { token }), 201);
  const { credential } = await ok(call("POST", "/api/agents/pair", { body: { code: pairing.code } }));
  assert.equal((await call("GET", `/api/mailboxes/${support.id}/messages`, { token: credential })).status, 401);

  await ok(exchange(client, granted.code, granted.verifier));
  assert.equal((await ok(call("GET", `/api/agents/${granted.agent.id}`, { token }))).state, "active");
  assert.ok((await connected()).includes(granted.agent.id), "connected once exchanged");
});

test("an administrator revoking the app's agent among the agents ends the grant too", async () => {
  const client = await register("Revoked by an administrator");
  const granted = await allowAsBen(client);
  const tokens = await ok(exchange(client, granted.code, granted.verifier));
  const listed = (await ok(call("GET", "/api/agents", { token }))).agents.find((agent) => agent.id === granted.agent.id);
  assert.equal(listed?.sponsor, ben.id, "the administrator sees the app's agent, Ben's, among the agents");
  await ok(call("POST", `/api/agents/${granted.agent.id}/revoke`, { token }));
  await assertDeadAtMcp(tokens.access_token, "after an administrator revoked its agent");
  assertOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
});

test("Ben sees the app under Account's connected apps, held of total, and Disconnect stops the client on its next call", async () => {
  const apps = (await ok(call("GET", "/api/me/connected-apps", { token: benToken }))).apps;
  const mine = apps.find((app) => app.agent.id === sdk.agent.id);
  assert.ok(mine, JSON.stringify(apps));
  assert.equal(mine.client_name, "Claude Code (e2e)");
  assert.equal(mine.redirect_host, callback.host);
  assert.ok(mine.last_used_at, "the client's calls are its use");

  const { page } = await watch.open(browser, { who: "ben, disconnecting" });
  await signIn(page, node.url, BEN);
  await openSection(page, "Account");
  const table = page.getByRole("region", { name: "Connected apps" }).getByRole("table", { name: "Apps connected to your account" });
  const row = table.getByRole("row").filter({ hasText: "Claude Code (e2e)" }).first();
  await row.waitFor();
  const shown = await row.innerText();
  assert.ok(shown.includes(callback.host), shown);
  const total = toolsOf(CHOSEN).length;
  assert.ok(shown.includes(`${summaryOf(CHOSEN)} ${total} of ${total}`), shown);
  assert.ok(shown.includes(SUPPORT) || shown.includes(support.id), shown);
  await assertFits(page, "Account with connected apps", { inside: "main" });

  // Disconnect asks first; keeping it changes nothing.
  await row.getByRole("button", { name: "Disconnect Claude Code (e2e)" }).click();
  const question = page.getByRole("group", { name: "Disconnect Claude Code (e2e)?" });
  await question.getByRole("button", { name: "Keep it" }).click();
  assert.equal(await question.count(), 0);
  assert.ok((await sdk.client.listTools()).tools.length, "kept, it still works");

  await row.getByRole("button", { name: "Disconnect Claude Code (e2e)" }).click();
  await page.getByRole("group", { name: "Disconnect Claude Code (e2e)?" }).getByRole("button", { name: "Disconnect for good" }).click();
  await page.getByRole("status").filter({ hasText: "Disconnected Claude Code (e2e)" }).waitFor();
  assert.equal(await table.getByRole("button", { name: "Disconnect Claude Code (e2e)" }).count(), 0);

  // The client's token is dead at once; its refresh token cannot bring it back, so the SDK asks for the browser again.
  await assertDeadAtMcp(sdk.provider.saved.access_token, "after Disconnect");
  const asked = sdk.provider.authorizationUrls.length;
  await assert.rejects(sdk.client.listTools());
  assert.equal(sdk.provider.authorizationUrls.length, asked + 1, "the client must send the person to the consent again");
  assert.equal((await ok(call("GET", `/api/agents/${sdk.agent.id}`, { token }))).state, "revoked");
  await sdk.client.close().catch(() => {});
  await page.context().close();
});

// Last of the token endpoint's tests: it spends this address's window of unknown grants.
test("every error of the token endpoint is RFC 6749's, the throttle's 429 and the dispatcher's own included", async () => {
  const bad = await call("POST", "/oauth/token?debug=1", { raw: "grant_type=authorization_code", headers: { "content-type": "application/x-www-form-urlencoded" } });
  assertOAuthError(bad, 400, "unknown_query_parameter");
  assert.ok(bad.body.fix?.trim());
  let answer;
  for (let attempt = 0; attempt < 25; attempt++) {
    answer = await tokenRequest({ grant_type: "refresh_token", refresh_token: `mr_ort_guess${attempt}`, client_id: "mrc_x" });
    if (answer.status === 429) break;
    assertOAuthError(answer, 400, "invalid_grant");
  }
  assertOAuthError(answer, 429, "too_many_token_attempts");
  assert.ok(Number(answer.headers.get("retry-after")) > 0);
  assert.equal(answer.headers.get("cache-control"), "no-store");
});

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

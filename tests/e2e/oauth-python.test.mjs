// The official Python MCP client's OAuth provider (tests/e2e/python/mcp_oauth.py,
// `mcp` pinned in its requirements.txt, installed by scripts/setup.sh into
// .venv-tests) against the node, as oauth.test.mjs drives the TypeScript one:
// knowing only /mcp, it discovers the protected resource and its
// authorization server, registers itself with a loopback redirect URI, and
// sends a person's browser to the consent. Headless Chromium plays Ben, who is
// signed in and allows one capability on one mailbox; the client's own
// listener catches the code, the provider redeems it, and the client reads
// mail with that capability's tool, is refused another's, and refreshes its
// token when its lifetime has passed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, checkedFetch } from "./harness.mjs";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { signIn } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const PYTHON = join(ROOT, ".venv-tests", "bin", "python");
const SUPPORT = "support@mailroom.test";
const BEN = { name: "Ben", email: "ben@example.com", password: "ben's long password" };
/** The capability Ben lets the client have, and the relations it needs on support@. */
const CHOSEN = "mail.read";
const NEEDED = ["mailbox.metadata.read", "mailbox.content.read"];
/** The name the Python client registers under (mcp_oauth.py). */
const CLIENT_NAME = "Python SDK (e2e)";

let node, call, token, browser;
let support, ben, benToken, vocabulary, relations;
/** Where an MCP client's access token is good: the node's MCP endpoint. */
let RESOURCE;
const watch = new PageWatch();

before(async () => {
  let desk;
  ({ node, call, token, desk } = await startDesk());
  RESOURCE = `${node.url}/mcp`;
  support = await desk.mailbox(SUPPORT, "Support");
  await desk.mailbox("sales@mailroom.test", "Sales");
  ben = await desk.person(BEN);
  // Ben reads support@ (its list and its content) and holds nothing on sales@.
  await desk.grant(ben.id, NEEDED, support.id);
  assert.equal(await node.deliver("ana@customer.example", SUPPORT, readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"))), null);
  benToken = await desk.signIn(BEN);
  ({ capabilities: vocabulary, relations } = await ok(call("GET", "/api/agent-capabilities", { token })));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const summaryOf = (name) => vocabulary.find((entry) => entry.name === name).summary;
const wordsOf = (relation) => relations.find((entry) => entry.name === relation).description.replace(/\.$/, "");
const toolsOf = (name) => vocabulary.find((entry) => entry.name === name).routes.map((route) => route.tool).sort();

/**
 * Starts the Python driver. Its stdout is one line per thing it did (see
 * mcp_oauth.py); `line(word)` waits for the first line starting with `word`
 * and answers the rest of it, failing if the driver exits first.
 */
function startPython(env) {
  const child = spawn(PYTHON, [join(ROOT, "tests", "e2e", "python", "mcp_oauth.py")], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  const waiting = new Set();
  const settle = () => {
    for (const wait of waiting) wait();
  };
  child.stdout.on("data", (chunk) => {
    output += chunk;
    settle();
  });
  child.stderr.on("data", (chunk) => (errors += chunk));
  let code = null;
  const exited = new Promise((resolve) => child.on("exit", (status) => {
    code = status;
    settle();
    resolve(status);
  }));
  /** The complete lines so far, as `[word, rest]`. */
  const lines = () => output.split("\n").slice(0, -1).map((line) => {
    const space = line.indexOf(" ");
    return space < 0 ? [line, ""] : [line.slice(0, space), line.slice(space + 1)];
  });
  const line = (word) => new Promise((resolve, reject) => {
    const wait = () => {
      const found = lines().find(([said]) => said === word);
      if (found) resolve(found[1]);
      else if (code !== null) reject(new Error(`the Python client exited (${code}) before saying ${word}:\n${output}\n${errors}`));
      else return;
      waiting.delete(wait);
    };
    waiting.add(wait);
    wait();
  });
  return { line, lines, exited, get output() { return `${output}\n${errors}`; }, kill: () => child.kill() };
}

/** Asks /mcp for its tools with `bearer`, as a client that skips initialize may. */
const listTools = (bearer) => checkedFetch(RESOURCE, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${bearer}` },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
});

test("the official Python client discovers, registers, is allowed one capability by Ben, reads mail with it, is refused another, and refreshes its token", async () => {
  const message = (await ok(call("GET", `/api/mailboxes/${support.id}/messages`, { token: benToken }))).messages[0];
  const python = startPython({ MCP_URL: RESOURCE, MCP_SCOPE: CHOSEN, MAILBOX_ID: support.id, MESSAGE_ID: message.id });
  try {
    const redirectUri = await python.line("listening");
    assert.match(redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const authorization = new URL(await python.line("authorize"));
    const registered = JSON.parse(await python.line("registered"));

    // It registered itself, as a public client sent back to the loopback listener it holds.
    assert.ok(registered.client_id, JSON.stringify(registered));
    assert.deepEqual(registered.redirect_uris, [redirectUri]);
    assert.equal(registered.token_endpoint_auth_method, "none");
    assert.equal(registered.client_name, CLIENT_NAME);
    // And sends the person to the node's authorization endpoint, with PKCE and the resource it wants.
    assert.equal(`${authorization.origin}${authorization.pathname}`, `${node.url}/oauth/authorize`);
    assert.equal(authorization.searchParams.get("client_id"), registered.client_id);
    assert.equal(authorization.searchParams.get("redirect_uri"), redirectUri);
    assert.equal(authorization.searchParams.get("code_challenge_method"), "S256");
    assert.match(authorization.searchParams.get("code_challenge"), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(authorization.searchParams.get("resource"), RESOURCE);
    assert.ok(authorization.searchParams.get("state"));
    // It asked for the capability it needs at least. (mcp 2.3.0 asks for every scope the
    // authorization server lists, replacing the one it was configured with, since the resource's
    // metadata lists none: decision 0026 left them out there so that no consent would start with
    // everything ticked. python-sdk PR 3172 would make it ask for its configured scope instead.)
    const requested = authorization.searchParams.get("scope").split(" ");
    assert.ok(requested.includes(CHOSEN), requested.join(" "));

    // Ben, signed in, keeps one capability and the relations it needs on support@, and allows it.
    const { page } = await watch.open(browser, { who: "ben, allowing the Python client" });
    await signIn(page, node.url, BEN);
    await page.goto(authorization.href);
    await page.getByRole("heading", { level: 1, name: `Connect ${CLIENT_NAME} to Mailroom` }).waitFor();
    const form = page.getByRole("region", { name: "What it may do" });
    const capability = (name) => form.getByRole("group", { name: "Capabilities" }).getByRole("checkbox", { name: summaryOf(name), exact: true });
    const grant = (relation) => form.getByRole("group", { name: SUPPORT, exact: true }).getByRole("checkbox", { name: wordsOf(relation), exact: true });
    for (const entry of vocabulary) assert.equal(await capability(entry.name).isChecked(), requested.includes(entry.name), `${entry.name} starts ticked if it was asked for`);
    for (const entry of vocabulary) if (entry.name !== CHOSEN) await capability(entry.name).uncheck();
    for (const relation of NEEDED) await grant(relation).check();
    assert.equal(await form.getByText("cannot work").count(), 0);
    await form.getByRole("button", { name: "Allow" }).click();
    // The browser lands on the client's own listener, which takes the code.
    await page.waitForURL((url) => url.href.startsWith(redirectUri));
    await page.getByText("You can close this window.").waitFor();
    await page.context().close();

    assert.equal(await python.exited, 0, python.output);
  } finally {
    python.kill();
  }

  const said = (word) => python.lines().filter(([first]) => first === word).map(([, rest]) => rest);
  // Refused at /mcp, it found the resource's metadata and its authorization server's, registered, and redeemed the code.
  const sent = said("sent");
  assert.deepEqual(sent.slice(0, 5), [
    "POST /mcp 401",
    "GET /.well-known/oauth-protected-resource/mcp 200",
    "GET /.well-known/oauth-authorization-server 200",
    "POST /oauth/register 201",
    "POST /oauth/token 200 authorization_code",
  ], sent.join("\n"));
  assert.equal(sent[5], "POST /mcp 200", sent.join("\n"));

  const [granted, refreshed] = said("tokens").map((line) => JSON.parse(line));
  assert.match(granted.access_token, /^mr_oat_/);
  assert.match(granted.refresh_token, /^mr_ort_/);
  assert.equal(granted.token_type, "Bearer");
  assert.deepEqual(granted.scope.split(" "), [CHOSEN], "the token carries what Ben chose, not all the client asked for");

  // With it the client sees exactly the chosen capability's tools, and reads the mail.
  assert.deepEqual(said("tools"), [toolsOf(CHOSEN).join(" ")]);
  const [body, bodyAfterRefresh] = said("body").map((line) => JSON.parse(line));
  assert.match(body.text, /invoice for order 4471/);
  // Another capability's tool does not exist for it, though Ben could list the mailbox himself.
  assert.ok(!toolsOf(CHOSEN).includes("list_messages"));
  assert.deepEqual(said("answered"), []);
  const [refusal] = said("refused");
  assert.match(refusal ?? "", /^list_messages -32602 /, python.output);

  // Once its token's lifetime had passed, its next call refreshed it first: a rotated pair, the same grant.
  const afterExpiry = python.lines().findIndex(([word]) => word === "expired");
  const sentAfter = python.lines().slice(afterExpiry).filter(([word]) => word === "sent").map(([, rest]) => rest);
  assert.deepEqual(sentAfter.slice(0, 2), ["POST /oauth/token 200 refresh_token", "POST /mcp 200"], sentAfter.join("\n"));
  assert.ok(refreshed, python.output);
  assert.notEqual(refreshed.access_token, granted.access_token);
  assert.notEqual(refreshed.refresh_token, granted.refresh_token, "the refresh token rotates");
  assert.deepEqual(refreshed.scope.split(" "), [CHOSEN]);
  assert.match(bodyAfterRefresh.text, /invoice for order 4471/);
  assert.equal(python.lines().at(-1)[0], "done");

  // The refreshed token is bound to the same consent: exactly the chosen capability's tools.
  const answer = await listTools(refreshed.access_token);
  assert.equal(answer.status, 200);
  assert.deepEqual((await answer.json()).result.tools.map((tool) => tool.name).sort(), toolsOf(CHOSEN));

  // The app is Ben's connected app, its agent pinned to what he chose, and its reading is that agent's act for Ben.
  const app = (await ok(call("GET", "/api/me/connected-apps", { token: benToken }))).apps.find((entry) => entry.client_name === CLIENT_NAME);
  assert.ok(app, "Ben sees the Python client among his connected apps");
  const agent = await ok(call("GET", `/api/agents/${app.agent.id}`, { token }));
  assert.equal(agent.sponsor, ben.id);
  assert.equal(agent.state, "active");
  assert.deepEqual(agent.capabilities.map((held) => held.name), [CHOSEN]);
  assert.deepEqual(agent.mailboxes.map(({ mailbox, relations }) => ({ mailbox, relations: [...relations].sort() })), [{ mailbox: support.id, relations: [...NEEDED].sort() }]);
  const entries = (await ok(call("GET", "/api/audit?limit=50", { token }))).entries;
  const reads = entries.filter((entry) => entry.action === "get_message_body" && entry.surface === "mcp" && entry.actor === agent.id);
  assert.equal(reads.length, 2, JSON.stringify(entries.map((entry) => [entry.action, entry.actor])));
  for (const read of reads) assert.equal(read.delegator, ben.id);
});

test("nothing went wrong in the console, and nothing broke the Content-Security-Policy", async () => {
  watch.assertNothingWentWrong(node.url);
});

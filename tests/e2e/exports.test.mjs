// eDiscovery exports on real workerd, D1 and R2: a reviewer requests an export
// of a mailbox, the per-minute scheduled event (as wrangler's cron runs it)
// copies the originals into R2 with a manifest whose hash lands in the audit
// chain, and the reviewer downloads each object and checks it against the
// manifest. Nobody else can see it, and deleting it takes the copies away.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { assertRefusal, checkedFetch } from "./harness.mjs";
import { startDesk, personNamed } from "./fixtures.mjs";

const SUPPORT = "support@mailroom.test";
const EVERY_MINUTE = "* * * * *";
const sha256 = (text) => createHash("sha256").update(text).digest("hex");

let node, call, token, desk, mailbox, rita, victor;

function message(id, subject) {
  return (
    `From: Ana Lima <ana@customer.example>\r\nTo: Support <${SUPPORT}>\r\nSubject: ${subject}\r\n` +
    `Message-ID: <${id}>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nAbout the ${subject}.\r\n`
  );
}

/** A person who may export across mailboxes, signed in. */
const reviewer = (name) => desk.colleague(personNamed(name), ["ediscovery.export"], "org");

before(async () => {
  ({ node, call, token, desk } = await startDesk());
  mailbox = await desk.mailbox(SUPPORT, "Support");
  rita = await reviewer("Rita");
  victor = await reviewer("Victor");
});
after(() => node?.stop());

test("a reviewer exports a mailbox, and downloads every message and the manifest that hashes them", async () => {
  const raws = [message("e1@customer.example", "Invoice 1"), message("e2@customer.example", "Invoice 2"), message("e3@customer.example", "Lunch")];
  for (const raw of raws) assert.equal(await node.deliver("ana@customer.example", SUPPORT, raw), null);

  const requested = await call("POST", "/api/exports", { token: rita.token, body: { mailbox_ids: [mailbox.id], query: "invoice" } });
  assert.equal(requested.status, 201, requested.text);
  assert.equal(requested.body.state, "building");
  assert.equal(requested.body.messages_total, 2);
  const path = `/api/exports/${requested.body.id}`;

  await node.scheduled(EVERY_MINUTE);
  const ready = await call("GET", path, { token: rita.token });
  assert.equal(ready.body.state, "ready", ready.text);
  assert.equal(ready.body.messages_done, 2);

  const objects = (await call("GET", `${path}/objects`, { token: rita.token })).body.objects;
  assert.deepEqual(objects.map((object) => object.kind), ["manifest", "message", "message"]);
  const manifest = await call("GET", `${path}/objects/manifest`, { token: rita.token });
  assert.equal(manifest.status, 200, manifest.text);
  assert.equal(manifest.headers.get("content-type"), "application/json");
  assert.equal(sha256(manifest.text), ready.body.manifest_sha256, "the manifest is what its hash says");
  assert.deepEqual(manifest.body.messages.map((entry) => entry.subject), ["Invoice 1", "Invoice 2"]);
  for (const entry of manifest.body.messages) {
    const original = await call("GET", `${path}/objects/${entry.receipt_id}`, { token: rita.token });
    assert.equal(original.status, 200, original.text);
    assert.equal(original.headers.get("content-type"), "message/rfc822");
    assert.equal(sha256(original.text), entry.sha256);
    assert.ok(raws.includes(original.text), "byte for byte what was received");
    assert.ok(await node.hasObject(`exports/${requested.body.id}/${entry.receipt_id}.eml`));
  }

  // The chain holds the manifest's hash, and names each download.
  const audit = (await call("GET", "/api/audit?limit=50", { token })).body.entries;
  const built = audit.find((entry) => entry.action === "build_export" && entry.object === requested.body.id);
  assert.equal(built.detail.manifest_sha256, ready.body.manifest_sha256);
  const downloads = audit.filter((entry) => entry.action === "get_export_object" && entry.actor === rita.id);
  assert.equal(downloads.length, 3);
  assert.equal((await call("GET", "/api/audit/verify", { token })).body.intact, true);

  // Another reviewer, and the administrator, see none of it.
  assert.deepEqual((await call("GET", "/api/exports", { token: victor.token })).body.exports, []);
  assertRefusal(assert, await call("GET", `${path}/objects/manifest`, { token: victor.token }), 404, "not_found");
  assertRefusal(assert, await call("GET", path, { token }), 403, "missing_relation");

  // Deleted, its copies go with the next upkeep; the mail stays.
  const deleted = await call("DELETE", path, { token: rita.token });
  assert.equal(deleted.status, 200, deleted.text);
  await node.scheduled();
  assert.equal(await node.hasObject(`exports/${requested.body.id}/${manifest.body.messages[0].receipt_id}.eml`), false);
  assert.equal(await node.hasObject(`exports/${requested.body.id}/manifest.json`), false);
  assert.equal((await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token: rita.token })).status, 404, "and reading the mailbox itself is another relation");
});

test("the reviewer's own session over MCP is offered exports; an agent never is", async () => {
  const tools = async (bearer) => {
    const client = new Client({ name: "mailroom-exports", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${node.url}/mcp`), { authProvider: { token: async () => bearer }, fetch: checkedFetch }),
    );
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();
    return listed;
  };
  const offered = await tools(rita.token);
  for (const name of ["request_export", "list_exports", "get_export_object"]) assert.ok(offered.includes(name), `${name} offered to the reviewer`);
  // Even an agent whose sponsor is the reviewer herself.
  const minted = await call("POST", "/api/agents", {
    token,
    body: { name: "Rita's assistant", sponsor: rita.id, capabilities: ["identity.read"], mailboxes: [] },
  });
  assert.equal(minted.status, 201, minted.text);
  const agentTools = await tools(minted.body.credential);
  assert.ok(!agentTools.some((name) => name.includes("export")), agentTools.join(", "));
});

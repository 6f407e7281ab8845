// The official Python MCP client (tests/e2e/python/, `mcp` pinned in its
// requirements.txt, installed by scripts/setup.sh into .venv-tests) against
// the node: it reads a mailbox as a resource, listens to it with
// subscriptions/listen (2026-07-28), and is woken by mail arriving there.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./harness.mjs";
import { startDesk } from "./fixtures.mjs";

const PYTHON = join(ROOT, ".venv-tests", "bin", "python");

let node, token, admin, desk;

before(async () => {
  ({ node, token, admin, desk } = await startDesk());
});
after(() => node?.stop());

test("the official Python client reads a mailbox, listens to it, and is woken by mail arriving", async () => {
  const mailbox = await desk.mailbox("support@mailroom.test", "Support");
  await desk.grant(admin.id, ["mailbox.metadata.read", "mailbox.content.read"], mailbox.id);
  const uri = `mailroom://mailboxes/${mailbox.id}`;
  const child = spawn(PYTHON, [join(ROOT, "tests", "e2e", "python", "mcp_listen.py")], {
    env: { ...process.env, MCP_URL: `${node.url}/mcp`, MCP_TOKEN: token, MCP_URI: uri },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  child.stderr.on("data", (chunk) => (errors += chunk));
  const acknowledged = new Promise((resolve) => {
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("acknowledged")) resolve();
    });
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  await Promise.race([acknowledged, exited]);
  assert.match(output, new RegExp(`^read ${uri} application/json$`, "m"), errors);
  assert.match(output, new RegExp(`^acknowledged ${uri}$`, "m"), errors);
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"));
  assert.equal(await node.deliver("ana@customer.example", "support@mailroom.test", raw), null);
  assert.equal(await exited, 0, `${output}\n${errors}`);
  assert.match(output, new RegExp(`^updated ${uri}$`, "m"));
});

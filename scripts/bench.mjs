// Latency benchmark: the built Worker on workerd with a local D1, measured from
// a client on 127.0.0.1. Prints percentiles per route; asserts nothing (speed is
// measured, never tested). Run after scripts/build.sh:
//
//   node scripts/bench.mjs            (through scripts/lib.sh's Node, or Node 22+)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startNode, setUp, ROOT } from "../tests/e2e/harness.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const node = await startNode();
try {
  const { call, token, admin } = await setUp(node);
  const mailbox = (await call("POST", "/api/mailboxes", { token, body: { address: "support@mailroom.test", display_name: "Support" } })).body;
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]) {
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation, object: mailbox.id } });
  }
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "latin1");
  for (let index = 0; index < 50; index++) {
    await node.deliver("ana@customer.example", "support@mailroom.test", raw.replace("invoice-question-1", `bench-${index}`));
  }
  const receipt = (await call("GET", `/api/mailboxes/${mailbox.id}/messages?limit=1`, { token })).body.messages[0].id;
  const cases = [
    ["GET /api/me", () => call("GET", "/api/me", { token })],
    ["GET …/messages (50 stored)", () => call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token })],
    ["GET …/messages/:id/body (audited)", () => call("GET", `/api/mailboxes/${mailbox.id}/messages/${receipt}/body`, { token })],
    ["GET /api/search?q=invoice (audited)", () => call("GET", "/api/search?q=invoice", { token })],
    ["POST …/sends (a draft, audited)", () => call("POST", `/api/mailboxes/${mailbox.id}/sends`, { token, body: { to: ["a@b.example"], subject: "S", text: "T" } })],
    ["POST /mcp tools/list", () => call("POST", "/mcp", { token, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } })],
  ];
  console.log(`${ROUNDS} sequential requests per route, after 10 warm-up requests\n`);
  console.log("route".padEnd(40), "p50 ms".padStart(8), "p90 ms".padStart(8), "p99 ms".padStart(8));
  for (const [name, request] of cases) {
    for (let index = 0; index < 10; index++) await request();
    const timings = [];
    for (let index = 0; index < ROUNDS; index++) {
      const started = performance.now();
      const response = await request();
      timings.push(performance.now() - started);
      if (response.status >= 400) throw new Error(`${name}: ${response.status} ${response.text}`);
    }
    timings.sort((left, right) => left - right);
    const at = (fraction) => timings[Math.min(timings.length - 1, Math.floor(fraction * timings.length))].toFixed(1);
    console.log(name.padEnd(40), at(0.5).padStart(8), at(0.9).padStart(8), at(0.99).padStart(8));
  }
} finally {
  await node.stop();
}

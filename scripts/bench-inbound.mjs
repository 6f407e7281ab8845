// The benchmark's inbound phase (scripts/bench.mjs; issue 30): how fast the node
// stores mail arriving at once. A fresh node with 16 mailboxes receives `count`
// messages through the Worker's email handler, 16 in flight at a time: first
// all to one mailbox, then spread over the 16. Prints messages stored per
// second, each delivery's latency (p50, p99) and how many were refused.
// Asserts nothing.
import { startNode, setUp } from "../tests/e2e/harness.mjs";
import { MAIL_VARS, percentile, table, timedClient } from "./bench-kit.mjs";

const IN_FLIGHT = 16;

function message(index, to) {
  return [
    "From: Ana Lima <ana@customer.example>",
    `To: ${to}`,
    `Subject: Order ${index}`,
    `Message-ID: <inbound-${index}@customer.example>`,
    "Date: Tue, 1 Dec 2026 09:00:00 +0000",
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Hello, this is about order ${index}. `.repeat(40),
    "",
  ].join("\r\n");
}

/** Delivers `count` messages (`to(index)` naming each one's mailbox), `IN_FLIGHT` at a time: latencies, refusals and the wall time. */
async function deliverAll(node, count, first, to) {
  const latencies = [];
  let refused = 0;
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < count) {
      const index = first + next++;
      const sent = performance.now();
      const reason = await node.deliver("ana@customer.example", to(index), message(index, to(index)));
      latencies.push(performance.now() - sent);
      if (reason) refused += 1;
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { latencies, refused, seconds: (performance.now() - started) / 1000 };
}

export async function inbound(count) {
  const node = await startNode({ vars: MAIL_VARS });
  try {
    const { token } = await setUp(node);
    const call = timedClient(node.url);
    const addresses = [];
    for (let index = 0; index < IN_FLIGHT; index += 1) {
      const address = `box${index}@mailroom.test`;
      const created = await call("POST", "/api/mailboxes", { token, body: { address, display_name: `Box ${index}` } });
      if (created.status !== 201) throw new Error(`creating a mailbox failed: ${created.text}`);
      addresses.push(address);
    }
    const rows = [];
    for (const [name, to, first] of [
      ["one mailbox", () => addresses[0], 0],
      [`${IN_FLIGHT} mailboxes`, (index) => addresses[index % IN_FLIGHT], count],
    ]) {
      const { latencies, refused, seconds } = await deliverAll(node, count, first, to);
      rows.push([name, (count / seconds).toFixed(1), percentile(latencies, 0.5), percentile(latencies, 0.99), refused]);
    }
    console.log(`inbound: ${count} messages of about 1.4 KB, ${IN_FLIGHT} in flight through the email handler`);
    table(["to", "stored/s", "p50 ms", "p99 ms", "refused"], rows);
  } finally {
    await node.stop();
  }
}

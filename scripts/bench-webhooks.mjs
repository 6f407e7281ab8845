// The benchmark's webhooks phase (scripts/bench.mjs; decision 0038): a fresh
// node, one mailbox with a conversation, and `rounds` changes of it with 0, 1
// and 10 webhooks subscribed to the mailbox, each pointing at a receiver on
// 127.0.0.1. Prints the change's own latency beside the same change with
// nobody subscribed (what queueing in the commit's batch costs the caller), and
// from sending the change to each endpoint's POST arriving (the delivery run
// after the answer, signing and posting). Asserts nothing.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { startNode, setUp, ROOT } from "../tests/e2e/harness.mjs";
import { percentile, table, timedClient, conversationToChange } from "./bench-kit.mjs";

const plain = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"), "latin1");

/** A receiver on 127.0.0.1 answering 204, calling `arrived(path)` for each POST as its body ends. */
async function receiver(arrived) {
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      arrived(request.url, performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function webhooks(rounds) {
  const node = await startNode();
  let waiting = null;
  const arrivals = [];
  const endpoint = await receiver((path, at) => {
    arrivals.push({ path, at });
    waiting?.();
  });
  try {
    const { token, admin } = await setUp(node);
    const call = timedClient(node.url);
    const { mailbox, change } = await conversationToChange(node, call, token, admin, plain);
    const rows = [];
    let subscribed = 0;
    for (const wanted of [0, 1, 10]) {
      for (; subscribed < wanted; subscribed += 1) {
        const created = await call("POST", `/api/mailboxes/${mailbox.id}/webhooks`, { token, body: { url: `${endpoint.url}/hook-${subscribed}`, kinds: ["update_thread"] } });
        if (created.status !== 201) throw new Error(`subscribing failed: ${created.text}`);
      }
      const answered = [];
      const toEach = [];
      const toLast = [];
      for (let round = 0; round < rounds + 5; round += 1) {
        arrivals.length = 0;
        const all = new Promise((resolve) => {
          waiting = () => arrivals.length >= wanted && resolve();
          waiting();
        });
        const sent = performance.now();
        const response = await change();
        if (response.status !== 200) throw new Error(`the change failed: ${response.text}`);
        await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (round < 5) continue;
        answered.push(response.elapsed);
        for (const arrival of arrivals) toEach.push(arrival.at - sent);
        if (wanted > 0 && arrivals.length >= wanted) toLast.push(Math.max(...arrivals.map((arrival) => arrival.at)) - sent);
      }
      rows.push([`change answered, ${wanted} subscribed`, percentile(answered, 0.5), percentile(answered, 0.99)]);
      if (wanted > 0) {
        rows.push(["  sent → each endpoint's POST", percentile(toEach, 0.5), percentile(toEach, 0.99)]);
        rows.push(["  sent → the last endpoint's POST", percentile(toLast, 0.5), percentile(toLast, 0.99)]);
      }
    }
    console.log(`webhooks: ${rounds} changes of one conversation each, ms`);
    table(["", "p50", "p99"], rows);
  } finally {
    await endpoint.close();
    await node.stop();
  }
}

// The benchmark's peers phase (scripts/bench.mjs; decision 0050): two nodes on
// workerd, each with its own D1, connected as peers; an agent on A asks an
// agent on B `rounds` times. Prints, from A's send: its answer, the message
// claimable in B's agent's inbox (the outbox's run after the answer, the card
// read once, SendMessage at B), and after B's agent replies, the answer in A's
// agent's inbox (B's push to A, A asking B for the task). The inboxes are
// looked at every 10 ms, so each time is late by up to that. Asserts nothing.
import { startNode, setUp } from "../tests/e2e/harness.mjs";
import { percentile, table, timedClient } from "./bench-kit.mjs";

const LOOK_EVERY_MS = 10;

/** Calls `read` every `LOOK_EVERY_MS` until it answers something, within 20 s. */
async function until(read) {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const found = await read();
    if (found) return found;
    if (performance.now() > deadline) throw new Error("nothing arrived within 20 s");
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}

/** A node with the agent network on, set up: its call, token and administrator. */
async function node() {
  const started = await startNode({ vars: { FEATURE_AGENT_NETWORK: "true" } });
  const { token, admin } = await setUp(started);
  return { node: started, call: timedClient(started.url), token, admin };
}

export async function peers(rounds) {
  const [a, b] = await Promise.all([node(), node()]);
  try {
    const connect = (side, name) => side.call("POST", "/api/peers", { token: side.token, body: { domain: "127.0.0.1", name } });
    const [atA, atB] = await Promise.all([connect(a, "B"), connect(b, "A")]);
    await a.call("PATCH", `/api/peers/${atA.body.peer.id}`, { token: a.token, body: { outbound_credential: atB.body.credential } });
    await b.call("PATCH", `/api/peers/${atB.body.peer.id}`, { token: b.token, body: { outbound_credential: atA.body.credential } });
    const mint = async (side, name, policy) => {
      const created = await side.call("POST", "/api/agents", { token: side.token, body: { name, sponsor: side.admin.id, capabilities: ["agent.messaging"], mailboxes: [] } });
      if (created.status !== 201) throw new Error(`minting failed: ${created.text}`);
      await side.call("PATCH", `/api/agents/${created.body.agent.id}/messaging`, { token: side.token, body: policy });
      return { id: created.body.agent.id, credential: created.body.credential };
    };
    const bob = await mint(b, "Bench Bob", { listed_on_node_card: true, rate_per_minute: 10_000, pending_cap: 1_000 });
    const alice = await mint(a, "Bench Alice", { remote_recipients: ["127.0.0.1"], remote_per_hour: 10_000, rate_per_minute: 10_000 });
    const card = `${b.node.url}/a2a/${bob.id}/.well-known/agent-card.json`;

    const [answered, toB, back, whole] = [[], [], [], []];
    for (let round = 0; round < rounds + 3; round += 1) {
      const started = performance.now();
      const sent = await a.call("POST", "/api/agent-messages", {
        token: alice.credential,
        body: { recipient: card, kind: "request", content: `round ${round}`, idempotency_key: `bench-${round}` },
      });
      if (sent.status !== 202) throw new Error(`the send failed: ${sent.text}`);
      const lease = await until(async () => {
        const claimed = await b.call("POST", "/api/agent-inbox/leases", { token: bob.credential, body: { max: 1 } });
        return claimed.body?.messages?.[0];
      });
      const arrivedAtB = performance.now();
      await b.call("POST", `/api/agent-inbox/${lease.id}/reply`, { token: bob.credential, body: { fencing_token: lease.fencing_token, content: "ok" } });
      const replied = performance.now();
      const reply = await until(async () => {
        const claimed = await a.call("POST", "/api/agent-inbox/leases", { token: alice.credential, body: { max: 1 } });
        return claimed.body?.messages?.[0];
      });
      await a.call("POST", `/api/agent-inbox/${reply.id}/ack`, { token: alice.credential, body: { fencing_token: reply.fencing_token } });
      const arrivedAtA = performance.now();
      // The first rounds read the card and warm both isolates.
      if (round < 3) continue;
      answered.push(sent.elapsed);
      toB.push(arrivedAtB - started);
      back.push(arrivedAtA - replied);
      whole.push(arrivedAtA - started);
    }
    console.log(`peers: ${rounds} requests from an agent on A to an agent on B and their answers, ms`);
    table(["", "p50", "p95"], [
      ["A's send answered", percentile(answered, 0.5), percentile(answered, 0.95)],
      ["sent → claimable at B", percentile(toB, 0.5), percentile(toB, 0.95)],
      ["replied at B → claimable at A", percentile(back, 0.5), percentile(back, 0.95)],
      ["sent → answer taken at A", percentile(whole, 0.5), percentile(whole, 0.95)],
    ]);
  } finally {
    await Promise.all([a.node.stop(), b.node.stop()]);
  }
}

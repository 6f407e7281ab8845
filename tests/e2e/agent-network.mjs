// What the agent-messaging and A2A end-to-end files share: a node with agent
// messaging on, its administrator and Ben (a person who sponsors agents), a
// way to make one of Ben's agents, and A2A clients calling with a credential.
import assert from "node:assert/strict";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { checkedFetch } from "./harness.mjs";
import { startDesk, personNamed } from "./fixtures.mjs";

/**
 * Starts a node with agent messaging on and sets it up: `{ node, call, token,
 * ben, benToken, messenger }`, where `messenger(name)` makes a new agent of
 * Ben's that exchanges messages and answers `{ id, credential }`.
 */
export async function startAgentNetwork() {
  const { node, call, token, desk } = await startDesk({ vars: { FEATURE_AGENT_NETWORK: "true" } });
  const { token: benToken, ...ben } = await desk.colleague(personNamed("Ben"));
  async function messenger(name) {
    const created = await call("POST", "/api/agents", { token, body: { name, sponsor: ben.id, capabilities: ["agent.messaging"], mailboxes: [] } });
    assert.equal(created.status, 201, created.text);
    return { id: created.body.agent.id, credential: created.body.credential };
  }
  return { node, call, token, ben, benToken, messenger };
}

/** `checkedFetch` with the bearer `credential`. */
export const bearerFetch = (credential) => (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${credential}`);
  return checkedFetch(url, { ...init, headers });
};

/** An @a2a-js/sdk client factory for the bearer `credential`; `legacy` speaks A2A 0.3. */
export function a2aFactory(credential, legacy = false) {
  const compatible = legacy ? { legacyCompat: { enabled: true } } : {};
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: bearerFetch(credential), ...compatible })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: checkedFetch, ...compatible }),
  }));
}

// A remote agent of another organisation, for the agents-across-organisations
// tests: a real A2A server built with the official @a2a-js/sdk (its Express
// handlers, DefaultRequestHandler and InMemoryTaskStore), so the node is tested
// against what the SDK actually writes and accepts, not against our reading of
// the specification. Its agent answers every message by completing the task
// with one text artifact. Every HTTP request is recorded, and every message
// that reached the agent's executor, for tests to assert what the node sent.
import http from "node:http";
import { randomUUID } from "node:crypto";
import express from "express";
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, AgentCard, Part, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from "@a2a-js/sdk/server";
import { UserBuilder, agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";
import { legacyAgentCardRouter } from "@a2a-js/sdk/compat/v0_3/server/express";
import * as Legacy from "a2a-sdk-03/server";
import * as LegacyExpress from "a2a-sdk-03/server/express";
import { recordRequest, listen } from "./faulty-a2a.mjs";

const RPC_PATH = "/a2a/jsonrpc";
const LEGACY_VERSION = "0.3";
const VERSIONS = new Set(["1.0", "0.3", "1.0+0.3"]);

/**
 * Starts a foreign A2A agent on 127.0.0.1. Options:
 * - `version`: `"1.0"` (default) — an A2A 1.0 agent (@a2a-js/sdk 1.3.0);
 *   `"0.3"` — an A2A 0.3-only agent, served by the official 0.3 SDK
 *   (@a2a-js/sdk 0.3.14, installed as a2a-sdk-03): a 0.3 card and only 0.3
 *   JSON-RPC, whatever the request's A2A-Version; `"1.0+0.3"` — a 1.0 agent with
 *   the 1.3.0 SDK's v0.3 compatibility on (`legacyCompat`): it answers the card
 *   in 0.3 shape when the card request has no A2A-Version header or 0.3, in 1.0
 *   shape for 1.0, and takes both dialects on one endpoint. The compat layer is
 *   not used for `"0.3"` because it cannot make a 0.3-only agent: its 0.3 card
 *   still carries the 1.0 `supportedInterfaces`, so a node would talk 1.0.
 * - `answer(text, message)`: the artifact's text for a message (may be async);
 *   `text` is the message's text parts joined, or the JSON of its data part.
 *   Default: `"echo: " + text`.
 * - `deferred`: the executor leaves each task `working` and returns (so
 *   `SendMessage` answers a working task whether or not the node asked to
 *   block); the task completes only when the test calls `finish(taskId?)`.
 * - `push` (1.0 only): the card says `pushNotifications`, and the SDK's own
 *   push store and sender post a task's changes to the push config a send
 *   carried.
 * - `requireBearer`: a token; the JSON-RPC endpoint answers 401 to any request
 *   without `Authorization: Bearer <token>`, and the card declares the scheme.
 * - `cardMaxAge`: seconds of the card's Cache-Control max-age (the 1.3.0 SDK's
 *   default is 3600; the 0.3 SDK sends no Cache-Control unless this is given).
 * - `name`: the card's name.
 *
 * Answers `{ url, cardUrl, rpcUrl, requests, received, finish(taskId?), close() }`:
 * `requests` holds every HTTP request (`{ method, path, query, headers, body,
 * rawBody, at }`); `received` every message that reached the executor
 * (`{ messageId, parts, metadata, taskId, contextId, text }`, parts in the wire
 * shape of the agent's version); `finish` completes the named deferred task, or
 * all of them, and answers the ids it completed.
 */
export async function startForeignAgent(options = {}) {
  const version = options.version ?? "1.0";
  if (!VERSIONS.has(version)) throw new Error(`unknown A2A version ${version}; one of ${[...VERSIONS].join(", ")}`);
  const requests = [];
  const received = [];
  const pending = new Map();
  const app = express();
  const server = http.createServer(app);
  const url = `http://127.0.0.1:${await listen(server)}`;
  const rpcUrl = `${url}${RPC_PATH}`;

  // Read before the SDK's own body parser, which then skips the consumed body:
  // the record must hold the body even of a request the SDK (or the 401 below)
  // refuses. (So a body that is not JSON meets the SDK as no body: -32602, not
  // the -32700 its parser would answer; a node never sends one.)
  app.use((req, _res, next) => {
    recordRequest(requests, req).then((record) => {
      req.body = record.body ?? undefined;
      next();
    }, next);
  });
  if (options.requireBearer !== undefined) {
    app.use(RPC_PATH, (req, res, next) => {
      if (req.get("authorization") === `Bearer ${options.requireBearer}`) return next();
      res.status(401).set("www-authenticate", 'Bearer realm="foreign-agent"').json({ error: "unauthorized" });
    });
  }

  const agent = { options, received, pending };
  if (version === "0.3") mountLegacy(app, { ...agent, url, rpcUrl });
  else mountCurrent(app, { ...agent, url, rpcUrl, compatible: version === "1.0+0.3" });

  return {
    url,
    cardUrl: `${url}/${AGENT_CARD_PATH}`,
    rpcUrl,
    requests,
    received,
    async finish(taskId) {
      const ids = taskId === undefined ? [...pending.keys()] : [taskId];
      for (const id of ids) {
        const complete = pending.get(id);
        if (!complete) throw new Error(`no deferred task ${id}`);
        pending.delete(id);
        await complete();
      }
      return ids;
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** What the agent answers to `text`. */
async function answerTo(options, text, message) {
  return options.answer ? String(await options.answer(text, message)) : `echo: ${text}`;
}

/**
 * The A2A 1.0 agent (@a2a-js/sdk 1.3.0), optionally with its v0.3 compatibility.
 * The executor publishes the way the SDK's sample agent does: the task (working),
 * then an artifact update, then the completed status.
 */
function mountCurrent(app, { options, received, pending, url, rpcUrl, compatible }) {
  const bearer = options.requireBearer !== undefined;
  // The card as the wire carries it (proto JSON). The SDK's well-known handler
  // writes its card object with JSON.stringify, as is; written like the SDK's
  // samples (tenant "", empty lists), except the security scheme, whose object
  // form (a `$case` oneof) is not what a 1.0 reader parses.
  const wireCard = {
    name: options.name ?? "Foreign agent",
    description: "An agent of another organisation, answering each message with one artifact.",
    supportedInterfaces: [
      { url: rpcUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION },
      // The SDK's compat layer serves 0.3 only for an interface the card declares in 0.3.
      ...(compatible ? [{ url: rpcUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: LEGACY_VERSION }] : []),
    ],
    provider: { organization: "Another organisation", url },
    version: "1.0.0",
    capabilities: { streaming: false, pushNotifications: Boolean(options.push), extensions: [], extendedAgentCard: false },
    securitySchemes: bearer ? { bearer: { httpAuthSecurityScheme: { scheme: "Bearer", description: "", bearerFormat: "" } } } : {},
    securityRequirements: bearer ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "answer", name: "Answer", description: "Answers each message with one text artifact.", tags: ["test"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    documentationUrl: "",
    signatures: [],
  };
  // The SDK's internals (and its 0.3 translation of the card) read the object form.
  const card = AgentCard.fromJSON(wireCard);
  const taskStore = new InMemoryTaskStore();

  const executor = {
    async execute(requestContext, eventBus) {
      const { taskId, contextId, userMessage: message } = requestContext;
      const text = textOf(message);
      received.push({ messageId: message.messageId, parts: message.parts.map((part) => Part.toJSON(part)), metadata: message.metadata, taskId, contextId, text });
      const reply = await answerTo(options, text, message);
      const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() });
      const artifact = {
        artifactId: randomUUID(),
        name: "answer",
        description: "",
        parts: [{ content: { $case: "text", value: reply }, metadata: undefined, filename: "", mediaType: "text/plain" }],
        metadata: undefined,
        extensions: [],
      };
      const history = [...(requestContext.task?.history ?? []), message];
      eventBus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), artifacts: requestContext.task?.artifacts ?? [], history, metadata: undefined }));
      if (options.deferred) {
        // The bus is settled when this returns, so the rest is written to the
        // task store directly, as a background worker of the agent would.
        const context = requestContext.context;
        pending.set(taskId, async () => {
          const task = await taskStore.load(taskId, context);
          await taskStore.save({ ...task, artifacts: [...task.artifacts, artifact], status: status(TaskState.TASK_STATE_COMPLETED) }, context);
        });
        return;
      }
      eventBus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
      eventBus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
    },
    async cancelTask() {},
  };

  // With `push`, the SDK's own push store and sender: a task's changes are
  // posted to the push config the send carried, as a real server would.
  const pushStore = options.push ? new InMemoryPushNotificationStore() : undefined;
  const pushSender = options.push ? new DefaultPushNotificationSender(pushStore) : undefined;
  const requestHandler = new DefaultRequestHandler(card, taskStore, executor, undefined, pushStore, pushSender);
  const cache = options.cardMaxAge === undefined ? undefined : { maxAge: options.cardMaxAge };
  if (compatible) {
    // What agentCardHandler's own legacyCompat mounts, but fed the object form
    // it translates; the 1.0 handler below answers requests asking for 1.0.
    app.use(`/${AGENT_CARD_PATH}`, legacyAgentCardRouter({ agentCardProvider: requestHandler, cache }));
    app.use(`/${AGENT_CARD_PATH}`, (_req, res, next) => {
      res.append("vary", "A2A-Version");
      next();
    });
  }
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: async () => wireCard, cache }));
  app.use(RPC_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, ...(compatible ? { legacyCompat: { enabled: true } } : {}) }));
}

/** The A2A 0.3-only agent, on the official 0.3 SDK (its executor publishes 0.3 events). */
function mountLegacy(app, { options, received, pending, url, rpcUrl }) {
  const bearer = options.requireBearer !== undefined;
  const card = {
    name: options.name ?? "Foreign agent",
    description: "An agent of another organisation, answering each message with one artifact.",
    url: rpcUrl,
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
    provider: { organization: "Another organisation", url },
    version: "1.0.0",
    capabilities: { streaming: false, pushNotifications: false },
    ...(bearer ? { securitySchemes: { bearer: { type: "http", scheme: "bearer" } }, security: [{ bearer: [] }] } : {}),
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "answer", name: "Answer", description: "Answers each message with one text artifact.", tags: ["test"] }],
  };
  const taskStore = new Legacy.InMemoryTaskStore();

  const executor = {
    async execute(requestContext, eventBus) {
      const { taskId, contextId, userMessage: message } = requestContext;
      const text = legacyTextOf(message);
      received.push({ messageId: message.messageId, parts: message.parts, metadata: message.metadata, taskId, contextId, text });
      const reply = await answerTo(options, text, message);
      const status = (state) => ({ state, timestamp: new Date().toISOString() });
      const artifact = { artifactId: randomUUID(), name: "answer", parts: [{ kind: "text", text: reply }] };
      const history = [...(requestContext.task?.history ?? []), message];
      eventBus.publish({ kind: "task", id: taskId, contextId, status: status("working"), artifacts: requestContext.task?.artifacts ?? [], history });
      if (options.deferred) {
        pending.set(taskId, async () => {
          const task = await taskStore.load(taskId);
          await taskStore.save({ ...task, artifacts: [...(task.artifacts ?? []), artifact], status: status("completed") });
        });
      } else {
        eventBus.publish({ kind: "artifact-update", taskId, contextId, artifact, lastChunk: true });
        eventBus.publish({ kind: "status-update", taskId, contextId, status: status("completed"), final: true });
      }
      // The 0.3 SDK leaves settling the bus to the executor: without this a
      // blocking message/send on a task left working would never be answered.
      eventBus.finished();
    },
    async cancelTask() {},
  };

  const requestHandler = new Legacy.DefaultRequestHandler(card, taskStore, executor);
  if (options.cardMaxAge !== undefined) {
    // The 0.3 SDK's card handler sends no Cache-Control of its own.
    app.use(`/${AGENT_CARD_PATH}`, (_req, res, next) => {
      res.set("cache-control", `public, max-age=${options.cardMaxAge}`);
      next();
    });
  }
  app.use(`/${AGENT_CARD_PATH}`, LegacyExpress.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(RPC_PATH, LegacyExpress.jsonRpcHandler({ requestHandler, userBuilder: LegacyExpress.UserBuilder.noAuthentication }));
}

/** The text parts of a 1.0 message (object form) joined, or its data part as JSON. */
function textOf(message) {
  const contents = message.parts.map((part) => part.content).filter(Boolean);
  const text = contents.filter((content) => content.$case === "text").map((content) => content.value).join("");
  const data = contents.find((content) => content.$case === "data");
  return text === "" && data ? JSON.stringify(data.value) : text;
}

/** The same for a 0.3 message. */
function legacyTextOf(message) {
  const text = message.parts.filter((part) => part.kind === "text").map((part) => part.text).join("");
  const data = message.parts.find((part) => part.kind === "data");
  return text === "" && data ? JSON.stringify(data.data) : text;
}

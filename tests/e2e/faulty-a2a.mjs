// A remote A2A agent that misbehaves, for the agents-across-organisations tests:
// a hand-written node:http server (no SDK, so it can break the protocol on
// purpose) serving a valid A2A 1.0 card whose JSON-RPC endpoint fails the way
// `mode` says. The mode can change while the test runs, so one node can meet a
// failure and then the recovery. Every request is recorded, for tests to assert
// what the node sent (and that it sent nothing it should not have).
import http from "node:http";
import { randomUUID } from "node:crypto";

/** Where a node is sent by the redirect modes: addresses a node must never reach for a peer. */
export const PRIVATE_ENDPOINT = "http://10.0.0.1/a2a";
export const METADATA_URL = "http://169.254.169.254/latest/meta-data/";

const CARD_PATH = "/.well-known/agent-card.json";
const MODES = new Set(["ok", "down", "slow", "garbage", "wrong-shape", "redirect-private", "redirect-card"]);

/**
 * Reads a request's whole body and appends its record to `requests`:
 * `{ method, path, query, headers, body, rawBody, at }`, where `body` is the
 * parsed JSON (null when the body is empty or not JSON) and `rawBody` the text.
 * Shared with foreign-a2a.mjs so both fixtures record alike.
 */
export async function recordRequest(requests, req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const rawBody = Buffer.concat(chunks).toString("utf8");
  let body = null;
  try {
    if (rawBody !== "") body = JSON.parse(rawBody);
  } catch {}
  const { pathname, search } = new URL(req.url, "http://fixture.invalid");
  const record = { method: req.method, path: pathname, query: search, headers: { ...req.headers }, body, rawBody, at: Date.now() };
  requests.push(record);
  return record;
}

/** Listens on 127.0.0.1 (`port` 0: a free one) and answers the port. */
export function listen(server, port = 0) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(server.address().port);
    });
  });
}

/** The concatenated text parts of an A2A 1.0 message (a data part as JSON when there is no text). */
function textOf(message) {
  const parts = Array.isArray(message?.parts) ? message.parts : [];
  const text = parts.filter((part) => typeof part.text === "string").map((part) => part.text).join("");
  if (text !== "") return text;
  const data = parts.find((part) => "data" in part);
  return data ? JSON.stringify(data.data) : "";
}

/**
 * Starts the faulty agent in `mode`:
 * - `"ok"`: a correct A2A 1.0 JSON-RPC agent: `SendMessage` completes a task at
 *   once with one artifact `ok: <text>`, `GetTask` answers it.
 * - `"down"`: the endpoint closes the connection without answering (the card is
 *   still served; `stop()` stops the whole server instead).
 * - `"slow"`: the endpoint answers as `"ok"` does, after `options.delayMs`
 *   (30 s by default: longer than a node's 10 s timeout).
 * - `"garbage"`: 200 with a body that is not JSON (labelled application/json).
 * - `"wrong-shape"`: valid JSON-RPC whose result is neither a Task nor a Message.
 * - `"redirect-private"`: the endpoint answers 307 to `PRIVATE_ENDPOINT`.
 * - `"redirect-card"`: the card URL itself answers 307 to `METADATA_URL` (the
 *   endpoint behaves as `"ok"`, for a node that somehow got past the card).
 *
 * Answers `{ url, cardUrl, rpcUrl, requests, tasks, mode, setMode(mode),
 * moveEndpoint(), stop(), resume(), close() }`. `rpcUrl` is the endpoint the
 * card names now; `tasks` maps the ids of the tasks `"ok"` created to them.
 */
export async function startFaultyAgent(mode = "ok", options = {}) {
  const delayMs = options.delayMs ?? 30_000;
  const requests = [];
  const tasks = new Map();
  // Timers of "slow" answers, cleared on close so a test's process can exit.
  const timers = new Set();
  const state = { mode: checked(mode), endpoint: "/rpc-1", moved: false };
  let port = 0;

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });

  async function handle(req, res) {
    const record = await recordRequest(requests, req);
    if (record.path === CARD_PATH && req.method === "GET") return card(res);
    if (record.path !== state.endpoint || req.method !== "POST") return send(res, 404, { error: "not found" });
    switch (state.mode) {
      case "down":
        // No status line at all: what a crashed or half-open peer looks like to the node.
        req.socket.destroy();
        return;
      case "slow": {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer(record.body, res);
        }, delayMs);
        timers.add(timer);
        return;
      }
      case "garbage":
        res.writeHead(200, { "content-type": "application/json" });
        res.end("<html><body>upstream is having a bad day</body></html>");
        return;
      case "wrong-shape":
        // Well-formed JSON-RPC, so only a node that checks the result's shape notices.
        return send(res, 200, { jsonrpc: "2.0", id: record.body?.id ?? null, result: { status: "done", answer: 42, items: [] } });
      case "redirect-private":
        res.writeHead(307, { location: PRIVATE_ENDPOINT });
        res.end();
        return;
      default:
        return answer(record.body, res);
    }
  }

  function card(res) {
    if (state.mode === "redirect-card") {
      res.writeHead(307, { location: METADATA_URL });
      res.end();
      return;
    }
    // A long max-age before the move, none after: a node that honours
    // Cache-Control keeps using /rpc-1 until it meets the 404, then must re-read
    // the card (rather than wait out a cache) to find /rpc-2.
    res.writeHead(200, { "content-type": "application/json", "cache-control": state.moved ? "max-age=0" : "max-age=300" });
    res.end(JSON.stringify(cardBody()));
  }

  function cardBody() {
    return {
      name: "Faulty agent",
      description: "An A2A agent whose JSON-RPC endpoint misbehaves on request.",
      supportedInterfaces: [{ url: `http://127.0.0.1:${port}${state.endpoint}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      version: "1.0.0",
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "ok", name: "Answers ok", description: "Answers ok: and the text it was sent.", tags: ["test"] }],
    };
  }

  /**
   * A correct A2A 1.0 JSON-RPC answer. The shapes are what @a2a-js/sdk 1.3.0's
   * own server writes (see foreign-a2a.mjs, which runs it): `SendMessage`'s
   * result is the SendMessageResponse oneof in proto JSON, so the task comes
   * wrapped as `{ "task": { ... } }` (a Message would be `{ "message": ... }`);
   * `GetTask`'s result is the bare Task. States are the proto enum names.
   */
  function answer(body, res) {
    const id = body?.id ?? null;
    if (body?.method === "SendMessage") {
      const message = body.params?.message;
      if (!message?.messageId) return send(res, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: "message.messageId is required" } });
      const task = {
        id: randomUUID(),
        contextId: message.contextId || randomUUID(),
        status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
        artifacts: [{ artifactId: randomUUID(), parts: [{ text: `ok: ${textOf(message)}` }] }],
        history: [message],
      };
      tasks.set(task.id, task);
      return send(res, 200, { jsonrpc: "2.0", id, result: { task } });
    }
    if (body?.method === "GetTask") {
      const task = tasks.get(body.params?.id);
      if (!task) return send(res, 200, { jsonrpc: "2.0", id, error: { code: -32001, message: "Task not found" } });
      return send(res, 200, { jsonrpc: "2.0", id, result: task });
    }
    return send(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${body?.method}` } });
  }

  port = await listen(server);
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    cardUrl: `${url}${CARD_PATH}`,
    get rpcUrl() {
      return `${url}${state.endpoint}`;
    },
    requests,
    tasks,
    get mode() {
      return state.mode;
    },
    setMode(next) {
      state.mode = checked(next);
    },
    /** The card names /rpc-2 from now on, with max-age=0; /rpc-1 answers 404. */
    moveEndpoint() {
      state.endpoint = "/rpc-2";
      state.moved = true;
    },
    /** Stops listening (and drops open connections): the port refuses connections until `resume()`. */
    async stop() {
      await shut();
    },
    /** Listens again on the same port. */
    async resume() {
      if (!server.listening) await listen(server, port);
    },
    async close() {
      await shut();
    },
  };

  function shut() {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    if (!server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function checked(mode) {
  if (!MODES.has(mode)) throw new Error(`unknown faulty-agent mode ${mode}; one of ${[...MODES].join(", ")}`);
  return mode;
}

function send(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

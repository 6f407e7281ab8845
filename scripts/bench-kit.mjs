// What the benchmark's phases share (scripts/bench.mjs, scripts/bench-webhooks.mjs):
// a timed client held to contract/openapi.json, percentiles and tables, the
// Server-Timing header read, timing loops, and the fixtures every phase makes.
import { checkAgainstOpenApi } from "../tests/e2e/harness.mjs";

/** The value at `fraction` of sorted `timings`, in ms with one decimal. */
export function percentile(timings, fraction) {
  if (timings.length === 0) return "—";
  const sorted = [...timings].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))].toFixed(1);
}

/** Prints `rows` (arrays of cells) under `columns`, the first `left` of them left-aligned and the rest right. */
export function table(columns, rows, left = 1) {
  const widths = columns.map((column, index) => Math.max(column.length, ...rows.map((row) => String(row[index]).length)));
  const line = (cells) => cells.map((cell, index) => (index < left ? String(cell).padEnd(widths[index]) : String(cell).padStart(widths[index]))).join("  ");
  console.log(line(columns));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const row of rows) console.log(line(row));
  console.log();
}

/**
 * The harness's `client` (JSON in, `{ status, body, text, headers }` out, every
 * answer held to contract/openapi.json), timed: `elapsed` is the HTTP exchange
 * in ms, up to the answer's last byte and before the client parses or checks it.
 */
export function timedClient(url) {
  return async function call(method, path, { body, token, headers = {}, raw } = {}) {
    const sent = { ...headers };
    if (token) sent.authorization = `Bearer ${token}`;
    if (body !== undefined) sent["content-type"] = "application/json";
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const started = performance.now();
    const response = await fetch(url + path, { method, headers: sent, body: payload, redirect: "manual" });
    const text = await response.text();
    const elapsed = performance.now() - started;
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {}
    checkAgainstOpenApi(method, path, response.status, response.headers.get("content-type"), parsed, response.headers);
    return { status: response.status, body: parsed, text, headers: response.headers, elapsed };
  };
}

// The phases a Worker's answer reports in its Server-Timing header, in its
// order (src/core/timing.rs), and the whole request as the Worker measured it.
/**
 * What the mail phases' nodes are started with: their mailboxes keep their
 * mail in their own Durable Objects, as a node's do (decision 0040), or in D1
 * with `OWN_DATABASES=false`, to compare.
 */
export const MAIL_VARS = { NEW_MAILBOXES_IN_OWN_DATABASES: process.env.OWN_DATABASES === "false" ? "false" : "true" };

export const PHASE_NAMES = ["boundary", "parse", "authority", "storage", "handler", "serialise", "audit"];
export const TOTAL = "total";

/** A Server-Timing header's metrics as `{ name: ms }`, with `round_trips` from storage's description; null without one. */
export function serverTiming(headers) {
  const header = headers?.get?.("server-timing");
  if (!header) return null;
  const metrics = {};
  for (const metric of header.split(",")) {
    const [name, ...parameters] = metric.trim().split(";");
    for (const parameter of parameters) {
      const [key, value] = parameter.trim().split("=");
      if (key === "dur") metrics[name] = Number(value);
      if (key === "desc" && name === "storage") metrics.round_trips = Number.parseInt(value.replace(/"/g, ""), 10);
    }
  }
  return metrics;
}

/**
 * Times each of `cases` (`[name, request]`) `rounds` times, in turn (one call
 * of each per round, so every case meets the machine as it is then), after
 * `warmUp` untimed rounds; throws on a refusal. Answers, by name, each call's
 * latency (its HTTP exchange where the client timed it, else the whole call)
 * with, where the answers said, where their time went and the last one's size.
 */
export async function measureInTurn(cases, rounds, warmUp = 5) {
  for (let index = 0; index < warmUp; index++) for (const [, request] of cases) await request();
  const measured = new Map(cases.map(([name]) => [name, Object.assign([], { phases: [], bytes: "—" })]));
  for (let index = 0; index < rounds; index++) {
    for (const [name, request] of cases) {
      const timings = measured.get(name);
      const started = performance.now();
      const response = await request();
      const elapsed = response.elapsed ?? performance.now() - started;
      timings.push(elapsed);
      if (response.status >= 400) throw new Error(`${name}: ${response.status} ${response.text}`);
      const spent = serverTiming(response.headers);
      if (spent) timings.phases.push({ ...spent, outside: elapsed - spent[TOTAL] });
      if (typeof response.text === "string") timings.bytes = Buffer.byteLength(response.text);
    }
  }
  return measured;
}

/** `measureInTurn` for one request: its timings. */
export async function measure(name, request, rounds, warmUp = 5) {
  return (await measureInTurn([[name, request]], rounds, warmUp)).get(name);
}

/** The mean of `values`, in ms with two decimals. */
export function mean(values) {
  if (values.length === 0) return "—";
  return (values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(2);
}

/** A mailbox the administrator reads (metadata and content) and may draft from. */
export async function mailboxFor(call, token, admin, address, name) {
  const mailbox = (await call("POST", "/api/mailboxes", { token, body: { address, display_name: name } })).body;
  for (const relation of ["mailbox.metadata.read", "mailbox.content.read", "send.propose"]) {
    await call("POST", "/api/relations", { token, body: { subject: admin.id, relation, object: mailbox.id } });
  }
  return mailbox;
}

export async function signIn(call, email, password) {
  const signedIn = await call("POST", "/api/sessions", { body: { email, password } });
  if (signedIn.status !== 201) throw new Error(`sign-in failed: ${signedIn.text}`);
  return signedIn.body.session.access_token;
}

/** Two agents of the administrator that exchange messages: `{ sender, receiver }`, each `{ id, credential }`. */
export async function messengers(call, token, admin) {
  const mint = async (name) => {
    const created = await call("POST", "/api/agents", { token, body: { name, sponsor: admin.id, capabilities: ["agent.messaging"], mailboxes: [] } });
    if (created.status !== 201) throw new Error(`minting failed: ${created.text}`);
    return { id: created.body.agent.id, credential: created.body.credential };
  };
  const sender = await mint("Bench sender");
  const receiver = await mint("Bench receiver");
  // No caps in the way of measuring.
  await call("PATCH", `/api/agents/${receiver.id}/messaging`, { token, body: { rate_per_minute: 10_000, pending_cap: 1_000 } });
  return { sender, receiver };
}

/**
 * A mailbox the administrator reads, holding one conversation (`message`
 * delivered through the email handler), and `change()`, which sets the
 * conversation's other status each time so every call changes something:
 * `{ mailbox, thread, change }`.
 */
export async function conversationToChange(node, call, token, admin, message) {
  const mailbox = await mailboxFor(call, token, admin, "support@mailroom.test", "Support");
  await node.deliver("ana@customer.example", "support@mailroom.test", message);
  const thread = (await call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token })).body.threads[0];
  let changes = 0;
  const change = () =>
    call("PATCH", `/api/mailboxes/${mailbox.id}/threads/${thread.id}`, { token, body: { status: changes++ % 2 ? "open" : "waiting" } });
  return { mailbox, thread, change };
}

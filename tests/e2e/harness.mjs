// Starts the built Worker on real workerd (wrangler dev) with a fresh local D1,
// migrations applied, on a free port of 127.0.0.1, and stops it afterwards.
// Every end-to-end test file starts its own node, so files share no state.
import { spawn, execFile } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, readFileSync, cpSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createHmac, randomBytes } from "node:crypto";
import Ajv2020 from "ajv/dist/2020.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

export const ADMIN = { email: "ada@example.com", name: "Ada Admin", password: "correct horse battery staple" };

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

function wranglerEnvironment() {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" };
}

/** Runs a wrangler command to completion. */
export async function wrangler(args) {
  return promisify(execFile)(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    env: wranglerEnvironment(),
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * The node's configuration: wrangler.toml without its `[build]` table, and with
 * `sendEmail`'s settings added to the send_email binding (such as
 * `allowed_destination_addresses`, which workerd enforces as Cloudflare does),
 * written beside the node's state with its paths made absolute; answers the
 * `--config` arguments that use it. Without `[build]`, `wrangler dev` neither
 * runs scripts/build.sh when it starts nor again when a source file changes: a
 * run's nodes, many at once, all serve the one build in build/ that the test
 * command made and waited for (decision 0041).
 */
function configWith(state, sendEmail) {
  const original = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  // The table and its keys, up to the next table's comments or header.
  const build = /^\[build\]\n(?:[a-z_]+ = [^\n]*\n)+/m;
  const replacements = [
    [build, ""],
    ['main = "build/index.js"', `main = ${JSON.stringify(join(ROOT, "build", "index.js"))}`],
    ['migrations_dir = "migrations"', `migrations_dir = ${JSON.stringify(join(ROOT, "migrations"))}`],
  ];
  if (sendEmail) {
    const settings = Object.entries(sendEmail).map(([key, value]) => `${key} = ${JSON.stringify(value)}\n`);
    replacements.push(['[[send_email]]\nname = "SEND_EMAIL"\n', `[[send_email]]\nname = "SEND_EMAIL"\n${settings.join("")}`]);
  }
  let config = original;
  for (const [find, replace] of replacements) {
    const found = typeof find === "string" ? config.includes(find) : find.test(config);
    if (!found) throw new Error(`wrangler.toml no longer has ${find}: update the harness`);
    config = config.replace(find, replace);
  }
  const path = join(state, "wrangler.toml");
  writeFileSync(path, config);
  return ["--config", path];
}

/**
 * Applies `migrations/` to a fresh local D1 (and R2) state in `state`, as
 * `wrangler d1 migrations apply` does for a deployed node. It takes about 15 s
 * of CPU, so run.mjs does it once for the whole run and names the result in
 * MAILROOM_E2E_MIGRATED_STATE; each node then starts from a copy of it.
 */
export async function migrate(state) {
  await wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
}

/**
 * Starts the built Worker; `vars` adds or overrides its configuration and
 * `sendEmail` its send_email binding's settings (see `configWith`). Answers a
 * running node: `url` is its origin; `sql(command)` runs SQL against its local
 * D1 from outside the Worker (for tests that tamper with storage).
 */
export async function startNode(options = {}) {
  // A free port found here can be taken by another file's node before
  // wrangler binds it (files run at once): such a start is tried again on
  // other ports, and any other failure is the test's.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startNodeOnce(options);
    } catch (error) {
      if (attempt === 3 || !/Address already in use/.test(String(error.message))) throw error;
    }
  }
}

async function startNodeOnce({ vars = {}, sendEmail } = {}) {
  const state = mkdtempSync(join(tmpdir(), "mailroom-e2e-"));
  const port = await freePort();
  const inspector = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const secrets = {
    SESSION_SECRET: randomBytes(32).toString("hex"),
    AUDIT_KEY: randomBytes(32).toString("hex"),
    SETUP_TOKEN: randomBytes(16).toString("hex"),
    // Below miniflare's own 1 MiB local limit, so the node's cap can be tested.
    MAXIMUM_MESSAGE_BYTES: "200000",
    // The node answers only here: a request for any other host is refused.
    PUBLIC_ORIGIN: url,
    ...vars,
  };
  const envFile = join(state, "secrets.env");
  writeFileSync(envFile, `${Object.entries(secrets).map(([key, value]) => `${key}=${value}`).join("\n")}\n`);
  // A copy of the run's migrated state where run.mjs made one (nothing holds it
  // open, so its files are whole), else the migrations applied here.
  const migrated = process.env.MAILROOM_E2E_MIGRATED_STATE;
  if (migrated && existsSync(migrated)) cpSync(migrated, state, { recursive: true });
  else await migrate(state);
  const config = configWith(state, sendEmail);

  let output = "";
  // wrangler dev on the state, answering once the node does; run again on the same state by `whileStopped`.
  const launch = async () => {
    const child = spawn(
      process.execPath,
      [
        WRANGLER, "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector),
        "--persist-to", state, "--env-file", envFile, "--show-interactive-dev-session=false", "--log-level", "info",
        // Scheduled events are triggered through /__scheduled, as the cron would.
        "--test-scheduled",
        ...config,
      ],
      { cwd: ROOT, env: wranglerEnvironment(), stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${output}`);
      try {
        const response = await fetch(`${url}/api/me`);
        if (response.status === 401) break;
      } catch {}
      if (Date.now() > deadline) throw new Error(`the node did not start within 90 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return child;
  };
  const halt = async (child) => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", resolve)));
  };
  let child = await launch();

  return {
    url,
    secrets,
    // wrangler's process, under which workerd runs (the benchmark reads its usage).
    get pid() {
      return child.pid;
    },
    // The node's local state (D1's SQLite file, R2), which the benchmark measures.
    state,
    output: () => output,
    /**
     * Delivers a raw message through the Worker's email handler, as Email Routing
     * would. Answers the SMTP reason the Worker rejected it with, or null: read
     * from the handler's own answer (the Worker waits for its rejection to land
     * before it returns), never from a log.
     */
    async deliver(from, to, raw) {
      const response = await fetch(`${url}/cdn-cgi/handler/email?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, {
        method: "POST",
        body: raw,
      });
      const text = await response.text();
      if (response.status === 400) return /reason: (.*)$/m.exec(text)?.[1] ?? text;
      if (response.status !== 200) throw new Error(`delivering to ${to} answered ${response.status}: ${text}`);
      return null;
    },
    /**
     * Runs the Worker's scheduled event as the cron trigger `cron` would: by
     * default the upkeep's, every five minutes; `* * * * *` delivers reminders.
     */
    async scheduled(cron = "*/5 * * * *") {
      const response = await fetch(`${url}/__scheduled?cron=${encodeURIComponent(cron)}`);
      if (response.status !== 200) throw new Error(`the scheduled event answered ${response.status}: ${await response.text()}`);
    },
    /** The messages workerd has handed to the send_email binding so far, as raw text. */
    sentMail() {
      const files = [...output.matchAll(/send_email binding called with the following message:\s+(?:Email:\s+)?(\S+\.eml)/g)].map((match) => match[1]);
      return files.map((file) => readFileSync(file, "utf8"));
    },
    async sql(command) {
      // workerd holds the same SQLite file; a read from outside can meet its
      // write lock (SQLITE_BUSY) on a loaded machine, which says nothing about
      // the node, so it is tried again a few times.
      for (let attempt = 1; ; attempt += 1) {
        try {
          const { stdout } = await wrangler(["d1", "execute", "DB", "--local", "--persist-to", state, "--json", "--command", command, ...config]);
          return JSON.parse(stdout)[0].results;
        } catch (error) {
          if (attempt === 5 || !String(error.stderr).includes("SQLITE_BUSY")) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
    /**
     * Whether the node's local R2 bucket holds an object under `key`, read from
     * outside the Worker (for tests that check what the node deleted).
     */
    async hasObject(key) {
      const bucket = /bucket_name = "([^"]+)"/.exec(readFileSync(join(ROOT, "wrangler.toml"), "utf8"))[1];
      const file = join(state, `object-${randomBytes(8).toString("hex")}`);
      try {
        await wrangler(["r2", "object", "get", `${bucket}/${key}`, "--local", "--persist-to", state, "--file", file, ...config]);
      } catch (error) {
        if (/does not exist/i.test(`${error.stdout}${error.stderr}`)) return false;
        throw error;
      }
      try {
        readFileSync(file);
        rmSync(file);
        return true;
      } catch {
        return false;
      }
    },
    /**
     * Deletes the object under `key` from the node's local R2 bucket, from
     * outside the Worker (for tests that play an attacker who can write R2).
     */
    async deleteObject(key) {
      const bucket = /bucket_name = "([^"]+)"/.exec(readFileSync(join(ROOT, "wrangler.toml"), "utf8"))[1];
      await wrangler(["r2", "object", "delete", `${bucket}/${key}`, "--local", "--persist-to", state, ...config]);
    },
    /**
     * Stops the node, runs `work(state)` while nothing holds its files (for a
     * benchmark that writes a Durable Object's SQLite, which one workerd at a
     * time may hold), and starts it again on the same state, port and
     * secrets: `work`'s answer.
     */
    async whileStopped(work) {
      await halt(child);
      try {
        return await work(state);
      } finally {
        child = await launch();
      }
    },
    async stop() {
      await halt(child);
      rmSync(state, { recursive: true, force: true });
    },
  };
}

// Every answer the tests receive is checked against contract/openapi.json, so the
// document cannot describe a status or a body the running Worker does not give.
const openapi = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
// schemars names integer widths as formats; JSON Schema's type already checks them.
for (const format of ["int64", "int32", "uint32", "uint64", "uint", "uint8", "uint16"]) ajv.addFormat(format, true);
ajv.addSchema(openapi, "openapi");
const operations = Object.entries(openapi.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({
    method: method.toUpperCase(),
    template,
    // A segment may be empty, as the router matches it: the route then refuses it as left out.
    // An endpoint also answered with one trailing slash says so.
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]*")}${operation["x-mailroom-trailing-slash"] ? "/?" : ""}$`),
    operation,
  })),
);
const pointer = (...parts) => parts.map((part) => String(part).replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
const validators = new Map();
function validatorFor(path) {
  if (!validators.has(path)) validators.set(path, ajv.compile({ $ref: `openapi#/${path}` }));
  return validators.get(path);
}
/** For each documented operation ("GET /api/me"), the statuses ("200", "404") its answers in this process had. */
export const documentedAnswers = new Map();
// No answer shows a route's path template (`:mailboxId`): a refusal names a
// parameter or the value it was given, never a placeholder (decision 0030).
const pathParameterNames = [...new Set(operations.flatMap(({ operation }) => (operation.parameters ?? []).filter((parameter) => parameter.in === "path").map((parameter) => parameter.name)))];
const ROUTE_TEMPLATE = new RegExp(`:(${pathParameterNames.join("|")})(?![A-Za-z0-9_])`);

/** Throws unless `status`, `body` and `headers` are what the OpenAPI document says `method path` answers. */
export function checkAgainstOpenApi(method, path, status, contentType, body, headers) {
  const bare = path.split("?")[0];
  // Refusals and the MCP server's answers; the capability vocabulary lists REST paths as documents do.
  const judged = body !== null && (status >= 400 || bare === "/mcp");
  const template = judged ? JSON.stringify(body).match(ROUTE_TEMPLATE) : null;
  if (template) throw new Error(`${method} ${bare} answered ${status} showing the route template ${template[0]}: ${JSON.stringify(body)}`);
  const found = operations.find((candidate) => candidate.method === method && candidate.pattern.test(bare));
  const refusal = validatorFor(pointer("components", "schemas", "RefusalBody"));
  if (!found) {
    if ((status === 404 || status === 405) && refusal(body)) return;
    throw new Error(`${method} ${bare} is not in contract/openapi.json but answered ${status}`);
  }
  // Exactly: each operation lists every status it answers, never a range.
  const responses = found.operation.responses;
  const key = String(status);
  if (!responses[key]) {
    throw new Error(`${method} ${found.template} answered ${status}, which contract/openapi.json does not list for it (it lists ${Object.keys(responses).join(", ")}): ${JSON.stringify(body)}`);
  }
  for (const [name, header] of Object.entries(responses[key].headers ?? {})) {
    if (header.required && headers && !headers.get(name)) throw new Error(`${method} ${found.template} ${status} carries no ${name}`);
  }
  const operation = `${found.method} ${found.template}`;
  if (!documentedAnswers.has(operation)) documentedAnswers.set(operation, new Set());
  documentedAnswers.get(operation).add(key);
  // An answer may be documented in more than one media type (an export's
  // manifest or message): it must be one of them, and JSON must match its schema.
  const listed = responses[key].content ? Object.keys(responses[key].content) : [];
  const media = listed.find((type) => contentType?.startsWith(type)) ?? listed[0] ?? null;
  if (media === "application/json") {
    if (!contentType?.startsWith("application/json")) throw new Error(`${method} ${found.template} ${status}: content-type ${contentType}`);
    const validate = validatorFor(pointer("paths", found.template, method.toLowerCase(), "responses", key, "content", "application/json", "schema"));
    if (!validate(body)) {
      throw new Error(`${method} ${found.template} ${status} does not match contract/openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
    }
  } else if (media && media !== "*/*" && !contentType?.startsWith(media)) {
    throw new Error(`${method} ${found.template} ${status}: expected ${media}, got ${contentType}`);
  }
}

/**
 * `fetch`, with every answer held to contract/openapi.json as `client` holds
 * its own: for clients that bring their own HTTP, such as the MCP SDK's
 * transport (its `fetch` option), and raw protocol requests.
 */
export async function checkedFetch(url, init = {}) {
  const response = await fetch(url, init);
  let parsed = null;
  // A stream's body is read by its client as it comes: only its status and
  // media type are held here.
  const streamed = response.headers.get("content-type")?.startsWith("text/event-stream");
  try {
    if (!streamed) parsed = JSON.parse(await response.clone().text());
  } catch {}
  const { pathname, search } = new URL(url);
  checkAgainstOpenApi((init.method ?? "GET").toUpperCase(), pathname + search, response.status, response.headers.get("content-type"), parsed, response.headers);
  return response;
}

/** Calls the node's API like a CLI would: JSON in, `{ status, body, headers }` out. */
export function client(url) {
  return async function call(method, path, { body, token, headers = {}, raw } = {}) {
    const sent = { ...headers };
    if (token) sent.authorization = `Bearer ${token}`;
    if (body !== undefined) sent["content-type"] = "application/json";
    const response = await fetch(url + path, {
      method,
      headers: sent,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      redirect: "manual",
    });
    const text = await response.text();
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {}
    checkAgainstOpenApi(method, path, response.status, response.headers.get("content-type"), parsed, response.headers);
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
}

/** Sets the node up with the test administrator and signs them in. */
export async function setUp(node) {
  const call = client(node.url);
  const setup = await call("POST", "/api/setup", { body: { setup_token: node.secrets.SETUP_TOKEN, ...ADMIN } });
  if (setup.status !== 201) throw new Error(`setup failed: ${setup.text}`);
  const signedIn = await call("POST", "/api/sessions", { body: { email: ADMIN.email, password: ADMIN.password } });
  if (signedIn.status !== 201) throw new Error(`sign-in failed: ${signedIn.text}`);
  return { call, admin: setup.body.administrator, token: signedIn.body.session.access_token, session: signedIn.body.session };
}

/** An access token signed with the node's own secret, for expiry tests. */
export function signAccessToken(secret, claims) {
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const mac = createHmac("sha256", secret).update("mailroom.access-token.v1\n").update(payload).digest("base64url");
  return `mr_ses_${payload}.${mac}`;
}

/** Asserts the four-part refusal shape. */
export function assertRefusal(assert, response, status, code) {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body?.error?.code, code, response.text);
  for (const part of ["message", "reason", "fix"]) {
    assert.ok(response.body.error[part]?.trim(), `refusal ${code} has no ${part}`);
  }
}

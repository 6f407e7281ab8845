// scripts/deploy.sh against a stand-in for wrangler's account commands
// (fake-wrangler.mjs): what a first deploy creates, generates and prints, that a
// second one changes nothing, and what it refuses; and the readings of
// wrangler's answers and of wrangler.toml it rests on (scripts/deploy-kit.mjs).
// Needs the Worker built in build/ (the test command runs it after the build);
// it never builds, and never reaches Cloudflare.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import {
  ROOT,
  configProblems,
  d1Names,
  deployedUrl,
  namesTheCodeReads,
  r2Names,
  readConfig,
  secretNames,
  workerMissing,
  workerSources,
} from "../../scripts/deploy-kit.mjs";

const FAKE = join(ROOT, "tests", "deploy", "fake-wrangler.mjs");
const REQUIRED = ["SESSION_SECRET", "AUDIT_KEY", "SETUP_TOKEN"];

/** What POST /api/setup was sent, from a stand-in for the deployed node. */
const setups = [];
let node;
let origin;
before(async () => {
  node = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      setups.push({ path: request.url, body: JSON.parse(body) });
      response.writeHead(201, { "content-type": "application/json" }).end('{"person":{"id":"usr_1"}}');
    });
  });
  await new Promise((resolve) => node.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${node.address().port}`;
});
after(() => node.close());

/** A fresh account for the stand-in: `account` overrides what it holds. */
function account(overrides = {}) {
  const directory = mkdtempSync(join(tmpdir(), "mailroom-deploy-"));
  const path = join(directory, "account.json");
  const initial = { signedIn: true, databases: [], buckets: [], worker: false, secrets: {}, required: REQUIRED, url: origin, migrationsApplied: 0, deploys: 0, calls: [], ...overrides };
  writeFileSync(path, JSON.stringify(initial));
  return {
    path,
    read: () => JSON.parse(readFileSync(path, "utf8")),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** Runs scripts/deploy.sh on `state`'s account; answers its exit code and output. */
async function deploy(state, args = [], environment = {}) {
  chmodSync(FAKE, 0o755);
  try {
    const { stdout, stderr } = await promisify(execFile)("bash", [join(ROOT, "scripts", "deploy.sh"), ...args], {
      cwd: ROOT,
      env: { ...process.env, MAILROOM_WRANGLER: FAKE, FAKE_WRANGLER_STATE: state.path, MAILROOM_REUSE_BUILD: "1", ...environment },
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    return { code: error.code, output: `${error.stdout}${error.stderr}` };
  }
}

// Each test has an account of its own, so they run at once.
describe("scripts/deploy.sh against a stand-in account", { concurrency: true }, () => {
  test("a first deploy creates the database and bucket, generates every secret, migrates before deploying and sets the node up", async () => {
    const state = account();
    const { code, output } = await deploy(state, ["--setup", "ada@example.org", "Ada Admin"], { MAILROOM_ADMIN_PASSWORD: "correct horse battery staple" });
    const after = state.read();
    state.remove();
    assert.equal(code, 0, output);
    assert.deepEqual(after.databases, ["mailroom"]);
    assert.deepEqual(after.buckets, ["mailroom-raw-mail"]);
    assert.deepEqual(Object.keys(after.secrets).sort(), [...REQUIRED].sort());
    for (const [name, value] of Object.entries(after.secrets)) assert.match(value, /^[0-9a-f]{64}$/, name);
    const order = (prefix) => after.calls.findIndex((call) => call.startsWith(prefix));
    assert.ok(order("d1 migrations apply DB --remote") < order("deploy --secrets-file"), after.calls.join("\n"));
    assert.equal(after.deploys, 1);
    // The setup token is shown once, and no other secret ever.
    assert.equal(output.split(after.secrets.SETUP_TOKEN).length - 1, 1, output);
    assert.ok(!output.includes(after.secrets.SESSION_SECRET) && !output.includes(after.secrets.AUDIT_KEY), output);
    assert.deepEqual(setups.at(-1), {
      path: "/api/setup",
      body: { setup_token: after.secrets.SETUP_TOKEN, email: "ada@example.org", name: "Ada Admin", password: "correct horse battery staple" },
    });
    assert.match(output, /Email Routing/);
    assert.match(output, /Onboard Domain/);
  });

  test("a second deploy reuses everything and generates nothing", async () => {
    const secrets = { SESSION_SECRET: "s".repeat(64), AUDIT_KEY: "a".repeat(64), SETUP_TOKEN: "t".repeat(64) };
    const state = account({ databases: ["mailroom"], buckets: ["other", "mailroom-raw-mail"], worker: true, secrets });
    const { code, output } = await deploy(state);
    const after = state.read();
    state.remove();
    assert.equal(code, 0, output);
    assert.deepEqual(after.databases, ["mailroom"]);
    assert.deepEqual(after.buckets, ["other", "mailroom-raw-mail"]);
    assert.deepEqual(after.secrets, secrets);
    assert.ok(after.calls.includes("deploy"), after.calls.join("\n"));
    assert.ok(!after.calls.some((call) => /create|secrets-file/.test(call)), after.calls.join("\n"));
    assert.doesNotMatch(output, /SETUP_TOKEN \(shown once/);
  });

  test("only a secret that went missing is generated", async () => {
    const secrets = { SESSION_SECRET: "s".repeat(64), AUDIT_KEY: "a".repeat(64) };
    const state = account({ databases: ["mailroom"], buckets: ["mailroom-raw-mail"], worker: true, secrets });
    const { code, output } = await deploy(state);
    const after = state.read();
    state.remove();
    assert.equal(code, 0, output);
    assert.equal(after.secrets.SESSION_SECRET, secrets.SESSION_SECRET);
    assert.equal(after.secrets.AUDIT_KEY, secrets.AUDIT_KEY);
    assert.match(after.secrets.SETUP_TOKEN, /^[0-9a-f]{64}$/);
    assert.match(output, /SETUP_TOKEN \(shown once/);
  });

  test("--setup on a Worker whose token cannot be read back asks for it before anything is deployed", async () => {
    const secrets = { SESSION_SECRET: "s".repeat(64), AUDIT_KEY: "a".repeat(64), SETUP_TOKEN: "t".repeat(64) };
    const state = account({ databases: ["mailroom"], buckets: ["mailroom-raw-mail"], worker: true, secrets });
    const { code, output } = await deploy(state, ["--setup", "ada@example.org", "Ada"], { MAILROOM_ADMIN_PASSWORD: "correct horse battery staple", MAILROOM_SETUP_TOKEN: "" });
    const after = state.read();
    state.remove();
    assert.notEqual(code, 0);
    assert.match(output, /MAILROOM_SETUP_TOKEN/);
    assert.equal(after.deploys, 0);
  });

  test("signed out, it stops before touching the account and says how to sign in", async () => {
    const state = account({ signedIn: false });
    const { code, output } = await deploy(state);
    const after = state.read();
    state.remove();
    assert.notEqual(code, 0);
    assert.match(output, /wrangler\.sh login/);
    assert.deepEqual(after.calls.filter((call) => !call.startsWith("deploy --dry-run")), ["whoami --json"]);
  });

  test("--dry-run never asks the account anything", async () => {
    const state = account({ signedIn: false });
    const { code, output } = await deploy(state, ["--dry-run"]);
    const after = state.read();
    state.remove();
    assert.equal(code, 0, output);
    assert.deepEqual(after.calls.map((call) => call.split(" --outdir")[0]), ["deploy --dry-run"]);
    assert.match(output, /dry run passed/);
  });
});

describe("reading wrangler's answers", () => {
  test("d1 list --json", () => {
    assert.deepEqual(d1Names('[{"uuid":"1","name":"mailroom"},{"uuid":"2","name":"mailroom-old"}]'), ["mailroom", "mailroom-old"]);
    assert.deepEqual(d1Names("[]"), []);
  });
  test("r2 bucket list: exact names, never a prefix", () => {
    const listing = "Listing buckets...\nname:           mailroom-raw-mail-old\ncreation_date:  2026-01-01\n\nname:           mailroom-raw-mail\ncreation_date:  2026-01-02\n";
    assert.deepEqual(r2Names(listing), ["mailroom-raw-mail-old", "mailroom-raw-mail"]);
    assert.deepEqual(r2Names("Listing buckets...\n"), []);
  });
  test("secret list: names only, and a missing Worker told from other errors", () => {
    assert.deepEqual(secretNames('[{"name":"AUDIT_KEY","type":"secret_text"}]'), ["AUDIT_KEY"]);
    assert.ok(workerMissing('✘ [ERROR] Worker "mailroom" not found.\n\nIf this is a new Worker, run `wrangler deploy` first', "mailroom"));
    assert.ok(!workerMissing("✘ [ERROR] A request to the Cloudflare API failed. Authentication error [code: 10000]", "mailroom"));
    assert.ok(!workerMissing('✘ [ERROR] Worker "other" not found.', "mailroom"));
  });
  test("the deployed address from wrangler's output file", () => {
    const file = '{"type":"wrangler-session","version":1}\n{"type":"deploy","version":1,"targets":["https://mailroom.example.workers.dev/","mail.example.org/*"]}\n';
    assert.equal(deployedUrl(file), "https://mailroom.example.workers.dev");
    assert.equal(deployedUrl('{"type":"deploy","targets":[]}\n'), null);
  });
});

describe("wrangler.toml held to the code", () => {
  const code = { secrets: new Set([...REQUIRED, "AUDIT_PREVIOUS_KEYS"]), vars: new Set(["PUBLIC_ORIGIN"]), bindings: new Set(["DB", "RAW_MAIL"]) };
  const config = () => ({
    name: "mailroom",
    compatibility_date: "2026-11-17",
    build: { command: "scripts/build.sh" },
    secrets: { required: [...REQUIRED] },
    vars: { PUBLIC_ORIGIN: "" },
    d1_databases: [{ binding: "DB", database_name: "mailroom" }],
    r2_buckets: [{ binding: "RAW_MAIL", bucket_name: "mailroom-raw-mail" }],
  });
  const check = (change, expected) => {
    const changed = config();
    change(changed);
    const problems = configProblems(changed, code, "2026-11-17");
    assert.ok(problems.some((problem) => problem.includes(expected)), `${expected} not in ${JSON.stringify(problems)}`);
  };

  test("the repository's own wrangler.toml is whole", () => {
    const read = namesTheCodeReads(workerSources());
    assert.ok(read.secrets.has("SESSION_SECRET") && read.bindings.has("MAILBOXES"), JSON.stringify([...read.bindings]));
    assert.deepEqual(configProblems(readConfig(), read, "2026-11-17"), []);
    assert.deepEqual(configProblems(config(), code, "2026-11-17"), []);
  });
  test("each way it can be wrong is named", () => {
    check((c) => c.secrets.required.pop(), "the code reads the secret SETUP_TOKEN");
    check((c) => c.secrets.required.push("UNUSED"), "never reads: remove it");
    check((c) => delete c.vars.PUBLIC_ORIGIN, "the variable PUBLIC_ORIGIN");
    check((c) => (c.r2_buckets = []), "the binding RAW_MAIL");
    check((c) => (c.d1_databases[0].database_id = "00000000-0000-0000-0000-000000000000"), "placeholder id");
    check((c) => c.d1_databases.push({ binding: "DB", database_name: "again" }), "exactly one D1 binding named DB; it declares 2");
    check((c) => (c.compatibility_date = "2026-02-01"), "text_decoder_cjk_decoder");
    check((c) => (c.compatibility_date = "2026-12-04"), "later than the installed workerd supports");
    check((c) => delete c.build, "no [build] command");
  });
});

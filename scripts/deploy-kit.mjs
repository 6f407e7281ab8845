// What scripts/deploy.sh cannot do in shell: read wrangler.toml with wrangler's
// own reader and hold it to what the code reads, read what wrangler answers
// (JSON and its listings), and ask the deployed node to set itself up. Each
// reading is a plain function of text, exported for tests/deploy/; the command
// line below is how the script calls them.
//
//   node scripts/deploy-kit.mjs check               problems on stderr (exit 1), facts on stdout
//   node scripts/deploy-kit.mjs d1-names   < JSON   `wrangler d1 list --json`: one name a line
//   node scripts/deploy-kit.mjs r2-names   < text   `wrangler r2 bucket list`: one name a line
//   node scripts/deploy-kit.mjs secret-names < JSON `wrangler secret list --format json`: one name a line
//   node scripts/deploy-kit.mjs worker-missing NAME < text   exit 0 when wrangler's error says no such Worker
//   node scripts/deploy-kit.mjs deployed-url FILE   the address WRANGLER_OUTPUT_FILE_PATH recorded
//   node scripts/deploy-kit.mjs setup URL           POST URL/api/setup from MAILROOM_SETUP_* variables
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/**
 * Secrets the code reads that a node runs without, with when they are set. Every
 * other secret the code reads must be in wrangler.toml's `[secrets] required`.
 */
export const OPTIONAL_SECRETS = {
  AUDIT_PREVIOUS_KEYS: "only after rotating AUDIT_KEY, to keep verifying what the old key wrote",
};

/**
 * Behaviour of the runtime the node relies on that a compatibility date turns
 * on, with the first date that does (wrangler.toml says why each matters).
 */
export const RELIED_ON_DEFAULTS = {
  text_decoder_cjk_decoder: "2026-03-03",
};

/** The placeholder id wrangler.toml once carried; a binding must never name it. */
const PLACEHOLDER_DATABASE_ID = "00000000-0000-0000-0000-000000000000";

/** wrangler.toml as wrangler itself reads it (its own parser, so a file it cannot read fails here). */
export function readConfig(root = ROOT) {
  const { experimental_readRawConfig } = require("wrangler");
  return experimental_readRawConfig({ config: join(root, "wrangler.toml") }).rawConfig;
}

/** The newest compatibility date the installed workerd (what `wrangler dev` runs) supports. */
export function runtimeDate() {
  return require("workerd").compatibilityDate;
}

function rustFiles(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return rustFiles(path);
    return name.endsWith(".rs") ? [path] : [];
  });
}

/**
 * The names the Worker's code reads from its environment: secrets
 * (`secret("…")`), variables (`.var("…")`) and bindings (`.d1("…")`,
 * `.bucket("…")`, `.send_email("…")`, and `.durable_object(NAME)` with the
 * constant it names).
 */
export function namesTheCodeReads(sources) {
  const all = (pattern) => new Set(sources.flatMap((text) => [...text.matchAll(pattern)].map((match) => match[1])));
  const constants = new Map(
    sources.flatMap((text) => [...text.matchAll(/const ([A-Z_]+): &str = "([A-Z_]+)";/g)].map((match) => [match[1], match[2]])),
  );
  const namespaces = [...all(/\.durable_object\(\s*(?:[a-z_]+::)*([A-Z_]+)\s*\)/g)].map((constant) => constants.get(constant) ?? constant);
  return {
    secrets: all(/\bsecret\(\s*"([A-Z_]+)"\s*\)/g),
    vars: all(/\.var\(\s*"([A-Z_]+)"\s*\)/g),
    bindings: new Set([...all(/\.(?:d1|bucket|send_email)\(\s*"([A-Z_]+)"\s*\)/g), ...namespaces]),
  };
}

/** Every binding name wrangler.toml declares. */
function declaredBindings(config) {
  return new Set([
    ...(config.d1_databases ?? []).map((database) => database.binding),
    ...(config.r2_buckets ?? []).map((bucket) => bucket.binding),
    ...(config.send_email ?? []).map((sender) => sender.name),
    ...(config.durable_objects?.bindings ?? []).map((namespace) => namespace.name),
  ]);
}

/**
 * What is wrong with `config` for the code that reads `code`, each problem a
 * sentence saying what to change. Empty: the configuration is whole.
 */
export function configProblems(config, code, newestDate) {
  const problems = [];
  const required = new Set(config.secrets?.required ?? []);
  const vars = new Set(Object.keys(config.vars ?? {}));
  const bindings = declaredBindings(config);
  if (code.secrets.size === 0 || code.bindings.size === 0) {
    problems.push("found no secret or binding read in src/: the way the code reads its environment changed; update scripts/deploy-kit.mjs");
  }
  for (const name of code.secrets) {
    if (!required.has(name) && !(name in OPTIONAL_SECRETS)) {
      problems.push(`the code reads the secret ${name}: add it to [secrets] required in wrangler.toml, or to OPTIONAL_SECRETS in scripts/deploy-kit.mjs if a node runs without it`);
    }
  }
  for (const name of required) {
    if (!code.secrets.has(name)) problems.push(`[secrets] required names ${name}, which the code never reads: remove it`);
    if (name in OPTIONAL_SECRETS) problems.push(`${name} is both required and optional: it is one or the other`);
  }
  for (const name of code.vars) {
    if (!vars.has(name)) problems.push(`the code reads the variable ${name}: declare it in wrangler.toml's [vars] with its default`);
  }
  for (const name of code.bindings) {
    if (!bindings.has(name)) problems.push(`the code uses the binding ${name}, which wrangler.toml does not declare`);
  }
  const databases = (config.d1_databases ?? []).filter((database) => database.binding === "DB");
  if (databases.length !== 1) {
    problems.push(`wrangler.toml must declare exactly one D1 binding named DB; it declares ${databases.length}`);
  } else if (!databases[0].database_name) {
    problems.push("the D1 binding DB needs a database_name: it is how wrangler finds the database on the account");
  } else if (databases[0].database_id === PLACEHOLDER_DATABASE_ID) {
    problems.push("the D1 binding DB names the placeholder id 000…: remove database_id, and wrangler finds the database by its name");
  }
  if (!(config.r2_buckets ?? []).some((bucket) => bucket.binding === "RAW_MAIL" && bucket.bucket_name)) {
    problems.push("the R2 binding RAW_MAIL needs a bucket_name");
  }
  const date = config.compatibility_date ?? "";
  for (const [flag, since] of Object.entries(RELIED_ON_DEFAULTS)) {
    if (date < since) problems.push(`compatibility_date ${date || "(none)"} is before ${since}, when ${flag} became the default, which the node relies on`);
  }
  if (newestDate && date > newestDate) {
    problems.push(`compatibility_date ${date} is later than the installed workerd supports (${newestDate}): wrangler dev would run an older runtime than the one deployed`);
  }
  if (!config.build?.command) problems.push("wrangler.toml has no [build] command: wrangler would deploy whatever is in build/");
  return problems;
}

/** Names from `wrangler d1 list --json` (an array of databases). */
export function d1Names(text) {
  return JSON.parse(text).map((database) => database.name);
}

/** Names from `wrangler r2 bucket list`, which prints `name: <bucket>` per bucket among other lines. */
export function r2Names(text) {
  return [...text.matchAll(/^name:\s+(\S+)\s*$/gm)].map((match) => match[1]);
}

/** Names from `wrangler secret list --format json` (an array of secrets, never their values). */
export function secretNames(text) {
  return JSON.parse(text).map((secret) => secret.name);
}

/** Whether wrangler's error says the Worker does not exist yet (before its first deploy). */
export function workerMissing(text, workerName) {
  return text.includes(`Worker "${workerName}"`) && /\bnot found\b/.test(text);
}

/**
 * The address a deploy answers at, from the file WRANGLER_OUTPUT_FILE_PATH named
 * (one JSON object a line). The deploy's `targets` are its workers.dev address
 * (`https://…`) and its routes (patterns such as `mail.example.org/*`, no
 * scheme), so the first with a scheme is the one to call.
 */
export function deployedUrl(text) {
  const entries = text.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
  const deploy = entries.findLast((entry) => entry.type === "deploy");
  const target = deploy?.targets?.find((address) => /^https?:\/\//.test(address));
  return target ? target.replace(/\/+$/, "") : null;
}

/**
 * Creates the first administrator through POST /api/setup. A fresh
 * workers.dev address can take a little while to answer, so a failure to
 * connect is tried again for about a minute; any answer is final.
 */
export async function setUp(origin, { token, email, name, password }, { attempts = 12, pause = 5000 } = {}) {
  const body = JSON.stringify({ setup_token: token, email, name, password });
  for (let attempt = 1; ; attempt += 1) {
    let response;
    try {
      response = await fetch(`${origin}/api/setup`, { method: "POST", headers: { "content-type": "application/json" }, body });
    } catch (error) {
      if (attempt >= attempts) throw new Error(`${origin} did not answer: ${error.cause?.message ?? error.message}`);
      await new Promise((resolve) => setTimeout(resolve, pause));
      continue;
    }
    const answer = await response.json().catch(() => ({}));
    if (response.ok) return answer;
    const refusal = answer.error ?? {};
    throw new Error(`POST /api/setup answered ${response.status}: ${[refusal.message, refusal.reason, refusal.fix].filter(Boolean).join(" ") || "no explanation"}`);
  }
}

/** The text of every Rust file under src/, which is what the Worker is built from. */
export function workerSources(root = ROOT) {
  return rustFiles(join(root, "src")).map((path) => readFileSync(path, "utf8"));
}

async function standardInput() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

async function main([command, argument]) {
  switch (command) {
    case "check": {
      const config = readConfig();
      const problems = configProblems(config, namesTheCodeReads(workerSources()), runtimeDate());
      for (const problem of problems) console.error(`wrangler.toml: ${problem}`);
      if (problems.length > 0) return 1;
      // Facts for the script, one `key=value` a line.
      console.log(`worker=${config.name}`);
      console.log(`database=${config.d1_databases.find((database) => database.binding === "DB").database_name}`);
      console.log(`bucket=${config.r2_buckets.find((bucket) => bucket.binding === "RAW_MAIL").bucket_name}`);
      console.log(`secrets=${config.secrets.required.join(" ")}`);
      console.log(`public_origin=${String(config.vars?.PUBLIC_ORIGIN ?? "").replace(/\/+$/, "")}`);
      console.log(`inbound_fallback=${config.vars?.INBOUND_FALLBACK_ADDRESS ?? ""}`);
      return 0;
    }
    case "d1-names":
      for (const name of d1Names(await standardInput())) console.log(name);
      return 0;
    case "r2-names":
      for (const name of r2Names(await standardInput())) console.log(name);
      return 0;
    case "secret-names":
      for (const name of secretNames(await standardInput())) console.log(name);
      return 0;
    case "worker-missing":
      return workerMissing(await standardInput(), argument) ? 0 : 1;
    case "deployed-url": {
      const url = deployedUrl(readFileSync(argument, "utf8"));
      if (!url) return 1;
      console.log(url);
      return 0;
    }
    case "setup": {
      const environment = process.env;
      await setUp(argument, {
        token: environment.MAILROOM_SETUP_TOKEN,
        email: environment.MAILROOM_SETUP_EMAIL,
        name: environment.MAILROOM_SETUP_NAME,
        password: environment.MAILROOM_SETUP_PASSWORD,
      });
      return 0;
    }
    default:
      console.error(`deploy-kit: unknown command ${command ?? "(none)"}`);
      return 2;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (error) => {
      console.error(error.message);
      process.exitCode = 1;
    },
  );
}

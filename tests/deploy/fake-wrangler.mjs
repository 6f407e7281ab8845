#!/usr/bin/env node
// A stand-in for wrangler's account commands, so scripts/deploy.sh can be run
// whole without a Cloudflare account (MAILROOM_WRANGLER names it). It keeps an
// account in the JSON file FAKE_WRANGLER_STATE (signed in or not, databases,
// buckets, whether the Worker exists and its secrets), answers each command in
// the form the wrangler this project pins (4.164) prints, and records every
// call, so a test can say what the script did and in what order.
import { readFileSync, writeFileSync } from "node:fs";

const statePath = process.env.FAKE_WRANGLER_STATE;
const state = JSON.parse(readFileSync(statePath, "utf8"));
const args = process.argv.slice(2);
state.calls.push(args.join(" "));

const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
const fail = (message) => {
  process.stderr.write(`\n✘ [ERROR] ${message}\n\n`);
  return 1;
};

function answer() {
  const command = args.filter((arg) => !arg.startsWith("-")).slice(0, 3);
  const [first, second, third] = command;
  if (first === "deploy" && args.includes("--dry-run")) {
    console.log("Total Upload: 3607.21 KiB / gzip: 1121.18 KiB\n--dry-run: exiting now.");
    return 0;
  }
  if (first === "whoami") {
    if (!state.signedIn) return fail("You are not authenticated. Please run `wrangler login`.");
    console.log(JSON.stringify({ loggedIn: true, authType: "OAuth Token", accounts: [{ id: "0123", name: "Example" }] }));
    return 0;
  }
  if (!state.signedIn) return fail("Not logged in.");
  if (first === "d1" && second === "list") {
    console.log(JSON.stringify(state.databases.map((name, index) => ({ uuid: `uuid-${index}`, name, version: "production" }))));
    return 0;
  }
  if (first === "d1" && second === "create") {
    if (state.databases.includes(third)) return fail(`A database with that name already exists [code: 7502]`);
    state.databases.push(third);
    console.log(`✅ Successfully created DB '${third}'`);
    return 0;
  }
  if (first === "r2" && second === "bucket" && third === "list") {
    console.log("Listing buckets...");
    console.log(state.buckets.map((name) => `name:           ${name}\ncreation_date:  2026-12-01T10:00:00.000Z`).join("\n\n"));
    return 0;
  }
  if (first === "r2" && second === "bucket" && third === "create") {
    const name = args.filter((arg) => !arg.startsWith("-"))[3];
    state.buckets.push(name);
    console.log(`✅ Created bucket '${name}' with default storage class of Standard.`);
    return 0;
  }
  if (first === "secret" && second === "list") {
    if (!state.worker) {
      return fail('Worker "mailroom" not found.\n\nIf this is a new Worker, run `wrangler deploy` first to create it.');
    }
    console.log(JSON.stringify(Object.keys(state.secrets).map((name) => ({ name, type: "secret_text" })), null, "  "));
    return 0;
  }
  if (first === "d1" && second === "migrations") {
    if (!state.databases.includes("mailroom")) return fail("Couldn't find a D1 DB named 'mailroom' (bound as 'DB') in the API.");
    state.migrationsApplied += 1;
    console.log("✅ No migrations to apply!");
    return 0;
  }
  if (first === "deploy") {
    const file = option("--secrets-file");
    const supplied = file ? JSON.parse(readFileSync(file, "utf8")) : {};
    const missing = state.required.filter((name) => !(name in state.secrets) && !(name in supplied));
    if (missing.length > 0) return fail(`The following required secrets have not been set: ${missing.join(", ")}`);
    Object.assign(state.secrets, supplied);
    state.worker = true;
    state.deploys += 1;
    const output = process.env.WRANGLER_OUTPUT_FILE_PATH;
    if (output) writeFileSync(output, `${JSON.stringify({ type: "wrangler-session", version: 1 })}\n${JSON.stringify({ type: "deploy", version: 1, worker_name: "mailroom", targets: [state.url] })}\n`);
    console.log(`Uploaded mailroom\nDeployed mailroom triggers\n  ${state.url}`);
    return 0;
  }
  return fail(`the stand-in does not know \`wrangler ${args.join(" ")}\``);
}

const status = answer();
writeFileSync(statePath, JSON.stringify(state));
process.exitCode = status;

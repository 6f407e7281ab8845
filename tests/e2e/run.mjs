// Runs every end-to-end test file against the built Worker (build/), each file
// on its own workerd + local D1. Called by scripts/test.sh after the build.
import { execFileSync } from "node:child_process";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { readdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM } from "./chromium.mjs";
import { migrate } from "./harness.mjs";

const directory = dirname(fileURLToPath(import.meta.url));
const LONGEST = "load.";
const only = process.argv.slice(2);
const files = readdirSync(directory)
  .filter((name) => name.endsWith(".test.mjs"))
  .filter((name) => only.length === 0 || only.some((pattern) => name.includes(pattern)))
  // The longest file starts first: its burst of mail keeps one workerd busy for
  // minutes, and started last it would run alone at the end on one core.
  .sort((one, other) => Number(other.startsWith(LONGEST)) - Number(one.startsWith(LONGEST)))
  .map((name) => join(directory, name));

// The browser files' outcome can depend on the Chromium the machine installed
// (Debian's current one), so every run says which it was before any test starts.
console.log(`browser tests run on ${chromiumVersion()}`);

// The migrations are applied once, here, and every node starts from a copy: the
// same state each file got when it applied them itself, for a fraction of the CPU.
const migrated = mkdtempSync(join(tmpdir(), "mailroom-e2e-migrated-"));
await migrate(migrated);
process.env.MAILROOM_E2E_MIGRATED_STATE = migrated;

let failed = false;
// Three files at once on two cores: a file spends much of its time waiting (on
// workerd, wrangler and timers), so a third keeps both cores busy.
const stream = run({ files, concurrency: 3, timeout: 10 * 60 * 1000 });
stream.on("test:fail", () => (failed = true));
stream.compose(spec).pipe(process.stdout);
stream.on("end", () => {
  process.exitCode = failed ? 1 : 0;
  rmSync(migrated, { recursive: true, force: true });
});

function chromiumVersion() {
  try {
    return execFileSync(CHROMIUM, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch (error) {
    return `no Chromium at ${CHROMIUM} (${error.message})`;
  }
}

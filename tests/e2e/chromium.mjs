// Headless Chromium for the browser tests, and the watch every page in them is
// kept under: console errors, uncaught exceptions and Content-Security-Policy
// violations all fail the file, except the refusals a test provokes on purpose
// and declares first.
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

/** Debian's chromium, never a downloaded browser; no network beyond the node under test. */
export const CHROMIUM = "/usr/bin/chromium";
const ARGUMENTS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-quic",
];

/**
 * Starts headless Chromium, with `features` (Chromium's own) turned off besides.
 */
export async function launchChromium({ disableFeatures = [] } = {}) {
  const args = disableFeatures.length ? [...ARGUMENTS, `--disable-features=${disableFeatures.join(",")}`] : ARGUMENTS;
  // Starting is tried up to three times: Debian's Chromium has been seen to
  // crash as it starts (SIGSEGV, before any page) on a loaded machine, which
  // says nothing of the node. Nothing after the start is ever retried.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
    } catch (error) {
      if (attempt === 3) throw error;
      console.error(`Chromium did not start (attempt ${attempt} of 3): ${String(error.message).split("\n")[0]}`);
    }
  }
}

/** Everything the pages of one test file reported, and what the file expected them to. */
export class PageWatch {
  constructor() {
    /** `{ who, text, url }` for every console error. */
    this.consoleErrors = [];
    /** Uncaught exceptions, as `who: stack`. */
    this.pageErrors = [];
    /** Content-Security-Policy violations, as `who: directive blocked what (where)`. */
    this.cspViolations = [];
    /** Refusals a test provokes on purpose: `{ status, path }`, each to be seen once. */
    this.expectedRefusals = [];
  }

  /** Declares that the page is about to be refused `status` at `path`, on purpose. */
  expectRefusal(status, path) {
    this.expectedRefusals.push({ status, path });
  }

  /**
   * A page in a browser context of its own (its own cookies), watched from before
   * its own script runs: init scripts and bindings are not subject to its CSP.
   */
  async open(browser, { who = "page", ...contextOptions } = {}) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
    await context.exposeFunction("reportCspViolation", (violation) => this.cspViolations.push(`${who}: ${violation}`));
    await context.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) => {
        window.reportCspViolation(`${event.effectiveDirective} blocked ${event.blockedURI || "inline"} (${event.sourceFile}:${event.lineNumber})`);
      });
    });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on("console", (message) => {
      if (message.type() === "error") this.consoleErrors.push({ who, text: message.text(), url: message.location().url });
    });
    page.on("pageerror", (error) => this.pageErrors.push(`${who}: ${error?.stack ?? error}`));
    return { context, page };
  }

  /**
   * Fails unless every console error was a declared refusal from the node at
   * `nodeUrl`, every declared refusal was seen, and nothing threw or broke the policy.
   */
  assertNothingWentWrong(nodeUrl) {
    const unexpected = this.consoleErrors.filter(({ text, url }) => {
      const status = /^Failed to load resource: the server responded with a status of (\d+)/.exec(text)?.[1];
      if (!status || !url.startsWith(nodeUrl)) return true;
      const index = this.expectedRefusals.findIndex((refusal) => refusal.status === Number(status) && refusal.path === new URL(url).pathname);
      if (index < 0) return true;
      this.expectedRefusals.splice(index, 1);
      return false;
    });
    assert.deepEqual(unexpected, []);
    assert.deepEqual(this.expectedRefusals, [], "every refusal provoked on purpose was seen");
    assert.deepEqual(this.pageErrors, []);
    assert.deepEqual(this.cspViolations, []);
  }
}

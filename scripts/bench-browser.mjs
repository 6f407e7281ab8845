// The benchmark's browser phase (scripts/bench.mjs; issue 31): how soon the
// interface is usable, in headless Chromium (Debian's, as the browser tests
// use) against the built Worker on local workerd. Each round is a fresh
// browser context, so the first visit asks for every module; the same context
// then navigates again, with the modules kept by their version. Measured:
//   sign-in, first visit   navigation to the sign-in form's Email field shown
//   sign-in, again         the same, with the modules in the browser's cache
//   conversation, frame    a click on a conversation in the list to its heading,
//                          timed in the page from the click's event
//   conversation, text     the same click to its first message's text
// Asserts nothing: a timing is the machine's as much as the page's.
import { launchChromium } from "../tests/e2e/chromium.mjs";
import { setUp, startNode, ADMIN } from "../tests/e2e/harness.mjs";
import { mailboxFor, percentile, table } from "./bench-kit.mjs";

/** `rounds` of each measurement, in a fresh context each round; `message` is the raw mail delivered first. */
export async function browser(rounds, message) {
  const node = await startNode();
  const browser = await launchChromium();
  try {
    const { call, admin, token } = await setUp(node);
    const mailbox = await mailboxFor(call, token, admin, "support@mailroom.test", "Support");
    const rejected = await node.deliver("ana@customer.example", "support@mailroom.test", message);
    if (rejected) throw new Error(`delivery refused: ${rejected}`);
    const subject = (await call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token })).body.threads[0].subject;

    const timings = { "sign-in, first visit": [], "sign-in, again": [], "conversation, frame": [], "conversation, text": [] };
    for (let round = 0; round < rounds; round += 1) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const signInShown = async () => {
        await page.goto(node.url);
        await page.getByLabel("Email").waitFor();
        return page.evaluate(() => Math.round(performance.now()));
      };
      timings["sign-in, first visit"].push(await signInShown());
      timings["sign-in, again"].push(await signInShown());

      await page.getByLabel("Email").fill(ADMIN.email);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByLabel("Password").press("Enter");
      await page.goto(`${node.url}/#/mail/${mailbox.id}`);
      const row = page.getByRole("listitem").filter({ hasText: subject }).getByRole("link", { name: subject });
      await row.waitFor();
      // Timed in the page, from the click's event to the moment each part is
      // in the document (a MutationObserver's), so the driver's own latency is
      // not counted.
      const shown = page.evaluate((title) => new Promise((resolve) => {
        const moments = {};
        document.addEventListener("click", () => { moments.clicked = performance.now(); }, { capture: true, once: true });
        const observer = new MutationObserver(() => {
          if (moments.frame === undefined && [...document.querySelectorAll("h2")].some((heading) => heading.textContent === title)) moments.frame = performance.now();
          if (moments.frame !== undefined && document.querySelector(".entry-text")) {
            moments.text = performance.now();
            observer.disconnect();
            resolve({ frame: moments.frame - moments.clicked, text: moments.text - moments.clicked });
          }
        });
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
      }), subject);
      await row.click();
      const { frame, text } = await shown;
      timings["conversation, frame"].push(Math.round(frame));
      timings["conversation, text"].push(Math.round(text));
      await context.close();
    }

    console.log(`## The interface in headless Chromium, ${rounds} rounds, each in a fresh context: ms (local workerd)\n`);
    table(["measured", "p50", "p95", "max"], Object.entries(timings).map(([name, values]) => [
      name, percentile(values, 0.5), percentile(values, 0.95), Math.max(...values),
    ]));
  } finally {
    await browser.close();
    await node.stop();
  }
}

// What the browser test files share: signing in through the page, opening a
// section, leaving a view that holds unsaved input, whether the page fits its
// window, measured as drawn, and whether it has accessibility violations, by
// axe-core. One implementation, so that a check added here (a phone widening
// its layout, a control past the edge, a field without a label) holds in every
// file. (What they set up through the API is fixtures.mjs's.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** axe-core's browser build, put into pages to check them. */
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Every accessibility violation axe-core finds in the page as it is shown, as
 * `rule (impact) at target: what the rule asks`. axe is put into the page through
 * the DevTools protocol (page.evaluate), which the page's Content-Security-
 * Policy does not govern: a script tag would be refused, as it should be.
 * Frames are left out: the only ones are the sandboxed frames a message's
 * HTML is shown in, which run no script (so axe cannot run there) and hold
 * what a sender wrote, not the interface.
 */
export async function accessibilityViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(`${AXE}\n;true`);
  return page.evaluate(async () => {
    const { violations } = await window.axe.run(document, { iframes: false, resultTypes: ["violations"] });
    return violations.flatMap((violation) => violation.nodes.map((node) =>
      `${violation.id} (${violation.impact}) at ${node.target.join(" ")}: ${violation.help}`));
  });
}

/** Fails where axe-core finds an accessibility violation in the page as shown. */
export async function assertAccessible(page, where) {
  assert.deepEqual(await accessibilityViolations(page), [], `${where}: accessibility violations (axe-core)`);
}

/** Signs in through the sign-in form at `url` and waits for the shell. */
export async function signIn(page, url, { email, password }) {
  await page.goto(url);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).waitFor();
}

/**
 * The link to section `name` in the banner's navigation, found even while the
 * menu that holds it is closed (for its count or whether it is the current page).
 */
export const sectionLink = (page, name) =>
  page.getByRole("navigation", { name: "Sections", includeHidden: true }).getByRole("link", { name, exact: true, includeHidden: true });

/**
 * Shows the navigation: on a phone, where it waits behind the banner's Menu
 * button, opens it. Answers whether it did (so that the caller may close it:
 * open, it lies over the page).
 */
export async function showNavigation(page) {
  const menu = page.getByRole("banner").getByRole("button", { name: /^Menu\b/ });
  if (!(await menu.isVisible()) || (await menu.getAttribute("aria-expanded")) === "true") return false;
  await menu.click();
  return true;
}

/**
 * Opens section `name` as a person would: the menus that hold its link (a
 * phone's Menu, the Administration menu) opened first.
 */
export async function openSection(page, name) {
  const link = sectionLink(page, name);
  await link.waitFor({ state: "attached" });
  await showNavigation(page);
  const admin = page.getByRole("banner").getByRole("button", { name: "Administration" });
  if (!(await link.isVisible()) && (await admin.isVisible()) && (await admin.getAttribute("aria-expanded")) !== "true") await admin.click();
  await link.click();
}

/**
 * Measures the page as it is shown: how wide the document and the window are,
 * every control, link, cell, list item or paragraph drawn outside the window,
 * every element inside `inside` (a selector) whose text is wider than its own
 * box (even where an ancestor clips it, so the page does not widen), and, with
 * `text`, the text a person can see in `main` (not what is there only for
 * screen readers, in a closed <details>, a title or hidden); and axe-core's
 * accessibility violations (accessibilityViolations()).
 */
export async function measure(page, { inside = null, text = false } = {}) {
  const measured = await page.evaluate(({ inside, text }) => {
    const width = window.innerWidth;
    /** Whether an element is drawn: not hidden, and not clipped to nothing (visually hidden). */
    function shown(element) {
      if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
      for (let at = element; at && at !== document.body; at = at.parentElement) {
        const box = at.getBoundingClientRect();
        const style = getComputedStyle(at);
        if ((box.width <= 1 || box.height <= 1) && style.overflow !== "visible") return false;
        if (style.clip !== "auto" && style.position === "absolute") return false;
      }
      return true;
    }
    const describe = (element) => `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replaceAll(" ", ".")}` : ""} “${(element.innerText || element.value || element.getAttribute("aria-label") || "").trim().slice(0, 50)}”`;
    const outside = [];
    for (const element of document.querySelectorAll("button, a, input, select, textarea, summary, td, th, pre, li, p")) {
      if (!shown(element)) continue;
      const box = element.getBoundingClientRect();
      if (box.left < -0.5 || box.right > width + 0.5) outside.push(`${describe(element)} from ${Math.round(box.left)} to ${Math.round(box.right)}px`);
    }
    for (const element of inside ? document.querySelectorAll(inside) : []) {
      if (!shown(element) || !element.clientWidth) continue;
      if (element.scrollWidth > element.clientWidth + 1) outside.push(`${describe(element)} is ${element.scrollWidth}px wide in ${element.clientWidth}px`);
    }
    const texts = [];
    const main = document.querySelector("main");
    if (text && main) {
      const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!node.nodeValue.trim() || !node.parentElement || node.parentElement.closest("option, script, style")) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        if (!range.getClientRects().length || !shown(node.parentElement)) continue;
        texts.push(node.nodeValue);
      }
    }
    // A value a script let through as text: `null` appended to an element, an object printed.
    const stray = [];
    const everything = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = everything.nextNode(); node; node = everything.nextNode()) {
      const value = node.nodeValue.trim();
      if (!["null", "undefined", "NaN", "[object Object]"].includes(value) && !value.includes("[object ")) continue;
      if (node.parentElement && !node.parentElement.closest("script, style, pre, code") && shown(node.parentElement)) stray.push(`${describe(node.parentElement)}: “${value.slice(0, 50)}”`);
    }
    // A refusal shown in the API's words, not the person's (refusals.js): a
    // field's API name or a code in backquotes, a relation's or capability's
    // code, an id, the request schema or the HTTP status, outside its
    // "Technical details". Addresses and links are left out first, as their
    // parts look like codes.
    const apiWords = [];
    const API_WORDS = /`|schema|\bHTTP \d|\b[a-z]+_[a-z0-9_]*[a-z0-9]\b|\b(?:org|mailbox|message|send|approval|ediscovery|identity|mail|reminders|notifications|agent)\.[a-z_]+\b|\b(?:usr|agt|mbx|tm|src|thr|rcp|snd|evt|btl|exp|whk)_[0-9A-Za-z]{4,}/;
    for (const refusal of document.querySelectorAll(".refusal")) {
      if (!shown(refusal)) continue;
      const words = refusal.cloneNode(true);
      for (const details of words.querySelectorAll("details")) details.remove();
      const said = words.textContent.replace(/\S+@\S+|https?:\/\/\S+/g, "");
      const found = API_WORDS.exec(said);
      if (found) apiWords.push(`“${found[0]}” in “${said.trim().slice(0, 200)}”`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, width, outside, stray, apiWords, text: texts.join(" ") };
  }, { inside, text });
  return { ...measured, viewport: page.viewportSize().width, violations: await accessibilityViolations(page) };
}

/**
 * Fails where the page is wider than the window, shows something outside it,
 * or has an accessibility violation.
 */
export function assertFitted(measured, where) {
  // A phone widens its layout to fit what is too wide rather than scroll, so the window is measured too.
  assert.equal(measured.width, measured.viewport, `${where}: the phone widened the page to ${measured.width}px`);
  assert.ok(measured.scrollWidth <= measured.width, `${where}: the page is ${measured.scrollWidth}px wide in a ${measured.width}px window`);
  assert.deepEqual(measured.outside, [], `${where}: shown outside the ${measured.width}px window`);
  assert.deepEqual(measured.stray, [], `${where}: a script's value shown as text`);
  assert.deepEqual(measured.apiWords, [], `${where}: a refusal shown in the API's words, not the person's`);
  assert.deepEqual(measured.violations, [], `${where}: accessibility violations (axe-core)`);
}

/**
 * Once nothing says Loading…, measures the page (measure()'s options) and
 * fails where it does not fit its window; answers what was measured.
 */
export async function assertFits(page, where, options) {
  await page.getByText("Loading…").first().waitFor({ state: "detached" }).catch(() => {});
  const measured = await measure(page, options);
  assertFitted(measured, where);
  return measured;
}

/**
 * Runs `leave` (what takes `page` to another view) while the page holds input
 * the person typed and did not save: the page asks first (leaving.js), and the
 * person leaves anyway. Fails if it did not ask.
 */
export async function leaveUnsaved(page, leave) {
  const asked = new Promise((resolve) => page.once("dialog", (dialog) => {
    resolve(dialog.message());
    dialog.accept();
  }));
  await leave();
  assert.match(await asked, /not saved/);
}

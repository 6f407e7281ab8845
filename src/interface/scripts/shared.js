// Shared pieces every section builds with: panels, notices, a refusal shown in
// the person's words (refusals.js), and actions run through perform() (a form's, a button's, a table row's),
// which shows their refusal or success where they were taken; a secret shown
// once to copy; links that download what the node serves; and the box that
// shows a section's ids and codes.

import { h, hidden, labelCells, labelled, uniqueId } from "./dom.js";
import { api, SessionOver } from "./api.js";
import { markSaved } from "./leaving.js";
import { refusalBox } from "./refusals.js";

export { refusalBox };

export const success = (...content) => h("div", { class: "notice success", role: "status" }, content);
export const statusArea = () => h("div", { class: "status-area", "aria-live": "polite" });

/**
 * Runs one action: disables its controls, shows its refusal in `status` (or
 * its success message), and reports whether it succeeded. `failureTitle` says
 * what was not done, or is a function of the refusal that words it. A
 * refusal about a field names it by the label of the form the action was
 * taken from and marks its control (refusals.js); the next attempt clears the
 * mark. A success clears every earlier action's refusal on the page: what
 * stands is what the page shows, never an old error; and what the action's
 * form holds counts as saved (leaving.js).
 */
export async function perform(status, controls, work, failureTitle) {
  const form = status.closest("form") ?? controls.find((control) => control?.form)?.form ?? null;
  const scope = form ?? status.parentElement;
  status.replaceChildren();
  for (const marked of scope?.querySelectorAll("[aria-invalid]") ?? []) marked.removeAttribute("aria-invalid");
  for (const control of controls) control.disabled = true;
  try {
    const message = await work();
    clearStaleRefusals();
    markSaved(form);
    if (message) status.replaceChildren(success(message));
    return true;
  } catch (error) {
    if (error instanceof SessionOver) return false;
    const title = typeof failureTitle === "function" ? failureTitle(error) : failureTitle;
    // Controls are enabled again first, so the field named can take the focus.
    for (const control of controls) if (control.isConnected) control.disabled = false;
    status.replaceChildren(refusalBox(error, title, { scope, mark: true }));
    return false;
  } finally {
    for (const control of controls) if (control.isConnected) control.disabled = false;
  }
}

/** Removes the refusals earlier actions left in their status areas, and the rows that held a row's. */
function clearStaleRefusals() {
  for (const refusal of document.querySelectorAll(".status-area > .refusal, tr.row-status .refusal")) {
    const rowOfItsOwn = refusal.closest("tr.row-status");
    if (rowOfItsOwn) rowOfItsOwn.remove();
    else refusal.remove();
  }
}

/**
 * Asks once, in `said`, before an action that cannot be taken back: the
 * question (`question`; `label` names the group it is asked in), a button
 * that does it (`yes`: its words, and what a screen reader hears beside
 * them) and one that keeps things as they are (`keep`), which puts the focus
 * back on `from`. The first runs `act` through perform(), `failure` titling
 * its refusal. What an action taken at once offers instead is Undo
 * (`offerUndo`).
 */
export function askOnce(said, { from, label, question, yes, keep = "Keep it", danger = true, act, failure }) {
  const really = h("button", { type: "button", class: danger ? "danger" : null }, yes);
  const kept = h("button", { type: "button", class: "secondary", text: keep });
  said.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": label },
    h("p", { text: question }),
    h("div", { class: "button-row" }, really, kept)));
  really.focus();
  kept.addEventListener("click", () => {
    said.replaceChildren();
    from.focus();
  });
  really.addEventListener("click", () => perform(said, [really, kept], act, failure));
}

/** How long an action that can be undone offers Undo, in seconds. */
export const UNDO_SECONDS = 10;

/**
 * Says in `said` that an action was done (`done`, its words), with an Undo
 * button for UNDO_SECONDS: what an action taken at once, with nothing asked,
 * offers instead of a question. Undo runs `undo` through perform() and says
 * `undone`; `failure` titles its refusal.
 */
export function offerUndo(said, { done, undo, undone, failure }) {
  const button = h("button", { type: "button", class: "secondary undo", text: "Undo" });
  said.replaceChildren(success(done, " ", button));
  const expiry = setTimeout(() => button.remove(), UNDO_SECONDS * 1000);
  button.addEventListener("click", () => {
    clearTimeout(expiry);
    perform(said, [button], async () => {
      await undo();
      return undone;
    }, failure);
  });
}

/** Shows a row action's refusal in a row of its own, directly under the row. */
export function rowStatus(tableRow) {
  let next = tableRow.nextElementSibling;
  if (!next?.classList.contains("row-status")) {
    next = h("tr", { class: "row-status" }, h("td", { colspan: tableRow.cells.length }));
    tableRow.after(next);
    if (tableRow.hasAttribute("role")) labelCells(next);
  }
  return next.cells[0];
}

const SHOW_CODES = "mailroom.show-codes";

/**
 * The box that shows the ids and codes a section otherwise keeps out of sight
 * (dom.js's onRequest()): people read
 * names and words, and whoever works with the API or the audit trail asks for
 * the codes. The choice is kept in this browser, for every section.
 */
export function codesToggle(view) {
  const box = h("input", { type: "checkbox", id: uniqueId("codes") });
  try {
    box.checked = localStorage.getItem(SHOW_CODES) === "1";
  } catch {}
  view.classList.toggle("show-codes", box.checked);
  box.addEventListener("change", () => {
    view.classList.toggle("show-codes", box.checked);
    try {
      if (box.checked) localStorage.setItem(SHOW_CODES, "1");
      else localStorage.removeItem(SHOW_CODES);
    } catch {}
  });
  return h("div", { class: "codes-toggle" }, box,
    h("label", { for: box.id, title: "The ids and codes the API and the audit trail use, beside the names and words", text: "Show ids and codes" }));
}

/** A form whose submit (button or Enter) runs `onSubmit` through perform(). */
export function actionForm({ fields, submit, onSubmit, failureTitle, className }) {
  const status = statusArea();
  const button = h("button", { type: "submit", text: submit });
  const form = h("form", { class: className ?? "action-form" },
    h("div", { class: "fields" }, fields, h("div", { class: "field actions" }, button)),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [button], () => onSubmit(form), failureTitle);
  });
  return form;
}

/** A secret to copy: a read-only field that selects itself, and a Copy button. */
export function secretField(label, value) {
  const field = h("input", { type: "text", class: "secret", readonly: true, value, spellcheck: "false", autocomplete: "off" });
  field.addEventListener("focus", () => field.select());
  const copy = h("button", { type: "button", class: "secondary" }, "Copy", hidden(` the ${label.toLowerCase()}`));
  const said = h("span", { class: "muted", "aria-live": "polite" });
  copy.addEventListener("click", async () => {
    field.focus();
    try {
      await navigator.clipboard.writeText(value);
      said.textContent = "Copied.";
    } catch {
      said.textContent = "This browser did not let the page copy it: it is selected, so press Ctrl+C (⌘C on a Mac).";
    }
  });
  return h("div", { class: "secret-field" }, labelled(label, field), h("div", { class: "button-row" }, copy, said));
}

export function panel(title, ...content) {
  const headingId = uniqueId("panel");
  return h("section", { class: "panel", "aria-labelledby": headingId }, h("h2", { id: headingId, text: title }), content);
}

export const loading = () => h("p", { class: "muted", role: "status", text: "Loading…" });
export const empty = (text) => h("p", { class: "empty", text });
export const info = (...content) => h("div", { class: "notice info" }, content);

/**
 * A link that downloads what the node serves at `href` (an attachment, an
 * original, an export's object; `context`, words for screen readers that say
 * which). The browser fetches it itself with the session cookies, so the
 * session is confirmed first (renewing an expired access token), or the file
 * saved would be a refusal. The node serves these as attachments under a
 * sandboxing policy: they are saved, never rendered on this origin.
 */
export function downloadLink(href, text, { asButton = false, context = null } = {}) {
  const link = h("a", { href, download: true, class: asButton ? "button secondary" : "download" }, text, context ? hidden(context) : null);
  link.addEventListener("click", async (event) => {
    if (!event.isTrusted) return; // the click below, once the session is confirmed
    event.preventDefault();
    try {
      await api("GET", "/api/me");
    } catch (error) {
      if (error instanceof SessionOver) return;
    }
    link.click();
  });
  return link;
}

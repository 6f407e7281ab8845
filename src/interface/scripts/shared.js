// Shared pieces every section builds with: panels, notices, a refusal shown in
// full, and actions run through perform() (a form's, a button's, a table row's),
// which shows their refusal or success where they were taken; and links that
// download what the node serves.

import { code, h, uniqueId } from "./dom.js";
import { api, ApiError, SessionOver } from "./api.js";

/** A refusal, shown in full: what was refused, why, and what would change it. */
export function refusalBox(error, title) {
  if (!(error instanceof ApiError) && typeof error?.code === "string" && typeof error.message === "string") {
    error = new ApiError(error.status ?? 0, error);
  } else if (!(error instanceof ApiError)) {
    error = new ApiError(0, {
      code: "interface_error",
      message: "Something went wrong in the page.",
      reason: String(error?.message ?? error),
      fix: "Reload the page and try again.",
    });
  }
  return h("div", { class: "refusal", role: "alert" },
    title ? h("p", { class: "refusal-title", text: title }) : null,
    h("p", { class: "refusal-message", text: error.message }),
    error.reason ? h("p", {}, h("span", { class: "refusal-label", text: "Why: " }), error.reason) : null,
    error.fix ? h("p", {}, h("span", { class: "refusal-label", text: "What to do: " }), error.fix) : null,
    h("p", { class: "refusal-code" }, code(error.code), error.status ? ` · HTTP ${error.status}` : null));
}

export const success = (...content) => h("div", { class: "notice success", role: "status" }, content);
export const statusArea = () => h("div", { class: "status-area", "aria-live": "polite" });

/**
 * Runs one action: disables its controls, shows its refusal in `status` (or
 * its success message), and reports whether it succeeded.
 */
export async function perform(status, controls, work, failureTitle) {
  status.replaceChildren();
  for (const control of controls) control.disabled = true;
  try {
    const message = await work();
    if (message) status.replaceChildren(success(message));
    return true;
  } catch (error) {
    if (!(error instanceof SessionOver)) status.replaceChildren(refusalBox(error, failureTitle));
    return false;
  } finally {
    for (const control of controls) if (control.isConnected) control.disabled = false;
  }
}

/** Shows a row action's refusal in a row of its own, directly under the row. */
export function rowStatus(tableRow) {
  let next = tableRow.nextElementSibling;
  if (!next?.classList.contains("row-status")) {
    next = h("tr", { class: "row-status" }, h("td", { colspan: tableRow.cells.length }));
    tableRow.after(next);
  }
  return next.cells[0];
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

export function panel(title, ...content) {
  const headingId = uniqueId("panel");
  return h("section", { class: "panel", "aria-labelledby": headingId }, h("h2", { id: headingId, text: title }), content);
}

export const loading = () => h("p", { class: "muted", role: "status", text: "Loading…" });
export const empty = (text) => h("p", { class: "empty", text });
export const info = (...content) => h("div", { class: "notice info" }, content);

/**
 * A link that downloads what the node serves at `href` (an attachment, an
 * original). The browser fetches it itself with the session cookies, so the
 * session is confirmed first (renewing an expired access token), or the file
 * saved would be a refusal. The node serves these as attachments under a
 * sandboxing policy: they are saved, never rendered on this origin.
 */
export function downloadLink(href, text, { asButton = false } = {}) {
  const link = h("a", { href, download: true, class: asButton ? "button secondary" : "download", text });
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

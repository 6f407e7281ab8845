// Keyboard shortcuts (issue 31): the one table of keys and what each does,
// from which the list shown on `?` is drawn, and the one listener that acts on
// them. A view offers an action to a key by marking its control with
// `data-key` (the table's name for it); a list offers its rows to j and k by
// marking itself `data-key-list`, each row holding the link that opens it
// (and, where rows can be selected, its box marked `data-key="select"`).
// Keys act only where the person is not typing (in a field, Ctrl or ⌘ with
// Enter submits what they are writing; a checkbox or a button takes no
// typing), with no other modifier held, and never while a dialog is open.

import { h } from "./dom.js";

/** Every shortcut: the keys that press it (as `event.key`), and what it does, in words. */
export const SHORTCUTS = [
  { name: "next", keys: ["j"], does: "Move to the next conversation in the list" },
  { name: "previous", keys: ["k"], does: "Move to the previous conversation in the list" },
  { name: "open", keys: ["o", "Enter"], does: "Open the conversation moved to" },
  { name: "select", keys: ["x"], does: "Select the conversation moved to, or unselect it" },
  { name: "reply", keys: ["r"], does: "Reply to the latest message in the conversation" },
  { name: "reply-all", keys: ["a"], does: "Reply to everyone on the latest message" },
  { name: "close", keys: ["e"], does: "Close the conversation" },
  { name: "snooze", keys: ["b"], does: "Snooze the conversation: choose until when" },
  { name: "search", keys: ["/"], does: "Search" },
  { name: "help", keys: ["?"], does: "Show these shortcuts" },
  { name: "submit", keys: ["Ctrl+Enter", "⌘+Enter"], does: "Submit what you are writing: a reply goes for approval" },
];

const byKey = new Map(SHORTCUTS.flatMap((shortcut) => shortcut.keys.map((key) => [key, shortcut.name])));

/** Whether `element` takes typing, so a letter pressed there is the person's text. */
const typingIn = (element) => element instanceof HTMLElement
  && (element.isContentEditable || element.closest("input:not([type=checkbox], [type=radio], [type=button], [type=submit]), textarea, select") !== null);

/** The last control on the page offered to shortcut `name` that can be used now. */
function offered(name) {
  const controls = [...document.querySelectorAll(`[data-key="${name}"]`)].filter((control) => !control.disabled && control.checkVisibility());
  return controls.at(-1) ?? null;
}

/** The rows of the list offered to j and k: each row's opening link. */
function rowLinks() {
  const list = [...document.querySelectorAll("[data-key-list]")].find((candidate) => candidate.checkVisibility());
  return list ? [...list.children].map((row) => row.querySelector("a[href]")).filter(Boolean) : [];
}

/** Moves to the row `step` away from the one moved to last (or the first). */
function move(step) {
  const links = rowLinks();
  if (!links.length) return false;
  const at = links.findIndex((link) => link === document.activeElement || link.closest("[aria-current]") !== null);
  const next = links[at === -1 ? 0 : Math.min(links.length - 1, Math.max(0, at + step))];
  for (const link of links) link.parentElement.closest("li, tr")?.removeAttribute("aria-current");
  next.parentElement.closest("li, tr")?.setAttribute("aria-current", "true");
  next.focus();
  next.scrollIntoView({ block: "nearest" });
  return true;
}

let help = null;

/** The list of shortcuts, drawn from the table, in a dialog of its own. */
function showHelp() {
  help ??= h("dialog", { class: "shortcuts", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title", text: "Keyboard shortcuts" }),
    h("dl", {}, SHORTCUTS.map((shortcut) => [
      h("dt", {}, shortcut.keys.map((key, index) => [index ? " or " : null, h("kbd", { text: key })])),
      h("dd", { text: shortcut.does }),
    ])),
    h("form", { method: "dialog" }, h("button", { type: "submit", text: "Close" })));
  if (!help.isConnected) document.body.append(help);
  if (!help.open) help.showModal();
}

function act(name, event) {
  switch (name) {
    case "next":
      return move(1);
    case "previous":
      return move(-1);
    case "open": {
      // Enter on a link opens it by itself; o opens the row moved to.
      if (event.key === "Enter") return false;
      const link = rowLinks().find((candidate) => candidate === document.activeElement || candidate.closest("[aria-current]"));
      link?.click();
      return Boolean(link);
    }
    case "select": {
      // The row the focus is in (its box, say), else the row moved to.
      const focused = document.activeElement?.closest?.("[data-key-list] > *") ?? null;
      const row = focused ?? rowLinks().find((link) => link.closest("[aria-current]"))?.parentElement.closest("li, tr") ?? null;
      const box = row?.querySelector('[data-key="select"]') ?? null;
      box?.click();
      return Boolean(box);
    }
    case "search": {
      const field = offered("search");
      field?.focus();
      field?.select?.();
      return Boolean(field);
    }
    case "help":
      showHelp();
      return true;
    default: {
      const control = offered(name);
      control?.click();
      return Boolean(control);
    }
  }
}

/** Listens for the shortcuts on the whole page, once. */
export function installShortcuts() {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || document.querySelector("dialog[open]")) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.altKey) {
      const form = event.target instanceof HTMLElement ? event.target.closest("form") : null;
      if (!form) return;
      event.preventDefault();
      const submit = form.querySelector('[data-key="submit"]');
      if (submit && !submit.disabled) submit.click();
      else form.requestSubmit();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
    const name = byKey.get(event.key);
    if (name && act(name, event)) event.preventDefault();
  });
}

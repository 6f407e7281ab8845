// DOM helpers: h() makes an element, and the rest make what every view is built
// of (labelled controls, tables and rows, facts, breadcrumbs, link buttons),
// show what the node answers (times, byte sizes) and show it again when it
// changes without disturbing whoever reads it (redraw()). Every string is set as text,
// never parsed as HTML: whatever the API returns is untrusted text. And every
// string is shown in the order it was written: a control that reorders text
// (a stranger's subject or file name can hold one) is shown as its code point,
// and the style sheet isolates each inline element, so text written right to
// left in one field never moves its neighbours (decision 0032).

/**
 * The controls that embed, override or isolate a direction (U+202A–U+202E,
 * U+2066–U+2069): the node's own list (`core::text::DIRECTION_CONTROLS`), which
 * a test holds this one to. The marks (U+200E, U+200F, U+061C) are letters of a
 * direction, not controls, and stay.
 */
export const DIRECTION_CONTROLS = ["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069"];
const directionControls = new RegExp(`[${DIRECTION_CONTROLS.join("")}]`, "gu");

/**
 * `text` with each direction control written out as `[U+202E]`: seen, and
 * unable to reverse what follows it (`Statement`, U+202E, `cod.exe` would read
 * `Statement exe.doc`). Writing it again changes nothing.
 */
export const inOrder = (text) => String(text).replace(directionControls, (control) => `[U+${control.codePointAt(0).toString(16).toUpperCase()}]`);

/** The attributes a person reads (a tooltip, what a screen reader says), shown in order too. */
const READ_ATTRIBUTES = new Set(["title", "aria-label", "alt", "placeholder"]);

/**
 * Creates an element. `props`: `class`, `text` (textContent), `on<event>`
 * (a listener), `true` for a bare attribute, anything else an attribute.
 * Children are nodes or strings (as text), nested arrays, or null to skip.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "text") element.textContent = inOrder(value);
    else if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : READ_ATTRIBUTES.has(key) ? inOrder(value) : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(inOrder(child)));
  }
  return parent;
}

/** Replaces an element's children, taking the same children as h(). */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

let nextId = 0;
export const uniqueId = (prefix) => `${prefix}-${++nextId}`;

/** A labelled form control, with an optional hint read out with it. */
export function labelled(text, control, hint) {
  control.id ||= uniqueId("field");
  const parts = [h("label", { for: control.id, text }), control];
  if (hint) {
    const hintId = uniqueId("hint");
    control.setAttribute("aria-describedby", hintId);
    parts.push(h("p", { class: "hint", id: hintId, text: hint }));
  }
  return h("div", { class: "field" }, parts);
}

/** Text only screen readers announce, to give a row's button its context. */
export const hidden = (text) => h("span", { class: "visually-hidden", text });

// Every moment the page shows is worded here, in one format (issue 31): in
// full (`time`, `momentText`), or as a list says it (`shortTime`), the full
// wording then its title.
const momentFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const clockFormat = new Intl.DateTimeFormat(undefined, { timeStyle: "short" });
const dayOfYearFormat = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

/** A moment in words, in the page's one format; what it was given when it is not a moment. */
export function momentText(rfc3339) {
  const date = new Date(rfc3339);
  return Number.isNaN(date.getTime()) ? String(rfc3339) : momentFormat.format(date);
}

/** A moment, in full. */
export function time(rfc3339) {
  if (!rfc3339) return "";
  return h("time", { datetime: rfc3339, title: rfc3339, text: momentText(rfc3339) });
}

const sameDay = (a, b) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/** A moment as a list says it: the time today, the day this year, else the date; in full as its title. */
export function shortTime(rfc3339) {
  const date = new Date(rfc3339);
  if (Number.isNaN(date.getTime())) return time(rfc3339);
  const now = new Date();
  const format = sameDay(date, now) ? clockFormat : date.getFullYear() === now.getFullYear() ? dayOfYearFormat : dayFormat;
  return h("time", { datetime: rfc3339, title: momentText(rfc3339), text: format.format(date) });
}

/**
 * A moment to come as a person plans by it, in time zone `zone` (their own,
 * where a snooze is counted): the weekday and time within the week ahead, the
 * date too beyond it; in the page's zone when `zone` is unknown here.
 */
export function comingMomentText(rfc3339, zone, now = Date.now()) {
  const at = new Date(rfc3339).getTime();
  if (Number.isNaN(at)) return String(rfc3339);
  const options = at - now < 6 * 86_400_000
    ? { weekday: "short", hour: "2-digit", minute: "2-digit" }
    : { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };
  try {
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone: zone }).format(at);
  } catch {
    return new Intl.DateTimeFormat(undefined, options).format(at);
  }
}

export const code = (text) => h("code", { class: "id", text });

/**
 * An id or a code beside the name or words that stand for it, shown only when
 * the person asks for it (shared.js's codesToggle()). It carries its own space,
 * so where it is hidden nothing is left of it.
 */
export const onRequest = (text) => h("span", { class: "on-request" }, " ", code(text));

/**
 * A table with a caption, column headers and rows (arrays of cells). With
 * `stack`, a narrow window shows each row as a card of its cells, each under
 * its column's name (style/2-sections.css), so nothing lies beyond the
 * window's edge; a row added to it later is given its cells' names with
 * labelCells().
 */
export function table(caption, columns, rows, { captionHidden = true, stack = false } = {}) {
  const wrap = h("div", { class: stack ? "table-wrap stack" : "table-wrap" },
    h("table", {},
      h("caption", { class: captionHidden ? "visually-hidden" : null, text: caption }),
      h("thead", {}, h("tr", {}, columns.map((column) => h("th", { scope: "col", text: column })))),
      h("tbody", {}, rows)));
  if (stack) {
    // Shown as blocks, a table keeps what it is for screen readers only by its roles.
    wrap.querySelector("table").setAttribute("role", "table");
    for (const group of wrap.querySelectorAll("thead, tbody")) group.setAttribute("role", "rowgroup");
    for (const header of wrap.querySelectorAll("th")) header.setAttribute("role", "columnheader");
    for (const tableRow of wrap.querySelectorAll("tr")) labelCells(tableRow);
  }
  return wrap;
}

/** Gives a row of a stacking table its role, and each cell its column's name to be shown under. */
export function labelCells(tableRow) {
  tableRow.setAttribute("role", "row");
  const columns = [...(tableRow.closest("table")?.tHead?.rows[0]?.cells ?? [])].map((cell) => cell.textContent);
  for (const cell of tableRow.cells) {
    if (cell.tagName === "TD") cell.setAttribute("role", "cell");
    if (!tableRow.classList.contains("row-status") && columns[cell.cellIndex]) cell.dataset.label = columns[cell.cellIndex];
  }
}

export const row = (...cells) => h("tr", {}, cells.map((cell) => (cell instanceof HTMLTableCellElement ? cell : h("td", {}, cell))));

/** A description list of `[term, value]` pairs; a pair whose value is null is left out. */
export function facts(pairs, className = "facts") {
  return h("dl", { class: className }, pairs.filter(([, value]) => value !== null && value !== undefined && value !== false)
    .map(([term, value]) => [h("dt", { text: term }), h("dd", {}, value)]));
}

/** A byte count in the units people read. */
export function byteSize(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** Where a view sits: links to the views above it, and its own name. */
export function breadcrumbs(...steps) {
  return h("nav", { class: "breadcrumbs", "aria-label": "Breadcrumb" },
    h("ol", {}, steps.map(([text, href]) => h("li", {}, href ? h("a", { href, text }) : h("span", { "aria-current": "page", text })))));
}

/** A link that looks like a button: it goes somewhere rather than acts. */
export const linkButton = (href, text, { secondary = false, context = null } = {}) =>
  h("a", { href, class: secondary ? "button secondary" : "button" }, text, context ? hidden(context) : null);

/** What a person can move the focus to, in the order they would. */
const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

/** What each child redraw() drew was drawn from (its `sameAs`), to know it again. */
const drawnAs = new WeakMap();

/** The child of `list` standing for `key` (its `attribute`), or null. */
const keyed = (list, attribute, key) => [...list.children].find((child) => child.getAttribute(attribute) === key) ?? null;

/**
 * Shows what the node answered again in `list` without drawing it afresh: the
 * children are keyed by `attribute` (a conversation's or a message's id);
 * `draw(item)` makes the child for an item and `sameAs(item)` a value that
 * changes whenever what it shows would. A child whose item is as it was stays
 * (and so does the text selected in it, a <details> opened in it, the focus);
 * one whose item changed is drawn again; the rest are taken away and the new
 * put in place, moving only what is out of order.
 *
 * A person reading is not disturbed. If the focus was in a child drawn again
 * or moved, it goes back to the control in the same place in the child now
 * standing for the same key, without scrolling. Once the page is scrolled
 * down, what the person is at stays where it was in the window (what arrives
 * above it does not push it away): the control in focus if it is in sight,
 * else the first child in sight; a page at its top stays at its top, where
 * what arrived first is seen. `list`'s style keeps the browser's own scroll
 * anchoring out of it (`overflow-anchor: none`), so the two never both move
 * the page.
 */
export function redraw(list, attribute, items, { key, draw, sameAs }) {
  const before = new Map([...list.children].map((child) => [child.getAttribute(attribute), child]));
  const focused = document.activeElement;
  const focusedIn = focused && focused !== list && list.contains(focused) ? focused.closest(`[${attribute}]`) : null;
  const focusedAt = focusedIn ? [...focusedIn.querySelectorAll(FOCUSABLE)].indexOf(focused) : -1;
  const inSight = (box) => box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
  // Where the person is: the control in focus outside the list, else the list's children in sight (the first that stays).
  const focusedBox = window.scrollY > 0 && focused && focused !== document.body && !focusedIn ? focused.getBoundingClientRect() : null;
  const placeHeld = focusedBox && inSight(focusedBox) ? [[focused, focusedBox.top]] : [];
  if (window.scrollY > 0 && !placeHeld.length) {
    for (const [id, child] of before) {
      const box = child.getBoundingClientRect();
      if (inSight(box)) placeHeld.push([id, box.top]);
    }
  }

  const children = items.map((item) => {
    const child = before.get(key(item));
    const seen = sameAs(item);
    if (child && drawnAs.get(child) === seen) return child;
    const drawn = draw(item);
    drawn.setAttribute(attribute, key(item));
    drawnAs.set(drawn, seen);
    return drawn;
  });
  const kept = new Set(children);
  for (const child of before.values()) if (!kept.has(child)) child.remove();
  children.forEach((child, index) => {
    if (list.children[index] !== child) list.insertBefore(child, list.children[index] ?? null);
  });

  if (focusedIn && document.activeElement !== focused) {
    const standing = keyed(list, attribute, focusedIn.getAttribute(attribute));
    const controls = standing ? [...standing.querySelectorAll(FOCUSABLE)] : [];
    (controls[focusedAt] ?? controls[0])?.focus({ preventScroll: true });
  }
  for (const [held, top] of placeHeld) {
    const element = typeof held === "string" ? keyed(list, attribute, held) : held;
    if (!element?.isConnected) continue;
    const moved = element.getBoundingClientRect().top - top;
    if (moved) window.scrollBy(0, moved);
    break;
  }
}

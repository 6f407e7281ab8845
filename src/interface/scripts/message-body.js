// A received message's body (SPEC §8): its text, and, when it came with HTML,
// that HTML formatted, with a switch between the two.
//
// The text is set as textContent, its paragraphs kept, in the page's own font.
// The HTML is a stranger's markup and never touches this page (decision 0021):
// DOMPurify removes scripts, handlers, styles, forms and anything that would
// load from elsewhere; what is left is shown in a frame sandboxed without
// allow-scripts and without allow-same-origin (it runs nothing, and its origin
// is opaque, so it reaches nothing of this node's), under its own policy that
// loads nothing remote on top of the page's, which a srcdoc frame inherits.
// A link opens in a new tab, and only to another site: one that would lead to
// this node, or that is not a web or mail address at all, is left as text.

import DOMPurify from "./purify.js";
import { h } from "./dom.js";
import { info } from "./shared.js";

/** What the frame may do: open a link in a tab of its own, as an ordinary page. Nothing else. */
const SANDBOX = "allow-popups allow-popups-to-escape-sandbox";
/** The frame's own policy: images carried inside the message, and the stylesheet the page allows by hash. */
const FRAME_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";
/** What the sanitiser removes besides its defaults: styles (the inherited policy would refuse them), forms, media. */
const SANITISE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "select", "option", "textarea", "audio", "video", "source", "track", "picture"],
  FORBID_ATTR: ["style", "srcset", "ping", "action", "formaction"],
  ALLOW_DATA_ATTR: false,
};
/** Attributes that would load something when the frame shows the element. */
const LOADING_ATTRIBUTES = ["src", "background", "poster"];

/** How many remote loads the sanitiser took out of the message it is working on. */
let remoteLoadsRemoved = 0;

/** A link's target if it may stay: an absolute web address on another site, or a mail address. */
function linkTarget(href) {
  let url;
  try {
    url = new URL(href.trim()); // no base: a relative link would lead to this node
  } catch {
    return null;
  }
  if (url.protocol === "mailto:") return url.href;
  if ((url.protocol === "https:" || url.protocol === "http:") && url.origin !== location.origin) return url.href;
  return null;
}

if (DOMPurify.isSupported) {
  // What the message hides is not shown, and need not be in the frame at all.
  DOMPurify.addHook("uponSanitizeElement", (node) => {
    if (node.nodeType === Node.ELEMENT_NODE && node.hasAttribute("hidden")) node.remove();
  });
  DOMPurify.addHook("afterSanitizeAttributes", (element) => {
    for (const name of LOADING_ATTRIBUTES) {
      const value = element.getAttribute(name);
      if (value === null || /^data:image\//i.test(value.trim())) continue;
      element.removeAttribute(name);
      if (value.trim()) remoteLoadsRemoved += 1;
    }
    element.removeAttribute("target");
    if (!element.hasAttribute("href")) return;
    const target = linkTarget(element.getAttribute("href"));
    if (!target) {
      element.removeAttribute("href");
      return;
    }
    element.setAttribute("href", target);
    element.setAttribute("target", "_blank");
    element.setAttribute("rel", "noopener noreferrer");
  });
}

/**
 * The message's HTML as DOMPurify is given it: nothing in it that the page's own
 * policy would report when parsed. Chrome checks what every document it parses
 * under this page holds against the page's policy, DOMPurify's inert one included,
 * and logs each event handler, inline style and base address it finds there,
 * though none would ever apply. So they are taken out of the text before any parse:
 *
 * - `<style>` blocks are cut, and an element's `display:none` kept as `hidden`
 *   (what a newsletter hides, such as its preview text, stays hidden);
 * - every attribute that could be named `on…` or `style` is renamed. The HTML
 *   tokenizer starts an attribute's name only straight after whitespace, a `/`
 *   or the quote that closed the value before it, so an `o` of `on` or an `s` of
 *   `style` in such a place is written as its character reference;
 * - `<base` becomes `<b&#97;se`, a tag of no meaning.
 *
 * A reference is never decoded in a tag's or an attribute's name (`&#111;nclick`
 * is no handler, and DOMPurify drops it) and always decoded in text and attribute
 * values, so what a reader sees is unchanged. `</on…` is an end tag, left alone.
 * DOMPurify still decides everything that is kept; this only keeps the console quiet.
 */
const ATTRIBUTE_START = String.raw`(?<=[\t\n\f\r "']|(?<!<)\/)`;
const TAG_NAME_END = String.raw`(?=[\t\n\f\r />]|$)`;
const REPORTED_NAME_LETTER = new RegExp(`${ATTRIBUTE_START}(?:o(?=n)|s(?=tyle))|(?<=<b)a(?=se${TAG_NAME_END})`, "gi");
const STYLE_BLOCK = new RegExp(`<style${TAG_NAME_END}[\\s\\S]*?(?:<\\/style\\s*>|$)`, "gi");
const STYLE_VALUE = /\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]*)/gi;
const quiet = (html) => html
  .replace(STYLE_BLOCK, "")
  .replace(/<[a-z][^>]*>/gi, (tag) => tag.replace(STYLE_VALUE, (_, value) => (/display\s*:\s*none/i.test(value) ? " hidden" : "")))
  .replace(REPORTED_NAME_LETTER, (letter) => `&#${letter.charCodeAt(0)};`);

/** The frame's stylesheet, exactly as the page's policy allows it (its hash), from the page's inert template. */
const frameStyle = () => document.getElementById("message-frame-style")?.content.querySelector("style")?.textContent ?? "";

function frameDocument(html) {
  const style = frameStyle();
  return `<!doctype html><html><head><meta charset="utf-8">`
    + `<meta http-equiv="Content-Security-Policy" content="${FRAME_POLICY}">`
    + `<meta name="referrer" content="no-referrer">${style ? `<style>${style}</style>` : ""}`
    + `</head><body>${html}</body></html>`;
}

/**
 * The text: as text, its lines and paragraphs as the node kept them. Unlike a
 * subject or a name, it keeps the direction controls its writer put in (text
 * written right to left may need them), set past h(), which would show them as
 * code points; it is a block of its own, so they act only within it.
 */
function textView(body) {
  const text = h("pre", { class: "mail-text message-text" });
  text.textContent = body.text;
  return [
    body.text_source === "html" ? info("This message came only as HTML; this is its text, without the formatting.") : null,
    text,
    body.truncated ? info("The text was cut at the node's limit; the original has all of it.") : null,
  ];
}

/** The HTML: sanitised, in a sandboxed frame that loads nothing from elsewhere. */
function formattedView(body) {
  remoteLoadsRemoved = 0;
  const html = DOMPurify.sanitize(quiet(body.html), SANITISE);
  const removed = remoteLoadsRemoved;
  return [
    removed ? info(`Images from the web are not loaded (${removed} in this message): loading one would tell its sender when and where the message was read.`) : null,
    h("iframe", {
      class: "message-frame",
      title: "The message, formatted",
      sandbox: SANDBOX,
      referrerpolicy: "no-referrer",
      srcdoc: frameDocument(html),
    }),
    body.html_truncated ? info("The formatted message was cut at the node's limit; the original has all of it.") : null,
  ];
}

/**
 * A message's body, from GET …/body?html=true: its text, or, when it has HTML
 * (and the sanitiser is here), the HTML formatted first, with a switch to the text.
 */
export function renderMessageBody(body) {
  if (typeof body.html !== "string" || !DOMPurify.isSupported) return h("div", { class: "message-body" }, textView(body));
  const views = { formatted: ["Formatted", () => formattedView(body)], text: ["Plain text", () => textView(body)] };
  const shown = {};
  const content = h("div", { class: "message-view" });
  const buttons = Object.entries(views).map(([which, [label]]) =>
    h("button", { type: "button", class: "secondary", "aria-pressed": "false", "data-view": which, text: label, onclick: () => show(which) }));
  function show(which) {
    shown[which] ??= views[which][1]();
    content.replaceChildren(...shown[which].filter(Boolean));
    for (const button of buttons) button.setAttribute("aria-pressed", String(button.dataset.view === which));
  }
  show("formatted");
  return h("div", { class: "message-body" },
    h("div", { class: "view-switch", role: "group", "aria-label": "Show the message" }, buttons), content);
}

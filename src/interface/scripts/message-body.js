// A received message's body (SPEC §8): its text, and, when it came with HTML,
// that HTML formatted, with a switch between the two.
//
// The text is set as textContent, its paragraphs kept, in the page's own font.
// The HTML is a stranger's markup and never touches this page (decision 0021):
// DOMPurify removes scripts, handlers, styles, forms and anything that would
// load from elsewhere; what is left is shown in a frame sandboxed without
// allow-same-origin (its origin is opaque, so it reaches nothing of this
// node's), under its own policy on top of the page's, which a srcdoc frame
// inherits. Both policies allow one script by its hash, the page's own
// (message-frame.js), which says how tall the message is so the frame is
// sized to it; nothing of the sender's runs.
// A link opens in a new tab, and only to another site: one that would lead to
// this node, or that is not a web or mail address at all, is left as text.
//
// Remote images are taken out before the frame is drawn, so nothing tries to
// load and no policy has anything to report (decision 0044); a bar above the
// frame says so, with Show images (this message, this view) and, for a sender
// whose domain vouched for the message, Always show images from them: a
// choice kept on the node (/api/me/image-senders), so it follows the person to
// every browser. Shown, only https images load, and the frame's own policy
// allows https for that drawing alone.

import DOMPurify from "./purify.js";
import { h, hidden as unseen } from "./dom.js";
import { info, perform, statusArea } from "./shared.js";
import { api, segment, SessionOver } from "./api.js";

/**
 * What the frame may do: open a link in a tab of its own, as an ordinary page,
 * and run scripts, which both policies narrow to the page's one by its hash.
 * Nothing else: never this origin, a form, or a navigation of the page.
 */
const SANDBOX = "allow-scripts allow-popups allow-popups-to-escape-sandbox";
/**
 * The frame's own policy: images carried inside the message, and the stylesheet
 * the page allows by hash; with remote images shown, images over https too.
 * Never http: such a request crosses every network in clear, telling anyone on
 * the way which message was read (its address carries the tracking token), and
 * letting them swap the picture.
 */
const framePolicy = (remoteShown, script) =>
  `default-src 'none'; script-src ${script ? `'${script.hash}'` : "'none'"}; img-src data:${remoteShown ? " https:" : ""}; style-src 'unsafe-inline'`;
/** Where a person's senders whose images they always see are kept. */
const IMAGE_SENDERS = "/api/me/image-senders";
/**
 * What the sanitiser removes besides its defaults: styles (the inherited policy
 * would refuse them, and with them every url() that could load), forms, media,
 * and srcset (an image is shown from its src alone).
 */
const SANITISE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "select", "option", "textarea", "audio", "video", "source", "track", "picture"],
  FORBID_ATTR: ["style", "srcset", "ping", "action", "formaction"],
  ALLOW_DATA_ATTR: false,
};
/** Attributes that would load something when the frame shows the element. */
const LOADING_ATTRIBUTES = ["src", "background", "poster"];

/**
 * The drawing the sanitiser is working on: whether it keeps https images, and
 * what it took out, counted: `hidden` (images from the web that Show images
 * would load) and `unencrypted` (over http, which stay out).
 */
let drawing = { keepRemote: false, hidden: 0, unencrypted: 0 };

/** An image's address if it is one on the web, elsewhere than this node: what loading it would reach. */
function remoteAddress(value) {
  let url;
  try {
    url = new URL(value.trim()); // no base: a relative address would lead to this node
  } catch {
    return null;
  }
  return (url.protocol === "https:" || url.protocol === "http:") && url.origin !== location.origin ? url : null;
}

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
      const remote = remoteAddress(value);
      if (remote?.protocol === "https:" && drawing.keepRemote) {
        element.setAttribute(name, remote.href);
        continue;
      }
      // Anything else (a cid: part, a relative address) could load nothing but this node.
      element.removeAttribute(name);
      if (remote?.protocol === "https:") drawing.hidden += 1;
      else if (remote) drawing.unencrypted += 1;
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

/** The frame's one script and its hash, exactly as the page's policy allows it, from the page's inert template. */
function frameScript() {
  const template = document.getElementById("message-frame-script");
  const text = template?.content.querySelector("script")?.textContent;
  return text && template.dataset.hash ? { text, hash: template.dataset.hash } : null;
}

function frameDocument(html, remoteShown) {
  const style = frameStyle();
  const script = frameScript();
  return `<!doctype html><html><head><meta charset="utf-8">`
    + `<meta http-equiv="Content-Security-Policy" content="${framePolicy(remoteShown, script)}">`
    + `<meta name="referrer" content="no-referrer">${style ? `<style>${style}</style>` : ""}`
    + `</head><body>${html}${script ? `<script>${script.text}</script>` : ""}</body></html>`;
}

/** The most a frame grows to; a message taller than this scrolls inside it. */
const FRAME_TALLEST_PX = 40_000;

// A frame's script says how tall its message is: the frame it came from (the
// message's source window, its origin opaque) is sized to it. Anything else
// told to the page is not a frame's and is left alone.
window.addEventListener("message", (event) => {
  const height = event.data?.mailroomFrameHeight;
  if (event.origin !== "null" || !Number.isFinite(height)) return;
  const frame = [...document.querySelectorAll("iframe.message-frame")].find((each) => each.contentWindow === event.source);
  if (!frame) return;
  frame.dataset.sized = "content";
  // The height set is the frame's box, its border included.
  const border = frame.offsetHeight - frame.clientHeight;
  frame.style.height = `${Math.min(Math.max(Math.ceil(height), 1), FRAME_TALLEST_PX) + border}px`;
});

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

/** The message's HTML sanitised, keeping its https images or not, with what was taken out counted. */
function sanitised(html, keepRemote) {
  drawing = { keepRemote, hidden: 0, unencrypted: 0 };
  const clean = DOMPurify.sanitize(quiet(html), SANITISE);
  return { html: clean, hidden: drawing.hidden, unencrypted: drawing.unencrypted };
}

/** Whether the signed-in person always sees `sender`'s images (asked only when it matters). */
async function alwaysShown(sender) {
  try {
    const { senders } = await api("GET", IMAGE_SENDERS);
    return senders.some((listed) => listed.address === sender);
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    return false; // the images stay hidden, and Show images still works
  }
}

const plural = (count, one) => `${count} ${one}${count === 1 ? "" : "s"}`;

/** The least and most a frame starts at: a few lines, and most of the window. */
const FRAME_LEAST_PX = 160;
const FRAME_MOST_OF_WINDOW = 0.8;
/** What formatting adds to a text's height (margins, headings), roughly. */
const FRAME_SLACK_PX = 48;

/**
 * Sizes a message's frame to its text until the frame says how tall its
 * message is (message-frame.js, a moment after it is drawn), so the page does
 * not jump from a few lines to the whole. The message's text is the same
 * content without the formatting, and the page lays it out in its own font at
 * the frame's width, running nothing of the sender's: the frame starts that
 * tall (within a few lines and most of the window). Once the frame has said,
 * what it says wins.
 */
function sizedByItsText(frame, text) {
  const observer = new ResizeObserver(() => {
    const width = frame.clientWidth;
    if (!frame.isConnected || frame.dataset.sized === "content") return observer.disconnect();
    if (!width || frame.dataset.sizedAt === String(width)) return;
    frame.dataset.sizedAt = String(width);
    const probe = h("pre", { class: "mail-text message-text frame-probe", "aria-hidden": "true" });
    probe.textContent = text ?? "";
    probe.style.width = `${width}px`;
    frame.after(probe);
    const height = probe.getBoundingClientRect().height + FRAME_SLACK_PX;
    probe.remove();
    frame.style.height = `${Math.round(Math.min(Math.max(height, FRAME_LEAST_PX), window.innerHeight * FRAME_MOST_OF_WINDOW))}px`;
  });
  observer.observe(frame);
  return frame;
}

/**
 * The HTML: sanitised, in a sandboxed frame, its remote images hidden with a
 * bar that offers them, or shown (`initially`: "hidden", "shown" on asking,
 * "always" by the person's choice). `sender` is the From address, offered
 * "Always" only when its domain vouched for the message.
 */
function formattedView(body, { sender, hidden, initially }) {
  const view = h("div", { class: "message-formatted" });
  const status = statusArea();
  function draw(images) {
    const shown = images !== "hidden";
    const { html, unencrypted } = sanitised(body.html, shown);
    view.replaceChildren(...[
      imageBar({ images, hidden, unencrypted }),
      sizedByItsText(h("iframe", {
        class: "message-frame",
        title: "The message, formatted",
        sandbox: SANDBOX,
        referrerpolicy: "no-referrer",
        srcdoc: frameDocument(html, shown),
      }), body.text),
      body.html_truncated ? info("The formatted message was cut at the node's limit; the original has all of it.") : null,
    ].filter(Boolean));
  }
  function imageBar({ images, hidden, unencrypted }) {
    if (!hidden && !unencrypted) return null;
    // The sender is named beside a button's words, for a screen reader, and
    // in the sentence above for everyone: a long address would widen a button
    // past a phone's edge.
    const button = (label, act, failure) => {
      const control = h("button", { type: "button", class: "secondary" }, label);
      control.addEventListener("click", () => perform(status, [control], act, failure));
      return control;
    };
    const always = sender ? button(["Always show images from this sender", unseen(` (${sender})`)], async () => {
      await api("PUT", `${IMAGE_SENDERS}/${segment(sender)}`);
      draw("always");
      return `Images from ${sender} will always be shown. You can change this on your account page.`;
    }, "Images from this sender will not always be shown.") : null;
    const words = [];
    const buttons = [];
    if (images === "hidden") {
      if (hidden) words.push(`Remote images are hidden to protect your privacy (${plural(hidden, "image")}): loading one tells its sender when and where this message was read.`);
      if (hidden && sender) words.push(`This sender is ${sender}, whose domain vouched for the message.`);
      if (hidden) buttons.push(button("Show images", async () => draw("shown"), "The images were not shown."), always);
    } else if (images === "always") {
      words.push(`Images from ${sender} are always shown, as you chose.`);
      buttons.push(button(["Stop always showing them", unseen(` (images from ${sender})`)], async () => {
        await api("DELETE", `${IMAGE_SENDERS}/${segment(sender)}`);
        draw("hidden");
        return `Images from ${sender} are hidden again.`;
      }, "Images from this sender are still always shown."));
    } else {
      words.push("Remote images are shown for this message.");
      if (sender) words.push(`This sender is ${sender}, whose domain vouched for the message.`);
      buttons.push(always);
    }
    if (unencrypted) words.push(`${plural(unencrypted, "image")} sent without encryption (http) ${unencrypted === 1 ? "stays" : "stay"} hidden: anyone on the way could see it opened, or change it.`);
    if (hidden && !sender && images === "hidden") words.push("Always showing a sender's images is offered only when their domain vouched for the message.");
    return h("div", { class: "notice info remote-images", role: "region", "aria-label": "Remote images" },
      words.filter(Boolean).map((text) => h("p", { text })),
      buttons.some(Boolean) ? h("div", { class: "button-row" }, buttons) : null,
      status);
  }
  draw(initially);
  return [view];
}

/**
 * A message's body, from GET …/body?html=true: its text, or, when it has HTML
 * (and the sanitiser is here), the HTML formatted first, with a switch to the
 * text. `sender` is the message's From address: a sender whose domain vouched
 * for the message may have their images always shown, which is asked of the
 * node only when the message has images to hide.
 */
export async function renderMessageBody(body, sender) {
  if (typeof body.html !== "string" || !DOMPurify.isSupported) return h("div", { class: "message-body" }, textView(body));
  // A forged From must not borrow a sender's standing choice.
  const vouched = body.sender_authentication === "authenticated" && typeof sender === "string" ? sender.toLowerCase() : null;
  const { hidden } = sanitised(body.html, false);
  const initially = vouched && hidden && await alwaysShown(vouched) ? "always" : "hidden";
  const views = {
    formatted: ["Formatted", () => formattedView(body, { sender: vouched, hidden, initially })],
    text: ["Plain text", () => textView(body)],
  };
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

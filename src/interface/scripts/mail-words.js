// Mail in words (SPEC §8, issue 14): where a send stands, where a conversation
// stands, and how far a sender was authenticated, each as people say it; and
// recipients, which the node stores as `Name <address>`, read and written.
//
// The keys of SEND_STATES, THREAD_STATUSES and SENDER_CHECKS are the
// contract's (SendState, ThreadStatus, SenderAuthentication): a test in
// src/interface.rs holds them to it, so a state the node can answer always has
// words here.

import { h } from "./dom.js";

/** Where a send stands, in words; `tone` colours its badge. */
export const SEND_STATES = {
  draft: { words: "Draft", tone: "quiet", meaning: "Its writer's alone; nothing is sent until it is submitted and approved." },
  submitted: { words: "Awaiting approval", tone: "wait", meaning: "Waiting for a second person to approve or refuse it." },
  sealed: { words: "Approved, sending", tone: "wait", meaning: "Approved and sealed; being handed to the mail service." },
  dispatched: { words: "Sent", tone: "on", meaning: "The mail service accepted it for every recipient." },
  failed: { words: "Not delivered", tone: "off", meaning: "The mail service refused it for some recipients; it can be sent again to those." },
  refused: { words: "Refused", tone: "off", meaning: "A second person refused it; nothing was sent." },
};

/** Where a conversation stands, in words, and the button that puts it there. */
export const THREAD_STATUSES = {
  open: { words: "Open", action: "Open", tone: "wait", meaning: "Needs someone." },
  waiting: { words: "Waiting", action: "Waiting", tone: "quiet", meaning: "Answered or in hand, waiting for the other side." },
  closed: { words: "Closed", action: "Close", tone: "on", meaning: "Done. A new message from the other side opens it again." },
};

/**
 * How far a received message's sender was authenticated, in words. Only a pass
 * for the domain of the From shown counts (decision 0029); what a check
 * proved, domain by domain, is the node's own sentence (`authentication.detail`).
 */
export const SENDER_CHECKS = {
  authenticated: { words: "Sender authenticated", tone: "on", meaning: "The domain of the From shown vouched for this message: it comes from where its From line says." },
  failed: { words: "Sender authentication failed", tone: "off", meaning: "The sender's domain says it did not send this: the From line may well be forged." },
  unverified: { words: "Sender not verified", tone: "warn", meaning: "Nothing proves the From shown: treat it as a claim, not a fact." },
};

/** What the checks proved about the From shown, in the node's sentence, or the verdict's meaning without one. */
export const senderDetail = (authentication) =>
  authentication?.detail ?? SENDER_CHECKS[authentication?.sender ?? "unverified"]?.meaning ?? "";

/** On a draft holding more recipients than a send may have: what to do, in a sentence; null within the limit. */
export function trimWords(send) {
  const over = send?.recipients_to_remove ?? 0;
  if (over <= 0) return null;
  const count = send.to.length + send.cc.length;
  return `This message has ${counted(count, "recipient")}, and mail goes to at most ${(count - over).toLocaleString()}: remove ${counted(over, "recipient")} from To or Cc, then submit it.`;
}

/** Said of a received message that reuses a Message-ID another message in the mailbox carries. */
export const REUSED_MESSAGE_ID = "Another message in this mailbox carries the same Message-ID with other content. Both are kept: one of them may be forged, or its sender reuses ids.";

/** What SPF, DKIM and DMARC answered, in words. */
const RESULT_WORDS = {
  pass: "passed",
  fail: "failed",
  softfail: "failed softly (the domain suspects it)",
  neutral: "neutral (the domain says nothing)",
  none: "not published by the domain",
  temperror: "could not be checked just then",
  permerror: "could not be checked (the domain's record is broken)",
  policy: "refused by policy",
};
export const resultWords = (result) => (result ? RESULT_WORDS[result.toLowerCase()] ?? result : "not checked");

const badge = (entry, fallback) => h("span", { class: entry?.tone ? `badge ${entry.tone}` : "badge", title: entry?.meaning ?? null, text: entry?.words ?? fallback });

/** A send's state as a badge, in words. */
export const sendStateBadge = (state) => badge(SEND_STATES[state], state);

/** A conversation's status as a badge, in words. */
export const threadStatusBadge = (status) => badge(THREAD_STATUSES[status], status);

/** A received message's sender check as a badge, in words. */
export const senderCheckBadge = (check) => badge(SENDER_CHECKS[check ?? "unverified"], check);

/**
 * A recipient as the node stores it (`Name <address>` or the address) read
 * into its name and address.
 */
export function parseRecipient(text) {
  const written = String(text ?? "").trim();
  const open = written.lastIndexOf("<");
  if (open < 0 || !written.endsWith(">")) return { name: null, address: written };
  const name = written.slice(0, open).trim().replace(/^"(.*)"$/, "$1").trim();
  return { name: name || null, address: written.slice(open + 1, -1).trim() };
}

/** A recipient as a person writes one in a field: the name quoted when it holds a comma or semicolon. */
export function recipientText({ name, address }) {
  if (!name) return address;
  return /[,;]/.test(name) ? `"${name}" <${address}>` : `${name} <${address}>`;
}

/**
 * The recipients typed into a To or Cc field: separated by commas, semicolons
 * or (between bare addresses) spaces; a comma inside quotes or angle brackets
 * belongs to its recipient.
 */
export function recipientsIn(field) {
  const pieces = [];
  let current = "";
  let quoted = false;
  let angled = false;
  for (const character of String(field ?? "")) {
    if (character === '"' && !angled) quoted = !quoted;
    else if (character === "<" && !quoted) angled = true;
    else if (character === ">" && !quoted) angled = false;
    if ((character === "," || character === ";") && !quoted && !angled) {
      pieces.push(current);
      current = "";
    } else {
      current += character;
    }
  }
  pieces.push(current);
  return pieces.map((piece) => piece.trim()).filter(Boolean)
    .flatMap((piece) => (piece.includes("<") || piece.includes('"') ? [piece] : piece.split(/\s+/)));
}

/** Who a recipient is, for reading: the name, with the address beside it. */
export function recipientLabel(text) {
  const { name, address } = parseRecipient(text);
  if (!name) return h("span", { class: "address", text: address });
  return h("span", { class: "address" }, h("span", { class: "address-name", text: name }), " ", h("span", { class: "address-email", text: `<${address}>` }));
}

/** A list of recipients for reading, separated by commas. */
export const recipientLabels = (list) => list.map((recipient, index) => [index ? ", " : null, recipientLabel(recipient)]);

/** Recipients as a sentence carries them: names where there are names. */
export const recipientWords = (list) => list.map((recipient) => {
  const { name, address } = parseRecipient(recipient);
  return name ? `${name} <${address}>` : address;
}).join(", ");

/** A received message's sender by name (or address), for a sentence. */
export const senderWords = (from) => (from ? from.name || from.address : "an unknown sender");

/** Mail's text with its line breaks as the page writes them (mail carries CRLF). */
export const asLines = (text) => String(text ?? "").replace(/\r\n?/g, "\n");

/** A count with its noun, "1 message", "3 messages". */
export const counted = (count, one, many = `${one}s`) => `${count.toLocaleString()} ${count === 1 ? one : many}`;

// What the mail views share (mail.js, inbox.js, conversation.js, sends.js,
// approvals.js): what the signed-in person may do in a mailbox, the mailboxes
// they can read and send from, links within Mail and paths in the API, how a
// mailbox, what is held on it, a subject and mail's text are shown,
// following a mailbox's live stream while a view of it is shown, and the words
// for who else is reading or writing a reply there (presence).

import { code, h, inOrder } from "./dom.js";
import { api, listen, segment } from "./api.js";
import { holdWhileShown, me } from "./session.js";
import { directory } from "./names.js";
import { relationTerm } from "./vocabulary.js";

/**
 * What the signed-in person may do in a mailbox: the tools the node lists on
 * it, which it derives from the relations held there and each route's declared
 * authority. This only chooses which controls to show; the node decides each call.
 */
export function access(mailbox) {
  const tools = new Set(mailbox?.tools ?? []);
  return {
    metadata: tools.has("list_messages"),
    content: tools.has("get_message_body"),
    original: tools.has("get_message_original"),
    propose: tools.has("create_draft"),
    retry: tools.has("retry_send"),
    decide: tools.has("approve_send"),
    conversations: tools.has("list_threads"),
    triage: tools.has("update_thread"),
    markRead: tools.has("mark_thread_read"),
    redraft: tools.has("redraft_send"),
  };
}

/**
 * The mailboxes the signed-in person can read (`readable`) and send from
 * (`sendable`), and both by id; each carries every relation held on it.
 */
export async function myMailboxes() {
  const [readable, sendable] = await Promise.all([api("GET", "/api/mailboxes/readable"), api("GET", "/api/mailboxes")]);
  const byId = new Map([...readable.mailboxes, ...sendable.mailboxes].map((mailbox) => [mailbox.id, mailbox]));
  directory.rememberMailboxes(byId.values());
  return { readable: readable.mailboxes, sendable: sendable.mailboxes, byId };
}

export const mailHref = (...parts) => `#/mail${parts.map((part) => `/${segment(part)}`).join("")}`;
export const mailboxApi = (mailboxId, ...parts) => `/api/mailboxes/${segment(mailboxId)}${parts.map((part) => `/${segment(part)}`).join("")}`;

/** The relations held on a mailbox, in the vocabulary's words (their codes on request). */
export function heldList(mailbox, vocabulary) {
  return mailbox.held.length
    ? h("ul", { class: "relations" }, mailbox.held.map((relation) => h("li", {}, vocabulary ? relationTerm(vocabulary, relation) : code(relation))))
    : h("span", { class: "muted", text: "Nothing" });
}

/** A mailbox by its address where the page knows it (or `knownAddress` says it), else by id. */
export function mailboxName(mailboxId, knownAddress) {
  const mailbox = directory.mailboxes.get(mailboxId);
  if (!mailbox) return knownAddress ? h("span", { class: "who" }, h("span", { class: "who-name", text: knownAddress }), " ", code(mailboxId)) : code(mailboxId);
  return h("span", { class: "who" }, h("span", { class: "who-name", text: mailbox.address }), " ", h("span", { class: "muted", text: `(${mailbox.display_name})` }));
}

/** A subject as shown: in the order it was written (it goes into the window's title too, which h() does not reach), or "(no subject)". */
export const subjectOf = (subject) => (subject?.trim() ? inOrder(subject) : "(no subject)");

/**
 * A conversation's labels as chips, each made by `chip(label)` (a button that
 * filters the list, or a label with its own remove button), in a list named
 * for screen readers.
 */
export const labelChips = (labels, chip) =>
  h("ul", { class: "labels", "aria-label": "Labels" }, labels.map((label) => h("li", {}, chip(label))));

/** Mail's text: plain text, wrapped, never rendered as HTML. */
export const mailText = (text) => h("pre", { class: "mail-text", text });

/**
 * How long a view of a mailbox waits, once told that the mailbox changed,
 * before reading what it shows again: the changes of a burst (a message
 * received and its butlers' effects, a send approved and sent) are read once.
 */
const LIVE_PAUSE_MS = 200;

/**
 * While `view` is shown, follows `mailbox`'s live stream: calls
 * `readAgain(kinds)` a moment (LIVE_PAUSE_MS) after the first change of a burst
 * that `accept(event)` takes (any, unless given), `kinds` being the set of the
 * changes' kinds (the routes' tool names), so a view reads only what they
 * touch; and whenever the stream opens, with `kinds` null, since what changed
 * while it was not open was not told; and `noLonger()` if the node stops
 * telling the person (they may no longer see the mailbox's mail).
 *
 * `onPresence(presence)` hears who else is reading or writing a reply where
 * (api.js's listen()): never a change, so nothing is read again for it.
 * `onOpen()` is called as the stream opens, before the node tells again who is
 * where (what was told before may have ended while it was not open).
 * Answers `say(message)`, which tells the others on the mailbox what the
 * person is doing (`{ presence, object }`), as soon as the stream is open.
 */
export function followMailbox(view, mailbox, { readAgain, noLonger, accept = () => true, onPresence = () => {}, onOpen = () => {} }) {
  let waiting = null;
  // The kinds told since the last reading; null once anything may have changed.
  let told = new Set();
  const soon = () => {
    waiting ??= setTimeout(() => {
      waiting = null;
      const kinds = told;
      told = new Set();
      readAgain(kinds);
    }, LIVE_PAUSE_MS);
  };
  const stream = listen(mailboxApi(mailbox.id, "live"), {
    onEvent: (event) => {
      if (!accept(event)) return;
      told?.add(event.kind);
      soon();
    },
    onPresence,
    onOpen: () => {
      onOpen();
      told = null;
      soon();
    },
    onRefused: () => {
      // What was told before it closed is not read: the node would refuse it now.
      clearTimeout(waiting);
      noLonger();
    },
  });
  holdWhileShown(view, () => {
    stream.close();
    clearTimeout(waiting);
  });
  return { say: (message) => stream.say(message) };
}

/**
 * Who else is doing what in a conversation, as the page was last told: by
 * actor (a person's or agent's id), what they are doing ("reading" or
 * "writing"). `tell(presence)` takes a presence told by the node and answers
 * whether it changed anything; the signed-in person's own (another tab of
 * theirs) and one gone idle are not kept.
 */
export function presenceIn() {
  const doing = new Map();
  return {
    doing,
    tell({ actor, actorName, activity }) {
      if (actor === me?.id) return false;
      if (actorName) directory.rememberName(actor, actorName);
      const before = doing.get(actor);
      if (activity === "idle") doing.delete(actor);
      else doing.set(actor, activity);
      return doing.get(actor) !== before;
    },
  };
}

/**
 * Who they are, in words a sentence can start with: each by the name the page
 * knows, else "a colleague" or "an agent" (the node tells only their ids, and
 * a person who is not an administrator cannot ask it for a colleague's name).
 */
export function actorsWords(actors) {
  const names = [];
  let colleagues = 0;
  let agents = 0;
  for (const actor of actors) {
    const name = directory.nameOf(actor);
    if (name) names.push(name);
    else if (actor.startsWith("agt_")) agents++;
    else colleagues++;
  }
  names.sort((a, b) => a.localeCompare(b));
  if (colleagues) names.push(colleagues === 1 ? "a colleague" : `${colleagues} colleagues`);
  if (agents) names.push(agents === 1 ? "an agent" : `${agents} agents`);
  const words = new Intl.ListFormat("en", { type: "conjunction" }).format(names);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * What a conversation says of the others in it (`doing`, presenceIn()'s):
 * who is writing a reply, then who is reading it; "" when nobody is.
 */
export function presenceWords(doing) {
  const writing = [...doing].filter(([, activity]) => activity === "writing").map(([actor]) => actor);
  const reading = [...doing].filter(([, activity]) => activity === "reading").map(([actor]) => actor);
  return [
    writing.length ? `${actorsWords(writing)} ${writing.length > 1 ? "are writing replies" : "is writing a reply"}.` : "",
    reading.length ? `${actorsWords(reading)} ${reading.length > 1 ? "are reading this conversation" : "is reading this conversation"}.` : "",
  ].filter(Boolean).join(" ");
}

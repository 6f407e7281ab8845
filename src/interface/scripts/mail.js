// Mail (SPEC §8): its route, which lands on a mailbox's conversations
// (inbox.js) and hands a conversation to conversation.js and a mailbox's
// outbound mail to sends.js; here, the mailboxes the signed-in person can read
// and send from, every message a mailbox received, a message, and searches of
// every mailbox or of one.
//
// A message's subject, names and text are written by whoever sent it. They are
// only ever set as textContent; a body is shown by message-body.js, which never
// renders HTML on this page. An administrator can delete a received message from
// its own view, after saying so twice.

import { append, breadcrumbs, byteSize, code, facts, h, labelCells, labelled, linkButton, replace, row, table, time, uniqueId } from "./dom.js";
import { me, route } from "./session.js";
import { api, query, SessionOver } from "./api.js";
import { actionForm, downloadLink, empty, info, loading, panel, perform, refusalBox, statusArea } from "./shared.js";
import { pager } from "./pager.js";
import { access, heldList, mailboxApi, mailboxName, mailHref, myMailboxes, subjectOf } from "./mail-shared.js";
import { renderMessageBody } from "./message-body.js";
import { REUSED_MESSAGE_ID, senderCheckBadge, senderDetail } from "./mail-words.js";
import { composeView, outboundView, sendEditor, sendView } from "./sends.js";
import { savedRepliesView, withSignature } from "./replies.js";
import { inboxView, landingMailbox } from "./inbox.js";
import { conversationView } from "./conversation.js";
import { loadVocabulary } from "./vocabulary.js";

/** An address from a header: the name it gave, with the address beside it. */
function mailAddress(address) {
  if (!address) return h("span", { class: "muted", text: "no sender" });
  if (!address.name) return h("span", { class: "address", text: address.address });
  return h("span", { class: "address" },
    h("span", { class: "address-name", text: address.name }), " ", h("span", { class: "address-email", text: `<${address.address}>` }));
}
const mailAddresses = (list) => list.map((address, index) => [index ? ", " : null, mailAddress(address)]);

/** The recipients the node kept, and how many more the message had (the original has them all). */
function recipients(list, count) {
  if (!count) return null;
  const more = count - list.length;
  return [mailAddresses(list), more > 0 ? h("span", { class: "muted", text: `${list.length ? " and " : ""}${more.toLocaleString()} more` }) : null];
}

/**
 * The columns a list of received messages can show, each a header and a cell
 * made from a message summary (or a search hit, which is one). The subject
 * links to the message in its own mailbox.
 */
const MESSAGE_COLUMNS = {
  from: ["From", (message) => mailAddress(message.from)],
  subject: ["Subject", (message) => h("a", { href: mailHref(message.mailbox_id, message.id), text: subjectOf(message.subject) })],
  mailbox: ["Mailbox", (message) => mailboxName(message.mailbox_id)],
  received: ["Received", (message) => time(message.received_at)],
  attachments: ["Attachments", (message) => (message.attachment_count ? String(message.attachment_count) : h("span", { class: "muted", text: "—" }))],
  // A body match's passage is the stranger's text, so it is text like the rest.
  found: ["Found in", (hit) => (hit.matched_in === "body"
    ? h("span", { class: "snippet" }, h("span", { class: "found-where", text: "Text: " }), hit.snippet ?? "")
    : h("span", { class: "found-where", text: "Sender, recipients or subject" }))],
};

/**
 * Received messages, newest first, a page at a time: `fetchPage(query)` asks the
 * node for one page (`limit` and `cursor` in `query`) and answers its messages
 * and `next_cursor`; `more` names the button that asks for the next. Answers the
 * element and `start()`, which loads the first page (and throws its refusal).
 */
function pagedMessages({ caption, columns, fetchPage, emptyText, more, failure }) {
  const headers = columns.map((key) => MESSAGE_COLUMNS[key][0]);
  const cells = columns.map((key) => MESSAGE_COLUMNS[key][1]);
  // Stacked on a phone, each message a card with its cells named.
  const messages = table(caption, headers, [], { stack: true });
  const body = messages.querySelector("tbody");
  const list = h("div", {}, loading());
  const show = (items) => {
    const rows = items.map((message) => row(...cells.map((cell) => cell(message))));
    append(body, rows);
    rows.forEach(labelCells);
  };
  const pages = pager({
    fetchPage: async (query) => {
      const page = await fetchPage(query);
      return { items: page.messages, next_cursor: page.next_cursor };
    },
    show,
    more,
    failure,
  });
  async function start() {
    show(await pages.first());
    list.replaceChildren(body.rows.length ? messages : empty(emptyText));
  }
  return { element: h("div", {}, list, pages.element), start };
}

/**
 * `#/mail/<mailbox>/<view>…`: a mailbox's conversations (where Mail lands), a
 * conversation (`thr_…`), every message (`messages`), a message (`rcp_…`), a
 * new message, outbound mail, saved replies and signature (`replies`); `#/mail/mailboxes`, the mailboxes and what is
 * held on each; `#/mail/search/<words>` and `#/mail/<mailbox>/search/<words>`,
 * a search of every mailbox or of one.
 */
export async function renderMail(view, [mailboxId, second, third]) {
  // A conversation is asked for beside the mailboxes, not after them: opening
  // one waits for one round trip, not two.
  const conversation = mailboxId && second?.startsWith("thr_") ? api("GET", mailboxApi(mailboxId, "threads", second)) : null;
  conversation?.catch(() => {}); // answered where it is awaited, or not needed
  const mine = await myMailboxes();
  if (!mailboxId) {
    const landing = landingMailbox(mine.readable);
    return landing ? inboxView(view, mine, landing) : mailHome(view, mine);
  }
  if (mailboxId === "mailboxes") return mailHome(view, mine);
  if (mailboxId === "search") return searchView(view, mine, { q: second });
  const mailbox = mine.byId.get(mailboxId);
  if (!mailbox) {
    view.append(breadcrumbs(["Mail", "#/mail"], [mailboxId]), panel("Not one of your mailboxes",
      h("p", { text: "This mailbox does not exist, or you hold nothing on it that lets you read its mail or send from it." }),
      h("p", {}, h("a", { href: mailHref("mailboxes"), text: "Your mailboxes" }))));
    return;
  }
  if (!second) return inboxView(view, mine, mailbox);
  if (second.startsWith("thr_")) return conversationView(view, mailbox, second, conversation);
  if (second === "messages") return mailboxView(view, mine, mailbox);
  if (second === "search") return searchView(view, mine, { mailbox, q: third });
  if (second === "new") return composeView(view, mailbox);
  if (second === "replies") return savedRepliesView(view, mailbox);
  if (second === "outbound") return third ? sendView(view, mailbox, third) : outboundView(view, mailbox);
  return messageView(view, mailbox, second);
}

/** The vocabulary's words for relations, or null (the codes are shown) when it cannot be had. */
const vocabularyOrNull = () => loadVocabulary().catch((error) => {
  if (error instanceof SessionOver) throw error;
  return null;
});

/** `#/mail/mailboxes`: the mailboxes the person reads and sends from, and what they hold on each, in words. */
async function mailHome(view, { readable, sendable }) {
  document.title = "Your mailboxes · Mail · Mailroom";
  const vocabulary = await vocabularyOrNull();
  view.append(breadcrumbs(["Mail", "#/mail"], ["Your mailboxes"]));
  if (readable.length) view.append(panel("Search mail", searchForm(readable)));
  const readRows = readable.map((mailbox) => row(
    h("a", { href: mailHref(mailbox.id), text: mailbox.address }), mailbox.display_name, heldList(mailbox, vocabulary)));
  const sendRows = sendable.map((mailbox) => row(
    mailbox.address,
    mailbox.display_name,
    h("div", { class: "button-row" },
      linkButton(mailHref(mailbox.id, "new"), "New message", { secondary: true, context: ` from ${mailbox.address}` }),
      linkButton(mailHref(mailbox.id, "outbound"), "Outbound", { secondary: true, context: ` for ${mailbox.address}` }),
      linkButton(mailHref(mailbox.id, "replies"), "Saved replies", { secondary: true, context: ` of ${mailbox.address}` }))));
  view.append(
    panel("Mailboxes I can read", readRows.length
      ? table("Mailboxes I can read", ["Mailbox", "Name", "What I hold"], readRows, { stack: true })
      : empty("None yet. Seeing a mailbox's mail needs the right to see who wrote to it, to whom and about what (or to read its mail), which an administrator grants.")),
    panel("Mailboxes I can send from", sendRows.length
      ? table("Mailboxes I can send from", ["Mailbox", "Name", "Actions"], sendRows, { stack: true })
      : empty("None. Drafting mail from a mailbox needs the right to propose mail from it, which an administrator grants.")));
}

/** `#/mail/<mailbox>/messages`: every message the mailbox received, newest first, one by one. */
async function mailboxView(view, mine, mailbox) {
  const can = access(mailbox);
  document.title = `Every message · ${mailbox.address} · Mail · Mailroom`;
  const vocabulary = await vocabularyOrNull();
  const tools = can.propose || can.decide
    ? h("div", { class: "button-row" },
        can.propose ? linkButton(mailHref(mailbox.id, "new"), "New message") : null,
        linkButton(mailHref(mailbox.id, "outbound"), "Outbound", { secondary: true }))
    : null;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Every message"]),
    panel(mailbox.address, facts([["Name", mailbox.display_name], ["I hold", heldList(mailbox, vocabulary)]]), tools));
  if (!can.metadata) {
    view.append(panel("Messages", info(`Seeing this mailbox's mail needs the right to see who wrote to ${mailbox.address}, to whom and about what. You can still draft mail from it and follow it under Outbound.`)));
    return;
  }

  const list = pagedMessages({
    caption: `Messages in ${mailbox.address}, newest first`,
    columns: ["from", "subject", "received", "attachments"],
    fetchPage: (page) => api("GET", `${mailboxApi(mailbox.id, "messages")}${query(page)}`),
    emptyText: "No mail has arrived yet.",
    more: "Older messages",
    failure: "Older messages could not be loaded.",
  });
  view.append(panel(`Search ${mailbox.address}`, searchForm(mine.readable, { mailboxId: mailbox.id })), panel("Messages, newest first", list.element));
  await list.start();
}

/**
 * The search box: words, and where to look (every mailbox the person can read,
 * or one of them). Searching opens the results' own route, so a search can be
 * kept as a link, and Back returns to the one before.
 */
function searchForm(readable, { q = "", mailboxId = null } = {}) {
  const words = h("input", { type: "search", name: "q", autocomplete: "off", spellcheck: "false", required: true, value: q, "data-key": "search" });
  const scope = h("select", { name: "mailbox" },
    h("option", { value: "", text: "Every mailbox I can read" }),
    readable.map((mailbox) => h("option", { value: mailbox.id, text: mailbox.address })));
  if (readable.some((mailbox) => mailbox.id === mailboxId)) scope.value = mailboxId;
  const form = actionForm({
    className: "action-form search-form",
    fields: [
      labelled("Search for", words, "Whole words: add * for a prefix, such as refund*, or “quotes” for a phrase."),
      labelled("In", scope),
    ],
    submit: "Search",
    failureTitle: "The search was not run.",
    async onSubmit() {
      const before = location.hash;
      location.hash = scope.value ? mailHref(scope.value, "search", words.value) : mailHref("search", words.value);
      // The same search again changes no hash, so it is run from here.
      if (location.hash === before) await route();
    },
  });
  form.setAttribute("role", "search");
  form.setAttribute("aria-label", "Search mail");
  return form;
}

/**
 * What a search cannot find, and why: the text of mail where the person reads
 * metadata alone, and anything where they do not read metadata at all.
 */
function searchReach(mailboxes) {
  const headersOnly = mailboxes.filter((mailbox) => access(mailbox).metadata && !access(mailbox).content);
  const unsearched = mailboxes.filter((mailbox) => !access(mailbox).metadata);
  const addresses = (list) => list.map((mailbox) => mailbox.address).join(", ");
  return [
    headersOnly.length
      ? info(`In ${addresses(headersOnly)} you may see who wrote to whom about what, but not read the text: mail there is found by its sender, recipients and subject, never by its text.`)
      : null,
    unsearched.length
      ? info(`${addresses(unsearched)} ${unsearched.length === 1 ? "is" : "are"} not searched: searching a mailbox needs the right to see what mail it holds, which an administrator grants.`)
      : null,
  ];
}

/** Search results, newest first, a page at a time; a refusal is shown in their place. */
async function searchView(view, { readable }, { mailbox = null, q = "" }) {
  const where = mailbox ? mailbox.address : "every mailbox I can read";
  document.title = `${q ? `“${q}” · ` : ""}Search · Mail · Mailroom`;
  view.append(
    breadcrumbs(...[["Mail", "#/mail"], mailbox ? [mailbox.address, mailHref(mailbox.id)] : null, ["Search"]].filter(Boolean)),
    panel("Search mail", searchForm(readable, { q, mailboxId: mailbox?.id })));
  if (!q) return;

  /** What the first page said of the group of mailboxes it searched, where the node searches them a group at a time. */
  let inGroups = null;
  const list = pagedMessages({
    caption: `Mail in ${where} matching “${q}”, newest first`,
    columns: mailbox ? ["from", "subject", "received", "found"] : ["from", "subject", "mailbox", "received", "found"],
    fetchPage: async (page) => {
      const ask = (cursor) => api("GET", `/api/search${query({ q, mailbox: mailbox?.id, ...page, cursor })}`);
      let answer = await ask(page.cursor);
      inGroups ??= answer.mailboxes_searched ?? null;
      // Across more mailboxes than one search asks at once, the node goes
      // through them a group at a time; a group where nothing matched answers
      // an empty page that goes on to the next.
      while (answer.results.length === 0 && answer.next_cursor) answer = await ask(answer.next_cursor);
      return { messages: answer.results, next_cursor: answer.next_cursor };
    },
    emptyText: `Nothing in ${where} matches “${q}”.`,
    more: "More results",
    failure: "More results could not be loaded.",
  });
  const results = h("div", { class: "search-results" }, searchReach(mailbox ? [mailbox] : readable), list.element);
  view.append(panel(`Results for “${q}”`, results));
  try {
    await list.start();
    if (inGroups) {
      const each = inGroups.mailbox_ids.length;
      results.prepend(info(`${inGroups.in_all} of your mailboxes are searched ${each} at a time: results are newest first within each group, and “More results” goes on to the next.`));
    }
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    // Named by the search form's labels above it.
    results.replaceChildren(refusalBox(error, "The search was not run.", { scope: view }));
  }
}

async function messageView(view, mailbox, receiptId) {
  const can = access(mailbox);
  const path = mailboxApi(mailbox.id, "messages", receiptId);
  const message = await api("GET", path);
  const title = subjectOf(message.subject);
  document.title = `${title} · Mail · Mailroom`;

  const reply = can.propose ? h("button", { type: "button", "aria-expanded": "false", text: "Reply" }) : null;
  const original = can.original ? downloadLink(`${path}/original`, "Download the original (.eml)", { asButton: true }) : null;
  const remove = me?.is_admin ? h("button", { type: "button", class: "secondary danger", text: "Delete message" }) : null;
  const buttons = reply || original || remove ? h("div", { class: "button-row" }, reply, original, remove) : null;
  const status = statusArea();
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], [title]),
    panel(title,
      facts([
        ["From", mailAddress(message.from)],
        ["To", recipients(message.to, message.to_count)],
        ["Cc", recipients(message.cc, message.cc_count)],
        ["Sent", message.sent_at ? time(message.sent_at) : null],
        ["Received", time(message.received_at)],
        ["Size", byteSize(message.size)],
        ["Sender", [senderCheckBadge(message.authentication?.sender), " ", h("span", { class: "sender-detail", text: senderDetail(message.authentication) })]],
        ["Message-ID", message.message_id
          ? [code(`<${message.message_id}>`), message.message_id_reused ? h("span", { class: "muted reused", text: ` ${REUSED_MESSAGE_ID}` }) : null]
          : null],
        ["In reply to", message.in_reply_to.length ? message.in_reply_to.map((id, index) => [index ? " " : null, code(`<${id}>`)]) : null],
      ]),
      buttons,
      status));

  // Deleting asks once more, in the page (no dialog): a message deleted cannot be brought back.
  remove?.addEventListener("click", () => {
    const really = h("button", { type: "button", class: "danger", text: "Delete for good" });
    const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
    const question = h("div", { class: "confirm", role: "group", "aria-label": "Delete this message?" },
      h("p", { text: `Delete this message from ${mailbox.address} for good? Its text, attachments and original are removed from the node and cannot be brought back. Replies to it keep their threading headers.` }),
      h("div", { class: "button-row" }, really, keep));
    buttons.replaceWith(question);
    really.focus();
    keep.addEventListener("click", () => {
      question.replaceWith(buttons);
      remove.focus();
    });
    really.addEventListener("click", () => perform(status, [really, keep], async () => {
      const deleted = await api("DELETE", path);
      const original = {
        kept_for_other_copies: " Its original stays for the copy another mailbox received.",
        deleted_later: " Its original is removed by the node's scheduled upkeep.",
      }[deleted.original] ?? "";
      const back = h("a", { href: mailHref(mailbox.id), text: `Back to ${mailbox.address}` });
      view.replaceChildren(
        breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Deleted"]),
        panel("Message deleted",
          h("p", { role: "status", text: `“${title}” was deleted from ${mailbox.address}.${original}` }),
          h("p", {}, back)));
      back.focus();
      return null;
    }, "The message was not deleted."));
  });

  const text = h("div", {}, can.content ? loading() : null);
  view.append(panel("Text", text));
  if (message.attachments.length) {
    const unlisted = message.attachment_count - message.attachments.length;
    view.append(panel("Attachments",
      h("ul", { class: "attachments" }, message.attachments.map((attachment) => {
        const name = attachment.name ?? `Attachment ${attachment.index + 1}`;
        return h("li", {},
          can.content ? downloadLink(`${path}/attachments/${attachment.index}`, name) : h("span", { class: "attachment-name", text: name }),
          h("span", { class: "muted", text: ` ${attachment.content_type}, ${byteSize(attachment.size)}` }));
      })),
      unlisted > 0 ? h("p", { class: "muted", text: `And ${unlisted.toLocaleString()} more, which only the original holds.` }) : null,
      can.content ? null : h("p", { class: "muted", text: "Downloading attachments needs the right to read the mail's text and attachments here, which an administrator grants." })));
  }

  if (reply) {
    const replyPanel = panel(`Reply to ${message.from?.address ?? "the sender"}`);
    replyPanel.id = uniqueId("reply");
    replyPanel.hidden = true;
    reply.setAttribute("aria-controls", replyPanel.id);
    // Reply drafts the answer at once, as a mail client would (the node fills
    // its recipients from Reply-To and its subject), or resumes the one begun.
    let editor = null;
    reply.addEventListener("click", () => perform(status, [reply], async () => {
      if (!editor) {
        const begun = await api("POST", mailboxApi(mailbox.id, "sends"), { reply_to: message.id });
        const draft = { ...(await withSignature(mailbox, begun, message.from)), resumed: begun.resumed };
        editor = replyPanel.appendChild(sendEditor(mailbox, {
          send: draft,
          notice: draft.resumed ? info(h("strong", { text: "You had already begun a reply in this conversation:" }), " here it is, as you left it.") : null,
        }));
      }
      replyPanel.hidden = false;
      reply.setAttribute("aria-expanded", "true");
      (replyPanel.querySelector("textarea") ?? replyPanel).focus();
      return null;
    }, "The reply was not begun."));
    view.append(replyPanel);
  }

  if (!can.content) {
    text.append(info(h("strong", { text: "Reading the text needs the right to read mail's text here." }),
      ` In ${mailbox.address} you may see that this message exists, who sent it, to whom, its subject, date and size. An administrator can grant reading the text.`));
    return;
  }
  try {
    replace(text, await renderMessageBody(await api("GET", `${path}/body?html=true`), message.from?.address));
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    text.replaceChildren(refusalBox(error, "The text could not be shown."));
  }
}

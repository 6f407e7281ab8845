// Notifications (issue 15): the signed-in person's feed, newest first: approvals
// waiting, their sends refused, sent or not delivered, conversations assigned to
// them, mentions in a conversation's notes, reminders due and, for
// administrators, an audit chain that failed verification, each in a sentence with a link to what it is about.
// Opening one marks it read; each can be marked read or unread again, all at
// once read; the feed can show only the unread. The navigation shows how many
// are unread (unreadCount(), for main.js). The feed follows the person's own
// stream (OWN_CHANGED): what is added, or marked in another tab, shows without
// a reload, the rows that did not change left as they are.
//
// The keys of NOTIFICATION_KINDS are the contract's NotificationKind: a test in
// src/interface.rs holds them to it, so a kind the node can answer has words here.

import { append, h, hidden, redraw, replace, shortTime, uniqueId } from "./dom.js";
import { followOwnWhileShown } from "./session.js";
import { api, query, SessionOver } from "./api.js";
import { empty, loading, panel, perform, refusalBox, statusArea } from "./shared.js";
import { pager } from "./pager.js";
import { mailHref, subjectOf } from "./mail-shared.js";

/** Said by the page when marking changed how many are unread; `detail` is the node's new count. */
export const NOTIFICATIONS_CHANGED = "mailroom:notifications-changed";

/** How many notifications are unread and still need the signed-in person. */
export async function unreadCount() {
  return (await api("GET", `/api/me/notifications${query({ limit: 1 })}`)).unread_count;
}

const quoted = (title) => `“${subjectOf(title)}”`;
const ended = (text) => (/[.!?…]["”’)]?$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);
const sendHref = (item) => mailHref(item.mailbox_id, "outbound", item.object_id);
const inMailbox = (item, word) => (item.mailbox_address ? ` ${word} ${item.mailbox_address}` : "");

/**
 * Each kind: its badge (`words`, `tone`), the sentence it is said in (`says`,
 * given who caused it by name), any line under it (`more`), and where it
 * leads (`link`: href and what is there).
 */
const NOTIFICATION_KINDS = {
  approval_waiting: {
    words: (item) => (item.resolved ? "No longer waiting" : "Needs a decision"),
    tone: (item) => (item.resolved ? "quiet" : "wait"),
    says: (item, who) => `${who} asked for approval of ${quoted(item.title)}${inMailbox(item, "from")}.`,
    more: (item) => (item.resolved ? "Decided or taken back: nothing is left to do." : null),
    link: (item) => (item.resolved ? [sendHref(item), "the send"] : ["#/approvals", "Approvals"]),
  },
  send_refused: {
    words: () => "Refused",
    tone: () => "off",
    says: (item, who) => (item.detail ? `${who} refused your send ${quoted(item.title)}: ${ended(item.detail)}` : `${who} refused your send ${quoted(item.title)}.`),
    link: (item) => [sendHref(item), "the send"],
  },
  send_sent: {
    words: () => "Sent",
    tone: () => "on",
    says: (item) => `Your send ${quoted(item.title)} was sent${item.actor_name ? `, approved by ${item.actor_name}` : ""}.`,
    link: (item) => [sendHref(item), "the send"],
  },
  send_failed: {
    words: () => "Not delivered",
    tone: () => "off",
    says: (item) => `Your send ${quoted(item.title)} was not delivered to everyone.`,
    more: (item) => (item.detail ? ended(item.detail.charAt(0).toUpperCase() + item.detail.slice(1)) : null),
    link: (item) => [sendHref(item), "the send"],
  },
  conversation_assigned: {
    words: () => "Assigned to you",
    tone: () => "wait",
    says: (item, who) => `${who} assigned you ${quoted(item.title)}${inMailbox(item, "in")}.`,
    link: (item) => [mailHref(item.mailbox_id, item.object_id), "the conversation"],
  },
  note_mention: {
    words: () => "Mentioned",
    tone: () => "wait",
    says: (item, who) => `${who} mentioned you in a note on ${quoted(item.title)}${inMailbox(item, "in")}.`,
    link: (item) => [mailHref(item.mailbox_id, item.object_id), "the conversation"],
  },
  snooze_ended: {
    words: () => "Back from snooze",
    tone: () => "wait",
    says: (item) => `${quoted(item.title)} is back from snooze${inMailbox(item, "in")}.`,
    link: (item) => [mailHref(item.mailbox_id, item.object_id), "the conversation"],
  },
  butler_effect_skipped: {
    words: () => "Butler skipped",
    tone: () => "off",
    says: (item, who) => `${who}, a butler you sponsor, skipped an effect on ${quoted(item.title)}${inMailbox(item, "in")}.`,
    more: (item) => (item.detail ? ended(item.detail.charAt(0).toUpperCase() + item.detail.slice(1)) : null),
    link: (item) => [mailHref(item.mailbox_id, item.object_id), "the conversation"],
  },
  reminder_due: {
    words: () => "Reminder",
    tone: () => "wait",
    says: (item) => `Reminder due: ${item.title}`,
    more: (item) => item.detail ?? null,
    link: () => ["#/reminders", "Reminders"],
  },
  export_ready: {
    words: () => "Export ready",
    tone: () => "on",
    says: (item) => `Your export of ${item.title} is ready to download.`,
    more: (item) => (item.detail ? ended(item.detail.charAt(0).toUpperCase() + item.detail.slice(1)) : null),
    link: (item) => [`#/exports/${encodeURIComponent(item.object_id)}`, "the export"],
  },
  audit_chain_broken: {
    words: () => "Audit alarm",
    tone: () => "off",
    says: () => "The audit chain does not verify, so no checkpoint was signed.",
    more: (item) => (item.detail ? ended(item.detail.charAt(0).toUpperCase() + item.detail.slice(1)) : null),
    link: () => ["#/audit", "the audit trail"],
  },
  database_nearly_full: {
    words: () => "Storage alarm",
    tone: () => "off",
    says: (item) => item.title,
    more: (item) => (item.detail ? ended(item.detail.charAt(0).toUpperCase() + item.detail.slice(1)) : null),
    link: () => ["#/mailboxes", "the mailboxes"],
  },
};

const UNKNOWN = { words: () => "Notification", tone: () => "quiet", says: (item) => item.title, link: () => ["#/notifications", "Notifications"] };

/** Marks notifications read (`ids`, or every one), telling the page the new count. */
async function markRead(body) {
  const marked = await api("POST", "/api/me/notifications/read", body);
  document.dispatchEvent(new CustomEvent(NOTIFICATIONS_CHANGED, { detail: marked.unread_count }));
  return marked;
}

export async function renderNotifications(view) {
  const onlyUnread = h("input", { type: "checkbox", id: uniqueId("feed-unread") });
  const markAll = h("button", { type: "button", class: "secondary", text: "Mark all read" });
  const status = statusArea();
  const list = h("ul", { class: "notifications", "aria-label": "Notifications, newest first" });
  const shown = h("div", { class: "feed-list" }, loading());
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `/api/me/notifications${query({ ...asked, unread: onlyUnread.checked ? "true" : null })}`);
      return { items: page.notifications, next_cursor: page.next_cursor };
    },
    show: (items) => append(list, items.map(item)),
    more: "Show older notifications",
    failure: "Older notifications could not be loaded.",
  });

  function item(notification) {
    const kind = NOTIFICATION_KINDS[notification.kind] ?? UNKNOWN;
    const [href, where] = kind.link(notification);
    let read = notification.read;
    const who = notification.actor_name ?? (notification.actor ? "Someone" : "The node");
    const link = h("a", { href, title: `Open ${where}` }, hidden(read ? "" : "Unread: "), kind.says(notification, who));
    const toggle = h("button", { type: "button", class: "secondary" });
    const rowStatus = statusArea();
    const row = h("li", { "data-notification": notification.id },
      h("span", { class: "unread-dot", "aria-hidden": "true" }),
      h("p", { class: "notification-says" }, link),
      kind.more?.(notification) ? h("p", { class: "notification-more", text: kind.more(notification) }) : null,
      h("div", { class: "notification-meta" },
        h("span", { class: `badge ${kind.tone(notification)}`, text: kind.words(notification) }),
        shortTime(notification.at),
        toggle),
      rowStatus);

    function showRead() {
      row.className = ["notification", read ? "read" : "unread", notification.resolved ? "resolved" : null].filter(Boolean).join(" ");
      link.firstChild.textContent = read ? "" : "Unread: ";
      replace(toggle, read ? "Mark unread" : "Mark read", hidden(` “${subjectOf(notification.title)}”`));
    }
    showRead();

    // Opening one marks it read first, so the count the next view shows is right.
    link.addEventListener("click", async (event) => {
      if (read || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      event.preventDefault();
      try {
        await markRead({ notification_ids: [notification.id] });
        read = true;
        showRead();
      } catch (error) {
        if (error instanceof SessionOver) return;
      }
      location.hash = href;
    });
    toggle.addEventListener("click", () => perform(rowStatus, [toggle], async () => {
      const marked = read
        ? await api("DELETE", `/api/me/notifications/${encodeURIComponent(notification.id)}/read`)
        : await markRead({ notification_ids: [notification.id] });
      if (read) document.dispatchEvent(new CustomEvent(NOTIFICATIONS_CHANGED, { detail: marked.unread_count }));
      read = !read;
      showRead();
      toggle.focus();
      return null;
    }, () => (read ? "It was not marked unread." : "It was not marked read.")));
    return row;
  }

  let loads = 0;
  /** Reads the first page again; `quietly`, because something changed rather than because the person asked. */
  async function load({ quietly = false } = {}) {
    const mine = ++loads;
    if (!quietly) shown.setAttribute("aria-busy", "true");
    try {
      const first = await pages.first();
      if (mine !== loads) return;
      // Rows that did not change stay as they are (and the focus in them).
      redraw(list, "data-notification", first, { key: (notification) => notification.id, draw: item, sameAs: (notification) => JSON.stringify(notification) });
      replace(shown, first.length ? list : empty(onlyUnread.checked ? "Nothing unread." : "Nothing yet. Approvals waiting for you, what became of your sends, conversations assigned to you and reminders due are told here."));
    } catch (error) {
      if (quietly) return;
      if (error instanceof SessionOver) throw error;
      replace(shown, refusalBox(error, "Your notifications could not be shown."));
    } finally {
      if (mine === loads) shown.removeAttribute("aria-busy");
    }
  }

  onlyUnread.addEventListener("change", () => load());
  markAll.addEventListener("click", () => perform(status, [markAll], async () => {
    const marked = await markRead({ all: true });
    await load();
    return marked.marked ? `${marked.marked === 1 ? "One notification" : `${marked.marked.toLocaleString()} notifications`} marked read.` : "Nothing was unread.";
  }, "Your notifications were not marked read."));

  view.append(panel("What needs me, and what I am waiting to hear",
    h("div", { class: "feed-tools" },
      h("div", { class: "field check" }, onlyUnread, h("label", { for: onlyUnread.id, text: "Only unread" })),
      markAll),
    status, shown, pages.element));
  await load();
  // What is added to the feed, or marked elsewhere (another tab, an agent), shows without a reload.
  followOwnWhileShown(view, () => load({ quietly: true }));
}

// The inbox (SPEC §8, issue 14): a mailbox's conversations, latest activity
// first, a page at a time: who wrote, about what, the start of the latest
// message, how many messages, when it last moved, where it stands, who has it,
// whether the signed-in person has read it, its labels, and whether a sender in
// it was not verified, and whether it carries attachments. Filtered by status,
// assignee, label (a label's chip filters by it), unread and words; several
// can be selected and changed at once (inbox-bulk.js). The filters, how
// many pages were shown and the conversation last opened are kept per mailbox
// while the page is open, so coming back from a conversation finds the list as
// it was left, that conversation in view. Opening Mail lands here (mail.js).
//
// While a list is shown, it follows what happens in its mailbox (the node's
// live stream): mail received, a conversation triaged or read, a send
// moving, by anyone, has the list read again a moment later (a draft saving
// itself changes no row, and reads nothing), drawn over
// what is shown without a flash, the person's place, focus and filters kept.
// A conversation someone else is writing a reply to says "writing…" (their
// pages tell it on the same stream; it is not a change, and reads nothing).
//
// Everything in a row but the counts and dates was written by strangers, so it
// is set as text, as everywhere.

import { append, comingMomentText, h, hidden, labelled, linkButton, redraw, shortTime, uniqueId } from "./dom.js";
import { api, query, SessionOver } from "./api.js";
import { empty, info, loading, panel, refusalBox, statusArea } from "./shared.js";
import { pager } from "./pager.js";
import { access, actorsWords, followMailbox, labelChips, mailboxApi, mailHref, subjectOf } from "./mail-shared.js";
import { me } from "./session.js";
import { directory } from "./names.js";
import { counted, SENDER_CHECKS, THREAD_STATUSES, threadStatusBadge } from "./mail-words.js";
import { bulkBar, pickBox } from "./inbox-bulk.js";
import { NOTE_CHANGES } from "./notes.js";
import { personZone } from "./snooze.js";

/** The filters a list starts with: open conversations, whoever has them, read or not. */
const FIRST_FILTERS = { status: "open", assignee: "", label: "", unread: false, q: "" };

/** The filters last used on each mailbox's list, by mailbox id. */
const filtersByMailbox = new Map();
const filtersOf = (mailboxId) => ({ ...FIRST_FILTERS, ...filtersByMailbox.get(mailboxId) });
/** How many pages of each mailbox's list were shown (More), by mailbox id; one when absent. */
const pagesByMailbox = new Map();
/** The conversation last opened from each mailbox's list, by mailbox id. */
const openedByMailbox = new Map();

/** The mailbox last opened, where Mail lands next time (while the page is open). */
let lastMailbox = null;

/** The mailbox Mail opens on: the last one opened, else the first whose conversations the person reads. */
export function landingMailbox(readable) {
  const listed = readable.filter((mailbox) => access(mailbox).conversations);
  return listed.find((mailbox) => mailbox.id === lastMailbox) ?? listed[0] ?? null;
}


/** Who wrote in a conversation, by name, latest first, and how many more. */
function participantsOf(thread) {
  if (!thread.participants.length) return h("span", { class: "muted", text: "Sent from this mailbox" });
  const names = thread.participants.map((address) => address.name || address.address).join(", ");
  const more = thread.participant_count - thread.participants.length;
  return [names, more > 0 ? h("span", { class: "muted", text: ` and ${counted(more, "other")}` }) : null];
}

/** The status filter's choice that lists the snoozed conversations instead (they have a status of their own too). */
const SNOOZED = "snoozed";

/** The person's time zone, once known, to say when a snoozed conversation wakes. */
let zone;

/** One conversation in the list; the subject links to it, and the whole row opens it; `pick`, where given, is its box to select it by. */
function threadItem(mailbox, thread, pick) {
  const subject = subjectOf(thread.subject);
  return h("li", { class: `thread${thread.unread ? " unread" : ""}${pick ? " pickable" : ""}`, "data-thread": thread.id },
    pick,
    h("p", { class: "thread-who" },
      thread.unread ? h("span", { class: "unread-dot", "aria-hidden": "true" }) : null,
      participantsOf(thread)),
    h("p", { class: "thread-when" }, shortTime(thread.last_activity_at)),
    h("p", { class: "thread-subject" },
      h("a", { href: mailHref(mailbox.id, thread.id) }, thread.unread ? hidden("Unread: ") : null, subject)),
    thread.snippet ? h("p", { class: "thread-snippet", text: thread.snippet }) : null,
    h("div", { class: "thread-meta" },
      threadStatusBadge(thread.status),
      thread.snoozed_until ? h("span", { class: "badge", text: `Snoozed until ${comingMomentText(thread.snoozed_until, zone)}` }) : null,
      thread.has_attachments
        ? h("span", { class: "thread-attachments", title: "Has attachments" }, h("span", { "aria-hidden": "true", text: "📎" }), hidden("Has attachments"))
        : null,
      thread.has_unauthenticated
        ? h("span", { class: "badge warn", title: SENDER_CHECKS.unverified.meaning, text: "Sender not verified" })
        : null,
      h("span", { class: "thread-count", text: counted(thread.message_count, "message") }),
      thread.assignee
        ? h("span", { class: "thread-assignee", text: `Assigned to ${thread.assignee_name ?? "someone"}` })
        : h("span", { class: "thread-assignee muted", text: "Unassigned" }),
      thread.labels.length ? labelChips(thread.labels, (label) => h("button", {
        type: "button", class: "label-chip", "data-label": label, title: `Show only conversations labelled “${label}”`, text: label,
      })) : null));
}

/**
 * The conversations a list shows: not those left with no message in them (every
 * message deleted; the node keeps the conversation so that a late reply still
 * finds it).
 */
const shownOf = (threads) => threads.filter((thread) => thread.message_count > 0);

/** What an empty list says, given its filters. */
function nothing(filters) {
  if (filters.q) return `No conversation matches “${filters.q}” with these filters.`;
  if (filters.status === SNOOZED) return "No snoozed conversations with these filters.";
  const status = filters.status ? THREAD_STATUSES[filters.status]?.words.toLowerCase() : null;
  const parts = [filters.unread ? "unread" : null, status].filter(Boolean).join(" ");
  const whose = { me: " assigned to you", none: " assigned to nobody" }[filters.assignee] ?? "";
  const labelled = filters.label ? ` labelled “${filters.label}”` : "";
  return `No ${parts ? `${parts} ` : ""}conversations${whose}${labelled}.`;
}

/** The filters: status, assignee, label, unread only, and words; a change shows the list again. */
function filterForm(filters, onChange) {
  const status = h("select", { name: "status" },
    Object.entries(THREAD_STATUSES).map(([name, { words }]) => h("option", { value: name, text: words })),
    h("option", { value: "", text: "Every status" }),
    h("option", { value: SNOOZED, text: "Snoozed" }));
  status.value = filters.status;
  const assignee = h("select", { name: "assignee" },
    h("option", { value: "", text: "Anyone" }),
    h("option", { value: "me", text: "Me" }),
    h("option", { value: "none", text: "Nobody" }));
  assignee.value = filters.assignee;
  const label = h("input", { type: "search", name: "label", autocomplete: "off", spellcheck: "false", maxlength: 40, value: filters.label, placeholder: "Any label" });
  const unread = h("input", { type: "checkbox", name: "unread" });
  unread.checked = filters.unread;
  const words = h("input", { type: "search", name: "q", autocomplete: "off", spellcheck: "false", value: filters.q, placeholder: "Sender, recipient or subject", id: uniqueId("find"), "data-key": "search" });
  const find = h("button", { type: "submit", class: "secondary", text: "Find" });
  unread.id = uniqueId("unread");

  const values = () => ({ status: status.value, assignee: assignee.value, label: label.value.trim(), unread: unread.checked, q: words.value.trim() });
  const form = h("form", { class: "thread-filters", role: "search", "aria-label": "Filter conversations" },
    labelled("Status", status),
    labelled("Assigned to", assignee),
    labelled("Label", label),
    h("div", { class: "field check" }, unread, h("label", { for: unread.id, text: "Unread only" })),
    h("div", { class: "field find" }, h("label", { for: words.id, text: "Find" }), h("div", { class: "find-row" }, words, find)));
  for (const control of [status, assignee, label, unread]) control.addEventListener("change", () => onChange(values()));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onChange(values());
  });
  return form;
}

/** The mailboxes whose conversations the person reads, to move between; none when there is one. */
function mailboxSwitcher(readable, current) {
  const listed = readable.filter((mailbox) => access(mailbox).conversations);
  if (listed.length < 2) return null;
  return h("nav", { class: "subnav mailbox-switcher", "aria-label": "Mailboxes" },
    h("ul", {}, listed.map((mailbox) => h("li", {},
      h("a", { href: mailHref(mailbox.id), "aria-current": mailbox.id === current.id ? "page" : null, title: mailbox.display_name, text: mailbox.address })))));
}

/** `#/mail/<mailbox>`: the mailbox's conversations. */
export async function inboxView(view, { readable }, mailbox) {
  const can = access(mailbox);
  lastMailbox = mailbox.id;
  document.title = `${mailbox.address} · Mail · Mailroom`;

  const tools = h("div", { class: "button-row inbox-tools" },
    can.propose ? linkButton(mailHref(mailbox.id, "new"), "New message") : null,
    can.propose || can.decide ? linkButton(mailHref(mailbox.id, "outbound"), "Outbound", { secondary: true }) : null);
  const more = h("p", { class: "inbox-more" },
    can.metadata ? [h("a", { href: mailHref(mailbox.id, "messages"), text: "Every message" }), " · "] : null,
    can.metadata ? [h("a", { href: mailHref("search"), text: "Search the text of mail" }), " · "] : null,
    h("a", { href: mailHref("mailboxes"), text: "Your mailboxes and what you hold" }));
  const heading = panel(mailbox.display_name || mailbox.address,
    h("p", { class: "mailbox-address muted", text: mailbox.address }), tools, more);

  append(view, [mailboxSwitcher(readable, mailbox), heading]);
  if (!can.conversations) {
    view.append(panel("Conversations", info(`Seeing this mailbox's mail needs the right to see who wrote to ${mailbox.address}, to whom and about what, which an administrator grants. You can still draft mail from it and follow it under Outbound.`)));
    return;
  }

  let filters = filtersOf(mailbox.id);
  const list = h("ul", { class: "threads", "aria-label": `Conversations in ${mailbox.address}`, "data-key-list": true });
  const shown = h("div", { class: "thread-list" }, loading());
  /** The conversations shown, in order. */
  let listed = [];
  /** The conversations selected, by id: kept while the list is drawn again, so a change by someone else keeps them. */
  const selected = new Set();
  const toggle = (id, checked) => {
    if (checked) selected.add(id);
    else selected.delete(id);
    bulk?.show();
  };
  const bulk = can.triage ? bulkBar(mailbox, selected, {
    listed: () => listed,
    // Each row's box as the selection now is (a row kept as it was by redraw() keeps its box as it was).
    mark: () => {
      for (const box of list.querySelectorAll("li[data-thread] .thread-pick-box")) box.checked = selected.has(box.closest("li").dataset.thread);
    },
    changed: () => refresh(pagesByMailbox.get(mailbox.id) ?? 1, { quietly: true }),
  }) : null;
  /** Shows `threads` (the list read again, or with a page more) over what is shown, keeping the rows that did not change. */
  function showThreads(threads) {
    listed = threads;
    for (const thread of threads) directory.rememberName(thread.assignee, thread.assignee_name);
    // One no longer shown (closed by someone else under the Open filter) can no longer be seen to be changed.
    const shownIds = new Set(threads.map((thread) => thread.id));
    for (const id of selected) if (!shownIds.has(id)) selected.delete(id);
    redraw(list, "data-thread", threads, {
      key: (thread) => thread.id,
      draw: (thread) => threadItem(mailbox, thread, bulk ? pickBox(thread, selected, toggle) : null),
      sameAs: (thread) => JSON.stringify(thread),
    });
    bulk?.show();
    showWriting();
    if (!threads.length) shown.replaceChildren(empty(nothing(filters)));
    else if (list.parentNode !== shown) shown.replaceChildren(list);
  }

  /** Who else is writing a reply where, as their pages tell: by conversation, the writers' ids. */
  const writersByThread = new Map();
  /** Marks each row someone else is writing a reply to (a row drawn again has lost its mark). */
  function showWriting() {
    for (const row of list.children) {
      const writers = [...(writersByThread.get(row.dataset.thread) ?? [])];
      let marker = row.querySelector(".thread-writing");
      if (!writers.length) {
        marker?.remove();
        continue;
      }
      const words = `${actorsWords(writers)} ${writers.length > 1 ? "are writing replies" : "is writing a reply"}`;
      if (marker?.title === words) continue;
      marker ??= row.querySelector(".thread-meta").insertAdjacentElement("afterbegin", h("span", { class: "thread-writing" }));
      marker.title = words;
      marker.replaceChildren(hidden(`${words}.`), h("span", { "aria-hidden": "true", text: "writing…" }));
    }
  }
  function toldPresence({ object, actor, activity }) {
    if (actor === me?.id) return;
    const writers = writersByThread.get(object) ?? new Set();
    if (activity === "writing") writers.add(actor);
    else writers.delete(actor);
    if (writers.size) writersByThread.set(object, writers);
    else writersByThread.delete(object);
    showWriting();
  }
  const pages = pager({
    fetchPage: async (page) => {
      const answer = await api("GET", `${mailboxApi(mailbox.id, "threads")}${query({
        status: filters.status && filters.status !== SNOOZED ? filters.status : undefined,
        snoozed: filters.status === SNOOZED ? "true" : undefined,
        assignee: filters.assignee || undefined,
        label: filters.label || undefined,
        unread: filters.unread ? "true" : undefined,
        q: filters.q || undefined,
        ...page,
      })}`);
      // Asked only once a snoozed conversation is to be shown, so an ordinary list asks nothing more.
      if (!zone && answer.threads.some((thread) => thread.snoozed_until)) zone = await personZone();
      return { items: answer.threads, next_cursor: answer.next_cursor };
    },
    show: (threads) => {
      // One whose last activity moved it since the page before was read is already shown.
      const already = new Set(listed.map((thread) => thread.id));
      showThreads([...listed, ...shownOf(threads).filter((thread) => !already.has(thread.id))]);
      pagesByMailbox.set(mailbox.id, (pagesByMailbox.get(mailbox.id) ?? 1) + 1);
    },
    more: "More conversations",
    failure: "More conversations could not be loaded.",
  });

  // While a list is asked for again, the one shown stays (marked busy), so the
  // page does not jump with each change of filter. Read again `quietly`, because
  // the mailbox changed rather than because the person asked, nothing is marked,
  // and a refusal leaves the list as it was: the next change, or the live
  // stream opening again, reads it again.
  let asked = 0;
  async function refresh(count = 1, { quietly = false } = {}) {
    const mine = ++asked;
    if (!quietly) shown.setAttribute("aria-busy", "true");
    try {
      const threads = await pages.first(count);
      if (mine === asked) showThreads(shownOf(threads));
    } catch (error) {
      if (error instanceof SessionOver) {
        if (quietly) return;
        throw error;
      }
      // Read quietly while the person waits for a list (marked busy), the refusal is theirs.
      if (mine === asked && shown.hasAttribute("aria-busy")) shown.replaceChildren(refusalBox(error, "The conversations could not be listed."));
    } finally {
      if (mine === asked) shown.removeAttribute("aria-busy");
    }
  }

  const form = filterForm(filters, (next) => {
    filters = next;
    filtersByMailbox.set(mailbox.id, next);
    pagesByMailbox.delete(mailbox.id);
    refresh();
  });
  list.addEventListener("click", (event) => {
    // A label's chip filters the list by it (the filter's field says so, and clears it).
    const chip = event.target.closest("button[data-label]");
    if (chip) {
      form.elements.label.value = chip.dataset.label;
      form.requestSubmit();
      return;
    }
    const row = event.target.closest("li[data-thread]");
    if (row) openedByMailbox.set(mailbox.id, row.dataset.thread);
  });
  const unfollowed = statusArea();
  view.append(panel("Conversations", form, bulk?.element, shown, pages.element, unfollowed));
  // As it was left: as many pages, and the conversation last opened in view.
  await refresh(pagesByMailbox.get(mailbox.id) ?? 1);
  const opened = [...list.children].find((row) => row.dataset.thread === openedByMailbox.get(mailbox.id));
  opened?.scrollIntoView({ block: "center" });
  followMailbox(view, mailbox, {
    // As many pages as are shown once a page the person asked for has come.
    readAgain: async () => {
      await pages.settled();
      await refresh(pagesByMailbox.get(mailbox.id) ?? 1, { quietly: true });
    },
    // A draft saving itself changes no conversation's summary (its text is
    // in none, and it counts once sealed), nor does a note, so the list reads
    // nothing for them.
    accept: (event) => event.kind !== "update_draft" && !NOTE_CHANGES.has(event.kind),
    onPresence: toldPresence,
    // Opening again, the node tells afresh who is writing: who stopped while it was closed was not told.
    onOpen: () => {
      writersByThread.clear();
      showWriting();
    },
    noLonger: () => unfollowed.replaceChildren(h("p", { class: "muted", text: "This list no longer follows the mailbox as it changes: you may no longer see its mail. Reload the page to see what you hold." })),
  });
}

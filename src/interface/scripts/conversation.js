// A conversation (SPEC §8, issue 14): every message a mailbox received and sent
// in it, in the order they happened, each with who wrote it (by name), when,
// and, for a received one, how far its sender was authenticated, in words
// (SPF, DKIM and DMARC on request); its attachments and its text. Opening one
// marks it read for the signed-in person (Mark unread undoes it); its status,
// assignee and labels are set here, and it is snoozed (snooze.js); Reply and Reply all draft the answer, resuming the
// draft already begun rather than starting a second (decision 0020), and a
// refused send shows its reason with Write it again.
//
// While it is shown, it follows its mailbox's live stream: whatever anyone
// changes in it (a message received, its status, assignee, labels or read
// state, a draft or a send moving) is read again a moment later and drawn over
// what is shown, message by message, leaving alone the reply being written and
// whatever the person has open or in focus. On the same stream it tells the
// others on the mailbox that the person is reading it, or writing a reply, and
// says, near the reply, who else is (so that two people do not answer the same
// customer twice); that is never a change, and has nothing read again.
//
// Its internal notes (notes.js) are drawn among the messages, and written
// below them, where the person may read them.
//
// A received message's text is a stranger's: it is set as text, and drawn in
// one place, messageBody(); its HTML, where it has some, follows formatted in
// the sandboxed frame message-body.js draws (formattedWhenItCame()).

import { append, breadcrumbs, byteSize, h, hidden, inOrder, labelled, redraw, replace, time, uniqueId } from "./dom.js";
import { holdWhileShown, me } from "./session.js";
import { api, segment, SessionOver } from "./api.js";
import { downloadLink, info, panel, perform, refusalBox, statusArea } from "./shared.js";
import { directory } from "./names.js";
import { access, followMailbox, labelChips, mailboxApi, mailHref, presenceIn, presenceWords, subjectOf } from "./mail-shared.js";
import {
  asLines, counted, parseRecipient, recipientLabels, recipientText, resultWords, REUSED_MESSAGE_ID, senderCheckBadge,
  senderDetail, senderWords, sendStateBadge, THREAD_STATUSES, threadStatusBadge,
} from "./mail-words.js";
import { refusedNotice, sendEditor } from "./sends.js";
import { renderMessageBody } from "./message-body.js";
import { withSignature } from "./replies.js";
import { conversationNotes, NOTE_CHANGES } from "./notes.js";
import { snoozeControl } from "./snooze.js";

/**
 * A received message's text, as a conversation shows it: paragraphs kept, in
 * the page's own font.
 */
function messageBody(message) {
  return [
    h("div", { class: "entry-text", text: asLines(message.text) }),
    message.truncated ? info("The text was cut at the node's limit; the original has all of it.") : null,
  ];
}

/**
 * A received message's body in a conversation: its text at once, from the
 * conversation's own answer, then, where the message came with HTML and it
 * comes into view, that HTML formatted (message-body.js: sanitised, in its sandboxed frame, remote
 * images on asking) once its body has come. The conversation is drawn
 * without waiting for any message's HTML; each follows as it arrives, and a
 * message whose body cannot be read keeps its text.
 */
function formattedWhenItCame(message, path) {
  const holder = h("div", { class: "entry-body" }, messageBody(message));
  // Asked for as the message comes into view, not for every message of a
  // long conversation at once: each body is a read of its original and an
  // entry in the audit trail.
  const seen = new IntersectionObserver((entries) => {
    if (!entries.some((entry) => entry.isIntersecting)) return;
    seen.disconnect();
    api("GET", `${path}/body?html=true`)
      .then(async (body) => {
        if (typeof body.html === "string") holder.replaceChildren(await renderMessageBody(body, message.from?.address));
      })
      .catch(() => {}); // the text stays; a session that ended is met by the next action
  }, { rootMargin: "200px" });
  seen.observe(holder);
  return holder;
}

/** An address from a header, for reading: the name, with the address beside it. */
const addressLabel = (address) => recipientLabels([recipientText(address)]);
const addressLabels = (list) => recipientLabels(list.map(recipientText));

/** When a send last moved: dispatched, decided, submitted or edited. */
const lastChange = (send) => send.dispatched_at ?? send.decided_at ?? send.submitted_at ?? send.updated_at;

/** Everyone a received message went to but the mailbox itself, as recipients to copy in a reply to all. */
function othersOn(message, mailbox, already) {
  const taken = new Set([mailbox.address.toLowerCase(), ...already.map((recipient) => parseRecipient(recipient).address.toLowerCase())]);
  const others = [];
  for (const address of [...message.to, ...message.cc]) {
    const key = address.address.toLowerCase();
    if (taken.has(key)) continue;
    taken.add(key);
    others.push(recipientText(address));
  }
  return others;
}

/** How the sender of a received message was checked: the verdict in words, and the three results on request. */
function senderChecks(message) {
  const results = message.authentication ?? {};
  return h("details", { class: "sender-checks" },
    h("summary", { text: "How the sender was checked" }),
    h("p", { class: "muted sender-detail", text: senderDetail(results) }),
    h("dl", { class: "facts" },
      h("dt", { text: "SPF (the sending server)" }), h("dd", { text: resultWords(results.spf) }),
      h("dt", { text: "DKIM (the message's signature)" }), h("dd", { text: resultWords(results.dkim) }),
      h("dt", { text: "DMARC (the From domain's verdict)" }), h("dd", { text: resultWords(results.dmarc) })));
}

/** People and agents who work the mailbox (hold send.propose on it), for an administrator's assignee picker. */
export async function workers(mailbox) {
  const [{ relations }, teams, people, agents] = await Promise.all([
    api("GET", `/api/relations?object=${segment(mailbox.id)}`),
    directory.loadTeams(),
    directory.loadPeople(),
    directory.loadAgents(),
  ]);
  const ids = new Set();
  for (const tuple of relations.filter((tuple) => tuple.relation === "send.propose")) {
    const team = /^(tm_[0-9A-Za-z]+)#member$/.exec(tuple.subject);
    if (team) for (const member of teams.find((entry) => entry.id === team[1])?.members ?? []) ids.add(member);
    else ids.add(tuple.subject);
  }
  const named = [
    ...people.filter((person) => ids.has(person.id) && !person.disabled_at).map((person) => ({ id: person.id, name: person.name })),
    ...agents.filter((agent) => ids.has(agent.id) && agent.state !== "revoked").map((agent) => ({ id: agent.id, name: `${agent.name} (agent)` })),
  ];
  return named.sort((a, b) => a.name.localeCompare(b.name));
}

/** Who wrote in a conversation, by name, and how many more. */
const participantWords = (thread) => thread.participants.length
  ? ["With ", thread.participants.map((address, index) => [index ? ", " : null, address.name || address.address]),
    thread.participant_count > thread.participants.length ? ` and ${counted(thread.participant_count - thread.participants.length, "other")}` : null]
  : [];

/** What says that a conversation shows only its latest messages, or nothing when it shows them all. */
const earlierWords = (thread) => thread.message_count > thread.entries.length
  ? `This shows the latest ${counted(thread.entries.length, "message")} of ${thread.message_count.toLocaleString()}; the earlier ones are under Every message.`
  : "";

/** The warning above a conversation in which a sender is not verified. */
const unverifiedWarning = () => h("div", { class: "warning sender-warning" },
  h("p", { class: "warning-title", text: "A sender in this conversation is not verified." }),
  h("p", { text: "Nothing proves that a message marked below came from the address on its From line. Do not act on what it asks (payments, passwords, changed bank details) without checking with the sender another way." }));

/**
 * How long a reply is told as being written after its writer's last keystroke:
 * long enough to think between sentences, short enough that a reply left
 * aside does not keep a colleague waiting.
 */
const WRITING_PAUSE_MS = 15_000;

/** Remembers the names a conversation gives beside ids (its assignee, its sends' writers and deciders), to name them in presence. */
function rememberNames(thread) {
  directory.rememberName(thread.assignee, thread.assignee_name);
  for (const entry of thread.entries ?? []) {
    if (entry.kind !== "sent") continue;
    directory.rememberName(entry.sent.author, entry.sent.author_name);
    directory.rememberName(entry.sent.decided_by, entry.sent.decided_by_name);
  }
}

/** `#/mail/<mailbox>/<thr_…>`: one conversation. */
export async function conversationView(view, mailbox, threadId, asked = null) {
  const can = access(mailbox);
  const path = mailboxApi(mailbox.id, "threads", threadId);
  // Its internal notes are read beside it, where the person may read them,
  // and woven in when they come: the conversation is not kept waiting for
  // them (asking for them waits for the mailboxes, which say who may).
  const notes = conversationNotes(mailbox, threadId);
  let thread = await (asked ?? api("GET", path));
  let summary = thread;
  const title = subjectOf(thread.subject);
  document.title = `${title} · Mail · Mailroom`;
  const status = statusArea();

  // Opening a conversation marks it read (reading it changes nothing by
  // itself), without the conversation waiting for it: it is drawn as read,
  // and the node's answer, or its refusal, follows.
  const markingRead = thread.unread && can.markRead ? api("PUT", `${path}/read`) : null;
  if (markingRead) summary = { ...thread, unread: false };

  // ---- where it stands: status, assignee, read
  const statusWords = h("span", {}, threadStatusBadge(summary.status));
  const assigneeWords = h("span", { class: "thread-assignee" });
  const showAssignee = () => {
    assigneeWords.textContent = inOrder(summary.assignee ? `Assigned to ${summary.assignee === me.id ? `you (${summary.assignee_name ?? me.name})` : summary.assignee_name ?? "someone"}` : "Assigned to nobody");
  };
  showAssignee();
  const messageCount = h("span", { text: counted(thread.message_count, "message") });
  const participants = h("span", { hidden: !thread.participants.length }, participantWords(thread));

  const statusButtons = Object.entries(THREAD_STATUSES).map(([name, { action }]) => {
    const button = h("button", { type: "button", class: "secondary", "aria-pressed": String(summary.status === name), "data-status": name, "data-key": name === "closed" ? "close" : null, text: action });
    button.addEventListener("click", () => change({ status: name }, `Now ${THREAD_STATUSES[name].words.toLowerCase()}.`));
    return button;
  });
  // ---- labels: seen by all who see it, added and removed by those who set its status
  const labels = h("div", { class: "thread-labels" });
  /** The labels shown, so that they are drawn again only when they change (a control the person is on stays). */
  let labelsShown = null;
  const showLabels = () => {
    if (JSON.stringify(summary.labels) === labelsShown) return;
    labelsShown = JSON.stringify(summary.labels);
    const chip = (label) => h("span", { class: "label-chip" }, h("span", { text: label }), can.triage ? removeLabel(label) : null);
    replace(labels, summary.labels.length ? labelChips(summary.labels, chip) : can.triage ? h("span", { class: "muted", text: "No labels" }) : null);
  };
  function removeLabel(label) {
    const button = h("button", { type: "button", class: "chip-remove", "aria-label": `Remove the label “${label}”`, title: "Remove", text: "×" });
    button.addEventListener("click", () => change({ remove_labels: [label] }, `The label “${label}” was removed.`));
    return button;
  }
  const newLabel = h("input", { type: "text", name: "label", "data-field": "add_labels", maxlength: 40, autocomplete: "off", spellcheck: "false", required: true });
  const addLabel = can.triage
    ? h("form", { class: "label-add" }, labelled("Add a label", newLabel), h("button", { type: "submit", class: "secondary", text: "Add" }))
    : null;
  addLabel?.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await change({ add_labels: [newLabel.value] }, "Label added.")) newLabel.value = "";
  });
  showLabels();

  /** Draws the assignee's controls again, as the assignee changed: set in assignControls(). */
  let showAssignControls = () => {};
  // ---- snoozing: by those who set its status (snooze.js), last, as its own
  // time field names only its own refusals (a change's form is its first control's)
  const snooze = can.triage ? snoozeControl(summary, change) : null;
  const triage = can.triage ? h("div", { class: "triage" },
    h("div", { class: "status-choice", role: "group", "aria-label": "Status" }, h("span", { class: "choice-label", "aria-hidden": "true", text: "Status" }), statusButtons),
    assignControls(), addLabel, snooze.element) : null;

  function assignControls() {
    const holder = h("div", { class: "assign" });
    if (me?.is_admin) {
      const picker = h("select", { name: "assignee" }, h("option", { value: "", text: "Nobody" }));
      const known = (id, name) => {
        if (id && ![...picker.options].some((option) => option.value === id)) picker.append(h("option", { value: id, text: name }));
      };
      known(summary.assignee, summary.assignee_name ?? summary.assignee);
      picker.value = summary.assignee ?? "";
      workers(mailbox).then((people) => {
        for (const person of people) known(person.id, person.name);
        picker.value = summary.assignee ?? "";
      }).catch((error) => {
        if (!(error instanceof SessionOver)) status.replaceChildren(refusalBox(error, "Who works this mailbox could not be listed."));
      });
      picker.addEventListener("change", () => change({ assignee: picker.value }, picker.value ? `Assigned to ${picker.selectedOptions[0].textContent}.` : "Assigned to nobody."));
      holder.append(labelled("Assigned to", picker));
      showAssignControls = () => {
        known(summary.assignee, summary.assignee_name ?? summary.assignee);
        // Not while the person is choosing.
        if (document.activeElement !== picker) picker.value = summary.assignee ?? "";
      };
      return holder;
    }
    const draw = () => {
      const mine = h("button", { type: "button", class: "secondary", text: "Assign to me" });
      const nobody = h("button", { type: "button", class: "secondary", text: "Unassign" });
      mine.addEventListener("click", () => change({ assignee: me.id }, "Assigned to you.").then(draw));
      nobody.addEventListener("click", () => change({ assignee: "" }, "Assigned to nobody.").then(draw));
      holder.replaceChildren(h("div", { class: "button-row" },
        can.propose && summary.assignee !== me.id ? mine : null,
        summary.assignee ? nobody : null));
    };
    draw();
    showAssignControls = draw;
    return holder;
  }

  /** How many changes the person made here have been answered: a reading asked before one is not shown over it. */
  let changesMade = 0;

  /** Shows where the conversation stands (`summary`): its status, assignee and labels. */
  function showStanding() {
    statusWords.replaceChildren(threadStatusBadge(summary.status));
    for (const button of statusButtons) button.setAttribute("aria-pressed", String(button.dataset.status === summary.status));
    showAssignee();
    showLabels();
    snooze?.show(summary);
  }

  /** Changes the conversation; `own`, where given, are the controls the change was made with (a refusal names a field among them), else every triage control. */
  async function change(body, said, own = null) {
    const controls = own ?? [...(triage?.querySelectorAll("button, select, input") ?? []), ...labels.querySelectorAll("button")];
    return perform(status, controls, async () => {
      summary = await api("PATCH", path, body);
      changesMade++;
      showStanding();
      return said;
    }, "The conversation was not changed.");
  }

  // Read for this person now; Mark unread leaves it bold in the list until opened again.
  let read = !summary.unread;
  const readToggle = can.markRead ? h("button", { type: "button", class: "secondary", text: read ? "Mark unread" : "Mark read" }) : null;
  readToggle?.addEventListener("click", () => perform(status, [readToggle], async () => {
    summary = await api(read ? "DELETE" : "PUT", `${path}/read`);
    changesMade++;
    read = !summary.unread;
    readToggle.textContent = read ? "Mark unread" : "Mark read";
    return read ? "Marked read." : "Marked unread: it shows as unread in the list until you open it again.";
  }, "It was not changed."));
  // The node's answer to opening it, once it comes: where it stands now, or why it is not read.
  markingRead?.then((marked) => {
    summary = marked;
    showStanding();
  }, (error) => {
    if (error instanceof SessionOver) return;
    read = false;
    if (readToggle) readToggle.textContent = "Mark read";
    status.replaceChildren(refusalBox(error, "It was not marked read."));
  });

  let unverified = thread.has_unauthenticated ? unverifiedWarning() : null;
  const unfollowed = statusArea();

  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], [title]),
    panel(title,
      h("p", { class: "thread-facts" }, statusWords, assigneeWords, messageCount, participants),
      labels,
      unverified,
      triage,
      h("div", { class: "button-row" }, readToggle, h("a", { href: mailHref(mailbox.id), class: "button secondary", text: "Back to the conversations" })),
      status,
      unfollowed));

  // ---- the messages, in order
  const composer = panel("Your reply");
  composer.classList.add("composer");
  composer.hidden = true;
  const composerBody = h("div");
  composer.append(composerBody);
  /** The draft open in the composer, and its card in the list, hidden while it is. */
  let composing = null;

  const receivedById = new Map();
  const cards = new Map();

  function openComposer(draft, notice) {
    if (composing) cards.get(composing.id)?.removeAttribute("hidden");
    composing = draft;
    cards.get(draft.id)?.setAttribute("hidden", "");
    const quote = receivedById.get(draft.reply_to) ?? null;
    composerBody.replaceChildren(sendEditor(mailbox, {
      send: draft,
      quote,
      notice,
      onSettled: stopWriting,
      onDraft: (next) => {
        openComposer(next, info("Written again as a new draft, with the same recipients, subject and text: change it in the light of the reason, then submit it."));
        return null;
      },
    }));
    composer.hidden = false;
    composer.scrollIntoView({ block: "start" });
    (composer.querySelector("textarea") ?? composer).focus({ preventScroll: true });
  }

  /** The latest draft of the signed-in person's in this conversation, open in the composer or listed. */
  function myOpenDraft() {
    if (composing?.state === "draft") return composing;
    const drafts = thread.entries.filter((entry) => entry.kind === "sent" && entry.sent.state === "draft" && entry.sent.author === me.id);
    return drafts.at(-1)?.sent ?? null;
  }

  async function reply(message, all, entryStatus, controls) {
    await perform(entryStatus, controls, async () => {
      const open = all ? myOpenDraft() : null;
      if (open) {
        // One draft per conversation: replying to all adds everyone to the draft already begun.
        const others = othersOn(message, mailbox, [...open.to, ...open.cc, ...(message.reply_to.length ? message.reply_to : message.from ? [message.from] : []).map(recipientText)]);
        const draft = others.length
          ? await api("PATCH", mailboxApi(mailbox.id, "sends", open.id), { cc: [...open.cc, ...others] })
          : open;
        openComposer(draft, info(others.length
          ? "You had already begun a reply here: everyone the message went to is now copied on it."
          : "You had already begun a reply here, and it already goes to everyone: here it is."));
        return null;
      }
      const begun = await api("POST", mailboxApi(mailbox.id, "sends"), all ? { reply_to: message.id, reply_all: true } : { reply_to: message.id });
      const draft = { ...(await withSignature(mailbox, begun, message.from)), resumed: begun.resumed };
      openComposer(draft, draft.resumed
        ? info(h("strong", { text: "You had already begun a reply in this conversation:" }), " here it is, as you left it. Nothing new was started.")
        : null);
      return null;
    }, "The reply was not begun.");
  }

  function receivedCard(message) {
    const headingId = uniqueId("message");
    const entryStatus = statusArea();
    const check = message.authentication?.sender ?? "unverified";
    const everyone = othersOn(message, mailbox, (message.reply_to.length ? message.reply_to : message.from ? [message.from] : []).map(recipientText));
    const answer = can.propose ? h("button", { type: "button", "data-key": "reply" }, "Reply", hidden(` to ${senderWords(message.from)}`)) : null;
    const answerAll = can.propose && everyone.length ? h("button", { type: "button", class: "secondary", "data-key": "reply-all" }, "Reply all", hidden(` on ${senderWords(message.from)}’s message`)) : null;
    const controls = [answer, answerAll].filter(Boolean);
    answer?.addEventListener("click", () => reply(message, false, entryStatus, controls));
    answerAll?.addEventListener("click", () => reply(message, true, entryStatus, controls));
    const path = mailboxApi(mailbox.id, "messages", message.id);
    return h("article", { class: `entry received sender-${check}`, "aria-labelledby": headingId, "data-message": message.id },
      h("header", { class: "entry-head" },
        h("h3", { id: headingId }, message.from ? addressLabel(message.from) : h("span", { class: "muted", text: "No sender given" })),
        h("p", { class: "entry-when" }, time(message.received_at)),
        h("p", { class: "entry-check" }, senderCheckBadge(check))),
      h("p", { class: "entry-recipients" },
        message.to.length ? [h("span", { class: "muted", text: "To " }), addressLabels(message.to)] : null,
        message.cc.length ? ["; ", h("span", { class: "muted", text: "Cc " }), addressLabels(message.cc)] : null,
        message.reply_to.length ? ["; ", h("span", { class: "muted", text: "Replies to " }), addressLabels(message.reply_to)] : null),
      message.filed_by ? h("p", { class: "entry-filed muted", text: "A butler filed this copy here from another mailbox it was delivered to." }) : null,
      message.authentication?.sender === "authenticated" ? null : h("p", { class: "entry-check-detail muted", text: senderDetail(message.authentication) }),
      message.message_id_reused ? h("p", { class: "entry-reused notice info", text: REUSED_MESSAGE_ID }) : null,
      senderChecks(message),
      message.attachments.length ? h("ul", { class: "attachments" }, message.attachments.map((attachment) => {
        const name = attachment.name ?? `Attachment ${attachment.index + 1}`;
        return h("li", {},
          can.content ? downloadLink(`${path}/attachments/${attachment.index}`, name) : h("span", { class: "attachment-name", text: name }),
          h("span", { class: "muted", text: ` ${attachment.content_type}, ${byteSize(attachment.size)}` }));
      })) : null,
      typeof message.text === "string"
        ? formattedWhenItCame(message, path)
        : info(`Reading the text needs the right to read the bodies of mail in ${mailbox.address}, which an administrator grants.`),
      h("div", { class: "button-row entry-actions" },
        answer, answerAll,
        h("a", { href: mailHref(mailbox.id, message.id), class: "entry-details" }, "Message details", hidden(` of ${senderWords(message.from)}’s message`))),
      entryStatus);
  }

  function sentCard(send) {
    const headingId = uniqueId("send");
    const entryStatus = statusArea();
    const mine = send.author === me.id;
    let action = null;
    if (send.state === "refused") {
      action = refusedNotice(mailbox, send, {
        onDraft: (draft) => {
          openComposer(draft, info("Written again as a new draft, with the same recipients, subject and text: change it in the light of the reason, then submit it."));
          return null;
        },
      });
    } else if (send.state === "draft" && mine) {
      const edit = h("button", { type: "button" }, "Edit draft", hidden(` “${subjectOf(send.subject)}”`));
      edit.addEventListener("click", () => openComposer(send));
      action = h("div", { class: "button-row" }, edit);
    } else if (send.state === "submitted" && send.submitted_by === me.id) {
      const cancel = h("button", { type: "button", class: "secondary", text: "Cancel submission" });
      cancel.addEventListener("click", () => perform(entryStatus, [cancel], async () => {
        const draft = await api("POST", mailboxApi(mailbox.id, "sends", send.id, "cancel"));
        card.replaceWith(sentCard(draft));
        return null;
      }, "The submission was not cancelled."));
      action = h("div", { class: "button-row" }, cancel);
    } else if (send.state === "failed") {
      action = h("p", {}, h("a", { href: mailHref(mailbox.id, "outbound", send.id), text: "See who it did not reach, and send it again" }));
    }
    const card = h("article", { class: `entry sent state-${send.state}`, "aria-labelledby": headingId, "data-send": send.id },
      h("header", { class: "entry-head" },
        h("h3", { id: headingId }, h("span", { class: "address-name", text: send.author_name }), h("span", { class: "muted", text: ` for ${mailbox.display_name || mailbox.address}` })),
        h("p", { class: "entry-when" }, time(lastChange(send))),
        h("p", { class: "entry-check" }, sendStateBadge(send.state))),
      h("p", { class: "entry-recipients" },
        h("span", { class: "muted", text: "To " }), recipientLabels(send.to),
        send.cc.length ? ["; ", h("span", { class: "muted", text: "Cc " }), recipientLabels(send.cc)] : null),
      send.text ? h("div", { class: "entry-text", text: asLines(send.text) }) : h("p", { class: "empty", text: "No text yet." }),
      action,
      entryStatus);
    cards.set(send.id, card);
    return card;
  }

  const entries = h("ol", { class: "entries", "aria-label": "Messages, oldest first" });
  const earlier = info();
  const nothingShown = info("Nothing in this conversation is shown to you yet.");

  /** Shows the messages (`thread.entries`) over those shown, drawing again only those that changed. */
  function showEntries() {
    for (const entry of thread.entries) if (entry.kind === "received") receivedById.set(entry.received.id, entry.received);
    const timeline = notes?.weave(thread.entries, (entry) => (entry.kind === "received" ? entry.received.received_at : lastChange(entry.sent))) ?? thread.entries;
    redraw(entries, "data-entry", timeline, {
      key: (entry) => (entry.kind === "note" ? entry.note.id : entry.kind === "received" ? entry.received.id : entry.sent.id),
      draw: (entry) => h("li", {}, entry.kind === "note" ? notes.card(entry.note) : entry.kind === "received" ? receivedCard(entry.received) : sentCard(entry.sent)),
      sameAs: (entry) => JSON.stringify(entry),
    });
    // The draft open in the composer is shown there alone, even drawn again here.
    if (composing) cards.get(composing.id)?.setAttribute("hidden", "");
    earlier.textContent = earlierWords(thread);
    earlier.hidden = !earlier.textContent;
    entries.hidden = !timeline.length;
    nothingShown.hidden = !entries.hidden;
  }
  showEntries();
  notes?.follow(showEntries);

  // ---- who else is here, as their pages tell through the mailbox's stream
  const presence = presenceIn();
  // Polite, and kept a line high even when empty, so that it neither
  // interrupts nor moves the reply being written when someone comes or goes.
  const presenceLine = h("p", { class: "presence", "aria-live": "polite" });
  function showPresence() {
    const words = presenceWords(presence.doing);
    if (presenceLine.textContent !== words) presenceLine.textContent = words;
  }
  rememberNames(summary);
  rememberNames(thread);
  append(view, [earlier, entries, nothingShown, notes?.composer, presenceLine, composer]);

  /** What the person is telling the others they do here: reading, or writing a reply. */
  let doing = "reading";
  let stillWriting = null;
  /** Set once the stream is followed (below). */
  let tellOthers = () => {};
  const tell = (activity) => {
    if (activity === doing) return;
    doing = activity;
    tellOthers();
  };
  function stopWriting() {
    clearTimeout(stillWriting);
    tell("reading");
  }
  // Typing in the reply (its text, subject or recipients) is writing; a pause is reading again.
  composer.addEventListener("input", (event) => {
    if (!event.target.matches("textarea, input[type=text]")) return;
    clearTimeout(stillWriting);
    stillWriting = setTimeout(stopWriting, WRITING_PAUSE_MS);
    tell("writing");
  });

  /**
   * Reads the conversation again, as its mailbox changed, and shows what changed
   * in it: where it stands, how many messages and from whom, and the messages.
   * The composer is left as it is. A reading that fails leaves everything as it
   * was (the next change reads it again); one overtaken by a later reading, or
   * asked before a change the person made here was answered, is not shown.
   */
  let readings = 0;
  async function readAgain(kinds = null) {
    // A note added or deleted changes the notes alone: they are read, and the
    // conversation is not; anything else, the conversation (null: anything).
    const told = kinds === null ? null : [...kinds];
    if (!told || told.some((kind) => NOTE_CHANGES.has(kind))) notes?.readAgain();
    if (told?.every((kind) => NOTE_CHANGES.has(kind))) return;
    const mine = ++readings;
    const changesBefore = changesMade;
    let next;
    try {
      next = await api("GET", path);
    } catch {
      return;
    }
    if (mine !== readings || changesBefore !== changesMade || !view.isConnected) return;
    const assigneeBefore = summary.assignee;
    thread = next;
    summary = next;
    showStanding();
    // Drawn again only when it changed: a control the person is on stays.
    if (summary.assignee !== assigneeBefore) showAssignControls();
    if (readToggle) {
      read = !summary.unread;
      readToggle.textContent = read ? "Mark unread" : "Mark read";
    }
    messageCount.textContent = counted(thread.message_count, "message");
    replace(participants, participantWords(thread));
    participants.hidden = !thread.participants.length;
    if (thread.has_unauthenticated && !unverified) {
      unverified = unverifiedWarning();
      labels.after(unverified);
    }
    showEntries();
    // Someone already told as here may be named now.
    rememberNames(thread);
    showPresence();
  }

  const following = followMailbox(view, mailbox, {
    readAgain,
    noLonger: () => {
      unfollowed.replaceChildren(h("p", { class: "muted", text: "This conversation no longer follows the mailbox as it changes: you may no longer see its mail. Reload the page to see what you hold." }));
      presence.doing.clear();
      showPresence();
    },
    // A change to another conversation changes nothing here; nor does a
    // draft this page does not show saving itself (another writer's, as they type).
    accept: (event) => (!event.object?.startsWith("thr_") || event.object === threadId)
      && !(event.kind === "update_draft" && !thread.entries.some((entry) => entry.kind === "sent" && entry.sent.id === event.object)),
    // Opening again, the node tells afresh who is here: who left while it was closed was not told.
    onOpen: () => {
      presence.doing.clear();
      showPresence();
    },
    onPresence: (told) => {
      if (told.object === threadId && presence.tell(told)) showPresence();
    },
  });
  // Said as the stream opens, and again each time it opens again (the node forgets a closed stream's).
  tellOthers = () => following.say({ presence: doing, object: threadId });
  tellOthers();
  // Leaving closes the stream, which the node tells the others as gone idle.
  holdWhileShown(view, () => clearTimeout(stillWriting));
}


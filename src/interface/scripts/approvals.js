// Approvals (SPEC §8): the sends awaiting the signed-in person's decision, each a
// card showing the send beside the message it answers (who wrote it, whether
// that sender was authenticated, and its text where the approver reads the
// mailbox), to approve, after a confirmation in the page that names who it
// goes to, or to refuse with a reason the submitter reads. The navigation
// shows how many wait (approvalCount(), for main.js). A send submitted while
// the page is open joins it without a reload.

import { append, h, hidden, labelled, replace, time, uniqueId } from "./dom.js";
import { api, query, SessionOver } from "./api.js";
import { actionForm, empty, panel, perform, statusArea, success } from "./shared.js";
import { pager, PER_PAGE } from "./pager.js";
import { access, followMailbox, mailboxApi, mailHref, myMailboxes, subjectOf } from "./mail-shared.js";
import { directory } from "./names.js";
import { asLines, recipientWords, senderCheckBadge, senderWords, SENDER_CHECKS } from "./mail-words.js";
import { sendDetails } from "./sends.js";

/** Said by the page whenever a decision may have changed how many sends wait. */
export const APPROVALS_CHANGED = "mailroom:approvals-changed";

/**
 * How many sends await the signed-in person's decision, as the navigation says
 * it: the count of one page, or "50+" when there are more. Null when none.
 */
export async function approvalCount() {
  const page = await api("GET", `/api/approvals${query({ limit: PER_PAGE })}`);
  if (!page.sends.length) return null;
  return page.next_cursor ? `${page.sends.length}+` : String(page.sends.length);
}

/**
 * The received message a send answers, beside it: who wrote it and whether
 * that sender was authenticated (from the send), and its text, read from its
 * conversation where the approver reads the mailbox.
 */
function answeredMessage(send) {
  const answers = send.answers;
  if (!answers) return null;
  const check = answers.sender_authentication ?? "unverified";
  const text = h("div", { class: "answered-text" });
  const mailbox = directory.mailboxes.get(send.mailbox_id);
  const can = access(mailbox);
  if (send.thread_id && can.conversations) {
    text.append(h("p", { class: "muted", role: "status", text: "Loading its text…" }));
    api("GET", mailboxApi(send.mailbox_id, "threads", send.thread_id)).then((thread) => {
      const message = thread.entries.find((entry) => entry.kind === "received" && entry.received.id === answers.id)?.received;
      if (typeof message?.text === "string") replace(text, h("div", { class: "entry-text", text: asLines(message.text) }));
      else replace(text, h("p", { class: "muted", text: "Its text is not shown to you: reading it needs the right to read the bodies of mail in this mailbox." }));
    }).catch((error) => {
      if (!(error instanceof SessionOver)) replace(text, h("p", { class: "muted", text: `Its text could not be shown: ${error.message}` }));
    });
  } else {
    text.append(h("p", { class: "muted", text: "Its text is not shown to you: you do not read this mailbox." }));
  }
  return h("aside", { class: "answered", "aria-label": "The message it answers" },
    h("h4", { text: "The message it answers" }),
    h("p", { class: "answered-from" },
      h("strong", { text: senderWords(answers.from) }),
      answers.from?.name ? h("span", { class: "muted", text: ` <${answers.from.address}>` }) : null),
    h("p", {}, "“", subjectOf(answers.subject), "”, received ", time(answers.received_at)),
    h("p", {}, senderCheckBadge(check), check === "authenticated" ? null : h("span", { class: "muted", text: ` ${SENDER_CHECKS[check]?.meaning ?? ""}` })),
    can.conversations && send.thread_id ? h("p", {}, h("a", { href: mailHref(send.mailbox_id, send.thread_id), text: "Open the whole conversation" })) : null,
    text);
}

/** What an agent that wrote a send had read, for its approver to weigh. */
function writerWarning(send) {
  if (!send.writer_read_unverified) return null;
  return h("div", { class: "warning" },
    h("p", { class: "warning-title", text: `Written by an agent that read ${send.writer_read_unverified.toLocaleString()} message${send.writer_read_unverified === 1 ? "" : "s"} from senders who were not verified` }),
    h("p", { text: "In the day before it submitted this. Mail can carry instructions aimed at agents: check that the text says what your organisation would, to whom it would." }));
}

export async function renderApprovals(view) {
  // Addresses for the mailboxes; the queue is readable without them.
  await myMailboxes().catch((error) => {
    if (error instanceof SessionOver) throw error;
  });
  const cards = h("div", {});
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `/api/approvals${query(asked)}`);
      return { items: page.sends, next_cursor: page.next_cursor };
    },
    show: (sends) => append(cards, sends.map(approvalCard)),
    more: "Show later submissions",
    failure: "Later submissions could not be loaded.",
  });

  // The sends on screen, by id.
  const shownIds = new Set();

  function approvalCard(send) {
    shownIds.add(send.id);
    const headingId = uniqueId("approval");
    const status = statusArea();
    const details = h("div", { class: "approval-send" }, sendDetails(send));
    // The version on screen is the one a decision names: if the submitter has
    // changed the send since, the node refuses the decision (send_changed) and
    // the card shows the send as it now stands, to decide on afresh.
    let shown = send;
    const approve = h("button", { type: "button" }, "Approve", hidden(` “${subjectOf(send.subject)}”`));
    const refuse = h("button", { type: "button", class: "secondary danger" }, "Refuse", hidden(` “${subjectOf(send.subject)}”`));
    const buttons = h("div", { class: "button-row" }, approve, refuse);
    const decision = h("div", { class: "decision" }, buttons);

    function decided(result) {
      replace(details, sendDetails(result));
      decision.replaceChildren();
      document.dispatchEvent(new Event(APPROVALS_CHANGED));
    }

    async function decide(action, body) {
      try {
        return await api("POST", mailboxApi(send.mailbox_id, "sends", send.id, action), { ...body, version: shown.version });
      } catch (error) {
        if (error.code === "send_changed") await showCurrent();
        throw error;
      }
    }

    async function showCurrent() {
      try {
        shown = await api("GET", mailboxApi(send.mailbox_id, "sends", send.id));
      } catch (error) {
        if (error instanceof SessionOver) throw error;
        decision.replaceChildren();
        return;
      }
      replace(details, h("div", {},
        h("p", { class: "notice info changed", text: "Changed since you opened it: this is the send as it now stands." }),
        sendDetails(shown)));
      decision.replaceChildren(shown.state === "submitted" ? buttons : []);
    }

    // Approving asks once more, in the page, naming who it goes to: sealed, it cannot be taken back.
    approve.addEventListener("click", () => {
      const really = h("button", { type: "button", text: "Approve and send" });
      const keep = h("button", { type: "button", class: "secondary", text: "Not yet" });
      const recipients = [recipientWords(shown.to), shown.cc.length ? `, with a copy to ${recipientWords(shown.cc)}` : ""].join("");
      const question = h("div", { class: "confirm approve-confirm", role: "group", "aria-label": "Approve and send?" },
        h("p", { text: `Send “${subjectOf(shown.subject)}” from ${shown.mailbox_address} to ${recipients}?` }),
        h("p", { class: "confirm-detail", text: "It is sealed exactly as shown here and handed to the mail service: it cannot be changed or taken back." }),
        h("div", { class: "button-row" }, really, keep));
      decision.replaceChildren(question);
      really.focus();
      keep.addEventListener("click", () => {
        decision.replaceChildren(buttons);
        approve.focus();
      });
      really.addEventListener("click", () => perform(status, [really, keep], async () => {
        let result;
        try {
          result = await decide("approve", {});
        } catch (error) {
          if (decision.contains(question)) decision.replaceChildren(shown.state === "submitted" ? buttons : []);
          throw error;
        }
        decided(result);
        if (result.state === "failed") {
          status.replaceChildren(h("div", { class: "refusal", role: "alert" },
            h("p", { class: "refusal-title", text: "Approved and sealed, but not sent." }),
            h("p", {}, h("span", { class: "refusal-label", text: "Why: " }), result.dispatch_error ?? "The mail binding refused it."),
            h("p", {}, h("span", { class: "refusal-label", text: "What to do: " }), "A sealed send never changes; its writer can send it again to those it did not reach once the cause is fixed.")));
          return null;
        }
        return result.state === "dispatched"
          ? [h("strong", { text: "Approved and dispatched." }), ` Sealed as <${result.message_id}> and handed to the mail service, to ${recipientWords(result.to)}.`]
          : [h("strong", { text: "Approved and sealed." }), " It has not been handed to the mail service yet."];
      }, "The send was not approved."));
    });

    refuse.addEventListener("click", () => {
      const reason = h("textarea", { name: "reason", rows: 3, required: true, maxlength: 1000 });
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      const form = actionForm({
        className: "action-form refuse-form",
        fields: [labelled("Reason for refusing", reason, "The writer reads it. At most 1,000 characters.")],
        submit: "Refuse send",
        failureTitle: "The send was not refused.",
        async onSubmit() {
          const result = await decide("refuse", { reason: reason.value });
          decided(result);
          status.replaceChildren(success(h("strong", { text: "Refused." }), " Nothing was sent; the writer sees your reason."));
        },
      });
      form.querySelector(".field.actions").append(keep);
      keep.addEventListener("click", () => {
        decision.replaceChildren(buttons);
        refuse.focus();
      });
      decision.replaceChildren(form);
      reason.focus();
    });

    const answered = answeredMessage(send);
    return h("article", { class: "card approval", "aria-labelledby": headingId },
      h("header", { class: "card-header" }, h("h3", { id: headingId, text: subjectOf(send.subject) })),
      writerWarning(send),
      h("div", { class: answered ? "approval-body with-answered" : "approval-body" }, details, answered),
      decision, status);
  }

  view.append(panel("Awaiting my decision",
    h("p", { class: "muted", text: "Sends submitted from mailboxes where you may approve mail, oldest first. Nothing leaves a mailbox until a second person approves it, so your own submissions are never listed here." }),
    cards, pages.element));
  const first = await pages.first();
  if (first.length) append(cards, first.map(approvalCard));
  else cards.replaceChildren(empty("Nothing awaits your decision."));

  // A send submitted meanwhile (by a colleague, or an agent) joins the queue
  // without a reload, at its end (the queue is oldest first), and the count in
  // the navigation follows. A card already on screen is never changed under
  // the approver's eyes: a decision names the version shown, and the node
  // refuses it if the send changed since (the card then shows it as it stands).
  async function joinSubmitted() {
    const page = await api("GET", `/api/approvals${query({ limit: PER_PAGE })}`);
    // More than a page waits: the rest is the pager's to show, on asking.
    if (page.next_cursor) return;
    const added = page.sends.filter((send) => !shownIds.has(send.id));
    if (!added.length) return;
    if (!cards.querySelector("article")) cards.replaceChildren();
    append(cards, added.map(approvalCard));
    document.dispatchEvent(new Event(APPROVALS_CHANGED));
  }
  for (const mailbox of directory.mailboxes.values()) {
    if (!access(mailbox).decide) continue;
    followMailbox(view, mailbox, {
      readAgain: () => joinSubmitted().catch((error) => {
        // The shell signs the person in again; anything else waits for the next submission.
        if (error instanceof SessionOver) return;
      }),
      noLonger: () => {},
      accept: (event) => event.kind === "submit_send",
    });
  }
}


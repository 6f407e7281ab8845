// Approvals (SPEC §8): the sends awaiting the signed-in person's decision, each a
// card to approve, or to refuse with a reason the submitter reads.

import { append, h, hidden, labelled, replace, uniqueId } from "./dom.js";
import { api, query, SessionOver } from "./api.js";
import { actionForm, empty, panel, perform, statusArea, success } from "./shared.js";
import { pager } from "./pager.js";
import { mailboxApi, myMailboxes, subjectOf } from "./mail-shared.js";
import { sendDetails } from "./sends.js";

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

  function approvalCard(send) {
    const headingId = uniqueId("approval");
    const status = statusArea();
    const details = h("div", {}, sendDetails(send));
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
      if (shown.state !== "submitted") decision.replaceChildren();
    }

    approve.addEventListener("click", () => perform(status, [approve, refuse], async () => {
      const result = await decide("approve", {});
      decided(result);
      if (result.state === "failed") {
        status.replaceChildren(h("div", { class: "refusal", role: "alert" },
          h("p", { class: "refusal-title", text: "Approved and sealed, but not sent." }),
          h("p", {}, h("span", { class: "refusal-label", text: "Why: " }), result.dispatch_error ?? "The mail binding refused it."),
          h("p", {}, h("span", { class: "refusal-label", text: "What to do: " }), "A sealed send never changes and is not sent again; if it must go, write it again as a new draft.")));
        return null;
      }
      return result.state === "dispatched"
        ? [h("strong", { text: "Approved and dispatched." }), ` Sealed as <${result.message_id}> and handed to the mail binding.`]
        : [h("strong", { text: "Approved and sealed." }), " It has not been dispatched yet."];
    }, "The send was not approved."));

    refuse.addEventListener("click", () => {
      const reason = h("textarea", { name: "reason", rows: 3, required: true, maxlength: 1000 });
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      const form = actionForm({
        className: "action-form refuse-form",
        fields: [labelled("Reason for refusing", reason, "The submitter reads it. At most 1,000 characters.")],
        submit: "Refuse send",
        failureTitle: "The send was not refused.",
        async onSubmit() {
          const result = await decide("refuse", { reason: reason.value });
          decided(result);
          status.replaceChildren(success(h("strong", { text: "Refused." }), " Nothing was sent; the submitter sees your reason."));
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

    return h("article", { class: "card", "aria-labelledby": headingId },
      h("header", { class: "card-header" }, h("h3", { id: headingId, text: subjectOf(send.subject) })),
      details, decision, status);
  }

  view.append(panel("Awaiting my decision",
    h("p", { class: "muted", text: "Sends submitted from mailboxes where you hold approval.decide, oldest first. Nothing leaves a mailbox until a second person approves it, so your own submissions are never listed here." }),
    cards, pages.element));
  const first = await pages.first();
  if (first.length) append(cards, first.map(approvalCard));
  else cards.replaceChildren(empty("Nothing awaits your decision."));
}

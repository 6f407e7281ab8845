// Outbound mail (SPEC §8): a send's state and details, the editor its author
// drafts, submits, cancels or retries it in, and the views Mail's route hands
// over to for a mailbox's outbound mail: `#/mail/<mailbox>/new`, `…/outbound`
// and `…/outbound/<send>`. Approvals shows a send with sendDetails() too.

import { append, breadcrumbs, code, facts, h, hidden, labelled, linkButton, replace, row, table, time } from "./dom.js";
import { me } from "./session.js";
import { api, ApiError, query, segment } from "./api.js";
import { empty, info, loading, panel, perform, rowStatus, statusArea } from "./shared.js";
import { directory, who } from "./names.js";
import { pager } from "./pager.js";
import { access, mailboxApi, mailboxName, mailHref, mailText, subjectOf } from "./mail-shared.js";

/** A send's state as a badge; the states are the contract's (SendState), a test holds this file to them. */
function stateBadge(state) {
  const tone = { dispatched: "on", failed: "off", refused: "off", draft: "quiet" }[state];
  return h("span", { class: tone ? `badge ${tone}` : "badge", text: state });
}

/** When a send last moved: dispatched, decided, submitted or edited. */
const lastChange = (send) => send.dispatched_at ?? send.decided_at ?? send.submitted_at ?? send.updated_at;

/** The message a send answers: a link to it where the person can read the mailbox. */
function repliedTo(send) {
  const id = code(`<${send.in_reply_to}>`);
  if (!send.reply_to || !access(directory.mailboxes.get(send.mailbox_id)).metadata) return id;
  return h("a", { href: mailHref(send.mailbox_id, send.reply_to) }, id);
}

/** A send's facts and its full text, whatever its state. */
export function sendDetails(send) {
  return [
    facts([
      ["State", stateBadge(send.state)],
      ["From", mailboxName(send.mailbox_id, send.mailbox_address)],
      ["To", send.to.join(", ")],
      ["Cc", send.cc.length ? send.cc.join(", ") : null],
      ["Subject", send.subject],
      ["In reply to", send.in_reply_to ? repliedTo(send) : null],
      ["Written by", who(send.author, send.author_name)],
      ["Submitted", send.submitted_at ? [time(send.submitted_at), " by ", who(send.submitted_by, send.submitted_by === send.author ? send.author_name : undefined)] : null],
      [send.state === "refused" ? "Refused" : "Approved", send.decided_at ? [time(send.decided_at), " by ", who(send.decided_by, send.decided_by_name)] : null],
      ["Reason", send.refusal_reason ?? null],
      ["Dispatched", send.dispatched_at ? time(send.dispatched_at) : null],
      ["Dispatch error", send.dispatch_error ? h("span", { class: "error-text", text: send.dispatch_error }) : null],
      ["Message-ID", send.message_id ? code(`<${send.message_id}>`) : null],
      ["Manifest hash", send.manifest_hash ? code(send.manifest_hash) : null],
    ]),
    h("p", { class: "text-label", text: "Text" }),
    mailText(send.text),
  ];
}

/** The addresses typed into a To or Cc field; an address holds no comma, semicolon or space. */
const addressesIn = (text) => text.split(/[\s,;]+/).filter(Boolean);

/**
 * A send from `mailbox` as its author works on it: a form while it is new or
 * their draft (save it; then submit it for approval, or delete it), and its
 * state and details once submitted, with Cancel while it awaits a decision.
 * It renders itself again after each change. `replyTo` is the received
 * message it answers, which gives it its threading headers.
 */
export function sendEditor(mailbox, { send = null, replyTo = null, to = [], subject = "" } = {}) {
  const content = h("div");
  const status = statusArea();
  const sends = mailboxApi(mailbox.id, "sends");
  const outbound = () => ["Find it under ", h("a", { href: mailHref(mailbox.id, "outbound"), text: `Outbound for ${mailbox.address}` }), "."];

  function show(current) {
    send = current;
    const editable = !send || (send.state === "draft" && send.author === me.id);
    replace(content, editable ? form() : [sendDetails(send), actions()]);
  }

  function actions() {
    if (send.state === "failed" && access(mailbox).retry) return retryAction();
    if (send.state !== "submitted" || send.submitted_by !== me.id) return null;
    const cancel = h("button", { type: "button", class: "secondary", text: "Cancel submission" });
    cancel.addEventListener("click", () => perform(status, [cancel], async () => {
      show(await api("POST", `${sends}/${segment(send.id)}/cancel`));
      return "Submission cancelled: it is your draft again, to edit, submit or delete.";
    }, "The submission was not cancelled."));
    return h("div", { class: "button-row" }, cancel);
  }

  /** Sends a failed send again, as sealed, to the recipients it has not reached. */
  function retryAction() {
    const waiting = send.to.concat(send.cc).filter((address) => !send.delivered_to.includes(address));
    const retry = h("button", { type: "button", text: "Send again" });
    retry.addEventListener("click", () => perform(status, [retry], async () => {
      show(await api("POST", `${sends}/${segment(send.id)}/retry`));
      if (send.state === "dispatched") return "Sent: every recipient has it now.";
      throw new ApiError(0, {
        code: "not_delivered",
        message: "The mail service refused it again.",
        reason: send.dispatch_error ?? "The mail binding refused it.",
        fix: "Check the addresses it was not delivered to; you can send it again once the cause is fixed.",
      });
    }, "It was not sent."));
    return [
      h("p", { class: "muted", text: `Sending again hands it over exactly as it was approved, only to ${waiting.join(", ") || "those it has not reached"}; nobody receives it twice.` }),
      h("div", { class: "button-row" }, retry),
    ];
  }

  function form() {
    const addressField = (name, list, required) => h("input", {
      type: "text", name, inputmode: "email", autocomplete: "off", spellcheck: "false", required, value: list.join(", "),
    });
    const toField = addressField("to", send?.to ?? to, true);
    const ccField = addressField("cc", send?.cc ?? [], false);
    const subjectField = h("input", { type: "text", name: "subject", autocomplete: "off", required: true, maxlength: 998, value: send?.subject ?? subject });
    const textField = h("textarea", { name: "text", rows: 12 });
    textField.value = send?.text ?? "";

    const save = h("button", { type: "submit", class: send ? "secondary" : null, text: send ? "Save changes" : "Save draft" });
    const submit = send ? h("button", { type: "button", text: "Submit for approval" }) : null;
    const remove = send ? h("button", { type: "button", class: "secondary danger", text: "Delete draft" }) : null;
    const controls = [save, submit, remove].filter(Boolean);
    const buttons = h("div", { class: "button-row" }, submit, save, remove);
    const element = h("form", { class: "send-form" },
      labelled("To", toField, "Addresses, separated by commas."),
      labelled("Cc", ccField),
      labelled("Subject", subjectField),
      labelled("Text", textField, "Plain text. Nothing is sent until it is submitted and a second person approves it."),
      buttons);

    const values = () => ({ to: addressesIn(toField.value), cc: addressesIn(ccField.value), subject: subjectField.value, text: textField.value });
    const unsaved = (next) => JSON.stringify(next) !== JSON.stringify({ to: send.to, cc: send.cc, subject: send.subject, text: send.text });

    element.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!element.reportValidity()) return;
      await perform(status, controls, async () => {
        if (!send) {
          show(await api("POST", sends, { ...values(), reply_to: replyTo?.id }));
          return ["Draft saved. Nothing is sent until you submit it and a second person approves it. ", outbound()];
        }
        show(await api("PATCH", `${sends}/${segment(send.id)}`, values()));
        return "Changes saved.";
      }, "The draft was not saved.");
    });

    // Submitting saves what the form holds first, so no edit is lost.
    submit?.addEventListener("click", async () => {
      if (!element.reportValidity()) return;
      await perform(status, controls, async () => {
        const next = values();
        if (unsaved(next)) send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
        show(await api("POST", `${sends}/${segment(send.id)}/submit`));
        return [`Submitted for approval. It is sent once a second person who holds approval.decide on ${mailbox.address} approves it; until then you can cancel the submission. `, outbound()];
      }, "The draft was not submitted.");
    });

    // Deleting asks once more, in the page (no dialog): a draft cannot be brought back.
    remove?.addEventListener("click", () => {
      const really = h("button", { type: "button", class: "danger", text: "Delete for good" });
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      const question = h("div", { class: "confirm", role: "group", "aria-label": "Delete this draft?" },
        h("p", { text: "Delete this draft? It cannot be brought back." }), h("div", { class: "button-row" }, really, keep));
      buttons.replaceWith(question);
      really.focus();
      keep.addEventListener("click", () => {
        question.replaceWith(buttons);
        remove.focus();
      });
      really.addEventListener("click", () => perform(status, [really, keep], async () => {
        await api("DELETE", `${sends}/${segment(send.id)}`);
        send = null;
        content.replaceChildren(empty("This draft was deleted."));
        return "Draft deleted.";
      }, "The draft was not deleted."));
    });
    return element;
  }

  show(send);
  return h("div", { class: "send-editor" }, content, status);
}

export function composeView(view, mailbox) {
  document.title = `New message · ${mailbox.address} · Mailroom`;
  view.append(breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["New message"]));
  if (!access(mailbox).propose) {
    view.append(panel("New message", info(`Drafting mail from ${mailbox.address} needs send.propose on it.`)));
    return;
  }
  view.append(panel(`New message from ${mailbox.address}`, sendEditor(mailbox)));
  view.querySelector("input")?.focus();
}

export async function sendView(view, mailbox, sendId) {
  const send = await api("GET", mailboxApi(mailbox.id, "sends", sendId));
  const title = subjectOf(send.subject);
  document.title = `${title} · Outbound · Mailroom`;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound", mailHref(mailbox.id, "outbound")], [title]),
    panel(title, sendEditor(mailbox, { send })));
}

export async function outboundView(view, mailbox) {
  document.title = `Outbound · ${mailbox.address} · Mailroom`;
  const list = h("div", {}, loading());

  function sendRow(send) {
    const mine = send.state === "submitted" && send.submitted_by === me.id;
    const cancel = mine ? h("button", { type: "button", class: "secondary" }, "Cancel submission", hidden(` of ${subjectOf(send.subject)}`)) : null;
    const tableRow = row(
      stateBadge(send.state),
      h("a", { href: mailHref(mailbox.id, "outbound", send.id), text: subjectOf(send.subject) }),
      send.to.join(", "),
      who(send.author, send.author_name),
      time(lastChange(send)),
      cancel);
    cancel?.addEventListener("click", async () => {
      const ok = await perform(rowStatus(tableRow), [cancel], () => api("POST", mailboxApi(mailbox.id, "sends", send.id, "cancel")), "The submission was not cancelled.");
      if (ok) await refresh();
    });
    return tableRow;
  }

  const sendsTable = table(`Mail from ${mailbox.address}, newest first`, ["State", "Subject", "To", "Written by", "Last change", "Actions"], []);
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `${mailboxApi(mailbox.id, "sends")}${query(asked)}`);
      return { items: page.sends, next_cursor: page.next_cursor };
    },
    show: (sends) => append(sendsTable.querySelector("tbody"), sends.map(sendRow)),
    more: "Show older mail",
    failure: "Older mail could not be loaded.",
  });

  async function refresh() {
    const sends = await pages.first();
    sendsTable.querySelector("tbody").replaceChildren(...sends.map(sendRow));
    list.replaceChildren(sends.length ? sendsTable : empty("Nothing yet: no drafts of yours, and nothing submitted."));
  }

  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound"]),
    panel(`Outbound from ${mailbox.address}`,
      h("p", { class: "muted", text: "Your drafts, and every send from this mailbox that was submitted, sealed, dispatched, failed or refused, newest first." }),
      access(mailbox).propose ? h("div", { class: "button-row" }, linkButton(mailHref(mailbox.id, "new"), "New message")) : null,
      list, pages.element));
  await refresh();
}

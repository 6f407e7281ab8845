// Outbound mail (SPEC §8): a send's state and details, the editor its author
// drafts, submits, cancels or retries it in, and the views Mail's route hands
// over to for a mailbox's outbound mail: `#/mail/<mailbox>/new`, `…/outbound`
// and `…/outbound/<send>`. Approvals shows a send with sendDetails() too, and a
// conversation (conversation.js) drafts its replies in sendEditor(). A refused
// send shows its reason to its writer, with Write it again (refusedNotice()).

import { append, breadcrumbs, byteSize, code, facts, h, hidden, labelCells, labelled, linkButton, replace, row, shortTime, table, time } from "./dom.js";
import { me } from "./session.js";
import { api, ApiError, query, segment, SessionOver } from "./api.js";
import { markSaved } from "./leaving.js";
import { downloadLink, empty, info, loading, panel, perform, refusalBox, rowStatus, statusArea } from "./shared.js";
import { directory, named } from "./names.js";
import { pager } from "./pager.js";
import { access, mailboxApi, mailboxName, mailHref, mailText, subjectOf } from "./mail-shared.js";
import { parseRecipient, recipientLabels, recipientsIn, recipientText, recipientWords, senderCheckBadge, senderWords, sendStateBadge, trimWords } from "./mail-words.js";
import { savedReplyPicker, signatureFor } from "./replies.js";

/** When a send last moved: dispatched, decided, submitted or edited. */
const lastChange = (send) => send.dispatched_at ?? send.decided_at ?? send.submitted_at ?? send.updated_at;

/** The received message a send answers, in words: who wrote it, about what, when; a link to its conversation. */
function repliedTo(send) {
  const answers = send.answers;
  if (!answers) return send.in_reply_to ? h("span", { class: "muted", text: "an earlier message" }) : null;
  const words = `${senderWords(answers.from)}’s “${subjectOf(answers.subject)}”`;
  const mailbox = access(directoryMailbox(send.mailbox_id));
  const link = send.thread_id && mailbox.conversations
    ? h("a", { href: mailHref(send.mailbox_id, send.thread_id), text: words })
    : h("span", { text: words });
  return [link, ", received ", time(answers.received_at), " ", senderCheckBadge(answers.sender_authentication)];
}

/** The mailbox as the page knows it, for what the person may open from a send. */
const directoryMailbox = (mailboxId) => directory.mailboxes.get(mailboxId);

/** A send's facts and its full text, whatever its state. */
export function sendDetails(send) {
  const technical = [
    ["Message-ID", send.message_id ? code(`<${send.message_id}>`) : null],
    ["Replies to Message-ID", send.in_reply_to ? code(`<${send.in_reply_to}>`) : null],
    ["Manifest hash", send.manifest_hash ? code(send.manifest_hash) : null],
  ].filter(([, value]) => value);
  return [
    facts([
      ["State", sendStateBadge(send.state)],
      ["From", mailboxName(send.mailbox_id, send.mailbox_address)],
      ["To", recipientLabels(send.to)],
      ["Cc", send.cc.length ? recipientLabels(send.cc) : null],
      ["Subject", send.subject],
      ["Files", send.attachments?.length ? fileList(send) : null],
      ["In reply to", send.reply_to || send.in_reply_to ? repliedTo(send) : null],
      ["Written by", named(send.author, send.author_name)],
      ["Submitted", send.submitted_at ? [time(send.submitted_at), " by ", named(send.submitted_by, send.submitted_by === send.author ? send.author_name : undefined)] : null],
      ["Decision", send.decided_at ? [send.state === "refused" ? "Refused by " : "Approved by ", named(send.decided_by, send.decided_by_name), " on ", time(send.decided_at)] : null],
      ["Reason", send.refusal_reason ?? null],
      ["Sent at", send.dispatched_at ? time(send.dispatched_at) : null],
      ["Not delivered", send.dispatch_error ? h("span", { class: "error-text", text: send.dispatch_error }) : null],
    ]),
    technical.length ? h("details", { class: "ids" }, h("summary", { text: "Technical details" }), facts(technical)) : null,
    h("p", { class: "text-label", text: "Text" }),
    mailText(send.text),
  ];
}

/** The largest file a send may carry, decoded (the node's `limits`; it refuses more). */
const LARGEST_FILE = 700 * 1024;

/**
 * A send's files, each a download (its author's and its deciders': an approver
 * opens what they approve), with `remove(file)` beside each when it is given.
 */
function fileList(send, remove) {
  return h("ul", { class: "attachments send-files" }, send.attachments.map((file) => h("li", {},
    downloadLink(mailboxApi(send.mailbox_id, "sends", send.id, "attachments", String(file.index)), file.name),
    h("span", { class: "muted", text: ` ${file.content_type}, ${byteSize(file.size)}` }),
    remove ? [" ", remove(file)] : null)));
}

/** A file's bytes as base64, as the node takes them. */
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let start = 0; start < bytes.length; start += 0x8000) binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  return btoa(binary);
}

/**
 * A refused send, as its writer is shown it: who refused it, when and why,
 * prominently, and (to its writer, where they may still draft) Write it again,
 * which makes a new draft of the same recipients, subject, text and
 * conversation (`redraft_send`) and hands it to `onDraft`.
 */
export function refusedNotice(mailbox, send, { onDraft } = {}) {
  const status = statusArea();
  const mine = send.author === me?.id && access(mailbox).redraft;
  const again = mine ? h("button", { type: "button" }, "Write it again", hidden(` “${subjectOf(send.subject)}”`)) : null;
  again?.addEventListener("click", () => perform(status, [again], async () => {
    const draft = await api("POST", mailboxApi(mailbox.id, "sends", send.id, "redraft"));
    if (onDraft) return onDraft(draft);
    location.hash = mailHref(mailbox.id, "outbound", draft.id);
    return null;
  }, "It was not written again."));
  return h("div", { class: "refused-notice", role: "note" },
    h("p", { class: "refused-title" },
      "Refused",
      send.decided_by_name ? ` by ${send.decided_by_name}` : "",
      send.decided_at ? [" on ", time(send.decided_at)] : null,
      ": nothing was sent."),
    send.refusal_reason ? h("p", { class: "refused-reason" }, h("span", { class: "refusal-label", text: "Their reason: " }), send.refusal_reason) : null,
    mine ? h("p", { class: "muted", text: "Write it again to start a new draft with the same recipients, subject and text, change it in the light of the reason, and submit it again." }) : null,
    again ? h("div", { class: "button-row" }, again) : null,
    status);
}

/** Refuses, in the node's own words, to submit a draft with no text. */
const emptyText = {
  code: "empty_text",
  message: "There is nothing to submit: the text is empty.",
  reason: "A message is put before a second person only with something to say; a draft may stay empty until then.",
  fix: "Write the message (or quote the one you are answering), then submit it.",
};

/**
 * The text of a reply that quotes `message`: "On <date>, <name> wrote:", then
 * each of its lines after "> ". The interface writes it from the text it has
 * shown (decision 0020: quoting is the client's).
 */
export function quoteOf(message) {
  const when = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "short" }).format(new Date(message.received_at));
  const lines = (message.text ?? "").replace(/\r\n/g, "\n").replace(/\s+$/, "").split("\n");
  return `On ${when}, ${senderWords(message.from)} wrote:\n${lines.map((line) => (line ? `> ${line}` : ">")).join("\n")}\n`;
}

/** How long after the last keystroke a stored draft saves itself. */
const AUTOSAVE_AFTER_MS = 1500;

/**
 * A send from `mailbox` as its author works on it: a form while it is new or
 * their draft (save it; then submit it for approval, or delete it), and its
 * state and details once submitted, with Cancel while it awaits a decision,
 * and the reason and Write it again once refused. It renders itself again
 * after each change. `replyTo` is the received message a new draft answers,
 * which gives it its threading headers; `quote`, a received message with its
 * text, offers Quote, which writes that message into the draft's text;
 * `notice` is shown above the form (a resumed draft says so); `onDraft`
 * receives a draft written again from a refused send; `onSettled()` is called
 * once what was written is saved, submitted or deleted (a conversation then
 * stops telling the others that its writer is writing). `text` is what a new
 * draft's text starts as (its writer's signature).
 */
export function sendEditor(mailbox, { send = null, replyTo = null, to = [], subject = "", text = "", quote = null, notice = null, onDraft, onSettled = () => {} } = {}) {
  const content = h("div");
  const status = statusArea();
  const sends = mailboxApi(mailbox.id, "sends");
  const outbound = () => ["Find it under ", h("a", { href: mailHref(mailbox.id, "outbound"), text: `Outbound for ${mailbox.address}` }), "."];

  function show(current) {
    send = current;
    const editable = !send || (send.state === "draft" && send.author === me.id);
    replace(content, editable ? [notice, form()] : [sendDetails(send), actions()]);
    notice = null;
  }

  function actions() {
    if (send.state === "refused") return refusedNotice(mailbox, send, { onDraft: onDraft ?? ((draft) => {
      // Said above the new draft: the refusal's own status goes with it.
      notice = info("Written again as a new draft: change it, then submit it.");
      show(draft);
      return null;
    }) });
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
    const waiting = send.to.concat(send.cc).filter((address) => !send.delivered_to.includes(parseRecipient(address).address) && !send.delivered_to.includes(address));
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
      h("p", { class: "muted", text: `Sending again hands it over exactly as it was approved, only to ${recipientWords(waiting) || "those it has not reached"}; nobody receives it twice.` }),
      h("div", { class: "button-row" }, retry),
    ];
  }

  function form() {
    const addressField = (name, list, required) => h("input", {
      type: "text", name, inputmode: "email", autocomplete: "off", spellcheck: "false", required,
      value: list.map((recipient) => recipientText(parseRecipient(recipient))).join(", "),
    });
    const toField = addressField("to", send?.to ?? to, true);
    const ccField = addressField("cc", send?.cc ?? [], false);
    const subjectField = h("input", { type: "text", name: "subject", autocomplete: "off", required: true, maxlength: 998, value: send?.subject ?? subject });
    const textField = h("textarea", { name: "text", rows: 12 });
    textField.value = send?.text ?? text;
    // The caret starts at the top, above a signature or a quote: a reply is written there.
    textField.setSelectionRange(0, 0);

    const save = h("button", { type: "submit", class: send ? "secondary" : null, text: send ? "Save changes" : "Save draft" });
    const submit = send ? h("button", { type: "button", "data-key": "submit", text: "Submit for approval" }) : null;
    const quoting = send && quote?.text ? h("button", { type: "button", class: "secondary" }, "Quote", hidden(` ${senderWords(quote.from)}’s message`)) : null;
    const remove = send ? h("button", { type: "button", class: "secondary danger", text: "Delete draft" }) : null;
    const controls = [save, submit, quoting, remove].filter(Boolean);
    // A saved reply goes where the caret is, filled for whom the draft
    // answers (the message's sender, else the first of To), and a draft
    // already stored is saved with it at once, as a quote is.
    const picker = savedReplyPicker(mailbox, {
      controls,
      customer: () => quote?.from ?? (recipientsIn(toField.value).length ? parseRecipient(recipientsIn(toField.value)[0]) : null),
      insert: async (filled) => {
        const start = textField.selectionStart ?? 0;
        textField.setRangeText(filled, start, textField.selectionEnd ?? start, "end");
        if (send) send = await api("PATCH", `${sends}/${segment(send.id)}`, values());
        textField.focus();
      },
    });
    const buttons = h("div", { class: "button-row" }, submit, save, quoting, remove);
    // Files go on a saved draft, one at a time, each stored as it is chosen.
    const fileField = send ? h("input", { type: "file", name: "file" }) : null;
    const files = send
      ? h("div", { class: "send-files-field" },
        send.attachments?.length ? fileList(send, (file) => {
          const drop = h("button", { type: "button", class: "secondary" }, "Remove", hidden(` ${file.name}`));
          drop.addEventListener("click", () => perform(status, [drop], async () => {
            const next = values();
            if (unsaved(next)) send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
            show(await api("DELETE", mailboxApi(mailbox.id, "sends", send.id, "attachments", String(file.index))));
            return `${file.name} removed.`;
          }, "The file was not removed."));
          return drop;
        }) : null,
        labelled("Attach a file", fileField, "Up to 700 KiB a file and 10 files, in a message of at most 5 MiB, where each file takes a third more than it holds. The approver sees and can open each one."))
      : null;
    fileField?.addEventListener("change", async () => {
      const [file] = fileField.files;
      if (!file) return;
      if (file.size > LARGEST_FILE) {
        status.replaceChildren(refusalBox({ code: "attachment_too_large", message: `${file.name} is too large to attach.`, reason: "A file may have at most 700 KiB.", fix: "Attach a smaller file, or share a link to it in the text." }, "The file was not attached."));
        fileField.value = "";
        return;
      }
      await perform(status, [fileField, ...controls], async () => {
        // What the form holds is saved first: attaching redraws the draft.
        const next = values();
        if (unsaved(next)) send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
        const body = { name: file.name, content_type: file.type || "application/octet-stream", content_base64: await base64Of(file) };
        show(await api("POST", mailboxApi(mailbox.id, "sends", send.id, "attachments"), body));
        return `${file.name} attached.`;
      }, "The file was not attached.");
    });
    // A reply to all of a wide message is kept whole: the writer chooses whom to keep.
    const trim = trimWords(send);
    const element = h("form", { class: "send-form" },
      trim ? h("p", { class: "notice info trim-recipients", role: "status", text: trim }) : null,
      labelled("To", toField, "Addresses, each with a name if you like (Ana Lima <ana@example.com>), separated by commas."),
      labelled("Cc", ccField),
      labelled("Subject", subjectField),
      picker,
      labelled("Text", textField, "Plain text. Nothing is sent until it is submitted and a second person approves it."),
      files,
      buttons);

    const values = () => ({ to: recipientsIn(toField.value), cc: recipientsIn(ccField.value), subject: subjectField.value, text: textField.value });
    const unsaved = (next) => JSON.stringify(next) !== JSON.stringify({ to: send.to, cc: send.cc, subject: send.subject, text: send.text });
    textField.addEventListener("input", () => textField.removeAttribute("aria-invalid"));

    // A stored draft saves itself as it is written, AUTOSAVE_AFTER_MS after
    // the last keystroke, quietly: the line under the buttons says when it
    // was saved, or that it was not (Save changes shows why). Saving, submitting
    // and the rest wait for a save under way, so two never cross.
    let pending = null;
    let saving = Promise.resolve();
    const autosaved = h("p", { class: "autosaved muted", "aria-live": "polite" });
    const saveNow = () => {
      pending = null;
      const next = values();
      if (!send || !element.isConnected || !unsaved(next) || !subjectField.value || !recipientsIn(toField.value).length) return saving;
      saving = saving.then(async () => {
        try {
          send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
          markSaved(element);
          autosaved.replaceChildren("Draft saved ", shortTime(send.updated_at ?? new Date().toISOString()), ".");
        } catch (error) {
          if (error instanceof SessionOver) return;
          autosaved.textContent = "Not saved as you type: Save changes to see why.";
        }
      });
      return saving;
    };
    const settled = () => {
      if (pending) clearTimeout(pending);
      pending = null;
      return saving;
    };
    if (send) {
      element.addEventListener("input", () => {
        if (pending) clearTimeout(pending);
        pending = setTimeout(saveNow, AUTOSAVE_AFTER_MS);
      });
      buttons.after(autosaved);
    }

    element.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!element.reportValidity()) return;
      await settled();
      const saved = await perform(status, controls, async () => {
        if (!send) {
          show(await api("POST", sends, { ...values(), reply_to: replyTo?.id }));
          return ["Draft saved. Nothing is sent until you submit it and a second person approves it. ", outbound()];
        }
        show(await api("PATCH", `${sends}/${segment(send.id)}`, values()));
        return "Changes saved.";
      }, "The draft was not saved.");
      if (saved) onSettled();
    });

    // Quoting writes the message answered into the text, below what is there,
    // and saves it: the quote is the interface's, from the text it has shown.
    quoting?.addEventListener("click", () => perform(status, controls, async () => {
      await settled();
      const written = textField.value.replace(/\s+$/, "");
      const text = `${written ? `${written}\n\n` : "\n\n"}${quoteOf(quote)}`;
      send = await api("PATCH", `${sends}/${segment(send.id)}`, { text });
      textField.value = send.text;
      quoting.remove();
      textField.focus();
      textField.setSelectionRange(written.length, written.length);
      return "Quoted and saved: write your reply above the quote.";
    }, "The quote was not added."));

    // Submitting saves what the form holds first, so no edit is lost. A draft
    // with no text is not put before anyone (the node refuses it too).
    submit?.addEventListener("click", async () => {
      if (!element.reportValidity()) return;
      if (!textField.value.trim()) {
        textField.setAttribute("aria-invalid", "true");
        status.replaceChildren(refusalBox(emptyText, "The draft was not submitted."));
        textField.focus();
        return;
      }
      await settled();
      const submitted = await perform(status, controls, async () => {
        const next = values();
        if (unsaved(next)) send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
        show(await api("POST", `${sends}/${segment(send.id)}/submit`));
        return [`Submitted for approval. It is sent once a second person who may approve mail from ${mailbox.address} approves it; until then you can cancel the submission. `, outbound()];
      }, "The draft was not submitted.");
      if (submitted) onSettled();
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
      really.addEventListener("click", async () => {
        const deleted = await perform(status, [really, keep], async () => {
          await api("DELETE", `${sends}/${segment(send.id)}`);
          send = null;
          content.replaceChildren(empty("This draft was deleted."));
          return "Draft deleted.";
        }, "The draft was not deleted.");
        if (deleted) onSettled();
      });
    });
    return element;
  }

  show(send);
  return h("div", { class: "send-editor" }, content, status);
}

export async function composeView(view, mailbox) {
  document.title = `New message · ${mailbox.address} · Mailroom`;
  view.append(breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["New message"]));
  if (!access(mailbox).propose) {
    view.append(panel("New message", info(`Drafting mail from ${mailbox.address} needs the right to propose mail from it, which an administrator grants.`)));
    return;
  }
  view.append(panel(`New message from ${mailbox.address}`, sendEditor(mailbox, { text: await signatureFor(mailbox, null) })));
  view.querySelector("input")?.focus();
}

export async function sendView(view, mailbox, sendId) {
  const send = await api("GET", mailboxApi(mailbox.id, "sends", sendId));
  const title = subjectOf(send.subject);
  document.title = `${title} · Outbound · Mailroom`;
  const conversation = send.thread_id && access(mailbox).conversations
    ? h("p", {}, h("a", { href: mailHref(mailbox.id, send.thread_id), text: "Open the conversation it belongs to" }))
    : null;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound", mailHref(mailbox.id, "outbound")], [title]),
    panel(title, conversation, sendEditor(mailbox, { send })));
}

export async function outboundView(view, mailbox) {
  document.title = `Outbound · ${mailbox.address} · Mailroom`;
  const list = h("div", {}, loading());

  function sendRow(send) {
    const subject = subjectOf(send.subject);
    const mine = send.state === "submitted" && send.submitted_by === me.id;
    const cancel = mine ? h("button", { type: "button", class: "secondary" }, "Cancel submission", hidden(` of ${subject}`)) : null;
    // A refused send is its writer's to write again, with the reason in view.
    const refused = send.state === "refused";
    const again = refused && send.author === me.id && access(mailbox).redraft
      ? h("button", { type: "button" }, "Write it again", hidden(` “${subject}”`))
      : null;
    const tableRow = row(
      sendStateBadge(send.state),
      h("div", {},
        h("a", { href: mailHref(mailbox.id, "outbound", send.id), text: subject }),
        refused ? h("p", { class: "refused-inline" },
          h("span", { class: "refusal-label", text: `Refused${send.decided_by_name ? ` by ${send.decided_by_name}` : ""}: ` }),
          send.refusal_reason ?? "no reason given") : null),
      recipientWords(send.to),
      named(send.author, send.author_name),
      time(lastChange(send)),
      cancel || again ? h("div", { class: "button-row" }, cancel, again) : null);
    cancel?.addEventListener("click", async () => {
      const ok = await perform(rowStatus(tableRow), [cancel], () => api("POST", mailboxApi(mailbox.id, "sends", send.id, "cancel")), "The submission was not cancelled.");
      if (ok) await refresh();
    });
    again?.addEventListener("click", () => perform(rowStatus(tableRow), [again], async () => {
      const draft = await api("POST", mailboxApi(mailbox.id, "sends", send.id, "redraft"));
      location.hash = mailHref(mailbox.id, "outbound", draft.id);
    }, "It was not written again."));
    return tableRow;
  }

  const sendsTable = table(`Mail from ${mailbox.address}, newest first`, ["State", "Subject", "To", "Written by", "Last change", "Actions"], [], { stack: true });
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `${mailboxApi(mailbox.id, "sends")}${query(asked)}`);
      return { items: page.sends, next_cursor: page.next_cursor };
    },
    show: (sends) => {
      const rows = sends.map(sendRow);
      append(sendsTable.querySelector("tbody"), rows);
      for (const tableRow of rows) labelCells(tableRow);
    },
    more: "Show older mail",
    failure: "Older mail could not be loaded.",
  });

  async function refresh() {
    const sends = await pages.first();
    sendsTable.querySelector("tbody").replaceChildren(...sends.map(sendRow));
    for (const tableRow of sendsTable.querySelectorAll("tbody tr")) labelCells(tableRow);
    list.replaceChildren(sends.length ? sendsTable : empty("Nothing yet: no drafts of yours, and nothing submitted."));
  }

  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound"]),
    panel(`Outbound from ${mailbox.address}`,
      h("p", { class: "muted", text: "Your drafts, and every message from this mailbox that was submitted for approval, sent, not delivered or refused, newest first." }),
      access(mailbox).propose ? h("div", { class: "button-row" }, linkButton(mailHref(mailbox.id, "new"), "New message")) : null,
      list, pages.element));
  await refresh();
}

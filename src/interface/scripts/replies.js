// Saved replies and signatures (decision 0045): filling a text's placeholders
// from the conversation and the person writing, the signature a new draft
// starts with, the "Insert saved reply" control of the composer, the page
// where a mailbox's people keep its saved replies and signature
// (`#/mail/<mailbox>/replies`), and the person's own signature form on the
// account page. The node keeps texts as written; only this module fills them,
// because only the page knows whom a draft answers.

import { breadcrumbs, h, hidden, labelled, row, table, time } from "./dom.js";
import { me } from "./session.js";
import { api, SessionOver } from "./api.js";
import { askOnce, empty, info, panel, perform, rowStatus, statusArea } from "./shared.js";
import { access, mailboxApi, mailHref } from "./mail-shared.js";

/**
 * `text` with its placeholders filled: `customer` is whom the draft answers
 * ({ name, address }, or null when nobody yet), `mailbox` the one it is sent
 * from. A placeholder the page does not know is left as written (the node
 * refuses saving one, so only an older text could hold it).
 */
export function fillPlaceholders(text, { customer, mailbox }) {
  const customerName = customer?.name?.trim() || customer?.address || "";
  const values = {
    "customer.name": customerName,
    "customer.first_name": customerName.split(/\s+/)[0] ?? "",
    "customer.email": customer?.address ?? "",
    "me.name": me?.name ?? "",
    "me.email": me?.email ?? "",
    "mailbox.name": mailbox.display_name ?? "",
    "mailbox.address": mailbox.address ?? "",
  };
  return text.replace(/\{\{\s*([a-z_.]+)\s*\}\}/g, (whole, name) => (Object.hasOwn(values, name) ? values[name] : whole));
}

/** Reads `path`, or answers `fallback` when it cannot be had: a missing extra never stops a draft. */
async function readOr(path, fallback) {
  try {
    return await api("GET", path);
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    return fallback;
  }
}

/**
 * What a new draft from `mailbox` to `customer` starts with: two empty lines
 * to write in, then the person's own signature above the mailbox's (the
 * writer signs first, the team under them), placeholders filled; "" when
 * neither is set. Added once, when a draft is begun, never to a resumed one.
 */
export async function signatureFor(mailbox, customer) {
  const none = { text: "" };
  const [mine, theirs] = await Promise.all([readOr("/api/me/signature", none), readOr(mailboxApi(mailbox.id, "signature"), none)]);
  const parts = [mine.text, theirs.text].filter((text) => text?.trim()).map((text) => fillPlaceholders(text, { customer, mailbox }));
  return parts.length ? `\n\n${parts.join("\n\n")}` : "";
}

/**
 * `draft` as the writer should find it: one just begun from `mailbox` for
 * `customer` gets the signatures at its end (saved at once, so a reload
 * finds them); a resumed one (`resumed: true`) is answered as it is, so a
 * signature is never added twice.
 */
export async function withSignature(mailbox, draft, customer) {
  const signature = draft.resumed ? "" : await signatureFor(mailbox, customer);
  if (!signature) return draft;
  return api("PATCH", mailboxApi(mailbox.id, "sends", draft.id), { text: `${draft.text ?? ""}${signature}` });
}

/**
 * The composer's "Insert saved reply": a choice among the mailbox's saved
 * replies and a button that hands the chosen one, filled for `customer()`,
 * to `insert(text)`. Replies are read when the composer opens.
 */
export function savedReplyPicker(mailbox, { customer, insert, controls }) {
  const choice = h("select", { name: "saved_reply" }, h("option", { value: "", text: "Loading…" }));
  const button = h("button", { type: "button", class: "secondary", text: "Insert" });
  const status = statusArea();
  const manage = h("a", { href: mailHref(mailbox.id, "replies"), text: "Manage saved replies" });
  choice.disabled = true;
  button.disabled = true;
  const element = h("div", { class: "saved-reply-picker" },
    labelled("Insert saved reply", choice),
    h("div", { class: "button-row" }, button, manage), status);
  let replies = [];
  readOr(mailboxApi(mailbox.id, "saved-replies"), { saved_replies: [] }).then((list) => {
    replies = list.saved_replies;
    choice.replaceChildren(h("option", { value: "", text: replies.length ? "Choose a saved reply" : "None saved yet" }),
      ...replies.map((reply) => h("option", { value: reply.id, text: reply.name })));
    choice.disabled = !replies.length;
    button.disabled = !replies.length;
  });
  button.addEventListener("click", () => perform(status, [button, choice, ...controls], async () => {
    const chosen = replies.find((reply) => reply.id === choice.value);
    if (!chosen) {
      choice.focus();
      return null;
    }
    await insert(fillPlaceholders(chosen.body, { customer: customer(), mailbox }));
    choice.value = "";
    return `${chosen.name} inserted.`;
  }, "The saved reply was not inserted."));
  return element;
}

/** The placeholders a text may hold, as the node lists them, for a field's hint. */
const placeholderHint = (placeholders) =>
  `Placeholders are filled in when the text is inserted in a draft: ${placeholders.map((placeholder) => placeholder.written).join(", ")}.`;

/**
 * A signature's form: its text, Save and Remove. `path` is where it is kept;
 * `whose` says whose it is in the words of what was done.
 */
export function signatureForm(path, { current, whose, hint }) {
  const text = h("textarea", { name: "text", rows: 4, maxlength: current.limit });
  text.value = current.text;
  const save = h("button", { type: "submit", text: "Save signature" });
  const remove = h("button", { type: "button", class: "secondary", text: "Remove signature" });
  const status = statusArea();
  const form = h("form", { class: "signature-form" },
    labelled("Signature", text, hint),
    h("div", { class: "button-row" }, save, remove), status);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    perform(status, [save, remove], async () => {
      text.value = (await api("PUT", path, { text: text.value })).text;
      return `${whose} signature is saved: new drafts start with it.`;
    }, "The signature was not saved.");
  });
  remove.addEventListener("click", () => perform(status, [save, remove], async () => {
    text.value = (await api("DELETE", path)).text;
    return `${whose} signature is removed.`;
  }, "The signature was not removed."));
  return form;
}

/** The signed-in person's own signature, for the account page. */
export async function mySignature() {
  return signatureForm("/api/me/signature", {
    current: await api("GET", "/api/me/signature"),
    whose: "Your",
    hint: "Plain text. Your new drafts start with it, above the mailbox's own signature. {{me.name}} and the other placeholders of saved replies are filled in.",
  });
}

/** `#/mail/<mailbox>/replies`: the mailbox's saved replies, kept by those who draft from it, and its signature. */
export async function savedRepliesView(view, mailbox) {
  document.title = `Saved replies · ${mailbox.address} · Mailroom`;
  view.append(breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Saved replies"]));
  if (!access(mailbox).propose) {
    view.append(panel("Saved replies", info(`Saved replies and the signature of ${mailbox.address} are kept by those who may draft mail from it, a right an administrator grants.`)));
    return;
  }
  const path = mailboxApi(mailbox.id, "saved-replies");
  const [list, signature] = await Promise.all([api("GET", path), api("GET", mailboxApi(mailbox.id, "signature"))]);
  const hint = placeholderHint(list.placeholders);
  const listed = h("div");

  function replyRow(reply) {
    const edit = h("button", { type: "button", class: "secondary" }, "Edit", hidden(` ${reply.name}`));
    const remove = h("button", { type: "button", class: "secondary danger" }, "Delete", hidden(` ${reply.name}`));
    const tableRow = row(h("strong", { text: reply.name }), h("pre", { class: "mail-text saved-reply-text", text: reply.body }),
      time(reply.updated_at), h("div", { class: "button-row" }, edit, remove));
    edit.addEventListener("click", () => {
      editor.replaceChildren(replyForm(reply));
      editor.querySelector("input")?.focus();
    });
    remove.addEventListener("click", () => askOnce(rowStatus(tableRow), {
      from: remove,
      label: `Delete ${reply.name}?`,
      question: `Delete the saved reply ${reply.name}? Drafts it was inserted in keep their text.`,
      yes: ["Delete for good", hidden(` ${reply.name}`)],
      act: async () => {
        await api("DELETE", `${path}/${encodeURIComponent(reply.id)}`);
        list.saved_replies = list.saved_replies.filter((kept) => kept.id !== reply.id);
        draw();
        return null;
      },
      failure: `${reply.name} was not deleted.`,
    }));
    return tableRow;
  }

  function draw() {
    listed.replaceChildren(list.saved_replies.length
      ? table("Saved replies", ["Name", "Text", "Changed", "Actions"], list.saved_replies.map(replyRow), { stack: true })
      : empty("None yet. A saved reply is a text anyone drafting from this mailbox can insert in a reply."));
  }

  /** The form that adds a saved reply, or changes `reply`. */
  function replyForm(reply = null) {
    const name = h("input", { type: "text", name: "name", autocomplete: "off", required: true, maxlength: 80, value: reply?.name ?? "" });
    const body = h("textarea", { name: "body", rows: 6, required: true });
    body.value = reply?.body ?? "";
    const save = h("button", { type: "submit", text: reply ? "Save changes" : "Save reply" });
    const cancel = reply ? h("button", { type: "button", class: "secondary", text: "Cancel" }) : null;
    const status = statusArea();
    const form = h("form", { class: "saved-reply-form" },
      h("h3", { text: reply ? `Change ${reply.name}` : "Add a saved reply" }),
      labelled("Name", name, "Up to 80 characters, different from the mailbox's other saved replies."),
      labelled("Text", body, hint),
      h("div", { class: "button-row" }, save, cancel), status);
    cancel?.addEventListener("click", () => editor.replaceChildren(replyForm()));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      perform(status, [save, cancel].filter(Boolean), async () => {
        const written = { name: name.value, body: body.value };
        const saved = reply
          ? await api("PATCH", `${path}/${encodeURIComponent(reply.id)}`, written)
          : await api("POST", path, written);
        list.saved_replies = [...list.saved_replies.filter((kept) => kept.id !== saved.id), saved]
          .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: "base" }));
        draw();
        if (reply) editor.replaceChildren(replyForm());
        else form.reset();
        return reply ? null : `${saved.name} saved: anyone drafting from ${mailbox.address} can insert it.`;
      }, reply ? "The saved reply was not changed." : "The reply was not saved.");
    });
    return form;
  }

  // Where the form is: adding a reply, or changing the one whose Edit was pressed.
  const editor = h("div", {}, replyForm());
  draw();
  view.append(
    panel(`Saved replies of ${mailbox.address}`, listed, editor),
    panel(`Signature of ${mailbox.address}`, signatureForm(mailboxApi(mailbox.id, "signature"), {
      current: signature,
      whose: "The mailbox's",
      hint: `Plain text. New drafts from ${mailbox.address} end with it, below the writer's own signature. ${hint}`,
    })));
}

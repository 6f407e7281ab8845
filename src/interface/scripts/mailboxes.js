// Mailboxes (administrators): every mailbox on the node, creating one and
// renaming it, and (#/mailboxes/webhooks/<mailboxId>) the endpoints told of a
// mailbox's changes (webhooks.js). Reading a mailbox's mail is Mail's (mail.js).

import { breadcrumbs, h, hidden, labelled, linkButton, onRequest, row, table, time } from "./dom.js";
import { api, segment } from "./api.js";
import { webhooksPanel } from "./webhooks.js";
import { actionForm, codesToggle, empty, loading, panel, rowStatus, statusArea, success } from "./shared.js";
import { directory } from "./names.js";
import { loadVocabulary, relationTerm } from "./vocabulary.js";

/** What the signed-in administrator holds on a mailbox, in words. */
function heldWords(vocabulary, mailbox) {
  return mailbox.held.length
    ? h("ul", { class: "relations" }, mailbox.held.map((relation) => h("li", {}, relationTerm(vocabulary, relation))))
    : h("span", { class: "muted", text: "Nothing" });
}

export async function renderMailboxes(view, params = []) {
  const [which, mailboxId] = params;
  if (which === "webhooks" && mailboxId) return renderWebhooks(view, mailboxId);
  const vocabulary = await loadVocabulary();
  const list = h("div", {}, loading());
  const listStatus = statusArea();

  const address = h("input", { type: "email", name: "address", autocomplete: "off", required: true });
  const displayName = h("input", { type: "text", name: "display_name", autocomplete: "off", required: true, maxlength: 100 });
  const create = actionForm({
    fields: [
      labelled("Address", address, "Cloudflare Email Routing must deliver this address's mail to this Worker."),
      labelled("Display name", displayName, "Shown for the mailbox, and the sender's name on mail it sends."),
    ],
    submit: "Create mailbox",
    failureTitle: "The mailbox was not created.",
    async onSubmit(form) {
      const mailbox = await api("POST", "/api/mailboxes", { address: address.value, display_name: displayName.value });
      form.reset();
      await refresh();
      address.focus();
      return [`Created ${mailbox.address}. Nobody can see its mail or send from it until you grant relations on it under Relations.`];
    },
  });

  function mailboxRow(mailbox) {
    const rename = h("button", { type: "button", class: "secondary" }, "Rename", hidden(` ${mailbox.address}`));
    const tableRow = row(
      h("span", { class: "mailbox" }, h("strong", { class: "mailbox-address", title: mailbox.id, text: mailbox.address }), onRequest(mailbox.id)),
      mailbox.display_name, time(mailbox.created_at), heldWords(vocabulary, mailbox),
      h("div", { class: "button-row" }, rename,
        linkButton(`#/mailboxes/webhooks/${encodeURIComponent(mailbox.id)}`, "Webhooks", { secondary: true, context: ` of ${mailbox.address}` })));
    rename.addEventListener("click", () => {
      const name = h("input", { type: "text", name: "display_name", autocomplete: "off", required: true, maxlength: 100, value: mailbox.display_name });
      const close = h("button", { type: "button", class: "secondary", text: "Cancel" });
      const form = actionForm({
        className: "action-form inline",
        fields: [labelled(`New display name for ${mailbox.address}`, name)],
        submit: "Save name",
        failureTitle: `${mailbox.address} was not renamed.`,
        async onSubmit() {
          const renamed = await api("PATCH", `/api/mailboxes/${segment(mailbox.id)}`, { display_name: name.value });
          await refresh();
          listStatus.replaceChildren(success(`Renamed ${renamed.address} to “${renamed.display_name}”.`));
        },
      });
      form.querySelector(".field.actions").append(close);
      const cell = rowStatus(tableRow);
      close.addEventListener("click", () => {
        cell.parentElement.remove();
        rename.focus();
      });
      cell.replaceChildren(form);
      name.focus();
    });
    return tableRow;
  }

  async function refresh() {
    const mailboxes = await directory.loadAllMailboxes();
    list.replaceChildren(mailboxes.length
      ? table("Mailboxes on this node", ["Address", "Display name", "Created", "You may", "Actions"], mailboxes.map(mailboxRow), { stack: true })
      : empty("No mailboxes yet."));
  }

  view.append(codesToggle(view), panel("Create a mailbox", create), panel("Every mailbox", list, listStatus));
  await refresh();
}

/** A mailbox's webhooks. */
async function renderWebhooks(view, mailboxId) {
  const mailboxes = await directory.loadAllMailboxes();
  const mailbox = mailboxes.find((each) => each.id === mailboxId);
  const address = mailbox?.address ?? mailboxId;
  document.title = `Webhooks of ${address} · Mailroom`;
  view.append(breadcrumbs(["Mailboxes", "#/mailboxes"], [`Webhooks of ${address}`, null]),
    webhooksPanel(`/api/mailboxes/${segment(mailboxId)}/webhooks`, `${address}'s changes`));
}

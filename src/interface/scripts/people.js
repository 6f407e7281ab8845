// People (administrators): everyone on the node, creating a person, and
// disabling or enabling one.

import { h, hidden, labelled, onRequest, row, table, time } from "./dom.js";
import { me } from "./session.js";
import { api, segment } from "./api.js";
import { actionForm, codesToggle, empty, loading, offerUndo, panel, perform, rowStatus, statusArea } from "./shared.js";
import { directory } from "./names.js";

export async function renderPeople(view) {
  const list = h("div", {}, loading());
  /** What was just done to someone, said above the list the table is drawn again under. */
  const said = statusArea();

  const name = h("input", { type: "text", name: "name", autocomplete: "off", required: true });
  const email = h("input", { type: "email", name: "email", autocomplete: "off", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true });
  const create = actionForm({
    fields: [
      labelled("Name", name),
      labelled("Email", email),
      labelled("First password", password, "At least 12 characters. They can change it under Account."),
    ],
    submit: "Create person",
    failureTitle: "The person was not created.",
    async onSubmit(form) {
      const person = await api("POST", "/api/people", { name: name.value, email: email.value, password: password.value });
      form.reset();
      await refresh();
      name.focus();
      return [`Created ${person.name} (${person.email}). They hold nothing until you grant them a relation under Relations.`];
    },
  });

  const change = (person, verb) => api("POST", `/api/people/${segment(person.id)}/${verb}`);
  async function setDisabled(person, disable, button, tableRow) {
    const verb = disable ? "disable" : "enable";
    const ok = await perform(rowStatus(tableRow), [button], () => change(person, verb), `${person.name} was not ${verb}d.`);
    if (!ok) return;
    await refresh();
    // Disabling is done at once: Undo enables them again, for a few seconds.
    if (disable) {
      offerUndo(said, {
        done: `Disabled ${person.name}: they are signed out and cannot sign in.`,
        undo: async () => {
          await change(person, "enable");
          await refresh();
        },
        undone: `Enabled ${person.name} again.`,
        failure: `${person.name} was not enabled again.`,
      });
    }
  }

  function personRow(person) {
    const self = person.id === me.id;
    const tableRow = row(
      h("span", { class: "person" }, h("span", { class: "who-name", title: person.id, text: person.name }), onRequest(person.id)),
      h("span", { class: "email", text: person.email }),
      time(person.created_at),
      person.disabled_at
        ? [h("span", { class: "badge off", text: "Disabled" }), h("span", { class: "since" }, "since ", time(person.disabled_at))]
        : h("span", { class: "badge on", text: "Active" }),
      null,
    );
    const cell = tableRow.cells[4];
    if (self) {
      cell.append(h("span", { class: "muted", text: "You" }));
    } else {
      const disable = !person.disabled_at;
      const button = h("button", { type: "button", class: disable ? "secondary danger" : "secondary" }, disable ? "Disable" : "Enable", hidden(` ${person.name}`));
      button.addEventListener("click", () => setDisabled(person, disable, button, tableRow));
      cell.append(button);
    }
    return tableRow;
  }

  async function refresh() {
    const people = await directory.loadPeople();
    list.replaceChildren(people.length
      ? table("People on this node", ["Name", "Email", "Created", "Status", "Actions"], people.map(personRow), { stack: true })
      : empty("Nobody yet."));
  }

  view.append(codesToggle(view), panel("Create a person", create), panel("Everyone on the node", said, list));
  await refresh();
}

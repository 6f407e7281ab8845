// Sources (SPEC §9; administrators): the services that push reminders into
// people's inboxes. Creating one shows its credential once; revoking one ends
// that credential for good, and leaves its events with the people they belong to.

import { code, h, hidden, labelCells, labelled, onRequest, row, table, time, uniqueId } from "./dom.js";
import { api, segment } from "./api.js";
import { actionForm, askOnce, codesToggle, empty, loading, panel, rowStatus, secretField } from "./shared.js";
import { directory, named } from "./names.js";

/** The body a source pushes, as an example: the fields a person would recognise on the event. */
const EXAMPLE_EVENT = {
  person: "someone@example.com",
  source_ref: "passport-4471",
  topic: "renewal",
  title: "Renew the passport",
  due_at: "2027-03-01",
};

/** What a new source's credential is shown in, once: the node keeps only its hash. */
function handover(source, credential) {
  const headingId = uniqueId("handover");
  const done = h("button", { type: "button", class: "secondary", text: "I have copied it: hide it" });
  const example = [
    `curl -X PUT ${location.origin}/api/source/events \\`,
    `  -H "Authorization: Bearer mr_src_…" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${JSON.stringify(EXAMPLE_EVENT)}'`,
  ].join("\n");
  const box = h("section", { class: "once", "aria-labelledby": headingId },
    h("h3", { id: headingId, text: `The credential for ${source.name}` }),
    h("p", { class: "once-warning" }, h("strong", { text: "Shown once. " }),
      "Copy it now into the service's configuration: the node keeps only a hash of it, so it will not be shown again, and leaving this page loses it."),
    secretField(`Credential for ${source.name}`, credential),
    h("p", { class: "hint" }, "The service sends it as ", code("Authorization: Bearer mr_src_…"),
      " and puts a reminder into a person's inbox by their sign-in address, like this; pushing the same reference and topic again updates it, and ",
      code("DELETE"), " with them withdraws it:"),
    h("pre", { class: "example", text: example }),
    h("div", { class: "button-row" }, done));
  done.addEventListener("click", () => box.remove());
  return box;
}

export async function renderSources(view) {
  const list = h("div", {}, loading());
  const handovers = h("div", { class: "handovers" });

  const name = h("input", { type: "text", name: "name", autocomplete: "off", required: true, maxlength: 100, spellcheck: "false" });
  const failure = "The source was not created.";
  const create = actionForm({
    fields: [labelled("Name", name, "Shown on its reminders, such as “passport-office”: letters, digits, - _ and . only.")],
    submit: "Create source",
    failureTitle: failure,
    async onSubmit(form) {
      const created = await api("POST", "/api/reminder-sources", { name: name.value });
      form.reset();
      await refresh();
      const box = handover(created.source, created.credential);
      handovers.replaceChildren(box);
      box.querySelector("input")?.focus();
      return ["Created ", h("strong", { text: created.source.name }), ". Its credential is below."];
    },
  });

  function sourceRow(source) {
    const tableRow = row(
      h("span", {}, h("strong", { title: source.id, text: source.name }), onRequest(source.id)),
      [time(source.created_at), h("span", { class: "since" }, "by ", named(source.created_by))],
      source.revoked_at
        ? [h("span", { class: "badge off", text: "Revoked" }), h("span", { class: "since" }, "since ", time(source.revoked_at))]
        : h("span", { class: "badge on", text: "Active" }),
      null);
    const cell = tableRow.cells[3];
    if (source.revoked_at) {
      cell.append(h("span", { class: "muted", text: "None: a revoked source stays revoked" }));
      return tableRow;
    }
    const revoke = h("button", { type: "button", class: "secondary danger" }, "Revoke", hidden(` ${source.name}`));
    cell.append(revoke);
    revoke.addEventListener("click", () => {
      const said = rowStatus(tableRow);
      askOnce(said, {
        from: revoke,
        label: `Revoke ${source.name}?`,
        question: `Revoke ${source.name}? Its credential stops working at once and cannot be restored. The reminders it pushed stay in people's inboxes, for them to close.`,
        yes: ["Revoke for good", hidden(` ${source.name}`)],
        act: async () => {
          const revoked = await api("POST", `/api/reminder-sources/${segment(source.id)}/revoke`);
          const next = sourceRow(revoked);
          said.parentElement.remove();
          tableRow.replaceWith(next);
          labelCells(next);
          rowStatus(next).replaceChildren(h("div", { class: "notice success", role: "status", text: `Revoked ${revoked.name}: its credential is refused from now on.` }));
          return null;
        },
        failure: `${source.name} was not revoked.`,
      });
    });
    return tableRow;
  }

  async function refresh() {
    const [sources] = await Promise.all([directory.loadSources(), directory.loadPeople()]);
    list.replaceChildren(sources.length
      ? table("Reminder sources, oldest first", ["Name", "Created", "Status", "Actions"], sources.map(sourceRow), { stack: true })
      : empty("No sources yet."));
  }

  view.append(
    codesToggle(view),
    panel("Create a source",
      h("p", { class: "muted", text: "A source is a service (a calendar, a records system) that puts reminders into people's inboxes. People can close its reminders, but only the source changes or withdraws them." }),
      create, handovers),
    panel("Every source", list));
  await refresh();
}

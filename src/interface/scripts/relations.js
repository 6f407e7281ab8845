// Relations (administrators): who holds what, granting a relation and revoking
// one. Revoking what the signed-in person holds starts the interface again.
// Relations read in the vocabulary's words and holders by name; their codes
// and ids are shown on request.

import { h, hidden, labelled, onRequest, replace, row, table, time } from "./dom.js";
import { me, start } from "./session.js";
import { api, SessionOver } from "./api.js";
import { actionForm, codesToggle, empty, loading, offerUndo, panel, perform, rowStatus, statusArea } from "./shared.js";
import { directory, members, named, objectWords, subjectWords } from "./names.js";
import { loadVocabulary, relationTerm, relationText } from "./vocabulary.js";

export async function renderRelations(view) {
  const list = h("div", {}, loading());
  /** What was just revoked, said above the list the table is drawn again under. */
  const revoked = statusArea();
  // Agents' names, for the tuples they hold; the relations are readable without them.
  const [people, teams, mailboxes, published] = await Promise.all([
    directory.loadPeople(), directory.loadTeams(), directory.loadAllMailboxes(), loadVocabulary(),
    directory.loadAgents().catch((error) => {
      if (error instanceof SessionOver) throw error;
    }),
  ]);
  const vocabulary = published.relations;

  const subjectChoice = h("select", { name: "subject", required: true },
    h("option", { value: "", text: "Choose who holds it…" }),
    h("optgroup", { label: "People" }, people.map((person) => h("option", { value: person.id, text: `${person.name} <${person.email}>${person.disabled_at ? " (disabled)" : ""}` }))),
    teams.length ? h("optgroup", { label: "Every member of a team" }, teams.map((team) => h("option", { value: `${team.id}#member`, text: `Members of ${team.name}` }))) : null);
  // No relation is chosen until the administrator chooses one: a default would
  // make whoever is granted it an administrator without a question.
  const relationChoice = h("select", { name: "relation", required: true },
    h("option", { value: "", text: "Choose what they may do…" }),
    h("optgroup", { label: "On the organisation" }, vocabulary.filter((r) => r.on === "organization").map((r) => h("option", { value: r.name, text: r.description }))),
    h("optgroup", { label: "On a mailbox" }, vocabulary.filter((r) => r.on === "mailbox").map((r) => h("option", { value: r.name, text: r.description }))));
  const objectChoice = h("select", { name: "object", required: true });
  const relationField = labelled("Relation", relationChoice, " ");
  // The chosen relation in full (a narrow select cuts it short), and its code on request.
  const relationHint = relationField.querySelector(".hint");
  // Administering the node is asked for twice: the box must be ticked to grant it.
  const administers = h("input", { type: "checkbox", name: "administers" });
  const administersField = h("div", { class: "field confirm", hidden: true },
    h("label", {}, administers, " Make them an administrator of the whole node: people, relations, agents, mailboxes and the audit trail."));

  // The objects a relation can be held on: the organisation, or a mailbox (by address).
  function fitObjects() {
    const relation = vocabulary.find((r) => r.name === relationChoice.value);
    replace(relationHint, relation ? [relation.description, onRequest(relation.name)] : null);
    const administration = relationChoice.value === "org.admin";
    administersField.hidden = !administration;
    administers.required = administration;
    if (!administration) administers.checked = false;
    const chosen = objectChoice.value;
    if (relation?.on === "organization") {
      objectChoice.replaceChildren(h("option", { value: "org", text: "The organisation" }));
    } else if (mailboxes.length) {
      replace(objectChoice,
        h("option", { value: "", text: "Choose a mailbox…" }),
        mailboxes.map((mailbox) => h("option", { value: mailbox.id, text: `${mailbox.address} (${mailbox.display_name})` })));
      if (mailboxes.some((mailbox) => mailbox.id === chosen)) objectChoice.value = chosen;
    } else {
      objectChoice.replaceChildren(h("option", { value: "", text: "No mailboxes yet: create one under Mailboxes" }));
    }
  }
  relationChoice.addEventListener("change", fitObjects);
  fitObjects();

  const grant = actionForm({
    fields: [labelled("Subject", subjectChoice, "A person, or every member of a team."), relationField, administersField, labelled("Object", objectChoice)],
    submit: "Grant",
    failureTitle: "The relation was not granted.",
    async onSubmit() {
      const tuple = await api("POST", "/api/relations", { subject: subjectChoice.value, relation: relationChoice.value, object: objectChoice.value });
      await refresh();
      return ["Granted to ", h("strong", { text: subjectWords(tuple.subject) }), " on ", h("strong", { text: objectWords(tuple.object) }), ": ",
        relationTerm(published, tuple.relation)];
    },
  });

  function relationRow(tuple) {
    const words = relationText(published, tuple.relation);
    const button = h("button", { type: "button", class: "secondary danger" }, "Revoke",
      hidden(` “${words}” on ${objectWords(tuple.object)} from ${subjectWords(tuple.subject)}`));
    const tableRow = row(members(tuple.subject), relationTerm(published, tuple.relation), named(tuple.object),
      [time(tuple.granted_at), h("span", { class: "since" }, "by ", named(tuple.granted_by))], button);
    button.addEventListener("click", async () => {
      const change = { subject: tuple.subject, relation: tuple.relation, object: tuple.object };
      const ok = await perform(rowStatus(tableRow), [button], () => api("POST", "/api/relations/revoke", change),
        `“${words}” was not revoked from ${subjectWords(tuple.subject)}.`);
      if (!ok) return;
      // Revoking what the signed-in person holds changes what they may see.
      const mine = tuple.subject === me.id || me.teams.some((team) => tuple.subject === `${team.id}#member`);
      if (mine) return start();
      await refresh();
      // Revoking is done at once: Undo grants the same again, for a few seconds.
      offerUndo(revoked, {
        done: [`Revoked “${words}” on ${objectWords(tuple.object)} from `, h("strong", { text: subjectWords(tuple.subject) }), "."],
        undo: async () => {
          await api("POST", "/api/relations", change);
          await refresh();
        },
        undone: `Granted “${words}” on ${objectWords(tuple.object)} to ${subjectWords(tuple.subject)} again.`,
        failure: `“${words}” was not granted again.`,
      });
    });
    return tableRow;
  }

  async function refresh() {
    const { relations } = await api("GET", "/api/relations");
    list.replaceChildren(relations.length
      ? table("Relationship tuples", ["Who", "What they may do", "On", "Granted", "Actions"], relations.map(relationRow), { stack: true })
      : empty("No relations are held."));
  }

  view.append(codesToggle(view), panel("Grant a relation", grant), panel("Who holds what", revoked, list));
  await refresh();
}

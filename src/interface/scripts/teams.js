// Teams (administrators): every team with its members, creating a team, and
// adding and removing members.

import { code, h, hidden, labelled, onRequest, row, table, time, uniqueId } from "./dom.js";
import { api, segment } from "./api.js";
import { actionForm, codesToggle, empty, loading, panel, perform, rowStatus } from "./shared.js";
import { directory } from "./names.js";

export async function renderTeams(view) {
  const list = h("div", {}, loading());
  let people = [];

  const teamName = h("input", { type: "text", name: "name", autocomplete: "off", required: true, maxlength: 100 });
  const create = actionForm({
    fields: [labelled("Team name", teamName, "Unique on the node. A relation granted to the team is held by every member.")],
    submit: "Create team",
    failureTitle: "The team was not created.",
    async onSubmit(form) {
      const team = await api("POST", "/api/teams", { name: teamName.value });
      form.reset();
      await refresh();
      return [`Created ${team.name}. Add its members below; a relation granted to the team under Relations is held by every member.`];
    },
  });

  function teamCard(team) {
    const members = team.members.map((id) => directory.people.get(id) ?? { id, name: "", email: "" });
    const rows = members.map((person) => {
      const button = h("button", { type: "button", class: "secondary" }, "Remove", hidden(` ${person.name || person.id} from ${team.name}`));
      const tableRow = row(
        person.name ? h("span", { class: "person" }, h("span", { class: "who-name", title: person.id, text: person.name }), onRequest(person.id)) : code(person.id),
        h("span", { class: "email", text: person.email }),
        button);
      button.addEventListener("click", async () => {
        const ok = await perform(rowStatus(tableRow), [button],
          () => api("DELETE", `/api/teams/${segment(team.id)}/members/${segment(person.id)}`),
          `${person.name || person.id} was not removed from ${team.name}.`);
        if (ok) await refresh();
      });
      return tableRow;
    });

    const candidates = people.filter((person) => !team.members.includes(person.id));
    const choice = h("select", { name: "person", required: true },
      h("option", { value: "", text: "Choose a person…" }),
      candidates.map((person) => h("option", { value: person.id, text: `${person.name} <${person.email}>${person.disabled_at ? " (disabled)" : ""}` })));
    const add = candidates.length
      ? actionForm({
          className: "action-form inline",
          fields: [labelled(`Add a person to ${team.name}`, choice)],
          submit: "Add to team",
          failureTitle: `The person was not added to ${team.name}.`,
          async onSubmit() {
            await api("PUT", `/api/teams/${segment(team.id)}/members/${segment(choice.value)}`);
            await refresh();
          },
        })
      : h("p", { class: "muted", text: "Everyone on the node is a member." });

    const headingId = uniqueId("team");
    return h("article", { class: "card", "aria-labelledby": headingId },
      h("header", { class: "card-header" },
        h("h3", { id: headingId, text: team.name }),
        h("p", { class: "muted" }, "Created ", time(team.created_at), " · ", `${team.members.length} ${team.members.length === 1 ? "member" : "members"}`),
        h("p", { class: "muted on-request" }, "Id", onRequest(team.id), " · its members, as a relation's subject:", onRequest(`${team.id}#member`))),
      rows.length ? table(`Members of ${team.name}`, ["Name", "Email", "Actions"], rows, { stack: true }) : empty("No members yet."),
      add);
  }

  async function refresh() {
    const [teams, everyone] = await Promise.all([directory.loadTeams(), directory.loadPeople()]);
    people = everyone;
    list.replaceChildren(...(teams.length ? teams.map(teamCard) : [empty("No teams yet.")]));
  }

  view.append(codesToggle(view), panel("Create a team", create), panel("All teams", list));
  await refresh();
}

// The directory of names: the people, teams, mailboxes, agents and sources the
// page has seen; named() and members(), which show the name alone where it is
// known, with the id in its title and on request (shared.js's codesToggle());
// and who(), which shows an id with its name beside it.

import { code, h, onRequest } from "./dom.js";
import { me } from "./session.js";
import { api } from "./api.js";

// Names of what the page has seen, so ids can be shown with the name beside them.
export const directory = {
  people: new Map(),
  teams: new Map(),
  mailboxes: new Map(),
  agents: new Map(),
  sources: new Map(),
  /**
   * Names the node gave beside an id in an answer about something else (a
   * conversation's assignee, a send's author): all a person who is not an
   * administrator learns of a colleague, and enough to name them elsewhere.
   */
  toldNames: new Map(),
  rememberPeople(people) {
    for (const person of people) this.people.set(person.id, person);
  },
  rememberTeams(teams) {
    for (const team of teams) this.teams.set(team.id, team);
  },
  rememberMailboxes(mailboxes) {
    for (const mailbox of mailboxes) this.mailboxes.set(mailbox.id, mailbox);
  },
  rememberAgents(agents) {
    for (const agent of agents) this.agents.set(agent.id, agent);
  },
  rememberSources(sources) {
    for (const source of sources) this.sources.set(source.id, source);
  },
  rememberName(id, name) {
    if (id && name) this.toldNames.set(id, name);
  },
  async loadPeople() {
    const { people } = await api("GET", "/api/people");
    this.rememberPeople(people);
    return people;
  },
  async loadTeams() {
    const { teams } = await api("GET", "/api/teams");
    this.rememberTeams(teams);
    return teams;
  },
  /** Every mailbox on the node (administrators only). */
  async loadAllMailboxes() {
    const { mailboxes } = await api("GET", "/api/mailboxes/all");
    this.rememberMailboxes(mailboxes);
    return mailboxes;
  },
  /** Every agent on the node (administrators only). */
  async loadAgents() {
    const { agents } = await api("GET", "/api/agents");
    this.rememberAgents(agents);
    return agents;
  },
  /** Every reminder source on the node (administrators only). */
  async loadSources() {
    const { sources } = await api("GET", "/api/reminder-sources");
    this.rememberSources(sources);
    return sources;
  },
  nameOf(id) {
    if (!id) return null;
    return this.people.get(id)?.name ?? this.agents.get(id)?.name ?? this.teams.get(id)?.name ?? this.mailboxes.get(id)?.address
      ?? this.sources.get(id)?.name ?? (me?.id === id ? me.name : null) ?? this.toldNames.get(id) ?? null;
  },
};

/** A person or agent by name and id; `knownName` is the node's word for it where the directory has none. */
export function who(id, knownName) {
  if (!id) return h("span", { class: "muted", text: "nobody" });
  if (id === "org") return h("span", { class: "who" }, h("span", { class: "who-name", text: "The organisation" }), " ", code("org"));
  const name = directory.nameOf(id) ?? knownName;
  return h("span", { class: "who" }, name ? [h("span", { class: "who-name", text: name }), " "] : null, code(id));
}

/**
 * Someone or something by name: a person, an agent, a team, a mailbox (by
 * address), a source or the organisation. The id is in the name's title and
 * shown on request; where no name is known, the id is all there is to show.
 * `knownName` is the node's word for it where the directory has none.
 */
export function named(id, knownName) {
  if (!id) return h("span", { class: "muted", text: "nobody" });
  const name = id === "org" ? "The organisation" : directory.nameOf(id) ?? knownName;
  if (!name) return code(id);
  return h("span", { class: "who" }, h("span", { class: "who-name", title: id, text: name }), onRequest(id));
}

/** A relation's subject by name: a person, an agent, or the members of a team. */
export function members(id) {
  const team = /^(tm_[0-9A-Za-z]+)#member$/.exec(id ?? "");
  if (!team) return named(id);
  const name = directory.teams.get(team[1])?.name;
  if (!name) return h("span", { class: "who" }, h("span", { class: "who-name", text: "Members of a team" }), " ", code(id));
  return h("span", { class: "who" }, h("span", { class: "who-name", title: id, text: `Members of ${name}` }), onRequest(id));
}

/** The plain words for a relation's subject, as a sentence can carry them. */
export function subjectWords(id) {
  const team = /^(tm_[0-9A-Za-z]+)#member$/.exec(id ?? "");
  if (team) return `the members of ${directory.teams.get(team[1])?.name ?? team[1]}`;
  return directory.nameOf(id) ?? id;
}

/** The plain words for a relation's object: the organisation, or a mailbox's address. */
export const objectWords = (id) => (id === "org" ? "the organisation" : directory.mailboxes.get(id)?.address ?? id);

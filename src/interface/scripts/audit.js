// Audit (administrators): the trail, newest first, a page at a time, each
// entry read as who did what, on what, and when: names for ids, the route's
// summary for its action (the contract's words, which the node adds to each
// entry), the vocabulary's words for relations and capabilities (the ids and
// codes on request); narrowed by who, what and when; and verifying its hash
// chain from the first entry to the head.

import { code, h, labelCells, labelled, onRequest, row, table, time } from "./dom.js";
import { api, query, SessionOver } from "./api.js";
import { codesToggle, panel, perform, statusArea } from "./shared.js";
import { directory, members, named } from "./names.js";
import { capabilityTerm, loadVocabulary, relationTerm } from "./vocabulary.js";

/**
 * The audit trail's actor cell. An agent acts under a person's authority, so
 * its act reads as one cell: `agt_… for usr_…`.
 */
function actor(entry) {
  switch (entry.actor_kind) {
    case "agent":
      return h("span", { class: "actor" }, named(entry.actor), " for ", entry.delegator ? named(entry.delegator) : h("span", { class: "muted", text: "an unknown person" }));
    case "person":
    case "source":
      return named(entry.actor);
    default:
      return h("span", { class: "muted", text: "not signed in" });
  }
}

const NAMED = /^(usr|agt|tm|src|mbx)_[0-9A-Za-z]+(#member)?$/;

/**
 * One value of an audit entry's detail: an id by its name, a relation or a
 * capability in words, a list item by item, an object key by key.
 */
function detailValue(vocabulary, value) {
  if (value === null || value === undefined) return h("span", { class: "muted", text: "none" });
  if (typeof value === "string") {
    if (NAMED.test(value)) return members(value);
    if (vocabulary?.relations.some((relation) => relation.name === value)) return relationTerm(vocabulary, value);
    if (vocabulary?.capabilities.some((capability) => capability.name === value)) return capabilityTerm(vocabulary, value);
    return value;
  }
  if (Array.isArray(value)) {
    return value.length ? h("ul", { class: "detail-list" }, value.map((item) => h("li", {}, detailValue(vocabulary, item)))) : h("span", { class: "muted", text: "none" });
  }
  if (typeof value === "object") return detail(vocabulary, value);
  return JSON.stringify(value);
}

/** Further facts of an audit entry, key by key. */
function detail(vocabulary, value) {
  if (value === null || value === undefined) return null;
  if (typeof value !== "object" || Array.isArray(value)) return h("span", {}, detailValue(vocabulary, value));
  return h("dl", { class: "detail" }, Object.entries(value).map(([key, item]) => [
    h("dt", { text: key }),
    h("dd", {}, detailValue(vocabulary, item)),
  ]));
}

/** An action in words: its route's summary, or its name made readable; the name on request. */
function actionWords(entry) {
  const words = entry.summary ?? entry.action.replaceAll("_", " ").replace(/^./, (first) => first.toUpperCase());
  return h("span", { class: "action" }, h("span", { title: entry.action, text: words }), onRequest(entry.action));
}

/** The start of a day in the person's time zone, as the moment the node reads. */
const dayStarts = (day) => new Date(`${day}T00:00:00`).toISOString();
/** The end of a day in the person's time zone. */
const dayEnds = (day) => new Date(new Date(`${day}T00:00:00`).getTime() + 86_400_000 - 1).toISOString();

export async function renderAudit(view) {
  const PAGE = 50;
  const entries = table("Audit entries, newest first", ["When", "Who", "What", "On", "Outcome", "Detail"], [], { stack: true });
  entries.querySelector("table").classList.add("audit");
  const body = entries.querySelector("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true, text: "Show older entries" });
  const listStatus = statusArea();
  const none = h("p", { class: "muted", hidden: true, text: "No entry matches." });
  let cursor = null;

  // Names for the actor and object cells, and words for relations and
  // capabilities; the trail is readable without them.
  const vocabulary = await loadVocabulary().catch((error) => {
    if (error instanceof SessionOver) throw error;
    return null;
  });
  await Promise.all([directory.loadPeople(), directory.loadTeams(), directory.loadAllMailboxes(), directory.loadAgents(), directory.loadSources()]).catch((error) => {
    if (error instanceof SessionOver) throw error;
  });

  // Narrowing: who acted, what they did (an action met in the trail, or
  // chosen from a row), and from which day to which.
  const who = h("select", { name: "actor" },
    h("option", { value: "", text: "Anyone" }),
    h("optgroup", { label: "People" }, [...directory.people.values()].map((person) => h("option", { value: person.id, text: person.name }))),
    directory.agents.size ? h("optgroup", { label: "Agents" }, [...directory.agents.values()].map((agent) => h("option", { value: agent.id, text: agent.name }))) : null,
    directory.sources.size ? h("optgroup", { label: "Reminder sources" }, [...directory.sources.values()].map((source) => h("option", { value: source.id, text: source.name }))) : null);
  const what = h("select", { name: "action" }, h("option", { value: "", text: "Any action" }));
  const since = h("input", { type: "date", name: "since" });
  const until = h("input", { type: "date", name: "until" });
  const show = h("button", { type: "submit", class: "secondary", text: "Show" });
  const everything = h("button", { type: "button", class: "secondary", text: "Show everything" });
  const filterStatus = statusArea();
  const filters = h("form", { class: "audit-filters", role: "search", "aria-label": "Narrow the audit trail" },
    h("div", { class: "fields" },
      labelled("Who", who),
      labelled("What", what),
      labelled("From", since),
      labelled("To", until),
      h("div", { class: "field actions" }, h("div", { class: "button-row" }, show, everything))),
    filterStatus);
  /** Offers an action in the What list, once, in its words. */
  function offerAction(entry) {
    if ([...what.options].some((option) => option.value === entry.action)) return;
    what.append(h("option", { value: entry.action, text: entry.summary ?? entry.action }));
  }
  const narrowing = () => ({
    actor: who.value || undefined,
    action: what.value || undefined,
    since: since.value ? dayStarts(since.value) : undefined,
    until: until.value ? dayEnds(until.value) : undefined,
  });
  let shownFor = narrowing();

  function entryRow(entry) {
    const refused = entry.outcome !== "ok";
    offerAction(entry);
    return row(
      [time(entry.at), onRequest(`#${entry.seq}`)],
      actor(entry),
      actionWords(entry),
      entry.object ? members(entry.object) : h("span", { class: "muted", text: "—" }),
      h("span", { class: refused ? "badge off" : "badge on", text: refused ? "Refused" : "Done" }),
      detail(vocabulary, entry.detail),
    );
  }

  async function loadPage() {
    const page = await api("GET", `/api/audit${query({ limit: PAGE, cursor, ...shownFor })}`);
    for (const entry of page.entries) {
      const tableRow = entryRow(entry);
      body.append(tableRow);
      labelCells(tableRow);
    }
    none.hidden = body.rows.length > 0;
    cursor = page.next_cursor ?? null;
    more.hidden = !cursor;
  }
  more.addEventListener("click", () => perform(listStatus, [more], loadPage, "Older entries could not be loaded."));

  /** Shows the trail anew as the filters narrow it. */
  function showNarrowed() {
    return perform(filterStatus, [show, everything], async () => {
      const asked = narrowing();
      const cursorBefore = cursor;
      cursor = null;
      shownFor = asked;
      const rowsBefore = [...body.rows];
      try {
        body.replaceChildren();
        await loadPage();
      } catch (error) {
        body.replaceChildren(...rowsBefore);
        cursor = cursorBefore;
        throw error;
      }
    }, "The trail was not narrowed.");
  }
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    showNarrowed();
  });
  everything.addEventListener("click", () => {
    who.value = "";
    what.value = "";
    since.value = "";
    until.value = "";
    showNarrowed();
  });

  const verifyButton = h("button", { type: "button", text: "Verify chain" });
  const verifyStatus = statusArea();
  verifyButton.addEventListener("click", () => perform(verifyStatus, [verifyButton], verify, "The chain could not be verified."));

  async function verify() {
    let afterSeq = null;
    let checked = 0;
    for (;;) {
      const answer = await api("GET", `/api/audit/verify${query({ after_seq: afterSeq })}`);
      checked += answer.checked;
      if (!answer.intact) {
        verifyStatus.replaceChildren(h("div", { class: "refusal", role: "alert" },
          h("p", { class: "refusal-message", text: `Chain broken at seq ${answer.first_bad_seq}.` }),
          h("p", {}, h("span", { class: "refusal-label", text: "Problem: " }), answer.problem ?? "unknown"),
          h("p", { class: "muted", text: `${checked} entries checked before it.` })));
        return null;
      }
      const next = answer.next_after_seq;
      if (next === null || next === undefined || (afterSeq !== null && next <= afterSeq)) {
        return [
          h("strong", { text: `Chain intact: ${checked} entries checked` }),
          answer.head ? h("span", { class: "muted" }, ". Head: seq ", String(answer.head.seq), ", hash ", code(answer.head.hash), ".") : ".",
        ];
      }
      verifyStatus.replaceChildren(h("p", { class: "muted", text: `Checked ${checked} entries…` }));
      afterSeq = next;
    }
  }

  view.append(
    codesToggle(view),
    panel("Verify", h("p", { text: "Recomputes every entry's hash and its link to the one before, and names the first that does not verify." }), verifyButton, verifyStatus),
    panel("Entries, newest first", filters, none, entries, more, listStatus));
  await loadPage();
}

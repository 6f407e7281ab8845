// Audit (administrators): the trail, newest first, a page at a time, with names
// for ids and the vocabulary's words for relations and capabilities (the ids
// and codes on request), and verifying its hash chain from the first entry to
// the head.

import { code, h, labelCells, row, table, time } from "./dom.js";
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

export async function renderAudit(view) {
  const PAGE = 50;
  const entries = table("Audit entries, newest first", ["Seq", "Time", "Actor", "Action", "Object", "Outcome", "Detail"], [], { stack: true });
  entries.querySelector("table").classList.add("audit");
  const body = entries.querySelector("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true, text: "Show older entries" });
  const listStatus = statusArea();
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

  function entryRow(entry) {
    const refused = entry.outcome !== "ok";
    return row(
      String(entry.seq),
      time(entry.at),
      actor(entry),
      h("span", { class: "action", text: entry.action }),
      entry.object ? members(entry.object) : h("span", { class: "muted", text: "—" }),
      h("span", { class: refused ? "badge off" : "badge on", text: entry.outcome }),
      detail(vocabulary, entry.detail),
    );
  }

  async function loadPage() {
    const page = await api("GET", `/api/audit${query({ limit: PAGE, cursor })}`);
    for (const entry of page.entries) {
      const tableRow = entryRow(entry);
      body.append(tableRow);
      labelCells(tableRow);
    }
    cursor = page.next_cursor ?? null;
    more.hidden = !cursor;
  }
  more.addEventListener("click", () => perform(listStatus, [more], loadPage, "Older entries could not be loaded."));

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
    panel("Entries, newest first", entries, more, listStatus));
  await loadPage();
}

// Audit (administrators): the trail, newest first, a page at a time, with names
// beside ids, and verifying its hash chain from the first entry to the head.

import { append, code, h, row, time } from "./dom.js";
import { api, query, SessionOver } from "./api.js";
import { panel, perform, statusArea } from "./shared.js";
import { directory, subject, who } from "./names.js";

/**
 * The audit trail's actor cell. An agent acts under a person's authority, so
 * its act reads as one cell: `agt_… for usr_…`.
 */
function actor(entry) {
  switch (entry.actor_kind) {
    case "agent":
      return h("span", { class: "actor" }, who(entry.actor), " for ", entry.delegator ? who(entry.delegator) : h("span", { class: "muted", text: "an unknown person" }));
    case "person":
    case "source":
      return who(entry.actor);
    default:
      return h("span", { class: "muted", text: "not signed in" });
  }
}

const PERSON_OR_TEAM = /^(usr|agt|tm|src)_[0-9A-Za-z]+$/;

/** Further facts of an audit entry, key by key, with names beside ids. */
function detail(value) {
  if (value === null || value === undefined) return null;
  if (typeof value !== "object" || Array.isArray(value)) return h("span", { text: JSON.stringify(value) });
  return h("dl", { class: "detail" }, Object.entries(value).map(([key, item]) => [
    h("dt", { text: key }),
    h("dd", {}, typeof item === "string" ? (PERSON_OR_TEAM.test(item) || /#member$/.test(item) ? subject(item) : item) : typeof item === "object" && item !== null ? detail(item) : JSON.stringify(item)),
  ]));
}

export async function renderAudit(view) {
  const PAGE = 50;
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true, text: "Show older entries" });
  const listStatus = statusArea();
  let cursor = null;

  // Names for the actor and object cells; the trail is readable without them.
  await Promise.all([directory.loadPeople(), directory.loadTeams(), directory.loadAllMailboxes(), directory.loadAgents()]).catch((error) => {
    if (error instanceof SessionOver) throw error;
  });

  function entryRow(entry) {
    const refused = entry.outcome !== "ok";
    return row(
      String(entry.seq),
      time(entry.at),
      actor(entry),
      h("span", { class: "action", text: entry.action }),
      entry.object ? (/#member$/.test(entry.object) ? subject(entry.object) : who(entry.object)) : h("span", { class: "muted", text: "—" }),
      h("span", { class: refused ? "badge off" : "badge on", text: entry.outcome }),
      detail(entry.detail),
    );
  }

  async function loadPage() {
    const page = await api("GET", `/api/audit${query({ limit: PAGE, cursor })}`);
    append(body, page.entries.map(entryRow));
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
    panel("Verify", h("p", { text: "Recomputes every entry's hash and its link to the one before, and names the first that does not verify." }), verifyButton, verifyStatus),
    panel("Entries, newest first",
      h("div", { class: "table-wrap" },
        h("table", { class: "audit" },
          h("caption", { class: "visually-hidden", text: "Audit entries, newest first" }),
          h("thead", {}, h("tr", {}, ["Seq", "Time", "Actor", "Action", "Object", "Outcome", "Detail"].map((column) => h("th", { scope: "col", text: column })))),
          body)),
      more, listStatus));
  await loadPage();
}

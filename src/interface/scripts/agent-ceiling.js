// An agent's ceiling, chosen and shown: what the agents mint form (agents.js)
// and an OAuth client's consent (consent.js) both let a person choose, and
// what the agents list and the connected apps (account.js) both show back.
//
// Both forms choose the same things from the same facts the node checks: a
// capability works only where one mailbox grants everything it `requires`,
// and whoever will hold the ceiling (an agent, an app's agent) can be given on
// a mailbox only what its holder (the sponsor: a person chosen by an
// administrator, or the signed-in person themselves) holds there. So the
// choices, the grid and the warnings live here once, and each form says only
// who the holder is and what to do where the holder lacks something. The node
// refuses what the warnings describe anyway; the form says so first, and
// starts each chosen capability satisfiable where the holder can make it so
// (makeWork()).

import { code, h, hidden, onRequest, replace, uniqueId } from "./dom.js";
import { empty } from "./shared.js";
import { named } from "./names.js";
import { capabilityTerm, capabilityText, relationTerm, relationText } from "./vocabulary.js";

const AGENT_STATES = {
  active: { text: "active", tone: "on" },
  awaiting_exchange: { text: "awaiting the app", tone: null },
  awaiting_pairing: { text: "awaiting pairing", tone: null },
  paused: { text: "paused", tone: "quiet" },
  expired: { text: "expired", tone: "off" },
  revoked: { text: "revoked", tone: "off" },
};

export function agentStateBadge(state) {
  const known = AGENT_STATES[state] ?? { text: state, tone: null };
  return h("span", { class: known.tone ? `badge ${known.tone}` : "badge", text: known.text });
}

/** Items in prose: "a", "a and b", "a, b and c". */
export const inWords = (items) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);

/** An agent's ceiling: held of total per capability, and pinned routes no capability contains. */
export function ceilingOf(vocabulary, agent) {
  return [
    agent.capabilities.length
      ? h("ul", { class: "ceiling" }, agent.capabilities.map((capability) => h("li", {}, capabilityTerm(vocabulary, capability.name), " ",
          h("span", {
            class: capability.held < capability.total ? "held-of partial" : "held-of",
            title: capability.held < capability.total
              ? `It holds ${capability.held} of the ${capability.total} tools the capability has now: it has gained tools since this agent was minted, and they are not given to it.`
              : `It holds all ${capability.total} of the capability's tools.`,
            text: `${capability.held} of ${capability.total}`,
          }))))
      : null,
    agent.other_routes.length
      ? h("div", { class: "other-routes" },
          h("p", { class: "muted", text: "Also pinned, in no current capability:" }),
          h("ul", { class: "held" }, agent.other_routes.map((route) => h("li", {}, code(route)))))
      : null,
    agent.capabilities.length || agent.other_routes.length ? null : h("span", { class: "muted", text: "Nothing" }),
    agent.routes.length
      ? h("details", { class: "pinned" },
          h("summary", { text: `${agent.routes.length} pinned ${agent.routes.length === 1 ? "tool" : "tools"}` }),
          h("ul", { class: "held" }, agent.routes.map((route) => h("li", {}, code(route)))))
      : null,
  ];
}

/** The relations an agent holds, in words, by mailbox (its address where the page knows it). */
export function agentMailboxes(vocabulary, agent) {
  if (!agent.mailboxes.length) return h("span", { class: "muted", text: "None" });
  return h("ul", { class: "grants" }, agent.mailboxes.map((grant) => h("li", {},
    named(grant.mailbox),
    h("ul", { class: "relations" }, grant.relations.map((relation) => h("li", {}, relationTerm(vocabulary, relation)))))));
}

/**
 * Words for the holder of what is passed on: a person by name ("Ben holds"),
 * or the signed-in person themselves (`self`: "you hold"), at the start of a
 * sentence or within one.
 */
const holderWords = (holder) => ({
  start: holder.self ? "You" : holder.name,
  within: holder.self ? "you" : holder.name,
  holds: holder.self ? "hold" : "holds",
  doesNotHold: holder.self ? "do not hold" : "does not hold",
});

/**
 * The choices a ceiling is made of, for a form to place: `capabilityList`
 * (every capability of the vocabulary, with what it needs, whether it reaches
 * content and its tools on request), `grid` (per mailbox, a box per relation,
 * only what the holder holds there selectable) and `warnings` (each chosen
 * capability no chosen mailbox lets work, with what would make it work).
 *
 * - `grantee`: who will hold the ceiling, within a sentence ("the agent").
 * - `noMailboxes`: what to say where the holder has no mailbox to show.
 * - `noHolder(plural)`: the rest of a warning while no holder is chosen.
 * - `cannotGive({ holder, missing, address, what, plural })`: what to do
 *   where the holder holds what a capability needs on no mailbox (`missing`:
 *   the relations, quoted in words, lacking on `address`, where they come closest).
 * - `refuses`: the sentence under the warnings: what the node refuses.
 * - `actFor`: whom the grantee's acts are recorded for, within a sentence.
 * - `requested`: capability names to start ticked, each marked as asked for.
 *
 * The holder is set with setHolder() (null: none chosen yet) and what they
 * hold with showHoldings(); until then the grid is the form's to fill.
 */
export function ceilingChoices(vocabulary, { grantee, noMailboxes, noHolder, cannotGive, refuses, actFor = "its sponsor", requested = [] }) {
  // The relations a ceiling can hold, in the order the mailbox grid shows them.
  const mailboxRelations = vocabulary.relations.filter((relation) => relation.on === "mailbox");
  const asked = new Set(requested);
  const capabilityBoxes = new Map();
  // Who holds what is passed on, and what they hold on each mailbox: mailbox id →
  // { mailbox, held: Set of relation names }; and what the grantee is to hold
  // there: mailbox id → Set of relation names.
  let holder = null;
  let holdings = null;
  const chosen = new Map();

  function capabilityChoice(capability) {
    const box = h("input", { type: "checkbox", name: "capability", value: capability.name, id: uniqueId("capability") });
    box.checked = asked.has(capability.name);
    capabilityBoxes.set(capability.name, box);
    const flagId = uniqueId("hint");
    const aboutId = uniqueId("hint");
    box.setAttribute("aria-describedby", capability.reaches_content ? `${flagId} ${aboutId}` : aboutId);
    const requires = capability.requires.length
      ? ["Needs on a mailbox", capability.requires.length > 1 ? ", all on the same one: " : ": ",
          capability.requires.map((relation, index) => [index ? (index === capability.requires.length - 1 ? " and " : ", ") : null,
            "“", relationTerm(vocabulary, relation, { inSentence: true }), "”"]), "."]
      : "Needs nothing on a mailbox.";
    return h("div", { class: "choice" },
      box,
      h("div", { class: "choice-body" },
        h("div", { class: "choice-line" },
          h("label", { for: box.id }, h("span", { class: "choice-summary", title: capability.name, text: capability.summary }), onRequest(capability.name)),
          asked.has(capability.name) ? h("span", { class: "badge asked", text: "Asked for" }) : null,
          capability.reaches_content ? h("span", { id: flagId, class: "badge content", text: "Reaches message content" }) : null),
        // What it lets the grantee do, what it needs and its tools, on
        // request: eleven capabilities described in full ran past 3,500 px
        // on a phone, and what a ticked one needs is chosen for it
        // (makeWork()). What was asked for is open to start with; a screen
        // reader hears what it needs with the box either way.
        h("details", { class: "about", open: asked.has(capability.name) },
          h("summary", {}, "What it does and needs", hidden(`: ${capability.summary}`)),
          h("p", { class: "choice-about", text: capability.description }),
          h("p", { id: aboutId, class: "requires" }, requires),
          capability.reaches_content
            ? h("p", { class: "content-note", text: `It reads what people wrote: message text, attachments or originals. Every such read is recorded in the audit trail, as ${grantee}'s act for ${actFor}.` })
            : null,
          h("details", { class: "tools" },
            h("summary", {}, `Its tools (${capability.routes.length})`, hidden(`: ${capability.summary}`)),
            h("ul", {}, capability.routes.map((route) => h("li", {},
              code(route.tool), " ", h("span", { class: "muted", text: `${route.method} ${route.path}` }), ": ", route.summary,
              route.reaches_content ? [" ", h("span", { class: "badge content", text: "content" })] : null)))))));
  }

  const capabilityList = h("div", { class: "choices" }, vocabulary.capabilities.map(capabilityChoice));
  capabilityList.addEventListener("change", (event) => {
    const ticked = vocabulary.capabilities.find((capability) => capabilityBoxes.get(capability.name) === event.target);
    if (ticked && event.target.checked) makeWork(ticked);
    update();
  });
  const grid = h("div", { class: "grant-grid" });
  const warnings = h("div", { class: "warnings", "aria-live": "polite" });

  /**
   * Per mailbox (a group named by its address), a box for each relation the
   * grantee may hold there, in words: only what the holder holds there can be
   * ticked, and what cannot says why.
   */
  function mailboxGrid() {
    if (!holdings.size) return empty(noMailboxes);
    const words = holderWords(holder);
    return h("div", { class: "grant-cards" }, [...holdings.values()].map(({ mailbox, held }) => {
      const nothingId = held.size ? null : uniqueId("hint");
      const choices = mailboxRelations.map((relation) => {
        const holds = held.has(relation.name);
        const box = h("input", { type: "checkbox", id: uniqueId("grant"), disabled: !holds });
        box.checked = holds && Boolean(chosen.get(mailbox.id)?.has(relation.name));
        const reasonId = holds || nothingId ? null : uniqueId("hint");
        if (!holds) box.setAttribute("aria-describedby", nothingId ?? reasonId);
        box.addEventListener("change", () => {
          if (!chosen.has(mailbox.id)) chosen.set(mailbox.id, new Set());
          if (box.checked) chosen.get(mailbox.id).add(relation.name);
          else chosen.get(mailbox.id).delete(relation.name);
          update();
        });
        return h("div", { class: holds ? "choice" : "choice not-held" }, box,
          h("div", { class: "choice-body" },
            h("label", { for: box.id }, relationTerm(vocabulary, relation.name, { inSentence: true })),
            reasonId ? h("span", { id: reasonId, class: "reason", text: `${words.start} ${words.doesNotHold} this here` }) : null,
            // Said of the signed-in person only: beside a choice of their own, it is why the box can be ticked.
            holds && holder.self ? h("span", { class: "reason", text: "You hold this" }) : null));
      });
      return h("fieldset", { class: "grant-card" },
        h("legend", { title: mailbox.id, text: mailbox.address }),
        h("p", { class: "muted display-name", text: mailbox.display_name }),
        nothingId ? h("p", { id: nothingId, class: "reason", text: `${words.start} ${words.holds} nothing here, so ${grantee} can hold nothing here either.` }) : null,
        choices);
    }));
  }

  /**
   * Starts a chosen capability satisfiable: where nothing chosen grants all
   * it needs on one mailbox, what it needs is chosen on the first mailbox
   * (in the node's order) where the holder holds all of it; never anything
   * the holder does not hold, and only once, when it is ticked or the holder
   * is known, so a box the person then unticks stays unticked. Where no
   * mailbox will do, the warning says why.
   */
  function makeWork(capability) {
    if (!holdings || !capability.requires.length) return false;
    const needs = capability.requires;
    const works = [...chosen].some(([mailboxId, relations]) => holdings.has(mailboxId) && needs.every((relation) => relations.has(relation)));
    if (works) return false;
    const mailbox = [...holdings.values()].find(({ held }) => needs.every((relation) => held.has(relation)));
    if (!mailbox) return false;
    if (!chosen.has(mailbox.mailbox.id)) chosen.set(mailbox.mailbox.id, new Set());
    for (const relation of needs) chosen.get(mailbox.mailbox.id).add(relation);
    replace(grid, mailboxGrid());
    return true;
  }

  const chosenCapabilities = () => vocabulary.capabilities.filter((capability) => capabilityBoxes.get(capability.name).checked);
  const grantsChosen = () => [...chosen]
    .filter(([mailboxId, relations]) => relations.size && holdings?.has(mailboxId))
    .map(([mailbox, relations]) => ({ mailbox, relations: mailboxRelations.map((relation) => relation.name).filter((relation) => relations.has(relation)) }));

  /** A relation's words in quotes, for a sentence. */
  const quoted = (relation) => `“${relationText(vocabulary, relation)}”`;

  /** Why a chosen capability cannot work with what is chosen, and what would make it work. */
  function unsatisfied(capability) {
    const needs = capability.requires;
    const plural = needs.length > 1;
    const needsText = plural ? `${inWords(needs.map(quoted))} together on one mailbox` : `${quoted(needs[0])} on a mailbox`;
    const what = `“${capabilityText(vocabulary, capability.name)}”`;
    const lead = [what, onRequest(capability.name), ` cannot work: it needs ${needsText}`];
    if (!holder) return h("li", {}, lead, noHolder(plural));
    if (!holdings) return h("li", {}, lead, ".");
    const words = holderWords(holder);
    const mailboxes = [...holdings.values()];
    const selectable = mailboxes.filter(({ held }) => needs.every((relation) => held.has(relation)));
    if (selectable.length) {
      const ways = selectable.map(({ mailbox }) => {
        const missing = needs.filter((relation) => !chosen.get(mailbox.id)?.has(relation));
        return `${inWords(missing.map(quoted))} on ${mailbox.address}`;
      });
      return h("li", {}, lead, `. Select ${ways.join(", or ")} (${words.within} ${words.holds} ${plural ? "them" : "it"} there).`);
    }
    // The holder cannot give it: say what they lack, where they come closest.
    const closest = mailboxes
      .map(({ mailbox, held }) => ({ mailbox, missing: needs.filter((relation) => !held.has(relation)) }))
      .sort((a, b) => a.missing.length - b.missing.length)[0];
    if (!closest) return h("li", {}, lead, `. ${noMailboxes}`);
    return h("li", {}, lead, `, and ${words.within} ${words.doesNotHold} ${plural ? "that on any mailbox" : "it on any mailbox"}. `,
      cannotGive({ holder: words, missing: inWords(closest.missing.map(quoted)), address: closest.mailbox.address, what, plural }));
  }

  function update() {
    const grants = grantsChosen();
    const problems = chosenCapabilities()
      .filter((capability) => capability.requires.length
        && !grants.some((grant) => capability.requires.every((relation) => grant.relations.includes(relation))))
      .map(unsatisfied);
    replace(warnings, problems.length
      ? h("div", { class: "warning" },
          h("p", { class: "warning-title", text: problems.length === 1 ? "One capability cannot work with these mailboxes" : `${problems.length} capabilities cannot work with these mailboxes` }),
          h("ul", {}, problems),
          h("p", { class: "muted", text: refuses }))
      : null);
  }

  return {
    capabilityList,
    grid,
    warnings,
    /** Who holds what is passed on (null: nobody chosen yet); what they hold is not known until showHoldings(). */
    setHolder(next) {
      holder = next;
      holdings = null;
    },
    /**
     * What the holder holds, as the node lists it (`{ id, address,
     * display_name, held }` per mailbox): shown as the grid, and any choice
     * they do not hold dropped, since it cannot stand.
     */
    showHoldings(mailboxes) {
      holdings = new Map(mailboxes.map((mailbox) => [mailbox.id, { mailbox, held: new Set(mailbox.held) }]));
      for (const [mailboxId, relations] of chosen) {
        const held = holdings.get(mailboxId)?.held;
        for (const relation of relations) if (!held?.has(relation)) relations.delete(relation);
      }
      replace(grid, mailboxGrid());
      for (const capability of chosenCapabilities()) makeWork(capability);
    },
    /** Forgets the mailbox choices (the capability boxes are the form's: a reset clears them). */
    clearMailboxes() {
      chosen.clear();
    },
    chosenCapabilities,
    grantsChosen,
    update,
  };
}

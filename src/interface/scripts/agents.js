// Agents (SPEC §1–3, §11; administrators): minted by an administrator for a
// sponsor, in the product's words, and shown back as their ceiling, held of
// total; paused, resumed, revoked, and handed a pairing code.
//
// The mint form's warnings are read from the same facts the node checks: a
// capability works only where one mailbox grants everything it `requires`,
// and an agent can be granted on a mailbox only what its sponsor holds there.
// The node refuses what the form warns about anyway; the form says so first.
// Capabilities read as their summaries and relations as their descriptions,
// agents and people by name; codes and ids are shown on request.

import { code, h, hidden, labelCells, labelled, onRequest, replace, row, table, time, uniqueId } from "./dom.js";
import { api, ApiError, segment, SessionOver } from "./api.js";
import { codesToggle, empty, info, loading, panel, perform, refusalBox, rowStatus, secretField, statusArea } from "./shared.js";
import { directory, named } from "./names.js";
import { capabilityTerm, capabilityText, loadVocabulary, relationTerm, relationText } from "./vocabulary.js";

const AGENT_STATES = {
  active: { text: "active", tone: "on" },
  awaiting_pairing: { text: "awaiting pairing", tone: null },
  paused: { text: "paused", tone: "quiet" },
  expired: { text: "expired", tone: "off" },
  revoked: { text: "revoked", tone: "off" },
};

function agentStateBadge(state) {
  const known = AGENT_STATES[state] ?? { text: state, tone: null };
  return h("span", { class: known.tone ? `badge ${known.tone}` : "badge", text: known.text });
}

/** Items in prose: "a", "a and b", "a, b and c". */
const inWords = (items) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);

/**
 * What a new credential or pairing code is shown in, once: the node keeps
 * only its hash, so this box is the only place it will ever appear.
 */
function handover(agent, { credential = null, pairing = null }) {
  const headingId = uniqueId("handover");
  const title = credential ? `The credential for ${agent.name}` : `A pairing code for ${agent.name}`;
  const done = h("button", { type: "button", class: "secondary", text: "I have copied it: hide it" });
  const box = h("section", { class: "once", "aria-labelledby": headingId },
    h("h3", { id: headingId, text: title }),
    h("p", { class: "once-warning" },
      h("strong", { text: "Shown once. " }),
      "Copy it now: the node keeps only a hash of it, so it will not be shown again, and leaving this page loses it."),
    credential
      ? [
          secretField(`Credential for ${agent.name}`, credential),
          h("p", { class: "hint" }, "The agent sends it as ", code("Authorization: Bearer mr_agt_…"), ", to the REST API or to the MCP endpoint ",
            code(`${location.origin}/mcp`), "."),
        ]
      : [
          secretField(`Pairing code for ${agent.name}`, pairing.code),
          h("p", { class: "hint" }, "It works once, until ", time(pairing.expires_at), ". The agent's software redeems it, with no other sign-in, at ",
            code(`POST ${location.origin}/api/agents/pair`), " with ", code('{"code": "…"}'), ", and receives its credential.",
            " Redeeming it replaces any credential the agent has."),
        ],
    h("div", { class: "button-row" }, done));
  done.addEventListener("click", () => box.remove());
  return box;
}

/** An agent's ceiling: held of total per capability, and pinned routes no capability contains. */
function ceilingOf(vocabulary, agent) {
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

/** The relations an agent holds, in words, by mailbox address. */
function agentMailboxes(vocabulary, agent) {
  if (!agent.mailboxes.length) return h("span", { class: "muted", text: "None" });
  return h("ul", { class: "grants" }, agent.mailboxes.map((grant) => h("li", {},
    named(grant.mailbox),
    h("ul", { class: "relations" }, grant.relations.map((relation) => h("li", {}, relationTerm(vocabulary, relation)))))));
}

/** When the agent's state began, and when its credential stops working. */
function stateTimes(agent) {
  const since = { revoked: agent.revoked_at, expired: agent.expires_at, paused: agent.paused_at }[agent.state];
  const until = agent.state === "revoked" || agent.state === "expired" ? null : agent.expires_at;
  return [
    since ? h("span", { class: "since" }, "since ", time(since)) : null,
    until ? h("span", { class: "since" }, "until ", time(until)) : null,
  ];
}

export async function renderAgents(view) {
  const [vocabulary, people] = await Promise.all([
    loadVocabulary(),
    directory.loadPeople(),
    directory.loadAllMailboxes(),
  ]);
  const capabilities = vocabulary.capabilities;
  // The relations an agent can hold, in the order the mailbox grid shows them.
  const MAILBOX_RELATIONS = vocabulary.relations.filter((relation) => relation.on === "mailbox");

  // ---- The list
  const list = h("div", {}, loading());
  let rows = null;

  function showAgents(agents) {
    directory.rememberAgents(agents);
    if (!agents.length) {
      rows = null;
      list.replaceChildren(empty("No agents yet."));
      return;
    }
    const wrap = table("Agents on this node, newest first", ["Agent", "Sponsor", "State", "Capabilities", "Mailboxes", "Actions"], agents.map(agentRow), { stack: true });
    wrap.querySelector("table").classList.add("agents");
    rows = wrap.querySelector("tbody");
    list.replaceChildren(wrap);
  }

  function addAgent(agent) {
    directory.rememberAgents([agent]);
    if (!rows) return showAgents([agent]);
    const tableRow = agentRow(agent);
    rows.prepend(tableRow);
    labelCells(tableRow);
  }

  /**
   * The row under an agent's row: a pairing code shown once (`code`) and what
   * the last action said (`said`), apart, so no later action wipes the code.
   */
  function beneath(tableRow) {
    const cell = rowStatus(tableRow);
    if (!cell.firstElementChild) cell.append(h("div", { class: "row-code" }), h("div", { class: "row-said" }));
    return { code: cell.firstElementChild, said: cell.lastElementChild };
  }

  function agentRow(agent) {
    const { state } = agent;
    const button = (text, className) => h("button", { type: "button", class: className }, text, hidden(` ${agent.name}`));
    const pause = state === "active" || state === "awaiting_pairing" ? button("Pause", "secondary") : null;
    const resume = state === "paused" ? button("Resume", "secondary") : null;
    const pair = state === "revoked" || state === "expired" ? null : button("Issue pairing code", "secondary");
    const revoke = state === "revoked" ? null : button("Revoke", "secondary danger");
    const actions = [pause, resume, pair, revoke].filter(Boolean);

    const tableRow = row(
      h("div", { class: "agent-name" }, h("strong", { title: agent.id, text: agent.name }), onRequest(agent.id),
        h("span", { class: "since" }, "minted ", time(agent.created_at), " by ", named(agent.created_by))),
      named(agent.sponsor),
      [agentStateBadge(state), stateTimes(agent)],
      ceilingOf(vocabulary, agent),
      agentMailboxes(vocabulary, agent),
      actions.length ? h("div", { class: "button-row" }, actions) : h("span", { class: "muted", text: "None: a revoked agent stays revoked" }));

    /** Pause, resume or revoke, then show the agent as the node answers it, and say `done`. */
    async function change(verb, controls, done) {
      await perform(beneath(tableRow).said, controls, async () => {
        const changed = await api("POST", `/api/agents/${segment(agent.id)}/${verb}`);
        directory.rememberAgents([changed]);
        const next = agentRow(changed);
        tableRow.replaceWith(next);
        labelCells(next);
        next.querySelector("button")?.focus();
        return done;
      }, `${agent.name} was not ${verb === "pause" ? "paused" : verb === "resume" ? "resumed" : "revoked"}.`);
    }

    pause?.addEventListener("click", () => change("pause", [pause],
      `Paused ${agent.name}: its credential is refused until you resume it. Its capabilities and relations are kept.`));
    resume?.addEventListener("click", () => change("resume", [resume], `Resumed ${agent.name}: its credential works again.`));

    revoke?.addEventListener("click", () => {
      const { said } = beneath(tableRow);
      const really = h("button", { type: "button", class: "danger" }, "Revoke for good", hidden(` ${agent.name}`));
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      said.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": `Revoke ${agent.name}?` },
        h("p", { text: `Revoke ${agent.name}? Its credential stops working on its next request, and no pairing code can bring it back: a revoked agent cannot be restored, only replaced by minting a new one.` }),
        h("div", { class: "button-row" }, really, keep)));
      really.focus();
      keep.addEventListener("click", () => {
        said.replaceChildren();
        revoke.focus();
      });
      really.addEventListener("click", () => change("revoke", [really, keep],
        `Revoked ${agent.name}: its credential is refused from its next request on.`));
    });

    pair?.addEventListener("click", () => {
      const { code: shown, said } = beneath(tableRow);
      perform(said, [pair], async () => {
        const pairing = await api("POST", `/api/agents/${segment(agent.id)}/pairing-code`);
        shown.replaceChildren(handover(agent, { pairing }));
        shown.querySelector("input")?.focus();
        return null;
      }, `No pairing code was issued for ${agent.name}.`);
    });
    return tableRow;
  }

  // ---- The mint form
  const name = h("input", { type: "text", name: "name", autocomplete: "off", required: true, maxlength: 100 });
  const sponsor = h("select", { name: "sponsor", required: true },
    h("option", { value: "", text: "Choose a person…" }),
    people.map((person) => h("option", {
      value: person.id,
      disabled: Boolean(person.disabled_at),
      text: `${person.name} <${person.email}>${person.disabled_at ? " (disabled: cannot sponsor)" : ""}`,
    })));

  const capabilityBoxes = new Map();
  function capabilityChoice(capability) {
    const box = h("input", { type: "checkbox", name: "capability", value: capability.name, id: uniqueId("capability") });
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
          capability.reaches_content ? h("span", { id: flagId, class: "badge content", text: "Reaches message content" }) : null),
        h("div", { id: aboutId, class: "choice-text" },
          h("p", { text: capability.description }),
          h("p", { class: "requires" }, requires),
          capability.reaches_content
            ? h("p", { class: "content-note", text: "It reads what people wrote: message text, attachments or originals. Every such read is recorded in the audit trail, as the agent's act for its sponsor." })
            : null),
        h("details", { class: "tools" },
          h("summary", {}, `Its tools (${capability.routes.length})`, hidden(`: ${capability.summary}`)),
          h("ul", {}, capability.routes.map((route) => h("li", {},
            code(route.tool), " ", h("span", { class: "muted", text: `${route.method} ${route.path}` }), ": ", route.summary,
            route.reaches_content ? [" ", h("span", { class: "badge content", text: "content" })] : null))))));
  }

  // What the chosen sponsor holds on each mailbox (`GET /api/people/:id/mailboxes`),
  // and what the agent is to hold there: mailbox id → Set of relation names.
  let sponsorHolds = null;
  const chosen = new Map();
  let sponsorLoads = 0;
  const grid = h("div", { class: "grant-grid" });
  const sponsorName = () => directory.people.get(sponsor.value)?.name ?? "The sponsor";

  async function loadSponsor() {
    const generation = ++sponsorLoads;
    sponsorHolds = null;
    if (!sponsor.value) {
      grid.replaceChildren(info("Choose a sponsor to see what they hold on each mailbox: an agent can be given there only what its sponsor holds."));
      updateWarnings();
      return;
    }
    grid.replaceChildren(h("p", { class: "muted", role: "status", text: `Loading what ${sponsorName()} holds…` }));
    updateWarnings();
    try {
      const { mailboxes } = await api("GET", `/api/people/${segment(sponsor.value)}/mailboxes`);
      if (generation !== sponsorLoads) return;
      sponsorHolds = new Map(mailboxes.map((mailbox) => [mailbox.id, { mailbox, held: new Set(mailbox.held) }]));
      // A choice the new sponsor does not hold cannot stand.
      for (const [mailboxId, relations] of chosen) {
        const held = sponsorHolds.get(mailboxId)?.held;
        for (const relation of relations) if (!held?.has(relation)) relations.delete(relation);
      }
      replace(grid, mailboxGrid());
    } catch (error) {
      if (error instanceof SessionOver || generation !== sponsorLoads) return;
      grid.replaceChildren(refusalBox(error, `What ${sponsorName()} holds could not be loaded.`));
    }
    updateWarnings();
  }
  sponsor.addEventListener("change", loadSponsor);

  /**
   * Per mailbox (a group named by its address), a box for each relation the
   * agent may hold there, in words: only what the sponsor holds there can be
   * ticked, and what cannot says why.
   */
  function mailboxGrid() {
    if (!sponsorHolds.size) return empty("There are no mailboxes yet: create one under Mailboxes.");
    const holder = sponsorName();
    return h("div", { class: "grant-cards" }, [...sponsorHolds.values()].map(({ mailbox, held }) => {
      const nothingId = held.size ? null : uniqueId("hint");
      const choices = MAILBOX_RELATIONS.map((relation) => {
        const holds = held.has(relation.name);
        const box = h("input", { type: "checkbox", id: uniqueId("grant"), disabled: !holds });
        box.checked = holds && Boolean(chosen.get(mailbox.id)?.has(relation.name));
        const reasonId = holds || nothingId ? null : uniqueId("hint");
        if (!holds) box.setAttribute("aria-describedby", nothingId ?? reasonId);
        box.addEventListener("change", () => {
          if (!chosen.has(mailbox.id)) chosen.set(mailbox.id, new Set());
          if (box.checked) chosen.get(mailbox.id).add(relation.name);
          else chosen.get(mailbox.id).delete(relation.name);
          updateWarnings();
        });
        return h("div", { class: holds ? "choice" : "choice not-held" }, box,
          h("div", { class: "choice-body" },
            h("label", { for: box.id }, relationTerm(vocabulary, relation.name, { inSentence: true })),
            reasonId ? h("span", { id: reasonId, class: "reason", text: `${holder} does not hold this here` }) : null));
      });
      return h("fieldset", { class: "grant-card" },
        h("legend", { title: mailbox.id, text: mailbox.address }),
        h("p", { class: "muted display-name", text: mailbox.display_name }),
        nothingId ? h("p", { id: nothingId, class: "reason", text: `${holder} holds nothing here, so the agent can hold nothing here either.` }) : null,
        choices);
    }));
  }

  const chosenCapabilities = () => capabilities.filter((capability) => capabilityBoxes.get(capability.name).checked);
  const grantsChosen = () => [...chosen]
    .filter(([mailboxId, relations]) => relations.size && sponsorHolds?.has(mailboxId))
    .map(([mailbox, relations]) => ({ mailbox, relations: MAILBOX_RELATIONS.map((relation) => relation.name).filter((relation) => relations.has(relation)) }));

  /** A relation's words in quotes, for a sentence. */
  const quoted = (relation) => `“${relationText(vocabulary, relation)}”`;

  /** Why a chosen capability cannot work with what is chosen, and what would make it work. */
  function unsatisfied(capability) {
    const needs = capability.requires;
    const needsText = needs.length > 1 ? `${inWords(needs.map(quoted))} together on one mailbox` : `${quoted(needs[0])} on a mailbox`;
    const what = `“${capabilityText(vocabulary, capability.name)}”`;
    const lead = [what, onRequest(capability.name), ` cannot work: it needs ${needsText}`];
    if (!sponsor.value) return h("li", {}, lead, `. Choose a sponsor, then select ${needs.length > 1 ? "them" : "it"} on a mailbox where the sponsor holds ${needs.length > 1 ? "them" : "it"}.`);
    if (!sponsorHolds) return h("li", {}, lead, ".");
    const holder = sponsorName();
    const mailboxes = [...sponsorHolds.values()];
    const selectable = mailboxes.filter(({ held }) => needs.every((relation) => held.has(relation)));
    if (selectable.length) {
      const ways = selectable.map(({ mailbox }) => {
        const missing = needs.filter((relation) => !chosen.get(mailbox.id)?.has(relation));
        return `${inWords(missing.map(quoted))} on ${mailbox.address}`;
      });
      return h("li", {}, lead, `. Select ${ways.join(", or ")} (${holder} holds ${needs.length > 1 ? "them" : "it"} there).`);
    }
    // The sponsor cannot give it: say what to grant them, where they come closest.
    const closest = mailboxes
      .map(({ mailbox, held }) => ({ mailbox, missing: needs.filter((relation) => !held.has(relation)) }))
      .sort((a, b) => a.missing.length - b.missing.length)[0];
    if (!closest) return h("li", {}, lead, ". There are no mailboxes yet: create one under Mailboxes.");
    return h("li", {}, lead, `, and ${holder} does not hold ${needs.length > 1 ? "that on any mailbox" : "it on any mailbox"}. `,
      `Grant ${holder} ${inWords(closest.missing.map(quoted))} on ${closest.mailbox.address} under Relations first, choose a sponsor who holds ${needs.length > 1 ? "them" : "it"}, or leave ${what} out.`);
  }

  const warnings = h("div", { class: "warnings", "aria-live": "polite" });
  function updateWarnings() {
    const grants = grantsChosen();
    const problems = chosenCapabilities()
      .filter((capability) => capability.requires.length
        && !grants.some((grant) => capability.requires.every((relation) => grant.relations.includes(relation))))
      .map(unsatisfied);
    replace(warnings, problems.length
      ? h("div", { class: "warning" },
          h("p", { class: "warning-title", text: problems.length === 1 ? "One capability cannot work with these mailboxes" : `${problems.length} capabilities cannot work with these mailboxes` }),
          h("ul", {}, problems),
          h("p", { class: "muted", text: "The node refuses to mint an agent with a capability no chosen mailbox lets work." }))
      : null);
  }

  // The browser refuses a time already past (the node would too); `min` is in local time.
  const now = new Date();
  const expires = h("input", {
    type: "datetime-local",
    name: "expires_at",
    min: new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16),
  });
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const showCredential = h("input", { type: "radio", name: "delivery", value: "credential", checked: true, id: uniqueId("delivery") });
  const issueCode = h("input", { type: "radio", name: "delivery", value: "pairing_code", id: uniqueId("delivery") });
  const deliveryChoice = (radio, text, about) => {
    const aboutId = uniqueId("hint");
    radio.setAttribute("aria-describedby", aboutId);
    return h("div", { class: "choice" }, radio, h("div", { class: "choice-body" },
      h("label", { for: radio.id, text }), h("p", { id: aboutId, class: "hint", text: about })));
  };

  const submit = h("button", { type: "submit", text: "Mint agent" });
  const status = statusArea();
  const handovers = h("div", { class: "handovers" });
  const capabilityList = h("div", { class: "choices" }, capabilities.map(capabilityChoice));
  capabilityList.addEventListener("change", updateWarnings);

  const form = h("form", { class: "mint-form" },
    h("div", { class: "fields" },
      labelled("Name", name, "What people will know it by, such as “Invoice triage bot”."),
      labelled("Sponsor", sponsor, "The person whose authority it acts under. It can never do more than they can, and it loses what they lose.")),
    h("fieldset", {},
      h("legend", { text: "Capabilities" }),
      h("p", { class: "hint", text: "What it may do, in the product's words. Each is pinned as the tools it grants today: nothing added to a capability later widens this agent." }),
      capabilityList),
    h("fieldset", {},
      h("legend", { text: "Mailboxes" }),
      h("p", { class: "hint", text: "What it may hold on each mailbox. It can hold only what its sponsor holds there, and only for as long as they hold it." }),
      grid),
    warnings,
    h("div", { class: "fields" },
      labelled("Expires (optional)", expires, `Your time (${timeZone}). Empty: its credential works until it is paused or revoked.`),
      h("fieldset", { class: "delivery" },
        h("legend", { text: "Hand over the credential" }),
        deliveryChoice(showCredential, "Show the credential", "Shown once on this page, for you to copy into the agent's configuration."),
        deliveryChoice(issueCode, "Issue a pairing code", "A code that works once, for ten minutes: the agent's software exchanges it for the credential, so nobody copies the credential by hand."))),
    h("div", { class: "button-row" }, submit),
    status);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [submit], async () => {
      const body = {
        name: name.value,
        sponsor: sponsor.value,
        capabilities: chosenCapabilities().map((capability) => capability.name),
        mailboxes: grantsChosen(),
        delivery: issueCode.checked ? "pairing_code" : "credential",
      };
      if (expires.value) {
        const moment = new Date(expires.value);
        if (Number.isNaN(moment.getTime())) throw new ApiError(0, { code: "invalid_expiry", message: "That expiry is not a date and time.", reason: `“${expires.value}” could not be read.`, fix: "Choose a date and time, or leave it empty." });
        body.expires_at = moment.toISOString().replace(/\.\d{3}Z$/, "Z");
      }
      const minted = await api("POST", "/api/agents", body);
      addAgent(minted.agent);
      form.reset();
      chosen.clear();
      await loadSponsor();
      const box = handover(minted.agent, minted);
      handovers.prepend(box);
      box.querySelector("input")?.focus();
      return ["Minted ", h("strong", { title: minted.agent.id, text: minted.agent.name }), onRequest(minted.agent.id), minted.credential ? ". Its credential is below." : ". Its pairing code is below."];
    }, "The agent was not minted.");
  });
  loadSponsor();

  view.append(
    codesToggle(view),
    panel("Mint an agent",
      h("p", { class: "muted", text: "An agent acts in its own right under a person's authority: what it can do is its capabilities, intersected with what it holds and what its sponsor holds, on every request. Its acts are recorded as the agent's, for its sponsor." }),
      form, handovers),
    panel("Every agent", list));
  showAgents(await directory.loadAgents());
}

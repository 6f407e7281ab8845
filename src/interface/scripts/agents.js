// Agents (SPEC §1–3, §11; administrators): minted by an administrator for a
// sponsor, in the product's words, and shown back as their ceiling, held of
// total; paused, resumed, revoked, and handed a pairing code.
//
// The mint form's choices and warnings are agent-ceiling.js's, which the
// consent an OAuth client asks for shares: here the holder of what is passed
// on is the sponsor an administrator chooses.
// Capabilities read as their summaries and relations as their descriptions,
// agents and people by name; codes and ids are shown on request.

import { code, h, hidden, labelCells, labelled, onRequest, row, table, time, uniqueId } from "./dom.js";
import { api, ApiError, segment, SessionOver } from "./api.js";
import { askOnce, codesToggle, empty, info, loading, panel, perform, refusalBox, rowStatus, secretField, statusArea } from "./shared.js";
import { directory, named } from "./names.js";
import { loadVocabulary } from "./vocabulary.js";
import { agentMailboxes, agentStateBadge, ceilingChoices, ceilingOf } from "./agent-ceiling.js";

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
    /** The work of `verb` on the agent, saying `done`; and the title of its refusal. */
    const changing = (verb, done) => async () => {
      const changed = await api("POST", `/api/agents/${segment(agent.id)}/${verb}`);
      directory.rememberAgents([changed]);
      const next = agentRow(changed);
      tableRow.replaceWith(next);
      labelCells(next);
      next.querySelector("button")?.focus();
      return done;
    };
    const notChanged = (verb) => `${agent.name} was not ${verb === "pause" ? "paused" : verb === "resume" ? "resumed" : "revoked"}.`;
    const change = (verb, controls, done) => perform(beneath(tableRow).said, controls, changing(verb, done), notChanged(verb));

    pause?.addEventListener("click", () => change("pause", [pause],
      `Paused ${agent.name}: its credential is refused until you resume it. Its capabilities and relations are kept.`));
    resume?.addEventListener("click", () => change("resume", [resume], `Resumed ${agent.name}: its credential works again.`));

    revoke?.addEventListener("click", () => askOnce(beneath(tableRow).said, {
      from: revoke,
      label: `Revoke ${agent.name}?`,
      question: `Revoke ${agent.name}? Its credential stops working on its next request, and no pairing code can bring it back: a revoked agent cannot be restored, only replaced by minting a new one.`,
      yes: ["Revoke for good", hidden(` ${agent.name}`)],
      act: changing("revoke", `Revoked ${agent.name}: its credential is refused from its next request on.`),
      failure: notChanged("revoke"),
    }));

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

  const sponsorName = () => directory.people.get(sponsor.value)?.name ?? "The sponsor";
  const choices = ceilingChoices(vocabulary, {
    grantee: "the agent",
    noMailboxes: "There are no mailboxes yet: create one under Mailboxes.",
    noHolder: (plural) => `. Choose a sponsor, then select ${plural ? "them" : "it"} on a mailbox where the sponsor holds ${plural ? "them" : "it"}.`,
    cannotGive: ({ holder, missing, address, what, plural }) =>
      `Grant ${holder.within} ${missing} on ${address} under Relations first, choose a sponsor who holds ${plural ? "them" : "it"}, or leave ${what} out.`,
    refuses: "The node refuses to mint an agent with a capability no chosen mailbox lets work.",
  });
  const { grid, warnings, capabilityList } = choices;
  let sponsorLoads = 0;

  // What the chosen sponsor holds on each mailbox (`GET /api/people/:id/mailboxes`).
  async function loadSponsor() {
    const generation = ++sponsorLoads;
    choices.setHolder(sponsor.value ? { name: sponsorName() } : null);
    if (!sponsor.value) {
      grid.replaceChildren(info("Choose a sponsor to see what they hold on each mailbox: an agent can be given there only what its sponsor holds."));
      choices.update();
      return;
    }
    grid.replaceChildren(h("p", { class: "muted", role: "status", text: `Loading what ${sponsorName()} holds…` }));
    choices.update();
    try {
      const { mailboxes } = await api("GET", `/api/people/${segment(sponsor.value)}/mailboxes`);
      if (generation !== sponsorLoads) return;
      choices.showHoldings(mailboxes);
    } catch (error) {
      if (error instanceof SessionOver || generation !== sponsorLoads) return;
      grid.replaceChildren(refusalBox(error, `What ${sponsorName()} holds could not be loaded.`));
    }
    choices.update();
  }
  sponsor.addEventListener("change", loadSponsor);

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
        capabilities: choices.chosenCapabilities().map((capability) => capability.name),
        mailboxes: choices.grantsChosen(),
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
      choices.clearMailboxes();
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

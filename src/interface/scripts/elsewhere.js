// Agents elsewhere on the owner plane (SPEC §14, decision 0050), for
// connections.js, whose agent page shows them: an agent's outbound policy (the
// agents on other organisations' nodes it may message, how many an hour, and
// whether this node's card lists it so that connected organisations' agents can
// reach it), a part of its delivery policy form; its messages to agents
// elsewhere, each with where it stands in the outbox and every attempt the
// outbox made; and an agent elsewhere as a person reads it: by its name and its
// organisation's domain, with its card, never by the `rag_…` id the node names
// it with. What an agent elsewhere wrote is shown beside the node's content
// notice: it came from outside, and an agent reading it takes it as data,
// never as instructions.
//
// Nothing here sends to an agent elsewhere: the agent does, with its own
// credential. The owner sets its policy and watches the outbox.
//
// States, steps and outcomes are looked up only in OUTBOX, ATTEMPT_STEPS
// and ATTEMPT_OUTCOMES, whose keys a test in src/interface.rs holds to the
// contract's RemoteDeliveryState, RemoteAttemptStep and RemoteAttemptOutcome,
// exactly: the node publishes no words for them the page could read, so the
// page words them and the test keeps the two together. OUTBOX is named as
// connections.js's DELIVERY is, not `…_STATES`: tests/native/invariants.rs
// reads such a table in a script not named for its vocabulary as send states.

import { code, facts, h, hidden, labelled, redraw, replace, time, uniqueId } from "./dom.js";
import { api, query, segment, SessionOver } from "./api.js";
import { empty, loading, panel, perform, refusalBox, statusArea } from "./shared.js";
import { directory } from "./names.js";
import { pager, PER_PAGE } from "./pager.js";

const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** Items in prose: "a", "a and b", "a, b and c". */
const listInWords = (items) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);

const badge = (text, tone) => h("span", { class: tone ? `badge ${tone}` : "badge", text });

/**
 * Where a message to an agent elsewhere stands in the outbox (the contract's
 * RemoteDeliveryState): its badge and tone, and `words(delivery)`, the
 * sentence said about it, with the next attempt while there is one.
 */
const OUTBOX = {
  pending: {
    badge: "Not yet accepted",
    tone: "due",
    words: (delivery) => [
      delivery.attempts.length ? `Not yet accepted there: ${plural(delivery.attempts.length, "attempt")} so far` : "Waiting for its first attempt",
      delivery.next_attempt_at ? [", tried again ", time(delivery.next_attempt_at)] : null,
    ],
  },
  sent: {
    badge: "Accepted",
    tone: null,
    words: (delivery) => [
      "Accepted there as a task; the node asks how it stands",
      delivery.next_attempt_at ? [" next at ", time(delivery.next_attempt_at)] : " until it ends",
    ],
  },
  done: { badge: "Done", tone: "on", words: () => "Its task there ended: its answer, or why it ended, is in the conversation" },
  dead: { badge: "Given up", tone: "off", words: (delivery) => `Given up: ${delivery.last_error ?? "no attempts left"}` },
};

/** What one attempt of the outbox did (the contract's RemoteAttemptStep). */
const ATTEMPT_STEPS = {
  card: { text: "Read its card" },
  send: { text: "Sent the message" },
  poll: { text: "Asked how its task stands" },
};

/** How one attempt ended (the contract's RemoteAttemptOutcome). */
const ATTEMPT_OUTCOMES = {
  ok: { text: "Done", tone: "on" },
  retrying: { text: "Failed, to be tried again", tone: "due" },
  failed: { text: "Failed for good", tone: "off" },
};

// ---- an agent elsewhere, by name and domain

/** The agents elsewhere the page has been told of, by their `rag_…` id: `{ id, card_url, domain, name }`. */
const remoteAgents = new Map();

/** Whether `id` names an agent elsewhere (as a message's sender or recipient, or on an allowlist). */
export const isElsewhere = (id) => typeof id === "string" && id.startsWith("rag_");

/**
 * Keeps what the node told of an agent elsewhere (a message's `remote`, a
 * delivery's `remote_agent`), so that its id is shown by its name and domain
 * everywhere on the page, refusals included (names.js's directory).
 */
export function rememberRemote(remote) {
  if (!remote?.id) return;
  remoteAgents.set(remote.id, remote);
  directory.rememberName(remote.id, remoteWords(remote.id));
}

/** An agent elsewhere in plain words: "Helper at partner.example", or "an agent elsewhere" when the page was told nothing of it. */
export function remoteWords(id) {
  const remote = remoteAgents.get(id);
  if (!remote) return "an agent elsewhere";
  return remote.name ? `${remote.name} at ${remote.domain}` : `an agent at ${remote.domain}`;
}

/**
 * An agent elsewhere by its name and its organisation's domain, its card in
 * the title (its id is under a message's Ids, as connections.js's names are).
 */
export function remoteNamed(id) {
  const remote = remoteAgents.get(id);
  if (!remote) return h("span", { class: "who", title: id, text: "an agent elsewhere" });
  return h("span", { class: "who remote-agent", title: remote.card_url },
    remote.name ? [h("span", { class: "who-name", text: remote.name }), " at "] : "an agent at ",
    h("span", { class: "remote-domain", text: remote.domain }));
}

/** The line that says a message's other party is elsewhere, and which card names it. */
export function remoteCard(remote) {
  if (!remote) return null;
  rememberRemote(remote);
  return h("p", { class: "remote-card muted" },
    `Elsewhere: ${remote.name ? `${remote.name}, ` : ""}an agent of ${remote.domain}, outside this organisation. Its card: `,
    code(remote.card_url));
}

/**
 * The node's content notice for what an agent elsewhere wrote in `message`,
 * shown beside that part (`part`: "content", what it sent, or "reply", its
 * answer to a message sent to it); null beside anything written here.
 */
export function contentNotice(message, part) {
  if (!message.content_notice || !message.remote) return null;
  const wroteIt = part === "content" ? message.sender === message.remote.id : message.recipient === message.remote.id;
  if (!wroteIt) return null;
  return h("p", { class: "notice content-notice" }, h("strong", { text: "From outside this organisation. " }), message.content_notice);
}

// ---- the outbound policy, in the delivery policy form

/**
 * The part of an agent's delivery policy form about agents elsewhere, from
 * its messaging (`GET /api/agents/:agentId/messaging`): answers the fieldset,
 * `body()`, the fields it adds to the policy's PATCH, and `said(saved)`, a
 * sentence saying what was saved. Its controls are named as the API's
 * fields, so a refusal names them by their labels (refusals.js).
 */
export function outboundPolicy(messaging, name) {
  const recipients = h("textarea", {
    name: "remote_recipients", rows: 3, spellcheck: "false", autocomplete: "off",
    placeholder: "partner.example\nhttps://agents.partner.example/.well-known/agent-card.json",
  });
  recipients.value = (messaging.remote_recipients ?? []).join("\n");
  const perHour = h("input", { type: "number", name: "remote_per_hour", min: 1, step: 1, required: true, inputmode: "numeric", value: String(messaging.remote_per_hour) });
  const listed = h("input", { type: "checkbox", name: "listed_on_node_card", id: uniqueId("listed"), checked: Boolean(messaging.listed_on_node_card) });
  const listedAbout = uniqueId("hint");
  listed.setAttribute("aria-describedby", listedAbout);
  const fieldset = h("fieldset", {},
    h("legend", { text: "Agents elsewhere" }),
    labelled("Agents elsewhere it may message", recipients,
      "One a line: an organisation's domain (partner.example, which covers its subdomains) or an agent's card, by its https address. Empty: it reaches no agent elsewhere."),
    h("div", { class: "fields" },
      labelled("Messages elsewhere an hour", perHour, "The most it may send to agents elsewhere in one hour; more are refused.")),
    h("div", { class: "choice" }, listed,
      h("div", { class: "choice-body" },
        h("label", { for: listed.id, text: "List it on this node's card" }),
        h("p", { id: listedAbout, class: "hint", text: `Only a listed agent takes messages from the agents of connected organisations, under the rest of this policy. Anyone may read the node's card: it names ${name} and its card.` }))));
  return {
    fieldset,
    body: () => ({
      remote_recipients: recipients.value.split("\n").map((line) => line.trim()).filter(Boolean),
      remote_per_hour: Number(perHour.value),
      listed_on_node_card: listed.checked,
    }),
    said: (saved) => [
      saved.remote_recipients.length
        ? `It may message agents elsewhere at ${listInWords(saved.remote_recipients)}, at most ${saved.remote_per_hour} an hour`
        : "It messages no agent elsewhere",
      saved.listed_on_node_card ? "; it is listed on this node's card." : ", and is not listed on this node's card.",
    ].join(""),
  };
}

// ---- the outbox: the agent's messages to agents elsewhere

/** One attempt: when, what it did, how it ended and what happened. */
function attemptLine(attempt) {
  const outcome = ATTEMPT_OUTCOMES[attempt.outcome] ?? { text: attempt.outcome, tone: null };
  return h("li", { class: "attempt" },
    h("p", { class: "attempt-head" },
      `Attempt ${attempt.attempt}, `, time(attempt.at), `: ${ATTEMPT_STEPS[attempt.step]?.text ?? attempt.step} `,
      badge(outcome.text, outcome.tone)),
    attempt.detail ? h("p", { class: "attempt-detail", text: attempt.detail }) : null);
}

/** A message to an agent elsewhere: to whom, where it stands, and every attempt, oldest first. */
function deliveryCard(delivery) {
  rememberRemote(delivery.remote_agent);
  const titleId = uniqueId("delivery");
  const state = OUTBOX[delivery.state] ?? { badge: delivery.state, tone: null, words: () => delivery.state };
  const to = remoteWords(delivery.remote_agent.id);
  return h("article", { class: "message-card delivery-card", "aria-labelledby": titleId },
    h("div", { class: "message-head" },
      h("h3", { id: titleId }, "To ", remoteNamed(delivery.remote_agent.id)),
      h("div", { class: "badges" }, badge(state.badge, state.tone))),
    h("p", { class: "standing" }, h("strong", {}, state.words(delivery))),
    remoteCard(delivery.remote_agent),
    h("p", { class: "message-times muted" }, "Sent ", time(delivery.created_at)),
    delivery.attempts.length
      ? h("ol", { class: "attempts", "aria-label": `Attempts to deliver it to ${to}` }, delivery.attempts.map(attemptLine))
      : h("p", { class: "muted", text: "No attempt yet." }),
    h("details", { class: "ids" },
      h("summary", {}, "Ids", hidden(` of the message to ${to}`)),
      facts([
        ["Message", code(delivery.message_id)],
        ["Task there", delivery.remote_task_id ? code(delivery.remote_task_id) : null],
        ["Agent elsewhere", code(delivery.remote_agent.id)],
      ], "facts ids-facts")));
}

/** How long after a delivery's next attempt is due its panel reads it again, and how often while one is overdue, in ms. */
const AFTER_DUE_MS = 5_000;
const WHILE_OVERDUE_MS = 30_000;

/**
 * The panel of an agent's messages to agents elsewhere, newest first, a page
 * at a time: answers `{ element, start(quiet) }`. `start` reads the first page
 * again and shows it where it changed (dom.js's redraw(): what a person reads
 * stays put); `quiet` (a change told on the agent's stream) leaves the list as
 * it is while older pages are shown, which a first page would take away. A
 * refusal is shown in the panel: the rest of the agent's page stands without it.
 *
 * The outbox's attempts are made after the answer to a send and on the
 * schedule, and a failed one is told on no stream, so the page cannot wait to
 * be told: while a delivery waits for its next attempt, `readAgain` (the
 * agent page's quiet refresh, which calls `start`) runs once that attempt is
 * due, and Check again runs it at once.
 */
export function outboxPanel(agentId, name, readAgain) {
  const list = h("div", { class: "message-list" }, loading());
  const pages = pager({
    fetchPage: async (parameters) => {
      const page = await api("GET", `/api/agents/${segment(agentId)}/remote-deliveries${query(parameters)}`);
      return { items: page.deliveries, next_cursor: page.next_cursor };
    },
    show: (deliveries) => list.append(...deliveries.map(keyedCard)),
    more: "Show older messages elsewhere",
    failure: "Older messages to agents elsewhere could not be shown.",
  });
  const keyedCard = (delivery) => {
    const card = deliveryCard(delivery);
    card.setAttribute("data-delivery", delivery.message_id);
    return card;
  };
  const check = h("button", { type: "button", class: "secondary" }, "Check again", hidden(` the messages ${name} sent elsewhere`));
  const checked = statusArea();
  check.addEventListener("click", () => perform(checked, [check], async () => {
    await readAgain();
    return null;
  }, `The messages ${name} sent elsewhere could not be read again.`));

  let nextRead = null;
  /** Reads again once the soonest next attempt among `deliveries` is due, while the panel is shown. */
  function readWhenDue(deliveries) {
    clearTimeout(nextRead);
    const due = deliveries.filter((delivery) => delivery.next_attempt_at).map((delivery) => Date.parse(delivery.next_attempt_at)).filter(Number.isFinite);
    if (!due.length) return;
    const soonest = Math.min(...due) - Date.now();
    nextRead = setTimeout(() => {
      if (list.isConnected) readAgain().catch(() => {});
    }, soonest > 0 ? soonest + AFTER_DUE_MS : WHILE_OVERDUE_MS);
  }

  async function start(quiet = false) {
    if (quiet && list.querySelectorAll(":scope > [data-delivery]").length > PER_PAGE) return;
    try {
      const deliveries = await pages.first();
      if (!deliveries.length) replace(list, empty(`${name} has sent nothing to an agent elsewhere.`));
      else redraw(list, "data-delivery", deliveries, { key: (delivery) => delivery.message_id, draw: deliveryCard, sameAs: (delivery) => JSON.stringify(delivery) });
      readWhenDue(deliveries);
    } catch (error) {
      if (error instanceof SessionOver) throw error;
      replace(list, refusalBox(error, `The messages ${name} sent elsewhere could not be shown.`));
    }
  }
  const element = panel("Messages to agents elsewhere",
    h("p", { class: "muted", text: `What ${name} sent to agents on other organisations' nodes, newest first: where each stands, and every attempt this node made to deliver it. A failed attempt is tried again later, until the attempts its delivery policy allows are spent; this page reads them again when the next is due.` }),
    h("div", { class: "button-row" }, check), checked,
    list, pages.element);
  return { element, start };
}

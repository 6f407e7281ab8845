// Connections (SPEC §10, §11; everyone): agent messaging's owner plane, and a
// person's own messages to agents. Three views:
//   #/connections                        the agents the person sponsors (an administrator:
//                                        every agent), each with its connection and Pause or
//                                        Resume; a form to send an agent a message as oneself;
//                                        the messages sent, with where each stands and its reply
//   #/connections/agent/<agentId>        one agent: its connection, its delivery policy (who
//                                        it receives from, rate, leases at once, attempts, the
//                                        agents elsewhere it may message), its inbox, newest
//                                        first, its messages to agents elsewhere (elsewhere.js)
//                                        and its conversations
//   #/connections/conversation/<id>      a conversation: every message in it, in order
//
// Where a message stands is the node's, judged when it answered (a lapsed
// lease is waiting again, a paused agent's messages are held); this module
// only puts it into words ("Held: paused", "Leased until 14:03 (attempt 2 of
// 5)"). An agent's page follows its inbox's stream (listen_to_agent) and the
// overview its person's own, so what agents do shows without a reload. It never asks for an agent's credential: everything here is read and
// set as the signed-in person, the agent's sponsor or an administrator.
//
// States are looked up only in DELIVERY and HELD, whose keys a test in
// src/interface.rs holds to the contract's AgentMessageState and HeldBecause.

import { breadcrumbs, code, facts, h, hidden, inOrder, labelled, linkButton, replace, shortTime, time, uniqueId } from "./dom.js";
import { followOwnWhileShown, holdWhileShown, me } from "./session.js";
import { api, ApiError, listen, query, segment, SessionOver } from "./api.js";
import { askOnce, empty, info, loading, panel, perform, refusalBox, statusArea, success } from "./shared.js";
import { directory } from "./names.js";
import { pager, PER_PAGE } from "./pager.js";
import { webhooksPanel } from "./webhooks.js";
import { contentNotice, isElsewhere, outboundPolicy, outboxPanel, remoteCard, remoteNamed, remoteWords, rememberRemote } from "./elsewhere.js";

const isAdmin = () => me?.is_admin === true;

/** The refusal of every messaging route on a node that does not run it. */
const FEATURE_DISABLED = "feature_disabled";
export const isFeatureOff = (error) => error instanceof ApiError && error.code === FEATURE_DISABLED;

/** What a message is, in words. */
const KINDS = {
  request: { text: "Request", one: "a request", about: "asks for an answer" },
  event: { text: "Event", one: "an event", about: "tells it something" },
  reply: { text: "Reply", one: "a reply", about: "answers a request" },
};

/** Why a waiting message is held back (the contract's HeldBecause): short, for the badge line, and what ends it. */
const HELD = {
  paused: { text: "paused", until: "It is delivered once the agent is resumed." },
  pending_cap: { text: "as many leases at once as its policy allows", until: "It is delivered once the agent finishes one of the messages it holds." },
  rate_cap: { text: "this minute's rate reached", until: "It is delivered once the minute's rate allows." },
};

const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/**
 * Where a message stands (the contract's AgentMessageState), in words:
 * `badge` and its tone, and `words(message, policy)`, the sentence said
 * about it. `policy` is the recipient's, when the owner is looking.
 */
const DELIVERY = {
  queued: {
    badge: "Queued",
    tone: null,
    words: (message) => (message.attempts
      ? `Queued: waiting to be claimed again (${plural(message.attempts, "lease")} lapsed)`
      : "Queued: waiting to be claimed"),
  },
  held: {
    badge: "Held",
    tone: "due",
    words: (message) => `Held: ${HELD[message.held_because]?.text ?? message.held_because ?? "by its policy"}`,
  },
  leased: {
    badge: "Leased",
    tone: null,
    words: (message, policy) => [
      "Leased until ", message.lease_expires_at ? shortTime(message.lease_expires_at) : "its lease lapses",
      ` (attempt ${message.attempts}${policy ? ` of ${policy.maximum_attempts}` : ""})`,
    ],
  },
  acknowledged: { badge: "Acknowledged", tone: "on", words: () => "Acknowledged" },
  answered: { badge: "Answered", tone: "on", words: () => "Answered" },
  rejected: { badge: "Rejected", tone: "off", words: (message) => `Rejected: ${message.reason ?? "no reason given"}` },
  // The one reason the node refuses at delivery: the allowlist (its `reason` says so).
  refused: { badge: "Refused", tone: "off", words: () => "Refused: not on the allowlist" },
  failed: { badge: "Failed", tone: "off", words: (message) => `Failed after ${plural(message.attempts, "attempt")}` },
  expired: { badge: "Expired", tone: "quiet", words: (message) => ["Expired: not handled by ", shortTime(message.expires_at)] },
  canceled: { badge: "Canceled", tone: "quiet", words: () => "Canceled: its conversation was canceled" },
  delivered: { badge: "Delivered", tone: "on", words: () => "Delivered" },
};

/** A message's state as a badge and a sentence, with what ends a hold, and what the allowlist will do to it. */
function standing(message, policy) {
  const known = DELIVERY[message.state] ?? { badge: message.state, tone: null, words: () => message.state };
  const held = HELD[message.held_because];
  // The allowlist applies at delivery: a waiting message from a sender it no
  // longer names is refused when the agent next claims.
  const waiting = DELIVERY[message.state] === DELIVERY.queued || DELIVERY[message.state] === DELIVERY.held;
  const barred = policy && waiting && message.kind !== "reply" && policy.allowed_peers && !policy.allowed_peers.includes(message.sender);
  return {
    badge: h("span", { class: known.tone ? `badge ${known.tone}` : "badge", text: known.badge }),
    words: h("p", { class: "standing" },
      h("strong", {}, known.words(message, policy)),
      held ? [" ", h("span", { class: "muted", text: held.until })] : null,
      barred ? [" ", h("span", { class: "muted", text: "Its sender is not on the allowlist now, so it will be refused when it is delivered." })] : null),
  };
}

// ---- names

/**
 * Someone by name, their id on hover; the id itself only when no name is
 * known (a non-administrator knows the names of their own agents and their own).
 */
function named(id) {
  if (!id) return h("span", { class: "muted", text: "nobody" });
  if (isElsewhere(id)) return remoteNamed(id);
  if (id === me?.id) return h("span", { class: "who-name", title: id, text: `${me.name} (you)` });
  const name = directory.nameOf(id);
  return name ? h("span", { class: "who-name", title: id, text: name }) : code(id);
}

/** A plain name for a sentence: the name, "you", or the id. */
const nameText = (id) => (id === me?.id ? "you" : isElsewhere(id) ? remoteWords(id) : directory.nameOf(id) ?? id);

/**
 * The agents the person may watch: those they sponsor, or for an
 * administrator every agent (and every person, for names). Each as
 * `{ id, name, sponsor, paused, revoked, last_seen_at }`.
 */
async function watchedAgents() {
  if (isAdmin()) {
    const [agents] = await Promise.all([directory.loadAgents(), directory.loadPeople()]);
    return agents.map((agent) => ({
      id: agent.id,
      name: agent.name,
      sponsor: agent.sponsor,
      paused: Boolean(agent.paused_at),
      revoked: Boolean(agent.revoked_at),
      last_seen_at: agent.last_seen_at ?? null,
    }));
  }
  const { agents } = await api("GET", "/api/me/agents");
  directory.rememberAgents(agents);
  return agents.map((agent) => ({ ...agent, sponsor: me.id }));
}

// ---- pieces every view shows

/** The section's words when the node does not run agent messaging, with the refusal's fix. */
export function featureOff(error) {
  return h("div", { class: "notice info feature-off", role: "status" },
    h("p", {}, h("strong", { text: "Agent messaging is off on this node." })),
    h("p", { text: "Agents here have no inboxes: nothing can be sent to them, and nothing is stored or delivered." }),
    error.fix ? h("p", {}, h("span", { class: "refusal-label", text: "To turn it on: " }), error.fix) : null);
}

/** "Last seen 3 minutes ago" or "Never connected": when the agent last looked at its inbox. */
function connection(lastSeen) {
  // An administrator's list does not say; the agent's messaging does, once read.
  if (lastSeen === undefined) return null;
  if (!lastSeen) return h("span", { class: "connection never", text: "Never connected" });
  const minutes = Math.floor((Date.now() - Date.parse(lastSeen)) / 60_000);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const ago = minutes < 1 ? "just now"
    : minutes < 60 ? `${plural(minutes, "minute")} ago`
      : hours < 24 ? `${plural(hours, "hour")} ago`
        : `${plural(days, "day")} ago`;
  return h("span", { class: "connection" }, "Last seen ", h("time", { datetime: lastSeen, title: lastSeen, text: ago }));
}

function agentBadge(agent) {
  if (agent.revoked) return h("span", { class: "badge off", text: "Revoked" });
  return agent.paused ? h("span", { class: "badge quiet", text: "Paused" }) : h("span", { class: "badge on", text: "Active" });
}

/** Content as the sender sent it: pretty JSON, wrapped, never rendered. */
const json = (value, label) => h("pre", { class: "json", "aria-label": label }, JSON.stringify(value, null, 2) ?? "null");

/**
 * One message: what it is, from whom to whom, where it stands, what it
 * carries and, outside its conversation, its reply and a link to that
 * conversation. Ids are under "Ids", on request.
 */
function messageCard(message, { policy = null, inConversation = false } = {}) {
  const titleId = uniqueId("message");
  const kind = KINDS[message.kind] ?? { text: message.kind, about: "" };
  const { badge, words } = standing(message, policy);
  rememberRemote(message.remote);
  return h("article", { class: "message-card", "aria-labelledby": titleId },
    h("div", { class: "message-head" },
      h("h3", { id: titleId }, `${kind.text} from `, named(message.sender), " to ", named(message.recipient)),
      h("div", { class: "badges" }, badge)),
    // A final state's sentence is often the badge again ("Answered"): said once.
    words.textContent === badge.textContent ? null : words,
    remoteCard(message.remote),
    contentNotice(message, "content"),
    h("p", { class: "text-label", text: "Content" }),
    json(message.content, `Content of the ${kind.text.toLowerCase()}`),
    !inConversation && message.reply
      ? [contentNotice(message, "reply"), h("p", { class: "text-label" }, "Reply, ", time(message.reply.created_at)), json(message.reply.content, "The reply")]
      : null,
    h("p", { class: "message-times muted" }, "Sent ", time(message.created_at),
      message.updated_at !== message.created_at ? [" · changed ", time(message.updated_at)] : null),
    h("div", { class: "message-foot" },
      inConversation ? null : h("a", { href: `#/connections/conversation/${segment(message.conversation_id)}` }, "Open its conversation", hidden(` (${kind.text.toLowerCase()} from ${nameText(message.sender)})`)),
      h("details", { class: "ids" },
        h("summary", {}, "Ids", hidden(` of this ${kind.text.toLowerCase()}`)),
        facts([
          ["Message", code(message.id)],
          ["Conversation", code(message.conversation_id)],
          ["From", code(message.sender)],
          ["To", code(message.recipient)],
          ["In reply to", message.in_reply_to ? code(message.in_reply_to) : null],
          ["Attempts", String(message.attempts)],
          ["Fencing token", String(message.fencing_token)],
          ["Expires", time(message.expires_at)],
        ], "facts ids-facts"))));
}

/**
 * Messages as cards, newest first, a page at a time: answers `{ element, start(names) }`;
 * `start` loads the first page while `names` (a promise of the directory's names) loads,
 * and shows it once both have: a card drawn earlier would show ids where names are known.
 */
function messageList({ fetchPage, card, none, more, failure }) {
  const list = h("div", { class: "message-list" }, loading());
  const pages = pager({
    fetchPage: async (parameters) => {
      const page = await fetchPage(parameters);
      return { items: page.messages, next_cursor: page.next_cursor };
    },
    show: (messages) => list.append(...messages.map(card)),
    more,
    failure,
  });
  return {
    element: h("div", {}, list, pages.element),
    async start(names = null) {
      const messages = await pages.first();
      await names?.catch(() => null);
      replace(list, messages.length ? messages.map(card) : empty(none));
      return messages;
    },
  };
}

// ---- the views

export async function renderConnections(view, params) {
  const [which, id] = params;
  try {
    if (which === "agent" && id) return await renderAgent(view, id);
    if (which === "conversation" && id) return await renderConversation(view, id);
    return await renderOverview(view);
  } catch (error) {
    if (!isFeatureOff(error)) throw error;
    replace(view, featureOff(error));
  }
}

/** The agents watched, the form to send a message, and the messages sent. */
async function renderOverview(view) {
  view.append(loading());
  const sent = messageList({
    fetchPage: (parameters) => api("GET", `/api/agent-messages${query(parameters)}`),
    card: (message) => messageCard(message),
    none: "You have not sent an agent a message yet.",
    more: "Show earlier messages",
    failure: "Earlier messages could not be shown.",
  });
  // The sent list is the first messaging route the page asks, so a node that
  // does not run messaging says so here; the agents list does not depend on it.
  const names = watchedAgents();
  const [listed, first] = await Promise.allSettled([names, sent.start(names)]);
  if (listed.status === "rejected") throw listed.reason;
  if (first.status === "rejected" && !isFeatureOff(first.reason)) throw first.reason;
  const agents = listed.value;
  const featureRefusal = first.status === "rejected" ? first.reason : null;
  const watched = panel(isAdmin() ? "Every agent" : "Your agents",
    h("p", { class: "muted", text: isAdmin()
      ? "Every agent on this node: whether it is connected (when it last looked at its inbox), whether it receives messages, and its inbox and delivery policy."
      : "The agents that act under your authority: whether each is connected (when it last looked at its inbox), whether it receives messages, and its inbox and delivery policy." }),
    agentCards(agents, { on: !featureRefusal }));
  if (featureRefusal) {
    replace(view, featureOff(featureRefusal), watched);
    return;
  }
  const sentPanel = panel("Messages you sent", h("p", { class: "muted", text: "Most recently changed first, with where each stands now and the reply to each answered request." }), sent.element);
  replace(view,
    watched,
    panel("Send a message", sendForm(agents, () => sent.start())),
    sentPanel);
  // An answer to a message the person sent is told on their own stream: the
  // list shows it without a reload, unless they are reading older pages.
  followOwnWhileShown(view, () => {
    if (sentPanel.contains(document.activeElement) || sentPanel.querySelectorAll(".message-list > *").length > PER_PAGE) return;
    sent.start().catch(() => {});
  });
}

/**
 * The watched agents as cards, a page at a time: each with its connection,
 * Pause or Resume, and a link to its inbox and policy (while messaging runs).
 */
function agentCards(agents, { on }) {
  if (!agents.length) {
    return empty(isAdmin() ? "No agents yet: mint one under Agents." : "You sponsor no agents. An administrator mints an agent for you under Agents.");
  }
  const list = h("div", { class: "agent-cards" });
  const more = h("button", { type: "button", class: "secondary more", text: "Show more agents" });
  let shown = 0;
  function showMore() {
    const next = agents.slice(shown, shown + PER_PAGE);
    shown += next.length;
    list.append(...next.map((agent) => agentCard(agent, { on })));
    more.hidden = shown >= agents.length;
  }
  more.addEventListener("click", showMore);
  showMore();
  return [list, more];
}

/** Pause or resume an agent as its sponsor or an administrator: answers what the node says it is now. */
async function pauseOrResume(agent, verb) {
  const changed = await api("POST", `/api/agents/${segment(agent.id)}/${verb}`);
  directory.rememberAgents([changed]);
  return { ...agent, paused: Boolean(changed.paused_at), revoked: Boolean(changed.revoked_at) };
}

const pausedSaid = (name) => `Paused ${name}: it receives nothing and its credential is refused until you resume it. Messages to it wait, held.`;
const resumedSaid = (name) => `Resumed ${name}: its credential works again, and messages held for it are delivered.`;

function agentCard(initial, { on }) {
  let agent = initial;
  let messaging = null;
  const titleId = uniqueId("agent");
  const card = h("article", { class: "agent-card", "aria-labelledby": titleId });
  const said = statusArea();

  function show() {
    const button = (text) => h("button", { type: "button", class: "secondary" }, text, hidden(` ${agent.name}`));
    const toggle = agent.revoked ? null : button(agent.paused ? "Resume" : "Pause");
    const lastSeen = messaging ? messaging.last_seen_at ?? null : agent.last_seen_at;
    replace(card,
      h("div", { class: "message-head" },
        h("h3", { id: titleId, text: agent.name }),
        h("div", { class: "badges" }, agentBadge(agent))),
      lastSeen === undefined ? null : h("p", {}, connection(lastSeen)),
      agent.sponsor !== me.id ? h("p", { class: "muted" }, "Sponsored by ", named(agent.sponsor)) : null,
      messaging ? h("p", { class: "muted", text: `${plural(messaging.waiting, "message")} waiting, ${messaging.leased} leased now` }) : null,
      h("div", { class: "button-row" },
        on ? linkButton(`#/connections/agent/${segment(agent.id)}`, "Inbox and policy", { secondary: true, context: ` of ${agent.name}` }) : null,
        toggle),
      said);
    toggle?.addEventListener("click", () => perform(said, [toggle], async () => {
      const verb = agent.paused ? "resume" : "pause";
      agent = await pauseOrResume(agent, verb);
      if (messaging) messaging = { ...messaging, paused: agent.paused };
      const message = verb === "pause" ? pausedSaid(agent.name) : resumedSaid(agent.name);
      show();
      card.querySelector(".button-row button")?.focus();
      said.replaceChildren(success(message));
      return null;
    }, `${agent.name} was not ${agent.paused ? "resumed" : "paused"}.`));
  }

  show();
  // The connection and what waits, from the agent's messaging.
  if (on) {
    api("GET", `/api/agents/${segment(agent.id)}/messaging`).then((answer) => {
      messaging = answer;
      agent = { ...agent, paused: answer.paused, last_seen_at: answer.last_seen_at ?? null };
      show();
    }, (error) => {
      if (error instanceof SessionOver) return;
      said.replaceChildren(refusalBox(error, `The connection of ${agent.name} could not be shown.`));
    });
  }
  return card;
}

/**
 * Sending a message to an agent as oneself: the recipient by name (an
 * agent the person watches) or, for anyone else's, by id; request or event;
 * the content as JSON when it reads as JSON, else as text. A retry of the
 * same message carries the same idempotency key, so it is not sent twice;
 * anything changed is a new message with a fresh key.
 */
function sendForm(agents, sentAgain) {
  const live = agents.filter((agent) => !agent.revoked);
  const mine = live.filter((agent) => agent.sponsor === me.id);
  const others = live.filter((agent) => agent.sponsor !== me.id);
  const BY_ID = "by-id";
  const option = (agent) => h("option", { value: agent.id, text: agent.paused ? `${agent.name} (paused: it waits)` : agent.name });
  const recipient = h("select", { name: "recipient", required: true },
    h("option", { value: "", text: "Choose an agent…" }),
    mine.length ? h("optgroup", { label: "Your agents" }, mine.map(option)) : null,
    others.length ? h("optgroup", { label: "Other agents" }, others.map(option)) : null,
    h("option", { value: BY_ID, text: "Another agent, by its id…" }));
  const recipientId = h("input", { type: "text", name: "recipient_id", autocomplete: "off", spellcheck: "false", placeholder: "agt_…", pattern: "agt_[0-9A-Za-z]+" });
  const recipientIdField = labelled("The agent's id", recipientId, "Its sponsor can tell you: it starts agt_.");
  recipientIdField.hidden = true;
  recipient.addEventListener("change", () => {
    recipientIdField.hidden = recipient.value !== BY_ID;
    recipientId.required = recipient.value === BY_ID;
  });
  const kind = h("select", { name: "kind" }, ["request", "event"].map((name) => h("option", { value: name, text: `${KINDS[name].text}: ${KINDS[name].about}` })));
  const content = h("textarea", { name: "content", rows: 5, required: true, spellcheck: "false" });
  const submit = h("button", { type: "submit", text: "Send message" });
  const status = statusArea();
  const failure = "The message was not sent.";
  let attempt = { body: null, key: null };

  const form = h("form", { class: "message-form" },
    h("div", { class: "fields" },
      labelled("To", recipient, "You send it as yourself, and see its answer below."),
      recipientIdField,
      labelled("Kind", kind)),
    labelled("Content", content, "Sent as JSON when it reads as JSON, such as {\"city\": \"Lisbon\"}; anything else is sent as text."),
    h("div", { class: "button-row" }, submit),
    status);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [submit], async () => {
      let value;
      try {
        value = JSON.parse(content.value);
      } catch {
        value = content.value;
      }
      const body = { recipient: recipient.value === BY_ID ? recipientId.value.trim() : recipient.value, kind: kind.value, content: value };
      const same = JSON.stringify(body);
      if (attempt.body !== same) attempt = { body: same, key: crypto.randomUUID() };
      const message = await api("POST", "/api/agent-messages", { ...body, idempotency_key: attempt.key });
      attempt = { body: null, key: null };
      form.reset();
      recipientIdField.hidden = true;
      await sentAgain();
      const { words } = standing(message);
      return [`Sent ${KINDS[message.kind]?.one ?? "a message"} to ${nameText(message.recipient)}. `, words.firstChild, "."];
    }, failure);
  });
  return form;
}

/** One agent: its connection, its delivery policy and its inbox. */
async function renderAgent(view, agentId) {
  await watchedAgents();
  const said = statusArea();
  const connectionPanel = h("div");
  const policyPanel = h("div");
  const inboxPanel = h("div");
  const outboxHolder = h("div");
  let outbox = null;
  const conversationsPanel = h("div");

  /**
   * Loads the agent's messaging and inbox again and shows them; `message` is
   * what the last action did. `quiet` (a change told on the agent's stream)
   * leaves the policy form, which the owner may be editing, and what the last
   * action said as they are. Refreshes run one after another, so what one
   * read never lands after what a later one read.
   */
  let refreshing = Promise.resolve();
  function refresh(message, { quiet = false } = {}) {
    const run = refreshing.then(() => show(message, quiet));
    refreshing = run.catch(() => {});
    return run;
  }

  async function show(message, quiet) {
    const messaging = await api("GET", `/api/agents/${segment(agentId)}/messaging`);
    // Whether it is revoked is in the lists of agents, not in its messaging.
    const listed = directory.agents.get(agentId);
    const revoked = Boolean(listed?.revoked ?? listed?.revoked_at);
    if (!listed) directory.rememberAgents([{ id: messaging.agent_id, name: messaging.name }]);
    const inbox = messageList({
      fetchPage: (parameters) => api("GET", `/api/agents/${segment(agentId)}/inbox${query(parameters)}`),
      card: (item) => messageCard(item, { policy: messaging }),
      none: `Nothing has been sent to ${messaging.name} yet.`,
      more: "Show older messages",
      failure: "Older messages could not be shown.",
    });
    outbox ??= outboxPanel(agentId, messaging.name, () => refresh(null, { quiet: true }));
    // The outbox first: the agents elsewhere it names are then named in the inbox too.
    await outbox.start(quiet);
    const inboxMessages = await inbox.start();
    if (!outboxHolder.contains(outbox.element)) replace(outboxHolder, outbox.element);
    document.title = `${inOrder(messaging.name)} · Connections · Mailroom`;
    replace(connectionPanel, panel("Connection", connectionFacts(messaging, { revoked, refresh })));
    if (!quiet) replace(policyPanel, panel("Delivery policy", policyForm(messaging, { revoked, senders: inboxMessages.map((item) => item.sender), refresh })));
    replace(inboxPanel, panel(`Inbox (${plural(messaging.waiting, "message")} waiting, ${messaging.leased} leased)`,
      h("p", { class: "muted", text: "Every message sent to it, newest first, and where each stands now. You watch it here; only the agent claims, answers or rejects." }),
      inbox.element));
    if (quiet) return messaging;
    said.replaceChildren();
    if (message) {
      const notice = success(message);
      notice.setAttribute("tabindex", "-1");
      said.append(notice);
      notice.focus();
    }
    return messaging;
  }

  const messaging = await refresh();
  // What the agent does in its inbox (a message arriving, claimed, answered)
  // shows as it happens. While the owner is in the inbox (focus there, older
  // messages shown), it stays as it is and a button offers the latest.
  const latest = h("button", { type: "button", class: "secondary", text: "Show the latest" });
  const newer = h("div", { class: "live-notice", role: "status", hidden: true },
    h("span", { text: `${messaging.name}'s inbox changed. ` }), latest);
  latest.addEventListener("click", () => perform(said, [latest], async () => {
    newer.hidden = true;
    await refresh(null, { quiet: true });
  }, "The latest inbox could not be shown."));
  let waiting = null;
  const changed = () => {
    if (waiting !== null) return;
    waiting = setTimeout(() => {
      waiting = null;
      const older = inboxPanel.querySelectorAll(".message-list > *").length > PER_PAGE;
      const focused = [inboxPanel, connectionPanel].some((part) => part.contains(document.activeElement));
      if (focused || older) {
        newer.hidden = false;
        return;
      }
      refresh(null, { quiet: true }).catch((error) => {
        // The shell signs the person in again; anything else waits for the next change.
        if (error instanceof SessionOver) return;
      });
    }, 200);
  };
  view.append(breadcrumbs(["Connections", "#/connections"], [messaging.name, null]), said, newer, connectionPanel, policyPanel, inboxPanel, outboxHolder, conversationsPanel);
  conversationsPanel.append(panel("Conversations", conversationList(agentId, messaging.name)),
    webhooksPanel(`/api/agents/${segment(agentId)}/webhooks`, `${messaging.name}'s inbox`));
  const stream = listen(`/api/agents/${segment(agentId)}/live`, { onEvent: changed, onOpen: changed });
  holdWhileShown(view, () => {
    stream.close();
    if (waiting !== null) clearTimeout(waiting);
  });
}

/** The agent's connection and state, Pause or Resume, and its ids on request. */
function connectionFacts(messaging, { revoked, refresh }) {
  const agent = { id: messaging.agent_id, name: messaging.name, paused: messaging.paused, revoked };
  const toggle = revoked ? null : h("button", { type: "button", class: "secondary" }, messaging.paused ? "Resume" : "Pause", hidden(` ${messaging.name}`));
  const status = statusArea();
  toggle?.addEventListener("click", () => perform(status, [toggle], async () => {
    const verb = messaging.paused ? "resume" : "pause";
    await pauseOrResume(agent, verb);
    await refresh(verb === "pause" ? pausedSaid(messaging.name) : resumedSaid(messaging.name));
    return null;
  }, `${messaging.name} was not ${messaging.paused ? "resumed" : "paused"}.`));
  return [
    facts([
      ["State", [agentBadge(agent), messaging.paused ? h("span", { class: "since", text: "It receives nothing until it is resumed; messages to it are held." }) : null]],
      ["Connection", [connection(messaging.last_seen_at ?? null), h("span", { class: "since", text: "When it last looked at its inbox." })]],
      ["Waiting", plural(messaging.waiting, "message")],
      ["Leased now", plural(messaging.leased, "message")],
      ["Sponsor", named(messaging.sponsor)],
    ]),
    toggle ? h("div", { class: "button-row" }, toggle) : null,
    status,
    h("details", { class: "ids" },
      h("summary", { text: "Ids and its A2A card" }),
      facts([["Agent", code(messaging.agent_id)], ["A2A agent card", code(messaging.agent_card_url)]], "facts ids-facts")),
  ];
}

/**
 * The delivery policy's form: who the agent receives from (everyone, or
 * those chosen by name: the people and agents the page knows, whoever is on
 * the allowlist now, whoever has sent it something, and anyone added by id),
 * its rate, leases at once and attempts. Saved with PATCH, then the inbox is
 * shown again: the policy applies to what already waits.
 */
function policyForm(messaging, { revoked, senders, refresh }) {
  const name = messaging.name;
  const everyone = h("input", { type: "radio", name: "receives", value: "everyone", id: uniqueId("receives"), checked: !messaging.allowed_peers });
  const chosenOnly = h("input", { type: "radio", name: "receives", "data-field": "allowed_peers", value: "chosen", id: uniqueId("receives"), checked: Boolean(messaging.allowed_peers) });
  const candidates = new Map();
  const add = (id) => {
    if (id && id !== messaging.agent_id && !candidates.has(id)) candidates.set(id, null);
  };
  add(me.id);
  for (const id of messaging.allowed_peers ?? []) add(id);
  for (const id of senders) add(id);
  for (const agent of directory.agents.values()) if (!(agent.revoked ?? agent.revoked_at)) add(agent.id);
  if (isAdmin()) for (const person of directory.people.values()) if (!person.disabled_at) add(person.id);

  const peers = h("div", { class: "peer-choices", role: "group", "aria-label": `Who ${name} receives from` });
  const allowed = new Set(messaging.allowed_peers ?? []);
  function peerChoice(id) {
    const box = h("input", { type: "checkbox", name: "peer", value: id, id: uniqueId("peer"), checked: allowed.has(id) });
    const what = id.startsWith("agt_") ? "agent" : isElsewhere(id) ? "agent elsewhere" : "person";
    candidates.set(id, box);
    return h("div", { class: "choice" }, box, h("label", { for: box.id }, nameText(id) === "you" ? `${me.name} (you)` : nameText(id), " ", h("span", { class: "muted", text: what })));
  }
  const sorted = [...candidates.keys()].sort((a, b) => nameText(a).localeCompare(nameText(b)));
  peers.append(...sorted.map(peerChoice));

  const byId = h("input", { type: "text", name: "peer_id", autocomplete: "off", spellcheck: "false", placeholder: "agt_…, usr_… or rag_…" });
  const addById = h("button", { type: "button", class: "secondary", text: "Add to the list" });
  const addStatus = statusArea();
  addById.addEventListener("click", () => {
    const id = byId.value.trim();
    addStatus.replaceChildren();
    if (!/^(agt|usr|rag)_[0-9A-Za-z]+$/.test(id)) {
      addStatus.append(refusalBox({ code: "invalid_peer", message: "That is not an agent's or a person's id.", reason: "An allowlist names agents (agt_…), people (usr_…) and agents elsewhere (rag_…).", fix: "Ask the agent's sponsor or the person for their id." }, "Nobody was added."));
      return;
    }
    if (candidates.get(id)) candidates.get(id).checked = true;
    else peers.append(peerChoice(id));
    candidates.get(id).checked = true;
    chosenOnly.checked = true;
    byId.value = "";
    candidates.get(id).focus();
  });

  const number = (field, value) => h("input", { type: "number", name: field, min: 1, step: 1, required: true, value: String(value), inputmode: "numeric" });
  const rate = number("rate_per_minute", messaging.rate_per_minute);
  const pending = number("pending_cap", messaging.pending_cap);
  const attempts = number("maximum_attempts", messaging.maximum_attempts);
  const elsewhere = outboundPolicy(messaging, name);
  const save = h("button", { type: "submit", text: "Save policy" });
  const status = statusArea();
  const failure = "The policy was not saved.";
  const choice = (radio, text, about) => {
    const aboutId = uniqueId("hint");
    radio.setAttribute("aria-describedby", aboutId);
    return h("div", { class: "choice" }, radio, h("div", { class: "choice-body" }, h("label", { for: radio.id, text }), h("p", { id: aboutId, class: "hint", text: about })));
  };
  const form = h("form", { class: "policy-form", "aria-label": `Delivery policy of ${name}` },
    h("fieldset", {},
      h("legend", { text: "Who it receives from" }),
      choice(everyone, "Everyone on this node", "Any agent or person here may send it messages, and the agents of connected organisations if it is listed on this node's card."),
      choice(chosenOnly, "Only those chosen", "Messages from anyone else are refused when they are delivered, those already waiting too. Choosing nobody means it receives from nobody."),
      peers,
      h("div", { class: "fields" }, labelled("Someone else, by id", byId, "An agent, a person or an agent elsewhere not listed here."), h("div", { class: "field actions" }, addById)),
      addStatus),
    h("fieldset", {},
      h("legend", { text: "How much it is delivered" }),
      h("div", { class: "fields" },
        labelled("Messages a minute", rate, "The most it is delivered in one minute; more wait, held."),
        labelled("Leases at once", pending, "The most messages it holds leases on at a time."),
        labelled("Attempts before failing", attempts, "How many leases a message is granted before it fails."))),
    elsewhere.fieldset,
    h("div", { class: "button-row" }, save),
    status);
  peers.addEventListener("change", () => {
    chosenOnly.checked = true;
  });
  if (revoked) {
    for (const control of form.querySelectorAll("input, textarea, button")) control.disabled = true;
    form.prepend(info(`${name} is revoked: it receives nothing, for good, and its policy no longer changes.`));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [save], async () => {
      const chosen = [...candidates].filter(([, box]) => box?.checked).map(([id]) => id);
      const body = {
        rate_per_minute: Number(rate.value),
        pending_cap: Number(pending.value),
        maximum_attempts: Number(attempts.value),
        ...(everyone.checked ? { allow_everyone: true } : { allowed_peers: chosen }),
        ...elsewhere.body(),
      };
      const saved = await api("PATCH", `/api/agents/${segment(messaging.agent_id)}/messaging`, body);
      const from = !saved.allowed_peers ? "everyone on this node"
        : saved.allowed_peers.length ? `only ${listInWords(saved.allowed_peers.map(nameText))}` : "nobody";
      await refresh(`Saved the policy of ${name}: it receives from ${from}; at most ${saved.rate_per_minute} a minute, ${saved.pending_cap} leases at once, ${plural(saved.maximum_attempts, "attempt")} before a message fails. ${elsewhere.said(saved)}`);
      return null;
    }, failure);
  });
  return form;
}

/** Items in prose: "a", "a and b", "a, b and c". */
const listInWords = (items) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);

/** The agent's conversations, most recently active first, a page at a time. */
function conversationList(agentId, name) {
  const list = h("div", { class: "conversation-list" }, loading());
  const line = (conversation) => h("li", {},
    h("a", { href: `#/connections/conversation/${segment(conversation.id)}` },
      "With ", listInWords(conversation.participants.filter((id) => id !== agentId).map(nameText)) || "itself"),
    h("span", { class: "muted" }, ` · ${plural(conversation.message_count, "message")}, last `, time(conversation.last_activity_at),
      conversation.canceled_at ? " · canceled" : null));
  const items = h("ul", { class: "conversations" });
  const pages = pager({
    fetchPage: async (parameters) => {
      const page = await api("GET", `/api/agent-conversations${query({ agent: agentId, ...parameters })}`);
      return { items: page.conversations, next_cursor: page.next_cursor };
    },
    show: (conversations) => items.append(...conversations.map(line)),
    more: "Show earlier conversations",
    failure: "Earlier conversations could not be shown.",
  });
  pages.first().then((conversations) => {
    items.replaceChildren(...conversations.map(line));
    replace(list, conversations.length ? items : empty(`${name} has taken part in no conversation yet.`));
  }, (error) => {
    if (error instanceof SessionOver) return;
    replace(list, refusalBox(error, `The conversations of ${name} could not be shown.`));
  });
  return [list, pages.element];
}

/** A conversation: who takes part, every message in order with its state, and Cancel for a participant. */
async function renderConversation(view, conversationId) {
  await watchedAgents();
  const content = h("div");
  const status = statusArea();

  function show(conversation) {
    for (const message of conversation.messages) rememberRemote(message.remote);
    const takesPart = conversation.participants.includes(me.id);
    const cancel = takesPart && !conversation.canceled_at ? h("button", { type: "button", class: "secondary danger", text: "Cancel the conversation" }) : null;
    cancel?.addEventListener("click", () => askOnce(status, {
      from: cancel,
      label: "Cancel the conversation?",
      question: "Cancel this conversation? Every message in it that is not finished is canceled (an agent working on one is told its lease is stale), and nothing more can be sent in it.",
      yes: "Cancel it for good",
      keep: "Keep it going",
      act: async () => {
        const canceled = await api("POST", `/api/agent-conversations/${segment(conversation.id)}/cancel`);
        show(canceled);
        return "Canceled the conversation: what was not finished in it is canceled.";
      },
      failure: "The conversation was not canceled.",
    }));
    replace(content,
      panel("Conversation",
        facts([
          ["Between", conversation.participants.map((id, index) => [index ? (index === conversation.participants.length - 1 ? " and " : ", ") : null, named(id)])],
          ["Messages", String(conversation.messages.length)],
          ["Canceled", conversation.canceled_at ? time(conversation.canceled_at) : null],
        ]),
        cancel ? h("div", { class: "button-row" }, cancel) : null,
        h("details", { class: "ids" }, h("summary", { text: "Id" }), code(conversation.id))),
      panel("Messages, in order",
        conversation.messages.length
          ? h("ol", { class: "message-list in-order" }, conversation.messages.map((message) => h("li", {}, messageCard(message, { inConversation: true }))))
          : empty("No messages.")));
  }

  const conversation = await api("GET", `/api/agent-conversations/${segment(conversationId)}`);
  view.append(breadcrumbs(["Connections", "#/connections"], ["A conversation", null]), status, content);
  show(conversation);
}

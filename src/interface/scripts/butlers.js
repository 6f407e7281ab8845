// Butlers (issue 15, decision 0023; administrators): a mailbox's rules over its
// inbound mail. Each has a sponsor whose authority its effects run under and
// versions: creating one or editing its rules writes a draft, and nothing acts
// until a version is published, which pins what the sponsor holds then. A
// version can be tried on a past message first: the dry run shows, step by
// step, what it would do, and changes nothing.
//
// The keys of CONDITIONS and EFFECTS are the contract's ButlerCondition `on`
// and ButlerEffect `do`; a browser test holds them to contract/openapi.json.
// Statuses and sender checks are worded by mail-words.js, relations by the
// node's vocabulary, and people and agents by name.

import { append, breadcrumbs, facts, h, hidden, inOrder, labelled, momentText, replace, row, table, time } from "./dom.js";
import { api, query, segment, SessionOver } from "./api.js";
import { actionForm, askOnce, codesToggle, empty, info, loading, panel, perform, refusalBox, statusArea, success } from "./shared.js";
import { directory, named } from "./names.js";
import { pager } from "./pager.js";
import { counted, SENDER_CHECKS, THREAD_STATUSES } from "./mail-words.js";
import { workers } from "./conversation.js";
import { mailboxApi, subjectOf } from "./mail-shared.js";
import { loadVocabulary, relationTerm, relationText } from "./vocabulary.js";

const words = (table) => () => Object.entries(table).map(([key, entry]) => [key, entry.words]);

/**
 * What a condition looks at (`on`) and an effect does (`do`): their words, the
 * field that carries the value, the value's label, and its choices (none: text
 * to look for). `alone`: the chosen value's words say the whole condition.
 */
const CONDITIONS = {
  from: { words: "The sender", field: "contains", label: "Contains" },
  recipients: { words: "A recipient (To or Cc)", field: "contains", label: "Contains" },
  subject: { words: "The subject", field: "contains", label: "Contains" },
  sender_authentication: { words: "How the sender was checked", field: "is", label: "Is", alone: true, choices: words(SENDER_CHECKS) },
  attachments: { words: "Attachments", field: "is", label: "Are", alone: true, choices: () => [[true, "Has attachments"], [false, "Has no attachments"]] },
};
const EFFECTS = {
  set_status: { words: "Set the status", field: "status", label: "To", choices: words(THREAD_STATUSES) },
  assign: { words: "Assign the conversation", field: "assignee", label: "To", choices: (lists) => lists.assignees.map((person) => [person.id, person.name]), none: "Nobody works this mailbox" },
  draft_reply: { words: "Draft a reply for approval", field: "text", label: "Text ({sender} and {subject} are filled in)", max: 10000, lines: 4 },
  notify_webhook: { words: "Post it to a webhook", field: "url", label: "Address (https)", max: 500 },
  forward: { words: "File a copy", field: "mailbox", label: "In mailbox", choices: (lists) => lists.mailboxes.map((mailbox) => [mailbox.id, mailbox.address]), none: "There is no other mailbox" },
  label: { words: "Label the conversation", field: "label", label: "With", max: 40 },
};

/** A condition or effect in words: `kinds` is CONDITIONS or EFFECTS, `tag` its tag (`on`, `do`). */
function ruleWords(kinds, tag, rule, lists) {
  const kind = kinds[rule[tag]];
  if (!kind) return rule[tag];
  const value = rule[kind.field];
  const chosen = kind.choices?.(lists).find(([key]) => key === value)?.[1] ?? (kind.choices ? directory.nameOf(value) ?? String(value) : `“${value}”`);
  return kind.alone ? chosen : `${kind.words} ${kind.label.toLowerCase()} ${chosen}`;
}

/**
 * Rows of conditions or effects to add to and take away from, each a group
 * with a choice of kind and that kind's own value. Answers the element and
 * `read()`, the rows as the API takes them.
 */
function ruleRows(noun, kinds, tag, initial, lists) {
  const rows = [];
  const list = h("div", { class: "rule-rows" });
  const add = h("button", { type: "button", class: "secondary", text: `Add ${noun === "effect" ? "an" : "a"} ${noun}` });
  const renumber = () => rows.forEach((entry, index) => {
    entry.legend.textContent = `${noun[0].toUpperCase()}${noun.slice(1)} ${index + 1}`;
    replace(entry.remove, "Remove", hidden(` ${noun} ${index + 1}`));
  });
  function addRow(rule = {}) {
    const kind = h("select", {}, Object.entries(kinds).map(([key, entry]) => h("option", { value: key, text: entry.words })));
    kind.value = rule[tag] ?? Object.keys(kinds)[0];
    const slot = h("div", { class: "field" });
    const entry = { legend: h("legend"), remove: h("button", { type: "button", class: "secondary" }) };
    let control;
    let choices = null;
    function showKind(value) {
      const chosen = kinds[kind.value];
      choices = chosen.choices?.(lists) ?? null;
      if (choices && value !== undefined && !choices.some(([key]) => key === value)) choices.unshift([value, directory.nameOf(value) ?? String(value)]);
      control = choices
        ? h("select", { required: true }, choices.map(([, text], index) => h("option", { value: index, text })))
        : chosen.lines
          ? h("textarea", { required: true, maxlength: chosen.max, rows: chosen.lines })
          : h("input", { type: "text", required: true, maxlength: chosen.max ?? 200, autocomplete: "off", spellcheck: "false", value: value ?? "" });
      if (chosen.lines) control.value = value ?? "";
      if (choices) control.value = String(Math.max(0, choices.findIndex(([key]) => key === value)));
      if (choices && !choices.length) control.append(h("option", { value: "", text: chosen.none }));
      replace(slot, [...labelled(chosen.label, control).children]);
    }
    showKind(rule[kinds[kind.value]?.field]);
    kind.addEventListener("change", () => showKind());
    entry.read = () => ({ [tag]: kind.value, [kinds[kind.value].field]: choices ? choices[Number(control.value)]?.[0] ?? "" : control.value });
    const group = h("fieldset", { class: "rule-row" }, entry.legend,
      h("div", { class: "fields" }, labelled(noun === "effect" ? "Does" : "Looks at", kind), slot, h("div", { class: "field actions" }, entry.remove)));
    entry.remove.addEventListener("click", () => {
      rows.splice(rows.indexOf(entry), 1);
      group.remove();
      renumber();
      add.focus();
    });
    rows.push(entry);
    list.append(group);
    renumber();
    return kind;
  }
  for (const rule of initial) addRow(rule);
  add.addEventListener("click", () => addRow().focus());
  return { element: h("fieldset", {}, h("legend", { text: `${noun[0].toUpperCase()}${noun.slice(1)}s` }), list, add), read: () => rows.map((entry) => entry.read()) };
}

/** A form for a butler's name and rules; `sponsors` adds the choice of sponsor (a new butler). */
function butlerForm({ name = "", rules, lists, sponsors, submit, failure, onSubmit }) {
  const nameField = h("input", { type: "text", required: true, maxlength: 100, autocomplete: "off", value: name });
  const sponsor = sponsors ? h("select", { required: true }, h("option", { value: "", text: "Choose a person…" }),
    sponsors.map((person) => h("option", { value: person.id, disabled: Boolean(person.disabled_at), text: `${person.name} <${person.email}>` }))) : null;
  const conditions = ruleRows("condition", CONDITIONS, "on", rules.conditions, lists);
  const effects = ruleRows("effect", EFFECTS, "do", rules.effects, lists);
  const form = actionForm({
    className: "mint-form butler-form",
    fields: [
      labelled("Name", nameField),
      sponsor ? labelled("Sponsor", sponsor, "Its effects run with this person's authority on the mailbox, pinned when a version is published.") : null,
      h("p", { class: "hint", text: "A delivery must pass every condition (none: every delivery); then the effects run, in order, on the conversation it joins." }),
      conditions.element,
      effects.element,
    ],
    submit,
    failureTitle: failure,
    onSubmit: () => onSubmit({ name: nameField.value, sponsor: sponsor?.value, rules: { conditions: conditions.read(), effects: effects.read() } }),
  });
  return form;
}

/** Where a butler stands, as a badge. */
function butlerState(butler) {
  if (butler.active) return h("span", { class: "badge on", text: `Acting: version ${butler.published_version}` });
  return h("span", { class: "badge quiet", text: butler.published_version ? "Deactivated" : "Not published" });
}

/** Where a version stands, as a badge. */
function versionState(butler, version) {
  if (!version.published_at) return h("span", { class: "badge wait", text: "Draft" });
  if (version.version !== butler.published_version) return h("span", { class: "badge quiet", text: "Published before" });
  return butler.active ? h("span", { class: "badge on", text: "Published, acting" }) : h("span", { class: "badge quiet", text: "Published, deactivated" });
}

const butlersHref = (...parts) => `#/butlers${parts.map((part) => `/${segment(part)}`).join("")}`;

/** What the last view said that the next one shows (a butler created). */
let saidBefore = null;

/** `#/butlers/<mailbox>/<butler>`: a mailbox's butlers, or one of them. */
export async function renderButlers(view, [mailboxId, butlerId]) {
  const [mailboxes, people, vocabulary] = await Promise.all([directory.loadAllMailboxes(), directory.loadPeople(), loadVocabulary(), directory.loadAgents()]);
  const mailbox = mailboxes.find((entry) => entry.id === mailboxId);
  if (!mailbox) {
    if (mailboxes.length) location.replace(butlersHref(mailboxes[0].id));
    else view.append(empty("There are no mailboxes yet: create one under Mailboxes."));
    return;
  }
  const lists = { assignees: await workers(mailbox), mailboxes: mailboxes.filter((entry) => entry.id !== mailbox.id) };
  // The switcher only where there is another mailbox to switch to.
  append(view, [codesToggle(view), mailboxes.length > 1
    ? h("nav", { class: "subnav mailbox-switcher", "aria-label": "Mailboxes" }, h("ul", {}, mailboxes.map((entry) => h("li", {},
        h("a", { href: butlersHref(entry.id), "aria-current": entry.id === mailbox.id ? "page" : null, title: entry.display_name, text: entry.address })))))
    : null]);
  const context = { view, mailbox, people, vocabulary, lists };
  return butlerId ? butlerView(context, await api("GET", mailboxApi(mailbox.id, "butlers", butlerId))) : listView(context);
}

async function listView({ view, mailbox, people, lists }) {
  document.title = `${mailbox.address} · Butlers · Mailroom`;
  const { butlers } = await api("GET", mailboxApi(mailbox.id, "butlers"));
  const create = butlerForm({
    rules: { conditions: [{}], effects: [{}] },
    lists,
    sponsors: people,
    submit: "Create butler",
    failure: "The butler was not created.",
    async onSubmit(body) {
      const butler = await api("POST", mailboxApi(mailbox.id, "butlers"), body);
      saidBefore = `Created ${butler.name}. Version 1 is a draft: try it on a past message, then publish it.`;
      location.hash = butlersHref(mailbox.id, butler.id);
    },
  });
  view.append(
    panel(`Butlers on ${mailbox.address}`, butlers.length
      ? table(`Butlers on ${mailbox.address}`, ["Butler", "Sponsor", "Published", "State"], butlers.map((butler) => row(
          h("a", { href: butlersHref(mailbox.id, butler.id), text: butler.name }),
          named(butler.sponsor, butler.sponsor_name),
          butler.published_version ? `Version ${butler.published_version}` : h("span", { class: "muted", text: "None" }),
          butlerState(butler))), { stack: true })
      : empty("No butlers on this mailbox yet.")),
    panel("Create a butler",
      h("p", { class: "muted", text: "A butler judges every message the mailbox receives and acts on the conversation it joins, as its sponsor could. Its first version is a draft: nothing acts until you publish one." }),
      create));
}

function butlerView({ view, mailbox, vocabulary, lists }, butler) {
  const said = statusArea();
  if (saidBefore) said.replaceChildren(success(saidBefore));
  saidBefore = null;
  const head = h("div");
  const edit = h("div");
  const version = h("select");
  view.append(breadcrumbs(["Butlers", butlersHref(mailbox.id)], [butler.name]), said, head, simulation(), edit);

  /** Shows the butler as the node answered it, and says `message`. */
  function draw(next, message) {
    butler = next;
    document.title = `${inOrder(butler.name)} · Butlers · Mailroom`;
    if (message) said.replaceChildren(success(message));
    const toggle = butler.published_version
      ? h("button", { type: "button", class: "secondary" }, butler.active ? "Deactivate" : "Activate", hidden(` ${butler.name}`))
      : null;
    const toggled = statusArea();
    toggle?.addEventListener("click", () => perform(toggled, [toggle], async () => {
      const active = !butler.active;
      draw(await api("PATCH", mailboxApi(mailbox.id, "butlers", butler.id), { active }),
        active ? `${butler.name} acts on new deliveries again.` : `${butler.name} is deactivated: it acts on no delivery until activated.`);
    }, `${butler.name} was not changed.`));
    replace(version, butler.versions.map((entry) => h("option", { value: entry.version, text: `Version ${entry.version}${entry.published_at ? "" : " (draft)"}` })));
    const newest = butler.versions[0];
    replace(head,
      panel(butler.name,
        facts([["Mailbox", mailbox.address], ["Sponsor", named(butler.sponsor, butler.sponsor_name)], ["State", butlerState(butler)],
          ...(butler.webhook_secret ? [["Webhook secret", h("code", { text: butler.webhook_secret })]] : [])]),
        toggle ? h("div", { class: "button-row" }, toggle) : null, toggled),
      panel("Versions, newest first", butler.versions.map(versionCard)));
    replace(edit, panel(`Edit: write version ${newest.version + 1}`,
      h("p", { class: "muted", text: "Saving writes a new draft version; the published one acts on, unchanged, until you publish another." }),
      butlerForm({
        name: butler.name,
        rules: newest.rules,
        lists,
        submit: "Save as a draft",
        failure: "The butler was not changed.",
        async onSubmit({ name, rules }) {
          const changed = await api("PATCH", mailboxApi(mailbox.id, "butlers", butler.id), { name, rules });
          draw(changed, `Saved version ${changed.versions[0].version}, a draft.`);
          said.scrollIntoView({ block: "nearest" });
        },
      })));
  }

  function versionCard(entry) {
    const status = statusArea();
    const publish = entry.published_at ? null : h("button", { type: "button" }, `Publish version ${entry.version}`, hidden(` of ${butler.name}`));
    // Publishing acts on mail at once and pins the sponsor's authority: asked once.
    publish?.addEventListener("click", () => askOnce(status, {
      from: publish,
      label: `Publish version ${entry.version}?`,
      question: `Publish version ${entry.version}? From the next message delivered to ${mailbox.address}, it acts on every delivery its conditions match, with what ${butler.sponsor_name ?? "its sponsor"} holds there now.`,
      yes: ["Publish it", hidden(` (version ${entry.version} of ${butler.name})`)],
      danger: false,
      act: async () => {
        draw(await api("POST", mailboxApi(mailbox.id, "butlers", butler.id, "publish"), { version: entry.version }),
          `Published version ${entry.version}: it acts on every new delivery to ${mailbox.address}.`);
      },
      failure: `Version ${entry.version} was not published.`,
    }));
    const { conditions, effects } = entry.rules;
    return h("article", { class: "card", "aria-label": `Version ${entry.version}` },
      h("h3", { class: "card-header" }, `Version ${entry.version} `, versionState(butler, entry)),
      facts([
        ["Written", [time(entry.created_at), " by ", named(entry.created_by)]],
        ["Published", entry.published_at ? time(entry.published_at) : null],
        ["When", conditions.length ? h("ul", {}, conditions.map((condition) => h("li", { text: ruleWords(CONDITIONS, "on", condition, lists) }))) : "Every delivery"],
        ["It does", h("ol", {}, effects.map((effect) => h("li", { text: ruleWords(EFFECTS, "do", effect, lists) })))],
        ["Pinned", entry.pinned_relations
          ? h("ul", { class: "relations" }, entry.pinned_relations.map((relation) => h("li", {}, relationTerm(vocabulary, relation))))
          : null],
      ]),
      publish ? h("div", { class: "button-row" }, publish) : null, status);
  }

  /** The node's words about an effect, with names for ids and the vocabulary's words for relations. */
  const readable = (text) => vocabulary.relations.reduce((words, relation) => words.replaceAll(relation.name, `“${relationText(vocabulary, relation.name)}”`),
    text.replace(/\b(?:usr|agt)_\w+/g, (id) => directory.nameOf(id) ?? id));

  /** What a condition found in the message, in words. */
  const found = ({ condition, found: value }) => (condition.on === "sender_authentication" ? SENDER_CHECKS[value]?.words ?? value
    : condition.on === "attachments" ? counted(Number(value), "attachment") : value ? `“${value}”` : "nothing");

  /** One step of a dry run: whether it holds or runs, what it is, and what was found or would happen. */
  const step = (yes, [said, notSaid], text, more) => h("li", {},
    h("span", { class: yes ? "badge on" : "badge quiet", text: yes ? said : notSaid }), " ", text, h("p", { class: "muted", text: more }));

  function simulated(run, subject) {
    return h("section", { class: "card", "aria-label": "Dry run" },
      h("h3", { text: `Version ${run.version} on “${subject}”` }),
      facts([["Overall", run.matched ? "Every condition holds: its effects would run." : "A condition does not hold: it would do nothing."]]),
      h("h4", { text: "Conditions" }),
      run.conditions.length
        ? h("ol", { class: "steps" }, run.conditions.map((judged) => step(judged.matched, ["Holds", "Does not hold"], ruleWords(CONDITIONS, "on", judged.condition, lists), `Found: ${found(judged)}`)))
        : h("p", { text: "None: every delivery passes." }),
      h("h4", { text: "Effects" }),
      h("ol", { class: "steps" }, run.effects.map((judged) => step(judged.would_run, ["Would run", "Would not run"], ruleWords(EFFECTS, "do", judged.effect, lists),
        `${readable(judged.outcome).replace(/^./, (first) => first.toUpperCase())}.`))),
      info("Nothing was changed: a dry run writes nothing."));
  }

  /** The dry run: a past message and a version, and what that version would do to it, step by step. */
  function simulation() {
    const message = h("select", { required: true });
    const result = statusArea();
    const subjects = new Map();
    const offer = (items) => message.append(...items.map((item) => {
      subjects.set(item.id, subjectOf(item.subject));
      return h("option", { value: item.id, text: `${subjectOf(item.subject)} · ${item.from?.name || item.from?.address || "no sender"} · ${momentText(item.received_at)}` });
    }));
    const pages = pager({
      fetchPage: async (asked) => {
        const page = await api("GET", `${mailboxApi(mailbox.id, "messages")}${query(asked)}`);
        return { items: page.messages, next_cursor: page.next_cursor };
      },
      show: offer,
      more: "Offer older messages",
      failure: "Older messages could not be listed.",
    });
    const form = actionForm({
      fields: [labelled("Past message", message), labelled("Version", version)],
      submit: "Try it",
      failureTitle: "The dry run was not run.",
      async onSubmit() {
        const run = await api("POST", mailboxApi(mailbox.id, "butlers", butler.id, "simulate"), { receipt_id: message.value, version: Number(version.value) });
        replace(result, simulated(run, subjects.get(run.receipt_id)));
      },
    });
    const waiting = loading();
    pages.first().then((items) => {
      if (items.length) offer(items);
      waiting.replaceWith(items.length ? form : empty("No mail has arrived yet: a dry run needs a message the mailbox received."));
    }, (error) => {
      if (!(error instanceof SessionOver)) waiting.replaceWith(refusalBox(error, `${mailbox.address}'s messages could not be listed to try it on.`));
    });
    return panel("Try it on a past message",
      h("p", { class: "muted", text: "A dry run walks a version over a message this mailbox already received, with its sponsor's authority as it stands. It changes nothing: no conversation, no audit entry." }),
      waiting, pages.element, result);
  }

  draw(butler);
}

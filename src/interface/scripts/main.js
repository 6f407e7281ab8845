// Mailroom's browser interface: one page, plain JavaScript, no build step.
//
// Everything the page shows comes from the node's own API, with the session in
// `__Host-` cookies this script never sees. Every string the API returns is
// untrusted text, so the DOM is built with createElement and textContent, never
// with innerHTML. The page runs under a Content-Security-Policy that allows its
// style sheet, its import map and its one inline entry by hash, and the modules
// that entry starts through 'strict-dynamic', each pinned by its integrity in the
// import map (decision 0011); nothing else: no inline handlers, no style
// attributes, no eval, nothing fetched from anywhere but the node.
//
// The script is ES modules in src/interface/scripts/, each listed and served by
// src/interface.rs. This one, the entry, imports the pieces the sections share:
//   dom.js           DOM helpers: h(), labelled(), tables, formatting
//   session.js       who is signed in, the signed-in hint, the shell's steps
//   api.js           api(), ApiError, renewing the session
//   shared.js        refusal boxes, perform(), actionForm(), panels
//   names.js         the directory of names: who(), subject()
//   vocabulary.js    the relations and capabilities, loaded from the node once
//   pager.js         lists a page at a time, PER_PAGE
//
// and reads top to bottom:
//   1. Sections      one render function per section, listed in SECTIONS
//   2. The shell     sign-in, header, navigation, router, start-up
//
// A new section (reminders, connections) is a render function plus one
// entry in SECTIONS; its route is `#/<route>/<params…>`. A section with views of
// its own (Mail: a mailbox, a message, a search, outbound mail) reads them from
// the params and hands each to a view function of its own.

import { append, breadcrumbs, byteSize, code, facts, h, hidden, labelled, linkButton, replace, row, table, time, uniqueId } from "./dom.js";
import { connectShell, hint, me, setMe } from "./session.js";
import { api, ApiError, query, refusalOf, segment, send, SessionOver } from "./api.js";
import { actionForm, downloadLink, empty, info, loading, panel, perform, refusalBox, rowStatus, statusArea, success } from "./shared.js";
import { directory, subject, who } from "./names.js";
import { loadVocabulary } from "./vocabulary.js";
import { pager } from "./pager.js";

// ------------------------------------------------------------ 1. Sections

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

async function renderAccount(view) {
  const facts = h("dl", { class: "facts" },
    h("dt", { text: "Name" }), h("dd", { text: me.name }),
    h("dt", { text: "Email" }), h("dd", { text: me.email ?? "" }),
    h("dt", { text: "ID" }), h("dd", {}, code(me.id)),
    h("dt", { text: "Administrator" }), h("dd", { text: me.is_admin ? "Yes (org.admin)" : "No" }),
    h("dt", { text: "Teams" }), h("dd", {}, me.teams.length ? me.teams.map((team, index) => [index ? ", " : null, team.name]) : h("span", { class: "muted", text: "None" })));

  const current = h("input", { type: "password", name: "current_password", autocomplete: "current-password", required: true });
  const replacement = h("input", { type: "password", name: "new_password", autocomplete: "new-password", required: true });
  const form = actionForm({
    fields: [
      // Lets a password manager know whose password this is.
      h("input", { type: "text", name: "username", autocomplete: "username", value: me.email ?? me.id, readonly: true, hidden: true }),
      labelled("Current password", current),
      labelled("New password", replacement, "At least 12 characters. Your other sessions are signed out."),
    ],
    submit: "Change password",
    failureTitle: "The password was not changed.",
    async onSubmit(form) {
      const answer = await api("POST", "/api/me/password", { current_password: current.value, new_password: replacement.value });
      form.reset();
      const others = answer.other_sessions_revoked;
      return `Password changed. ${others === 1 ? "1 other session was" : `${others} other sessions were`} signed out.`;
    },
  });
  view.append(panel("Who you are", facts), panel("Change my password", form));
}

async function renderPeople(view) {
  const list = h("div", {}, loading());

  const name = h("input", { type: "text", name: "name", autocomplete: "off", required: true });
  const email = h("input", { type: "email", name: "email", autocomplete: "off", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true });
  const create = actionForm({
    fields: [
      labelled("Name", name),
      labelled("Email", email),
      labelled("First password", password, "At least 12 characters. They can change it under Account."),
    ],
    submit: "Create person",
    failureTitle: "The person was not created.",
    async onSubmit(form) {
      const person = await api("POST", "/api/people", { name: name.value, email: email.value, password: password.value });
      form.reset();
      await refresh();
      name.focus();
      return [`Created ${person.name} (${person.email}), `, code(person.id), ". They hold nothing until you grant a relation."];
    },
  });

  async function setDisabled(person, disable, button, tableRow) {
    const verb = disable ? "disable" : "enable";
    const ok = await perform(rowStatus(tableRow), [button], () => api("POST", `/api/people/${segment(person.id)}/${verb}`), `${person.name} was not ${verb}d.`);
    if (ok) await refresh();
  }

  function personRow(person) {
    const self = person.id === me.id;
    const tableRow = row(
      person.name,
      person.email,
      code(person.id),
      time(person.created_at),
      person.disabled_at
        ? [h("span", { class: "badge off", text: "Disabled" }), h("span", { class: "since" }, "since ", time(person.disabled_at))]
        : h("span", { class: "badge on", text: "Active" }),
      null,
    );
    const cell = tableRow.cells[5];
    if (self) {
      cell.append(h("span", { class: "muted", text: "You" }));
    } else {
      const disable = !person.disabled_at;
      const button = h("button", { type: "button", class: disable ? "secondary danger" : "secondary" }, disable ? "Disable" : "Enable", hidden(` ${person.name}`));
      button.addEventListener("click", () => setDisabled(person, disable, button, tableRow));
      cell.append(button);
    }
    return tableRow;
  }

  async function refresh() {
    const people = await directory.loadPeople();
    list.replaceChildren(people.length
      ? table("People on this node", ["Name", "Email", "ID", "Created", "Status", "Actions"], people.map(personRow))
      : empty("Nobody yet."));
  }

  view.append(panel("Create a person", create), panel("Everyone on the node", list));
  await refresh();
}

async function renderTeams(view) {
  const list = h("div", {}, loading());
  let people = [];

  const teamName = h("input", { type: "text", name: "name", autocomplete: "off", required: true, maxlength: 100 });
  const create = actionForm({
    fields: [labelled("Team name", teamName, "Unique on the node. A relation granted to the team is held by every member.")],
    submit: "Create team",
    failureTitle: "The team was not created.",
    async onSubmit(form) {
      const team = await api("POST", "/api/teams", { name: teamName.value });
      form.reset();
      await refresh();
      return [`Created ${team.name}, `, code(team.id), "."];
    },
  });

  function teamCard(team) {
    const members = team.members.map((id) => directory.people.get(id) ?? { id, name: "", email: "" });
    const rows = members.map((person) => {
      const button = h("button", { type: "button", class: "secondary" }, "Remove", hidden(` ${person.name || person.id} from ${team.name}`));
      const tableRow = row(person.name, person.email, code(person.id), button);
      button.addEventListener("click", async () => {
        const ok = await perform(rowStatus(tableRow), [button],
          () => api("DELETE", `/api/teams/${segment(team.id)}/members/${segment(person.id)}`),
          `${person.name || person.id} was not removed from ${team.name}.`);
        if (ok) await refresh();
      });
      return tableRow;
    });

    const candidates = people.filter((person) => !team.members.includes(person.id));
    const choice = h("select", { name: "person", required: true },
      h("option", { value: "", text: "Choose a person…" }),
      candidates.map((person) => h("option", { value: person.id, text: `${person.name} <${person.email}>${person.disabled_at ? " (disabled)" : ""}` })));
    const add = candidates.length
      ? actionForm({
          className: "action-form inline",
          fields: [labelled(`Add a person to ${team.name}`, choice)],
          submit: "Add to team",
          failureTitle: `The person was not added to ${team.name}.`,
          async onSubmit() {
            await api("PUT", `/api/teams/${segment(team.id)}/members/${segment(choice.value)}`);
            await refresh();
          },
        })
      : h("p", { class: "muted", text: "Everyone on the node is a member." });

    const headingId = uniqueId("team");
    return h("article", { class: "card", "aria-labelledby": headingId },
      h("header", { class: "card-header" },
        h("h3", { id: headingId, text: team.name }),
        h("p", { class: "muted" }, code(team.id), " · created ", time(team.created_at), " · grant to its members as ", code(`${team.id}#member`))),
      rows.length ? table(`Members of ${team.name}`, ["Name", "Email", "ID", "Actions"], rows) : empty("No members yet."),
      add);
  }

  async function refresh() {
    const [teams, everyone] = await Promise.all([directory.loadTeams(), directory.loadPeople()]);
    people = everyone;
    list.replaceChildren(...(teams.length ? teams.map(teamCard) : [empty("No teams yet.")]));
  }

  view.append(panel("Create a team", create), panel("All teams", list));
  await refresh();
}

async function renderRelations(view) {
  const list = h("div", {}, loading());
  // Agents' names, for the tuples they hold; the relations are readable without them.
  const [people, teams, mailboxes, { relations: vocabulary }] = await Promise.all([
    directory.loadPeople(), directory.loadTeams(), directory.loadAllMailboxes(), loadVocabulary(),
    directory.loadAgents().catch((error) => {
      if (error instanceof SessionOver) throw error;
    }),
  ]);

  const subjectChoice = h("select", { name: "subject", required: true },
    h("option", { value: "", text: "Choose who holds it…" }),
    h("optgroup", { label: "People" }, people.map((person) => h("option", { value: person.id, text: `${person.name} <${person.email}>${person.disabled_at ? " (disabled)" : ""}` }))),
    teams.length ? h("optgroup", { label: "Every member of a team" }, teams.map((team) => h("option", { value: `${team.id}#member`, text: `Members of ${team.name}` }))) : null);
  const relationChoice = h("select", { name: "relation", required: true },
    h("optgroup", { label: "On the organisation" }, vocabulary.filter((r) => r.on === "organization").map((r) => h("option", { value: r.name, text: r.name }))),
    h("optgroup", { label: "On a mailbox" }, vocabulary.filter((r) => r.on === "mailbox").map((r) => h("option", { value: r.name, text: r.name }))));
  const objectChoice = h("select", { name: "object", required: true });
  const relationField = labelled("Relation", relationChoice, " ");
  const relationHint = relationField.querySelector(".hint");

  // The objects a relation can be held on: the organisation, or a mailbox (by address).
  function fitObjects() {
    const relation = vocabulary.find((r) => r.name === relationChoice.value);
    relationHint.textContent = relation?.description ?? "";
    const chosen = objectChoice.value;
    if (relation?.on === "organization") {
      objectChoice.replaceChildren(h("option", { value: "org", text: "org (the organisation)" }));
    } else if (mailboxes.length) {
      replace(objectChoice,
        h("option", { value: "", text: "Choose a mailbox…" }),
        mailboxes.map((mailbox) => h("option", { value: mailbox.id, text: `${mailbox.address} (${mailbox.display_name})` })));
      if (mailboxes.some((mailbox) => mailbox.id === chosen)) objectChoice.value = chosen;
    } else {
      objectChoice.replaceChildren(h("option", { value: "", text: "No mailboxes yet: create one under Mailboxes" }));
    }
  }
  relationChoice.addEventListener("change", fitObjects);
  fitObjects();

  const grant = actionForm({
    fields: [labelled("Subject", subjectChoice, "A person, or every member of a team."), relationField, labelled("Object", objectChoice)],
    submit: "Grant",
    failureTitle: "The relation was not granted.",
    async onSubmit() {
      const tuple = await api("POST", "/api/relations", { subject: subjectChoice.value, relation: relationChoice.value, object: objectChoice.value });
      await refresh();
      const mailbox = directory.mailboxes.get(tuple.object);
      return ["Granted ", h("strong", { text: tuple.relation }), " on ", mailbox ? h("strong", { text: mailbox.address }) : code(tuple.object), " to ", subject(tuple.subject), "."];
    },
  });

  function relationRow(tuple) {
    const button = h("button", { type: "button", class: "secondary danger" }, "Revoke",
      hidden(` ${tuple.relation} on ${directory.mailboxes.get(tuple.object)?.address ?? tuple.object} from ${directory.nameOf(tuple.subject.replace(/#member$/, "")) ?? tuple.subject}`));
    const tableRow = row(subject(tuple.subject), h("strong", { text: tuple.relation }), who(tuple.object), time(tuple.granted_at), who(tuple.granted_by), button);
    button.addEventListener("click", async () => {
      const change = { subject: tuple.subject, relation: tuple.relation, object: tuple.object };
      const ok = await perform(rowStatus(tableRow), [button], () => api("POST", "/api/relations/revoke", change), `${tuple.relation} was not revoked.`);
      if (!ok) return;
      // Revoking what the signed-in person holds changes what they may see.
      const mine = tuple.subject === me.id || me.teams.some((team) => tuple.subject === `${team.id}#member`);
      if (mine) await start();
      else await refresh();
    });
    return tableRow;
  }

  async function refresh() {
    const { relations } = await api("GET", "/api/relations");
    list.replaceChildren(relations.length
      ? table("Relationship tuples", ["Subject", "Relation", "Object", "Granted", "Granted by", "Actions"], relations.map(relationRow))
      : empty("No relations are held."));
  }

  view.append(panel("Grant a relation", grant), panel("Who holds what", list));
  await refresh();
}

async function renderAudit(view) {
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

// ---- Mail (SPEC §8): mailboxes, messages, drafts, sends and approvals.
//
// A message's subject, names and text are written by whoever sent it. They are
// only ever set as textContent, and a body is shown as plain text in a <pre>,
// never rendered as HTML.

/**
 * What the signed-in person may do in a mailbox: the tools the node lists on
 * it, which it derives from the relations held there and each route's declared
 * authority. This only chooses which controls to show; the node decides each call.
 */
function access(mailbox) {
  const tools = new Set(mailbox?.tools ?? []);
  return {
    metadata: tools.has("list_messages"),
    content: tools.has("get_message_body"),
    original: tools.has("get_message_original"),
    propose: tools.has("create_draft"),
    retry: tools.has("retry_send"),
    decide: tools.has("approve_send"),
  };
}

/**
 * The mailboxes the signed-in person can read (`readable`) and send from
 * (`sendable`), and both by id; each carries every relation held on it.
 */
async function myMailboxes() {
  const [readable, sendable] = await Promise.all([api("GET", "/api/mailboxes/readable"), api("GET", "/api/mailboxes")]);
  const byId = new Map([...readable.mailboxes, ...sendable.mailboxes].map((mailbox) => [mailbox.id, mailbox]));
  directory.rememberMailboxes(byId.values());
  return { readable: readable.mailboxes, sendable: sendable.mailboxes, byId };
}

const mailHref = (...parts) => `#/mail${parts.map((part) => `/${segment(part)}`).join("")}`;
const mailboxApi = (mailboxId, ...parts) => `/api/mailboxes/${segment(mailboxId)}${parts.map((part) => `/${segment(part)}`).join("")}`;

/** The relations held on a mailbox. */
function heldList(mailbox) {
  return mailbox.held.length
    ? h("ul", { class: "held" }, mailbox.held.map((relation) => h("li", {}, code(relation))))
    : h("span", { class: "muted", text: "Nothing" });
}

/** A mailbox by its address where the page knows it (or `knownAddress` says it), else by id. */
function mailboxName(mailboxId, knownAddress) {
  const mailbox = directory.mailboxes.get(mailboxId);
  if (!mailbox) return knownAddress ? h("span", { class: "who" }, h("span", { class: "who-name", text: knownAddress }), " ", code(mailboxId)) : code(mailboxId);
  return h("span", { class: "who" }, h("span", { class: "who-name", text: mailbox.address }), " ", h("span", { class: "muted", text: `(${mailbox.display_name})` }));
}

/** An address from a header: the name it gave, with the address beside it. */
function mailAddress(address) {
  if (!address) return h("span", { class: "muted", text: "no sender" });
  if (!address.name) return h("span", { class: "address", text: address.address });
  return h("span", { class: "address" },
    h("span", { class: "address-name", text: address.name }), " ", h("span", { class: "address-email", text: `<${address.address}>` }));
}
const mailAddresses = (list) => list.map((address, index) => [index ? ", " : null, mailAddress(address)]);

const subjectOf = (subject) => (subject?.trim() ? subject : "(no subject)");
const replySubject = (subject) => (/^\s*re\s*:/i.test(subject ?? "") ? subject : `Re: ${subject ?? ""}`.trim());
/** The addresses typed into a To or Cc field; an address holds no comma, semicolon or space. */
const addressesIn = (text) => text.split(/[\s,;]+/).filter(Boolean);

/** Mail's text: plain text, wrapped, never rendered as HTML. */
const mailText = (text) => h("pre", { class: "mail-text", text });

/**
 * The columns a list of received messages can show, each a header and a cell
 * made from a message summary (or a search hit, which is one). The subject
 * links to the message in its own mailbox.
 */
const MESSAGE_COLUMNS = {
  from: ["From", (message) => mailAddress(message.from)],
  subject: ["Subject", (message) => h("a", { href: mailHref(message.mailbox_id, message.id), text: subjectOf(message.subject) })],
  mailbox: ["Mailbox", (message) => mailboxName(message.mailbox_id)],
  received: ["Received", (message) => time(message.received_at)],
  attachments: ["Attachments", (message) => (message.attachment_count ? String(message.attachment_count) : h("span", { class: "muted", text: "—" }))],
  // A body match's passage is the stranger's text, so it is text like the rest.
  found: ["Found in", (hit) => (hit.matched_in === "body"
    ? h("span", { class: "snippet" }, h("span", { class: "found-where", text: "Text: " }), hit.snippet ?? "")
    : h("span", { class: "found-where", text: "Sender, recipients or subject" }))],
};

/**
 * Received messages, newest first, a page at a time: `fetchPage(query)` asks the
 * node for one page (`limit` and `cursor` in `query`) and answers its messages
 * and `next_cursor`; `more` names the button that asks for the next. Answers the
 * element and `start()`, which loads the first page (and throws its refusal).
 */
function pagedMessages({ caption, columns, fetchPage, emptyText, more, failure }) {
  const headers = columns.map((key) => MESSAGE_COLUMNS[key][0]);
  const cells = columns.map((key) => MESSAGE_COLUMNS[key][1]);
  const messages = table(caption, headers, []);
  const body = messages.querySelector("tbody");
  const list = h("div", {}, loading());
  const show = (items) => append(body, items.map((message) => row(...cells.map((cell) => cell(message)))));
  const pages = pager({
    fetchPage: async (query) => {
      const page = await fetchPage(query);
      return { items: page.messages, next_cursor: page.next_cursor };
    },
    show,
    more,
    failure,
  });
  async function start() {
    show(await pages.first());
    list.replaceChildren(body.rows.length ? messages : empty(emptyText));
  }
  return { element: h("div", {}, list, pages.element), start };
}

/** A send's state: draft, submitted, sealed, dispatched, failed or refused. */
function stateBadge(state) {
  const tone = { dispatched: "on", failed: "off", refused: "off", draft: "quiet" }[state];
  return h("span", { class: tone ? `badge ${tone}` : "badge", text: state });
}

/** When a send last moved: dispatched, decided, submitted or edited. */
const lastChange = (send) => send.dispatched_at ?? send.decided_at ?? send.submitted_at ?? send.updated_at;

/** The message a send answers: a link to it where the person can read the mailbox. */
function repliedTo(send) {
  const id = code(`<${send.in_reply_to}>`);
  if (!send.reply_to || !access(directory.mailboxes.get(send.mailbox_id)).metadata) return id;
  return h("a", { href: mailHref(send.mailbox_id, send.reply_to) }, id);
}

/** A send's facts and its full text, whatever its state. */
function sendDetails(send) {
  return [
    facts([
      ["State", stateBadge(send.state)],
      ["From", mailboxName(send.mailbox_id, send.mailbox_address)],
      ["To", send.to.join(", ")],
      ["Cc", send.cc.length ? send.cc.join(", ") : null],
      ["Subject", send.subject],
      ["In reply to", send.in_reply_to ? repliedTo(send) : null],
      ["Written by", who(send.author, send.author_name)],
      ["Submitted", send.submitted_at ? [time(send.submitted_at), " by ", who(send.submitted_by, send.submitted_by === send.author ? send.author_name : undefined)] : null],
      [send.state === "refused" ? "Refused" : "Approved", send.decided_at ? [time(send.decided_at), " by ", who(send.decided_by, send.decided_by_name)] : null],
      ["Reason", send.refusal_reason ?? null],
      ["Dispatched", send.dispatched_at ? time(send.dispatched_at) : null],
      ["Dispatch error", send.dispatch_error ? h("span", { class: "error-text", text: send.dispatch_error }) : null],
      ["Message-ID", send.message_id ? code(`<${send.message_id}>`) : null],
      ["Manifest hash", send.manifest_hash ? code(send.manifest_hash) : null],
    ]),
    h("p", { class: "text-label", text: "Text" }),
    mailText(send.text),
  ];
}

/**
 * A send from `mailbox` as its author works on it: a form while it is new or
 * their draft (save it; then submit it for approval, or delete it), and its
 * state and details once submitted, with Cancel while it awaits a decision.
 * It renders itself again after each change. `replyTo` is the received
 * message it answers, which gives it its threading headers.
 */
function sendEditor(mailbox, { send = null, replyTo = null, to = [], subject = "" } = {}) {
  const content = h("div");
  const status = statusArea();
  const sends = mailboxApi(mailbox.id, "sends");
  const outbound = () => ["Find it under ", h("a", { href: mailHref(mailbox.id, "outbound"), text: `Outbound for ${mailbox.address}` }), "."];

  function show(current) {
    send = current;
    const editable = !send || (send.state === "draft" && send.author === me.id);
    replace(content, editable ? form() : [sendDetails(send), actions()]);
  }

  function actions() {
    if (send.state === "failed" && access(mailbox).retry) return retryAction();
    if (send.state !== "submitted" || send.submitted_by !== me.id) return null;
    const cancel = h("button", { type: "button", class: "secondary", text: "Cancel submission" });
    cancel.addEventListener("click", () => perform(status, [cancel], async () => {
      show(await api("POST", `${sends}/${segment(send.id)}/cancel`));
      return "Submission cancelled: it is your draft again, to edit, submit or delete.";
    }, "The submission was not cancelled."));
    return h("div", { class: "button-row" }, cancel);
  }

  /** Sends a failed send again, as sealed, to the recipients it has not reached. */
  function retryAction() {
    const waiting = send.to.concat(send.cc).filter((address) => !send.delivered_to.includes(address));
    const retry = h("button", { type: "button", text: "Send again" });
    retry.addEventListener("click", () => perform(status, [retry], async () => {
      show(await api("POST", `${sends}/${segment(send.id)}/retry`));
      if (send.state === "dispatched") return "Sent: every recipient has it now.";
      throw new ApiError(0, {
        code: "not_delivered",
        message: "The mail service refused it again.",
        reason: send.dispatch_error ?? "The mail binding refused it.",
        fix: "Check the addresses it was not delivered to; you can send it again once the cause is fixed.",
      });
    }, "It was not sent."));
    return [
      h("p", { class: "muted", text: `Sending again hands it over exactly as it was approved, only to ${waiting.join(", ") || "those it has not reached"}; nobody receives it twice.` }),
      h("div", { class: "button-row" }, retry),
    ];
  }

  function form() {
    const addressField = (name, list, required) => h("input", {
      type: "text", name, inputmode: "email", autocomplete: "off", spellcheck: "false", required, value: list.join(", "),
    });
    const toField = addressField("to", send?.to ?? to, true);
    const ccField = addressField("cc", send?.cc ?? [], false);
    const subjectField = h("input", { type: "text", name: "subject", autocomplete: "off", required: true, maxlength: 998, value: send?.subject ?? subject });
    const textField = h("textarea", { name: "text", rows: 12 });
    textField.value = send?.text ?? "";

    const save = h("button", { type: "submit", class: send ? "secondary" : null, text: send ? "Save changes" : "Save draft" });
    const submit = send ? h("button", { type: "button", text: "Submit for approval" }) : null;
    const remove = send ? h("button", { type: "button", class: "secondary danger", text: "Delete draft" }) : null;
    const controls = [save, submit, remove].filter(Boolean);
    const buttons = h("div", { class: "button-row" }, submit, save, remove);
    const element = h("form", { class: "send-form" },
      labelled("To", toField, "Addresses, separated by commas."),
      labelled("Cc", ccField),
      labelled("Subject", subjectField),
      labelled("Text", textField, "Plain text. Nothing is sent until it is submitted and a second person approves it."),
      buttons);

    const values = () => ({ to: addressesIn(toField.value), cc: addressesIn(ccField.value), subject: subjectField.value, text: textField.value });
    const unsaved = (next) => JSON.stringify(next) !== JSON.stringify({ to: send.to, cc: send.cc, subject: send.subject, text: send.text });

    element.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!element.reportValidity()) return;
      await perform(status, controls, async () => {
        if (!send) {
          show(await api("POST", sends, { ...values(), reply_to: replyTo?.id }));
          return ["Draft saved. Nothing is sent until you submit it and a second person approves it. ", outbound()];
        }
        show(await api("PATCH", `${sends}/${segment(send.id)}`, values()));
        return "Changes saved.";
      }, "The draft was not saved.");
    });

    // Submitting saves what the form holds first, so no edit is lost.
    submit?.addEventListener("click", async () => {
      if (!element.reportValidity()) return;
      await perform(status, controls, async () => {
        const next = values();
        if (unsaved(next)) send = await api("PATCH", `${sends}/${segment(send.id)}`, next);
        show(await api("POST", `${sends}/${segment(send.id)}/submit`));
        return [`Submitted for approval. It is sent once a second person who holds approval.decide on ${mailbox.address} approves it; until then you can cancel the submission. `, outbound()];
      }, "The draft was not submitted.");
    });

    // Deleting asks once more, in the page (no dialog): a draft cannot be brought back.
    remove?.addEventListener("click", () => {
      const really = h("button", { type: "button", class: "danger", text: "Delete for good" });
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      const question = h("div", { class: "confirm", role: "group", "aria-label": "Delete this draft?" },
        h("p", { text: "Delete this draft? It cannot be brought back." }), h("div", { class: "button-row" }, really, keep));
      buttons.replaceWith(question);
      really.focus();
      keep.addEventListener("click", () => {
        question.replaceWith(buttons);
        remove.focus();
      });
      really.addEventListener("click", () => perform(status, [really, keep], async () => {
        await api("DELETE", `${sends}/${segment(send.id)}`);
        send = null;
        content.replaceChildren(empty("This draft was deleted."));
        return "Draft deleted.";
      }, "The draft was not deleted."));
    });
    return element;
  }

  show(send);
  return h("div", { class: "send-editor" }, content, status);
}

/**
 * `#/mail/<mailbox>/<view>…`: the mailboxes, one mailbox, a message, a new
 * message, outbound mail; `#/mail/search/<words>` and
 * `#/mail/<mailbox>/search/<words>`, a search of every mailbox or of one.
 */
async function renderMail(view, [mailboxId, second, third]) {
  const mine = await myMailboxes();
  if (!mailboxId) return mailHome(view, mine);
  if (mailboxId === "search") return searchView(view, mine, { q: second });
  const mailbox = mine.byId.get(mailboxId);
  if (!mailbox) {
    view.append(breadcrumbs(["Mail", "#/mail"], [mailboxId]), panel("Not one of your mailboxes",
      h("p", { text: "This mailbox does not exist, or you hold nothing on it that lets you read its mail or send from it." }),
      h("p", {}, h("a", { href: "#/mail", text: "Back to your mailboxes" }))));
    return;
  }
  if (!second) return mailboxView(view, mine, mailbox);
  if (second === "search") return searchView(view, mine, { mailbox, q: third });
  if (second === "new") return composeView(view, mailbox);
  if (second === "outbound") return third ? sendView(view, mailbox, third) : outboundView(view, mailbox);
  return messageView(view, mailbox, second);
}

function mailHome(view, { readable, sendable }) {
  if (readable.length) view.append(panel("Search mail", searchForm(readable)));
  const readRows = readable.map((mailbox) => row(
    h("a", { href: mailHref(mailbox.id), text: mailbox.address }), mailbox.display_name, heldList(mailbox)));
  const sendRows = sendable.map((mailbox) => row(
    mailbox.address,
    mailbox.display_name,
    h("div", { class: "button-row" },
      linkButton(mailHref(mailbox.id, "new"), "New message", { secondary: true, context: ` from ${mailbox.address}` }),
      linkButton(mailHref(mailbox.id, "outbound"), "Outbound", { secondary: true, context: ` for ${mailbox.address}` }))));
  view.append(
    panel("Mailboxes I can read", readRows.length
      ? table("Mailboxes I can read", ["Mailbox", "Name", "What I hold"], readRows)
      : empty("None yet. Seeing a mailbox's mail needs mailbox.metadata.read (who wrote, to whom, about what) or mailbox.content.read (the text too), which an administrator grants.")),
    panel("Mailboxes I can send from", sendRows.length
      ? table("Mailboxes I can send from", ["Mailbox", "Name", "Actions"], sendRows)
      : empty("None. Drafting mail from a mailbox needs send.propose on it.")));
}

async function mailboxView(view, mine, mailbox) {
  const can = access(mailbox);
  document.title = `${mailbox.address} · Mail · Mailroom`;
  const tools = can.propose || can.decide
    ? h("div", { class: "button-row" },
        can.propose ? linkButton(mailHref(mailbox.id, "new"), "New message") : null,
        linkButton(mailHref(mailbox.id, "outbound"), "Outbound", { secondary: true }))
    : null;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address]),
    panel(mailbox.address, facts([["Name", mailbox.display_name], ["I hold", heldList(mailbox)]]), tools));
  if (!can.metadata) {
    view.append(panel("Messages", info(`Seeing this mailbox's mail needs mailbox.metadata.read on ${mailbox.address}. You can still draft mail from it and follow it under Outbound.`)));
    return;
  }

  const list = pagedMessages({
    caption: `Messages in ${mailbox.address}, newest first`,
    columns: ["from", "subject", "received", "attachments"],
    fetchPage: (page) => api("GET", `${mailboxApi(mailbox.id, "messages")}${query(page)}`),
    emptyText: "No mail has arrived yet.",
    more: "Older messages",
    failure: "Older messages could not be loaded.",
  });
  view.append(panel(`Search ${mailbox.address}`, searchForm(mine.readable, { mailboxId: mailbox.id })), panel("Messages, newest first", list.element));
  await list.start();
}

/**
 * The search box: words, and where to look (every mailbox the person can read,
 * or one of them). Searching opens the results' own route, so a search can be
 * kept as a link, and Back returns to the one before.
 */
function searchForm(readable, { q = "", mailboxId = null } = {}) {
  const words = h("input", { type: "search", name: "q", autocomplete: "off", spellcheck: "false", required: true, value: q });
  const scope = h("select", { name: "mailbox" },
    h("option", { value: "", text: "Every mailbox I can read" }),
    readable.map((mailbox) => h("option", { value: mailbox.id, text: mailbox.address })));
  if (readable.some((mailbox) => mailbox.id === mailboxId)) scope.value = mailboxId;
  const form = actionForm({
    className: "action-form search-form",
    fields: [
      labelled("Search for", words, "Whole words: add * for a prefix, such as refund*, or “quotes” for a phrase."),
      labelled("In", scope),
    ],
    submit: "Search",
    failureTitle: "The search was not run.",
    async onSubmit() {
      const before = location.hash;
      location.hash = scope.value ? mailHref(scope.value, "search", words.value) : mailHref("search", words.value);
      // The same search again changes no hash, so it is run from here.
      if (location.hash === before) await route();
    },
  });
  form.setAttribute("role", "search");
  form.setAttribute("aria-label", "Search mail");
  return form;
}

/**
 * What a search cannot find, and why: the text of mail where the person reads
 * metadata alone, and anything where they do not read metadata at all.
 */
function searchReach(mailboxes) {
  const headersOnly = mailboxes.filter((mailbox) => access(mailbox).metadata && !access(mailbox).content);
  const unsearched = mailboxes.filter((mailbox) => !access(mailbox).metadata);
  const addresses = (list) => list.map((mailbox) => mailbox.address).join(", ");
  return [
    headersOnly.length
      ? info(`In ${addresses(headersOnly)} you hold mailbox.metadata.read without mailbox.content.read: mail there is found by its sender, recipients and subject, never by its text.`)
      : null,
    unsearched.length
      ? info(`${addresses(unsearched)} ${unsearched.length === 1 ? "is" : "are"} not searched: searching a mailbox needs mailbox.metadata.read on it.`)
      : null,
  ];
}

/** Search results, newest first, a page at a time; a refusal is shown in their place. */
async function searchView(view, { readable }, { mailbox = null, q = "" }) {
  const where = mailbox ? mailbox.address : "every mailbox I can read";
  document.title = `${q ? `“${q}” · ` : ""}Search · Mail · Mailroom`;
  view.append(
    breadcrumbs(...[["Mail", "#/mail"], mailbox ? [mailbox.address, mailHref(mailbox.id)] : null, ["Search"]].filter(Boolean)),
    panel("Search mail", searchForm(readable, { q, mailboxId: mailbox?.id })));
  if (!q) return;

  const list = pagedMessages({
    caption: `Mail in ${where} matching “${q}”, newest first`,
    columns: mailbox ? ["from", "subject", "received", "found"] : ["from", "subject", "mailbox", "received", "found"],
    fetchPage: async (page) => {
      const answer = await api("GET", `/api/search${query({ q, mailbox: mailbox?.id, ...page })}`);
      return { messages: answer.results, next_cursor: answer.next_cursor };
    },
    emptyText: `Nothing in ${where} matches “${q}”.`,
    more: "More results",
    failure: "More results could not be loaded.",
  });
  const results = h("div", { class: "search-results" }, searchReach(mailbox ? [mailbox] : readable), list.element);
  view.append(panel(`Results for “${q}”`, results));
  try {
    await list.start();
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    results.replaceChildren(refusalBox(error, "The search was not run."));
  }
}

async function messageView(view, mailbox, receiptId) {
  const can = access(mailbox);
  const path = mailboxApi(mailbox.id, "messages", receiptId);
  const message = await api("GET", path);
  const title = subjectOf(message.subject);
  document.title = `${title} · Mail · Mailroom`;

  const reply = can.propose ? h("button", { type: "button", "aria-expanded": "false", text: "Reply" }) : null;
  const original = can.original ? downloadLink(`${path}/original`, "Download the original (.eml)", { asButton: true }) : null;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], [title]),
    panel(title,
      facts([
        ["From", mailAddress(message.from)],
        ["To", message.to.length ? mailAddresses(message.to) : null],
        ["Cc", message.cc.length ? mailAddresses(message.cc) : null],
        ["Sent", message.sent_at ? time(message.sent_at) : null],
        ["Received", time(message.received_at)],
        ["Size", byteSize(message.size)],
        ["Message-ID", message.message_id ? code(`<${message.message_id}>`) : null],
        ["In reply to", message.in_reply_to.length ? message.in_reply_to.map((id, index) => [index ? " " : null, code(`<${id}>`)]) : null],
      ]),
      reply || original ? h("div", { class: "button-row" }, reply, original) : null));

  const text = h("div", {}, can.content ? loading() : null);
  view.append(panel("Text", text));
  if (message.attachments.length) {
    view.append(panel("Attachments",
      h("ul", { class: "attachments" }, message.attachments.map((attachment) => {
        const name = attachment.name ?? `Attachment ${attachment.index + 1}`;
        return h("li", {},
          can.content ? downloadLink(`${path}/attachments/${attachment.index}`, name) : h("span", { class: "attachment-name", text: name }),
          h("span", { class: "muted", text: ` ${attachment.content_type}, ${byteSize(attachment.size)}` }));
      })),
      can.content ? null : h("p", { class: "muted", text: "Downloading attachments needs mailbox.content.read." })));
  }

  if (reply) {
    const replyPanel = panel(`Reply to ${message.from?.address ?? "the sender"}`);
    replyPanel.id = uniqueId("reply");
    replyPanel.hidden = true;
    reply.setAttribute("aria-controls", replyPanel.id);
    let editor = null;
    reply.addEventListener("click", () => {
      editor ??= replyPanel.appendChild(sendEditor(mailbox, {
        replyTo: message,
        to: message.from ? [message.from.address] : [],
        subject: replySubject(message.subject),
      }));
      replyPanel.hidden = false;
      reply.setAttribute("aria-expanded", "true");
      (replyPanel.querySelector("textarea") ?? replyPanel).focus();
    });
    view.append(replyPanel);
  }

  if (!can.content) {
    text.append(info(h("strong", { text: "Reading the text needs mailbox.content.read." }),
      ` On ${mailbox.address} you hold ${mailbox.held.join(", ")}: enough to see that this message exists, who sent it, to whom, its subject, date and size. An administrator can grant mailbox.content.read.`));
    return;
  }
  try {
    const body = await api("GET", `${path}/body`);
    replace(text,
      body.text_source === "html" ? info("This message came only as HTML; this is its text, without the formatting.") : null,
      mailText(body.text),
      body.truncated ? info("The text was cut at the node's limit; the original has all of it.") : null);
  } catch (error) {
    if (error instanceof SessionOver) throw error;
    text.replaceChildren(refusalBox(error, "The text could not be shown."));
  }
}

function composeView(view, mailbox) {
  document.title = `New message · ${mailbox.address} · Mailroom`;
  view.append(breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["New message"]));
  if (!access(mailbox).propose) {
    view.append(panel("New message", info(`Drafting mail from ${mailbox.address} needs send.propose on it.`)));
    return;
  }
  view.append(panel(`New message from ${mailbox.address}`, sendEditor(mailbox)));
  view.querySelector("input")?.focus();
}

async function sendView(view, mailbox, sendId) {
  const send = await api("GET", mailboxApi(mailbox.id, "sends", sendId));
  const title = subjectOf(send.subject);
  document.title = `${title} · Outbound · Mailroom`;
  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound", mailHref(mailbox.id, "outbound")], [title]),
    panel(title, sendEditor(mailbox, { send })));
}

async function outboundView(view, mailbox) {
  document.title = `Outbound · ${mailbox.address} · Mailroom`;
  const list = h("div", {}, loading());

  function sendRow(send) {
    const mine = send.state === "submitted" && send.submitted_by === me.id;
    const cancel = mine ? h("button", { type: "button", class: "secondary" }, "Cancel submission", hidden(` of ${subjectOf(send.subject)}`)) : null;
    const tableRow = row(
      stateBadge(send.state),
      h("a", { href: mailHref(mailbox.id, "outbound", send.id), text: subjectOf(send.subject) }),
      send.to.join(", "),
      who(send.author, send.author_name),
      time(lastChange(send)),
      cancel);
    cancel?.addEventListener("click", async () => {
      const ok = await perform(rowStatus(tableRow), [cancel], () => api("POST", mailboxApi(mailbox.id, "sends", send.id, "cancel")), "The submission was not cancelled.");
      if (ok) await refresh();
    });
    return tableRow;
  }

  const sendsTable = table(`Mail from ${mailbox.address}, newest first`, ["State", "Subject", "To", "Written by", "Last change", "Actions"], []);
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `${mailboxApi(mailbox.id, "sends")}${query(asked)}`);
      return { items: page.sends, next_cursor: page.next_cursor };
    },
    show: (sends) => append(sendsTable.querySelector("tbody"), sends.map(sendRow)),
    more: "Show older mail",
    failure: "Older mail could not be loaded.",
  });

  async function refresh() {
    const sends = await pages.first();
    sendsTable.querySelector("tbody").replaceChildren(...sends.map(sendRow));
    list.replaceChildren(sends.length ? sendsTable : empty("Nothing yet: no drafts of yours, and nothing submitted."));
  }

  view.append(
    breadcrumbs(["Mail", "#/mail"], [mailbox.address, mailHref(mailbox.id)], ["Outbound"]),
    panel(`Outbound from ${mailbox.address}`,
      h("p", { class: "muted", text: "Your drafts, and every send from this mailbox that was submitted, sealed, dispatched, failed or refused, newest first." }),
      access(mailbox).propose ? h("div", { class: "button-row" }, linkButton(mailHref(mailbox.id, "new"), "New message")) : null,
      list, pages.element));
  await refresh();
}

async function renderApprovals(view) {
  // Addresses for the mailboxes; the queue is readable without them.
  await myMailboxes().catch((error) => {
    if (error instanceof SessionOver) throw error;
  });
  const cards = h("div", {});
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `/api/approvals${query(asked)}`);
      return { items: page.sends, next_cursor: page.next_cursor };
    },
    show: (sends) => append(cards, sends.map(approvalCard)),
    more: "Show later submissions",
    failure: "Later submissions could not be loaded.",
  });

  function approvalCard(send) {
    const headingId = uniqueId("approval");
    const status = statusArea();
    const details = h("div", {}, sendDetails(send));
    const approve = h("button", { type: "button" }, "Approve", hidden(` “${subjectOf(send.subject)}”`));
    const refuse = h("button", { type: "button", class: "secondary danger" }, "Refuse", hidden(` “${subjectOf(send.subject)}”`));
    const buttons = h("div", { class: "button-row" }, approve, refuse);
    const decision = h("div", { class: "decision" }, buttons);

    function decided(result) {
      replace(details, sendDetails(result));
      decision.replaceChildren();
    }

    approve.addEventListener("click", () => perform(status, [approve, refuse], async () => {
      const result = await api("POST", mailboxApi(send.mailbox_id, "sends", send.id, "approve"));
      decided(result);
      if (result.state === "failed") {
        status.replaceChildren(h("div", { class: "refusal", role: "alert" },
          h("p", { class: "refusal-title", text: "Approved and sealed, but not sent." }),
          h("p", {}, h("span", { class: "refusal-label", text: "Why: " }), result.dispatch_error ?? "The mail binding refused it."),
          h("p", {}, h("span", { class: "refusal-label", text: "What to do: " }), "A sealed send never changes and is not sent again; if it must go, write it again as a new draft.")));
        return null;
      }
      return result.state === "dispatched"
        ? [h("strong", { text: "Approved and dispatched." }), ` Sealed as <${result.message_id}> and handed to the mail binding.`]
        : [h("strong", { text: "Approved and sealed." }), " It has not been dispatched yet."];
    }, "The send was not approved."));

    refuse.addEventListener("click", () => {
      const reason = h("textarea", { name: "reason", rows: 3, required: true, maxlength: 1000 });
      const keep = h("button", { type: "button", class: "secondary", text: "Keep it" });
      const form = actionForm({
        className: "action-form refuse-form",
        fields: [labelled("Reason for refusing", reason, "The submitter reads it. At most 1,000 characters.")],
        submit: "Refuse send",
        failureTitle: "The send was not refused.",
        async onSubmit() {
          const result = await api("POST", mailboxApi(send.mailbox_id, "sends", send.id, "refuse"), { reason: reason.value });
          decided(result);
          status.replaceChildren(success(h("strong", { text: "Refused." }), " Nothing was sent; the submitter sees your reason."));
        },
      });
      form.querySelector(".field.actions").append(keep);
      keep.addEventListener("click", () => {
        decision.replaceChildren(buttons);
        refuse.focus();
      });
      decision.replaceChildren(form);
      reason.focus();
    });

    return h("article", { class: "card", "aria-labelledby": headingId },
      h("header", { class: "card-header" }, h("h3", { id: headingId, text: subjectOf(send.subject) })),
      details, decision, status);
  }

  view.append(panel("Awaiting my decision",
    h("p", { class: "muted", text: "Sends submitted from mailboxes where you hold approval.decide, oldest first. Nothing leaves a mailbox until a second person approves it, so your own submissions are never listed here." }),
    cards, pages.element));
  const first = await pages.first();
  if (first.length) append(cards, first.map(approvalCard));
  else cards.replaceChildren(empty("Nothing awaits your decision."));
}

async function renderMailboxes(view) {
  const list = h("div", {}, loading());
  const listStatus = statusArea();

  const address = h("input", { type: "email", name: "address", autocomplete: "off", required: true });
  const displayName = h("input", { type: "text", name: "display_name", autocomplete: "off", required: true, maxlength: 100 });
  const create = actionForm({
    fields: [
      labelled("Address", address, "Cloudflare Email Routing must deliver this address's mail to this Worker."),
      labelled("Display name", displayName, "Shown for the mailbox, and the sender's name on mail it sends."),
    ],
    submit: "Create mailbox",
    failureTitle: "The mailbox was not created.",
    async onSubmit(form) {
      const mailbox = await api("POST", "/api/mailboxes", { address: address.value, display_name: displayName.value });
      form.reset();
      await refresh();
      address.focus();
      return [`Created ${mailbox.address}, `, code(mailbox.id), ". Nobody can see its mail or send from it until you grant relations on it under Relations."];
    },
  });

  function mailboxRow(mailbox) {
    const rename = h("button", { type: "button", class: "secondary" }, "Rename", hidden(` ${mailbox.address}`));
    const tableRow = row(h("strong", { text: mailbox.address }), mailbox.display_name, code(mailbox.id), time(mailbox.created_at), heldList(mailbox), rename);
    rename.addEventListener("click", () => {
      const name = h("input", { type: "text", name: "display_name", autocomplete: "off", required: true, maxlength: 100, value: mailbox.display_name });
      const close = h("button", { type: "button", class: "secondary", text: "Cancel" });
      const form = actionForm({
        className: "action-form inline",
        fields: [labelled(`New display name for ${mailbox.address}`, name)],
        submit: "Save name",
        failureTitle: `${mailbox.address} was not renamed.`,
        async onSubmit() {
          const renamed = await api("PATCH", `/api/mailboxes/${segment(mailbox.id)}`, { display_name: name.value });
          await refresh();
          listStatus.replaceChildren(success(`Renamed ${renamed.address} to “${renamed.display_name}”.`));
        },
      });
      form.querySelector(".field.actions").append(close);
      const cell = rowStatus(tableRow);
      close.addEventListener("click", () => {
        cell.parentElement.remove();
        rename.focus();
      });
      cell.replaceChildren(form);
      name.focus();
    });
    return tableRow;
  }

  async function refresh() {
    const mailboxes = await directory.loadAllMailboxes();
    list.replaceChildren(mailboxes.length
      ? table("Mailboxes on this node", ["Address", "Display name", "ID", "Created", "I hold", "Actions"], mailboxes.map(mailboxRow))
      : empty("No mailboxes yet."));
  }

  view.append(panel("Create a mailbox", create), panel("Every mailbox", list, listStatus));
  await refresh();
}

// ---- Agents (SPEC §1–3, §11): minted by an administrator for a sponsor, in
// the product's words, and shown back as their ceiling, held of total.
//
// The mint form's warnings are read from the same facts the node checks: a
// capability works only where one mailbox grants everything it `requires`,
// and an agent can be granted on a mailbox only what its sponsor holds there.
// The node refuses what the form warns about anyway; the form says so first.

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

const addressOf = (mailboxId) => directory.mailboxes.get(mailboxId)?.address ?? mailboxId;

/** A secret to copy: a read-only field that selects itself, and a Copy button. */
function secretField(label, value) {
  const field = h("input", { type: "text", class: "secret", readonly: true, value, spellcheck: "false", autocomplete: "off" });
  field.addEventListener("focus", () => field.select());
  const copy = h("button", { type: "button", class: "secondary" }, "Copy", hidden(` the ${label.toLowerCase()}`));
  const said = h("span", { class: "muted", "aria-live": "polite" });
  copy.addEventListener("click", async () => {
    field.focus();
    try {
      await navigator.clipboard.writeText(value);
      said.textContent = "Copied.";
    } catch {
      said.textContent = "This browser did not let the page copy it: it is selected, so press Ctrl+C (⌘C on a Mac).";
    }
  });
  return h("div", { class: "secret-field" }, labelled(label, field), h("div", { class: "button-row" }, copy, said));
}

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
function ceilingOf(agent) {
  return [
    agent.capabilities.length
      ? h("ul", { class: "ceiling" }, agent.capabilities.map((capability) => h("li", {}, code(capability.name), " ",
          h("span", {
            class: capability.held < capability.total ? "partial" : null,
            title: capability.held < capability.total ? "The capability has gained routes since this agent was minted; they are not given to it." : null,
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

/** The relations an agent holds, by mailbox address. */
function agentMailboxes(agent) {
  if (!agent.mailboxes.length) return h("span", { class: "muted", text: "None" });
  return h("ul", { class: "grants" }, agent.mailboxes.map((grant) => h("li", {},
    h("span", { class: "who-name", text: addressOf(grant.mailbox) }),
    h("ul", { class: "held" }, grant.relations.map((relation) => h("li", {}, code(relation)))))));
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

async function renderAgents(view) {
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
    const wrap = table("Agents on this node, newest first", ["Agent", "Sponsor", "State", "Capabilities", "Mailboxes", "Actions"], agents.map(agentRow));
    wrap.querySelector("table").classList.add("agents");
    rows = wrap.querySelector("tbody");
    list.replaceChildren(wrap);
  }

  function addAgent(agent) {
    directory.rememberAgents([agent]);
    if (rows) rows.prepend(agentRow(agent));
    else showAgents([agent]);
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
      h("div", { class: "agent-name" }, h("strong", { text: agent.name }), " ", code(agent.id),
        h("span", { class: "since" }, "minted ", time(agent.created_at), " by ", directory.nameOf(agent.created_by) ?? agent.created_by)),
      who(agent.sponsor),
      [agentStateBadge(state), stateTimes(agent)],
      ceilingOf(agent),
      agentMailboxes(agent),
      actions.length ? h("div", { class: "button-row" }, actions) : h("span", { class: "muted", text: "None: a revoked agent stays revoked" }));

    /** Pause, resume or revoke, then show the agent as the node answers it, and say `done`. */
    async function change(verb, controls, done) {
      await perform(beneath(tableRow).said, controls, async () => {
        const changed = await api("POST", `/api/agents/${segment(agent.id)}/${verb}`);
        directory.rememberAgents([changed]);
        const next = agentRow(changed);
        tableRow.replaceWith(next);
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
      ? ["Needs on a mailbox", capability.requires.length > 1 ? ", all on the same one: " : ": ", capability.requires.map((relation, index) => [index ? " and " : null, code(relation)]), "."]
      : "Needs nothing on a mailbox.";
    return h("div", { class: "choice" },
      box,
      h("div", { class: "choice-body" },
        h("div", { class: "choice-line" },
          h("label", { for: box.id }, code(capability.name), " ", h("span", { class: "choice-summary", text: capability.summary })),
          capability.reaches_content ? h("span", { id: flagId, class: "badge content", text: "Reaches message content" }) : null),
        h("div", { id: aboutId, class: "choice-text" },
          h("p", { text: capability.description }),
          h("p", { class: "requires" }, requires),
          capability.reaches_content
            ? h("p", { class: "content-note", text: "It reads what people wrote: message text, attachments or originals. Every such read is recorded in the audit trail, as the agent's act for its sponsor." })
            : null),
        h("details", { class: "tools" },
          h("summary", {}, `Its tools (${capability.routes.length})`, hidden(` in ${capability.name}`)),
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

  function mailboxGrid() {
    if (!sponsorHolds.size) return empty("There are no mailboxes yet: create one under Mailboxes.");
    const holder = sponsorName();
    const body = [...sponsorHolds.values()].map(({ mailbox, held }) => {
      const nothingId = held.size ? null : uniqueId("hint");
      const header = h("th", { scope: "row" },
        h("span", { class: "who-name", text: mailbox.address }), " ", h("span", { class: "muted", text: `(${mailbox.display_name})` }),
        nothingId ? h("span", { id: nothingId, class: "reason", text: `${holder} holds nothing here, so the agent can hold nothing here either.` }) : null);
      const cells = MAILBOX_RELATIONS.map((relation) => {
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
        return h("td", { class: holds ? "held-here" : "not-held" },
          h("label", { for: box.id, class: "visually-hidden", text: `${relation.name} on ${mailbox.address}` }),
          box,
          reasonId ? h("span", { id: reasonId, class: "reason", text: `${holder} does not hold this here` }) : null);
      });
      return h("tr", {}, header, cells);
    });
    return [
      h("div", { class: "table-wrap" },
        h("table", { class: "grants-table" },
          h("caption", { class: "visually-hidden", text: `What the agent may hold on each mailbox, of what ${holder} holds there` }),
          h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Mailbox" }),
            // A relation's name may break after its dots, and nowhere else.
            MAILBOX_RELATIONS.map((relation) => h("th", { scope: "col", title: relation.description },
              h("code", {}, relation.name.split(".").map((part, index) => [index ? [".", h("wbr")] : null, part])))))),
          h("tbody", {}, body))),
      h("details", { class: "relation-words" },
        h("summary", { text: "What each relation lets the agent do" }),
        facts(MAILBOX_RELATIONS.map((relation) => [relation.name, relation.description]))),
    ];
  }

  const chosenCapabilities = () => capabilities.filter((capability) => capabilityBoxes.get(capability.name).checked);
  const grantsChosen = () => [...chosen]
    .filter(([mailboxId, relations]) => relations.size && sponsorHolds?.has(mailboxId))
    .map(([mailbox, relations]) => ({ mailbox, relations: MAILBOX_RELATIONS.map((relation) => relation.name).filter((relation) => relations.has(relation)) }));

  /** Why a chosen capability cannot work with what is chosen, and what would make it work. */
  function unsatisfied(capability) {
    const needs = capability.requires;
    const needsText = needs.length > 1 ? `${inWords(needs)} together on one mailbox` : `${needs[0]} on a mailbox`;
    const lead = [code(capability.name), ` cannot work: it needs ${needsText}`];
    if (!sponsor.value) return h("li", {}, lead, `. Choose a sponsor, then select ${needs.length > 1 ? "them" : "it"} on a mailbox where the sponsor holds ${needs.length > 1 ? "them" : "it"}.`);
    if (!sponsorHolds) return h("li", {}, lead, ".");
    const holder = sponsorName();
    const mailboxes = [...sponsorHolds.values()];
    const selectable = mailboxes.filter(({ held }) => needs.every((relation) => held.has(relation)));
    if (selectable.length) {
      const ways = selectable.map(({ mailbox }) => {
        const missing = needs.filter((relation) => !chosen.get(mailbox.id)?.has(relation));
        return `${inWords(missing)} on ${mailbox.address}`;
      });
      return h("li", {}, lead, `. Select ${ways.join(", or ")} (${holder} holds ${needs.length > 1 ? "them" : "it"} there).`);
    }
    // The sponsor cannot give it: say what to grant them, where they come closest.
    const closest = mailboxes
      .map(({ mailbox, held }) => ({ mailbox, missing: needs.filter((relation) => !held.has(relation)) }))
      .sort((a, b) => a.missing.length - b.missing.length)[0];
    if (!closest) return h("li", {}, lead, ". There are no mailboxes yet: create one under Mailboxes.");
    return h("li", {}, lead, `, and ${holder} does not hold ${needs.length > 1 ? "that on any mailbox" : "it on any mailbox"}. `,
      `Grant ${holder} ${inWords(closest.missing)} on ${closest.mailbox.address} under Relations first, choose a sponsor who holds ${needs.length > 1 ? "them" : "it"}, or leave ${capability.name} out.`);
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
      return ["Minted ", h("strong", { text: minted.agent.name }), ", ", code(minted.agent.id), minted.credential ? ". Its credential is below." : ". Its pairing code is below."];
    }, "The agent was not minted.");
  });
  loadSponsor();

  view.append(
    panel("Mint an agent",
      h("p", { class: "muted", text: "An agent acts in its own right under a person's authority: what it can do is its capabilities, intersected with what it holds and what its sponsor holds, on every request. Its acts are recorded as the agent's, for its sponsor." }),
      form, handovers),
    panel("Every agent", list));
  showAgents(await directory.loadAgents());
}

const isAdmin = () => me?.is_admin === true;

const everyone = () => true;

/**
 * Every section, in navigation order. `route` is the first segment of the hash
 * (`#/people`); the rest are passed to `render(view, params)` as parameters.
 * A visit with no route opens the first visible section whose `landing` holds,
 * else the first visible one: an administrator's work starts with the people
 * on the node (administering confers no mail), everyone else's with mail.
 */
const SECTIONS = [
  { route: "mail", title: "Mail", visible: everyone, render: renderMail },
  { route: "approvals", title: "Approvals", visible: everyone, render: renderApprovals },
  { route: "people", title: "People", visible: isAdmin, landing: isAdmin, render: renderPeople },
  { route: "teams", title: "Teams", visible: isAdmin, render: renderTeams },
  { route: "mailboxes", title: "Mailboxes", visible: isAdmin, render: renderMailboxes },
  { route: "relations", title: "Relations", visible: isAdmin, render: renderRelations },
  { route: "agents", title: "Agents", visible: isAdmin, render: renderAgents },
  { route: "audit", title: "Audit", visible: isAdmin, render: renderAudit },
  { route: "account", title: "Account", visible: everyone, render: renderAccount },
];

// ------------------------------------------------------------ 2. The shell

const root = document.getElementById("app");
let main = null;
let navigation = null;
let rendering = 0;

function showSignIn(notice) {
  setMe(null);
  main = null;
  navigation = null;
  rendering++;
  document.title = "Sign in · Mailroom";

  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const form = actionForm({
    className: "signin-form",
    fields: [labelled("Email", email), labelled("Password", password)],
    submit: "Sign in",
    failureTitle: "You are not signed in.",
    async onSubmit() {
      const response = await send("POST", "/api/sessions", { email: email.value, password: password.value, transport: "cookie" });
      if (!response.ok) throw new ApiError(response.status, await refusalOf(response));
      hint.set(true);
      password.value = "";
      await start();
    },
  });

  root.replaceChildren(h("main", { class: "signin" },
    h("div", { class: "signin-card" },
      h("p", { class: "brand", text: "Mailroom" }),
      h("h1", { text: "Sign in" }),
      notice?.refusal ? h("div", { class: "notice" }, refusalBox(notice.refusal, notice.title)) : null,
      notice?.text ? h("div", { class: "notice info", role: "status", text: notice.text }) : null,
      form)));
  email.focus();
}

function showShell() {
  navigation = h("ul");
  const signOut = h("button", { type: "button", class: "secondary", text: "Sign out" });
  const shellStatus = statusArea();
  signOut.addEventListener("click", async () => {
    const ok = await perform(shellStatus, [signOut], () => api("DELETE", "/api/sessions/current"), "You are still signed in.");
    if (ok) {
      hint.set(false);
      showSignIn(null);
    }
  });
  main = h("main", { id: "main", tabindex: "-1" });
  root.replaceChildren(
    h("a", { class: "skip-link", href: "#main", text: "Skip to content" }),
    h("header", { class: "topbar" },
      h("p", { class: "brand", text: "Mailroom" }),
      h("nav", { "aria-label": "Sections" }, navigation),
      h("div", { class: "whoami" },
        h("span", { class: "whoami-name", text: me.name }),
        me.email ? h("span", { class: "whoami-email", text: me.email }) : null,
        me.is_admin ? h("span", { class: "badge", text: "Administrator" }) : null,
        signOut)),
    shellStatus,
    main);
  // The skip link must not change the route.
  root.querySelector(".skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
  for (const section of SECTIONS.filter((section) => section.visible())) {
    navigation.append(h("li", {}, h("a", { href: `#/${section.route}`, "data-route": section.route, text: section.title })));
  }
}

function parseHash() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    return parts.map(decodeURIComponent);
  } catch {
    return [];
  }
}

async function route() {
  if (!me || !main) return;
  const [name, ...params] = parseHash();
  const visible = SECTIONS.filter((section) => section.visible());
  const section = visible.find((candidate) => candidate.route === name);
  if (!section) {
    location.replace(`#/${(visible.find((candidate) => candidate.landing?.()) ?? visible[0]).route}`);
    return;
  }
  const generation = ++rendering;
  for (const link of navigation.querySelectorAll("a")) {
    if (link.dataset.route === section.route) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${section.title} · Mailroom`;
  const heading = h("h1", { tabindex: "-1", text: section.title });
  const view = h("div", { class: "view" });
  main.replaceChildren(heading, view);
  heading.focus({ preventScroll: true });
  try {
    await section.render(view, params);
  } catch (error) {
    if (error instanceof SessionOver || generation !== rendering) return;
    view.append(refusalBox(error, `${section.title} could not be shown.`));
  }
}

/** Learns who is signed in and shows the interface, or the sign-in form. */
async function start() {
  try {
    setMe(await api("GET", "/api/me"));
  } catch (error) {
    if (error instanceof SessionOver) return;
    root.replaceChildren(h("main", { class: "signin" }, h("div", { class: "signin-card" },
      h("p", { class: "brand", text: "Mailroom" }),
      refusalBox(error, "Mailroom could not start."),
      h("button", { type: "button", text: "Try again", onclick: () => start() }))));
    return;
  }
  showShell();
  await route();
}

// The API and the sections take these steps through session.js.
connectShell({ showSignIn, start, route });
window.addEventListener("hashchange", route);
if (hint.get()) start();
else showSignIn(null);

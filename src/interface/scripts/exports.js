// Exports (decision 0024): a reviewer holding ediscovery.export on the
// organisation asks for the mail some mailboxes received, between two days and
// matching some words; the node's per-minute schedule copies the originals, and
// the reviewer downloads each of them and the manifest of their SHA-256 hashes,
// whose own hash is in the audit chain. Only the requester sees an export, and
// every download is audited.
//
// The page cannot tell who holds the relation (GET /api/me says only whether
// one administers, and asking the exports themselves would write a refusal into
// everyone else's console), so the section is everyone's and the node's refusal
// says who may. The node lists every mailbox only to administrators: anyone
// else chooses among the mailboxes they read or send from, or names others by id.

import { breadcrumbs, byteSize, code, facts, h, labelled, momentText, replace, row, table, time, uniqueId } from "./dom.js";
import { api, query, segment, SessionOver } from "./api.js";
import { actionForm, askOnce, codesToggle, downloadLink, empty, panel, refusalBox, statusArea, success } from "./shared.js";
import { directory, named } from "./names.js";
import { me } from "./session.js";
import { PER_PAGE, pager } from "./pager.js";
import { counted } from "./mail-words.js";
import { myMailboxes, subjectOf } from "./mail-shared.js";

const exportsHref = (id) => (id ? `#/exports/${segment(id)}` : "#/exports");
const exportApi = (...parts) => `/api/exports${parts.map((part) => `/${segment(part)}`).join("")}`;

/** What the last view said that the next one shows (an export requested or deleted). */
let saidBefore = null;

/**
 * While `view` is shown, calls `again` every 5 seconds for as long as it
 * answers that something is still building (a tab out of sight skips its
 * turn). A refusal stops it, shown in `status`.
 */
function follow(view, status, again) {
  setTimeout(async () => {
    if (!view.isConnected) return;
    try {
      if (document.hidden || (await again())) follow(view, status, again);
    } catch (error) {
      if (!(error instanceof SessionOver)) status.replaceChildren(refusalBox(error, "Its progress could not be read."));
    }
  }, 5000);
}

/** A SHA-256 in hex, free to break anywhere (an id's code would not). */
const hash = (text) => text && h("code", { text });

const building = (exp) => exp.state === "building";
const stateBadge = (exp) => (building(exp) ? h("span", { class: "badge wait", text: "Building" }) : h("span", { class: "badge on", text: "Ready" }));

/** Copied of selected, and any deleted before they could be copied. */
const progress = ({ messages_total: total, messages_done: done, messages_missing: missing }) =>
  `${(done - missing).toLocaleString()} of ${counted(total, "message")} copied${missing ? `; ${missing.toLocaleString()} deleted before they could be` : ""}`;

/** What an export selected, as `[term, value]` pairs. */
const selection = (exp) => [
  ["Mailboxes", exp.mailbox_ids.map((id, index) => [index ? ", " : null, named(id)])],
  ["Matching", exp.query ? `“${exp.query}”` : "Every message"],
  ["Received", [exp.since && `from ${exp.since}`, exp.until && `to ${exp.until}`].filter(Boolean).join(" ") || "Any day"],
];

/**
 * A list the node answers a page at a time, drawn whole by `draw(items)`:
 * pager.js's pager, and its `refresh()`, which loads afresh as many pages as
 * are shown, draws them and answers them.
 */
function pagedList(path, key, draw, more) {
  let items = [];
  const pages = pager({
    fetchPage: async (asked) => {
      const page = await api("GET", `${path}${query(asked)}`);
      return { items: page[key], next_cursor: page.next_cursor };
    },
    show: (next) => {
      items = items.concat(next);
      draw(items);
    },
    more,
    failure: "The rest could not be listed.",
  });
  pages.refresh = async () => {
    items = await pages.first(Math.ceil(items.length / PER_PAGE) || 1);
    draw(items);
    return items;
  };
  return pages;
}

/** `#/exports/<export>`: the person's exports and the form to request one, or one export. */
export async function renderExports(view, [exportId]) {
  const [mailboxes, exp] = await Promise.all([
    me.is_admin ? directory.loadAllMailboxes() : myMailboxes().then(({ byId }) => [...byId.values()]),
    exportId ? api("GET", exportApi(exportId)) : null,
  ]);
  const said = statusArea();
  if (saidBefore) said.replaceChildren(success(saidBefore));
  saidBefore = null;
  view.append(codesToggle(view), said);
  return exp ? exportView(view, exp) : listView(view, mailboxes);
}

async function listView(view, mailboxes) {
  const list = h("div");
  const status = statusArea();
  const pages = pagedList("/api/exports", "exports", (exports) => replace(list, exports.length
    ? table("Your exports, newest first", ["Requested", "Mailboxes", "Matching", "Received", "Progress", "State"], exports.map((exp) => row(
        h("a", { href: exportsHref(exp.id) }, time(exp.created_at)), ...selection(exp).map(([, value]) => value), progress(exp), stateBadge(exp))), { stack: true })
    : empty("You have requested no export yet.")), "Show older exports");
  // Refused here (no ediscovery.export), the section shows the node's refusal.
  const shown = await pages.refresh();
  view.append(
    panel("Request an export",
      h("p", { class: "muted", text: "The messages are chosen now and copied a minute at a time, with a manifest of their SHA-256 hashes. Only you see it; each download is audited." }),
      requestForm(mailboxes)),
    panel("Your exports", list, pages.element, status));
  if (shown.some(building)) follow(view, status, async () => (await pages.refresh()).some(building));
}

function requestForm(mailboxes) {
  const boxes = mailboxes.map((mailbox) => h("input", { type: "checkbox", value: mailbox.id, id: uniqueId("mailbox") }));
  const ids = me.is_admin ? null : h("input", { type: "text", autocomplete: "off", spellcheck: "false" });
  const words = h("input", { type: "text", name: "query", maxlength: 200, autocomplete: "off" });
  const since = h("input", { type: "date", name: "since" });
  const until = h("input", { type: "date", name: "until" });
  const failure = "The export was not requested.";
  return actionForm({
    className: "mint-form export-form",
    fields: [
      h("fieldset", {}, h("legend", { text: "Mailboxes" }),
        boxes.length
          ? h("div", { class: "choices" }, boxes.map((box, index) => h("div", { class: "choice" }, box,
              h("label", { for: box.id, title: mailboxes[index].display_name, text: mailboxes[index].address }))))
          : null,
        ids ? labelled("Others, by id", ids, "Only administrators are shown every mailbox: name others by id (mbx_…), apart with spaces.") : null),
      labelled("Matching", words, "In headers or text; empty: every message."),
      labelled("Received from", since, "UTC; empty: from the first."),
      labelled("Received to", until, "Included; empty: until now."),
    ],
    submit: "Request the export",
    failureTitle: failure,
    async onSubmit() {
      const exp = await api("POST", "/api/exports", {
        mailbox_ids: [...boxes.filter((box) => box.checked).map((box) => box.value), ...(ids?.value.split(/[\s,]+/).filter(Boolean) ?? [])],
        query: words.value.trim() || undefined,
        since: since.value || undefined,
        until: until.value || undefined,
      });
      saidBefore = `Requested: ${counted(exp.messages_total, "message")} chosen, copied a minute at a time.`;
      location.hash = exportsHref(exp.id);
    },
  });
}

function exportView(view, exp) {
  document.title = "Export · Mailroom";
  const about = h("div");
  const status = statusArea();
  const objects = h("div");
  const remove = h("button", { type: "button", class: "secondary danger", text: "Delete the export" });
  const pages = pagedList(exportApi(exp.id, "objects"), "objects", (items) => replace(objects,
    table("What it holds", ["Object", "Mailbox", "Received", "Size", "SHA-256", "Download"], items.map((object) => {
      const manifest = object.kind === "manifest";
      const name = manifest ? "The manifest (every message's SHA-256)" : subjectOf(object.subject);
      return row(name, object.mailbox_id && named(object.mailbox_id), time(object.received_at), object.size === null ? null : byteSize(object.size),
        hash(object.sha256),
        object.available
          ? downloadLink(exportApi(exp.id, "objects", object.id), "Download", { context: ` ${manifest ? "the manifest" : name}` })
          : h("span", { class: "muted", text: manifest ? "Written last" : building(exp) ? "Not copied yet" : "Deleted before it could be copied" }));
    }), { stack: true })), "Show more");

  function draw(next) {
    exp = next;
    replace(about, facts([
      ...selection(exp),
      ["Requested", time(exp.created_at)],
      ["State", stateBadge(exp)],
      ["Progress", progress(exp)],
      ["Copied", byteSize(exp.bytes)],
      ["Completed", exp.completed_at && time(exp.completed_at)],
      ["Manifest's SHA-256", hash(exp.manifest_sha256)],
    ]));
  }

  remove.addEventListener("click", () => askOnce(status, {
    from: remove,
    label: "Delete this export?",
    question: "Delete this export and its copies for good? The mail stays; the audit chain keeps the manifest's hash.",
    yes: "Delete for good",
    act: async () => {
      await api("DELETE", exportApi(exp.id));
      saidBefore = "Deleted the export and its copies.";
      location.hash = exportsHref();
    },
    failure: "The export was not deleted.",
  }));

  draw(exp);
  view.append(breadcrumbs(["Exports", exportsHref()], [`Requested ${momentText(exp.created_at)}`]),
    panel("Export", about, h("div", { class: "button-row" }, remove), status, h("p", { class: "on-request" }, code(exp.id))),
    panel("What it holds", objects, pages.element));
  return pages.refresh().then(() => {
    if (building(exp)) follow(view, status, async () => {
      draw(await api("GET", exportApi(exp.id)));
      await pages.refresh();
      return building(exp);
    });
  });
}

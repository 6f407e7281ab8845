// Reminders (SPEC §9; everyone): a person's own inbox of things that fall due,
// from them, their agents and the node's sources. Three views:
//   #/reminders            what is due today, overdue and coming up, and a form to add one
//   #/reminders/archive    the last hundred closed, and how each closed
//   #/reminders/settings   the time zone, quiet hours and where notifications go
//
// States are the node's, computed in the person's zone; this module only puts
// them into words ("in 12 days", "3 days overdue"), counting days in that zone
// too, so a person abroad reads the same words as at home. The node decides
// every default (when preparing starts, the done label): the form shows the
// default as a hint and leaves an untouched field out of the request.

import { h, hidden, labelled, replace, time, uniqueId } from "./dom.js";
import { api, query, segment, SessionOver } from "./api.js";
import { followOwnWhileShown } from "./session.js";
import { askOnce, empty, loading, offerUndo, panel, perform, secretField, statusArea, success } from "./shared.js";

/** An event's state in words; the keys are the contract's EventState, a test holds this file to them. */
const EVENT_STATES = {
  scheduled: { text: "Scheduled", tone: "quiet" },
  preparing: { text: "Preparing", tone: null },
  today: { text: "Due today", tone: "due" },
  overdue: { text: "Overdue", tone: "off" },
  expired: { text: "Expired", tone: "quiet" },
  done: { text: "Done", tone: "on" },
  withdrawn: { text: "Withdrawn", tone: "quiet" },
};

function stateBadge(state) {
  const known = EVENT_STATES[state] ?? { text: state, tone: null };
  return h("span", { class: known.tone ? `badge ${known.tone}` : "badge", text: known.text });
}

/** The inbox's groups, in the order a person deals with them. */
const GROUPS = [
  { title: "Today", holds: (event) => event.state === "today", none: "Nothing is due today." },
  { title: "Overdue", holds: (event) => event.state === "overdue", none: "Nothing is overdue." },
  { title: "Upcoming", holds: (event) => event.state === "preparing" || event.state === "scheduled", none: "Nothing is coming up." },
];

/** The events the node lists at most at once (`limit`'s maximum on list_events). */
const LIST_LIMIT = 100;

/** What the source `manual` is called: events a person or their agents added. */
const MANUAL = "manual";

const CHANNELS = { webhook: "Webhook", email: "Email" };

// ---- days and times

/** A `YYYY-MM-DD` day as a number of days, to count between days. */
const dayNumber = (day) => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) / 86_400_000;

/** The `YYYY-MM-DD` day `days` after `day` (before, when negative). */
function addDays(day, days) {
  return new Date((dayNumber(day) + days) * 86_400_000).toISOString().slice(0, 10);
}

/** The day it is in `zone` at `moment`, as `YYYY-MM-DD`; null when this browser does not know the zone. */
function dayIn(zone, moment = new Date()) {
  try {
    const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" })
      .formatToParts(moment).map((part) => [part.type, part.value]));
    return `${parts.year}-${parts.month}-${parts.day}`;
  } catch {
    return null;
  }
}

const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

/** A `YYYY-MM-DD` day as people read it, on the calendar as written (no zone moves it). */
const dayWords = (day) => dayFormat.format(new Date(dayNumber(day) * 86_400_000));

/**
 * `due_at` as given, in words: its day, its time as written, and, for an event
 * bound to a place, that place's offset (its time is the place's, not yours).
 */
function dueWords(dueAt) {
  const [day, clock = ""] = dueAt.split("T");
  const at = clock.slice(0, 5);
  const offset = clock.slice(5);
  const place = offset ? ` (${offset === "Z" ? "UTC" : `UTC${offset}`}, where it happens)` : "";
  return at ? `${dayWords(day)}, ${at}${place}` : dayWords(day);
}

/** The person's day the event is due on: as written, or for a placed time, the day in their zone. */
function dueDay(event, zone) {
  const offset = event.due_at.length > 16;
  return (offset && dayIn(zone, new Date(event.due_moment))) || event.due_at.slice(0, 10);
}

/** How far away it is, as a person says it: "today", "tomorrow", "in 12 days", "3 days overdue". */
function distance(event, zone, today) {
  if (event.state === "today") return event.due_at.length > 10 ? `today, by ${event.due_at.slice(11, 16)}` : "today";
  if (!today) return null;
  const days = dayNumber(dueDay(event, zone)) - dayNumber(today);
  if (event.state === "overdue") {
    if (days >= 0) return "overdue since earlier today";
    return days === -1 ? "1 day overdue" : `${-days} days overdue`;
  }
  if (days <= 0) return "today";
  return days === 1 ? "tomorrow" : `in ${days} days`;
}

// ---- the views

export async function renderReminders(view, params) {
  const [which] = params;
  const tabs = [["Inbox", "#/reminders", !which], ["Archive", "#/reminders/archive", which === "archive"], ["Time zone and notifications", "#/reminders/settings", which === "settings"]];
  view.append(h("nav", { class: "subnav", "aria-label": "Reminders" },
    h("ul", {}, tabs.map(([text, href, current]) => h("li", {}, h("a", { href, "aria-current": current ? "page" : null, text }))))));
  if (which === "archive") return renderArchive(view);
  if (which === "settings") return renderSettings(view);
  return renderInbox(view);
}

/** The open events in their groups, and the form to add one. */
async function renderInbox(view) {
  const status = statusArea();
  const groups = h("div", { class: "reminder-groups" }, loading());
  const zoneLine = h("p", { class: "muted" });
  let profile = null;

  // The open events shown so far (the soonest first, a page at a time), and
  // where the next page starts.
  let events = [];
  let nextCursor = null;
  const later = h("button", { type: "button", class: "secondary more", hidden: true, text: "Show later reminders" });
  const laterStatus = statusArea();
  later.addEventListener("click", () => perform(laterStatus, [later], async () => {
    const page = await api("GET", `/api/me/events${query({ limit: LIST_LIMIT, cursor: nextCursor })}`);
    events = events.concat(page.events);
    nextCursor = page.next_cursor ?? null;
    show();
  }, "Later reminders could not be shown."));

  /**
   * Loads the open events again and shows them; `said` is what the last
   * action did, and `undo`, when given, takes it back (offered for a few
   * seconds beside the words, as everything done at once without asking is).
   */
  async function refresh(said, undo) {
    const [page, current] = await Promise.all([api("GET", `/api/me/events${query({ limit: LIST_LIMIT })}`), api("GET", "/api/me/profile")]);
    profile = current;
    events = page.events;
    nextCursor = page.next_cursor ?? null;
    show();
    newer.hidden = true;
    status.replaceChildren();
    if (!said) return;
    // The card acted on has moved or gone: what became of it is said at the
    // top of the inbox, and shown there.
    if (undo) {
      offerUndo(status, { done: said, ...undo, undo: async () => {
        await undo.undo();
        await refresh();
      } });
    } else {
      status.append(success(said));
    }
    const notice = status.firstElementChild;
    notice.setAttribute("tabindex", "-1");
    notice.focus();
  }

  /** Shows the events loaded so far in their groups. */
  function show() {
    const today = dayIn(profile.tz);
    replace(zoneLine, "Days are counted in your time zone, ", h("strong", { text: profile.tz }), today ? `, where it is ${dayWords(today)}. ` : ". ",
      h("a", { href: "#/reminders/settings", text: "Change it" }), ".");
    later.hidden = !nextCursor;
    replace(groups,
      GROUPS.map((group) => {
        const held = events.filter(group.holds).sort((a, b) => Date.parse(a.due_moment) - Date.parse(b.due_moment));
        return panel(`${group.title} (${held.length})`, held.length
          ? h("div", { class: "reminder-list" }, held.map((event) => eventCard(event, { zone: profile.tz, today, refresh })))
          : empty(group.none));
      }));
  }

  // What changes elsewhere (another tab, an agent, a source, the schedule)
  // shows without a reload. While the person is in the middle of something in
  // the list (a form or a confirmation open, focus on a card, later pages
  // shown), the list stays as it is and a button offers the latest instead, so
  // nothing they are doing is lost.
  const latest = h("button", { type: "button", class: "secondary", text: "Show the latest" });
  const newer = h("div", { class: "live-notice", role: "status", hidden: true },
    h("span", { text: "Your reminders changed elsewhere. " }), latest);
  latest.addEventListener("click", () => perform(laterStatus, [latest], async () => {
    newer.hidden = true;
    await refresh();
  }, "The latest reminders could not be shown."));
  const busy = () =>
    groups.querySelector("form, .confirm") !== null || groups.contains(document.activeElement) || events.length > LIST_LIMIT;
  async function quietly() {
    const [page, current] = await Promise.all([api("GET", `/api/me/events${query({ limit: LIST_LIMIT })}`), api("GET", "/api/me/profile")]);
    const unchanged = JSON.stringify([page.events, page.next_cursor ?? null, current.tz]) === JSON.stringify([events, nextCursor, profile?.tz]);
    if (unchanged) return;
    if (busy()) {
      newer.hidden = false;
      return;
    }
    profile = current;
    events = page.events;
    nextCursor = page.next_cursor ?? null;
    newer.hidden = true;
    show();
  }

  view.append(zoneLine, status, newer, groups, h("div", {}, later, laterStatus), panel("Add a reminder", addForm(refresh)));
  await refresh();
  followOwnWhileShown(view, () => quietly().catch((error) => {
    // The shell signs the person in again; anything else waits for the next change.
    if (error instanceof SessionOver) return;
  }));
}

/** One open event: what it is, when, where it comes from, what was sent about it, and what can be done with it. */
function eventCard(event, { zone, today, refresh }) {
  const titleId = uniqueId("event");
  const said = statusArea();
  // The heading stays while the body below it is the event or the form changing it.
  const head = h("div", { class: "reminder-head" });
  const body = h("div", { class: "reminder-body" });
  const card = h("article", { class: "reminder", "aria-labelledby": titleId }, head, body, said);
  const context = ` ${event.title}`;
  const button = (text, className) => h("button", { type: "button", class: className }, text, hidden(context));

  function show() {
    const words = distance(event, zone, today);
    const done = button(event.done_label);
    const remember = event.acknowledged ? null : button("I remember", "secondary");
    const edit = event.editable ? button("Edit", "secondary") : null;
    const remove = event.editable ? button("Delete", "secondary danger") : null;
    replace(head,
      h("h3", { id: titleId, text: event.title }),
      h("div", { class: "badges" },
        stateBadge(event.state),
        event.source === MANUAL ? null : h("span", { class: "badge source", text: `From ${event.source}` }),
        event.acknowledged ? h("span", { class: "badge quiet", text: "Acknowledged" }) : null));
    replace(body,
      event.subtitle ? h("p", { class: "reminder-subtitle", text: event.subtitle }) : null,
      h("p", { class: "reminder-due" }, "Due ", h("time", { datetime: event.due_moment, text: dueWords(event.due_at) }),
        words ? [" · ", h("strong", { text: words })] : null),
      event.state === "scheduled" ? h("p", { class: "muted", text: `Starts preparing on ${dayWords(event.fire_at)}.` }) : null,
      event.state === "preparing" ? h("p", { class: "muted", text: `Preparing since ${dayWords(event.fire_at)}.` }) : null,
      event.acknowledged
        ? h("p", { class: "muted" }, "You said you remember it: no notification ",
            event.quiet_until ? ["until ", time(event.quiet_until)] : "until it is rescheduled", ".")
        : null,
      event.deep_link ? h("p", {}, h("a", { href: event.deep_link, rel: "noopener noreferrer", target: "_blank" }, "Open where it comes from", hidden(context))) : null,
      deliveries(event),
      event.source === MANUAL ? null : h("p", { class: "hint", text: `${event.source} keeps this reminder in step with its own records, so it is changed there, not here.` }),
      h("div", { class: "button-row" }, done, remember, edit, remove));

    // Done is done at once: Undo opens it again, for a few seconds.
    done.addEventListener("click", () => act([done], "done", `Closed “${event.title}” as ${event.done_label}. It is in the archive.`, `“${event.title}” was not closed`, {
      undo: () => api("POST", `/api/me/events/${segment(event.id)}/reopen`),
      undone: `Opened “${event.title}” again.`,
      failure: `“${event.title}” was not opened again.`,
    }));
    remember?.addEventListener("click", () => act([remember], "ack", `Acknowledged “${event.title}”: no notification until its next step.`, `“${event.title}” was not acknowledged`));
    edit?.addEventListener("click", () => {
      replace(body, editForm(event, { show, refresh, context }));
      body.querySelector("input")?.focus();
    });
    remove?.addEventListener("click", () => askOnce(said, {
      from: remove,
      label: `Delete “${event.title}”?`,
      question: `Delete “${event.title}”? It leaves the inbox and is kept in the archive as withdrawn.`,
      yes: ["Delete", hidden(context)],
      act: async () => {
        await api("DELETE", `/api/me/events/${segment(event.id)}`);
        await refresh(`Deleted “${event.title}”. It is in the archive as withdrawn.`);
        return null;
      },
      failure: `“${event.title}” was not deleted.`,
    }));
  }

  /** Done or acknowledged: then the inbox as it now stands, with `undo` offered if given. */
  function act(controls, verb, done, failed, undo) {
    return perform(said, controls, async () => {
      await api("POST", `/api/me/events/${segment(event.id)}/${verb}`);
      await refresh(done, undo);
      return null;
    }, `${failed}.`);
  }

  show();
  return card;
}

/** What was sent about the event's current state, per channel. */
function deliveries(event) {
  if (!event.deliveries.length) return null;
  return h("ul", { class: "deliveries", "aria-label": "Notifications" }, event.deliveries.map((delivery) => {
    const channel = CHANNELS[delivery.channel] ?? delivery.channel;
    const tries = delivery.attempts === 1 ? "tried once" : `tried ${delivery.attempts} times`;
    if (delivery.outcome === "delivered") return h("li", {}, `${channel}: delivered `, time(delivery.updated_at), ".");
    if (delivery.outcome === "failed") {
      // The node waits longer before each attempt and says until when; none left, it has given up.
      const next = delivery.next_attempt_at ? [" It is tried again at ", time(delivery.next_attempt_at), "."] : [" It will not be tried again."];
      return h("li", { class: "error-text" }, `${channel}: not delivered (${tries}, last `, time(delivery.updated_at), ")",
        delivery.last_error ? `: ${delivery.last_error.replace(/\.+$/, "")}` : "", ".", ...next);
    }
    return h("li", {}, `${channel}: being sent now.`);
  }));
}

/** The date and optional time inputs of a due date, read back as `due_at`; an offset given is kept. */
function dueFields(dueAt = "") {
  const date = h("input", { type: "date", name: "due_date", "data-field": "due_at", required: true, value: dueAt.slice(0, 10) });
  const clock = h("input", { type: "time", name: "due_time", value: dueAt.slice(11, 16) });
  const offset = dueAt.slice(16);
  return {
    date,
    clock,
    offset,
    value: () => (clock.value ? `${date.value}T${clock.value.slice(0, 5)}${offset}` : date.value),
  };
}

/** The form that adds a manual reminder. */
function addForm(refresh) {
  const title = h("input", { type: "text", name: "title", autocomplete: "off", required: true, maxlength: 200 });
  const subtitle = h("input", { type: "text", name: "subtitle", autocomplete: "off", maxlength: 200 });
  const due = dueFields();
  const fireAt = h("input", { type: "date", name: "fire_at" });
  const fireField = labelled("Starts preparing on (optional)", fireAt, " ");
  const fireHint = fireField.querySelector(".hint");
  const afterDue = h("select", { name: "after_due" },
    h("option", { value: "keep", text: "Keep it as overdue" }),
    h("option", { value: "expire", text: "Let it expire" }));
  const doneLabel = h("input", { type: "text", name: "done_label", autocomplete: "off", maxlength: 40, value: "Done" });
  const link = h("input", { type: "url", name: "deep_link", autocomplete: "off", placeholder: "https://" });

  // The node starts preparing 30 days before the due day unless told otherwise;
  // the hint says which day that is, and the field stays out of the request.
  function hintFireAt() {
    fireHint.textContent = due.date.value
      ? `Empty: from ${dayWords(addDays(due.date.value, -30))}, 30 days before it is due. On or before the due date.`
      : "Empty: from 30 days before it is due. On or before the due date.";
  }
  due.date.addEventListener("input", hintFireAt);
  hintFireAt();

  const failure = "The reminder was not added.";
  const submit = h("button", { type: "submit", text: "Add reminder" });
  const status = statusArea();
  const form = h("form", { class: "reminder-form" },
    h("div", { class: "fields" },
      labelled("What is due", title, "Such as “Renew the passport”."),
      labelled("Details (optional)", subtitle),
      labelled("Due date", due.date),
      labelled("Time (optional)", due.clock, "Empty: the whole day. A time is in your time zone."),
      fireField,
      labelled("After it is due", afterDue, "Overdue stays until you close it; expired closes by itself."),
      labelled("Label of its done button", doneLabel, "Such as “Paid” or “Renewed”."),
      labelled("Link (optional)", link, "Where it is dealt with: an https address.")),
    h("div", { class: "button-row" }, submit),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [submit], async () => {
      const body = { title: title.value, due_at: due.value(), after_due: afterDue.value };
      if (subtitle.value.trim()) body.subtitle = subtitle.value;
      if (fireAt.value) body.fire_at = fireAt.value;
      if (doneLabel.value.trim()) body.done_label = doneLabel.value;
      if (link.value.trim()) body.deep_link = link.value;
      const added = await api("POST", "/api/me/events", body);
      form.reset();
      hintFireAt();
      const group = GROUPS.find((candidate) => candidate.holds(added));
      await refresh();
      title.focus();
      return `Added “${added.title}”, due ${dueWords(added.due_at)}${group ? `, under ${group.title}` : ""}.`;
    }, failure);
  });
  return form;
}

/** The form that changes a manual event in place: what, when, and when preparing starts. */
function editForm(event, { show, refresh, context }) {
  const title = h("input", { type: "text", name: "title", autocomplete: "off", required: true, maxlength: 200, value: event.title });
  const due = dueFields(event.due_at);
  const fireAt = h("input", { type: "date", name: "fire_at", required: true, value: event.fire_at });
  const save = h("button", { type: "submit" }, "Save changes", hidden(context));
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel", hidden(context));
  const status = statusArea();
  const failure = `“${event.title}” was not changed.`;
  const form = h("form", { class: "reminder-edit", "aria-label": `Change “${event.title}”` },
    h("div", { class: "fields" },
      labelled("What is due", title),
      labelled("Due date", due.date),
      labelled("Time (optional)", due.clock, due.offset ? `At the place's time (UTC${due.offset === "Z" ? "" : due.offset}).` : "Empty: the whole day."),
      labelled("Starts preparing on", fireAt, "A new due date moves it with the date, unless you change it here.")),
    h("div", { class: "button-row" }, save, cancel),
    status);
  cancel.addEventListener("click", show);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    if (!form.reportValidity()) return;
    await perform(status, [save, cancel], async () => {
      // Only what changed: the same due_at would only rewrite the fields, and a
      // fire_at left out follows a new due date.
      const changes = {};
      if (title.value !== event.title) changes.title = title.value;
      if (due.value() !== event.due_at) changes.due_at = due.value();
      if (fireAt.value !== event.fire_at) changes.fire_at = fireAt.value;
      if (!Object.keys(changes).length) {
        show();
        return null;
      }
      const changed = await api("PATCH", `/api/me/events/${segment(event.id)}`, changes);
      const group = GROUPS.find((candidate) => candidate.holds(changed));
      await refresh(`Saved “${changed.title}”, due ${dueWords(changed.due_at)}${group ? `, under ${group.title}` : ""}.`);
      return null;
    }, failure);
  });
  return form;
}

/** The last hundred closed events, most recent first, and how each closed. */
async function renderArchive(view) {
  const { events } = await api("GET", `/api/me/events${query({ archive: true, limit: LIST_LIMIT })}`);
  view.append(panel(`Closed (${events.length})`,
    h("p", { class: "muted", text: `The ${LIST_LIMIT} most recently closed, newest first: done, expired by themselves, or deleted.` }),
    events.length
      ? h("div", { class: "reminder-list" }, events.map((event) => {
          const titleId = uniqueId("event");
          return h("article", { class: "reminder closed", "aria-labelledby": titleId },
            h("div", { class: "reminder-head" },
              h("h3", { id: titleId, text: event.title }),
              h("div", { class: "badges" },
                h("span", { class: event.state === "done" ? "badge on" : "badge quiet", text: event.closed_as ?? (EVENT_STATES[event.state]?.text ?? event.state) }),
                event.source === MANUAL ? null : h("span", { class: "badge source", text: `From ${event.source}` }))),
            event.subtitle ? h("p", { class: "reminder-subtitle", text: event.subtitle }) : null,
            h("p", { class: "reminder-due" }, "Was due ", h("time", { datetime: event.due_moment, text: dueWords(event.due_at) })),
            event.closed_at ? h("p", { class: "muted" }, `Closed as ${event.closed_as ?? event.state} `, time(event.closed_at), ".") : null);
        }))
      : empty("Nothing closed yet.")));
}

/** The person's time zone, quiet hours and channels, and the webhook. */
async function renderSettings(view) {
  let profile = await api("GET", "/api/me/profile");
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  let zones = [];
  try {
    zones = Intl.supportedValuesOf("timeZone");
  } catch {}
  const known = [...new Set([profile.tz, browserZone, "UTC", ...zones].filter(Boolean))].sort();
  const zone = h("select", { name: "tz", required: true }, known.map((name) => h("option", { value: name, text: name.replaceAll("_", " ") })));
  zone.value = profile.tz;
  const useBrowser = h("button", { type: "button", class: "secondary", text: `Use this device's zone, ${browserZone.replaceAll("_", " ")}` });
  useBrowser.addEventListener("click", () => {
    zone.value = browserZone;
    zone.focus();
  });
  const quietStart = h("input", { type: "time", name: "quiet_start", value: profile.quiet_start ?? "" });
  const quietEnd = h("input", { type: "time", name: "quiet_end", value: profile.quiet_end ?? "" });
  const email = h("input", { type: "checkbox", name: "email", id: uniqueId("email"), checked: profile.channels.email });
  const failure = "Your settings were not saved.";
  const save = h("button", { type: "submit", text: "Save" });
  const status = statusArea();
  const settings = h("form", { class: "reminder-settings" },
    h("div", { class: "fields" },
      labelled("Time zone", zone, "Due days and times without an offset are read in it, and notifications come at its hours."),
      profile.tz === browserZone ? null : h("div", { class: "field actions" }, useBrowser)),
    h("fieldset", {},
      h("legend", { text: "Quiet hours (optional)" }),
      h("p", { class: "hint", text: "No notification comes between these times; it waits until they end. Leave both empty for none." }),
      h("div", { class: "fields" }, labelled("Quiet from", quietStart), labelled("Quiet until", quietEnd))),
    h("div", { class: "choice" }, email, h("label", { for: email.id, text: `Email me at ${profile.email}` })),
    h("div", { class: "button-row" }, save),
    status);
  settings.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!settings.reportValidity()) return;
    await perform(status, [save], async () => {
      profile = await api("PATCH", "/api/me/profile", { tz: zone.value, quiet_start: quietStart.value, quiet_end: quietEnd.value, email: email.checked });
      const quiet = profile.quiet_start ? `, quiet from ${profile.quiet_start} to ${profile.quiet_end}` : ", no quiet hours";
      return `Saved: ${profile.tz}${quiet}, ${profile.channels.email ? "emails on" : "no emails"}.`;
    }, failure);
  });

  view.append(panel("Time zone and quiet hours", settings), panel("Webhook", webhookPanel(profile)));
}

/** Where signed notifications go: set (its secret shown once), replaced, or removed. */
function webhookPanel(initial) {
  const content = h("div");
  const secrets = h("div", { class: "handovers" });
  const status = statusArea();

  function show(profile) {
    const url = profile.channels.webhook_url;
    const address = h("input", { type: "url", name: "url", required: true, autocomplete: "off", placeholder: "https://hooks.example.org/mailroom" });
    const failure = "The webhook was not set.";
    const set = h("button", { type: "submit", text: url ? "Replace webhook" : "Set webhook" });
    const remove = url ? h("button", { type: "button", class: "secondary danger", text: "Remove webhook" }) : null;
    const form = h("form", { class: "action-form" },
      h("div", { class: "fields" },
        labelled(url ? "New webhook address" : "Webhook address", address, "An https address that accepts a POST of JSON. Setting one makes a new signing secret."),
        h("div", { class: "field actions" }, set)));
    replace(content,
      url
        ? h("p", {}, "Notifications are posted to ", h("code", { class: "id", text: url }), ".")
        : h("p", { class: "muted", text: "No webhook: notifications go only by email, if it is on." }),
      remove ? h("div", { class: "button-row" }, remove) : null,
      form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      await perform(status, [set], async () => {
        const answer = await api("PUT", "/api/me/profile/webhook", { url: address.value });
        show(answer.profile);
        const box = secretBox(answer.secret);
        secrets.replaceChildren(box);
        box.querySelector("input")?.focus();
        return "Webhook set. Its signing secret is below.";
      }, failure);
    });
    remove?.addEventListener("click", () => perform(status, [remove], async () => {
      show(await api("DELETE", "/api/me/profile/webhook"));
      secrets.replaceChildren();
      return "Webhook removed: nothing is posted to it any more, and its secret is forgotten.";
    }, "The webhook was not removed."));
  }

  show(initial);
  return [content, status, secrets];
}

/** The webhook's signing secret, shown once, with how a receiver checks a signature. */
function secretBox(secret) {
  const headingId = uniqueId("handover");
  const done = h("button", { type: "button", class: "secondary", text: "I have copied it: hide it" });
  const box = h("section", { class: "once", "aria-labelledby": headingId },
    h("h3", { id: headingId, text: "The webhook's signing secret" }),
    h("p", { class: "once-warning" }, h("strong", { text: "Shown once. " }),
      "Copy it now into the service that receives the webhook: it is not shown again. Setting the webhook again makes a new one."),
    secretField("Signing secret", secret),
    h("p", { class: "hint" }, "Each notification carries a header ", h("code", { text: "Mailroom-Signature: t=…,v1=…" }),
      ". To check it, compute the HMAC-SHA256 of ", h("code", { text: "<t>.<body>" }),
      " (the t value, a dot, and the body exactly as received) with this secret as the key, in hex, and compare it with v1; refuse a t far from now."),
    h("div", { class: "button-row" }, done));
  done.addEventListener("click", () => box.remove());
  return box;
}

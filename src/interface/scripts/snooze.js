// Snoozing a conversation (issue 31, decision 0048): the choices a person
// snoozes with (later today, tomorrow, next week, or a time they pick), each
// counted in their own time zone (their profile's, as reminders count days),
// and how a snooze's moment is worded there. The node keeps only the moment;
// at it the conversation opens again and its assignee is told.

import { comingMomentText, h, labelled, uniqueId } from "./dom.js";
import { api, SessionOver } from "./api.js";

/** The person's time zone, asked once while the page is open; this device's when the profile cannot say. */
let zoneAsked = null;
const deviceZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
export function personZone() {
  zoneAsked ??= api("GET", "/api/me/profile").then((profile) => profile.tz || deviceZone(), (error) => {
    if (error instanceof SessionOver) throw error;
    return deviceZone();
  });
  return zoneAsked;
}

/** The calendar and clock in `zone` at `ms`: year, month (1–12), day, hour, minute, and weekday (0 is Sunday). */
function wallClock(zone, ms) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", {
    timeZone: zone, hourCycle: "h23", weekday: "short", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
  }).formatToParts(new Date(ms)).map((part) => [part.type, part.value]));
  const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday);
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second), weekday };
}

/** How far `zone`'s clock is ahead of UTC at `ms`, in milliseconds. */
function offsetAt(zone, ms) {
  const wall = wallClock(zone, ms);
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - Math.floor(ms / 1000) * 1000;
}

/** The moment the clock in `zone` shows `hour`:`minute` on the day `days` after year-month-day (a day past a month's end rolls over). */
function momentIn(zone, { year, month, day }, days, hour, minute) {
  const wall = Date.UTC(year, month - 1, day + days, hour, minute);
  // Asked twice, so a day on which the clock changes lands on the offset of the moment itself.
  const first = wall - offsetAt(zone, wall);
  return wall - offsetAt(zone, first);
}

const QUARTER_HOUR_MS = 15 * 60_000;

/** The moments a person snoozes to from `now` in `zone`: later today (while three hours on is still today), tomorrow at 08:00, next Monday at 08:00. */
export function snoozeChoices(zone, now = Date.now()) {
  const today = wallClock(zone, now);
  const later = Math.ceil((now + 3 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
  const laterDay = wallClock(zone, later);
  const stillToday = laterDay.day === today.day && laterDay.month === today.month;
  const toMonday = (8 - today.weekday) % 7 || 7;
  return [
    stillToday ? { name: "later", words: "Later today", at: later } : null,
    { name: "tomorrow", words: "Tomorrow", at: momentIn(zone, today, 1, 8, 0) },
    { name: "next-week", words: "Next week", at: momentIn(zone, today, toMonday, 8, 0) },
  ].filter(Boolean);
}

/** The `YYYY-MM-DDTHH:MM` a time field shows for `ms` in `zone`. */
function fieldValue(zone, ms) {
  const wall = wallClock(zone, ms);
  const two = (number) => String(number).padStart(2, "0");
  return `${wall.year}-${two(wall.month)}-${two(wall.day)}T${two(wall.hour)}:${two(wall.minute)}`;
}

/** The moment a time field's `YYYY-MM-DDTHH:MM` stands for in `zone`; null when it is empty or unreadable. */
function fieldMoment(zone, value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute] = match.slice(1).map(Number);
  return momentIn(zone, { year, month, day }, 0, hour, minute);
}

/**
 * A conversation's Snooze control: a menu of the choices and a time to pick,
 * and while it is snoozed, when it wakes and Unsnooze. `changeConversation(body,
 * said, controls)` makes the change (the conversation's own, which shows its
 * refusal or what was done; these controls are the ones it was made with, so a
 * refusal of the time names the field here). `show(summary)` draws it again for
 * where the conversation now stands.
 */
export function snoozeControl(summary, changeConversation) {
  const element = h("div", { class: "snooze" });
  let zone = deviceZone();
  let current = summary;
  const menu = h("details", { class: "snooze-menu" });
  const toggle = h("summary", { "data-key": "snooze", text: "Snooze" });
  const choices = h("div", { class: "snooze-choices", role: "group", "aria-label": "Snooze until" });
  const picked = h("input", { type: "datetime-local", name: "snoozed_until", "data-field": "snoozed_until", required: true, id: uniqueId("snooze-at") });
  const pickForm = h("form", { class: "snooze-pick" },
    labelled("Pick a time", picked),
    h("button", { type: "submit", class: "secondary", text: "Snooze" }));
  const zoneWords = h("p", { class: "muted snooze-zone" });
  menu.append(toggle, choices, pickForm, zoneWords);
  const waking = h("p", { class: "snooze-until" });
  const unsnooze = h("button", { type: "button", class: "secondary", text: "Unsnooze" });
  const change = (body, said) => changeConversation(body, said, [...element.querySelectorAll("button, input")]);

  async function snoozeUntil(at) {
    const until = new Date(at).toISOString();
    const done = await change({ snoozed_until: until }, `Snoozed until ${comingMomentText(until, zone)}: it is back in the list then.`);
    if (done) menu.open = false;
    return done;
  }
  function drawChoices() {
    choices.replaceChildren(...snoozeChoices(zone).map((choice) => {
      const button = h("button", { type: "button", class: "secondary", "data-snooze": choice.name },
        h("span", { text: choice.words }), " ", h("span", { class: "muted", text: comingMomentText(new Date(choice.at).toISOString(), zone) }));
      button.addEventListener("click", () => snoozeUntil(choice.at));
      return button;
    }));
    picked.min = fieldValue(zone, Date.now());
    if (!picked.value) picked.value = fieldValue(zone, Date.now() + 3_600_000);
    zoneWords.textContent = `Times are in your time zone, ${zone.replaceAll("_", " ")}.`;
  }
  // The person's zone is asked only when a snooze is to be shown or chosen, so opening a conversation asks nothing more.
  let zoneKnown = false;
  function knowZone() {
    if (zoneKnown) return;
    zoneKnown = true;
    personZone().then((known) => {
      zone = known;
      show(current);
      if (menu.open) drawChoices();
    }, () => {});
  }
  menu.addEventListener("toggle", () => {
    if (!menu.open) return;
    drawChoices();
    knowZone();
  });
  pickForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const at = fieldMoment(zone, picked.value);
    // An unreadable time is sent as typed, so the node's refusal names the field.
    if (at === null) await change({ snoozed_until: picked.value }, null);
    else if (await snoozeUntil(at)) picked.value = "";
  });
  unsnooze.addEventListener("click", () => change({ snoozed_until: "" }, "No longer snoozed: it is back in the list."));

  function show(next) {
    current = next;
    if (current.snoozed_until) {
      knowZone();
      waking.textContent = `Snoozed until ${comingMomentText(current.snoozed_until, zone)}.`;
      element.replaceChildren(waking, h("div", { class: "button-row" }, unsnooze, menu));
      toggle.textContent = "Snooze again";
    } else {
      element.replaceChildren(menu);
      toggle.textContent = "Snooze";
    }
  }
  show(current);
  return { element, show };
}

// Bulk actions on a mailbox's conversations (issue 31): a box on each row of
// the list and one for every row shown select conversations; once any are, a
// bar says how many and changes them all at once: their status, who has them,
// a label added or taken off.
//
// Each conversation is changed by its own update_thread call, a few at a time,
// rather than by a route of its own for many: each change then meets its own
// authority check, refusal and audit entry exactly as one made in the
// conversation does, and one refused does not undo or stop the rest. The bar
// says how many changed and names each one refused with its reason; the
// refused stay selected, to try again. The selection is kept by id, so it
// outlives the list drawn again as the mailbox changes (inbox.js), and is
// cleared once a change has been made to all of it.

import { comingMomentText, h, labelled } from "./dom.js";
import { api, SessionOver } from "./api.js";
import { asRefusal, personWords } from "./refusals.js";
import { success } from "./shared.js";
import { mailboxApi, subjectOf } from "./mail-shared.js";
import { me } from "./session.js";
import { directory } from "./names.js";
import { workers } from "./conversation.js";
import { counted, THREAD_STATUSES } from "./mail-words.js";
import { personZone, snoozeChoices } from "./snooze.js";

/** How many changes are in flight at once: enough to be quick, few enough not to crowd the node. */
const AT_ONCE = 4;

/** Runs `work` on each of `items`, at most AT_ONCE at a time; answers each outcome, in order. */
async function eachAtMost(items, work) {
  const outcomes = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const index = next++;
      try {
        outcomes[index] = { ok: true, value: await work(items[index]) };
      } catch (error) {
        outcomes[index] = { ok: false, error };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
  return outcomes;
}

/** A row's box, labelled with its conversation's subject, offered to `x` (shortcuts.js). */
export function pickBox(thread, selected, onToggle) {
  const box = h("input", { type: "checkbox", class: "thread-pick-box", "data-key": "select" });
  box.checked = selected.has(thread.id);
  box.addEventListener("change", () => onToggle(thread.id, box.checked));
  return h("label", { class: "thread-pick" }, box, h("span", { class: "visually-hidden", text: `Select “${subjectOf(thread.subject)}”` }));
}

/**
 * The bar over the list: "Select all shown", and once any conversation is
 * selected, how many and what can be done to them. `listed()` answers the
 * conversations shown; `mark()` shows the selection on their boxes;
 * `changed()` is called once a change was made to any.
 * Answers the bar's element and `show()`, which draws it again for the
 * selection and list as they now are.
 */
export function bulkBar(mailbox, selected, { listed, mark, changed }) {
  const all = h("input", { type: "checkbox", class: "thread-pick-box", id: `select-all-${mailbox.id}` });
  all.addEventListener("change", () => {
    for (const thread of listed()) {
      if (all.checked) selected.add(thread.id);
      else selected.delete(thread.id);
    }
    show();
  });
  const count = h("p", { class: "bulk-count", role: "status" });
  const outcome = h("div", { class: "status-area bulk-outcome", "aria-live": "polite" });

  const statusButtons = Object.entries(THREAD_STATUSES).map(([status, { action }]) =>
    h("button", { type: "button", class: "secondary", "data-status": status, text: action }));
  const assignee = h("select", { name: "assignee" },
    h("option", { value: "", text: "Nobody" }),
    me ? h("option", { value: me.id, text: `Me (${me.name})` }) : null);
  const assign = h("button", { type: "button", class: "secondary", text: "Assign" });
  const label = h("input", { type: "text", name: "label", "data-field": "add_labels remove_labels", autocomplete: "off", spellcheck: "false", maxlength: 40 });
  const addLabel = h("button", { type: "button", class: "secondary", text: "Add label" });
  const removeLabel = h("button", { type: "button", class: "secondary", text: "Remove label" });
  const clear = h("button", { type: "button", class: "secondary", text: "Clear selection" });
  // The choices a conversation offers, counted in the person's zone when the bar snoozes.
  const snoozeUntil = h("select", { name: "snoozed_until" },
    snoozeChoices(Intl.DateTimeFormat().resolvedOptions().timeZone).map((choice) => h("option", { value: choice.name, text: choice.words })));
  const snooze = h("button", { type: "button", class: "secondary", text: "Snooze" });

  const actions = h("form", { class: "bulk-actions", "aria-label": "Change the selected conversations", hidden: true },
    h("div", { class: "bulk-group", role: "group", "aria-label": "Status" }, statusButtons),
    h("div", { class: "bulk-group" }, labelled("Assign to", assignee), assign),
    h("div", { class: "bulk-group bulk-labels" }, labelled("Label", label), addLabel, removeLabel),
    h("div", { class: "bulk-group" }, labelled("Snooze until", snoozeUntil), snooze));
  actions.addEventListener("submit", (event) => event.preventDefault());
  const controls = [...statusButtons, assignee, assign, label, addLabel, removeLabel, snoozeUntil, snooze, clear];

  // Who works the mailbox, for an administrator, as in a conversation; anyone else assigns themselves or nobody.
  let workersAsked = false;
  function offerWorkers() {
    if (workersAsked || !me?.is_admin) return;
    workersAsked = true;
    workers(mailbox).then((people) => {
      for (const person of people) {
        if (![...assignee.options].some((option) => option.value === person.id)) assignee.append(h("option", { value: person.id, text: person.name }));
      }
    }).catch(() => {
      // The picker keeps Me and Nobody; asking again later may list the rest.
      workersAsked = false;
    });
  }

  function show() {
    mark();
    const shown = listed();
    const picked = shown.filter((thread) => selected.has(thread.id)).length;
    all.checked = shown.length > 0 && picked === shown.length;
    all.indeterminate = picked > 0 && picked < shown.length;
    all.disabled = shown.length === 0;
    count.textContent = selected.size ? `${selected.size.toLocaleString()} selected` : "";
    actions.hidden = selected.size === 0;
    clear.hidden = selected.size === 0;
    element.classList.toggle("active", selected.size > 0);
    if (selected.size) offerWorkers();
  }

  /** Changes every selected conversation by `change`; `done` words the outcome ("Closed"). */
  async function apply(change, done) {
    const ids = [...selected];
    if (!ids.length) return;
    const subjects = new Map(listed().map((thread) => [thread.id, subjectOf(thread.subject)]));
    outcome.replaceChildren();
    for (const control of controls) control.disabled = true;
    let outcomes;
    try {
      outcomes = await eachAtMost(ids, (id) => api("PATCH", mailboxApi(mailbox.id, "threads", id), change));
    } finally {
      for (const control of controls) control.disabled = false;
    }
    if (outcomes.some((result) => !result.ok && result.error instanceof SessionOver)) return;
    const refused = [];
    ids.forEach((id, index) => {
      if (outcomes[index].ok) selected.delete(id);
      else refused.push({ id, refusal: asRefusal(outcomes[index].error) });
    });
    const changedCount = ids.length - refused.length;
    if (changedCount) changed();
    show();
    if (!refused.length) {
      outcome.replaceChildren(success(`${done} ${counted(ids.length, "conversation")}.`));
      return;
    }
    outcome.replaceChildren(h("div", { class: "refusal", role: "alert" },
      h("p", { class: "refusal-title", text: `${changedCount.toLocaleString()} of ${ids.length.toLocaleString()} changed; ${refused.length.toLocaleString()} ${refused.length === 1 ? "was" : "were"} refused:` }),
      h("ul", { class: "bulk-refused" }, refused.map(({ id, refusal }) => {
        const words = personWords(refusal, actions);
        return h("li", {},
          h("strong", { text: subjects.get(id) ?? "A conversation no longer shown" }), ": ",
          words.message, words.reason ? ` ${words.reason}` : null, words.fix ? ` ${words.fix}` : null);
      })),
      h("p", { text: refused.length === 1 ? "It is still selected." : "They are still selected." })));
  }

  clear.addEventListener("click", () => {
    outcome.replaceChildren();
    selected.clear();
    show();
  });
  actions.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button || button.disabled) return;
    if (button.dataset.status) {
      const status = button.dataset.status;
      apply({ status }, `Set to ${THREAD_STATUSES[status].words.toLowerCase()}:`);
    } else if (button === assign) {
      const who = assignee.value;
      const name = who ? (who === me?.id ? "you" : directory.nameOf(who) ?? assignee.selectedOptions[0]?.textContent) : "nobody";
      apply({ assignee: who }, `Assigned to ${name}:`);
    } else if (button === snooze) {
      personZone().then((zone) => {
        const choices = snoozeChoices(zone);
        // Later today may have passed since the bar was drawn: then tomorrow.
        const choice = choices.find((candidate) => candidate.name === snoozeUntil.value) ?? choices[0];
        const until = new Date(choice.at).toISOString();
        return apply({ snoozed_until: until }, `Snoozed until ${comingMomentText(until, zone)}:`);
      }, () => {});
    } else if (button === addLabel || button === removeLabel) {
      const text = label.value.trim();
      if (!text) {
        outcome.replaceChildren(h("p", { class: "refusal", role: "alert", text: "Type the label first, then add or remove it." }));
        label.focus();
        return;
      }
      const adding = button === addLabel;
      apply(adding ? { add_labels: [text] } : { remove_labels: [text] }, `${adding ? "Labelled" : "Took the label off"} “${text}”:`);
    }
  });

  // While any is selected the bar stays in sight as the list scrolls under it (the style's sticky `.bulk.active`).
  const element = h("div", { class: "bulk" },
    h("div", { class: "bulk-head" },
      h("div", { class: "field check bulk-all" }, all, h("label", { for: all.id, text: "Select all shown" })),
      count, clear),
    actions, outcome);
  show();
  return { element, show };
}

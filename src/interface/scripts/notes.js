// Internal notes in a conversation (decision 0047): what a mailbox's people
// write to each other beside its mail, never sent. A conversation shows them
// in its timeline, in order with the messages, on a tinted card that says
// "Internal note" so nobody takes one for mail the customer saw; their author
// deletes their own. Below the messages, the note composer: typing @ offers
// the teammates who can read the mailbox's notes (a listbox, chosen with the
// arrow keys and Enter or Tab, or a click), and each one mentioned is told in
// their notifications. Only those who may read notes are shown any of it:
// the node answers them on routes of their own, never in the conversation.

import { h, hidden, labelled, time, uniqueId } from "./dom.js";
import { me } from "./session.js";
import { api, SessionOver } from "./api.js";
import { askOnce, info, panel, perform, refusalBox, statusArea } from "./shared.js";
import { mailboxApi } from "./mail-shared.js";
import { asLines } from "./mail-words.js";

/** The changes (their routes' tool names) that change a conversation's notes and nothing else of it. */
export const NOTE_CHANGES = new Set(["add_note", "delete_note"]);

/** How many teammates the suggestions offer at once. */
const SUGGESTED = 8;

/** The @handle being typed just before the caret, with where it starts, or null. */
function mentionBeingTyped(textarea) {
  const before = textarea.value.slice(0, textarea.selectionStart);
  const typed = /(^|[^A-Za-z0-9._+\-@])@([A-Za-z0-9._+-]*)$/.exec(before);
  return typed ? { start: before.length - typed[2].length - 1, query: typed[2].toLowerCase() } : null;
}

/** Whose a note is, in words. */
const authorOf = (note) => (note.author === me?.id ? `${note.author_name ?? me.name} (you)` : note.author_name ?? "Someone no longer on the node");

/**
 * The notes of conversation `threadId` in `mailbox`, for conversation.js: null
 * when the signed-in person may not read them. They are asked for at once;
 * `follow(redraw)` is called whenever they change (read, written,
 * deleted, read again); `weave()` puts them among the messages; `card()`
 * draws one; `composer` writes one (null where the person may not).
 */
export function conversationNotes(mailbox, threadId) {
  const tools = new Set(mailbox.tools ?? []);
  if (!tools.has("list_notes")) return null;
  const path = mailboxApi(mailbox.id, "threads", threadId, "notes");
  let notes = [];
  let teammates = [];
  let redrawn = () => {};
  // The composer's suggestions, offered again when the teammates arrive: the
  // conversation is drawn before its notes are read, and an @ typed in that
  // moment is answered once they are.
  let offerAgain = () => {};
  const status = statusArea();
  let readings = 0;

  async function read() {
    const mine = ++readings;
    try {
      const listed = await api("GET", path);
      if (mine !== readings) return;
      notes = listed.notes;
      teammates = listed.teammates;
      redrawn();
      offerAgain();
    } catch (error) {
      if (!(error instanceof SessionOver)) status.replaceChildren(refusalBox(error, "The internal notes could not be read."));
    }
  }
  read();

  function card(note) {
    const headingId = uniqueId("note");
    const said = statusArea();
    let remove = null;
    if (note.author === me?.id && tools.has("delete_note")) {
      remove = h("button", { type: "button", class: "secondary" }, "Delete", hidden(" this note"));
      remove.addEventListener("click", () => askOnce(said, {
        from: remove,
        label: "Delete the note",
        question: "Delete this note? Nobody will see it again.",
        yes: ["Delete", hidden(" the note")],
        act: async () => {
          await api("DELETE", `${path}/${encodeURIComponent(note.id)}`);
          notes = notes.filter((kept) => kept.id !== note.id);
          redrawn();
          status.replaceChildren(info("The note was deleted."));
          return null;
        },
        failure: "The note was not deleted.",
      }));
    }
    return h("article", { class: "entry note", "aria-labelledby": headingId, "data-note": note.id },
      h("header", { class: "entry-head" },
        h("h3", { id: headingId }, h("span", { class: "note-badge", text: "Internal note" }), " ", h("span", { class: "address-name", text: authorOf(note) })),
        h("p", { class: "entry-when" }, time(note.created_at))),
      h("div", { class: "entry-text", text: asLines(note.text) }),
      remove ? h("div", { class: "button-row entry-actions" }, remove) : null,
      said);
  }

  /** `entries` (a conversation's, in order) with the notes among them by time (`timeOf` an entry's). */
  function weave(entries, timeOf) {
    const woven = [];
    let next = 0;
    const at = (moment) => Date.parse(moment);
    for (const entry of entries) {
      while (next < notes.length && at(notes[next].created_at) < at(timeOf(entry))) woven.push({ kind: "note", note: notes[next++] });
      woven.push(entry);
    }
    while (next < notes.length) woven.push({ kind: "note", note: notes[next++] });
    return woven;
  }

  return {
    follow(redraw) {
      redrawn = redraw;
    },
    readAgain: read,
    weave,
    card,
    status,
    composer: tools.has("add_note") ? composer() : h("div", {}, status),
  };

  function composer() {
    const listboxId = uniqueId("mentions");
    const text = h("textarea", { name: "text", rows: 3, required: true, "aria-autocomplete": "list", "aria-controls": listboxId });
    const suggestions = h("ul", { id: listboxId, class: "mention-list", role: "listbox", "aria-label": "Teammates to mention", hidden: true });
    const add = h("button", { type: "submit", text: "Add note" });
    const said = statusArea();
    let offered = [];
    let active = -1;

    const close = () => {
      suggestions.hidden = true;
      suggestions.replaceChildren();
      offered = [];
      active = -1;
      text.removeAttribute("aria-activedescendant");
    };
    const highlight = (index) => {
      active = index;
      for (const [position, option] of [...suggestions.children].entries()) option.setAttribute("aria-selected", String(position === index));
      const chosen = suggestions.children[index];
      if (chosen) text.setAttribute("aria-activedescendant", chosen.id);
      else text.removeAttribute("aria-activedescendant");
    };
    const choose = (teammate) => {
      const typed = mentionBeingTyped(text);
      if (!typed) return close();
      const caret = text.selectionStart;
      const inserted = `@${teammate.handle} `;
      text.value = text.value.slice(0, typed.start) + inserted + text.value.slice(caret);
      const after = typed.start + inserted.length;
      text.setSelectionRange(after, after);
      close();
      text.focus();
    };
    const offer = () => {
      const typed = mentionBeingTyped(text);
      if (!typed) return close();
      offered = teammates
        .filter((teammate) => teammate.id !== me?.id)
        .filter((teammate) => teammate.handle.startsWith(typed.query) || teammate.name.toLowerCase().includes(typed.query))
        .slice(0, SUGGESTED);
      if (!offered.length) return close();
      suggestions.replaceChildren(...offered.map((teammate) => {
        const option = h("li", { id: uniqueId("mention"), role: "option", "aria-selected": "false" },
          h("span", { class: "address-name", text: teammate.name }), " ", h("span", { class: "muted", text: `@${teammate.handle}` }));
        // Chosen without the text losing the focus.
        option.addEventListener("mousedown", (event) => event.preventDefault());
        option.addEventListener("click", () => choose(teammate));
        return option;
      }));
      suggestions.hidden = false;
      highlight(0);
    };
    offerAgain = () => {
      if (document.activeElement === text) offer();
    };
    text.addEventListener("input", offer);
    text.addEventListener("click", offer);
    text.addEventListener("blur", close);
    text.addEventListener("keydown", (event) => {
      if (suggestions.hidden) return;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        const step = event.key === "ArrowDown" ? 1 : -1;
        highlight((active + step + offered.length) % offered.length);
      } else if ((event.key === "Enter" || event.key === "Tab") && offered[active]) {
        event.preventDefault();
        choose(offered[active]);
      } else if (event.key === "Escape") {
        event.preventDefault();
        close();
      }
    });

    const form = h("form", { class: "note-form" },
      labelled("Write a note", text, "Only those who read this mailbox's mail see notes; they are never sent. Type @ to mention a teammate: they are told in their notifications."),
      suggestions,
      h("div", { class: "button-row" }, add),
      said);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      perform(said, [add, text], async () => {
        const added = await api("POST", path, { text: text.value });
        text.value = "";
        notes = [...notes.filter((note) => note.id !== added.note.id), added.note];
        redrawn();
        const told = added.note.mentions.length
          ? ` ${teammates.filter((teammate) => added.note.mentions.includes(teammate.id)).map((teammate) => teammate.name).join(", ")} will be told.`
          : "";
        const untold = added.not_mentioned.length
          ? ` Nobody was told of ${added.not_mentioned.join(", ")}: nobody who reads this mailbox goes by that name.`
          : "";
        return `Note added.${told}${untold}`;
      }, "The note was not added.");
    });
    const holder = panel("Internal note", form, status);
    holder.classList.add("note-composer");
    return holder;
  }
}

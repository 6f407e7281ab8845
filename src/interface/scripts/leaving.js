// Never lose typed work (issue 31): a form a person has typed into holds
// unsaved input until what it holds is saved (an action run through
// perform() succeeds, shared.js) or put back as it was; leaving the page then
// asks first, whether for another section or view of this page (main.js's
// route) or for another page altogether (closing the tab, reloading).
// A form is judged by what its fields hold, compared with what they held
// when the person first came into it, so a form the page fills itself is not
// unsaved until the person changes it. Filters and searches (role="search")
// hold nothing to lose.

/** Each form the person came into, and what its fields held then. */
const found = new Map();

/** What `form`'s fields hold, as one comparable text. */
function held(form) {
  return [...form.elements]
    .map((field) => {
      if (field.type === "checkbox" || field.type === "radio") return String(field.checked);
      if (field.type === "file") return String(field.files?.length ?? 0);
      return "value" in field && field.type !== "submit" && field.type !== "button" ? field.value : "";
    })
    .join("\u0000");
}

/** The forms on the page holding input the person typed and has not saved. */
export function unsavedForms() {
  for (const form of found.keys()) if (!form.isConnected) found.delete(form);
  return [...found].filter(([form, before]) => held(form) !== before).map(([form]) => form);
}

/** What `form` holds now counts as saved (after an action of its succeeded). */
export function markSaved(form) {
  if (form && found.has(form)) found.set(form, held(form));
}

/** Whether the page may be left: nothing unsaved, or the person says to leave it anyway. */
export function mayLeave() {
  if (!unsavedForms().length) return true;
  if (!window.confirm("What you typed here is not saved. Leave this page anyway?")) return false;
  found.clear();
  return true;
}

/** Watches every form on the page for unsaved input, and asks before the page is closed while any holds some. */
export function watchForUnsavedInput() {
  document.addEventListener("focusin", (event) => {
    // The sections' forms, in main; signing in is not work to keep.
    const form = event.target instanceof HTMLElement ? event.target.closest("form") : null;
    if (form?.closest("#main") && !found.has(form) && form.getAttribute("role") !== "search") found.set(form, held(form));
  });
  window.addEventListener("beforeunload", (event) => {
    if (unsavedForms().length) event.preventDefault();
  });
}

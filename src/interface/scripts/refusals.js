// A refusal in the words of the person who met it. The node words its refusals
// for whoever calls its API: it names a field by its API name (`fire_at`,
// `add_labels[0]`), a relation or capability by its code (org.admin), a
// mailbox or person by id, and a badly shaped request by "the route's request
// schema". A person sees the same refusal with the field named by the label
// of the form they filled in, codes by the vocabulary's words and ids by
// name; the node's own words, the code, the field's path and the HTTP status
// stay one click away under "Technical details", for whoever helps them.
//
// A form's control says which API field it fills by its `name`, or by
// `data-field` where the API calls it otherwise (a list's one entry, say):
// that is all a section does to have its refusals worded with its labels.

import { code, h } from "./dom.js";
import { ApiError } from "./api.js";
import { knownVocabulary, loadVocabulary } from "./vocabulary.js";
import { directory } from "./names.js";

// A field's path as the node writes it, in backquotes: a name, then list
// positions and nested names (`add_labels[0]`, `policy.rate_per_minute`).
const BACKQUOTED = /`([^`]+)`/g;
const FIELD_PATH = /^[a-z][a-z0-9_]*(?:\[\d+\]|\.[a-z][a-z0-9_]*)*$/;

// The refusals of a request's shape: the page, not the person, wrote the
// request's form, so unless they name a field the person filled in, the
// page is at fault, and the node's words about schemas help nobody reading it.
const SHAPE_CODES = new Set([
  "invalid_body",
  "missing_body",
  "malformed_json",
  "unexpected_body",
  "unknown_query_parameter",
  "invalid_query_parameter",
  "missing_path_parameter",
  "missing_query_parameter",
  "method_not_allowed",
  "no_such_route",
]);

// What an id's kind is called where the page does not know its name: every
// kind the node names (IdKind, in its order; a test in interface.rs holds the
// two together), so no id reaches a person as it is.
const ID_KINDS = {
  usr: "a person",
  ses: "a session",
  tm: "a team",
  agt: "an agent",
  src: "a reminder source",
  mbx: "a mailbox",
  rcp: "a message",
  snd: "a send",
  evt: "a reminder",
  amg: "an agent's message",
  cnv: "an agents' conversation",
  thr: "a conversation",
  ntf: "a notification",
  btl: "a butler",
  exp: "an export",
  whk: "a webhook",
  msg: "a webhook's message",
  svr: "a saved reply",
  nte: "a note",
  per: "a connected organisation",
  rag: "an agent elsewhere",
};
const ID = new RegExp(`\\b(${Object.keys(ID_KINDS).join("|")})_[0-9A-Za-z]+\\b`, "g");
// A dotted code as relations and capabilities are named (org.admin, mail.read);
// an address's domain looks the same, and is left as it is, as the vocabulary
// does not know it.
const DOTTED_CODE = /\b[a-z]+(?:\.[a-z_]+)+\b/g;
const HAS_DOTTED_CODE = /\b[a-z]+(?:\.[a-z_]+)+\b/;

/** The control in `scope` that fills the API field at `path`, and the words its form labels it with. */
function fieldAt(scope, path) {
  if (!scope || !FIELD_PATH.test(path)) return null;
  // The innermost name first: `policy.rate_per_minute` is the rate's control.
  const names = path.split(/[.[\]]/).filter((part) => part && !/^\d+$/.test(part)).reverse();
  for (const name of names) {
    const control = scope.querySelector(`[name="${name}"], [data-field~="${name}"]`);
    const label = control ? labelOf(control) : null;
    if (label) return { path, control, label };
  }
  return null;
}

/** A control's label as the person reads it: its own, its group's legend, or its accessible name. */
function labelOf(control) {
  // "Link (optional)" is called "Link" in a sentence about it.
  const own = control.labels?.[0]?.textContent?.replace(/\s*\(optional\)\s*$/, "").trim();
  if (own && control.type !== "radio" && control.type !== "checkbox") return own;
  const legend = control.closest("fieldset")?.querySelector("legend")?.textContent?.trim();
  return legend || own || control.getAttribute("aria-label") || null;
}

/** Every field the refusal names that the person can see in `scope`. */
function fieldsNamed(refusal, scope) {
  const found = new Map();
  for (const text of [refusal.message, refusal.reason, refusal.fix]) {
    for (const [, path] of String(text ?? "").matchAll(BACKQUOTED)) {
      if (!found.has(path)) {
        const field = fieldAt(scope, path);
        if (field) found.set(path, field);
      }
    }
  }
  return found;
}

/** The words for a relation's or capability's code, where the vocabulary has them. */
function codeWords(name) {
  const vocabulary = knownVocabulary();
  const relation = vocabulary?.relations.find((candidate) => candidate.name === name);
  // "Administer the node: people, …" reads as "the permission to administer the node".
  if (relation) return `the permission to ${lowerFirst(relation.description.split(/[:(]/)[0].trim().replace(/\.$/, ""))}`;
  const capability = vocabulary?.capabilities.find((candidate) => candidate.name === name);
  return capability ? `“${capability.summary.replace(/\.$/, "")}”` : null;
}

const lowerFirst = (text) => text.charAt(0).toLowerCase() + text.slice(1);

// An operation the node names for an API caller to call ("Remove 3 with
// update_draft"): a person does it with the page in front of them.
const WITH_OPERATION = /\s+with [a-z]+(?:_[a-z]+)+\b/g;
// Any other name in the API's snake case, left bare; not a part of an
// address or a link (first_last@example.org).
const SNAKE_CASE = /(?<![\w.@/-])[a-z]+(?:_[a-z0-9]+)+(?![\w@/-]|\.\w)/g;

/** The node's sentence in the person's words: fields by label, codes by their words, ids by name. */
function inWords(text, fields) {
  if (!text) return text;
  return String(text)
    .replace(WITH_OPERATION, "")
    .replace(BACKQUOTED, (_, inside) => {
      const field = fields.get(inside);
      if (field) return `“${field.label}”`;
      // An example of a query (`q=invoice march`): what the person would type.
      const example = /^[a-z_]+=(.+)$/.exec(inside);
      if (example) return `“${example[1]}”`;
      // A field the page does not show, or a value: plain words, no code marks.
      return FIELD_PATH.test(inside) && inside.includes("_") && !inside.includes(".") ? inside.replace(/\[\d+\]/g, "").replaceAll("_", " ") : inside;
    })
    .replace(DOTTED_CODE, (name) => codeWords(name) ?? name)
    .replace(ID, (id, kind) => directory.nameOf(id) ?? ID_KINDS[kind])
    .replace(SNAKE_CASE, (name) => name.replaceAll("_", " "));
}

/** Whether the refusal names a code the vocabulary, not yet loaded, could word. */
const wantsVocabulary = (refusal) => !knownVocabulary() && [refusal.message, refusal.reason, refusal.fix].some((text) => HAS_DOTTED_CODE.test(String(text ?? "")));

/**
 * The refusal as the person reads it: `message`, `reason` and `fix` in their
 * words, and the first field it names that they can see in `scope` (a form,
 * or whatever holds the controls the action took its values from).
 */
export function personWords(refusal, scope) {
  const fields = fieldsNamed(refusal, scope);
  const field = fields.values().next().value ?? null;
  if (SHAPE_CODES.has(refusal.code)) {
    // A field the request should not have held is the page's doing too.
    const pagesOwn = refusal.code === "invalid_body" && /does not take/.test(refusal.message);
    if (field && !pagesOwn) {
      if (/lacks|leaves out/.test(refusal.message)) {
        return { field, message: `“${field.label}” is needed.`, reason: "It was left empty.", fix: `Fill in “${field.label}”, then try again.` };
      }
      return { field, message: `“${field.label}” was not accepted as it is.`, reason: whyNotTaken(refusal.reason, fields), fix: `Change “${field.label}”, then try again.` };
    }
    return {
      field: null,
      message: "The page sent something the node could not take.",
      reason: "This is a fault in the page, not in anything you entered.",
      fix: "Reload the page and try again. If it happens again, give your administrator the technical details below.",
    };
  }
  return { field, message: inWords(refusal.message, fields), reason: inWords(refusal.reason, fields), fix: inWords(refusal.fix, fields) };
}

// How a parser words a value of the wrong kind ("invalid type: string, expected
// u32"): true, but not words a person reads.
const PARSER_WORDS = /invalid (type|value|length|digit)|unknown variant|expected |missing field|trailing|EOF|at line \d/i;

// A reason that says what a value must be, as a noun phrase ("a day on or
// after `since`", "1 to 40 characters"), rather than a sentence of its own:
// one that opens alike but has a verb ("A peer is named by its host", "An
// agent's outbound policy names domains") is a sentence, said as it is.
const WHAT_IT_MUST_BE = /^(a|an|the|at most|at least|one of|exactly|\d)\b/i;
const HAS_A_VERB = /\b(is|are|names|has|have|must|may)\b/i;

/** Why a field's value was not taken, from the node's reason ("`until`: a day on or after `since`."). */
function whyNotTaken(reason, fields) {
  const detail = String(reason ?? "").replace(/^`[^`]+`:?\s*/, "");
  if (!detail || PARSER_WORDS.test(detail)) return "It does not hold the kind of value it takes.";
  const worded = inWords(detail, fields);
  if (WHAT_IT_MUST_BE.test(worded) && !HAS_A_VERB.test(worded)) return `It must be ${worded.charAt(0).toLowerCase()}${worded.slice(1)}`;
  return worded.charAt(0).toUpperCase() + worded.slice(1);
}

/** Any failure as the node's refusal: an ApiError as it is, a thrown page error as one. */
export function asRefusal(error) {
  if (error instanceof ApiError) return error;
  if (typeof error?.code === "string" && typeof error.message === "string") return new ApiError(error.status ?? 0, error);
  return new ApiError(0, {
    code: "interface_error",
    message: "Something went wrong in the page.",
    reason: String(error?.message ?? error),
    fix: "Reload the page and try again.",
  });
}

/**
 * A refusal, shown in the person's words: what was refused, why, and what
 * would change it, titled by `title` (what was not done) and, where it is
 * about a field in `scope`, naming that field by its label; the field's
 * control is marked invalid and focused (`mark`). The node's own words, the
 * code, the field's path and the HTTP status are under "Technical details".
 */
export function refusalBox(error, title, { scope = null, mark = false } = {}) {
  const refusal = asRefusal(error);
  const words = personWords(refusal, scope);
  if (words.field && mark) {
    words.field.control.setAttribute("aria-invalid", "true");
    words.field.control.focus();
  }
  const heading = words.field ? `${title ? `${title.replace(/[.:]\s*$/, "")}: check` : "Check"} “${words.field.label}”.` : title;
  const box = h("div", { class: "refusal", role: "alert" },
    heading ? h("p", { class: "refusal-title", text: heading }) : null,
    h("p", { class: "refusal-message", text: words.message }),
    words.reason ? h("p", {}, h("span", { class: "refusal-label", text: "Why: " }), words.reason) : null,
    words.fix ? h("p", {}, h("span", { class: "refusal-label", text: "What to do: " }), words.fix) : null,
    technicalDetails(refusal, words));
  // Codes are worded once the vocabulary has come; the box is drawn again then.
  if (wantsVocabulary(refusal)) {
    loadVocabulary().then(() => {
      if (box.isConnected && knownVocabulary()) box.replaceWith(refusalBox(error, title, { scope }));
    }, () => {});
  }
  return box;
}

/** The refusal as the node said it, for whoever helps the person: closed until asked for. */
function technicalDetails(refusal, words) {
  const field = words.field;
  const differs = (said, worded) => Boolean(said) && said !== worded;
  const fact = (term, ...description) => [h("dt", { text: term }), h("dd", {}, description)];
  return h("details", { class: "refusal-details" },
    h("summary", { text: "Technical details" }),
    h("dl", {},
      fact("Code", code(refusal.code)),
      refusal.status ? fact("HTTP status", String(refusal.status)) : null,
      field ? fact("Field", code(field.path)) : null,
      // The node's own words, where the person's differ from them.
      differs(refusal.message, words.message) ? fact("The node said", refusal.message) : null,
      differs(refusal.reason, words.reason) ? fact("Why", refusal.reason) : null,
      differs(refusal.fix, words.fix) ? fact("What to do", refusal.fix) : null));
}

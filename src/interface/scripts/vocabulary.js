// The vocabulary of relations and capabilities, loaded once for the sections
// that grant relations and mint agents, and shown in its own words: a relation
// by its description, a capability by its summary, each with its code in the
// title and on request (shared.js's codesToggle()).

import { code, h, onRequest } from "./dom.js";
import { api } from "./api.js";

// The relation vocabulary comes from the node (GET /api/agent-capabilities),
// which derives it from the contract, so the interface never restates it.
let vocabularyLoad = null;
let vocabularyLoaded = null;
export function loadVocabulary() {
  vocabularyLoad ??= api("GET", "/api/agent-capabilities").then((vocabulary) => {
    vocabularyLoaded = vocabulary;
    return vocabulary;
  }, (error) => {
    vocabularyLoad = null;
    throw error;
  });
  return vocabularyLoad;
}

/** The vocabulary if it has come, for words that cannot wait for it (refusals.js); null before. */
export const knownVocabulary = () => vocabularyLoaded;

/** Words and their code: the code alone where the vocabulary has no words for it. */
function term(words, name) {
  if (!words) return code(name);
  return h("span", { class: "term" }, h("span", { class: "term-words", title: name, text: words }), onRequest(name));
}

/** The words for a relation (its description), as text: a sentence can carry them. */
export const relationText = (vocabulary, name) => vocabulary.relations.find((relation) => relation.name === name)?.description.replace(/\.$/, "") ?? name;

/**
 * A relation in words: what holding it lets the holder do, as a sentence of its
 * own, or `inSentence`, without its full stop, for a sentence to carry.
 */
export function relationTerm(vocabulary, name, { inSentence = false } = {}) {
  const description = vocabulary.relations.find((relation) => relation.name === name)?.description;
  return term(inSentence ? description?.replace(/\.$/, "") : description, name);
}

/** The words for a capability (its summary), as text. */
export const capabilityText = (vocabulary, name) => vocabulary.capabilities.find((capability) => capability.name === name)?.summary ?? name;

/** A capability in words: its summary. */
export const capabilityTerm = (vocabulary, name) => term(vocabulary.capabilities.find((capability) => capability.name === name)?.summary, name);

// The vocabulary of relations and capabilities, loaded once for the sections
// that grant relations and mint agents.

import { api } from "./api.js";

// The relation vocabulary comes from the node (GET /api/agent-capabilities),
// which derives it from the contract, so the interface never restates it.
let vocabularyLoad = null;
export function loadVocabulary() {
  vocabularyLoad ??= api("GET", "/api/agent-capabilities").catch((error) => {
    vocabularyLoad = null;
    throw error;
  });
  return vocabularyLoad;
}

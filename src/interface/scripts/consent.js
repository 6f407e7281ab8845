// The consent an OAuth client asks for (SPEC §1, issue 16): an MCP client
// that speaks only OAuth sends the person's browser to /oauth/authorize, which
// serves this same page; the shell (main.js) notices the path and, once
// someone is signed in, shows this view instead of the sections.
//
// The page's own query string is the client's request, passed to the node
// unchanged (`GET /api/oauth/consent`), which checks it (the client, its
// redirect address, PKCE, the resource) and answers who is asking and what the
// signed-in person holds. A request the node refuses is shown as its refusal,
// and the browser is never sent anywhere: an address the node has not
// checked is not one to send a person to.
//
// Allowing mints an agent the signed-in person sponsors, with the
// capabilities and mailbox relations chosen here as its ceiling, and sends the
// browser back to the client with a code for it; the choices are the mint
// form's (agent-ceiling.js), with the person themselves as the sponsor.
// Denying sends the browser back with the refusal the node worded (`deny_to`).

import { code, facts, h, inOrder, onRequest } from "./dom.js";
import { api } from "./api.js";
import { codesToggle, panel, perform, refusalBox, statusArea } from "./shared.js";
import { loadVocabulary } from "./vocabulary.js";
import { ceilingChoices } from "./agent-ceiling.js";

/** Where the node serves this page for a client's authorization request. */
const AUTHORIZE_PATH = "/oauth/authorize";

/** Whether this page was opened as a client's authorization request, rather than as the interface. */
export const isConsentRequest = () => location.pathname === AUTHORIZE_PATH;

/** The parts of the client's request the node needs again when the person allows it. */
const FORWARDED = ["client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "resource"];

/** How the node came to know the client, in words a person can weigh. */
function registrationWords(client) {
  if (client.registered_by === "metadata_document") {
    return ["Its name and addresses come from the document it publishes at ", code(client.client_id), "."];
  }
  return "It registered itself with this node: its name is what it says it is, and nobody has checked it. The address it sends you back to is what you can trust.";
}

/**
 * Shows the consent for the request in the page's query string in `view`,
 * and sets the page's title. `heading` is the view's level-one heading, named
 * once the client is known.
 */
export async function renderConsent(view, heading) {
  const [consent, vocabulary] = await Promise.all([
    api("GET", `/api/oauth/consent${location.search}`),
    loadVocabulary(),
  ]);
  const { client } = consent;
  const appName = inOrder(client.name || "An app");
  heading.textContent = `Connect ${appName} to Mailroom`;
  document.title = `Connect ${appName} · Mailroom`;

  const asking = panel("Who is asking",
    h("p", { class: "redirect-host" },
      "Allowing or denying will send you back to ", h("strong", { class: "host", text: client.redirect_host }),
      client.on_this_computer ? ": an app running on this computer." : "."),
    facts([
      ["App", h("span", {}, h("span", { title: client.client_id, text: appName }), onRequest(client.client_id))],
      ["Sends you back to", h("span", { class: "web-address", text: client.redirect_uri })],
      ["Its site", client.client_uri ? h("span", { class: "web-address", text: client.client_uri }) : null],
      ["Known to this node", h("span", {}, registrationWords(client))],
      ["It will use", h("span", {}, "Mailroom's MCP endpoint, ", code(consent.resource))],
    ]));

  const choices = ceilingChoices(vocabulary, {
    grantee: "the app",
    actFor: "you",
    noMailboxes: "You hold nothing on any mailbox, so the app could only use what needs no mailbox.",
    // The holder is the signed-in person from the start: there is no one to choose.
    noHolder: () => ".",
    cannotGive: ({ missing, address, what }) =>
      `Ask an administrator to grant you ${missing} on ${address}, or leave ${what} out.`,
    refuses: "The node refuses to connect an app with a capability no chosen mailbox lets work.",
    requested: consent.requested_capabilities,
  });
  choices.setHolder({ self: true });
  choices.showHoldings(consent.mailboxes);
  choices.update();

  const allow = h("button", { type: "submit", text: "Allow" });
  const deny = h("button", { type: "button", class: "secondary", text: "Deny" });
  const status = statusArea();
  const form = h("form", { class: "mint-form consent-form" },
    h("p", { text: `Allowing gives ${appName} an agent of its own that acts for you: it can use only the capabilities you choose, only on the mailboxes you choose, and never more than you hold yourself, from one request to the next. What it does is recorded in the audit trail as its act for you. You can disconnect it at any time under Account, in Connected apps.` }),
    h("fieldset", {},
      h("legend", { text: "Capabilities" }),
      h("p", { class: "hint", text: `What ${appName} may do, in the product's words. Those it asked for are ticked to start with; untick what it should not have.` }),
      choices.capabilityList),
    h("fieldset", {},
      h("legend", { text: "Mailboxes" }),
      h("p", { class: "hint", text: "What it may hold on each mailbox. It can hold only what you hold there, and only for as long as you hold it." }),
      choices.grid),
    choices.warnings,
    h("div", { class: "button-row" }, allow, deny),
    status);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await perform(status, [allow, deny], async () => {
      const request = new URLSearchParams(location.search);
      const body = {};
      for (const name of FORWARDED) if (request.has(name)) body[name] = request.get(name);
      body.capabilities = choices.chosenCapabilities().map((capability) => capability.name);
      body.mailboxes = choices.grantsChosen();
      const { redirect_to } = await api("POST", "/api/oauth/consent", body);
      location.assign(redirect_to);
      return `Allowed: sending you back to ${client.redirect_host}…`;
    }, `${appName} was not connected.`);
  });
  deny.addEventListener("click", () => {
    for (const control of [allow, deny]) control.disabled = true;
    location.assign(consent.deny_to);
  });

  view.append(codesToggle(view), asking, panel("What it may do", form));
}

/** What the view shows when the node refuses the request itself: never a redirect. */
export const consentRefused = (error) => refusalBox(error, "This request to connect an app cannot be shown.");

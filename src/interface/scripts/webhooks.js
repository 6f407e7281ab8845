// Webhooks (decision 0038): the endpoints outside the node told of what changes
// in a mailbox (an administrator's, under Mailboxes) or in an agent's inbox (its
// sponsor's, on its Connections page), each with its latest deliveries and what
// became of them; subscribing one, whose signing secret is shown once; and
// removing one, asked once.
//
// The keys of STATES are the contract's WebhookDeliveryState; a test in
// src/interface.rs holds them to it.

import { h, hidden, labelled, replace, time } from "./dom.js";
import { api } from "./api.js";
import { actionForm, askOnce, empty, loading, panel, refusalBox, secretField, statusArea, success } from "./shared.js";

/** Where a delivery stands, in words. */
const STATES = {
  pending: { text: "Waiting to be tried again" },
  delivered: { text: "Delivered" },
  failed: { text: "Not delivered, given up" },
  withheld: { text: "Withheld" },
};

/** How many of a webhook's latest deliveries are shown. */
const SHOWN = 5;

/** One delivery, in words: its kind, where it stands, when, and why it failed. */
function deliveryLine(delivery) {
  const state = STATES[delivery.state]?.text ?? delivery.state;
  const tries = delivery.attempts === 1 ? "tried once" : `tried ${delivery.attempts} times`;
  return h("li", { class: delivery.state === "delivered" ? null : "error-text" },
    h("code", { text: delivery.kind }), `: ${state} (${tries}) `, time(delivery.last_attempt_at ?? delivery.committed_at),
    delivery.last_error ? `: ${delivery.last_error}.` : ".",
    delivery.next_attempt_at ? [" Next try ", time(delivery.next_attempt_at), "."] : "");
}

/**
 * The Webhooks panel for the webhooks at `path` (`/api/mailboxes/<id>/webhooks`,
 * `/api/agents/<id>/webhooks`), `about` naming what they are told of ("this
 * mailbox's changes").
 */
export function webhooksPanel(path, about) {
  const list = h("div", {}, loading());
  const said = statusArea();

  function card(webhook) {
    const remove = h("button", { type: "button", class: "secondary" }, "Remove", hidden(` the webhook to ${webhook.url}`));
    const cardStatus = statusArea();
    const kinds = webhook.kinds.length ? webhook.kinds.join(", ") : "every change";
    const deliveries = webhook.deliveries.slice(0, SHOWN);
    const article = h("article", { class: "card" },
      h("h3", { class: "webhook-url", text: webhook.url }),
      h("p", { class: "muted" }, `Told of ${kinds}; subscribed `, time(webhook.created_at), "."),
      deliveries.length
        ? h("ul", { class: "deliveries", "aria-label": `Latest deliveries to ${webhook.url}` }, deliveries.map(deliveryLine))
        : h("p", { class: "muted", text: "Nothing has been posted to it yet." }),
      h("div", { class: "button-row" }, remove), cardStatus);
    remove.addEventListener("click", () => askOnce(cardStatus, {
      from: remove,
      label: `Remove the webhook to ${webhook.url}?`,
      question: `Remove the webhook to ${webhook.url}? It is told nothing more, and what it has not yet been posted is withheld.`,
      yes: "Remove it",
      danger: false,
      act: async () => {
        await api("DELETE", `${path}/${encodeURIComponent(webhook.id)}`);
        await refresh();
        said.replaceChildren(success(`Removed the webhook to ${webhook.url}.`));
      },
      failure: "The webhook was not removed.",
    }));
    return article;
  }

  async function refresh() {
    const { webhooks } = await api("GET", path);
    replace(list, webhooks.length ? webhooks.map(card) : empty(`No webhook is told of ${about} yet.`));
  }

  const url = h("input", { type: "url", name: "url", required: true, maxlength: 2048, autocomplete: "off", placeholder: "https://hooks.example.org/mailroom" });
  const kinds = h("input", { type: "text", name: "kinds", autocomplete: "off", spellcheck: "false" });
  const subscribe = actionForm({
    fields: [
      labelled("Address (https)", url, "Each change is posted there as it happens (ids and kinds, never content), signed in the Standard Webhooks format."),
      labelled("Only these kinds (optional)", kinds, "Separated by commas, such as receive_mail, update_thread. Empty: every change."),
    ],
    submit: "Subscribe webhook",
    failureTitle: "The webhook was not subscribed.",
    async onSubmit(form) {
      const chosen = kinds.value.split(",").map((kind) => kind.trim()).filter(Boolean);
      const created = await api("POST", path, { url: url.value, kinds: chosen });
      form.reset();
      await refresh();
      said.replaceChildren(
        success(`Subscribed ${created.webhook.url}. Its signing secret is shown only now: give it to the endpoint, which checks each post with it.`),
        secretField("Signing secret", created.secret));
    },
  });

  refresh().catch((error) => replace(list, refusalBox(error, "The webhooks could not be shown.")));
  return panel("Webhooks",
    h("p", { class: "muted", text: `Endpoints outside the node told of ${about} as it happens, and what became of their latest deliveries. A failed post is tried again for up to a day.` }),
    list, said, subscribe);
}

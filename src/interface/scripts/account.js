// Account: who is signed in, changing their own password, the apps they
// connected through OAuth (consent.js): each is an agent they sponsor, shown
// with its ceiling held of total as the agents list shows one, and
// disconnected (the agent revoked) from here; and the senders whose remote
// images they chose always to see (message-body.js), each removable; and
// their own signature (replies.js).

import { code, h, hidden, labelCells, labelled, row, table, time } from "./dom.js";
import { me } from "./session.js";
import { api, segment, SessionOver } from "./api.js";
import { actionForm, askOnce, empty, loading, panel, perform, refusalBox, rowStatus } from "./shared.js";
import { loadVocabulary } from "./vocabulary.js";
import { myMailboxes } from "./mail-shared.js";
import { agentMailboxes, agentStateBadge, ceilingOf } from "./agent-ceiling.js";
import { mySignature } from "./replies.js";

/**
 * The apps the signed-in person connected (`GET /api/me/connected-apps`), a
 * row each: who it is and where it sends them back to, when it was connected
 * and last used, what it may do (held of total) and on which mailboxes, and
 * Disconnect, asked twice, which revokes its agent.
 */
async function connectedApps() {
  const [{ apps }, vocabulary] = await Promise.all([
    api("GET", "/api/me/connected-apps"),
    loadVocabulary(),
    // Addresses for the mailboxes an app holds something on; the list is readable without them.
    myMailboxes().catch((error) => {
      if (error instanceof SessionOver) throw error;
    }),
  ]);
  if (!apps.length) return empty("No apps are connected. An app you allow when it asks to connect to Mailroom is listed here.");

  function appRow(app) {
    const { agent } = app;
    const live = agent.state !== "revoked" && agent.state !== "expired";
    const disconnect = live ? h("button", { type: "button", class: "secondary danger" }, "Disconnect", hidden(` ${app.client_name}`)) : null;
    const tableRow = row(
      h("div", { class: "agent-name" }, h("strong", { title: app.client_id, text: app.client_name }),
        h("span", { class: "on-request" }, " ", code(agent.id))),
      h("span", { class: "web-address", text: app.redirect_host }),
      h("div", { class: "connected" }, time(app.connected_at), " ", agentStateBadge(agent.state)),
      app.last_used_at ? time(app.last_used_at) : h("span", { class: "muted", text: "Not yet" }),
      ceilingOf(vocabulary, agent),
      agentMailboxes(vocabulary, agent),
      disconnect ?? h("span", { class: "muted", text: "None: a disconnected app stays disconnected" }));

    disconnect?.addEventListener("click", () => askOnce(rowStatus(tableRow), {
      from: disconnect,
      label: `Disconnect ${app.client_name}?`,
      question: `Disconnect ${app.client_name}? Its tokens stop working on its next request. To use it again, you would allow it again when it asks.`,
      yes: ["Disconnect for good", hidden(` ${app.client_name}`)],
      act: async () => {
        const changed = await api("POST", `/api/me/connected-apps/${segment(agent.id)}/disconnect`);
        const next = appRow(changed);
        tableRow.replaceWith(next);
        labelCells(next);
        return `Disconnected ${app.client_name}: its tokens are refused from its next request on.`;
      },
      failure: `${app.client_name} was not disconnected.`,
    }));
    return tableRow;
  }

  const wrap = table("Apps connected to your account", ["App", "Sends you back to", "Connected", "Last used", "Capabilities", "Mailboxes", "Actions"], apps.map(appRow), { stack: true });
  wrap.querySelector("table").classList.add("agents", "connected-apps");
  return wrap;
}

/**
 * The senders whose remote images the person always sees (`GET
 * /api/me/image-senders`), a row each with Remove, which hides their images
 * again at once; the choice is theirs, so nothing is asked twice.
 */
async function imageSenders() {
  const { senders, limit } = await api("GET", "/api/me/image-senders");
  if (!senders.length) return empty("Remote images in mail are hidden until you show them. A sender you choose to always show images from is listed here.");
  function senderRow(sender) {
    const remove = h("button", { type: "button", class: "secondary" }, "Remove", hidden(` ${sender.address}`));
    const tableRow = row(h("span", { class: "mail-address", text: sender.address }), time(sender.added_at), remove);
    remove.addEventListener("click", () => {
      const status = rowStatus(tableRow);
      perform(status, [remove], async () => {
        await api("DELETE", `/api/me/image-senders/${segment(sender.address)}`);
        status.closest("tr")?.remove();
        tableRow.remove();
        return null;
      }, `Images from ${sender.address} are still always shown.`);
    });
    return tableRow;
  }
  return h("div", {},
    h("p", { class: "muted", text: `Images in their mail are shown at once when their domain vouched for the message; everyone else's stay hidden until you show them. You may keep ${limit}.` }),
    table("Senders whose images you always see", ["Sender", "Chosen", "Actions"], senders.map(senderRow), { stack: true }));
}

export async function renderAccount(view) {
  const facts = h("dl", { class: "facts" },
    h("dt", { text: "Name" }), h("dd", { text: me.name }),
    h("dt", { text: "Email" }), h("dd", { text: me.email ?? "" }),
    h("dt", { text: "ID" }), h("dd", {}, code(me.id)),
    h("dt", { text: "Administrator" }), h("dd", { text: me.is_admin ? "Yes (org.admin)" : "No" }),
    h("dt", { text: "Teams" }), h("dd", {}, me.teams.length ? me.teams.map((team, index) => [index ? ", " : null, team.name]) : h("span", { class: "muted", text: "None" })));

  const current = h("input", { type: "password", name: "current_password", autocomplete: "current-password", required: true });
  const replacement = h("input", { type: "password", name: "new_password", autocomplete: "new-password", required: true });
  const form = actionForm({
    fields: [
      // Lets a password manager know whose password this is.
      h("input", { type: "text", name: "username", autocomplete: "username", value: me.email ?? me.id, readonly: true, hidden: true }),
      labelled("Current password", current),
      labelled("New password", replacement, "At least 12 characters. Your other sessions are signed out."),
    ],
    submit: "Change password",
    failureTitle: "The password was not changed.",
    async onSubmit(form) {
      const answer = await api("POST", "/api/me/password", { current_password: current.value, new_password: replacement.value });
      form.reset();
      const others = answer.other_sessions_revoked;
      return `Password changed. ${others === 1 ? "1 other session was" : `${others} other sessions were`} signed out.`;
    },
  });
  const apps = h("div", {}, loading());
  const images = h("div", {}, loading());
  const signature = h("div", {}, loading());
  view.append(panel("Who you are", facts), panel("Change my password", form), panel("My signature", signature),
    panel("Connected apps", apps), panel("Images in mail", images));
  const fill = async (where, draw, failure) => {
    try {
      where.replaceChildren(await draw());
    } catch (error) {
      if (error instanceof SessionOver) return;
      where.replaceChildren(refusalBox(error, failure));
    }
  };
  await Promise.all([
    fill(apps, connectedApps, "Your connected apps could not be shown."),
    fill(images, imageSenders, "The senders whose images you always see could not be shown."),
    fill(signature, mySignature, "Your signature could not be shown."),
  ]);
}

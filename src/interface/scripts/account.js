// Account: who is signed in, and changing their own password.

import { code, h, labelled } from "./dom.js";
import { me } from "./session.js";
import { api } from "./api.js";
import { actionForm, panel } from "./shared.js";

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
  view.append(panel("Who you are", facts), panel("Change my password", form));
}

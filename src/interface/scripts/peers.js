// Connected organisations (SPEC §14, decision 0050; administrators): the other
// organisations whose nodes converse with this one. Connecting one by its
// domain issues the credential its node presents here, shown once, to give to
// its administrator; the credential that organisation issued to this node is
// set here and never shown back (only whether it is set); disconnecting one
// ends the credential it was issued and forgets the one it gave. That cannot
// be undone (connecting again issues another credential), so it is asked once.
//
// Which agents here the organisation's agents reach, and which of theirs the
// agents here may message, is each agent owner's, on its Connections page.

import { code, facts, h, hidden, labelled, onRequest, replace, time, uniqueId } from "./dom.js";
import { api, segment } from "./api.js";
import { actionForm, askOnce, codesToggle, empty, loading, panel, perform, secretField, statusArea, success } from "./shared.js";
import { directory, named } from "./names.js";
import { featureOff, isFeatureOff } from "./connections.js";

/**
 * What a new peer's credential is shown in, once: the node keeps only its
 * hash, and the other organisation's node presents it.
 */
function handover(peer, credential) {
  const headingId = uniqueId("handover");
  const done = h("button", { type: "button", class: "secondary", text: "I have copied it: hide it" });
  const box = h("section", { class: "once", "aria-labelledby": headingId },
    h("h3", { id: headingId, text: `The credential for ${peer.name}` }),
    h("p", { class: "once-warning" }, h("strong", { text: "Shown once. " }),
      `Give it to the administrator of ${peer.name}, by a way you trust: their node presents it when their agents message agents here. This node keeps only a hash of it, so it will not be shown again, and leaving this page loses it.`),
    secretField(`Credential for ${peer.name}`, credential),
    h("p", { class: "hint" }, "Their administrator sets it on their node as the credential for ", code(location.hostname),
      ". When they give you the one their node issued for this one, set it below, under ", peer.name, "."),
    h("div", { class: "button-row" }, done));
  done.addEventListener("click", () => box.remove());
  return box;
}

export async function renderPeers(view) {
  const list = h("div", { class: "peer-cards" }, loading());
  const handovers = h("div", { class: "handovers" });
  const said = statusArea();

  /** Says what an action on a peer's card did, above the list, where the focus goes: the card is drawn again. */
  function tell(...words) {
    const notice = success(...words);
    notice.setAttribute("tabindex", "-1");
    said.replaceChildren(notice);
    notice.focus();
  }

  const domain = h("input", { type: "text", name: "domain", required: true, maxlength: 253, autocomplete: "off", spellcheck: "false", placeholder: "partner.example" });
  const name = h("input", { type: "text", name: "name", required: true, maxlength: 100, autocomplete: "off" });
  const given = h("input", { type: "text", name: "outbound_credential", maxlength: 500, autocomplete: "off", spellcheck: "false" });
  const connect = actionForm({
    fields: [
      labelled("Domain", domain, "The host its node answers on, as in its agents' card addresses: no https://, no path."),
      labelled("Name", name, "What to call the organisation here."),
      labelled("The credential they gave you (optional)", given, "If their administrator has connected this node already. You can set it later."),
    ],
    submit: "Connect organisation",
    failureTitle: "The organisation was not connected.",
    async onSubmit(form) {
      const credential = given.value.trim();
      const created = await api("POST", "/api/peers", { domain: domain.value.trim(), name: name.value.trim(), ...(credential ? { outbound_credential: credential } : {}) });
      form.reset();
      await refresh();
      const box = handover(created.peer, created.credential);
      handovers.replaceChildren(box);
      box.querySelector("input")?.focus();
      return ["Connected ", h("strong", { text: created.peer.name }), ". The credential to give them is below."];
    },
  });

  /**
   * The form that sets the credential `peer` issued to this node: what was
   * given is sent once and never shown again, here or anywhere.
   */
  function credentialForm(peer) {
    const field = h("input", { type: "text", name: "outbound_credential", required: true, maxlength: 500, autocomplete: "off", spellcheck: "false" });
    const save = h("button", { type: "submit" }, peer.has_outbound_credential ? "Replace their credential" : "Set their credential", hidden(` for ${peer.name}`));
    const status = statusArea();
    const form = h("form", { class: "action-form", "aria-label": `The credential ${peer.name} gave this node` },
      h("div", { class: "fields" },
        labelled(`Credential from ${peer.name}`, field, "Paste the credential their administrator gave you (mr_per_…), unchanged: messages to their agents carry it. It is kept and never shown again."),
        h("div", { class: "field actions" }, save)),
      status);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      await perform(status, [save], async () => {
        const changed = await api("PATCH", `/api/peers/${segment(peer.id)}`, { outbound_credential: field.value.trim() });
        await refresh();
        tell(`Set the credential ${changed.name} gave this node: messages to agents at ${changed.domain} carry it from now on.`);
        return null;
      }, "The credential was not set.");
    });
    return form;
  }

  function peerCard(peer) {
    const titleId = uniqueId("peer");
    const live = !peer.revoked_at;
    const status = statusArea();
    const disconnect = live ? h("button", { type: "button", class: "secondary danger" }, "Disconnect", hidden(` ${peer.name}`)) : null;
    disconnect?.addEventListener("click", () => askOnce(status, {
      from: disconnect,
      label: `Disconnect ${peer.name}?`,
      question: `Disconnect ${peer.name} (${peer.domain})? The credential this node issued to them opens nothing from now on, and the one they gave is forgotten. What was sent stays as it is. This cannot be undone: connecting again issues another credential, for them to set again.`,
      yes: ["Disconnect for good", hidden(` ${peer.name}`)],
      act: async () => {
        const ended = await api("DELETE", `/api/peers/${segment(peer.id)}`);
        await refresh();
        tell(`Disconnected ${ended.name}: the credential it was issued is refused from now on.`);
        return null;
      },
      failure: `${peer.name} was not disconnected.`,
    }));
    const theirs = !live ? h("span", { class: "muted", text: "Forgotten" })
      : peer.has_outbound_credential ? h("span", { class: "badge on", text: "Set" })
        : [h("span", { class: "badge due", text: "Not set" }), h("span", { class: "since", text: "Messages to their agents carry no credential until it is set." })];
    return h("article", { class: "card peer-card", "aria-labelledby": titleId },
      h("div", { class: "message-head" },
        h("h3", { id: titleId }, h("span", { title: peer.id, text: peer.name }), onRequest(peer.id)),
        h("div", { class: "badges" }, live ? h("span", { class: "badge on", text: "Connected" }) : h("span", { class: "badge off", text: "Disconnected" }))),
      facts([
        ["Domain", h("span", { class: "remote-domain", text: peer.domain })],
        ["Connected", [time(peer.created_at), h("span", { class: "since" }, " by ", named(peer.created_by))]],
        ["Disconnected", peer.revoked_at ? time(peer.revoked_at) : null],
        ["Their credential", theirs],
      ]),
      live ? credentialForm(peer) : null,
      disconnect ? h("div", { class: "button-row" }, disconnect) : null,
      status);
  }

  async function refresh() {
    const [{ peers }] = await Promise.all([api("GET", "/api/peers"), directory.loadPeople()]);
    replace(list, peers.length ? peers.map(peerCard) : empty("No organisation is connected yet."));
  }

  try {
    await refresh();
  } catch (error) {
    if (!isFeatureOff(error)) throw error;
    replace(view, featureOff(error));
    return;
  }
  view.append(
    codesToggle(view),
    panel("Connect an organisation",
      h("p", { class: "muted", text: "Another organisation's node, connected by its domain, reaches the agents here whose owners list them on this node's card, under each one's delivery policy; agents here reach theirs when their owners allow it. Each administrator issues the other a credential, and sets the one they were given." }),
      connect, handovers),
    said,
    panel("Every organisation", list));
}

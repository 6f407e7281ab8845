// The OpenAPI document cannot lie about the code: every operation it declares is
// called here on the running Worker, and every answer (here and in every other
// end-to-end file, through the harness's client) is validated against it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { documentedAnswers, ROOT, ADMIN } from "./harness.mjs";
import { startDesk, personNamed } from "./fixtures.mjs";

const openapi = JSON.parse(readFileSync(join(ROOT, "contract", "openapi.json"), "utf8"));
let node, call, token, admin, desk;

before(async () => {
  // Only Ana is a destination the mail binding accepts, so a send can fail.
  ({ node, call, token, admin, desk } = await startDesk({
    sendEmail: { allowed_destination_addresses: ["ana@customer.example"] },
    vars: { FEATURE_AGENT_NETWORK: "true" },
  }));
});
after(() => node?.stop());

test("every documented operation answers as documented, successes and refusals alike", async () => {
  const BEN = personNamed("Ben");
  const { password } = BEN;
  const ben = await desk.person(BEN);
  // Ben's whole session, not only its access token: its refresh token is used below.
  const benSession = (await call("POST", "/api/sessions", { body: { email: BEN.email, password } })).body.session;
  const team = (await call("POST", "/api/teams", { token, body: { name: "Support" } })).body;
  const mailbox = await desk.mailbox("support@mailroom.test", "Support");
  await desk.grant(ben.id, ["mailbox.metadata.read", "mailbox.content.read", "message.export", "send.propose", "approval.decide"], mailbox.id);
  await desk.grant(admin.id, ["approval.decide"], mailbox.id);
  const raw = readFileSync(join(ROOT, "tests", "fixtures", "mail", "multipart-attachment.eml"));
  assert.equal(await node.deliver("sender@outside.example", "support@mailroom.test", raw), null);
  const benToken = benSession.access_token;
  const receipt = (await call("GET", `/api/mailboxes/${mailbox.id}/messages`, { token: benToken })).body.messages[0];
  // A second message, for an administrator to delete.
  const plain = readFileSync(join(ROOT, "tests", "fixtures", "mail", "plain.eml"));
  assert.equal(await node.deliver("ana@customer.example", "support@mailroom.test", plain), null);
  const doomed = (await call("GET", `/api/mailboxes/${mailbox.id}/messages?limit=1`, { token: benToken })).body.messages[0];
  assert.notEqual(doomed.id, receipt.id);
  const sends = `/api/mailboxes/${mailbox.id}/sends`;
  const draft = async () =>
    (await call("POST", sends, { token: benToken, body: { to: ["ana@customer.example"], subject: "Re: contract", text: "Thanks.", reply_to: receipt.id } })).body.id;
  const versions = new Map();
  const submitted = async () => {
    const id = await draft();
    versions.set(id, (await call("POST", `${sends}/${id}/submit`, { token: benToken })).body.version);
    return id;
  };
  // A decision names the version its decider was shown.
  const decided = async (decision, extra = {}) => {
    const id = await submitted();
    return ["POST", `${sends}/${id}/${decision}`, { token, body: { version: versions.get(id), ...extra } }];
  };
  const attachedDraft = async () => {
    const id = await draft();
    await call("POST", `${sends}/${id}/attachments`, { token: benToken, body: { name: "a.txt", content_type: "text/plain", content_base64: "aGVsbG8=" } });
    return id;
  };
  const refused = async () => {
    const id = await submitted();
    await call("POST", `${sends}/${id}/refuse`, { token, body: { version: versions.get(id), reason: "Shorter, please." } });
    return id;
  };
  const failed = async () => {
    const created = await call("POST", sends, { token: benToken, body: { to: ["bea@unverified.example"], subject: "Refund", text: "Sent." } });
    const { version } = (await call("POST", `${sends}/${created.body.id}/submit`, { token: benToken })).body;
    const approved = await call("POST", `${sends}/${created.body.id}/approve`, { token, body: { version } });
    assert.equal(approved.body.state, "failed", approved.text);
    return created.body.id;
  };
  // Ben's feed holds a refusal of his; a butler sponsored by Ben works the mailbox.
  const benNotification = async () => {
    await refused();
    return (await call("GET", "/api/me/notifications", { token: benToken })).body.notifications[0].id;
  };
  const butlers = `/api/mailboxes/${mailbox.id}/butlers`;
  const newButler = {
    name: "Contracts wait",
    sponsor: ben.id,
    rules: { conditions: [{ on: "subject", contains: "contract" }], effects: [{ do: "set_status", status: "waiting" }] },
  };
  const butler = async () => (await call("POST", butlers, { token, body: newButler })).body.id;
  // A webhook subscribed at `path` (a mailbox's or an agent's) by `bearer`: its path.
  const webhookAt = async (path, bearer = token) =>
    `${path}/${(await call("POST", path, { token: bearer, body: { url: "http://127.0.0.1:9/mailroom" } })).body.webhook.id}`;
  const mailboxWebhooks = `/api/mailboxes/${mailbox.id}/webhooks`;
  // Ben drafts from the mailbox, so he keeps its saved replies and signature.
  const savedReplies = `/api/mailboxes/${mailbox.id}/saved-replies`;
  let savedReplyCount = 0;
  const savedReply = async () => {
    savedReplyCount += 1;
    const body = { name: `Saved ${savedReplyCount}`, body: "Hi {{customer.name}}" };
    return `${savedReplies}/${(await call("POST", savedReplies, { token: benToken, body })).body.id}`;
  };
  const mailboxSignature = `/api/mailboxes/${mailbox.id}/signature`;
  // Ben may export; an export of his, built by the per-minute run: its path.
  await desk.grant(ben.id, ["ediscovery.export"], "org");
  const exported = async () => {
    const requested = await call("POST", "/api/exports", { token: benToken, body: { mailbox_ids: [mailbox.id] } });
    await node.scheduled("* * * * *");
    return `/api/exports/${requested.body.id}`;
  };
  const message = `/api/mailboxes/${mailbox.id}/messages/${receipt.id}`;
  const threads = (await call("GET", `/api/mailboxes/${mailbox.id}/threads`, { token: benToken })).body.threads;
  const thread = `/api/mailboxes/${mailbox.id}/threads/${threads[threads.length - 1].id}`;
  // A note of Ben's in it, to delete: its path.
  const note = async () => `${thread}/notes/${(await call("POST", `${thread}/notes`, { token: benToken, body: { text: "Seen." } })).body.note.id}`;
  const minted = (await call("POST", "/api/agents", {
    token,
    body: { name: "Bot", sponsor: ben.id, capabilities: ["identity.read"], mailboxes: [], delivery: "pairing_code" },
  })).body;
  const agent = minted.agent;
  const pairing = (await call("POST", `/api/agents/${agent.id}/pairing-code`, { token })).body;
  // A connected organisation, changed and then disconnected by the walk.
  const walkedPeer = (await call("POST", "/api/peers", { token, body: { domain: "walked.example", name: "Walked" } })).body.peer.id;
  const agentCredential = (await call("POST", "/api/agents/pair", { body: { code: minted.pairing.code } })).body.credential;

  // Reminders: Ben's own inbox, a source, and an event it pushes for him.
  const reminder = async () =>
    (await call("POST", "/api/me/events", { token: benToken, body: { title: "Visa renewal", due_at: "2027-03-01" } })).body.id;
  const doneReminder = async () => {
    const id = await reminder();
    await call("POST", `/api/me/events/${id}/done`, { token: benToken });
    return id;
  };
  const source = (await call("POST", "/api/reminder-sources", { token, body: { name: "visa-office" } })).body;
  const pushed = { person: "ben@example.com", source_ref: "visa-4471", topic: "renewal", title: "Visa renewal", due_at: "2027-03-01" };

  // Agent messaging: two of Ben's agents, one asking, one answering.
  const messenger = async (name) => {
    const created = await call("POST", "/api/agents", { token, body: { name, sponsor: ben.id, capabilities: ["agent.messaging"], mailboxes: [] } });
    return { id: created.body.agent.id, credential: created.body.credential };
  };
  const asker = await messenger("Asker");
  const answerer = await messenger("Answerer");
  const ask = async () =>
    (await call("POST", "/api/agent-messages", {
      token: asker.credential,
      body: { recipient: answerer.id, kind: "request", content: { text: "37 + 58?" }, idempotency_key: crypto.randomUUID() },
    })).body;
  /** A request the answerer holds a lease on: [its inbox path, its fencing token]. */
  const leased = async () => {
    await ask();
    const claimed = (await call("POST", "/api/agent-inbox/leases", { token: answerer.credential, body: { max: 1 } })).body.messages[0];
    return [`/api/agent-inbox/${claimed.id}`, claimed.fencing_token];
  };
  const asked = await ask();
  const [acking, ackToken] = await leased();
  const [renewing, renewToken] = await leased();
  const [replying, replyToken] = await leased();
  const [rejecting, rejectToken] = await leased();
  const a2aCall = { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "37 + 58?" }] } } };

  // OAuth: a registered client, Ben's consent, and the code it is answered with.
  const redirect = "http://127.0.0.1:4567/callback";
  const pkce = { code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" };
  const oauthClient = async () => (await call("POST", "/oauth/register", { body: { client_name: "Every route", redirect_uris: [redirect] } })).body.client_id;
  const authorization = (client_id) =>
    new URLSearchParams({ response_type: "code", client_id, redirect_uri: redirect, code_challenge: pkce.code_challenge, code_challenge_method: "S256", state: "s" });
  const consent = (client_id) => ({
    client_id, redirect_uri: redirect, code_challenge: pkce.code_challenge, code_challenge_method: "S256", capabilities: ["identity.read"], mailboxes: [],
  });
  const consented = async () => {
    const client_id = await oauthClient();
    const given = (await call("POST", "/api/oauth/consent", { token: benToken, body: consent(client_id) })).body;
    return { client_id, code: new URL(given.redirect_to).searchParams.get("code"), agent: given.agent.id };
  };
  const form = (fields) => ({ raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  const exchange = async () => {
    const { client_id, code } = await consented();
    return form({ grant_type: "authorization_code", code, client_id, redirect_uri: redirect, code_verifier: pkce.code_verifier });
  };

  const calls = [
    ["GET", "/.well-known/oauth-protected-resource", {}],
    ["GET", "/.well-known/oauth-protected-resource/mcp", {}],
    ["GET", "/.well-known/oauth-authorization-server", {}],
    ["POST", "/oauth/register", { body: { client_name: "Every route", redirect_uris: [redirect] } }],
    ["POST", "/oauth/register", { body: { redirect_uris: ["http://app.example/callback"] } }],
    ["GET", `/oauth/authorize?${authorization(await oauthClient())}`, {}],
    ["GET", `/api/oauth/consent?${authorization(await oauthClient())}`, { token: benToken }],
    ["GET", `/api/oauth/consent?${authorization("mrc_unknown")}`, { token: benToken }],
    ["POST", "/api/oauth/consent", { token: benToken, body: consent(await oauthClient()) }],
    ["POST", "/oauth/token", await exchange()],
    ["POST", "/oauth/token", form({ grant_type: "password" })],
    ["POST", "/oauth/revoke", form({ token: "mr_ort_unknown", client_id: "mrc_unknown" })],
    // A revocation that names no client (RFC 7009 §2.1): invalid_request, naming `client_id`.
    ["POST", "/oauth/revoke", form({ token: "mr_ort_unknown" })],
    ["PUT", "/api/me/image-senders/News%40Letters.example", { token: benToken }],
    ["GET", "/api/me/image-senders", { token: benToken }],
    ["DELETE", "/api/me/image-senders/news@letters.example", { token: benToken }],
    ["GET", "/api/me/connected-apps", { token: benToken }],
    ["POST", savedReplies, { token: benToken, body: { name: "Thanks", body: "Thank you, {{customer.first_name}}." } }],
    ["GET", savedReplies, { token: benToken }],
    ["PATCH", await savedReply(), { token: benToken, body: { body: "Hello {{customer.name}}" } }],
    ["DELETE", await savedReply(), { token: benToken }],
    ["PUT", mailboxSignature, { token: benToken, body: { text: "The {{mailbox.name}} team" } }],
    ["GET", mailboxSignature, { token: benToken }],
    ["DELETE", mailboxSignature, { token: benToken }],
    ["PUT", "/api/me/signature", { token: benToken, body: { text: "Ben\n{{me.email}}" } }],
    ["GET", "/api/me/signature", { token: benToken }],
    ["DELETE", "/api/me/signature", { token: benToken }],
    ["POST", `/api/me/connected-apps/${(await consented()).agent}/disconnect`, { token: benToken }],
    ["GET", "/"],
    ["GET", "/api/me/agents", { token: benToken }],
    ["GET", "/api/agent-messages", { token: asker.credential }],
    ["GET", `/api/agent-messages/${asked.id}`, { token: asker.credential }],
    ["GET", "/api/agent-inbox", { token: answerer.credential }],
    ["GET", "/api/agent-inbox", { token: benToken }],
    ["POST", "/api/agent-inbox/leases", { token: answerer.credential, body: { max: 2, lease_seconds: 60 } }],
    ["POST", `${acking}/ack`, { token: answerer.credential, body: { fencing_token: ackToken } }],
    ["POST", `${acking}/ack`, { token: answerer.credential, body: { fencing_token: ackToken } }],
    ["POST", `${renewing}/renew`, { token: answerer.credential, body: { fencing_token: renewToken, lease_seconds: 120 } }],
    ["POST", `${replying}/reply`, { token: answerer.credential, body: { fencing_token: replyToken, content: { sum: 95 } } }],
    ["POST", `${rejecting}/reject`, { token: answerer.credential, body: { fencing_token: rejectToken, reason: "Not mine." } }],
    ["GET", "/api/agent-conversations", { token: asker.credential }],
    ["GET", `/api/agent-conversations/${asked.conversation_id}`, { token: benToken }],
    ["POST", `/api/agent-conversations/${asked.conversation_id}/cancel`, { token: asker.credential }],
    ["POST", `/api/agent-conversations/${asked.conversation_id}/cancel`, { token: asker.credential }],
    ["POST", "/api/agent-messages", { token: asker.credential, body: { recipient: answerer.id, kind: "request", content: 1, idempotency_key: "x", conversation_id: asked.conversation_id } }],
    ["GET", `/api/agents/${answerer.id}/messaging`, { token: benToken }],
    ["GET", `/api/agents/${answerer.id}/remote-deliveries`, { token: benToken }],
    // A push about a message, with the token the node would have given for it, and without.
    ["POST", `/a2a/outbox/${asked.id}`, { body: {}, headers: { "x-a2a-notification-token": createHmac("sha256", node.secrets.SESSION_SECRET).update(`mailroom a2a push\0${asked.id}`).digest("hex") } }],
    ["POST", `/a2a/outbox/${asked.id}`, { body: {}, headers: { "x-a2a-notification-token": "forged" } }],
    ["GET", "/api/peers", { token }],
    ["POST", "/api/peers", { token, body: { domain: "walk.example", name: "Walk" } }],
    ["POST", "/api/peers", { token, body: { domain: "walk.example", name: "Walk again" } }],
    ["PATCH", `/api/peers/${walkedPeer}`, { token, body: { outbound_credential: "their-credential" } }],
    ["DELETE", `/api/peers/${walkedPeer}`, { token }],
    ["PATCH", `/api/peers/${walkedPeer}`, { token, body: { name: "Gone" } }],
    ["PATCH", `/api/agents/${answerer.id}/messaging`, { token: benToken, body: { rate_per_minute: 120, allowed_peers: [asker.id, ben.id] } }],
    ["PATCH", `/api/agents/${answerer.id}/messaging`, { token: benToken, body: { pending_cap: 0 } }],
    ["GET", `/api/agents/${answerer.id}/inbox`, { token: benToken }],
    ["GET", `/api/agents/${answerer.id}/inbox`, { token: asker.credential }],
    ["POST", `/api/agent-messages/${asked.id}/push-configs`, { token: asker.credential, body: { id: "cfg-1", url: "http://127.0.0.1:9/push" } }],
    ["POST", `/api/agent-messages/${asked.id}/push-configs`, { token: asker.credential, body: { url: "https://10.0.0.1/push" } }],
    ["GET", `/api/agent-messages/${asked.id}/push-configs`, { token: asker.credential }],
    ["GET", `/api/agent-messages/${asked.id}/push-configs`, { token: answerer.credential }],
    ["DELETE", `/api/agent-messages/${asked.id}/push-configs/cfg-1`, { token: asker.credential }],
    ["DELETE", `/api/agent-messages/${asked.id}/push-configs/cfg-1`, { token: asker.credential }],
    ["POST", `/api/agents/${answerer.id}/webhooks`, { token: benToken, body: { url: "http://127.0.0.1:9/agent" } }],
    ["POST", `/api/agents/${answerer.id}/webhooks`, { token: asker.credential, body: { url: "http://127.0.0.1:9/agent" } }],
    ["GET", `/api/agents/${answerer.id}/webhooks`, { token: benToken }],
    ["DELETE", await webhookAt(`/api/agents/${answerer.id}/webhooks`, benToken), { token: benToken }],
    ["GET", `/a2a/${answerer.id}/.well-known/agent-card.json`],
    ["GET", `/a2a/${answerer.id}/.well-known/agent-card.json?A2A-Version=0.3`],
    ["POST", `/a2a/${answerer.id}`, { token: asker.credential, body: a2aCall, headers: { "a2a-version": "1.0" } }],
    ["POST", `/a2a/${answerer.id}/`, { token: asker.credential, body: a2aCall, headers: { "a2a-version": "1.0" } }],
    ["POST", `/a2a/${answerer.id}`, { body: a2aCall, headers: { "a2a-version": "1.0" } }],
    ["POST", `/a2a/${answerer.id}`, { token: asker.credential, body: { jsonrpc: "2.0", method: "SendMessage", params: {} } }],
    ["POST", `/a2a/${answerer.id}`, { token: asker.credential, raw: "[]", headers: { "content-type": "application/json" } }],
    ["POST", `/a2a/${answerer.id}`, { token: asker.credential, raw: "{}", headers: { "content-type": "text/plain" } }],
    ["GET", "/.well-known/agent-card.json"],
    ["POST", "/a2a", { body: a2aCall, headers: { "a2a-version": "1.0" } }],
    ["POST", "/a2a", { body: { jsonrpc: "2.0", method: "GetTask", params: {} } }],
    ["GET", "/interface/main.js"],
    ["GET", "/interface/nothing.js"],
    ["POST", "/api/setup", { body: { setup_token: "x", email: "x@example.com", name: "X", password } }],
    ["POST", "/api/sessions/refresh", { body: { refresh_token: benSession.refresh_token } }],
    ["GET", "/api/me", { token }],
    ["GET", "/api/people", { token }],
    ["GET", `/api/people/${ben.id}`, { token }],
    ["GET", `/api/people/${ben.id}`, { token: benSession.access_token }],
    ["GET", `/api/people/${admin.id}`, { token: benSession.access_token }],
    ["GET", "/api/teams", { token }],
    ["PUT", `/api/teams/${team.id}/members/${ben.id}`, { token }],
    ["DELETE", `/api/teams/${team.id}/members/${ben.id}`, { token }],
    ["POST", "/api/relations", { token, body: { subject: ben.id, relation: "org.admin", object: "org" } }],
    ["GET", `/api/relations?subject=${ben.id}`, { token }],
    ["POST", "/api/relations/revoke", { token, body: { subject: ben.id, relation: "org.admin", object: "org" } }],
    ["POST", "/api/relations/revoke", { token, body: { subject: ben.id, relation: "org.admin", object: "org" } }],
    ["GET", "/api/audit?limit=5", { token }],
    ["GET", "/api/audit/verify", { token }],
    ["POST", "/api/audit/checkpoints", { token }],
    ["GET", "/api/audit/witness", { token }],
    // A receiver that is not there: should a checkpoint be written while it is
    // the witness (or just after, to tell it it was removed), nothing leaves the machine.
    ["PUT", "/api/audit/witness", { token, body: { webhook_url: "http://127.0.0.1:9/witness" } }],
    ["PUT", "/api/audit/witness", { token, body: {} }],
    ["DELETE", "/api/audit/witness", { token }],
    ["GET", "/api/agent-capabilities", { token }],
    ["GET", "/api/mailboxes", { token: benToken }],
    ["GET", "/api/mailboxes/readable", { token: benToken }],
    ["GET", "/api/mailboxes/all", { token }],
    ["POST", "/api/mailboxes", { token, body: { address: "support@mailroom.test", display_name: "Taken" } }],
    ["PATCH", `/api/mailboxes/${mailbox.id}`, { token, body: { display_name: "Help desk" } }],
    ["GET", `/api/mailboxes/${mailbox.id}/messages?limit=1`, { token: benToken }],
    ["GET", message, { token: benToken }],
    ["GET", `${message}/body`, { token: benToken }],
    ["GET", `${message}/original`, { token: benToken }],
    ["GET", `${message}/attachments/0`, { token: benToken }],
    ["GET", `${message}/attachments/7`, { token: benToken }],
    ["GET", "/api/search?q=contract", { token: benToken }],
    ["GET", `/api/mailboxes/${mailbox.id}/threads?status=open&q=contract`, { token: benToken }],
    ["GET", `/api/mailboxes/${mailbox.id}/threads?assignee=someone`, { token: benToken }],
    ["GET", thread, { token: benToken }],
    ["PATCH", thread, { token: benToken, body: { status: "waiting", assignee: ben.id } }],
    ["PATCH", thread, { token: benToken, body: { assignee: "usr_00000000000000000000000000" } }],
    ["PUT", `${thread}/read`, { token: benToken }],
    ["DELETE", `${thread}/read`, { token: benToken }],
    ["GET", `/api/mailboxes/${mailbox.id}/threads/thr_00000000000000000000000000`, { token: benToken }],
    ["POST", `${thread}/notes`, { token: benToken, body: { text: "Refund approved, @nobody." } }],
    ["GET", `${thread}/notes`, { token: benToken }],
    ["DELETE", await note(), { token: benToken }],
    ["DELETE", `${thread}/notes/nte_00000000000000000000000000`, { token: benToken }],
    ["DELETE", `/api/mailboxes/${mailbox.id}/messages/${doomed.id}`, { token }],
    ["DELETE", `/api/mailboxes/${mailbox.id}/messages/${doomed.id}`, { token: benToken }],
    ["POST", sends, { token: benToken, body: { to: [], subject: "x", text: "y" } }],
    ["GET", sends, { token: benToken }],
    ["GET", `${sends}/${await draft()}`, { token: benToken }],
    ["PATCH", `${sends}/${await draft()}`, { token: benToken, body: { text: "Edited" } }],
    ["DELETE", `${sends}/${await draft()}`, { token: benToken }],
    ["POST", `${sends}/${await draft()}/submit`, { token: benToken }],
    ["POST", `${sends}/${await submitted()}/cancel`, { token: benToken }],
    ["GET", "/api/approvals", { token }],
    ["GET", "/api/me/notifications?unread=true", { token: benToken }],
    ["POST", "/api/me/notifications/read", { token: benToken, body: { all: true } }],
    ["POST", "/api/me/notifications/read", { token: benToken, body: {} }],
    ["DELETE", `/api/me/notifications/${await benNotification()}/read`, { token: benToken }],
    ["DELETE", "/api/me/notifications/ntf_00000000000000000000000000/read", { token: benToken }],
    ["POST", butlers, { token, body: newButler }],
    ["POST", butlers, { token, body: { ...newButler, sponsor: "agt_00000000000000000000000000" } }],
    ["GET", butlers, { token }],
    ["GET", butlers, { token: benToken }],
    ["GET", `${butlers}/${await butler()}`, { token }],
    ["PATCH", `${butlers}/${await butler()}`, { token, body: { name: "Renamed", rules: newButler.rules } }],
    ["POST", `${butlers}/${await butler()}/publish`, { token, body: { version: 1 } }],
    ["POST", `${butlers}/${await butler()}/publish`, { token, body: { version: 9 } }],
    ["POST", `${butlers}/${await butler()}/simulate`, { token, body: { receipt_id: receipt.id } }],
    ["POST", `${butlers}/${await butler()}/simulate`, { token, body: { receipt_id: "rcp_00000000000000000000000000" } }],
    ["POST", mailboxWebhooks, { token, body: { url: "http://127.0.0.1:9/mailroom", kinds: ["receive_mail"] } }],
    ["POST", mailboxWebhooks, { token, body: { url: "https://192.168.1.1/mailroom" } }],
    ["GET", mailboxWebhooks, { token }],
    ["GET", mailboxWebhooks, { token: benToken }],
    ["DELETE", await webhookAt(mailboxWebhooks), { token }],
    ["DELETE", `${mailboxWebhooks}/whk_00000000000000000000000000`, { token }],
    ["POST", "/api/exports", { token: benToken, body: { mailbox_ids: [mailbox.id], query: "contract" } }],
    ["POST", "/api/exports", { token: benToken, body: { mailbox_ids: [mailbox.id], since: "yesterday" } }],
    ["POST", "/api/exports", { token, body: { mailbox_ids: [mailbox.id] } }],
    ["GET", `${await exported()}`, { token: benToken }],
    ["GET", "/api/exports", { token: benToken }],
    ["GET", `${await exported()}/objects`, { token: benToken }],
    ["GET", `${await exported()}/objects/manifest`, { token: benToken }],
    ["GET", `${await exported()}/objects/${receipt.id}`, { token: benToken }],
    ["GET", `${await exported()}/objects/rcp_00000000000000000000000000`, { token: benToken }],
    ["DELETE", `${await exported()}`, { token: benToken }],
    ["DELETE", "/api/exports/exp_00000000000000000000000000", { token: benToken }],
    await decided("approve"),
    ["POST", `${sends}/${await submitted()}/approve`, { token, body: { version: "0".repeat(64) } }],
    ["POST", `${sends}/${await failed()}/retry`, { token: benToken }],
    ["POST", `${sends}/${await submitted()}/retry`, { token: benToken }],
    await decided("refuse", { reason: "Not yet." }),
    ["POST", `${sends}/${await refused()}/redraft`, { token: benToken }],
    ["POST", `${sends}/${await draft()}/attachments`, { token: benToken, body: { name: "a.txt", content_type: "text/plain", content_base64: "aGVsbG8=" } }],
    ["POST", `${sends}/${await draft()}/attachments`, { token: benToken, body: { name: "a/b.txt", content_type: "text/plain", content_base64: "aGVsbG8=" } }],
    ["GET", `${sends}/${await attachedDraft()}/attachments/0`, { token: benToken }],
    ["GET", `${sends}/${await draft()}/attachments/3`, { token: benToken }],
    ["DELETE", `${sends}/${await attachedDraft()}/attachments/0`, { token: benToken }],
    ["POST", `${sends}/${await submitted()}/attachments`, { token: benToken, body: { name: "a.txt", content_type: "text/plain", content_base64: "aGVsbG8=" } }],
    ["POST", `${sends}/${await draft()}/redraft`, { token: benToken }],
    ["POST", "/mcp", { token: benToken, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }],
    ["GET", `/api/people/${ben.id}/mailboxes`, { token }],
    ["POST", "/api/me/events", { token: benToken, body: { title: "Dentist", due_at: "2027-01-12T09:00" } }],
    ["POST", "/api/me/events", { token: benToken, body: { title: "Dentist", due_at: "2027-01-12", fire_at: "2027-01-13" } }],
    ["GET", "/api/me/events?state=scheduled", { token: benToken }],
    ["GET", `/api/me/events/${await reminder()}`, { token: benToken }],
    ["PATCH", `/api/me/events/${await reminder()}`, { token: benToken, body: { due_at: "2027-03-02" } }],
    ["DELETE", `/api/me/events/${await reminder()}`, { token: benToken }],
    ["POST", `/api/me/events/${await reminder()}/done`, { token: benToken }],
    ["POST", `/api/me/events/${await doneReminder()}/reopen`, { token: benToken }],
    ["POST", `/api/me/events/${await reminder()}/ack`, { token: benToken }],
    ["GET", "/api/me/profile", { token: benToken }],
    ["PATCH", "/api/me/profile", { token: benToken, body: { tz: "Europe/Berlin", quiet_start: "22:00", quiet_end: "07:00" } }],
    ["PUT", "/api/me/profile/webhook", { token: benToken, body: { url: "https://hooks.example.org/ben" } }],
    ["DELETE", "/api/me/profile/webhook", { token: benToken }],
    ["GET", "/api/reminder-sources", { token }],
    ["PUT", "/api/source/events", { token: source.credential, body: pushed }],
    ["PUT", "/api/source/events", { token: benToken, body: pushed }],
    ["DELETE", "/api/source/events?person=ben@example.com&source_ref=visa-4471&topic=renewal", { token: source.credential }],
    ["POST", `/api/reminder-sources/${source.source.id}/revoke`, { token }],
    ["PUT", "/api/source/events", { token: source.credential, body: pushed }],
    ["GET", "/api/agents", { token }],
    ["POST", "/api/agents", { token, body: { name: "Bot", sponsor: ben.id, capabilities: ["mail.read"], mailboxes: [] } }],
    ["GET", `/api/agents/${agent.id}`, { token }],
    ["POST", `/api/agents/${agent.id}/pause`, { token }],
    ["POST", `/api/agents/${agent.id}/resume`, { token }],
    ["POST", `/api/agents/${agent.id}/pairing-code`, { token }],
    ["POST", "/api/agents/pair", { body: { code: pairing.code } }],
    ["GET", "/api/me", { token: agentCredential }],
    ["POST", `/api/agents/${agent.id}/revoke`, { token }],
    ["POST", "/mcp", { token, body: { jsonrpc: "2.0", method: "notifications/initialized" } }],
    ["POST", "/mcp", { token, raw: "[]", headers: { "content-type": "application/json" } }],
    ["POST", "/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }],
    // Disabling Ben ends his sessions, so it comes after every call made as him.
    ["POST", `/api/people/${ben.id}/disable`, { token }],
    ["POST", `/api/people/${ben.id}/enable`, { token }],
    ["POST", `/api/people/${ben.id}/password`, { token, body: { new_password: "another long enough password" } }],
    ["POST", "/api/me/password", { token, body: { current_password: ADMIN.password, new_password: ADMIN.password } }],
    ["DELETE", "/api/sessions/current", { token }],
  ];
  for (const [method, path, options] of calls) {
    const response = await call(method, path, options);
    assert.ok(response.status < 500, `${method} ${path}: ${response.text}`);
  }
  // Every success an operation documents was given here and matched its schema;
  // a refusal alone proves nothing about them. (Its refusals are each listed by
  // status, and every answer in every file is held to that list.)
  const unseen = Object.entries(openapi.paths).flatMap(([template, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) => {
      const name = `${method.toUpperCase()} ${template}`;
      const seen = documentedAnswers.get(name) ?? new Set();
      return Object.keys(operation.responses)
        .filter((key) => /^2\d\d$/.test(key) && !seen.has(key))
        .map((key) => `${name} ${key}`);
    }),
  );
  assert.deepEqual(unseen, [], "documented answers never given by the running Worker");
});

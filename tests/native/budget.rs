//! The round-trip budget: every route, driven with a real fixture, costs at most
//! two storage round trips (reads batched with the authentication lookup, writes
//! batched with the audit row).
//!
//! `fixture` matches on every `RouteId`, so a new route does not compile until it
//! has a fixture here, and so cannot escape the budget.

use mailroom::testing::{RequestExt, request};
use mailroom_contract::{RouteId, registry};
use serde_json::json;

use crate::support::*;

/// The most round trips any route may take.
const BUDGET: u32 = 2;

/// A request that exercises the route's full path (reads, writes, audit), and the
/// status it must answer with.
pub(crate) fn fixture(world: &World, route: RouteId) -> (mailroom::core::http::Request, u16) {
    let (ben, ben_token) = world.person(&format!("ben-{route:?}@example.com").to_lowercase());
    let team = world.team(&format!("Team {route:?}"));
    let admin = |method: &str, path: &str| request(method, path).bearer(&world.admin_token);
    let as_ben = |method: &str, path: &str| request(method, path).bearer(&ben_token);
    // A mailbox of its own for every route, with a received message, on which ben
    // holds every mailbox relation and the administrator may decide.
    let address = format!("box-{route:?}@mailroom.test").to_lowercase();
    let mailbox = world.mailbox(&address);
    let receipt = world.deliver("multipart-attachment", &address);
    world.grant_all(
        &ben,
        &["mailbox.metadata.read", "mailbox.content.read", "message.export", "send.propose", "approval.decide"],
        &mailbox,
    );
    world.grant_all(&world.admin_id, &["approval.decide"], &mailbox);
    let message = format!("/api/mailboxes/{mailbox}/messages/{receipt}");
    let sends = format!("/api/mailboxes/{mailbox}/sends");
    let draft = || {
        let created = world.call(
            "POST",
            &sends,
            Some(&ben_token),
            Some(json!({ "to": ["ana@customer.example"], "subject": "Re: contract", "text": "Thanks.", "reply_to": receipt })),
        );
        body(&created)["id"].as_str().unwrap().to_string()
    };
    let threads = format!("/api/mailboxes/{mailbox}/threads");
    let thread = || {
        let listed = world.call("GET", &threads, Some(&ben_token), None);
        format!("{threads}/{}", body(&listed)["threads"][0]["id"].as_str().unwrap())
    };
    let agent =
        || world.mint(&ben, &["mail.triage"], json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]));
    let submitted = || {
        let send = draft();
        world.call("POST", &format!("{sends}/{send}/submit"), Some(&ben_token), None);
        send
    };
    // A webhook subscribed to the mailbox, or to an agent: its path.
    let mailbox_webhooks = format!("/api/mailboxes/{mailbox}/webhooks");
    let saved_replies = format!("/api/mailboxes/{mailbox}/saved-replies");
    let mailbox_signature = format!("/api/mailboxes/{mailbox}/signature");
    let saved_reply = || {
        let reply = json!({ "name": "Thanks", "body": "Thank you, {{customer.first_name}}." });
        let created = world.call("POST", &saved_replies, Some(&ben_token), Some(reply));
        format!("{saved_replies}/{}", body(&created)["id"].as_str().unwrap())
    };
    // A conversation's notes, with one written, and a teammate to mention.
    let notes = || format!("{}/notes", thread());
    let note = || {
        let written = world.call("POST", &notes(), Some(&ben_token), Some(json!({ "text": "Checked the invoice." })));
        format!("{}/{}", notes(), body(&written)["note"]["id"].as_str().unwrap())
    };
    let new_webhook = || json!({ "url": "https://hooks.example.com/mailroom", "kinds": ["receive_mail"] });
    let webhook = |webhooks: &str| {
        let created = world.admin("POST", webhooks, Some(new_webhook()));
        format!("{webhooks}/{}", body(&created)["webhook"]["id"].as_str().unwrap())
    };
    // A request one agent of ben's sent another: its push configs' path and
    // the sender's credential.
    let push_configs = || {
        let (asker, asker_token) = world.messenger(&ben);
        let (answerer, _) = world.messenger(&ben);
        let sent = world.send_message(&asker_token, &answerer, "request", json!({ "text": "Ping" }));
        let _ = asker;
        (format!("/api/agent-messages/{}/push-configs", sent["id"].as_str().unwrap()), asker_token)
    };
    // A butler on the mailbox, sponsored by ben: its path.
    let butlers = format!("/api/mailboxes/{mailbox}/butlers");
    let rules = || json!({ "conditions": [{ "on": "subject", "contains": "contract" }], "effects": [{ "do": "set_status", "status": "waiting" }] });
    let new_butler = || json!({ "name": "Waiting on contracts", "sponsor": ben, "rules": rules() });
    let butler = || {
        let created = world.admin("POST", &butlers, Some(new_butler()));
        format!("{butlers}/{}", body(&created)["id"].as_str().unwrap())
    };
    // A send of ben's refused: a notification in ben's feed.
    let refused_for_ben = || {
        let send = submitted();
        let refusal = world.refusal_of(&world.admin_token, &format!("{sends}/{send}"), "Not yet.");
        world.admin("POST", &format!("{sends}/{send}/refuse"), Some(refusal));
    };
    // An export of the mailbox requested by ben, who may export, and built: its path.
    let export = || {
        world.grant_all(&ben, &["ediscovery.export"], "org");
        let requested = world.call("POST", "/api/exports", Some(&ben_token), Some(json!({ "mailbox_ids": [mailbox] })));
        world.node.run_every_minute();
        format!("/api/exports/{}", body(&requested)["id"].as_str().unwrap())
    };
    match route {
        RouteId::InterfaceShell => (request("GET", "/"), 200),
        RouteId::InterfaceModule => (request("GET", "/interface/main.js"), 200),
        RouteId::SetUpNode => (
            request("POST", "/api/setup").json(json!({
                "setup_token": mailroom::testing::TEST_SETUP_TOKEN,
                "email": "late@example.com", "name": "Late", "password": PASSWORD
            })),
            409,
        ),
        RouteId::SignIn => {
            (request("POST", "/api/sessions").json(json!({ "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD })), 201)
        }
        RouteId::RefreshSession => {
            let (_, refresh) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
            (request("POST", "/api/sessions/refresh").json(json!({ "refresh_token": refresh })), 200)
        }
        RouteId::SignOut => {
            let (access, _) = sign_in(&world.node, ADMIN_EMAIL, ADMIN_PASSWORD);
            (request("DELETE", "/api/sessions/current").bearer(&access), 200)
        }
        RouteId::GetMe => (admin("GET", "/api/me"), 200),
        RouteId::ChangePassword => {
            let body = json!({ "current_password": PASSWORD, "new_password": "a new long password" });
            (request("POST", "/api/me/password").bearer(&ben_token).json(body), 200)
        }
        RouteId::ListPeople => (admin("GET", "/api/people"), 200),
        RouteId::CreatePerson => (
            admin("POST", "/api/people").json(json!({ "email": "cy@example.com", "name": "Cy", "password": PASSWORD })),
            201,
        ),
        RouteId::GetPerson => (admin("GET", &format!("/api/people/{ben}")), 200),
        RouteId::DisablePerson => (admin("POST", &format!("/api/people/{ben}/disable")), 200),
        RouteId::ResetPassword => (
            admin("POST", &format!("/api/people/{ben}/password"))
                .json(json!({ "new_password": "a brand new long password" })),
            200,
        ),
        RouteId::EnablePerson => (admin("POST", &format!("/api/people/{ben}/enable")), 200),
        RouteId::ListTeams => (admin("GET", "/api/teams"), 200),
        RouteId::CreateTeam => (admin("POST", "/api/teams").json(json!({ "name": "Brand new" })), 201),
        RouteId::AddTeamMember => (admin("PUT", &format!("/api/teams/{team}/members/{ben}")), 200),
        RouteId::RemoveTeamMember => {
            world.admin("PUT", &format!("/api/teams/{team}/members/{ben}"), None);
            (admin("DELETE", &format!("/api/teams/{team}/members/{ben}")), 200)
        }
        RouteId::ListRelations => (admin("GET", "/api/relations"), 200),
        RouteId::GrantRelation => (
            admin("POST", "/api/relations")
                .json(json!({ "subject": format!("{team}#member"), "relation": "org.admin", "object": "org" })),
            201,
        ),
        RouteId::RevokeRelation => {
            world.grant(&ben, "org.admin", "org");
            (
                admin("POST", "/api/relations/revoke")
                    .json(json!({ "subject": ben, "relation": "org.admin", "object": "org" })),
                200,
            )
        }
        RouteId::ListAuditEntries => (admin("GET", "/api/audit"), 200),
        RouteId::VerifyAuditChain => (admin("GET", "/api/audit/verify"), 200),
        RouteId::WriteAuditCheckpoint => (admin("POST", "/api/audit/checkpoints"), 201),
        RouteId::ShowAuditWitness => (admin("GET", "/api/audit/witness"), 200),
        RouteId::SetAuditWitness => {
            (admin("PUT", "/api/audit/witness").json(json!({ "webhook_url": "https://auditor.example/witness" })), 200)
        }
        RouteId::RemoveAuditWitness => (admin("DELETE", "/api/audit/witness"), 200),
        RouteId::ListAgentCapabilities => (request("GET", "/api/agent-capabilities").bearer(&ben_token), 200),
        RouteId::ListMailboxes => (as_ben("GET", "/api/mailboxes"), 200),
        RouteId::ListReadableMailboxes => (as_ben("GET", "/api/mailboxes/readable"), 200),
        RouteId::ListAllMailboxes => (admin("GET", "/api/mailboxes/all"), 200),
        RouteId::CreateMailbox => (
            admin("POST", "/api/mailboxes").json(json!({ "address": "new@mailroom.test", "display_name": "New" })),
            201,
        ),
        RouteId::UpdateMailbox => {
            (admin("PATCH", &format!("/api/mailboxes/{mailbox}")).json(json!({ "display_name": "Renamed" })), 200)
        }
        RouteId::ListMessages => (as_ben("GET", &format!("/api/mailboxes/{mailbox}/messages")), 200),
        RouteId::GetMessage => (as_ben("GET", &message), 200),
        RouteId::GetMessageBody => (as_ben("GET", &format!("{message}/body?html=true")), 200),
        RouteId::GetMessageOriginal => (as_ben("GET", &format!("{message}/original")), 200),
        RouteId::GetAttachment => (as_ben("GET", &format!("{message}/attachments/0")), 200),
        RouteId::DeleteMessage => (admin("DELETE", &message), 200),
        RouteId::SearchMessages => (as_ben("GET", "/api/search?q=contract"), 200),
        RouteId::ListThreads => {
            (as_ben("GET", &format!("{threads}?status=open&unread=true&q=contract&label=vip")), 200)
        }
        RouteId::GetThread => (as_ben("GET", &thread()), 200),
        RouteId::UpdateThread => {
            // Snoozed too (decision 0048): its index row rides the commit, or follows it.
            let change = json!({ "status": "waiting", "assignee": ben.clone(), "add_labels": ["vip"],
                "remove_labels": ["x"], "snoozed_until": "2027-01-15T08:00:00Z" });
            (as_ben("PATCH", &thread()).json(change), 200)
        }
        RouteId::ListNotes => {
            note();
            (as_ben("GET", &notes()), 200)
        }
        RouteId::AddNote => {
            let (carol, _) = world.person("carol-notes@example.com");
            world.grant_all(&carol, &["mailbox.content.read"], &mailbox);
            (as_ben("POST", &notes()).json(json!({ "text": "@carol-notes can you confirm?" })), 201)
        }
        RouteId::DeleteNote => (as_ben("DELETE", &note()), 200),
        RouteId::MarkThreadRead => (as_ben("PUT", &format!("{}/read", thread())), 200),
        RouteId::MarkThreadUnread => (as_ben("DELETE", &format!("{}/read", thread())), 200),
        RouteId::ListSends => (as_ben("GET", &sends), 200),
        RouteId::CreateDraft => (
            as_ben("POST", &sends)
                .json(json!({ "to": ["ana@customer.example"], "subject": "Hi", "text": "Hello", "reply_to": receipt })),
            201,
        ),
        RouteId::GetSend => (as_ben("GET", &format!("{sends}/{}", draft())), 200),
        RouteId::UpdateDraft => {
            (as_ben("PATCH", &format!("{sends}/{}", draft())).json(json!({ "text": "Edited" })), 200)
        }
        RouteId::DeleteDraft => (as_ben("DELETE", &format!("{sends}/{}", draft())), 200),
        RouteId::SubmitSend => (as_ben("POST", &format!("{sends}/{}/submit", draft())), 200),
        RouteId::CancelSend => (as_ben("POST", &format!("{sends}/{}/cancel", submitted())), 200),
        RouteId::AddSendAttachment => (
            as_ben("POST", &format!("{sends}/{}/attachments", draft()))
                .json(json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" })),
            201,
        ),
        RouteId::RemoveSendAttachment => {
            let send = draft();
            let file = json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" });
            world.call("POST", &format!("{sends}/{send}/attachments"), Some(&ben_token), Some(file));
            (as_ben("DELETE", &format!("{sends}/{send}/attachments/0")), 200)
        }
        RouteId::GetSendAttachment => {
            let send = draft();
            let file = json!({ "name": "a.txt", "content_type": "text/plain", "content_base64": "aGVsbG8=" });
            world.call("POST", &format!("{sends}/{send}/attachments"), Some(&ben_token), Some(file));
            (as_ben("GET", &format!("{sends}/{send}/attachments/0")), 200)
        }
        RouteId::RedraftSend => {
            let send = submitted();
            let refusal = world.refusal_of(&world.admin_token, &format!("{sends}/{send}"), "Not yet.");
            world.admin("POST", &format!("{sends}/{send}/refuse"), Some(refusal));
            (as_ben("POST", &format!("{sends}/{send}/redraft")), 201)
        }
        RouteId::ApproveSend => {
            let send = format!("{sends}/{}", submitted());
            (admin("POST", &format!("{send}/approve")).json(world.decision(&world.admin_token, &send)), 200)
        }
        RouteId::RetrySend => {
            // Failed once, by a binding that refused it, which now accepts it.
            let send = submitted();
            world.approve_while_refusing(&world.admin_token, &format!("{sends}/{send}"), "ana@customer.example");
            (as_ben("POST", &format!("{sends}/{send}/retry")), 200)
        }
        RouteId::RefuseSend => {
            let send = format!("{sends}/{}", submitted());
            (
                admin("POST", &format!("{send}/refuse")).json(world.refusal_of(&world.admin_token, &send, "Not yet.")),
                200,
            )
        }
        RouteId::ListApprovals => {
            submitted();
            (admin("GET", "/api/approvals"), 200)
        }
        RouteId::ListMailboxWebhooks => {
            webhook(&mailbox_webhooks);
            (admin("GET", &mailbox_webhooks), 200)
        }
        RouteId::CreateMailboxWebhook => (admin("POST", &mailbox_webhooks).json(new_webhook()), 201),
        RouteId::RemoveMailboxWebhook => (admin("DELETE", &webhook(&mailbox_webhooks)), 200),
        RouteId::ListAgentWebhooks => {
            let path = format!("/api/agents/{}/webhooks", agent().0);
            webhook(&path);
            (admin("GET", &path), 200)
        }
        RouteId::CreateAgentWebhook => {
            (admin("POST", &format!("/api/agents/{}/webhooks", agent().0)).json(new_webhook()), 201)
        }
        RouteId::RemoveAgentWebhook => (admin("DELETE", &webhook(&format!("/api/agents/{}/webhooks", agent().0))), 200),
        RouteId::CreatePushConfig => {
            let (path, token) = push_configs();
            (request("POST", &path).bearer(&token).json(json!({ "url": "https://hooks.example.com/task" })), 201)
        }
        RouteId::ListPushConfigs => {
            let (path, token) = push_configs();
            world.call("POST", &path, Some(&token), Some(json!({ "url": "https://hooks.example.com/task" })));
            (request("GET", &path).bearer(&token), 200)
        }
        RouteId::RemovePushConfig => {
            let (path, token) = push_configs();
            let body = json!({ "id": "cfg-1", "url": "https://hooks.example.com/task" });
            world.call("POST", &path, Some(&token), Some(body));
            (request("DELETE", &format!("{path}/cfg-1")).bearer(&token), 200)
        }
        RouteId::ListButlers => {
            butler();
            (admin("GET", &butlers), 200)
        }
        RouteId::CreateButler => (admin("POST", &butlers).json(new_butler()), 201),
        RouteId::GetButler => (admin("GET", &butler()), 200),
        RouteId::UpdateButler => (admin("PATCH", &butler()).json(json!({ "name": "Renamed", "rules": rules() })), 200),
        RouteId::PublishButler => (admin("POST", &format!("{}/publish", butler())).json(json!({ "version": 1 })), 200),
        RouteId::SimulateButler => {
            (admin("POST", &format!("{}/simulate", butler())).json(json!({ "receipt_id": receipt })), 200)
        }
        RouteId::ListNotifications => {
            refused_for_ben();
            (as_ben("GET", "/api/me/notifications?unread=true"), 200)
        }
        RouteId::MarkNotificationsRead => {
            refused_for_ben();
            (as_ben("POST", "/api/me/notifications/read").json(json!({ "all": true })), 200)
        }
        RouteId::MarkNotificationUnread => {
            refused_for_ben();
            let feed = world.call("GET", "/api/me/notifications", Some(&ben_token), None);
            let id = body(&feed)["notifications"][0]["id"].as_str().unwrap().to_string();
            world.call("POST", "/api/me/notifications/read", Some(&ben_token), Some(json!({ "all": true })));
            (as_ben("DELETE", &format!("/api/me/notifications/{id}/read")), 200)
        }
        RouteId::RequestExport => {
            world.grant_all(&ben, &["ediscovery.export"], "org");
            (as_ben("POST", "/api/exports").json(json!({ "mailbox_ids": [mailbox], "query": "contract" })), 201)
        }
        RouteId::ListExports => {
            export();
            (as_ben("GET", "/api/exports"), 200)
        }
        RouteId::GetExport => (as_ben("GET", &export()), 200),
        RouteId::DeleteExport => (as_ben("DELETE", &export()), 200),
        RouteId::ListExportObjects => (as_ben("GET", &format!("{}/objects", export())), 200),
        RouteId::GetExportObject => (as_ben("GET", &format!("{}/objects/{receipt}", export())), 200),
        RouteId::ListAgents => (admin("GET", "/api/agents"), 200),
        RouteId::MintAgent => (
            admin("POST", "/api/agents").json(json!({
                "name": "Budget", "sponsor": ben, "capabilities": ["mail.read", "mail.triage"],
                "mailboxes": [{ "mailbox": mailbox, "relations": ["mailbox.metadata.read", "mailbox.content.read"] }]
            })),
            201,
        ),
        RouteId::GetAgent => (admin("GET", &format!("/api/agents/{}", agent().0)), 200),
        RouteId::PauseAgent => (admin("POST", &format!("/api/agents/{}/pause", agent().0)), 200),
        RouteId::ResumeAgent => (admin("POST", &format!("/api/agents/{}/resume", agent().0)), 200),
        RouteId::RevokeAgent => (admin("POST", &format!("/api/agents/{}/revoke", agent().0)), 200),
        RouteId::IssuePairingCode => (admin("POST", &format!("/api/agents/{}/pairing-code", agent().0)), 201),
        RouteId::RedeemPairingCode => {
            let issued = world.admin("POST", &format!("/api/agents/{}/pairing-code", agent().0), None);
            let code = body(&issued)["code"].as_str().unwrap().to_string();
            (request("POST", "/api/agents/pair").json(json!({ "code": code })), 200)
        }
        RouteId::GetOAuthProtectedResource => (request("GET", "/.well-known/oauth-protected-resource"), 200),
        RouteId::GetOAuthProtectedResourceOfMcp => (request("GET", "/.well-known/oauth-protected-resource/mcp"), 200),
        RouteId::GetOAuthAuthorizationServer => (request("GET", "/.well-known/oauth-authorization-server"), 200),
        RouteId::RegisterOAuthClient => (
            request("POST", "/oauth/register")
                .json(json!({ "client_name": "Client", "redirect_uris": [OAUTH_REDIRECT] })),
            201,
        ),
        RouteId::OAuthAuthorize => (request("GET", "/oauth/authorize?response_type=code"), 200),
        RouteId::GetOAuthConsent => {
            let client_id = world.oauth_client();
            let query = form_urlencoded::Serializer::new(String::new())
                .append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", OAUTH_REDIRECT)
                .append_pair("code_challenge", OAUTH_CHALLENGE)
                .append_pair("code_challenge_method", "S256")
                .append_pair("scope", "mail.triage")
                .finish();
            (as_ben("GET", &format!("/api/oauth/consent?{query}")), 200)
        }
        RouteId::ApproveOAuthConsent => {
            let client_id = world.oauth_client();
            let answer = json!({
                "client_id": client_id, "redirect_uri": OAUTH_REDIRECT, "code_challenge": OAUTH_CHALLENGE,
                "code_challenge_method": "S256", "capabilities": ["mail.triage"],
                "mailboxes": [{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }],
            });
            (as_ben("POST", "/api/oauth/consent").json(answer), 200)
        }
        RouteId::OAuthToken => {
            let client_id = world.oauth_client();
            let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
            let (_, code) = world.oauth_consent(&ben_token, &client_id, &["mail.triage"], grants);
            (world.oauth_code_exchange(&client_id, &code, OAUTH_VERIFIER), 200)
        }
        RouteId::OAuthRevoke => {
            let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
            let (_, _, refresh, client_id) = world.connected_app(&ben_token, &["mail.triage"], grants);
            (oauth_revocation(&refresh, &client_id), 200)
        }
        RouteId::ListImageSenders => {
            world.call("PUT", "/api/me/image-senders/news@letters.example", Some(&ben_token), None);
            (as_ben("GET", "/api/me/image-senders"), 200)
        }
        RouteId::AddImageSender => (as_ben("PUT", "/api/me/image-senders/News%40Letters.example"), 200),
        RouteId::RemoveImageSender => {
            world.call("PUT", "/api/me/image-senders/news@letters.example", Some(&ben_token), None);
            (as_ben("DELETE", "/api/me/image-senders/news%40letters.example"), 200)
        }
        RouteId::ListSavedReplies => {
            saved_reply();
            (as_ben("GET", &saved_replies), 200)
        }
        RouteId::CreateSavedReply => {
            (as_ben("POST", &saved_replies).json(json!({ "name": "Hello", "body": "Hi {{customer.name}}," })), 201)
        }
        RouteId::UpdateSavedReply => {
            (as_ben("PATCH", &saved_reply()).json(json!({ "body": "Hello {{me.name}}" })), 200)
        }
        RouteId::DeleteSavedReply => (as_ben("DELETE", &saved_reply()), 200),
        RouteId::GetMailboxSignature => {
            world.call("PUT", &mailbox_signature, Some(&ben_token), Some(json!({ "text": "The support team" })));
            (as_ben("GET", &mailbox_signature), 200)
        }
        RouteId::SetMailboxSignature => {
            (as_ben("PUT", &mailbox_signature).json(json!({ "text": "{{mailbox.name}}" })), 200)
        }
        RouteId::RemoveMailboxSignature => (as_ben("DELETE", &mailbox_signature), 200),
        RouteId::GetMySignature => {
            world.call("PUT", "/api/me/signature", Some(&ben_token), Some(json!({ "text": "Ben" })));
            (as_ben("GET", "/api/me/signature"), 200)
        }
        RouteId::SetMySignature => {
            (as_ben("PUT", "/api/me/signature").json(json!({ "text": "Ben, {{mailbox.name}}" })), 200)
        }
        RouteId::RemoveMySignature => (as_ben("DELETE", "/api/me/signature"), 200),
        RouteId::ListConnectedApps => {
            let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
            world.connected_app(&ben_token, &["mail.triage"], grants);
            (as_ben("GET", "/api/me/connected-apps"), 200)
        }
        RouteId::DisconnectApp => {
            let grants = json!([{ "mailbox": mailbox, "relations": ["mailbox.metadata.read"] }]);
            let (agent, ..) = world.connected_app(&ben_token, &["mail.triage"], grants);
            (as_ben("POST", &format!("/api/me/connected-apps/{agent}/disconnect")), 200)
        }
        RouteId::ListPersonMailboxes => (admin("GET", &format!("/api/people/{ben}/mailboxes")), 200),
        RouteId::ListEvents => {
            world.reminder(&ben_token, "2026-12-14");
            (as_ben("GET", "/api/me/events"), 200)
        }
        RouteId::CreateEvent => (
            as_ben("POST", "/api/me/events").json(json!({ "title": "Visa renewal", "due_at": "2026-12-14T09:00" })),
            201,
        ),
        RouteId::GetEvent => {
            (as_ben("GET", &format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14"))), 200)
        }
        RouteId::UpdateEvent => (
            as_ben("PATCH", &format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14")))
                .json(json!({ "due_at": "2026-12-20" })),
            200,
        ),
        RouteId::DeleteEvent => {
            (as_ben("DELETE", &format!("/api/me/events/{}", world.reminder(&ben_token, "2026-12-14"))), 200)
        }
        RouteId::MarkDone => {
            (as_ben("POST", &format!("/api/me/events/{}/done", world.reminder(&ben_token, "2026-12-14"))), 200)
        }
        RouteId::ReopenEvent => {
            // Done first, so the budget is the write's, not an open event's read.
            let event = world.reminder(&ben_token, "2026-12-14");
            world.call("POST", &format!("/api/me/events/{event}/done"), Some(&ben_token), None);
            (as_ben("POST", &format!("/api/me/events/{event}/reopen")), 200)
        }
        RouteId::MarkAck => {
            (as_ben("POST", &format!("/api/me/events/{}/ack", world.reminder(&ben_token, "2026-12-14"))), 200)
        }
        RouteId::GetProfile => (as_ben("GET", "/api/me/profile"), 200),
        RouteId::UpdateProfile => {
            world.reminder(&ben_token, "2026-12-14");
            (
                as_ben("PATCH", "/api/me/profile")
                    .json(json!({ "tz": "Asia/Tokyo", "quiet_start": "22:00", "quiet_end": "07:00" })),
                200,
            )
        }
        RouteId::SetReminderWebhook => {
            (as_ben("PUT", "/api/me/profile/webhook").json(json!({ "url": "https://hooks.example.org/ben" })), 200)
        }
        RouteId::RemoveReminderWebhook => (as_ben("DELETE", "/api/me/profile/webhook"), 200),
        RouteId::ListReminderSources => (admin("GET", "/api/reminder-sources"), 200),
        RouteId::CreateReminderSource => {
            (admin("POST", "/api/reminder-sources").json(json!({ "name": format!("source-{route:?}") })), 201)
        }
        RouteId::RevokeReminderSource => {
            let (source, _) = world.source(&format!("source-{route:?}"));
            (admin("POST", &format!("/api/reminder-sources/{source}/revoke")), 200)
        }
        RouteId::PushEvent => {
            let (_, credential) = world.source(&format!("source-{route:?}"));
            let ben_email = format!("ben-{route:?}@example.com").to_lowercase();
            (
                request("PUT", "/api/source/events").bearer(&credential).json(json!({
                    "person": ben_email, "source_ref": "visa-4471", "topic": "renewal",
                    "title": "Visa renewal", "due_at": "2026-12-14"
                })),
                200,
            )
        }
        RouteId::WithdrawEvent => {
            let (_, credential) = world.source(&format!("source-{route:?}"));
            let ben_email = format!("ben-{route:?}@example.com").to_lowercase();
            let pushed = json!({
                "person": ben_email, "source_ref": "visa-4471", "topic": "renewal",
                "title": "Visa renewal", "due_at": "2026-12-14"
            });
            world.node.send(request("PUT", "/api/source/events").bearer(&credential).json(pushed));
            (
                request("DELETE", &format!("/api/source/events?person={ben_email}&source_ref=visa-4471&topic=renewal"))
                    .bearer(&credential),
                200,
            )
        }
        RouteId::ListSponsoredAgents => {
            agent();
            (as_ben("GET", "/api/me/agents"), 200)
        }
        RouteId::SendAgentMessage => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            let message = json!({ "recipient": recipient, "kind": "request", "content": { "text": "37 + 58?" }, "idempotency_key": "k-1" });
            (request("POST", "/api/agent-messages").bearer(&sender).json(message), 202)
        }
        RouteId::ListSentAgentMessages => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            (request("GET", "/api/agent-messages").bearer(&sender), 200)
        }
        RouteId::GetAgentMessage => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            let sent = world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            (request("GET", &format!("/api/agent-messages/{}", sent["id"].as_str().unwrap())).bearer(&sender), 200)
        }
        RouteId::ListAgentInbox => {
            let ((_, sender), (recipient, receiver)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            (request("GET", "/api/agent-inbox").bearer(&receiver), 200)
        }
        RouteId::ClaimAgentMessages => {
            let ((_, sender), (recipient, receiver)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            (request("POST", "/api/agent-inbox/leases").bearer(&receiver).json(json!({ "max": 5 })), 200)
        }
        RouteId::AckAgentMessage
        | RouteId::RenewAgentLease
        | RouteId::ReplyToAgentMessage
        | RouteId::RejectAgentMessage => {
            let ((_, sender), (recipient, receiver)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            let leased = world.claim(&receiver, 1).remove(0);
            let (id, token) = (leased["id"].as_str().unwrap().to_string(), leased["fencing_token"].clone());
            let (action, body) = match route {
                RouteId::AckAgentMessage => ("ack", json!({ "fencing_token": token })),
                RouteId::RenewAgentLease => ("renew", json!({ "fencing_token": token, "lease_seconds": 120 })),
                RouteId::ReplyToAgentMessage => ("reply", json!({ "fencing_token": token, "content": { "sum": 95 } })),
                _ => ("reject", json!({ "fencing_token": token, "reason": "Not mine to answer." })),
            };
            (request("POST", &format!("/api/agent-inbox/{id}/{action}")).bearer(&receiver).json(body), 200)
        }
        RouteId::ListAgentConversations => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            (request("GET", "/api/agent-conversations").bearer(&sender), 200)
        }
        RouteId::GetAgentConversation | RouteId::CancelAgentConversation => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            let sent = world.send_message(&sender, &recipient, "request", json!("37 + 58?"));
            let path = format!("/api/agent-conversations/{}", sent["conversation_id"].as_str().unwrap());
            if route == RouteId::GetAgentConversation {
                (request("GET", &path).bearer(&sender), 200)
            } else {
                (request("POST", &format!("{path}/cancel")).bearer(&sender), 200)
            }
        }
        RouteId::GetAgentMessaging => {
            (as_ben("GET", &format!("/api/agents/{}/messaging", world.messenger(&ben).0)), 200)
        }
        RouteId::UpdateAgentMessaging => (
            as_ben("PATCH", &format!("/api/agents/{}/messaging", world.messenger(&ben).0))
                .json(json!({ "rate_per_minute": 10, "allowed_peers": [ben] })),
            200,
        ),
        RouteId::ListOwnedAgentInbox => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            world.send_message(&sender, &recipient, "event", json!({ "note": "deployed" }));
            (as_ben("GET", &format!("/api/agents/{recipient}/inbox")), 200)
        }
        RouteId::ListRemoteDeliveries
        | RouteId::ReceiveTaskPush
        | RouteId::ListPeers
        | RouteId::CreatePeer
        | RouteId::UpdatePeer
        | RouteId::DisconnectPeer => crate::budget_peers::fixture(world, route, &ben, &ben_token),
        RouteId::GetA2aAgentCard => {
            (request("GET", &format!("/a2a/{}/.well-known/agent-card.json", world.messenger(&ben).0)), 200)
        }
        // A gateway call costs what the route it re-enters costs, and no more.
        RouteId::A2aEndpoint => {
            let ((_, sender), (recipient, _)) = (world.messenger(&ben), world.messenger(&ben));
            let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": { "messageId": "m-1", "role": "ROLE_USER", "parts": [{ "text": "37 + 58?" }] } } });
            (request("POST", &format!("/a2a/{recipient}")).bearer(&sender).header("a2a-version", "1.0").json(call), 200)
        }
        RouteId::GetA2aNodeCard => {
            let (listed, _) = world.messenger(&ben);
            let listing = as_ben("PATCH", &format!("/api/agents/{listed}/messaging"))
                .json(json!({ "listed_on_node_card": true }));
            assert_eq!(world.node.send(listing).status, 200);
            (request("GET", "/.well-known/agent-card.json"), 200)
        }
        // The node's endpoint takes no tasks and reads nothing.
        RouteId::A2aNodeEndpoint => {
            let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "amg_1" } });
            (request("POST", "/a2a").header("a2a-version", "1.0").json(call), 200)
        }
        // Opening a stream: the checks read, the opening recorded.
        RouteId::ListenToMailbox => {
            (as_ben("GET", &format!("/api/mailboxes/{mailbox}/live")).header("upgrade", "websocket"), 101)
        }
        RouteId::ListenToOwn => (as_ben("GET", "/api/me/live").header("upgrade", "websocket"), 101),
        RouteId::ListenToAgentInbox => {
            let (_, receiver) = world.messenger(&ben);
            (request("GET", "/api/agent-inbox/live").bearer(&receiver).header("upgrade", "websocket"), 101)
        }
        RouteId::ListenToAgent => {
            let (receiver, _) = world.messenger(&ben);
            (as_ben("GET", &format!("/api/agents/{receiver}/live")).header("upgrade", "websocket"), 101)
        }
        // A tool call costs what the route it re-enters costs, and no more.
        RouteId::McpEndpoint => (
            as_ben("POST", "/mcp").json(json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "list_messages", "arguments": { "mailbox_id": mailbox } }
            })),
            200,
        ),
    }
}

#[test]
fn every_route_stays_within_two_round_trips() {
    hold_every_route_to_the_budget(Mail::InD1);
}

/// The same, with each route's mailbox moved into its own database first
/// (decision 0040): what is read from there is asked beside the checks on
/// D1, so a moved mailbox costs a route no more round trips.
#[test]
fn every_route_stays_within_two_round_trips_when_its_mailbox_has_moved() {
    hold_every_route_to_the_budget(Mail::Moved);
}

/// Where each route's mailbox's mail is when the route is called.
#[derive(Clone, Copy, PartialEq)]
enum Mail {
    InD1,
    Moved,
}

fn hold_every_route_to_the_budget(mail: Mail) {
    let world = World::new();
    let mut report = Vec::new();
    for route in registry().routes() {
        let (request, expected_status) = fixture(&world, route.id);
        if mail == Mail::Moved {
            let address = format!("box-{:?}@mailroom.test", route.id).to_lowercase();
            let mailbox = world.node.database.peek(&format!("SELECT id FROM mailboxes WHERE address = '{address}'"));
            let mailbox = mailbox.expect("every route's fixture has a mailbox of its own");
            crate::moving_mail::moved(&world, &mailbox);
        }
        // What storage itself saw while the route was handled, before anything
        // that follows the answer (sealing, deferred writes): every batch to D1
        // is one the route counted, and a batch to a mailbox's database is
        // counted too, or travelled beside one that was (mailboxes asked at
        // once, or beside D1, take one round trip's time), so no handler
        // reaches storage unseen.
        world.node.platform.advance(1);
        let (d1_before, mailboxes_before) = (world.node.database.batches(), world.node.mailboxes.batches());
        let node = world.node.node();
        let response =
            world.node.run(mailroom::dispatch::dispatch(&node, &request, mailroom::core::http::Surface::Rest));
        let d1 = world.node.database.batches() - d1_before;
        let in_mailboxes = world.node.mailboxes.batches() - mailboxes_before;
        assert!(
            response.round_trips >= d1.max(u32::from(in_mailboxes > 0)),
            "{} {} counted {} round trips; storage saw {d1} to D1 and {in_mailboxes} to mailboxes",
            route.method.as_str(),
            route.path,
            response.round_trips
        );
        // The reads that follow a mailbox's mail (its messages, its
        // conversations and what a change of one reads first, the list of its
        // sends; not yet the rest) ask its database.
        let follows_the_mail = (route.method.as_str() == "GET"
            && ["/api/mailboxes/:mailboxId/messages", "/api/mailboxes/:mailboxId/threads"]
                .iter()
                .any(|prefix| route.path.starts_with(prefix)))
            || route.path.starts_with("/api/mailboxes/:mailboxId/threads/:threadId")
            || (route.method.as_str() == "GET" && route.path == "/api/mailboxes/:mailboxId/sends");
        if mail == Mail::Moved && follows_the_mail && expected_status < 300 {
            assert!(
                in_mailboxes > 0,
                "{} {} read nothing from its mailbox's database",
                route.method.as_str(),
                route.path
            );
        }
        world.node.finish_answer(&request, &response);
        assert_eq!(response.status, expected_status, "{} {}: {}", route.method.as_str(), route.path, text(&response));
        report.push(format!("{:>2} {} {}", response.round_trips, route.method.as_str(), route.path));
        assert!(
            response.round_trips <= BUDGET,
            "{} {} took {} round trips; the budget is {BUDGET}",
            route.method.as_str(),
            route.path,
            response.round_trips
        );
    }
    println!("round trips per route:\n{}", report.join("\n"));
}

#[test]
fn a_refused_changing_call_costs_no_more_than_an_accepted_one() {
    let world = World::new();
    let (_, ben_token) = world.person("ben@example.com");
    let refused = world.call("POST", "/api/teams", Some(&ben_token), Some(json!({ "name": "Nope" })));
    assert_refused(&refused, 403, "missing_relation");
    assert!(refused.round_trips <= BUDGET);
    let unauthenticated = world.call("POST", "/api/teams", None, Some(json!({ "name": "Nope" })));
    assert_eq!(unauthenticated.round_trips, 0, "a request without credentials is refused before any I/O");
}

#[test]
fn refusals_the_first_read_foresees_stay_within_two_round_trips() {
    // Each of these is also guarded inside the commit, against a concurrent
    // request; only losing such a race costs a third round trip (the refusal's
    // own audit row, after the failed batch).
    let world = World::new();
    let within_budget = |response: mailroom::core::http::Response, status: u16, code: &str| {
        assert_refused(&response, status, code);
        assert!(response.round_trips <= BUDGET, "{code} took {} round trips", response.round_trips);
    };
    within_budget(world.revoke(&world.admin_id, "org.admin", "org"), 409, "last_administrator");

    let admins = world.team("Administrators");
    world.grant(&format!("{admins}#member"), "org.admin", "org");
    world.admin("PUT", &format!("/api/teams/{admins}/members/{}", world.admin_id), None);
    assert_eq!(world.revoke(&world.admin_id, "org.admin", "org").status, 200, "still admin through the team");
    let leaving = world.admin("DELETE", &format!("/api/teams/{admins}/members/{}", world.admin_id), None);
    within_budget(leaving, 409, "last_administrator");
    within_budget(world.revoke(&format!("{admins}#member"), "org.admin", "org"), 409, "last_administrator");

    world.person("ben@example.com");
    let taken = json!({ "email": "ben@example.com", "name": "Ben again", "password": PASSWORD });
    within_budget(world.admin("POST", "/api/people", Some(taken)), 409, "email_taken");
    within_budget(world.admin("POST", "/api/teams", Some(json!({ "name": "Administrators" }))), 409, "team_name_taken");
    world.mailbox("support@mailroom.test");
    let mailbox = json!({ "address": "support@mailroom.test", "display_name": "Support" });
    within_budget(world.admin("POST", "/api/mailboxes", Some(mailbox)), 409, "address_taken");
}

//! Helpers shared by the native tests: a node with an administrator, people
//! signed in, and short ways to call routes and read answers.

use std::cell::RefCell;

use mailroom::core::http::Response;
use mailroom::core::storage::{Database, LocalBoxFuture, QueryResult, Statement, StorageError};
use mailroom::testing::{RequestExt, TEST_SETUP_TOKEN, TestNode, request};
use serde_json::{Value, json};

pub const ADMIN_EMAIL: &str = "ada@example.com";
pub const ADMIN_PASSWORD: &str = "correct horse battery staple";
pub const PASSWORD: &str = "a long enough password";

/// A node that has been set up, with the administrator signed in.
pub struct World {
    pub node: TestNode,
    pub admin_id: String,
    pub admin_token: String,
}

impl World {
    pub fn new() -> World {
        World::set_up(TestNode::new())
    }

    /// A world whose new mailboxes keep their mail in D1, as every mailbox
    /// did before its own database (decision 0040): for the tests of mail in
    /// D1 and of its move out.
    pub fn with_mail_in_d1() -> World {
        let mut world = World::new();
        world.node.config.new_mailboxes_in_own_databases = false;
        world
    }

    /// A world whose clock starts at `now_ms` (after the test node's own start).
    pub fn at(now_ms: i64) -> World {
        let node = TestNode::new();
        let start = mailroom::core::platform::Platform::now_ms(&node.platform);
        assert!(now_ms >= start, "a world's clock starts after the test node's");
        node.platform.advance(now_ms - start);
        World::set_up(node)
    }

    /// A world whose node does not run agent messaging (`FEATURE_AGENT_NETWORK` unset).
    pub fn without_agent_network() -> World {
        let mut node = TestNode::new();
        node.config.agent_network = false;
        World::set_up(node)
    }

    fn set_up(node: TestNode) -> World {
        let setup = node.send(request("POST", "/api/setup").json(json!({
            "setup_token": TEST_SETUP_TOKEN,
            "email": ADMIN_EMAIL,
            "name": "Ada Admin",
            "password": ADMIN_PASSWORD,
        })));
        assert_eq!(setup.status, 201, "{}", text(&setup));
        let admin_id = body(&setup)["administrator"]["id"].as_str().unwrap().to_string();
        let admin_token = sign_in(&node, ADMIN_EMAIL, ADMIN_PASSWORD).0;
        World { node, admin_id, admin_token }
    }

    /// Calls a route as the holder of `token` (or as a stranger with `None`).
    pub fn call(&self, method: &str, path: &str, token: Option<&str>, payload: Option<Value>) -> Response {
        let mut built = request(method, path);
        if let Some(token) = token {
            built = built.bearer(token);
        }
        if let Some(payload) = payload {
            built = built.json(payload);
        }
        self.node.send(built)
    }

    pub fn admin(&self, method: &str, path: &str, payload: Option<Value>) -> Response {
        self.call(method, path, Some(&self.admin_token), payload)
    }

    /// Creates a person and signs them in: (id, access token).
    pub fn person(&self, email: &str) -> (String, String) {
        let created = self.admin(
            "POST",
            "/api/people",
            Some(json!({ "email": email, "name": email.split('@').next().unwrap(), "password": PASSWORD })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        let id = body(&created)["id"].as_str().unwrap().to_string();
        let (token, _) = sign_in(&self.node, email, PASSWORD);
        (id, token)
    }

    pub fn team(&self, name: &str) -> String {
        let created = self.admin("POST", "/api/teams", Some(json!({ "name": name })));
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)["id"].as_str().unwrap().to_string()
    }

    pub fn grant(&self, subject: &str, relation: &str, object: &str) -> Response {
        self.admin(
            "POST",
            "/api/relations",
            Some(json!({ "subject": subject, "relation": relation, "object": object })),
        )
    }

    pub fn revoke(&self, subject: &str, relation: &str, object: &str) -> Response {
        self.admin(
            "POST",
            "/api/relations/revoke",
            Some(json!({ "subject": subject, "relation": relation, "object": object })),
        )
    }

    /// The audit chain, oldest first: the organisation's entries and those of
    /// every mailbox's segment (what is done to mail kept in the mailbox's
    /// own database), as an administrator lists them, in the order of their
    /// times (the organisation's first at the same moment).
    pub fn audit(&self) -> Vec<Value> {
        let mut entries = self.audit_of(None);
        for mailbox_id in self.node.mailboxes.ids() {
            entries.extend(self.audit_of(Some(&mailbox_id)));
        }
        entries.sort_by(|one, other| one["at"].as_str().cmp(&other["at"].as_str()));
        entries
    }

    /// The organisation's chain (`None`) or a mailbox's segment, oldest first.
    pub fn audit_of(&self, mailbox_id: Option<&str>) -> Vec<Value> {
        let path = match mailbox_id {
            None => "/api/audit?limit=200".to_string(),
            Some(mailbox_id) => format!("/api/audit?limit=200&mailbox_id={mailbox_id}"),
        };
        let page = self.admin("GET", &path, None);
        assert_eq!(page.status, 200, "{}", text(&page));
        let mut entries = body(&page)["entries"].as_array().unwrap().clone();
        entries.reverse();
        entries
    }

    /// This world's node over `database` instead of its own, to let a rival
    /// request's writes land in the middle of the one under test.
    pub fn node_over<'a>(
        &'a self,
        database: &'a dyn mailroom::core::storage::Database,
    ) -> mailroom::core::node::Node<'a> {
        mailroom::core::node::Node {
            database,
            mailboxes: &self.node.mailboxes,
            blobs: &self.node.blobs,
            mailer: &self.node.mailer,
            webhooks: &self.node.webhooks,
            platform: &self.node.platform,
            config: &self.node.config,
            timings: &self.node.timings,
            events: &self.node.events,
        }
    }

    pub fn last_audit_entry(&self) -> Value {
        self.audit().pop().unwrap()
    }

    pub fn verify(&self) -> Value {
        let verified = self.admin("GET", "/api/audit/verify", None);
        assert_eq!(verified.status, 200, "{}", text(&verified));
        body(&verified)
    }
}

/// A database on which another request's change lands between the request under
/// test's first read and its commit.
pub struct InterleavingDatabase<'a> {
    pub inner: &'a dyn Database,
    pub before_commit: RefCell<Option<Statement>>,
}

impl Database for InterleavingDatabase<'_> {
    fn execute(&self, statements: Vec<Statement>) -> LocalBoxFuture<'_, Result<Vec<QueryResult>, StorageError>> {
        Box::pin(async move {
            let commits = statements.iter().any(|statement| statement.sql.starts_with("INSERT INTO audit_entries"));
            let rival = if commits { self.before_commit.borrow_mut().take() } else { None };
            if let Some(rival) = rival {
                self.inner.execute(vec![rival]).await?;
            }
            self.inner.execute(statements).await
        })
    }
}

/// Signs in with a bearer transport: (access token, refresh token).
pub fn sign_in(node: &TestNode, email: &str, password: &str) -> (String, String) {
    let response = node.send(request("POST", "/api/sessions").json(json!({ "email": email, "password": password })));
    assert_eq!(response.status, 201, "{}", text(&response));
    let session = &body(&response)["session"];
    (session["access_token"].as_str().unwrap().to_string(), session["refresh_token"].as_str().unwrap().to_string())
}

/// Milliseconds since the epoch of a UTC time written `YYYY-MM-DDTHH:MM`.
/// A caller and an agent it calls over A2A, both agents of one sponsor:
/// (world, (caller, its credential), (agent, its credential)).
pub fn a2a_caller_and_agent() -> (World, (String, String), (String, String)) {
    let world = World::new();
    let (ben, _) = world.person("ben@example.com");
    let caller = world.messenger(&ben);
    let agent = world.messenger(&ben);
    (world, caller, agent)
}

pub fn utc(text: &str) -> i64 {
    let parsed = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap();
    parsed.and_utc().timestamp_millis()
}

pub fn body(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap_or(Value::Null)
}

pub fn text(response: &Response) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

/// Asserts a refusal: the status, the code, and all four parts present.
#[track_caller]
pub fn assert_refused(response: &Response, status: u16, code: &str) {
    assert_eq!(response.status, status, "{}", text(response));
    let error = &body(response)["error"];
    assert_eq!(error["code"], code, "{}", text(response));
    for part in ["message", "reason", "fix"] {
        let value = error[part].as_str().unwrap_or_default();
        assert!(!value.trim().is_empty(), "refusal {code} has no {part}: {}", text(response));
    }
}

/// A received-mail fixture from `tests/fixtures/mail/`, byte for byte.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mail").join(format!("{name}.eml"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

impl World {
    /// Creates a mailbox: its id.
    pub fn mailbox(&self, address: &str) -> String {
        let created =
            self.admin("POST", "/api/mailboxes", Some(json!({ "address": address, "display_name": "Support" })));
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)["id"].as_str().unwrap().to_string()
    }

    /// Delivers a fixture to `to`: the receipt's id.
    pub fn deliver(&self, name: &str, to: &str) -> String {
        match self.node.deliver("sender@outside.example", to, &fixture(name)) {
            Ok(mailroom::mail::Delivery::Stored { receipt_id }) => receipt_id,
            other => panic!("delivering {name} to {to}: {other:?}"),
        }
    }

    /// The conversation a received message is in, as `/api/mailboxes/…/threads/thr_…`.
    pub fn thread_of(&self, mailbox: &str, receipt: &str) -> String {
        let thread = self.node.mail_peek(&format!("SELECT thread_id FROM receipts WHERE id = '{receipt}'"));
        format!("/api/mailboxes/{mailbox}/threads/{}", thread.expect("a received message is in a conversation"))
    }

    /// Grants `relations` on `object` to `subject`.
    pub fn grant_all(&self, subject: &str, relations: &[&str], object: &str) {
        for relation in relations {
            let granted = self.grant(subject, relation, object);
            assert_eq!(granted.status, 201, "{}", text(&granted));
        }
    }
}

impl World {
    /// What deciding on the send at `send_path` as the holder of `token` sends:
    /// the version they are shown now (a made-up one when they cannot see it,
    /// for tests of who may decide).
    pub fn decision(&self, token: &str, send_path: &str) -> Value {
        let shown = self.call("GET", send_path, Some(token), None);
        let version = body(&shown)["version"].as_str().map(str::to_string).unwrap_or_else(|| "0".repeat(64));
        json!({ "version": version })
    }

    /// A refusal of the send at `send_path` as the holder of `token`, for `reason`.
    pub fn refusal_of(&self, token: &str, send_path: &str, reason: &str) -> Value {
        let mut decision = self.decision(token, send_path);
        decision["reason"] = json!(reason);
        decision
    }

    /// Approves the submitted send at `send_path` as `approver` while the mail
    /// binding refuses `refused`, then lets the binding accept everyone again: a
    /// send that failed once, ready to be sent again. Answers the approval.
    pub fn approve_while_refusing(&self, approver: &str, send_path: &str, refused: &str) -> Value {
        self.node.mailer.refuse.borrow_mut().push(refused.to_string());
        let decision = self.decision(approver, send_path);
        let approved = self.call("POST", &format!("{send_path}/approve"), Some(approver), Some(decision));
        self.node.mailer.refuse.borrow_mut().clear();
        assert_eq!(body(&approved)["state"], "failed", "{}", text(&approved));
        body(&approved)
    }

    /// Mints an agent for `sponsor` with `capabilities` and mailbox grants:
    /// (agent id, credential).
    pub fn mint(&self, sponsor: &str, capabilities: &[&str], mailboxes: Value) -> (String, String) {
        let minted = self.admin(
            "POST",
            "/api/agents",
            Some(json!({ "name": "Test agent", "sponsor": sponsor, "capabilities": capabilities, "mailboxes": mailboxes })),
        );
        assert_eq!(minted.status, 201, "{}", text(&minted));
        let minted = body(&minted);
        (minted["agent"]["id"].as_str().unwrap().to_string(), minted["credential"].as_str().unwrap().to_string())
    }

    /// Registers an OAuth client redirecting to a loopback callback: its client id.
    pub fn oauth_client(&self) -> String {
        let registered = self.node.send(
            request("POST", "/oauth/register")
                .json(json!({ "client_name": "Test MCP client", "redirect_uris": [OAUTH_REDIRECT] })),
        );
        assert_eq!(registered.status, 201, "{}", text(&registered));
        body(&registered)["client_id"].as_str().unwrap().to_string()
    }

    /// The person behind `person_token` consents to `client_id` with
    /// `capabilities` and mailbox grants: the agent minted and the code.
    pub fn oauth_consent(
        &self,
        person_token: &str,
        client_id: &str,
        capabilities: &[&str],
        mailboxes: Value,
    ) -> (String, String) {
        let consent = self.call(
            "POST",
            "/api/oauth/consent",
            Some(person_token),
            Some(json!({
                "client_id": client_id, "redirect_uri": OAUTH_REDIRECT,
                "code_challenge": OAUTH_CHALLENGE, "code_challenge_method": "S256", "state": "xyz",
                "capabilities": capabilities, "mailboxes": mailboxes,
            })),
        );
        assert_eq!(consent.status, 200, "{}", text(&consent));
        let consent = body(&consent);
        let redirect = consent["redirect_to"].as_str().unwrap();
        let code = redirect.split(['?', '&']).find_map(|pair| pair.strip_prefix("code=")).unwrap().to_string();
        (consent["agent"]["id"].as_str().unwrap().to_string(), code)
    }

    /// The token endpoint's form request exchanging `code`.
    pub fn oauth_code_exchange(&self, client_id: &str, code: &str, verifier: &str) -> mailroom::core::http::Request {
        oauth_form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", OAUTH_REDIRECT),
            ("client_id", client_id),
            ("code_verifier", verifier),
        ])
    }

    /// A connected app for `sponsor` (its token) with `capabilities` and mailbox
    /// grants: (agent id, access token, refresh token, client id).
    pub fn connected_app(
        &self,
        person_token: &str,
        capabilities: &[&str],
        mailboxes: Value,
    ) -> (String, String, String, String) {
        let client_id = self.oauth_client();
        let (agent, code) = self.oauth_consent(person_token, &client_id, capabilities, mailboxes);
        let tokens = self.node.send(self.oauth_code_exchange(&client_id, &code, OAUTH_VERIFIER));
        assert_eq!(tokens.status, 200, "{}", text(&tokens));
        let tokens = body(&tokens);
        let access = tokens["access_token"].as_str().unwrap().to_string();
        (agent, access, tokens["refresh_token"].as_str().unwrap().to_string(), client_id)
    }

    /// Adds a manual reminder due at `due_at` to the inbox `token` works in: its id.
    pub fn reminder(&self, token: &str, due_at: &str) -> String {
        let created = self.call(
            "POST",
            "/api/me/events",
            Some(token),
            Some(json!({ "title": "Visa renewal", "due_at": due_at })),
        );
        assert_eq!(created.status, 201, "{}", text(&created));
        body(&created)["id"].as_str().unwrap().to_string()
    }

    /// A reminder of the token's person due today, shown in their notifications
    /// feed by a run of the reminders' cron trigger: its event id.
    pub fn reminder_in_feed(&self, token: &str) -> String {
        let today = mailroom::core::time::rfc3339(mailroom::core::platform::Platform::now_ms(&self.node.platform));
        let event = self.reminder(token, &today[..10]);
        assert!(self.node.run_reminders().in_feeds >= 1, "the run shows the reminder in the feed");
        event
    }

    /// Mints an agent for `sponsor` that exchanges messages: (agent id, credential).
    pub fn messenger(&self, sponsor: &str) -> (String, String) {
        self.mint(sponsor, &["agent.messaging"], json!([]))
    }

    /// Sends a message of `kind` with `content` from `token`'s caller to
    /// `recipient`: the answer's body.
    pub fn send_message(&self, token: &str, recipient: &str, kind: &str, content: Value) -> Value {
        static SENT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let key = format!("key-{}", SENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let sent = self.call(
            "POST",
            "/api/agent-messages",
            Some(token),
            Some(json!({ "recipient": recipient, "kind": kind, "content": content, "idempotency_key": key })),
        );
        assert_eq!(sent.status, 202, "{}", text(&sent));
        body(&sent)
    }

    /// Claims up to `max` messages from `token`'s agent inbox: the leased messages.
    pub fn claim(&self, token: &str, max: i64) -> Vec<Value> {
        let claimed = self.call("POST", "/api/agent-inbox/leases", Some(token), Some(json!({ "max": max })));
        assert_eq!(claimed.status, 200, "{}", text(&claimed));
        body(&claimed)["messages"].as_array().unwrap().clone()
    }

    /// Creates a reminder source named `name`: (source id, credential).
    pub fn source(&self, name: &str) -> (String, String) {
        let created = self.admin("POST", "/api/reminder-sources", Some(json!({ "name": name })));
        assert_eq!(created.status, 201, "{}", text(&created));
        let created = body(&created);
        (created["source"]["id"].as_str().unwrap().to_string(), created["credential"].as_str().unwrap().to_string())
    }
}

/// Every `.rs` file under `directory`, however deep.
/// D1's migrations (`migrations/*.sql`), in the order they apply.
pub fn d1_migrations() -> Vec<std::path::PathBuf> {
    sql_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations"))
}

/// Every schema the node keeps: D1's migrations, then a mailbox's own
/// (`migrations/mailbox/*.sql`, decision 0040), each in the order it applies.
pub fn every_migration() -> Vec<std::path::PathBuf> {
    let mailbox = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/mailbox");
    [d1_migrations(), sql_files(&mailbox)].concat()
}

fn sql_files(directory: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "sql"))
        .collect();
    files.sort();
    files
}

pub fn rust_sources(directory: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(directory).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_sources(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files
}

/// A Rust source read as the compiler reads it, every item under
/// `#[cfg(test)]` (a test module, a test helper) left out: its code with
/// comments cut and each string or character literal blanked, and its string
/// literals apart. The attribute is found in the code, never in a comment or a
/// string, and only the item it marks is left out, so nothing after it hides.
/// The layering test reads imports from the one, the stores test SQL from the
/// other.
pub struct ScannedSource {
    pub code: String,
    pub literals: Vec<String>,
}

pub fn scan_source(source: &str) -> ScannedSource {
    let (scanned, literals_at) = scan_everything(source);
    let for_tests = items_for_tests(&scanned.code);
    let kept = |at: usize| !for_tests.iter().any(|range| range.contains(&at));
    let code = scanned.code.char_indices().filter(|(at, _)| kept(*at)).map(|(_, character)| character).collect();
    let literals =
        scanned.literals.into_iter().zip(literals_at).filter(|(_, at)| kept(*at)).map(|(literal, _)| literal).collect();
    ScannedSource { code, literals }
}

/// Where each item under `#[cfg(test)]` lies in `code` (comments cut, literals
/// blanked): from the attribute to the item's closing brace, or its semicolon
/// when it has no body.
fn items_for_tests(code: &str) -> Vec<std::ops::Range<usize>> {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let bytes = code.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(ATTRIBUTE) {
        let start = from + found;
        let mut index = start + ATTRIBUTE.len();
        let mut depth = 0usize;
        while index < bytes.len() {
            match bytes[index] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            index += 1;
        }
        let end = (index + 1).min(bytes.len());
        ranges.push(start..end);
        from = end;
    }
    ranges
}

/// The whole of `source` scanned (`scan_source` before the test items go),
/// with where in the code each literal stood.
fn scan_everything(source: &str) -> (ScannedSource, Vec<usize>) {
    let characters: Vec<char> = source.chars().collect();
    let mut scanned = ScannedSource { code: String::with_capacity(source.len()), literals: Vec::new() };
    let mut literals_at = Vec::new();
    let mut index = 0;
    while index < characters.len() {
        let rest = &characters[index..];
        let starts = |text: &str| text.chars().zip(rest).filter(|(a, b)| a == *b).count() == text.len();
        if starts("//") {
            while index < characters.len() && characters[index] != '\n' {
                index += 1;
            }
        } else if starts("/*") {
            index += 2;
            while index + 1 < characters.len() && !(characters[index] == '*' && characters[index + 1] == '/') {
                index += 1;
            }
            index += 2;
        } else if starts("r#\"") || starts("r\"") {
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            index += 2 + hashes;
            let closing: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let start = index;
            while index < characters.len() && !characters[index..].iter().collect::<String>().starts_with(&closing) {
                index += 1;
            }
            literals_at.push(scanned.code.len());
            scanned.literals.push(characters[start..index.min(characters.len())].iter().collect());
            index += closing.len();
            scanned.code.push_str("\"\"");
        } else if rest[0] == '"' {
            index += 1;
            let start = index;
            while index < characters.len() && characters[index] != '"' {
                index += if characters[index] == '\\' { 2 } else { 1 };
            }
            literals_at.push(scanned.code.len());
            scanned.literals.push(characters[start..index.min(characters.len())].iter().collect());
            index += 1;
            scanned.code.push_str("\"\"");
        } else if rest[0] == '\''
            && (rest.get(2) == Some(&'\'') || (rest.get(1) == Some(&'\\') && rest.get(3) == Some(&'\'')))
        {
            // A character literal ('"', '\''); anything else after a quote is a lifetime.
            index += if rest.get(1) == Some(&'\\') { 4 } else { 3 };
            scanned.code.push_str("' '");
        } else {
            scanned.code.push(rest[0]);
            index += 1;
        }
    }
    (scanned, literals_at)
}

/// The redirect URI the native OAuth tests register.
pub const OAUTH_REDIRECT: &str = "http://127.0.0.1:4567/callback";
/// RFC 7636 appendix B's verifier and its S256 challenge.
pub const OAUTH_VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const OAUTH_CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// A revocation (RFC 7009) of `token` by the client `client_id`.
pub fn oauth_revocation(token: &str, client_id: &str) -> mailroom::core::http::Request {
    let mut revoke = oauth_form(&[("token", token), ("client_id", client_id)]);
    revoke.path = "/oauth/revoke".into();
    revoke
}

/// A form-encoded POST to `/oauth/token`.
pub fn oauth_form(fields: &[(&str, &str)]) -> mailroom::core::http::Request {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields {
        form.append_pair(name, value);
    }
    request("POST", "/oauth/token")
        .raw_body(form.finish().as_bytes())
        .header("content-type", "application/x-www-form-urlencoded")
}

/// The `data:` payloads of an event stream's body (an A2A stream, an MCP
/// subscription), each read as JSON.
pub fn sse_events(answer: &Response) -> Vec<Value> {
    assert_eq!(answer.header("content-type"), Some("text/event-stream"), "{}", text(answer));
    text(answer)
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| serde_json::from_str(event.strip_prefix("data: ").expect("a data line")).expect("JSON"))
        .collect()
}

/// What a followed stream's follower sends after `told` (`None`: a reading of
/// everything), its readings dispatched over the stream's surface as the
/// adapter dispatches them: (events, whether the stream is over).
pub fn followed_after(
    world: &World,
    following: &mailroom::core::http::Following,
    told: Option<&mailroom::core::http::Told<'_>>,
) -> (Vec<Value>, bool) {
    let answers: Vec<Response> = following
        .follower
        .readings(told)
        .into_iter()
        .map(|reading| world.node.send_from(reading, following.surface))
        .collect();
    let followed = following.follower.read(told, &answers);
    (followed.events.iter().map(|event| serde_json::from_str(event).expect("JSON")).collect(), followed.finished)
}

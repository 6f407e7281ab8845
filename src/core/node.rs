//! The node as the core sees it: its storage, its bindings, its platform and its
//! configuration, handed in by the adapter (or the test kit) for each request.
//!
//! `Installation` owns them and `Installation::node` is the one place a `Node` is
//! assembled: the Worker builds an installation from its bindings, the test kit
//! from SQLite and memory, and both hand the core the same shape.

use crate::core::bindings::{BlobStore, Mailer, Webhooks};
use crate::core::crypto::sha256_hex;
use crate::core::events::Published;
use crate::core::http::Deferred;
use crate::core::mailbox_storage::MailboxStorage;
use crate::core::platform::Platform;
use crate::core::storage::{Database, StorageError};
use crate::core::timing::Timings;

/// The largest message the node accepts by default: Email Routing's own limit.
pub const DEFAULT_MAXIMUM_MESSAGE_BYTES: usize = 25 * 1024 * 1024;

/// The size the node's database may grow to by default: D1's on the paid plan.
pub const DEFAULT_DATABASE_LIMIT_BYTES: u64 = 10_000_000_000;

/// The size each mailbox's own database may grow to by default: a SQLite
/// Durable Object's on the paid plan (decision 0040).
pub const DEFAULT_MAILBOX_LIMIT_BYTES: u64 = 10_000_000_000;
/// The round trips a run of the upkeep spends moving mail out of D1 unless
/// `MOVE_ROUND_TRIPS_PER_RUN` says otherwise: with the upkeep's own, within
/// the 50 subrequests an invocation may make on Workers' free plan.
pub const DEFAULT_MOVE_ROUND_TRIPS_PER_RUN: u32 = 24;

/// The share of `database_limit_bytes`, in percent, at which administrators
/// are told the database is nearly full.
pub const DATABASE_WARNING_PERCENT: u64 = 80;

/// PBKDF2 iterations for new password hashes in production. Cloudflare's
/// WebCrypto caps PBKDF2 at 100,000 iterations; this is that cap.
pub const PASSWORD_ITERATIONS: u32 = 100_000;

/// A key the audit chain is written, sealed and checkpointed with: a Worker
/// secret the database never holds, so whoever can write the database cannot
/// forge or recompute an entry. Its id is derived from it, and every entry
/// names the id of the key it was written with, so keys can rotate.
#[derive(Clone)]
pub struct AuditKey {
    /// A short public name for the key, derived from it.
    pub id: String,
    pub secret: Vec<u8>,
}

impl AuditKey {
    pub fn new(secret: Vec<u8>) -> AuditKey {
        let mut named = b"mailroom.audit-key-id.v1\n".to_vec();
        named.extend_from_slice(&secret);
        AuditKey { id: sha256_hex(&named)[..16].to_string(), secret }
    }
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("AuditKey").field("id", &self.id).finish_non_exhaustive()
    }
}

/// The configuration a deployment supplies: secrets and feature switches.
#[derive(Clone, Debug)]
pub struct Config {
    /// The key access tokens are signed with (`SESSION_SECRET`).
    pub session_key: Vec<u8>,
    /// The key new audit entries are written and sealed with (`AUDIT_KEY`).
    pub audit_key: AuditKey,
    /// Keys the chain was written with before a rotation (`AUDIT_PREVIOUS_KEYS`):
    /// kept to verify the entries they wrote, never to write new ones.
    pub previous_audit_keys: Vec<AuditKey>,
    /// The one-time setup secret (`SETUP_TOKEN`), if configured.
    pub setup_token: Option<String>,
    /// PBKDF2 iterations for new password hashes. Existing hashes keep the count
    /// stored with them, so this can change without locking anyone out.
    pub password_iterations: u32,
    /// The largest inbound message accepted (`MAXIMUM_MESSAGE_BYTES`); bigger ones are
    /// rejected with an SMTP reason and stored nowhere.
    pub maximum_message_bytes: usize,
    /// The size the node's one database may grow to (`DATABASE_LIMIT_BYTES`;
    /// D1's is 10 GB on the paid plan, 500 MB on the free one). At 80% of it
    /// administrators are told; at all of it inbound mail is refused with a
    /// temporary failure, so nothing is stored half.
    pub database_limit_bytes: u64,
    /// The size each mailbox's own database may grow to
    /// (`MAILBOX_LIMIT_BYTES`; a SQLite Durable Object's is 10 GB on the paid
    /// plan). As for D1: at 80% administrators are told, at all of it mail to
    /// that mailbox is refused with a temporary failure (decision 0040).
    pub mailbox_limit_bytes: u64,
    /// Whether a mailbox created now keeps its mail in its own database from
    /// the start (`NEW_MAILBOXES_IN_OWN_DATABASES` is `true`; decision 0040),
    /// rather than in D1 until it is moved. On by default: D1 holds the
    /// directory, and mail grows past it.
    pub new_mailboxes_in_own_databases: bool,
    /// Whether the upkeep moves the mail of mailboxes still in D1 into their
    /// own databases, one mailbox at a time, while it keeps changing
    /// (`MOVE_MAIL_INTO_OWN_DATABASES` is `true`; decision 0040, `mail::moving`).
    /// On by default, so a node that kept mail in D1 moves it once upgraded.
    pub move_mail_into_own_databases: bool,
    /// The round trips a run of the upkeep spends moving mail
    /// (`MOVE_ROUND_TRIPS_PER_RUN`; `DEFAULT_MOVE_ROUND_TRIPS_PER_RUN` when
    /// unset): more on a plan that allows an invocation more subrequests, for
    /// a large node's mail to move in fewer runs.
    pub move_round_trips_per_run: u32,
    /// The origin the node answers at (`PUBLIC_ORIGIN`, such as
    /// `https://mail.example.org`). When set, a request addressed to any other host
    /// is refused, which is what defeats DNS rebinding against a node on a
    /// developer's machine; unset, the node trusts the host it is addressed by.
    pub public_origin: Option<String>,
    /// The address reminder emails come from (`REMINDER_SENDER`), on a domain
    /// the mail service sends from; without one, the email channel reports that
    /// it cannot send.
    pub reminder_sender: Option<String>,
    /// Whether agent messaging and the A2A gateway run (`FEATURE_AGENT_NETWORK`
    /// is `true`). Off by default: every route of the feature then refuses
    /// with `feature_disabled`, and nothing of it is stored or delivered.
    pub agent_network: bool,
    /// Whether answers say where their time went, in a `Server-Timing` header
    /// (`SERVER_TIMING` is `true`; decision 0034). Off by default: the phases
    /// of a credential's check are something a stranger should not be able
    /// to time. The benchmark's node turns it on.
    pub server_timing: bool,
}

impl Config {
    /// The origin the node answers at: `PUBLIC_ORIGIN`, or, unset, the one
    /// `request` was addressed to.
    pub fn origin_of<'a>(&'a self, request: &'a crate::core::http::Request) -> &'a str {
        self.public_origin.as_deref().unwrap_or(&request.origin)
    }

    /// Where the node's own requests may go (`outbound`): loopback only when
    /// `PUBLIC_ORIGIN` is itself a loopback origin, never the node's own host.
    pub fn outbound_policy(&self) -> crate::core::outbound::OutboundPolicy {
        crate::core::outbound::OutboundPolicy::for_origin(self.public_origin.as_deref())
    }

    /// Whether the node runs `feature`.
    pub fn runs(&self, feature: mailroom_contract::Feature) -> bool {
        match feature {
            mailroom_contract::Feature::AgentNetwork => self.agent_network,
        }
    }
}

impl Config {
    /// A deployment's configuration, hashing at the production iteration count.
    pub fn new(session_key: Vec<u8>, audit_key: Vec<u8>, setup_token: Option<String>) -> Config {
        Config {
            session_key,
            audit_key: AuditKey::new(audit_key),
            previous_audit_keys: Vec::new(),
            setup_token,
            password_iterations: PASSWORD_ITERATIONS,
            maximum_message_bytes: DEFAULT_MAXIMUM_MESSAGE_BYTES,
            database_limit_bytes: DEFAULT_DATABASE_LIMIT_BYTES,
            mailbox_limit_bytes: DEFAULT_MAILBOX_LIMIT_BYTES,
            new_mailboxes_in_own_databases: true,
            move_mail_into_own_databases: true,
            move_round_trips_per_run: DEFAULT_MOVE_ROUND_TRIPS_PER_RUN,
            public_origin: None,
            reminder_sender: None,
            agent_network: false,
            server_timing: false,
        }
    }
}

/// One node: everything a request is handled with.
pub struct Node<'a> {
    /// The directory: everything but the mail of each mailbox.
    pub database: &'a dyn Database,
    /// Each mailbox's own database (decision 0040).
    pub mailboxes: &'a dyn MailboxStorage,
    /// Raw messages (R2).
    pub blobs: &'a dyn BlobStore,
    /// Outbound mail (the `send_email` binding).
    pub mailer: &'a dyn Mailer,
    /// Outbound HTTP to people's notification webhooks.
    pub webhooks: &'a dyn Webhooks,
    pub platform: &'a dyn Platform,
    pub config: &'a Config,
    /// Where this request's time goes, when the configuration asks (off, it
    /// measures nothing).
    pub timings: &'a Timings,
    /// The events this invocation's commits made, for listeners.
    pub events: &'a Published,
}

impl Node<'_> {
    /// Runs what responses left to after their answers (`Response::deferred`):
    /// the writes on D1, then those in mailboxes' own databases, a batch per
    /// mailbox in the order they were queued. Every batch is tried; the
    /// errors are answered.
    pub async fn write_deferred(&self, deferred: Deferred) -> Vec<StorageError> {
        let Deferred { mut on_d1, in_mailboxes, webhooks_on_d1 } = deferred;
        let mut errors = Vec::new();
        let queued_from = on_d1.len();
        on_d1.extend(webhooks_on_d1);
        if !on_d1.is_empty() {
            match self.database.execute(on_d1).await {
                // What the queueing statements queued is posted after it.
                Ok(results) => self.events.count_queued(results.get(queued_from..).unwrap_or_default()),
                Err(error) => errors.push(error),
            }
        }
        let mut remaining = in_mailboxes.as_slice();
        while let Some((mailbox_id, _)) = remaining.first() {
            let run = remaining.iter().take_while(|(next, _)| next == mailbox_id).count();
            let batch = remaining[..run].iter().map(|(_, statement)| statement.clone()).collect();
            if let Err(error) = self.mailboxes.of(mailbox_id).execute(batch).await {
                errors.push(error);
            }
            remaining = &remaining[run..];
        }
        errors
    }
}

/// Everything a node runs on, owned.
pub struct Installation<D, B, M, W, P, S> {
    pub database: D,
    pub mailboxes: S,
    pub blobs: B,
    pub mailer: M,
    pub webhooks: W,
    pub platform: P,
    pub config: Config,
    /// The Worker makes an installation per event, so these are one request's.
    pub timings: Timings,
    /// The events committed while handling it, handed to their hubs after.
    pub events: Published,
}

impl Config {
    /// The audit key named `id`: the current one or one kept from before a rotation.
    pub fn audit_key_named(&self, id: &str) -> Option<&AuditKey> {
        std::iter::once(&self.audit_key).chain(&self.previous_audit_keys).find(|key| key.id == id)
    }
}

impl<D: Database, B: BlobStore, M: Mailer, W: Webhooks, P: Platform, S: MailboxStorage> Installation<D, B, M, W, P, S> {
    /// The node a request is handled with, borrowing this installation.
    pub fn node(&self) -> Node<'_> {
        Node {
            database: &self.database,
            mailboxes: &self.mailboxes,
            blobs: &self.blobs,
            mailer: &self.mailer,
            webhooks: &self.webhooks,
            platform: &self.platform,
            config: &self.config,
            timings: &self.timings,
            events: &self.events,
        }
    }
}

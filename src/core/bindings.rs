//! The bindings besides storage that the core asks of its runtime: an object
//! store for raw messages (R2 on Cloudflare), the outbound mail binding
//! (`send_email`) and outbound HTTP (`fetch`): the webhooks reminders and
//! butlers post to, and the metadata documents OAuth clients name. Traits, so the core stores and sends without knowing any of them;
//! the adapter implements them on the Worker's bindings and the test kit in memory.

use crate::core::outbound::Destination;
use crate::core::storage::LocalBoxFuture;

/// Why the object store could not do what was asked. Logged, never shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobError(pub String);

impl std::fmt::Display for BlobError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Where raw messages are kept.
pub trait BlobStore {
    /// Stores `bytes` under `key`, replacing anything there.
    fn put<'a>(&'a self, key: &'a str, bytes: &'a [u8]) -> LocalBoxFuture<'a, Result<(), BlobError>>;
    /// The bytes under `key`, or `None` if there are none.
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<Vec<u8>>, BlobError>>;
    /// Removes whatever is under `key`; removing nothing is not an error.
    fn delete<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<(), BlobError>>;
}

/// Why the mail binding did not accept a message. Logged and recorded on the send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailerError(pub String);

/// The outbound mail binding.
pub trait Mailer {
    /// Hands one message to the binding for one envelope recipient; answers the
    /// Message-ID the mail service gave what left, when it reports one (it sets
    /// its own, whatever the message carried).
    fn send<'a>(
        &'a self,
        envelope_from: &'a str,
        envelope_to: &'a str,
        raw: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<Option<String>, MailerError>>;
}

/// Why a webhook delivery did not land: the receiver's status, or why there was none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookError(pub String);

/// A document fetched with `Webhooks::get`: its status and at most the
/// bytes asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
    /// Its `Cache-Control` header, for what may be kept (an agent's card).
    pub cache_control: Option<String>,
    /// Its `Location` header: a redirect is never followed, only reported.
    pub location: Option<String>,
}

impl Fetched {
    /// An answer with `status` and `body` and no headers that matter.
    pub fn of(status: u16, body: Vec<u8>) -> Fetched {
        Fetched { status, body, cache_control: None, location: None }
    }
}

/// Outbound HTTP: the webhooks people give for their notifications, and the
/// documents the node reads from elsewhere (an OAuth client's metadata). Each
/// takes a `Destination`, which only `outbound`'s rule makes: nothing leaves for
/// an address the rule has not just allowed.
pub trait Webhooks {
    /// GETs `destination` without following redirects, within a few seconds:
    /// its status and body, or why there was none. A body longer than `limit`
    /// bytes is an error, whatever its status.
    fn get<'a>(
        &'a self,
        destination: &'a Destination,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>>;

    /// POSTs `body` to `destination` with `headers`, without following
    /// redirects, within a few seconds, and reads the answer: its status and
    /// at most `limit` bytes of its body (longer is an error, whatever its
    /// status). For a call whose answer matters (an A2A request elsewhere).
    fn exchange<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>>;

    /// POSTs `body` to `destination` with `headers`, without following
    /// redirects, within a few seconds; the receiver's status, whatever it is,
    /// or why nothing answered.
    fn post<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<u16, WebhookError>>;
}

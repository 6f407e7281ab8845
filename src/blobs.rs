//! Where raw messages are kept: an object store (R2 on Cloudflare), behind a small
//! trait so the core can store and fetch bytes without knowing the binding.
//!
//! Received messages are stored content-addressed (`raw/<sha256>`), so a message
//! delivered to two mailboxes is stored once and storing it again is harmless.

use sha2::{Digest, Sha256};

use crate::credentials::hex;
use crate::storage::LocalBoxFuture;

/// Why the object store could not do what was asked. Logged, never shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobError(pub String);

pub trait BlobStore {
    /// Stores `bytes` under `key`, replacing anything there.
    fn put<'a>(&'a self, key: &'a str, bytes: &'a [u8]) -> LocalBoxFuture<'a, Result<(), BlobError>>;
    /// The bytes under `key`, or `None` if there are none.
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<Vec<u8>>, BlobError>>;
}

/// The key a received message's raw bytes are stored under.
pub fn raw_message_key(raw: &[u8]) -> String {
    format!("raw/{}", hex(&Sha256::digest(raw)))
}

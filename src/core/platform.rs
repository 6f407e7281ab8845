//! What the core asks of the world it runs in: the time, random bytes, password
//! hashing, waiting, and a place to log.
//!
//! The core never reads a clock or an entropy source itself; the adapter passes a
//! `Platform` in, and native tests pass a deterministic one. Password hashing is
//! here rather than in the core because on a Worker it must run through WebCrypto
//! (native, fast) rather than as WASM (several times slower on a CPU budget).

use crate::core::storage::LocalBoxFuture;

/// Why the platform could not do what was asked. Logged, never shown to a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformError(pub String);

pub trait Platform {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;

    /// Fills `bytes` from a cryptographically secure source.
    fn fill_random(&self, bytes: &mut [u8]);

    /// PBKDF2 with HMAC-SHA256, 32 bytes of output.
    fn pbkdf2_sha256<'a>(
        &'a self,
        password: &'a [u8],
        salt: &'a [u8],
        iterations: u32,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PlatformError>>;

    /// Waits, without holding anything, before a retry.
    fn sleep(&self, milliseconds: u32) -> LocalBoxFuture<'_, ()>;

    /// Records something an operator should see; never reaches a client.
    fn log(&self, message: &str);
}

/// `N` random bytes from the platform.
pub fn random_bytes<const N: usize>(platform: &dyn Platform) -> [u8; N] {
    let mut bytes = [0u8; N];
    platform.fill_random(&mut bytes);
    bytes
}

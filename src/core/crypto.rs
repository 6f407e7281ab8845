//! The few cryptographic helpers every layer uses: SHA-256 of a secret as hex,
//! hex itself, and comparison in constant time.
//!
//! Keyed hashing (access tokens, and the audit chain) is written where its key
//! lives; this module holds only what needs no key.

use sha2::{Digest, Sha256};

/// SHA-256 of a secret, as lower-case hex: how every bearer secret is stored.
pub fn hash_secret(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

/// SHA-256 of bytes, as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Compares two byte strings in time independent of where they differ.
pub fn constant_time_equal(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len() && left.iter().zip(right).fold(0u8, |difference, (a, b)| difference | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_equality_is_equality() {
        assert!(constant_time_equal(b"abc", b"abc"));
        assert!(!constant_time_equal(b"abc", b"abd"));
        assert!(!constant_time_equal(b"abc", b"ab"));
    }

    #[test]
    fn hashes_are_lower_case_hex() {
        assert_eq!(hash_secret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}

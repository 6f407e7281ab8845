//! Password hashes: PBKDF2-HMAC-SHA256 with a per-person salt, the iteration count
//! stored beside each hash so it can change later.
//!
//! The hashing itself is the platform's (WebCrypto on a Worker). Only the routes
//! that take a password (setup, sign-in, creating a person, changing a password)
//! call into this module; every other credential check is a SHA-256 or an HMAC.

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use crate::core::crypto::constant_time_equal;
use crate::core::platform::{Platform, PlatformError, random_bytes};

pub const MINIMUM_LENGTH: usize = 12;
pub const MAXIMUM_LENGTH: usize = 1024;

const SCHEME: &str = "pbkdf2-sha256";

/// Whether a new password is acceptable: long enough, and not absurdly long.
pub fn is_acceptable(password: &str) -> bool {
    let length = password.chars().count();
    (MINIMUM_LENGTH..=MAXIMUM_LENGTH).contains(&length)
}

/// Hashes a new password with a fresh salt: `pbkdf2-sha256$<iterations>$<salt>$<hash>`.
pub async fn hash(platform: &dyn Platform, password: &str, iterations: u32) -> Result<String, PlatformError> {
    let salt: [u8; 16] = random_bytes(platform);
    let derived = platform.pbkdf2_sha256(password.as_bytes(), &salt, iterations).await?;
    Ok(format!("{SCHEME}${iterations}${}${}", STANDARD_NO_PAD.encode(salt), STANDARD_NO_PAD.encode(derived)))
}

/// Whether `password` matches `stored`, at the iteration count stored with it.
/// With `stored` absent (an unknown account) the same work is done against a
/// decoy at the current count, so timing does not reveal which emails exist.
pub async fn verify(
    platform: &dyn Platform,
    password: &str,
    stored: Option<&str>,
    current_iterations: u32,
) -> Result<bool, PlatformError> {
    let decoy =
        format!("{SCHEME}${current_iterations}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    let (stored, genuine) = match stored {
        Some(stored) => (stored, true),
        None => (decoy.as_str(), false),
    };
    let Some((iterations, salt, expected)) = parse(stored) else {
        return Err(PlatformError("a stored password hash is not in a format this node reads".into()));
    };
    let derived = platform.pbkdf2_sha256(password.as_bytes(), &salt, iterations).await?;
    Ok(constant_time_equal(&derived, &expected) && genuine)
}

fn parse(stored: &str) -> Option<(u32, Vec<u8>, Vec<u8>)> {
    let mut parts = stored.split('$');
    if parts.next()? != SCHEME {
        return None;
    }
    let iterations = parts.next()?.parse().ok()?;
    let salt = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    let hash = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    parts.next().is_none().then_some((iterations, salt, hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::node::PASSWORD_ITERATIONS as ITERATIONS;
    use crate::testing::FixedPlatform;
    use futures_executor::block_on;

    #[test]
    fn a_hash_verifies_its_password_and_no_other() {
        let platform = FixedPlatform::at(0);
        let stored = block_on(hash(&platform, "correct horse battery", ITERATIONS)).unwrap();
        assert!(stored.starts_with("pbkdf2-sha256$100000$"), "{stored}");
        assert!(block_on(verify(&platform, "correct horse battery", Some(&stored), ITERATIONS)).unwrap());
        assert!(!block_on(verify(&platform, "correct horse batterY", Some(&stored), ITERATIONS)).unwrap());
        assert!(!block_on(verify(&platform, "anything", None, ITERATIONS)).unwrap());
    }

    #[test]
    fn two_hashes_of_one_password_differ_by_salt() {
        let platform = FixedPlatform::at(0);
        let first = block_on(hash(&platform, "correct horse battery", ITERATIONS)).unwrap();
        let second = block_on(hash(&platform, "correct horse battery", ITERATIONS)).unwrap();
        assert_ne!(first, second);
    }

    #[test]
    fn acceptable_passwords_have_twelve_to_1024_characters() {
        assert!(!is_acceptable("short"));
        assert!(is_acceptable("twelve chars"));
        assert!(is_acceptable("ééééééééééé1"), "counted in characters, not bytes");
        assert!(!is_acceptable(&"x".repeat(1025)));
    }
}

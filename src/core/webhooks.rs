//! What every webhook the node posts shares, whichever domain posts it (a
//! person's reminders, a butler's deliveries, a subscribed endpoint's
//! events): the signatures a receiver checks (the node's own
//! `mailroom-signature`, and Standard Webhooks' `webhook-signature`), and a
//! secret derived from the node's own key. Which addresses it posts to is
//! `outbound`'s rule, the same for every request the node makes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::core::crypto::hex;

/// A webhook's signing secret derived from the node's own `key` for `label`
/// (such as a butler's id): shown to whoever may see it, never stored, and the
/// same for as long as the key is.
pub fn derived_secret(key: &[u8], label: &str) -> String {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(b"mailroom.webhook-secret.v1\n");
    mac.update(label.as_bytes());
    format!("whsec_{}", hex(&mac.finalize().into_bytes()))
}

/// The `mailroom-signature` header of a webhook body sent at `now_ms`: the
/// HMAC-SHA256 of `<unix seconds>.<body>` with the receiver's secret.
pub fn signature(secret: &str, now_ms: i64, body: &str) -> String {
    let timestamp = now_ms / 1000;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(format!("{timestamp}.{body}").as_bytes());
    format!("t={timestamp},v1={}", hex(&mac.finalize().into_bytes()))
}

/// The prefix of a Standard Webhooks secret; base64 of its bytes follows.
pub const STANDARD_SECRET_PREFIX: &str = "whsec_";

/// A new Standard Webhooks secret from 32 random `bytes`.
pub fn standard_secret(bytes: &[u8; 32]) -> String {
    format!("{STANDARD_SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The Standard Webhooks `webhook-signature` of message `message_id` sent at
/// `timestamp_seconds` with `body`: `v1,` and the base64 HMAC-SHA256 of
/// `<id>.<timestamp>.<body>`, keyed with the secret's decoded bytes. `None`
/// for a secret that is not one (no prefix, not base64).
pub fn standard_signature(secret: &str, message_id: &str, timestamp_seconds: i64, body: &str) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix(STANDARD_SECRET_PREFIX)?).ok()?;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).ok()?;
    mac.update(format!("{message_id}.{timestamp_seconds}.{body}").as_bytes());
    Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_signature_is_the_specification_s_own_example() {
        // The Standard Webhooks specification's example (its reference
        // libraries test against it).
        let signature = standard_signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(signature.as_deref(), Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
        assert_eq!(standard_signature("not-a-secret", "msg_1", 1, "{}"), None);
    }

    #[test]
    fn the_signature_is_the_hmac_of_the_timestamp_and_body() {
        // Computed independently: printf '1796000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
        let header = signature("whsec_test", 1_796_000_000_123, r#"{"a":1}"#);
        assert_eq!(header, "t=1796000000,v1=085ae0e1f7d07c47ac6d09a4d065480abc30b77a8295721984b7a20f8b9c2000");
    }
}

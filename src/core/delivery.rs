//! One delivery the node makes on its own (a reminder, a butler's webhook, a
//! checkpoint to the audit witness): `Undelivered` says why it did not arrive,
//! as a type the background work can match on and record, and `post_within`
//! is the one way a webhook is posted, checked, timed and judged by its status.
//! The words each failure is recorded in are `Undelivered`'s `Display`, so a
//! reminder, a butler and the witness say the same thing of the same failure.

use std::fmt;

use crate::core::bindings::Webhooks;
use crate::core::outbound::{self, Destination, OutboundPolicy, Refused};
use crate::core::platform::Platform;

/// Why a delivery did not arrive. `receiver` is how the record names who was
/// to receive it ("the webhook", "the witness's webhook", its address).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undelivered {
    /// The outbound rule refuses the address now (it may have tightened since
    /// the address was set).
    Refused { receiver: String, refused: Refused },
    /// The receiver answered with a status outside 2xx.
    Answered { receiver: String, status: u16 },
    /// No connection, or the runtime refused the request.
    Unreachable { receiver: String, error: String },
    /// No answer within `outbound::POST_TIMEOUT_MS`.
    TimedOut { receiver: String, seconds: u32 },
    /// The node lacks a setting it needs to send at all; the operator's to fix.
    Unconfigured(&'static str),
    /// What was to be delivered is no longer there (a removed webhook).
    Gone(&'static str),
    /// The message could not be written (serialised or built).
    Unwritable(String),
    /// The mail binding did not accept the message.
    MailRefused(String),
}

impl fmt::Display for Undelivered {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undelivered::Refused { receiver, refused } => {
                write!(formatter, "{receiver} may not be posted to: {}", refused.why())
            }
            Undelivered::Answered { receiver, status } => write!(formatter, "{receiver} answered {status}"),
            Undelivered::Unreachable { receiver, error } => {
                write!(formatter, "{receiver} could not be reached ({error})")
            }
            Undelivered::TimedOut { receiver, seconds } => {
                write!(formatter, "{receiver} did not answer within {seconds} seconds")
            }
            Undelivered::Unconfigured(what) | Undelivered::Gone(what) => formatter.write_str(what),
            Undelivered::Unwritable(what) => write!(formatter, "the message could not be written: {what}"),
            Undelivered::MailRefused(what) => write!(formatter, "the mail service did not accept it: {what}"),
        }
    }
}

/// What a webhook post needs besides the node: where, how long an address may
/// be, and how the record names the receiver.
pub struct Post<'a> {
    pub url: &'a str,
    pub maximum_url_bytes: usize,
    pub receiver: &'a str,
    pub headers: &'a [(String, String)],
    pub body: &'a str,
}

/// Posts `post`, its address checked again against `policy` first, within
/// `outbound::POST_TIMEOUT_MS`: delivered only on a 2xx answer.
pub async fn post_within(
    webhooks: &dyn Webhooks,
    platform: &dyn Platform,
    policy: &OutboundPolicy,
    post: Post<'_>,
) -> Result<(), Undelivered> {
    let receiver = || post.receiver.to_string();
    let destination = Destination::check(post.url, post.maximum_url_bytes, policy)
        .map_err(|refused| Undelivered::Refused { receiver: receiver(), refused })?;
    let posted = webhooks.post(&destination, post.headers, post.body);
    match outbound::within(platform, outbound::POST_TIMEOUT_MS, posted).await {
        Some(Ok(status)) if (200..300).contains(&status) => Ok(()),
        Some(Ok(status)) => Err(Undelivered::Answered { receiver: receiver(), status }),
        Some(Err(error)) => Err(Undelivered::Unreachable { receiver: receiver(), error: error.0 }),
        None => Err(Undelivered::TimedOut { receiver: receiver(), seconds: outbound::POST_TIMEOUT_MS / 1000 }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_names_its_receiver_in_the_words_recorded() {
        let receiver = "the webhook".to_string();
        let cases = [
            (Undelivered::Answered { receiver: receiver.clone(), status: 503 }, "the webhook answered 503"),
            (
                Undelivered::TimedOut { receiver: receiver.clone(), seconds: 10 },
                "the webhook did not answer within 10 seconds",
            ),
            (
                Undelivered::Unreachable { receiver: receiver.clone(), error: "connection reset".into() },
                "the webhook could not be reached (connection reset)",
            ),
            (
                Undelivered::Refused { receiver, refused: Refused::NotHttps },
                "the webhook may not be posted to: it is not an https address (plain http reaches only this \
                 machine, in local development)",
            ),
        ];
        for (failure, words) in cases {
            assert_eq!(failure.to_string(), words);
        }
    }
}

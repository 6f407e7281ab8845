//! The audit witness: a party outside the account that each checkpoint is also
//! sent to, signed, so that even a rollback of the chain together with both
//! records of its checkpoints (D1 and R2) can be proved (decision 0027).
//!
//! Who the witness is lives in the chain itself: the last accepted
//! `set_audit_witness` or `remove_audit_witness` entry names it (its detail's
//! `witness`), and each checkpoint carries, signed, the witness in force at its
//! head, followed by the walk from the checkpoint before. So a database writer
//! without the key can neither redirect nor silence the witness: there is no row
//! to change, and an entry they could write would not verify.
//!
//! A witness is `mailto:` and an address (mailed from `REMINDER_SENDER`) or a
//! webhook's URL, held to the rule every webhook the node posts to is held to
//! (`core::webhooks::acceptable_url`) when it is set and again each time it is
//! posted to. Every message carries `mailroom-signature` under a secret derived
//! from the audit key and the witness, which the administrator gives the auditor.
//! This module owns the witness's routes too; it never writes a checkpoint.

use mail_builder::MessageBuilder;
use mail_builder::headers::raw::Raw;
use mailroom_contract::api::{AuditCheckpoint, AuditWitness, SetAuditWitness, audit_limits};
use serde::Serialize;

use crate::audit::chain::StoredEntry;
use crate::audit::checkpoints::{Recorded, latest_recorded, witness_told};
use crate::audit::walk::{Anchor, witness_change_in};
use crate::core::addresses;
use crate::core::context::Context;
use crate::core::delivery::{self, Post, Undelivered};
use crate::core::http::Response;
use crate::core::node::{Config, Node};
use crate::core::outbound::Destination;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::Statement;
use crate::core::time::rfc3339;
use crate::core::webhooks;

use super::store;

/// How an email witness is told apart from a webhook.
const MAILTO: &str = "mailto:";

/// The secret messages to `witness` are signed with: derived from the audit
/// key and the witness, so a witness replaced cannot sign as the next one.
pub(crate) fn signing_secret(config: &Config, witness: &str) -> String {
    webhooks::derived_secret(&config.audit_key.secret, &format!("audit-witness:{witness}"))
}

/// What a witness is sent: the checkpoint, and the node it comes from.
#[derive(Serialize)]
struct WitnessMessage<'a> {
    kind: &'static str,
    origin: Option<&'a str>,
    checkpoint: &'a AuditCheckpoint,
}

/// Sends `checkpoint` to `witness`, signed.
pub(crate) async fn tell(node: &Node<'_>, witness: &str, checkpoint: &AuditCheckpoint) -> Result<(), Undelivered> {
    let message = WitnessMessage { kind: "audit_checkpoint", origin: node.config.public_origin.as_deref(), checkpoint };
    let body = serde_json::to_string(&message).map_err(|error| Undelivered::Unwritable(error.to_string()))?;
    let now_ms = node.platform.now_ms();
    let signature = webhooks::signature(&signing_secret(node.config, witness), now_ms, &body);
    match witness.strip_prefix(MAILTO) {
        Some(address) => mail(node, address, checkpoint, &body, &signature, now_ms).await,
        None => post(node, witness, checkpoint, &body, &signature).await,
    }
}

async fn post(
    node: &Node<'_>,
    url: &str,
    checkpoint: &AuditCheckpoint,
    body: &str,
    signature: &str,
) -> Result<(), Undelivered> {
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("mailroom-delivery".to_string(), format!("audit-checkpoint-{}", checkpoint.number.unwrap_or_default())),
        ("mailroom-signature".to_string(), signature.to_string()),
    ];
    // Checked again as it is posted to: the rule may have tightened since it was set.
    let post = Post {
        url,
        maximum_url_bytes: audit_limits::WITNESS_ADDRESS_BYTES,
        receiver: "the witness's webhook",
        headers: &headers,
        body,
    };
    delivery::post_within(node.webhooks, node.platform, &node.config.outbound_policy(), post).await
}

async fn mail(
    node: &Node<'_>,
    address: &str,
    checkpoint: &AuditCheckpoint,
    body: &str,
    signature: &str,
    now_ms: i64,
) -> Result<(), Undelivered> {
    let Some(sender) = node.config.reminder_sender.as_deref() else {
        return Err(Undelivered::Unconfigured(
            "the node has no REMINDER_SENDER address to mail the witness from; tell its operator",
        ));
    };
    let origin = node.config.public_origin.as_deref().unwrap_or("a Mailroom node");
    let number = checkpoint.number.unwrap_or_default();
    let text = format!(
        "Checkpoint {number} of {origin}'s audit chain: entry {seq} has hash {hash} ({at}).\n\n\
         Keep this message. The line below is the checkpoint as the node signed it with its audit key. The \
         Mailroom-Signature header is the HMAC-SHA256, under the secret the node's administrator gave you, of the \
         header's t value, a dot, and that line. A node that later shows a latest checkpoint numbered below \
         {number}, or another hash for entry {seq}, was rolled back.\n\n{body}\n",
        seq = checkpoint.seq,
        hash = checkpoint.hash,
        at = checkpoint.at,
    );
    let domain = sender.rsplit_once('@').map_or("mailroom.invalid", |(_, domain)| domain);
    let message = MessageBuilder::new()
        .from(("Mailroom audit", sender))
        .to(address)
        .subject(format!("Audit checkpoint {number} of {origin}: entry {}", checkpoint.seq))
        .message_id(format!("audit-checkpoint-{number}-{}@{domain}", checkpoint.seq))
        // Dated by the node's clock: mail-builder would read the system clock,
        // which the Workers runtime does not have.
        .date(now_ms / 1000)
        .header("Auto-Submitted", Raw::new("auto-generated"))
        .header("Mailroom-Signature", Raw::new(signature.to_string()))
        .text_body(text)
        .write_to_vec()
        .map_err(|error| Undelivered::Unwritable(error.to_string()))?;
    node.mailer.send(sender, address, &message).await.map(|_| ()).map_err(|error| Undelivered::MailRefused(error.0))
}

/// Tells `checkpoint` to its witness, and to the witness it replaced (which so
/// learns that it was): the update recording how telling its own went.
pub(crate) async fn tell_witnesses(
    node: &Node<'_>,
    checkpoint: &AuditCheckpoint,
    replaced: Option<&str>,
) -> Option<Statement> {
    if let Some(replaced) = replaced.filter(|replaced| Some(*replaced) != checkpoint.witness.as_deref())
        && let Err(error) = tell(node, replaced, checkpoint).await
    {
        node.platform.log(&format!("telling the replaced audit witness {replaced}: {error}"));
    }
    let witness = checkpoint.witness.as_deref()?;
    let outcome = tell(node, witness, checkpoint).await;
    if let Err(error) = &outcome {
        node.platform.log(&format!("telling the audit witness {witness}: {error}"));
    }
    Some(witness_told(checkpoint.number.unwrap_or_default(), &outcome, node.platform.now_ms()))
}

/// The last accepted change of the witness.
fn latest_change() -> Statement {
    store::latest_witness_change()
}

/// The witness as an administrator is shown it.
fn present(config: &Config, witness: Option<String>, changed_in_seq: Option<i64>, recorded: Recorded) -> AuditWitness {
    AuditWitness {
        signing_secret: witness.as_deref().map(|witness| signing_secret(config, witness)),
        witness,
        changed_in_seq,
        latest_checkpoint: recorded.checkpoint,
        delivered_at: recorded.witnessed_at.map(rfc3339),
        delivery_error: recorded.witness_error,
    }
}

/// `GET /api/audit/witness`.
pub async fn show_witness(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [change, recorded] = context.read_array([latest_change(), latest_recorded()]).await?;
    let recorded = Recorded::read(&recorded).map_err(|error| context.internal(error))?;
    let change: Vec<StoredEntry> = change.decode_all().map_err(|error| context.internal(error))?;
    let (witness, changed_in_seq) = match change.first() {
        // Shown only from an entry that is what it says; verification names one that is not.
        Some(entry) if Anchor::verified(context.config(), entry).is_ok() => {
            (witness_change_in(entry).flatten(), Some(entry.seq))
        }
        Some(entry) => {
            context.platform().log(&format!("the audit witness's entry {} does not verify", entry.seq));
            (None, None)
        }
        None => (None, None),
    };
    Ok(context.json(&present(context.config(), witness, changed_in_seq, recorded)))
}

/// The witness `request` names, checked: `mailto:` and an address, or a
/// webhook's URL the node will post to.
fn witness_named(config: &Config, request: SetAuditWitness) -> Result<String, Refusal> {
    match (request.email, request.webhook_url) {
        (Some(email), None) => {
            let address = addresses::normalize(&email)
                .filter(|address| address.len() <= audit_limits::WITNESS_ADDRESS_BYTES)
                .ok_or_else(|| RequestError::wrong_field("email", "an email address, such as auditor@example.org"))?;
            if config.reminder_sender.is_none() {
                return Err(Refusal::misconfigured(
                    "REMINDER_SENDER, the address the node's own mail (reminders, and checkpoints to an email witness) \
                     comes from",
                ));
            }
            Ok(format!("{MAILTO}{address}"))
        }
        (None, Some(url)) => {
            let url = url.trim().to_string();
            if let Err(refused) =
                Destination::check(&url, audit_limits::WITNESS_ADDRESS_BYTES, &config.outbound_policy())
            {
                return Err(RequestError::wrong_field(
                    "webhook_url",
                    format!(
                        "an https:// address on the internet, at most {} bytes, without credentials in it: {}",
                        audit_limits::WITNESS_ADDRESS_BYTES,
                        refused.why()
                    ),
                ));
            }
            Ok(url)
        }
        _ => Err(RequestError::wrong_field("email", "exactly one of `email` and `webhook_url`")),
    }
}

/// `PUT /api/audit/witness`: recorded in the chain by this call's own entry,
/// which is what puts it in force.
pub async fn set_witness(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let witness = witness_named(context.config(), context.body()?)?;
    let [recorded] = context.read_array([latest_recorded()]).await?;
    let recorded = Recorded::read(&recorded).map_err(|error| context.internal(error))?;
    context.audit_detail(serde_json::json!({ "witness": witness }));
    Ok(context.json(&present(context.config(), Some(witness), None, recorded)))
}

/// `DELETE /api/audit/witness`.
pub async fn remove_witness(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [recorded] = context.read_array([latest_recorded()]).await?;
    let recorded = Recorded::read(&recorded).map_err(|error| context.internal(error))?;
    context.audit_detail(serde_json::json!({ "witness": null }));
    Ok(context.json(&present(context.config(), None, None, recorded)))
}

#[cfg(test)]
mod tests {
    use crate::audit::store::WITNESS_CHANGES;
    use crate::audit::walk::{REMOVE_WITNESS, SET_WITNESS};

    #[test]
    fn the_entries_that_change_the_witness_are_the_routes_own() {
        let registry = mailroom_contract::registry();
        let set = registry.route(mailroom_contract::RouteId::SetAuditWitness).tool;
        let remove = registry.route(mailroom_contract::RouteId::RemoveAuditWitness).tool;
        assert_eq!((SET_WITNESS, REMOVE_WITNESS), (set, remove));
        assert_eq!(WITNESS_CHANGES, format!("action IN ('{set}', '{remove}')"));
        let migration = include_str!("../../migrations/0024_audit_copies_checkpoints_and_witness.sql");
        assert!(migration.contains(&format!("WHERE {WITNESS_CHANGES};")), "the partial index is on the same condition");
    }
}

//! The chain's alarm (decision 0027): when the chain, a checkpoint or a
//! mailbox's segment does not verify, an entry in the chain and a notification
//! to administrators, once per fault (`Failure::alarm_key`), written by the
//! upkeep, the checkpoint route and the segments' anchoring alike.

use super::store;
use crate::audit::chain::append_unless_raised;
use crate::audit::walk::Failure;
use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::platform::Platform;
use crate::core::storage::Statement;

/// How administrators are told that the chain failed: a statement for the
/// batch that raises the alarm, written by the notifications domain, a floor
/// above, which the dispatcher hands in. It must write at most once per
/// `Failure::alarm_key`.
pub type TellAdministrators = fn(&Failure, &dyn Platform) -> Statement;

/// The action an alarm's entry is recorded under: the checkpoint it refused.
const CHECKPOINT_ACTION: &str = "write_audit_checkpoint";
/// The refusal code an alarm is recorded and answered with.
pub const CHAIN_BROKEN: &str = "audit_chain_broken";

/// The statements that raise `failure`'s alarm once: the notification, and the
/// key that marks it raised. The entry is the caller's: a route's own refused
/// entry, or the upkeep's (`raise_alarm`).
pub(crate) fn alarm(failure: &Failure, tell: TellAdministrators, platform: &dyn Platform) -> Vec<Statement> {
    vec![tell(failure, platform), store::raise_alarm(failure.alarm_key(), platform.now_ms())]
}

/// What the alarm's entry says of `failure`.
pub(crate) fn alarm_detail(failure: &Failure) -> serde_json::Value {
    serde_json::json!({
        "fault": failure.fault.name(),
        "first_bad_seq": failure.seq,
        "problem": failure.sentence(),
    })
}

/// Raises `failure`'s alarm from the upkeep: its entry (once), the
/// notification and the key, in one batch.
pub(crate) async fn raise_alarm(
    work: &Background<'_>,
    failure: &Failure,
    tell: TellAdministrators,
) -> Result<(), BackgroundError> {
    let node = work.node();
    node.platform.log(&format!("the audit chain does not verify; nothing was signed: {}", failure.sentence()));
    let mut detail = alarm_detail(failure);
    if let Some(map) = detail.as_object_mut() {
        map.insert("code".into(), CHAIN_BROKEN.into());
    }
    let record = AuditRecord {
        at: node.platform.now_ms(),
        actor: None,
        delegator: None,
        surface: None,
        action: CHECKPOINT_ACTION.into(),
        object: failure.seq.map(|seq| seq.to_string()),
        outcome: "refused",
        detail: Some(detail.to_string()),
        topic: None,
    };
    // The entry first: it is written only while the key is still absent.
    let mut batch = vec![append_unless_raised(&node.config.audit_key, &record, node.platform, &failure.alarm_key())];
    batch.extend(alarm(failure, tell, node.platform));
    work.run(batch).await.map(|_| ())
}

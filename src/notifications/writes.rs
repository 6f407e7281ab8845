//! What other domains write in the feed, in the same batch as the change it
//! tells of (so a notification exists exactly when its cause does): a notice
//! for a person or an audience, one written once for a key, the
//! administrators' alarm, a notice resolved; and what the scheduled run
//! removes. Each hands back statements for the caller to batch.

use mailroom_contract::Relation;
use mailroom_contract::api::{NotificationKind, notification_limits};

use super::notice::{Addressee, Notice};
use super::store::{self, Addressed, Alarm};
use crate::audit::Failure;
use crate::core::ids::{IdKind, new_id};
use crate::core::platform::Platform;
use crate::core::storage::Statement;
use crate::core::time::DAY_MS;

/// The insert writing `notice` for `to`, at `platform`'s now. For a person who
/// is also the actor (a person's own act), nothing is written.
pub fn notify(notice: &Notice<'_>, to: Addressee<'_>, platform: &dyn Platform) -> Statement {
    let id = new_id(IdKind::Notification, platform);
    let (person_of, audience): (&str, Option<&str>) = match to {
        Addressee::PersonOf(actor) => (actor, None),
        Addressee::Deciders => ("", Some(Relation::ApprovalDecide.name())),
    };
    store::notification(notice, Addressed { id, at: platform.now_ms(), person_of, audience })
}

/// The insert writing `notice` for the person `person_id` once for `key`: a
/// second notice with the same key (a later scheduled run) writes nothing.
pub fn notify_once(notice: &Notice<'_>, person_id: &str, key: &str, platform: &dyn Platform) -> Statement {
    store::notification_once(notice, person_id, key, new_id(IdKind::Notification, platform), platform.now_ms())
        .statement()
}

/// The notification telling administrators that the audit chain failed where
/// a checkpoint was to be written (`audit::TellAdministrators`): addressed to
/// whoever holds org.admin when the feed is read, once per fault.
pub fn audit_alarm(failure: &Failure, platform: &dyn Platform) -> Statement {
    let key = failure.alarm_key();
    store::administrators_alarm(Alarm {
        id: new_id(IdKind::Notification, platform),
        at: platform.now_ms(),
        kind: NotificationKind::AuditChainBroken,
        dedupe_key: format!("audit_alarm:{key}"),
        key: &key,
        title: "The audit chain does not verify: no checkpoint was signed",
        detail: &failure.sentence(),
    })
    .statement()
}

/// The SQL condition that no notification was written for the key `key` (an SQL
/// expression): for a writer choosing what `notify_once` has still to write.
pub fn not_yet_written(key: &str) -> String {
    store::not_yet_written(key)
}

/// The update marking every open notification of `kind` about `object_id` as
/// needing nobody any more (an approval decided or taken back), at `now_ms`.
pub fn resolve(kind: NotificationKind, object_id: &str, now_ms: i64) -> Statement {
    store::resolve(kind, object_id, now_ms)
}

/// The delete removing notifications older than the node keeps, and their read
/// marks, as of `now_ms`: the scheduled run's.
pub fn remove_expired(now_ms: i64) -> Vec<Statement> {
    store::remove_written_before(now_ms - notification_limits::KEPT_DAYS * DAY_MS)
}

/// How full the node's database is, when administrators are told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatabaseFullness {
    /// At or past `DATABASE_WARNING_PERCENT` of its limit: mail is still stored.
    Nearly,
    /// At its limit: inbound mail is refused until room is made.
    Full,
}

/// Which database an alarm is about: the node's one D1, or a mailbox's own
/// (decision 0040), named by its address.
#[derive(Clone, Copy, Debug)]
pub enum AlarmedDatabase<'a> {
    Node,
    Mailbox { id: &'a str, address: &'a str },
}

/// The notification telling administrators that `database` holds
/// `size_bytes` of its `limit_bytes`, at most once a day per `fullness` (and
/// mailbox).
pub fn database_alarm(
    database: AlarmedDatabase<'_>,
    fullness: DatabaseFullness,
    size_bytes: u64,
    limit_bytes: u64,
    platform: &dyn Platform,
) -> Statement {
    let now_ms = platform.now_ms();
    let level = match fullness {
        DatabaseFullness::Nearly => "nearly",
        DatabaseFullness::Full => "full",
    };
    let percent = size_bytes.saturating_mul(100) / limit_bytes.max(1);
    let (title, detail, key, dedupe) = match database {
        AlarmedDatabase::Node => (
            match fullness {
                DatabaseFullness::Nearly => "The node's database is nearly full".to_string(),
                DatabaseFullness::Full => "The node's database is full: inbound mail is refused".to_string(),
            },
            format!(
                "it holds {size_bytes} of its {limit_bytes} bytes ({percent}%); at its limit inbound mail is refused with a temporary failure, so senders try again later: delete mail the organisation no longer needs, or raise DATABASE_LIMIT_BYTES to what the plan allows"
            ),
            level.to_string(),
            format!("database_alarm:{level}"),
        ),
        AlarmedDatabase::Mailbox { id, address } => (
            match fullness {
                DatabaseFullness::Nearly => format!("The mailbox {address} is nearly full"),
                DatabaseFullness::Full => format!("The mailbox {address} is full: its inbound mail is refused"),
            },
            format!(
                "its own database holds {size_bytes} of its {limit_bytes} bytes ({percent}%); at its limit mail to {address} is refused with a temporary failure, so senders try again later: delete mail it no longer needs, or raise MAILBOX_LIMIT_BYTES to what the plan allows"
            ),
            id.to_string(),
            format!("mailbox_alarm:{id}:{level}"),
        ),
    };
    let day = now_ms / DAY_MS;
    store::administrators_alarm(Alarm {
        id: new_id(IdKind::Notification, platform),
        at: now_ms,
        kind: NotificationKind::DatabaseNearlyFull,
        key: &key,
        dedupe_key: format!("{dedupe}:{day}"),
        title: &title,
        detail: &detail,
    })
    .statement()
}

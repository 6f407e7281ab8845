//! Waking snoozed conversations (decision 0048), the minute's job: the
//! wake-ups due are read from D1's index by time, and each conversation is
//! woken where its mailbox's mail is, only if its own row is still snoozed
//! until exactly that moment; so the job asks only the mailboxes with a
//! conversation to wake, never every mailbox's own database.
//!
//! A wake is the node's own act, recorded in the chain like other scheduled
//! work (`wake_thread`, told on the mailbox's live topic so open pages read
//! again): the conversation opens again and its assignee, when a person, is
//! told in their feed once for that moment. Idempotent: a conversation woken,
//! or snoozed again, since the index was read is not woken (the change is
//! guarded, and a guard that fails rolls the batch back for the next run to
//! read again), and a notice is written once per conversation and moment.

use mailroom_contract::api::NotificationKind;

use crate::core::background::{Background, BackgroundError};
use crate::core::context::ports::AuditRecord;
use crate::core::events::Topic;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::storage::Statement;
use crate::notifications::{self, Notice};

use super::store::{self, DueRow, StillSnoozedRow};

/// How many wake-ups one run reads; the rest wait for the next minute.
pub const WAKES_PER_RUN: i64 = 100;
/// How many moved mailboxes one run wakes conversations in (two subrequests
/// each: a read and a commit), within an invocation's subrequests shared with
/// the minute's other jobs; the rest wait for the next minute.
pub const MAILBOXES_PER_RUN: usize = 5;

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WakeReport {
    /// Conversations opened again.
    pub woken: usize,
    /// Wake-ups forgotten without waking anything (woken early, snoozed again
    /// to another moment, or gone).
    pub stale: usize,
}

/// A conversation to wake: still snoozed until its wake-up's moment.
struct ToWake {
    thread_id: String,
    mailbox_id: String,
    wake_at: i64,
    subject: String,
    assignee: Option<String>,
}

impl ToWake {
    fn record(&self, now_ms: i64) -> AuditRecord {
        AuditRecord {
            at: now_ms,
            actor: None,
            delegator: None,
            surface: Some("schedule"),
            action: "wake_thread".into(),
            object: Some(self.thread_id.clone()),
            outcome: "ok",
            detail: Some(
                serde_json::json!({
                    "mailbox": self.mailbox_id,
                    "snoozed_until": crate::core::time::rfc3339(self.wake_at),
                    "assignee": self.assignee,
                })
                .to_string(),
            ),
            topic: Some(Topic::Mailbox(self.mailbox_id.clone())),
        }
    }

    /// The change, guarded to change its one row.
    fn change(&self) -> [Statement; 2] {
        [store::woken(&self.thread_id, self.wake_at), store::changed_one_row()]
    }

    /// The assignee's notice, once for this conversation and moment, when the
    /// assignee is a person (an unassigned conversation is back in the open
    /// list for whoever works the mailbox, and tells nobody).
    fn notice(&self, work: &Background<'_>) -> Option<Statement> {
        let person = self.assignee.as_deref().filter(|id| is_id_of(id, IdKind::Person))?;
        let notice = Notice {
            kind: NotificationKind::SnoozeEnded,
            object_id: &self.thread_id,
            mailbox_id: Some(&self.mailbox_id),
            actor: None,
            title: &self.subject,
            detail: None,
        };
        let key = format!("snooze_ended:{}:{}", self.thread_id, self.wake_at);
        work.tell(Topic::Person(person.to_string()), NotificationKind::SnoozeEnded.name(), &self.thread_id);
        Some(notifications::notify_once(&notice, person, &key, work.node().platform))
    }
}

/// Wakes the conversations whose snooze is over, as of the job's now.
pub async fn wake_due(work: &Background<'_>) -> Result<WakeReport, BackgroundError> {
    let now_ms = work.now_ms();
    let due: Vec<DueRow> = match work.run(vec![store::due(now_ms, WAKES_PER_RUN)]).await?.first() {
        Some(result) => result.decode_all()?,
        None => Vec::new(),
    };
    let mut report = WakeReport::default();
    // Mail still in D1: woken, and every wake-up read forgotten, in one batch.
    let mut on_d1: Vec<Statement> = Vec::new();
    let mut moved: Vec<(String, Vec<&DueRow>)> = Vec::new();
    for row in &due {
        if row.moved != 0 {
            match moved.iter().position(|(mailbox_id, _)| *mailbox_id == row.mailbox_id) {
                Some(index) => moved[index].1.push(row),
                None if moved.len() < MAILBOXES_PER_RUN => moved.push((row.mailbox_id.clone(), vec![row])),
                None => {}
            }
            continue;
        }
        on_d1.push(store::wakeup_forgotten(&row.thread_id, row.wake_at));
        let (Some(subject), true) = (row.subject.clone(), row.still_snoozed != 0) else {
            report.stale += 1;
            continue;
        };
        let waking = ToWake {
            thread_id: row.thread_id.clone(),
            mailbox_id: row.mailbox_id.clone(),
            wake_at: row.wake_at,
            subject,
            assignee: row.assignee.clone(),
        };
        on_d1.extend(waking.change());
        on_d1.push(work.append(&waking.record(now_ms)));
        on_d1.extend(waking.notice(work));
        report.woken += 1;
    }
    if !on_d1.is_empty() {
        work.run(on_d1).await?;
    }
    for (mailbox_id, rows) in moved {
        let asked = rows.iter().map(|row| store::still_snoozed(&row.thread_id, row.wake_at)).collect();
        let answers = work.read_in_mailbox(&mailbox_id, asked).await?;
        let (mut changes, mut records, mut then_on_d1) = (Vec::new(), Vec::new(), Vec::new());
        for (row, answer) in rows.iter().zip(&answers) {
            then_on_d1.push(store::wakeup_forgotten(&row.thread_id, row.wake_at));
            let Some(still) = answer.first().map(|found| found.decode::<StillSnoozedRow>()).transpose()? else {
                report.stale += 1;
                continue;
            };
            let waking = ToWake {
                thread_id: row.thread_id.clone(),
                mailbox_id: mailbox_id.clone(),
                wake_at: row.wake_at,
                subject: still.subject,
                assignee: still.assignee,
            };
            changes.extend(waking.change());
            records.push(waking.record(now_ms));
            then_on_d1.extend(waking.notice(work));
            report.woken += 1;
        }
        if changes.is_empty() {
            work.run(then_on_d1).await?;
        } else {
            work.commit_in_mailbox(&mailbox_id, changes, &records, then_on_d1).await?;
        }
    }
    Ok(report)
}

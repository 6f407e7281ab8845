//! What a change of a conversation's `snoozed_until` asks (decision 0048),
//! held to the node's limits, and the statements that keep it: on the
//! conversation's own row where its mailbox's mail is, and in D1's index of
//! wake-ups. The update route calls it; who may snooze is who may set the
//! status.

use mailroom_contract::api::snooze_limits::LONGEST_SNOOZE_DAYS;

use crate::core::context::Context;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::time::{DAY_MS, instant};
use crate::mail::location::{self, MailStore};

use super::store;

/// What a change does to a conversation's snooze.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SnoozeChange {
    /// Snoozed until this moment (milliseconds).
    Until(i64),
    /// Woken now, by hand, or because its status was set by hand.
    Awake,
}

/// What a change's `snoozed_until` (and `status`) asks at `now_ms`: `None`
/// leaves the snooze as it is. A status set without a moment wakes it, so a
/// conversation closed or reopened by hand does not open by itself later.
/// Refuses a moment that is not RFC 3339, not later than now, or further
/// ahead than the limit, naming the field.
pub(crate) fn change_of(
    snoozed_until: Option<&str>,
    status_set: bool,
    now_ms: i64,
) -> Result<Option<SnoozeChange>, Refusal> {
    let Some(text) = snoozed_until.map(str::trim) else {
        return Ok(status_set.then_some(SnoozeChange::Awake));
    };
    if text.is_empty() {
        return Ok(Some(SnoozeChange::Awake));
    }
    let expected = || {
        format!(
            "a moment later than now and at most {LONGEST_SNOOZE_DAYS} days ahead, as RFC 3339 (such as \
             2026-12-07T08:00:00Z), or \"\" to wake it now"
        )
    };
    let until = instant(text).ok_or_else(|| RequestError::wrong_field("snoozed_until", expected()))?;
    if until <= now_ms || until > now_ms + LONGEST_SNOOZE_DAYS * DAY_MS {
        return Err(RequestError::wrong_field("snoozed_until", expected()));
    }
    Ok(Some(SnoozeChange::Until(until)))
}

/// Queues `change` of conversation `thread_id` of `mailbox_id`: on its row
/// where its mail is (`mail`), and in D1's index of wake-ups after it, in the
/// same transaction while the mail is in D1 and once the change commits when
/// it is in the mailbox's own database. An index row lost there wakes nothing
/// early; one left behind wakes nothing at all (`wake` asks the row). The
/// conversation's `snoozed_until` after it.
pub(crate) fn queue(
    context: &mut Context<'_>,
    mail: MailStore,
    mailbox_id: &str,
    thread_id: &str,
    change: SnoozeChange,
) -> Result<Option<i64>, Refusal> {
    let until = match change {
        SnoozeChange::Until(until) => Some(until),
        SnoozeChange::Awake => None,
    };
    location::write(context, mail, mailbox_id, store::snoozed_until_set(thread_id, mailbox_id, until))?;
    let index = match until {
        Some(until) => store::wakeup_kept(thread_id, mailbox_id, until),
        None => store::wakeups_forgotten(thread_id),
    };
    location::write_after(context, mail, index);
    Ok(until)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_796_601_600_000; // 2026-12-07T00:00:00Z

    fn check(snoozed_until: Option<&str>, status_set: bool, expected: Result<Option<SnoozeChange>, ()>) {
        let answer = change_of(snoozed_until, status_set, NOW).map_err(|_| ());
        assert_eq!(answer, expected, "{snoozed_until:?} {status_set}");
    }

    #[test]
    fn a_change_snoozes_wakes_or_leaves_the_snooze_alone() {
        check(None, false, Ok(None));
        check(None, true, Ok(Some(SnoozeChange::Awake)));
        check(Some(""), false, Ok(Some(SnoozeChange::Awake)));
        check(Some("2026-12-07T08:00:00Z"), true, Ok(Some(SnoozeChange::Until(NOW + 8 * 3_600_000))));
        check(Some("2026-12-07T00:00:00Z"), false, Err(()));
        check(Some("2026-12-06T23:00:00Z"), false, Err(()));
        check(Some("2027-12-07T00:00:00Z"), false, Ok(Some(SnoozeChange::Until(NOW + 365 * DAY_MS))));
        check(Some("2027-12-07T00:00:01Z"), false, Err(()));
        check(Some("tomorrow"), false, Err(()));
    }
}

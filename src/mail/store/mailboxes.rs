//! The statements about mailboxes themselves: listing every one, finding one by
//! address or id, creating and renaming one, which ids name one, and where
//! one's mail is read.

use crate::core::storage::Statement;

/// Every mailbox, by address: `id`, `address`, `display_name`, `created_at`.
pub(crate) fn every_mailbox() -> Statement {
    Statement::new("SELECT id, address, display_name, created_at FROM mailboxes ORDER BY address")
}

/// The mailbox at `address`: one column, `id`.
pub(crate) fn mailbox_at(address: &str) -> Statement {
    Statement::new("SELECT id FROM mailboxes WHERE address = ?1").bind(address)
}

/// Mailbox `mailbox_id`: `id`, `address`, `display_name`, `created_at`.
pub(crate) fn mailbox(mailbox_id: &str) -> Statement {
    Statement::new("SELECT id, address, display_name, created_at FROM mailboxes WHERE id = ?1").bind(mailbox_id)
}

/// A new mailbox.
pub(crate) fn mailbox_created(
    mailbox_id: &str,
    address: &str,
    display_name: &str,
    created_at: i64,
    mail_moved_at: Option<i64>,
) -> Statement {
    Statement::new(
        "INSERT INTO mailboxes (id, address, display_name, created_at, mail_moved_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .bind(mailbox_id)
    .bind(address)
    .bind(display_name)
    .bind(created_at)
    .bind(mail_moved_at)
}

/// Mailbox `mailbox_id` renamed.
pub(crate) fn display_name_set(mailbox_id: &str, display_name: &str) -> Statement {
    Statement::new("UPDATE mailboxes SET display_name = ?2 WHERE id = ?1").bind(mailbox_id).bind(display_name)
}

/// Where mailbox `mailbox_id`'s mail is read: one column, `mail_moved_at`,
/// null while it is in D1; no row for no mailbox.
pub(crate) fn mail_moved(mailbox_id: &str) -> Statement {
    Statement::new("SELECT mail_moved_at FROM mailboxes WHERE id = ?1").bind(mailbox_id)
}

/// Mailbox `mailbox_id`'s mail is read from its own database from `at` on;
/// a mailbox whose mail moved already keeps the time it moved.
pub(crate) fn mail_moved_now(mailbox_id: &str, at: i64) -> Statement {
    Statement::new("UPDATE mailboxes SET mail_moved_at = ?2 WHERE id = ?1 AND mail_moved_at IS NULL")
        .bind(mailbox_id)
        .bind(at)
}

/// Which of `mailbox_ids` are mailboxes: `id`, and `mail_moved_at`, set when
/// its mail is in its own database (decision 0040).
pub(crate) fn mailboxes_among(mailbox_ids: &[String]) -> Statement {
    Statement::new("SELECT id, mail_moved_at FROM mailboxes WHERE id IN (SELECT value FROM json_each(?1))")
        .bind(serde_json::json!(mailbox_ids).to_string())
}

//! Sending: a conversation started or continued, the message written whole
//! (an `Insert` held to `agent_messages` by the test below), a reply, and what
//! an idempotency key already holds.

use mailroom_contract::api::MAXIMUM_WAITING_MESSAGES;

use crate::core::storage::{Insert, Statement};

use super::shared::*;

// Sending.

/// The recipient `recipient_id` at `now_ms`: its id, whether it is `live`
/// (not revoked, connected, not expired), its `allowed_peers`, and whether
/// its owner `listed` it on the node's card (only then do peers reach it).
pub(crate) fn recipient(recipient_id: &str, now_ms: i64) -> Statement {
    Statement::new(
        "SELECT a.id, \
           (a.revoked_at IS NULL AND a.connection_pending_until IS NULL \
            AND (a.expires_at IS NULL OR a.expires_at > ?1)) AS live, \
           (SELECT allowed_peers FROM agent_messaging_policies WHERE agent_id = a.id) AS allowed_peers, \
           COALESCE((SELECT listed_on_node_card FROM agent_messaging_policies WHERE agent_id = a.id), 0) AS listed \
         FROM agents a WHERE a.id = ?2",
    )
    .bind(now_ms)
    .bind(recipient_id)
}

/// The message `sender` sent earlier under `key`, with its `body_hash`.
pub(crate) fn sent_under_key(sender: &str, key: &str, now_ms: i64) -> Statement {
    Statement::new(format!(
        "SELECT {MESSAGE_COLUMNS}, {}, m.body_hash {MESSAGE_FROM} WHERE m.sender_id = ?2 AND m.idempotency_key = ?3",
        held_because_sql()
    ))
    .bind(now_ms)
    .bind(sender)
    .bind(key)
}

/// The conversation `conversation_id` as `sender` continues it with `with`:
/// its `canceled_at`, and whether `sender` `takes_part` and `with` does
/// (`with_takes_part`, which a message elsewhere needs).
pub(crate) fn conversation_continued(conversation_id: &str, sender: &str, with: &str) -> Statement {
    Statement::new(
        "SELECT c.canceled_at, EXISTS (SELECT 1 FROM agent_conversation_participants p \
                WHERE p.conversation_id = c.id AND p.participant_id = ?2) AS takes_part, \
                EXISTS (SELECT 1 FROM agent_conversation_participants p \
                WHERE p.conversation_id = c.id AND p.participant_id = ?3) AS with_takes_part \
         FROM agent_conversations c WHERE c.id = ?1",
    )
    .bind(conversation_id)
    .bind(sender)
    .bind(with)
}

/// A new conversation `id`, started by `started_by` at `now_ms`.
pub(crate) fn start_conversation(id: &str, started_by: &str, now_ms: i64) -> Statement {
    Insert::into("agent_conversations")
        .value("id", id)
        .value("started_by", started_by)
        .value("created_at", now_ms)
        .value("last_activity_at", now_ms)
        .statement()
}

/// The condition a commit continuing conversation `id` keeps: it is not canceled.
pub(crate) fn conversation_not_canceled(id: &str) -> Statement {
    Statement::new("(SELECT canceled_at FROM agent_conversations WHERE id = ?) IS NULL").bind(id)
}

/// A message as sent: every column but those a lease, a reply or a
/// conversation's later life sets.
pub(crate) struct NewMessage<'a> {
    pub id: &'a str,
    pub conversation_id: &'a str,
    pub sender_id: &'a str,
    pub recipient_id: &'a str,
    pub kind: &'a str,
    pub content: &'a str,
    pub body_hash: &'a str,
    pub idempotency_key: &'a str,
    pub surface: &'a str,
    pub state: &'a str,
    pub reason: Option<&'a str>,
    pub now_ms: i64,
    pub expires_at: i64,
}

/// The row of a message sent.
pub(crate) fn new_message(message: &NewMessage<'_>) -> Insert {
    Insert::into("agent_messages")
        .value("id", message.id)
        .value("conversation_id", message.conversation_id)
        .value("sender_id", message.sender_id)
        .value("recipient_id", message.recipient_id)
        .value("kind", message.kind)
        .value("content", message.content)
        .value("body_hash", message.body_hash)
        .value("idempotency_key", message.idempotency_key)
        .value("surface", message.surface)
        .value("state", message.state)
        .value("reason", message.reason)
        .value("created_at", message.now_ms)
        .value("updated_at", message.now_ms)
        .value("expires_at", message.expires_at)
}

/// Records who takes part in a conversation (a no-op for those already in it).
pub(crate) fn participants(conversation_id: &str, ids: &[&str]) -> Statement {
    let values: Vec<String> = (0..ids.len()).map(|index| format!("(?1, ?{})", index + 2)).collect();
    let values = values.join(", ");
    let mut statement = Statement::new(format!(
        "INSERT OR IGNORE INTO agent_conversation_participants (conversation_id, participant_id) VALUES {values}"
    ))
    .bind(conversation_id);
    for id in ids {
        statement = statement.bind(*id);
    }
    statement
}

/// The condition a commit sending to `recipient_id` keeps: its inbox holds no
/// more unfinished messages than the node keeps.
pub(crate) fn inbox_has_room(recipient_id: &str) -> Statement {
    Statement::new(format!(
        "(SELECT COUNT(*) FROM agent_messages WHERE recipient_id = ? AND state IN ('queued', 'leased')) <= {MAXIMUM_WAITING_MESSAGES}"
    ))
    .bind(recipient_id)
}

// Messages elsewhere.

/// What an agent elsewhere said of a request, as it is stored.
pub(crate) enum WordFromElsewhere<'a> {
    /// Its answer: the request's reply, the parties swapped.
    Answer,
    /// A word of progress while it works, an event named by `key` (so it is
    /// stored once).
    Progress { key: &'a str },
}

/// What an agent elsewhere said of request `request_id` (`content`, JSON),
/// stored as message `id` in the request's conversation, from it to whoever
/// asked, while the request still waits: a run that reads the same word
/// again stores nothing.
pub(crate) fn from_elsewhere(
    id: &str,
    request_id: &str,
    word: &WordFromElsewhere<'_>,
    content: &str,
    now_ms: i64,
) -> Statement {
    let (kind, idempotency_key) = match word {
        WordFromElsewhere::Answer => ("reply", format!("reply:{request_id}")),
        WordFromElsewhere::Progress { key } => ("event", format!("progress:{request_id}:{key}")),
    };
    Statement::new(format!(
        "INSERT OR IGNORE INTO agent_messages (id, conversation_id, sender_id, recipient_id, kind, in_reply_to, \
           content, body_hash, idempotency_key, surface, state, created_at, updated_at, expires_at) \
         SELECT ?1, conversation_id, recipient_id, sender_id, ?2, id, ?3, ?4, ?5, surface, \
           CASE WHEN sender_id LIKE 'agt\\_%' ESCAPE '\\' THEN 'queued' ELSE 'delivered' END, ?6, ?6, ?6 + {} \
         FROM agent_messages WHERE id = ?7 AND kind = 'request' AND state = 'queued'",
        mailroom_contract::api::DEFAULT_MESSAGE_EXPIRY_SECONDS * 1000
    ))
    .bind(id)
    .bind(kind)
    .bind(content)
    .bind(crate::core::crypto::sha256_hex(content.as_bytes()))
    .bind(idempotency_key)
    .bind(now_ms)
    .bind(request_id)
}

/// Finishes a message to an agent elsewhere as `state` (answered with
/// `reply_id`, acknowledged, rejected, failed or canceled, with `reason`),
/// while it still waits.
pub(crate) fn finished_elsewhere(
    message_id: &str,
    state: &str,
    reply_id: Option<&str>,
    reason: Option<&str>,
    now_ms: i64,
) -> Statement {
    Statement::new(
        "UPDATE agent_messages SET state = ?2, reply_id = ?3, reason = ?4, updated_at = ?5 \
         WHERE id = ?1 AND state = 'queued'",
    )
    .bind(message_id)
    .bind(state)
    .bind(reply_id)
    .bind(reason)
    .bind(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::SqliteDatabase;

    /// A message is written whole from one place, the send: every column of
    /// the table is in its row but those its later life sets.
    #[test]
    fn a_sent_message_names_every_column_but_those_its_later_life_sets() {
        let message = NewMessage {
            id: "",
            conversation_id: "",
            sender_id: "",
            recipient_id: "",
            kind: "",
            content: "",
            body_hash: "",
            idempotency_key: "",
            surface: "",
            state: "",
            reason: None,
            now_ms: 0,
            expires_at: 0,
        };
        let insert = new_message(&message);
        assert_eq!(insert.table(), "agent_messages");
        assert_eq!(
            SqliteDatabase::migrated().columns_not_named(&insert),
            ["attempts", "fencing_token", "in_reply_to", "lease_expires_at", "lease_granted_at", "reply_id"]
        );
    }
}

//! The audit chain's routes: reading the trail a page at a time, and verifying
//! it. Administrators' questions, never offered to machines; the chain itself is
//! `chain`. Their only refusals are unusable query parameters (`RequestError`):
//! a cursor this route did not write, or what the dispatcher refuses by the
//! parameter's declaration.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{AuditPage, ChainHead};

use crate::audit::chain::{ENTRY_COLUMNS, GENESIS_HASH, StoredEntry, VERIFY_PAGE, head, head_from, present, verify};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::Statement;

fn encode_cursor(seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("audit-before:{seq}"))
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    text.strip_prefix("audit-before:")?.parse().ok().filter(|seq| *seq > 0)
}

/// `GET /api/audit`: entries newest first, a page at a time.
pub async fn list_entries(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let limit = paging::limit(context)?;
    let before = match context.query("cursor") {
        None => i64::MAX,
        Some(cursor) => decode_cursor(cursor).ok_or(RequestError::InvalidQueryParameter {
            name: "cursor".into(),
            expected: "the `next_cursor` of a previous page, unchanged".into(),
        })?,
    };
    let statement =
        Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2"))
            .bind(before)
            .bind(limit + 1);
    let [page] = context.read_array([statement]).await?;
    let mut entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let next_cursor = if entries.len() as i64 > limit {
        entries.truncate(limit as usize);
        entries.last().map(|entry| encode_cursor(entry.seq))
    } else {
        None
    };
    let entries = entries.into_iter().map(present).collect();
    Ok(context.json(&AuditPage { entries, next_cursor }))
}

/// `GET /api/audit/verify`: recomputes up to `VERIFY_PAGE` entries after `after_seq`.
pub async fn verify_chain(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let after = context.whole_number("after_seq")?.unwrap_or(0);
    let anchor = Statement::new("SELECT hash FROM audit_entries WHERE seq = ?1").bind(after);
    let page =
        Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"))
            .bind(after)
            .bind(VERIFY_PAGE);
    let [anchor, page, head_row] = context.read_array([anchor, page, head()]).await?;
    let anchor_hash = match (after, anchor.first()) {
        (0, _) => Some(GENESIS_HASH.to_string()),
        (_, Some(row)) => Some(row.text("hash").map_err(|error| context.internal(error))?),
        (_, None) => None,
    };
    let entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let (head_seq, head_hash) = head_from(head_row.first()).map_err(|error| context.internal(error))?;
    let head = (head_seq > 0).then_some(ChainHead { seq: head_seq, hash: head_hash });
    Ok(context.json(&verify(after, anchor_hash, &entries, head)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verify_route_says_how_many_entries_one_call_checks() {
        let route = mailroom_contract::registry().route(mailroom_contract::RouteId::VerifyAuditChain);
        let thousands = VERIFY_PAGE / 1000;
        let written = format!("{thousands},{:03}", VERIFY_PAGE % 1000);
        assert!(route.description.contains(&written), "the description states {written}: {}", route.description);
    }

    #[test]
    fn cursors_round_trip_and_refuse_tampering() {
        assert_eq!(decode_cursor(&encode_cursor(17)), Some(17));
        assert_eq!(decode_cursor("not a cursor"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("audit-before:-3")), None);
    }
}

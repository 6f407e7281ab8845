//! The audit chain's routes: reading the trail a page at a time, and verifying
//! it. Administrators' questions, never offered to machines; the chain itself is
//! `chain`. Their only refusals are unusable query parameters (`RequestError`):
//! a cursor this route did not write, or what the dispatcher refuses by the
//! parameter's declaration.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailroom_contract::api::{AuditPage, ChainHead};

use crate::audit::chain::{self, ENTRY_COLUMNS, GENESIS_HASH, Reference, StoredEntry, VERIFY_PAGE, verify};
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
    let entries = entries.into_iter().map(StoredEntry::present).collect();
    Ok(context.json(&AuditPage { entries, next_cursor }))
}

/// `GET /api/audit/verify`: recomputes up to `VERIFY_PAGE` entries after
/// `after_seq` and compares the chain with the latest checkpoint.
pub async fn verify_chain(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let after = context.whole_number("after_seq")?.unwrap_or(0);
    let anchor = Statement::new("SELECT hash FROM audit_entries WHERE seq = ?1").bind(after);
    let page =
        Statement::new(format!("SELECT {ENTRY_COLUMNS} FROM audit_entries WHERE seq > ?1 ORDER BY seq LIMIT ?2"))
            .bind(after)
            .bind(VERIFY_PAGE);
    let ends = Statement::new(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM audit_entries) AS last_seq, sealed.seq AS head_seq, \
                sealed.hash AS head_hash \
         FROM (SELECT 1) LEFT JOIN (SELECT seq, hash FROM audit_entries WHERE hash IS NOT NULL \
                                    ORDER BY seq DESC LIMIT 1) AS sealed",
    );
    let [anchor, page, ends] = context.read_array([anchor, page, ends]).await?;
    let anchor_hash = match (after, anchor.first()) {
        (0, _) => Some(GENESIS_HASH.to_string()),
        (_, Some(row)) => row.optional_text("hash").map_err(|error| context.internal(error))?,
        (_, None) => None,
    };
    let entries: Vec<StoredEntry> = page.decode_all().map_err(|error| context.internal(error))?;
    let ends = ends.first().ok_or_else(|| context.internal("the chain's ends were not read"))?;
    let last_seq = ends.integer("last_seq").map_err(|error| context.internal(error))?;
    let head = match (ends.optional_integer("head_seq"), ends.optional_text("head_hash")) {
        (Ok(Some(seq)), Ok(Some(hash))) => Some(ChainHead { seq, hash }),
        _ => None,
    };
    let checkpoint = chain::latest_checkpoint(context.node()).await.map_err(|error| context.internal(error))?;
    let reference = Reference { anchor_hash, last_seq, head, checkpoint };
    Ok(context.json(&verify(context.config(), after, &entries, reference)))
}

/// `POST /api/audit/checkpoints`: seals the chain's waiting entries with this
/// call's own commit and keeps a checkpoint of the head outside the database.
pub async fn write_checkpoint(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let [last_sealed, waiting] = context.read_array(chain::seal_reads()).await?;
    let (updates, sealing) =
        chain::seals(context.config(), &last_sealed, &waiting).map_err(|error| context.internal(error))?;
    if let Some(stopped) = &sealing.stopped {
        context.platform().log(&format!("the audit chain was not sealed past its head: {stopped}"));
    }
    let head = sealing.head.ok_or_else(|| context.internal("a checkpoint was asked of an empty chain"))?;
    for update in updates {
        context.write(update);
    }
    // Sealing is deterministic, so the checkpoint can be kept before the seals
    // commit: should the commit fail, the next sealer writes the same hashes.
    let checkpoint = chain::checkpoint(context.config(), &head, context.now_ms());
    chain::keep_checkpoint(context.node(), &checkpoint).await.map_err(|error| context.internal(error))?;
    context.audit_detail(serde_json::json!({ "seq": checkpoint.seq, "sealed": sealing.sealed }));
    Ok(context.json(&checkpoint))
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

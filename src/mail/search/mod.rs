//! Search over received mail, with SQLite FTS5, in two arms that never mix.
//!
//! The metadata arm matches sender, recipients and subject in mailboxes where the
//! caller reads metadata; the content arm matches bodies only in mailboxes where
//! the caller reads content (and metadata, since a hit shows who sent what). A term found only in the body of a
//! message in a metadata-only mailbox is therefore not found at all: a result
//! never reveals a body to a caller who may not read it. Both arms travel in one
//! round trip with the authentication checks.
//!
//! The caller's words never reach FTS5's query syntax: each term is quoted, so a
//! query cannot be a syntax error inside the database. The few things our own
//! syntax refuses (an unclosed quote, no searchable words) are refusals.

pub mod index;

use mailroom_contract::Relation;
use mailroom_contract::api::{SearchHit, SearchResults};

use crate::authz::{holder_of, tuples};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{Statement, Value};
use crate::mail::store::search::{self as store, Arm, HitRow};
use crate::mail::{limits, trust};

/// The most terms one query may have.
pub const MAXIMUM_TERMS: usize = 16;
/// The longest query accepted, in characters.
pub const MAXIMUM_QUERY_LENGTH: usize = 500;

/// Why a query could not be understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// No `q`, or nothing searchable in it.
    EmptyQuery,
    /// A `"` opened a phrase that never closed.
    UnclosedQuote,
    /// Too long or too many terms.
    QueryTooLong,
}

impl From<SearchError> for Refusal {
    fn from(error: SearchError) -> Refusal {
        let (code, message, reason) = match error {
            SearchError::EmptyQuery => {
                ("empty_query", "There is nothing to search for.", "`q` is missing, or has no letters or digits in it.")
            }
            SearchError::UnclosedQuote => (
                "unclosed_quote",
                "The search has a quote that is never closed.",
                "A \" starts a phrase, and another \" must end it.",
            ),
            SearchError::QueryTooLong => {
                ("query_too_long", "The search is too long.", "A search has at most 16 terms and 500 characters.")
            }
        };
        Refusal::new(
            400,
            code,
            message,
            reason,
            "Search for words, such as `q=invoice march`, a prefix with *, or a \"quoted phrase\".",
        )
    }
}

/// Turns what a person typed into an FTS5 query: every term and phrase quoted,
/// a trailing `*` kept as a prefix search, terms joined by AND; control
/// characters are word separators.
pub fn fts_query(input: &str) -> Result<String, SearchError> {
    if input.chars().count() > MAXIMUM_QUERY_LENGTH {
        return Err(SearchError::QueryTooLong);
    }
    // Control characters separate words for the tokenizer, and a NUL would end
    // the query early inside SQLite: they become spaces before anything else.
    let input: String = input.chars().map(|character| if character.is_control() { ' ' } else { character }).collect();
    let mut terms: Vec<String> = Vec::new();
    let mut rest = input.trim();
    while !rest.is_empty() {
        let (term, prefix, remainder) = if let Some(after_quote) = rest.strip_prefix('"') {
            let end = after_quote.find('"').ok_or(SearchError::UnclosedQuote)?;
            let remainder = &after_quote[end + 1..];
            let (prefix, remainder) = match remainder.strip_prefix('*') {
                Some(remainder) => (true, remainder),
                None => (false, remainder),
            };
            (&after_quote[..end], prefix, remainder)
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let word = &rest[..end];
            match word.strip_suffix('*') {
                Some(stem) => (stem, true, &rest[end..]),
                None => (word, false, &rest[end..]),
            }
        };
        // A term with nothing the tokenizer indexes (only punctuation) would match
        // nothing; leaving it out is what the person meant.
        if term.chars().any(char::is_alphanumeric) {
            let quoted = format!("\"{}\"", term.replace('"', "\"\""));
            terms.push(if prefix { format!("{quoted}*") } else { quoted });
        }
        rest = remainder.trim_start();
    }
    if terms.is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    if terms.len() > MAXIMUM_TERMS {
        return Err(SearchError::QueryTooLong);
    }
    Ok(terms.join(" "))
}

/// `GET /api/search`.
pub async fn search(context: &mut Context<'_>) -> Result<Response, Refusal> {
    let query = fts_query(context.query("q").unwrap_or_default())?;
    let mailbox_id = match context.query("mailbox") {
        None => None,
        Some(id) if is_id_of(id, IdKind::Mailbox) => Some(id.to_string()),
        Some(_) => {
            return Err(RequestError::InvalidQueryParameter {
                name: "mailbox".into(),
                expected: "a mailbox's id (`mbx_…`), or nothing to search every mailbox".into(),
            }
            .into());
        }
    };
    let after = paging::cursor_id(context, IdKind::Receipt)?;
    let limit = paging::limit(context)?;
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    // Each arm names the relations a caller must hold on a mailbox for it to be
    // searched there: the headers arm what the route declares (metadata), the
    // body arm that and content, since a hit shows who sent what.
    //
    // Each arm walks its index newest first, in the order the receipts were
    // stored (FTS5 keeps its rows in rowid order, the receipts' own, and walks
    // them backwards without sorting), from just past the cursor, and stops at
    // one more than a page: the first `limit + 1` distinct hits of the two
    // together are among them, which is all it takes to know whether another page
    // follows. No match older than the page is read, so a page costs the same
    // however much mail matches (decision 0014).
    //
    // The walk visits only the mailboxes the arm may search: each index also
    // indexes the receipt's mailbox, and the match asks for the caller's words in
    // the arm's columns AND one of those mailboxes, so FTS5 skips the rest of the
    // node within its own lists instead of handing over every match to be turned
    // away. A mailbox is indexed as `mbx` and its ULID (the tokenizer splits at
    // the underscore); the ULID alone names it. The same mailboxes filter the rows
    // once more after the join, so what the caller may read is decided by the
    // relation table whatever the index holds. With no mailbox to search, the
    // match asks for a mailbox token no id has, and finds nothing.
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let search_arm = |arm: Arm, all_of: &[Relation]| {
        let visible = tuples::mailbox_ids_where(&holder, all_of, any_of);
        store::arm(arm, &query, visible, mailbox_id.as_deref(), after.as_deref(), limit)
    };
    let headers = search_arm(Arm::Headers, all_of);
    let bodies = search_arm(Arm::Bodies, &[all_of, &[Relation::MailboxContentRead]].concat());
    // Which mailbox was searched is part of what was asked; absent, every readable one.
    let q = context.query("q").map(str::to_string);
    let asked = |results: Option<usize>| {
        let mut detail = serde_json::json!({ "q": q });
        if let Some(mailbox_id) = &mailbox_id {
            detail["mailbox"] = mailbox_id.as_str().into();
        }
        if let Some(results) = results {
            detail["results"] = results.into();
        }
        detail
    };
    context.audit_detail(asked(None));
    let [headers, bodies] = context.read_array([headers, bodies]).await?;
    let header_rows: Vec<HitRow> = headers.decode_all().map_err(|error| context.internal(error))?;
    let body_rows: Vec<HitRow> = bodies.decode_all().map_err(|error| context.internal(error))?;
    // One hit per message: a body match carries its passage, so it wins.
    let mut hits: Vec<(i64, SearchHit)> = Vec::new();
    for (row, matched_in) in
        body_rows.into_iter().map(|row| (row, "body")).chain(header_rows.into_iter().map(|row| (row, "headers")))
    {
        if hits.iter().any(|(_, hit)| hit.message.id == row.summary.id) {
            continue;
        }
        let hit = SearchHit {
            message: row.summary.present(),
            matched_in: matched_in.to_string(),
            snippet: if matched_in == "body" { row.snippet.map(limits::snippet) } else { None },
        };
        hits.push((row.stored, hit));
    }
    hits.sort_by(|(left, _), (right, _)| right.cmp(left));
    let next_cursor = paging::cut_at_id(&mut hits, limit, |(_, hit)| &hit.message.id);
    context.audit_detail(asked(Some(hits.len())));
    // A passage is external content; a model is told so beside it (the passage
    // itself stays within its length, so it is not fenced).
    let passages = hits.iter().any(|(_, hit)| hit.snippet.is_some());
    let content_notice = (passages && trust::fence_for(context).is_some()).then(|| trust::CONTENT_NOTICE.to_string());
    Ok(context.json(&SearchResults {
        results: hits.into_iter().map(|(_, hit)| hit).collect(),
        next_cursor,
        content_notice,
    }))
}

/// Received mail chosen by mailbox, by when it arrived and by words, as both
/// arms of the search match them: what an eDiscovery export copies. Its
/// statements name their parameters in order (`?`), so a caller that wraps one
/// numbers its own after them.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiptSelection {
    /// The condition on `receipts r`, and its parameters.
    condition: (String, Vec<Value>),
}

impl ReceiptSelection {
    /// The receipts of `mailbox_ids` received from `from_ms` and before
    /// `before_ms` (each only when given) whose headers or body match `words`,
    /// an FTS5 query as `fts_query` writes one.
    pub fn new(
        mailbox_ids: &[String],
        from_ms: Option<i64>,
        before_ms: Option<i64>,
        words: Option<&str>,
    ) -> ReceiptSelection {
        ReceiptSelection { condition: store::selection(mailbox_ids, from_ms, before_ms, words) }
    }

    /// How many receipts are selected (`n`), and the last of them in storage
    /// order (`last`, its rowid): what arrives after it is not selected.
    pub fn counted(&self) -> Statement {
        store::selection_counted(&self.condition)
    }

    /// The selected receipts stored up to `last`, numbered from 1 in the order
    /// they were received: `position`, `receipt_id`, `mailbox_id`,
    /// `message_id`, `subject`, `received_at`, `raw_key`.
    pub fn in_order_up_to(&self, last: i64) -> Statement {
        store::selection_in_order_up_to(&self.condition, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, SearchError>) {
        assert_eq!(fts_query(input).as_deref().map_err(Clone::clone), expected, "{input:?}");
    }

    #[test]
    fn queries_become_quoted_terms() {
        check("invoice march", Ok(r#""invoice" "march""#));
        check("refund*", Ok(r#""refund"*"#));
        check(r#""late payment" refund*"#, Ok(r#""late payment" "refund"*"#));
        check(r#"a"b"#, Ok(r#""a""b""#));
        check("NEAR(a b) OR NOT c:d ^e", Ok(r#""NEAR(a" "b)" "OR" "NOT" "c:d" "^e""#));
        check("- !! ...", Err(SearchError::EmptyQuery));
        check("", Err(SearchError::EmptyQuery));
        check(r#""unclosed"#, Err(SearchError::UnclosedQuote));
        check(&"word ".repeat(17), Err(SearchError::QueryTooLong));
        check(&"x".repeat(501), Err(SearchError::QueryTooLong));
    }
}

//! `GET /api/search`: both arms (headers where the caller reads metadata,
//! bodies where it also reads content) in one round trip, merged into one hit
//! per message, newest first, a page at a time.

use mailroom_contract::Relation;
use mailroom_contract::api::{SearchHit, SearchResults};

use crate::authz::{holder_of, tuples};
use crate::core::context::Context;
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging;
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::QueryResult;
use crate::mail::location::{self, MailStore};
use crate::mail::store::search::{self as store, Arm, HitRow};
use crate::mail::{limits, trust};

use super::query::fts_query;

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
    let bodies_need = [all_of, &[Relation::MailboxContentRead]].concat();
    let search_arm = |arm: Arm, all_of: &[Relation]| {
        let visible = tuples::mailbox_ids_where(&holder, all_of, any_of);
        store::arm(arm, &query, visible, mailbox_id.as_deref(), after.as_deref(), limit)
    };
    let headers = search_arm(Arm::Headers, all_of);
    let bodies = search_arm(Arm::Bodies, &bodies_need);
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
    let [headers, bodies] = match &mailbox_id {
        None => context.read_array([headers, bodies]).await?,
        // One mailbox is searched where its mail is. In its own database every
        // receipt is the mailbox's, so what the caller may search there is
        // asked of D1 beside, arm by arm, and an arm it may not search answers
        // nothing.
        Some(mailbox_id) => {
            let may_search = |relations: &[Relation]| {
                store::searchable(tuples::mailbox_ids_where(&holder, relations, any_of), mailbox_id)
            };
            let in_own_database = [Arm::Headers, Arm::Bodies]
                .map(|arm| store::arm_in_mailbox(arm, &query, after.as_deref(), limit))
                .to_vec();
            let directory = vec![may_search(all_of), may_search(&bodies_need)];
            let read =
                location::read_each(context, mailbox_id, directory, (vec![headers, bodies], in_own_database)).await?;
            let searched =
                |arm: usize| read.store == MailStore::D1 || read.directory[arm].first_flag("searchable") == Some(true);
            let (headers_searched, bodies_searched) = (searched(0), searched(1));
            let [headers, bodies] = <[QueryResult; 2]>::try_from(read.mail).map_err(|_| Refusal::internal())?;
            [
                if headers_searched { headers } else { QueryResult::default() },
                if bodies_searched { bodies } else { QueryResult::default() },
            ]
        }
    };
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

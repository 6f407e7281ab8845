//! `GET /api/search`: both arms (headers where the caller reads metadata,
//! bodies where it also reads content) in every store that holds a mailbox
//! searched (D1, and the own database of each mailbox whose mail moved,
//! decision 0040), merged into one hit per message, newest first, a page at a
//! time; through the mailboxes whose mail moved a group at a time where there
//! are more than one read may ask.

use std::cmp::Ordering;

use mailroom_contract::Relation;
use mailroom_contract::api::{MailboxesSearched, SearchHit, SearchResults, SenderAuthentication};

use crate::authz::{holder_of, tuples};
use crate::core::context::{Context, MAILBOXES_PER_READ};
use crate::core::http::Response;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::paging::{self, PlacedCursor};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;
use crate::core::storage::{QueryResult, StorageError};
use crate::mail::location::{self, MailStore};
use crate::mail::store::search::{self as store, Arm, Continuing, HitRow};
use crate::mail::{limits, trust, unverified_reads};

use super::query::fts_query;

/// The name a page's position gives D1 among the stores a search across
/// mailboxes reads; a mailbox whose mail moved is named by its id, which
/// sorts after it. A search of one mailbox names its hits by the mailbox
/// wherever they are, so its pages go on across the mailbox's move.
const D1: &str = "";

/// What one store answered: its name (`D1`, or a mailbox's id) and each arm's
/// hits there.
struct Answered {
    store: String,
    headers: QueryResult,
    bodies: QueryResult,
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
    let cursor = paging::placed_cursor(context, IdKind::Receipt)?;
    // Groups are a search across mailboxes' own: one mailbox is one store.
    if mailbox_id.is_some() && cursor.group_after.is_some() {
        return Err(paging::invalid_cursor());
    }
    let limit = paging::limit(context)?;
    let holder = holder_of(context.caller(), context.now_ms()).ok_or_else(Refusal::internal)?;
    // A page's hits are newest first by time; of one time, by the store
    // they are in, then in the order that store kept them. Each store walks
    // its own storage order (which never runs against time, decision 0014),
    // so the page after a hit goes on in every store from the right place at
    // once: after the hit in its own store, and by time in the others.
    let continuing = |store: &str| match &cursor.after {
        None => Continuing::FromTheNewest,
        Some((at, place, receipt_id)) => match store.cmp(place.as_str()) {
            Ordering::Equal => Continuing::AfterReceipt(receipt_id),
            Ordering::Less => Continuing::AtOrBefore(*at),
            Ordering::Greater => Continuing::Before(*at),
        },
    };
    // Each arm names the relations a caller must hold on a mailbox for it to be
    // searched there: the headers arm what the route declares (metadata), the
    // body arm that and content, since a hit shows who sent what.
    //
    // Each arm walks its index newest first, in the order the receipts were
    // stored (FTS5 keeps its rows in rowid order, the receipts' own, and walks
    // them backwards without sorting), from where the page goes on, and stops
    // at one more than a page: the first `limit + 1` distinct hits of them all
    // are among them, which is all it takes to know whether another page
    // follows. No match older than the page is read, so a page costs the same
    // however much mail matches (decision 0014).
    //
    // On D1 the walk visits only the mailboxes the arm may search: each index
    // also indexes the receipt's mailbox, and the match asks for the caller's
    // words in the arm's columns AND one of those mailboxes, so FTS5 skips the
    // rest of the node within its own lists instead of handing over every
    // match to be turned away. A mailbox is indexed as `mbx` and its ULID (the
    // tokenizer splits at the underscore); the ULID alone names it. The same
    // mailboxes filter the rows once more after the join, so what the caller
    // may read is decided by the relation table whatever the index holds. With
    // no mailbox to search, the match asks for a mailbox token no id has, and
    // finds nothing.
    let (all_of, any_of) = context.route().authority.rows_where().ok_or_else(Refusal::internal)?;
    let bodies_need = [all_of, &[Relation::MailboxContentRead]].concat();
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
    let (answered, recorded, group) = match &mailbox_id {
        None => {
            let visible = |relations: &[Relation]| tuples::mailbox_ids_where(&holder, relations, any_of);
            let on_d1 = |arm: Arm, relations: &[Relation]| {
                store::arm(arm, &query, store::kept_in_d1(visible(relations)), None, continuing(D1), limit)
            };
            // The mailboxes whose mail moved are asked a group at a time, as
            // many as one read may ask; D1's are all walked with the first.
            let group_after = cursor.group_after.as_deref();
            let mut first =
                vec![store::moved_among(visible(all_of), visible(&bodies_need), group_after, MAILBOXES_PER_READ)];
            if group_after.is_none() {
                first.extend([on_d1(Arm::Headers, all_of), on_d1(Arm::Bodies, &bodies_need)]);
            }
            let mut first = context.read(first).await?.into_iter();
            let moved = first.next().ok_or_else(Refusal::internal)?;
            let mut answered = Vec::new();
            if group_after.is_none() {
                let (headers, bodies) = (first.next(), first.next());
                let (headers, bodies) = headers.zip(bodies).ok_or_else(Refusal::internal)?;
                answered.push(Answered { store: D1.to_string(), headers, bodies });
            }
            let group = MovedGroup::of(&moved).map_err(|error| context.internal(error))?;
            if group.mailboxes.is_empty() {
                (answered, false, group)
            } else {
                // The entry is committed as the mailboxes are asked: which to
                // ask was learnt from D1, so asking them beside the commit is
                // what keeps the search within two round trips, and nothing
                // is answered that was not recorded.
                let reads = group
                    .mailboxes
                    .iter()
                    .map(|(mailbox_id, bodies)| {
                        let arm = |arm: Arm| store::arm_in_mailbox(arm, &query, continuing(mailbox_id), limit);
                        let mut statements = vec![arm(Arm::Headers)];
                        statements.extend(bodies.then(|| arm(Arm::Bodies)));
                        (mailbox_id.clone(), statements)
                    })
                    .collect();
                let read = context.read_in_mailboxes_as_it_commits(reads).await?;
                for ((mailbox_id, _), results) in group.mailboxes.iter().zip(read) {
                    let mut results = results.into_iter();
                    let (headers, bodies) = (results.next().unwrap_or_default(), results.next().unwrap_or_default());
                    answered.push(Answered { store: mailbox_id.clone(), headers, bodies });
                }
                (answered, true, group)
            }
        }
        // One mailbox is searched where its mail is. In its own database every
        // receipt is the mailbox's, so what the caller may search there is
        // asked of D1 beside, arm by arm, and an arm it may not search answers
        // nothing.
        Some(mailbox_id) => {
            let may_search = |relations: &[Relation]| {
                store::searchable(tuples::mailbox_ids_where(&holder, relations, any_of), mailbox_id)
            };
            let on_d1 = |arm: Arm, relations: &[Relation]| {
                let visible = tuples::mailbox_ids_where(&holder, relations, any_of);
                store::arm(arm, &query, visible, Some(mailbox_id), continuing(mailbox_id), limit)
            };
            let in_own_database = [Arm::Headers, Arm::Bodies]
                .map(|arm| store::arm_in_mailbox(arm, &query, continuing(mailbox_id), limit))
                .to_vec();
            let directory = vec![may_search(all_of), may_search(&bodies_need)];
            let d1 = vec![on_d1(Arm::Headers, all_of), on_d1(Arm::Bodies, &bodies_need)];
            let read = location::read_each(context, mailbox_id, directory, (d1, in_own_database)).await?;
            let searched =
                |arm: usize| read.store == MailStore::D1 || read.directory[arm].first_flag("searchable") == Some(true);
            let (headers_searched, bodies_searched) = (searched(0), searched(1));
            let [headers, bodies] = <[QueryResult; 2]>::try_from(read.mail).map_err(|_| Refusal::internal())?;
            let answered = Answered {
                store: mailbox_id.clone(),
                headers: if headers_searched { headers } else { QueryResult::default() },
                bodies: if bodies_searched { bodies } else { QueryResult::default() },
            };
            (vec![answered], false, MovedGroup::default())
        }
    };
    // One hit per message: a body match carries its passage, so it wins.
    let mut hits: Vec<((i64, String, i64), SearchHit, SenderAuthentication)> = Vec::new();
    for Answered { store, headers, bodies } in answered {
        let header_rows: Vec<HitRow> = headers.decode_all().map_err(|error| context.internal(error))?;
        let body_rows: Vec<HitRow> = bodies.decode_all().map_err(|error| context.internal(error))?;
        for (row, matched_in) in
            body_rows.into_iter().map(|row| (row, "body")).chain(header_rows.into_iter().map(|row| (row, "headers")))
        {
            if hits.iter().any(|(_, hit, _)| hit.message.id == row.summary.id) {
                continue;
            }
            let position = (row.summary.received_at, store.clone(), row.stored);
            let verdict = row.summary.sender_authentication;
            let hit = SearchHit {
                message: row.summary.present(),
                matched_in: matched_in.to_string(),
                snippet: if matched_in == "body" { row.snippet.map(limits::snippet) } else { None },
            };
            hits.push((position, hit, verdict));
        }
    }
    hits.sort_by(|(left, ..), (right, ..)| right.cmp(left));
    let next_cursor = match usize::try_from(limit).unwrap_or(0) {
        page if hits.len() > page => {
            hits.truncate(page);
            hits.last().map(|((at, store, _), hit, _)| {
                let placed = PlacedCursor {
                    after: Some((*at, store.clone(), hit.message.id.clone())),
                    group_after: cursor.group_after.clone(),
                };
                paging::encode_placed_cursor(&placed, IdKind::Receipt)
            })
        }
        // This group's last page: the next group's first follows, if any.
        _ => group.next_group_after().map(|group_after| {
            paging::encode_placed_cursor(&PlacedCursor { after: None, group_after: Some(group_after) }, IdKind::Receipt)
        }),
    };
    // A passage is content: an agent shown one from a sender not
    // authenticated is noted, in the entry's batch, or after the answer where
    // the entry committed as the mailboxes were asked.
    let passages_shown: Vec<(&str, SenderAuthentication)> = hits
        .iter()
        .filter(|(_, hit, _)| hit.snippet.is_some())
        .map(|(_, hit, verdict)| (hit.message.id.as_str(), *verdict))
        .collect();
    if recorded {
        unverified_reads::note_shown_after(context, passages_shown);
    } else {
        unverified_reads::note_shown(context, passages_shown);
        context.audit_detail(asked(Some(hits.len())));
    }
    // A passage is external content; a model is told so beside it (the passage
    // itself stays within its length, so it is not fenced).
    let passages = hits.iter().any(|(_, hit, _)| hit.snippet.is_some());
    let content_notice = (passages && trust::fence_for(context).is_some()).then(|| trust::CONTENT_NOTICE.to_string());
    Ok(context.json(&SearchResults {
        results: hits.into_iter().map(|(_, hit, _)| hit).collect(),
        next_cursor,
        content_notice,
        mailboxes_searched: group.searched(),
    }))
}

/// The group of mailboxes whose mail moved that one page of a search across
/// mailboxes asks (`store::moved_among`): no more than one read may ask.
#[derive(Default)]
struct MovedGroup {
    /// Each mailbox, and whether its bodies are searched too.
    mailboxes: Vec<(String, bool)>,
    /// Whether another group follows this one.
    more: bool,
    /// How many mailboxes whose mail moved the caller may search.
    in_all: u32,
    /// How many of them come before this group.
    before: u32,
}

impl MovedGroup {
    fn of(moved: &QueryResult) -> Result<MovedGroup, StorageError> {
        let mut group = MovedGroup::default();
        for row in &moved.rows {
            if group.mailboxes.len() == MAILBOXES_PER_READ {
                group.more = true;
                break;
            }
            if group.mailboxes.is_empty() {
                group.in_all = u32::try_from(row.integer("in_all")?).unwrap_or(u32::MAX);
                group.before = u32::try_from(row.integer("place")? - 1).unwrap_or_default();
            }
            group.mailboxes.push((row.text("id")?, row.flag("bodies")?));
        }
        Ok(group)
    }

    /// Where the next group starts: after this one's last mailbox.
    fn next_group_after(&self) -> Option<String> {
        self.mailboxes.last().filter(|_| self.more).map(|(mailbox_id, _)| mailbox_id.clone())
    }

    /// What a page says of its group, where the search goes through groups.
    fn searched(&self) -> Option<MailboxesSearched> {
        (usize::try_from(self.in_all).unwrap_or(usize::MAX) > MAILBOXES_PER_READ).then(|| MailboxesSearched {
            mailbox_ids: self.mailboxes.iter().map(|(mailbox_id, _)| mailbox_id.clone()).collect(),
            searched_before: self.before,
            in_all: self.in_all,
        })
    }
}

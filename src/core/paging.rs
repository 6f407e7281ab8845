//! Pages of a list kept in a stable order: the `limit` and `cursor` query
//! parameters every paged route reads, and the `next_cursor` every page answers.
//!
//! A cursor is the position of the last item on a page, opaque to clients. A list
//! ordered by a time, then an id, holds both (`cursor`, `cut`); a list in the
//! order its items were stored holds the last item's id alone, and the query
//! finds where that item was stored (`cursor_id`, `cut_at_id`), so the storage
//! order itself, which would tell how much the whole node holds, is never handed
//! out; a list merged from stores that each keep their own storage order holds
//! the time, the store and the id, and the group of stores where it asks them a
//! group at a time (`placed_cursor`), for the same reason. Either way the cursor holds an id of the kind the list is made of, and the
//! two forms cannot be read as each other, so one list's cursor handed to another
//! is refused rather than answered with a wrong page. A page is read as one row
//! more than asked for: that row, if it comes, is how the node knows another page
//! exists, without a count.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use mailroom_contract::Accepts;

use crate::core::context::Context;
use crate::core::ids::{IdKind, is_id_of};
use crate::core::refusal::Refusal;
use crate::core::request_error::RequestError;

/// The text every cursor starts with, so a cursor is recognisably one.
const CURSOR_PREFIX: &str = "after:";

/// The cursor naming the item at time `at` with id `id`: the next page starts
/// right after it, in the list's own order.
pub fn encode_cursor(at: i64, id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{at}:{id}"))
}

fn decode_cursor(cursor: &str, kind: IdKind) -> Option<(i64, String)> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    let (at, id) = text.strip_prefix(CURSOR_PREFIX)?.split_once(':')?;
    if !is_id_of(id, kind) {
        return None;
    }
    Some((at.parse().ok()?, id.to_string()))
}

fn decode_id_cursor(cursor: &str, kind: IdKind) -> Option<String> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    let id = text.strip_prefix(CURSOR_PREFIX)?;
    is_id_of(id, kind).then(|| id.to_string())
}

/// Where a list merged from stores that each keep their items in their own
/// storage order goes on: after the item `after` names (its time, the store
/// that holds it, a name the list gives its stores, such as a mailbox's id,
/// without a colon; and its id), or from the newest; and, where the list asks
/// its stores a group at a time, in the group of stores after the store
/// `group_after` names. Ties in time between stores are told apart by the
/// store (`merge`'s order is then `(time, store, storage order)`); the store's
/// own position stays unsaid, since the store finds it by the id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacedCursor {
    pub after: Option<(i64, String, String)>,
    pub group_after: Option<String>,
}

/// The text a cursor that starts a group of stores has where a time would be.
const GROUP_START: &str = "group";

/// The cursor for `placed`, in a list of items of `kind`:
/// `after:<time>:<store>:<id>`, followed by `:<store>` where it names a
/// group, or `after:group:<kind's prefix>:<store>` at the start of one, which
/// names no item and so says the list's kind itself. (The first page, from
/// the newest in the first group, has none.)
pub fn encode_placed_cursor(placed: &PlacedCursor, kind: IdKind) -> String {
    let group = placed.group_after.as_deref();
    let text = match (&placed.after, group) {
        (Some((at, store, id)), None) => format!("{CURSOR_PREFIX}{at}:{store}:{id}"),
        (Some((at, store, id)), Some(group)) => format!("{CURSOR_PREFIX}{at}:{store}:{id}:{group}"),
        (None, group) => format!("{CURSOR_PREFIX}{GROUP_START}:{}:{}", kind.prefix(), group.unwrap_or_default()),
    };
    URL_SAFE_NO_PAD.encode(text)
}

fn decode_placed_cursor(cursor: &str, kind: IdKind) -> Option<PlacedCursor> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    let parts: Vec<&str> = text.strip_prefix(CURSOR_PREFIX)?.split(':').collect();
    let store_name = |name: &str| (!name.is_empty()).then(|| name.to_string());
    match parts.as_slice() {
        [GROUP_START, prefix, group] if *prefix == kind.prefix() => {
            Some(PlacedCursor { after: None, group_after: Some(store_name(group)?) })
        }
        [at, store, id, group @ ..] if group.len() <= 1 && is_id_of(id, kind) => Some(PlacedCursor {
            after: Some((at.parse().ok()?, store.to_string(), id.to_string())),
            group_after: match group {
                [group] => Some(store_name(group)?),
                _ => None,
            },
        }),
        _ => None,
    }
}

/// The `cursor` query parameter of a list merged from stores
/// (`encode_placed_cursor`), with the ids of its items of `kind`: from the
/// newest, in the first group, when absent.
pub fn placed_cursor(context: &Context<'_>, kind: IdKind) -> Result<PlacedCursor, Refusal> {
    match context.query("cursor") {
        None => Ok(PlacedCursor::default()),
        Some(cursor) => decode_placed_cursor(cursor, kind).ok_or_else(invalid_cursor),
    }
}

/// The refusal of a `cursor` that is not one of this list's.
pub fn invalid_cursor() -> Refusal {
    RequestError::InvalidQueryParameter {
        name: "cursor".into(),
        expected: "the `next_cursor` of a previous page of this list, unchanged".into(),
    }
    .into()
}

/// The `cursor` query parameter as the time and id of a list of `kind` to
/// continue after, or `start` (with no id) when absent: a time before every item
/// of the list in its own order (`i64::MAX` for newest first, `i64::MIN` for
/// oldest first).
pub fn cursor(context: &Context<'_>, kind: IdKind, start: i64) -> Result<(i64, String), Refusal> {
    match context.query("cursor") {
        None => Ok((start, String::new())),
        Some(cursor) => decode_cursor(cursor, kind).ok_or_else(invalid_cursor),
    }
}

/// The `cursor` query parameter of a list in storage order, as the id (of
/// `kind`) of the item to continue after, or `None` for the first page.
pub fn cursor_id(context: &Context<'_>, kind: IdKind) -> Result<Option<String>, Refusal> {
    context.query("cursor").map(|cursor| decode_id_cursor(cursor, kind).ok_or_else(invalid_cursor)).transpose()
}

/// The `limit` query parameter: the page size the request asked for, or the
/// route's declared default. The dispatcher has already refused a value outside
/// the declared range, so the range is stated once, on the route.
pub fn limit(context: &Context<'_>) -> Result<i64, Refusal> {
    let declared = context.route().query_parameter("limit").map(|parameter| parameter.accepts);
    let Some(Accepts::PageSize { default, .. }) = declared else {
        return Err(context.internal(format!("{} reads a page size it does not declare", context.route().tool)));
    };
    match context.query("limit") {
        None => Ok(i64::from(default)),
        Some(text) => text.parse().map_err(|_| context.internal("a page size the dispatcher accepted does not parse")),
    }
}

/// Cuts `rows`, read as `limit + 1`, to the page, and answers the page's
/// `next_cursor`: the position of its last row when a further row came back.
pub fn cut<Row>(rows: &mut Vec<Row>, limit: i64, position: impl Fn(&Row) -> (i64, &str)) -> Option<String> {
    let limit = usize::try_from(limit).unwrap_or(0);
    if rows.len() <= limit {
        return None;
    }
    rows.truncate(limit);
    rows.last().map(|row| {
        let (at, id) = position(row);
        encode_cursor(at, id)
    })
}

/// Cuts `rows` of a list in storage order, read as `limit + 1`, to the page,
/// and answers the page's `next_cursor`: its last row's id when a further row
/// came back.
pub fn cut_at_id<Row>(rows: &mut Vec<Row>, limit: i64, id: impl Fn(&Row) -> &str) -> Option<String> {
    let limit = usize::try_from(limit).unwrap_or(0);
    if rows.len() <= limit {
        return None;
    }
    rows.truncate(limit);
    rows.last().map(|row| URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{}", id(row))))
}

/// Which way a list runs by its `(time, id)` positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    NewestFirst,
    OldestFirst,
}

/// Merges the pages several stores answered for one list (each mailbox's
/// object, asked in parallel for `limit + 1` rows after the same cursor, in
/// `order`) into the one page the caller sees, cut as `cut` cuts it. A
/// position `(time, id)` is one order over every store (ids are unique), so
/// the page's `next_cursor` continues every store at once: the next page asks
/// each again after it, and no store's rows are skipped or repeated. A list
/// in storage order (`cut_at_id`) has no such order across stores.
pub fn merge<Row>(
    pages: Vec<Vec<Row>>,
    limit: i64,
    order: Order,
    position: impl Fn(&Row) -> (i64, &str),
) -> (Vec<Row>, Option<String>) {
    let mut rows: Vec<Row> = pages.into_iter().flatten().collect();
    rows.sort_by(|one, other| {
        let ascending = position(one).cmp(&position(other));
        match order {
            Order::OldestFirst => ascending,
            Order::NewestFirst => ascending.reverse(),
        }
    });
    // One row beyond the page says whether another page exists, as for one store.
    rows.truncate(usize::try_from(limit).unwrap_or(0).saturating_add(1));
    let next_cursor = cut(&mut rows, limit, position);
    (rows, next_cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECEIPT: &str = "rcp_01M8MECXYJD8V8NXZMYC8H1337";

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        let cursor = encode_cursor(42, RECEIPT);
        assert_eq!(decode_cursor(&cursor, IdKind::Receipt), Some((42, RECEIPT.to_string())));
        assert_eq!(decode_cursor(&cursor, IdKind::Send), None, "another list's cursor");
        assert_eq!(decode_cursor("nope", IdKind::Receipt), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode(format!("after:x:{RECEIPT}")), IdKind::Receipt), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("after:1:'; DROP"), IdKind::Receipt), None);
    }

    #[test]
    fn placed_cursors_round_trip_and_are_never_read_as_another_form() {
        let mailbox = "mbx_01M8MECXYJD8V8NXZMYC8H1339";
        let placed = |after: Option<(i64, &str)>, group_after: Option<&str>| PlacedCursor {
            after: after.map(|(at, store)| (at, store.to_string(), RECEIPT.to_string())),
            group_after: group_after.map(str::to_string),
        };
        for form in [
            placed(Some((42, mailbox)), None),
            placed(Some((42, "")), None),
            placed(Some((-7, mailbox)), Some(mailbox)),
            placed(None, Some(mailbox)),
        ] {
            let cursor = encode_placed_cursor(&form, IdKind::Receipt);
            assert_eq!(decode_placed_cursor(&cursor, IdKind::Receipt), Some(form), "{cursor}");
            assert_eq!(decode_placed_cursor(&cursor, IdKind::Send), None, "another list's cursor");
            assert_eq!(decode_cursor(&cursor, IdKind::Receipt), None);
            assert_eq!(decode_id_cursor(&cursor, IdKind::Receipt), None);
        }
        assert_eq!(decode_placed_cursor(&encode_cursor(42, RECEIPT), IdKind::Receipt), None);
        for stray in [
            format!("after:1:a:b:{RECEIPT}"),
            format!("after:1:{mailbox}:{RECEIPT}:{mailbox}:{mailbox}"),
            format!("after:1:{mailbox}:{RECEIPT}:"),
            "after:group:rcp_:".to_string(),
            format!("after:group:{mailbox}"),
            format!("after:group:rcp_:{mailbox}:{RECEIPT}"),
        ] {
            assert_eq!(decode_placed_cursor(&URL_SAFE_NO_PAD.encode(&stray), IdKind::Receipt), None, "{stray}");
        }
    }

    #[test]
    fn cursors_by_id_round_trip_and_are_never_read_as_cursors_by_time() {
        let mut rows = vec![RECEIPT, RECEIPT, "rcp_01M8MECXYJD8V8NXZMYC8H1338"];
        let cursor = cut_at_id(&mut rows, 2, |row| row).expect("a row beyond the page");
        assert_eq!(rows.len(), 2);
        assert_eq!(decode_id_cursor(&cursor, IdKind::Receipt), Some(RECEIPT.to_string()));
        assert_eq!(decode_id_cursor(&cursor, IdKind::Send), None, "another list's cursor");
        assert_eq!(decode_cursor(&cursor, IdKind::Receipt), None, "a list by time refuses it");
        assert_eq!(decode_id_cursor(&encode_cursor(42, RECEIPT), IdKind::Receipt), None, "and the other way round");
        assert_eq!(decode_id_cursor("nope", IdKind::Receipt), None);
        assert_eq!(cut_at_id(&mut rows, 2, |row| row), None, "no row beyond the page: the last page");
    }

    #[test]
    fn pages_merged_from_several_stores_continue_every_store_without_a_gap_or_a_repeat() {
        fn position(row: &(i64, String)) -> (i64, &str) {
            (row.0, &row.1)
        }
        // Three mailboxes' rows, newest first; two share a time, told apart by id.
        let stores: Vec<Vec<(i64, String)>> = vec![
            vec![(90, "a1".into()), (60, "a2".into()), (30, "a3".into()), (10, "a4".into())],
            vec![(80, "b1".into()), (60, "b2".into())],
            vec![(70, "c1".into()), (20, "c2".into()), (5, "c3".into())],
        ];
        let after = |store: &[(i64, String)], cursor: Option<&(i64, String)>, limit: i64| -> Vec<(i64, String)> {
            store
                .iter()
                .filter(|row| cursor.is_none_or(|(at, id)| (row.0, row.1.as_str()) < (*at, id.as_str())))
                .take(usize::try_from(limit + 1).unwrap())
                .cloned()
                .collect()
        };
        let mut seen = Vec::new();
        let mut cursor: Option<(i64, String)> = None;
        loop {
            let pages = stores.iter().map(|store| after(store, cursor.as_ref(), 2)).collect();
            let (page, next) = merge(pages, 2, Order::NewestFirst, position);
            assert!(page.len() <= 2);
            seen.extend(page.iter().map(|row| row.1.clone()));
            let Some(next) = next else { break };
            let last = page.last().cloned().unwrap();
            assert_eq!(next, encode_cursor(last.0, &last.1), "the cursor names the page's last row");
            cursor = Some(last);
        }
        assert_eq!(seen, ["a1", "b1", "c1", "b2", "a2", "a3", "c2", "a4", "c3"]);

        let oldest =
            merge(vec![vec![(1, "x".to_string())], vec![(0, "y".to_string())]], 5, Order::OldestFirst, position);
        assert_eq!(oldest, (vec![(0, "y".to_string()), (1, "x".to_string())], None));
    }

    #[test]
    fn a_page_is_cut_at_its_limit_and_names_its_last_row() {
        fn position(row: &(i64, String)) -> (i64, &str) {
            (row.0, &row.1)
        }
        let rows = |count: i64| -> Vec<(i64, String)> { (0..count).map(|at| (10 - at, format!("row {at}"))).collect() };
        let mut page = rows(3);
        assert_eq!(cut(&mut page, 2, position), Some(encode_cursor(9, "row 1")));
        assert_eq!(page, rows(2));
        let mut page = rows(2);
        assert_eq!(cut(&mut page, 2, position), None, "no row beyond the page: the last page");
        assert_eq!(page, rows(2));
    }
}

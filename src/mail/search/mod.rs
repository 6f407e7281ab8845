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
//!
//! `query` turns what a person typed into an FTS5 query, `routes` answers
//! `GET /api/search`, and `selection` chooses received mail for an export by
//! the same match.

pub mod index;
mod query;
mod routes;
mod selection;

pub use query::{MAXIMUM_QUERY_LENGTH, MAXIMUM_TERMS, SearchError, fts_query};
pub use routes::search;
pub use selection::{ReceiptSelection, SelectedIn};

//! The query language: what a person types turned into an FTS5 query
//! (`fts_query`), every term quoted so the caller's words never reach FTS5's
//! own syntax; its limits, and what it refuses (`SearchError`).

use crate::core::refusal::Refusal;

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

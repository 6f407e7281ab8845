//! Email addresses as the node accepts them: sign-in names, mailbox addresses and
//! outbound recipients share one rule, so an address valid in one place is valid
//! in all of them. The rule is RFC 5322's `addr-spec` in its plain form: a
//! dot-atom local part (no quoted strings, no comments), `@`, and a dot-atom
//! domain with at least one dot, widened to UTF-8 by RFC 6532. Nothing that could
//! end or split a header (CR, LF, any control, a space, `<`, `>`, `,`, `;`, `"`)
//! is ever part of one.

/// The longest address (RFC 5321's path limit less its brackets).
pub const MAXIMUM_ADDRESS_BYTES: usize = 254;
/// The longest local part (RFC 5321).
pub const MAXIMUM_LOCAL_PART_BYTES: usize = 64;

/// Lower-cases and checks an address; `None` when it is not an `addr-spec` the
/// node writes into a header.
pub fn normalize(address: &str) -> Option<String> {
    let address = address.trim().to_lowercase();
    is_address(&address).then_some(address)
}

/// Whether `address` (already trimmed) is one the node writes into a header: the
/// check made again when a message is written, whatever was stored.
pub fn is_address(address: &str) -> bool {
    address.len() <= MAXIMUM_ADDRESS_BYTES
        && address.split_once('@').is_some_and(|(local, domain)| {
            local.len() <= MAXIMUM_LOCAL_PART_BYTES && is_dot_atom(local) && is_dot_atom(domain) && domain.contains('.')
        })
}

/// RFC 5322 `atext`, widened by RFC 6532 to any UTF-8 beyond ASCII that is not a
/// control or a space.
fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || "!#$%&'*+-/=?^_`{|}~".contains(c)
        || (!c.is_ascii() && !c.is_control() && !c.is_whitespace())
}

/// RFC 5322 `dot-atom-text`: atoms of `atext` joined by single dots.
pub fn is_dot_atom(text: &str) -> bool {
    !text.is_empty() && text.split('.').all(|atom| !atom.is_empty() && atom.chars().all(is_atext))
}

/// The domain of an address already normalised.
pub fn domain(address: &str) -> &str {
    address.rsplit_once('@').map_or("", |(_, domain)| domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(address: &str, expected: Option<&str>) {
        assert_eq!(normalize(address).as_deref(), expected, "{address}");
    }

    #[test]
    fn addresses_are_normalized_or_refused() {
        check("Ana@Example.COM ", Some("ana@example.com"));
        check("ana@example", None);
        check("ana example@x.com", None);
        check("@example.com", None);
        check("ana@@example.com", None);
        check("ana@.example.com", None);
        check("ana@example.com.", None);
        check("ana@exa..mple.com", None);
        check("Ana <ana@example.com>", None);
        check("a@b.c, d@e.f", None);
        check("bcc@x.com\r\nBcc: evil@x.com", None);
        check("", None);
        check("ana(comment)@example.com", None);
        check("\"quoted\"@example.com", None);
        check("ana@exa mple.com", None);
        check("ana@example.com\u{0}", None);
        check("ana\u{85}@example.com", None);
        check("o'brien+tag@example.co.uk", Some("o'brien+tag@example.co.uk"));
        check("ünïcode@bücher.example", Some("ünïcode@bücher.example"));
        check(&format!("{}@example.com", "a".repeat(65)), None);
    }

    #[test]
    fn the_domain_is_after_the_last_at() {
        assert_eq!(domain("support@mail.example.com"), "mail.example.com");
    }
}

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

/// The longest display name kept on a recipient, in characters.
pub const MAXIMUM_NAME_CHARACTERS: usize = 256;

/// A recipient as a person writes one, `ana@example.com` or
/// `Ana Lima <ana@example.com>` (the name may be quoted): its display name, if
/// any, and its address normalised. `None` when the address is not one, or the
/// name holds what could end a header or confuse the form (a control, `<`, `>`,
/// `"`), or is too long.
pub fn recipient(input: &str) -> Option<(Option<String>, String)> {
    let input = input.trim();
    let Some(open) = input.rfind('<') else {
        return normalize(input).map(|address| (None, address));
    };
    let address = input[open + 1..].strip_suffix('>')?;
    let address = normalize(address)?;
    let name = input[..open].trim();
    let name = name.strip_prefix('"').and_then(|name| name.strip_suffix('"')).unwrap_or(name).trim();
    if name.chars().any(|c| c.is_control() || matches!(c, '<' | '>' | '"'))
        || name.chars().count() > MAXIMUM_NAME_CHARACTERS
    {
        return None;
    }
    Some(((!name.is_empty()).then(|| name.to_string()), address))
}

/// A recipient as the node stores and shows it: `Name <address>`, or the bare
/// address when it has no name.
pub fn display(name: Option<&str>, address: &str) -> String {
    match name {
        Some(name) => format!("{name} <{address}>"),
        None => address.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(address: &str, expected: Option<&str>) {
        assert_eq!(normalize(address).as_deref(), expected, "{address}");
    }

    #[test]
    fn recipients_keep_their_display_names() {
        assert_eq!(recipient(" Ana@Example.com "), Some((None, "ana@example.com".into())));
        assert_eq!(recipient("Ana Lima <Ana@Example.com>"), Some((Some("Ana Lima".into()), "ana@example.com".into())));
        assert_eq!(
            recipient("\"Lima, Ana\" <ana@example.com>"),
            Some((Some("Lima, Ana".into()), "ana@example.com".into()))
        );
        assert_eq!(recipient("<ana@example.com>"), Some((None, "ana@example.com".into())));
        assert_eq!(recipient("Ana\r\nBcc: x@evil.example <ana@example.com>"), None);
        assert_eq!(recipient("Ana <ana@example.com"), None);
        assert_eq!(recipient("Ana <not an address>"), None);
        assert_eq!(display(Some("Ana Lima"), "ana@example.com"), "Ana Lima <ana@example.com>");
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

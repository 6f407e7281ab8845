//! Email addresses as the node accepts them: sign-in names, mailbox addresses and
//! outbound recipients share one rule, so an address valid in one place is valid
//! in all of them.

/// Lower-cases and checks an address: a local part, `@`, and a domain with a dot;
/// no spaces, controls, angle brackets or commas; at most 254 characters.
pub fn normalize(address: &str) -> Option<String> {
    let address = address.trim().to_lowercase();
    let forbidden = |c: char| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | ',' | ';' | '"');
    let valid = address.len() <= 254
        && !address.chars().any(forbidden)
        && address.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && local.len() <= 64
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains("..")
        });
    valid.then_some(address)
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
    }

    #[test]
    fn the_domain_is_after_the_last_at() {
        assert_eq!(domain("support@mail.example.com"), "mail.example.com");
    }
}

//! Which redirect URI an authorization request may name.
//!
//! One the client registered, character for character; or, where it
//! registered a loopback IP literal (`http://127.0.0.1…` or `http://[::1]…`),
//! that URI on any port. A native app listens on whatever port the operating
//! system gives it when the person signs in, so it cannot register the port in
//! advance, and RFC 8252 §7.3 requires the server to allow any (OAuth 2.1 says
//! the same). Everything but the port (scheme, host, path, query) still
//! matches exactly, and the token request must then name the URI the code was
//! issued for, port included.
//!
//! A native app may also be sent back through a private-use URI scheme of its
//! own (RFC 8252 §7.1): `cursor://…`, `vscode://…`, `com.example.app:/cb`.
//! Any app on the device can claim such a scheme, which is why every client
//! proves itself with PKCE; what the node refuses are the schemes a browser
//! acts on itself (`javascript:`, `data:`, `file:` and the like), which would
//! run or show something instead of handing the code to an app. These match
//! exactly.
//!
//! `localhost` is not given that leeway. RFC 8252 §8.3 advises clients against
//! it (the name can resolve to an interface other than loopback) and its port
//! rule names the IP literals; the node still registers `http://localhost`
//! URIs, since common MCP clients use them, but matches them exactly, as every
//! other URI is matched. This module judges a request against a registration;
//! what can be registered is `clients`'.

/// A redirect URI to this machine, taken apart: its host, and everything
/// after its port (if it names one).
struct ThisMachine<'uri> {
    host: &'uri str,
    after_the_port: &'uri str,
}

impl ThisMachine<'_> {
    /// Whether any port will do: only for the IP literals (RFC 8252 §7.3).
    fn takes_any_port(&self) -> bool {
        self.host != "localhost"
    }
}

/// `uri` as a redirect URI to this machine, if it is one: `http://`, then
/// `127.0.0.1`, `[::1]` or `localhost`, then nothing or a port (`:` and 1 to
/// 65535 in digits), then the path and query. No credentials, and no other
/// spelling of the address.
fn this_machine(uri: &str) -> Option<ThisMachine<'_>> {
    let rest = uri.strip_prefix("http://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after_the_port) = rest.split_at(end);
    let (host, port) = ["127.0.0.1", "[::1]", "localhost"]
        .into_iter()
        .find_map(|host| authority.strip_prefix(host).map(|port| (host, port)))?;
    if !port.is_empty() {
        let digits = port.strip_prefix(':')?;
        let number = digits.bytes().all(|byte| byte.is_ascii_digit()).then(|| digits.parse::<u16>().ok()).flatten();
        if !matches!(number, Some(1..)) {
            return None;
        }
    }
    Some(ThisMachine { host, after_the_port })
}

/// Schemes a browser acts on itself rather than handing to an app: never a
/// private-use scheme, whatever an app registers.
const BROWSERS_OWN_SCHEMES: &[&str] = &[
    "http",
    "https",
    "javascript",
    "vbscript",
    "data",
    "blob",
    "file",
    "filesystem",
    "about",
    "view-source",
    "ftp",
    "ws",
    "wss",
    "mailto",
    "tel",
    "sms",
    "intent",
    "chrome",
    "chrome-extension",
    "moz-extension",
    "edge",
    "resource",
    "jar",
];
/// The longest private-use scheme taken.
const MAXIMUM_SCHEME_BYTES: usize = 64;

/// The private-use scheme `uri` sends the browser to (RFC 8252 §7.1), if it
/// is one: a scheme as RFC 3986 spells it, in lower case, that no browser
/// acts on itself, followed by more than the colon and no credentials.
pub(super) fn private_use_scheme(uri: &str) -> Option<&str> {
    let (scheme, rest) = uri.split_once(':')?;
    let mut characters = scheme.chars();
    let spelled = characters.next().is_some_and(|first| first.is_ascii_lowercase())
        && characters.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '-' | '.'));
    let authority = rest.strip_prefix("//").map(|after| after.split(['/', '?']).next().unwrap_or_default());
    let usable = spelled
        && scheme.len() <= MAXIMUM_SCHEME_BYTES
        && !BROWSERS_OWN_SCHEMES.contains(&scheme)
        && !rest.trim_start_matches('/').is_empty()
        && !authority.is_some_and(|authority| authority.contains('@'));
    usable.then_some(scheme)
}

/// Whether a client may register `uri` as a redirect URI: HTTPS to a host,
/// HTTP to this machine (a native app's listener) or a private-use scheme of
/// a native app's own, without credentials or a fragment, at most
/// `maximum_bytes` long. A redirect URI is where a person's browser is sent
/// back to, never an address the node fetches, so this rule is its own and
/// not the outbound one.
pub(super) fn can_be_registered(uri: &str, maximum_bytes: usize) -> bool {
    // A backslash is a path separator to some URL readers and not to others:
    // refused, so the browser and the node read the same address.
    let plain = uri.len() <= maximum_bytes
        && !uri.contains('#')
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\');
    let https_host = uri.strip_prefix("https://").is_some_and(|rest| {
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        !authority.is_empty() && !authority.contains('@')
    });
    plain && (https_host || this_machine(uri).is_some() || private_use_scheme(uri).is_some())
}

/// Whether `uri` sends the grant to an app on the person's own computer (a
/// loopback listener, or the app's own URI scheme) rather than to a site:
/// what the consent screen tells the person.
pub(super) fn on_this_computer(uri: &str) -> bool {
    this_machine(uri).is_some() || private_use_scheme(uri).is_some()
}

/// Whether an authorization request may name `requested` as its redirect URI,
/// for a client that registered `registered`.
pub(super) fn is_registered(registered: &[String], requested: &str) -> bool {
    registered.iter().any(|uri| {
        uri == requested
            || match (this_machine(uri), this_machine(requested)) {
                (Some(registered), Some(requested)) => {
                    registered.takes_any_port()
                        && registered.host == requested.host
                        && registered.after_the_port == requested.after_the_port
                }
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(registered: &str, requested: &str, admitted: bool) {
        assert_eq!(is_registered(&[registered.to_string()], requested), admitted, "{registered} for {requested}");
    }

    #[test]
    fn a_loopback_literal_matches_on_any_port_and_nothing_else_moves() {
        check("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback", true);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:51234/callback", true);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1/callback", true);
        check("http://[::1]:4567/cb?x=1", "http://[::1]:80/cb?x=1", true);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:51234/elsewhere", false);
        check("http://127.0.0.1:4567/cb?x=1", "http://127.0.0.1:51234/cb?x=2", false);
        check("http://127.0.0.1:4567/callback", "http://[::1]:4567/callback", false);
        check("http://127.0.0.1:4567/callback", "https://127.0.0.1:4567/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:0/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:65536/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:+80/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:80@evil.example/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1.evil.example:80/callback", false);
        check("http://127.0.0.1:4567/callback", "http://127.0.0.1:51234/callback#x", false);
    }

    #[test]
    fn what_can_be_registered_is_https_or_this_machine() {
        for registered in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1/callback",
            "http://127.0.0.1:4567/callback",
            "http://[::1]/callback",
            "http://[::1]:4567/cb?x=1",
            "http://localhost:4567/callback",
            // Native apps' own schemes (RFC 8252 §7.1), as Cursor and VS Code register them.
            "cursor://anysphere.cursor-retrieval/oauth/user-mailroom/callback",
            "vscode://vscode.github-authentication/did-authenticate",
            "vscode-insiders://vscode.github-authentication/did-authenticate",
            "com.example.app:/oauth2redirect/example-provider",
        ] {
            assert!(can_be_registered(registered, 2000), "{registered}");
        }
        for refused in [
            "http://app.example/cb",
            "https://app.example/cb#x",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "view-source:https://app.example/",
            "intent://scan/#Intent;scheme=zxing;end",
            "blob:https://app.example/1",
            "cursor:",
            "cursor://",
            "cursor://u:p@anysphere.cursor-retrieval/cb",
            "1app://cb",
            "Cursor://anysphere.cursor-retrieval/cb",
            "cursor://anysphere.cursor-retrieval/cb#x",
            "https://u:p@a.example/",
            "https://",
            "http://127.0.0.1.evil.example/cb",
            "http://localhost.evil.example/cb",
            "http://127.0.0.1:99999/cb",
            "https://app.example/a b",
        ] {
            assert!(!can_be_registered(refused, 2000), "{refused}");
        }
        assert!(!can_be_registered(&format!("https://app.example/{}", "a".repeat(2000)), 2000));
    }

    #[test]
    fn localhost_and_every_other_uri_match_exactly() {
        check("http://localhost:4567/callback", "http://localhost:4567/callback", true);
        check("http://localhost:4567/callback", "http://localhost:51234/callback", false);
        check("http://localhost/callback", "http://localhost:51234/callback", false);
        check("https://app.example/cb", "https://app.example/cb", true);
        check("https://app.example/cb", "https://app.example:8443/cb", false);
        check("https://app.example/cb", "https://app.example/cb/", false);
    }
}

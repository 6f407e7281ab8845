//! The browser interface: one page, its script and its style, served at `GET /`.
//!
//! The page is static; everything it shows comes from the same API a CLI or an
//! agent calls, with the session in `__Host-` cookies. The Content-Security-Policy
//! allows exactly this page's own script and style, by hash, and nothing else.

use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use crate::http::Response;

const PAGE: &str = include_str!("interface/index.html");
const SCRIPT: &str = include_str!("interface/app.js");
const STYLE: &str = include_str!("interface/style.css");

struct Shell {
    html: String,
    content_security_policy: String,
}

fn csp_hash(source: &str) -> String {
    format!("'sha256-{}'", STANDARD.encode(Sha256::digest(source.as_bytes())))
}

fn shell_page() -> &'static Shell {
    static SHELL: OnceLock<Shell> = OnceLock::new();
    SHELL.get_or_init(|| Shell {
        html: PAGE.replace("/*STYLE*/", STYLE).replace("/*SCRIPT*/", SCRIPT),
        content_security_policy: format!(
            "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            csp_hash(SCRIPT),
            csp_hash(STYLE)
        ),
    })
}

/// `GET /`.
pub fn shell() -> Response {
    let shell = shell_page();
    Response::html(shell.html.clone(), &shell.content_security_policy)
}

//! The plain-data request and response the dispatcher works on.
//!
//! The adapter converts a Worker request into a `Request` and a `Response` back;
//! the MCP server builds `Request`s to re-enter the router in process. An answer
//! that goes on as server-sent events carries its `Following`: what the surface
//! follows, and how. Nothing here performs I/O.

use serde::Serialize;

use crate::core::events::Listening;
use crate::core::refusal::{CredentialRefused, Refusal};
use crate::core::text;

/// The largest request body the node reads, stated in the contract (which
/// documents the 413 that refuses a bigger one).
pub use mailroom_contract::MAXIMUM_BODY_BYTES;

/// Where a request came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// A REST call over HTTP.
    #[default]
    Rest,
    /// A tool call through `POST /mcp`, re-entering the router in process.
    Mcp,
    /// A call through an agent's A2A endpoint, re-entering the router in process.
    A2a,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Rest => "rest",
            Surface::Mcp => "mcp",
            Surface::A2a => "a2a",
        }
    }
}

/// An HTTP request, as the core sees it.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query string, without the `?`.
    pub query: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `scheme://host[:port]` of the URL the request was sent to, for the Origin check.
    pub origin: String,
    /// The client's address as Cloudflare reports it, for rate limits.
    pub client_address: Option<String>,
}

/// The parts of an absolute URL the node reads, as the runtime normalised it
/// (WHATWG: lower-case host, default port left out): `scheme://host[:port]`, the
/// path (still percent-encoded; `/` when empty) and the raw query (without `?`).
/// Split by hand because the runtime has already parsed it, and a URL parser
/// would be a sizeable part of the Worker for this alone.
pub fn url_parts(url: &str) -> Option<(String, String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let rest = rest[authority_end..].split('#').next().unwrap_or_default();
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = if path.is_empty() { "/" } else { path };
    (!scheme.is_empty() && !host.is_empty())
        .then(|| (format!("{scheme}://{host}"), path.to_string(), query.to_string()))
}

impl Request {
    /// The request a surface re-enters the dispatcher with for one route: this
    /// request's credentials, origin and client, with the route's own method,
    /// path and query, and `body` as JSON when the route takes one.
    pub fn reentering(&self, method: &str, path: String, query: String, body: Option<Vec<u8>>) -> Request {
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .filter(|(name, _)| name != "content-length" && name != "content-type")
            .cloned()
            .collect();
        if body.is_some() {
            headers.push(("content-type".into(), "application/json".into()));
        }
        Request {
            method: method.to_string(),
            path,
            query,
            headers,
            body: body.unwrap_or_default(),
            origin: self.origin.clone(),
            client_address: self.client_address.clone(),
        }
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The value of a cookie, from every `Cookie` header.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case("cookie"))
            .flat_map(|(_, value)| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }
}

/// Writes a response leaves to after its answer (the adapter hands them to
/// `waitUntil`), such as recording a dispatch's outcome. Never an authority
/// decision, never an audit row.
#[derive(Clone, Debug, Default)]
pub struct Deferred {
    /// On D1.
    pub on_d1: Vec<crate::core::storage::Statement>,
    /// Each in the named mailbox's own database (a dispatch's outcome, once
    /// the mailbox's mail has moved there), after those on D1.
    pub in_mailboxes: Vec<(String, crate::core::storage::Statement)>,
    /// On D1, in the batch of `on_d1`: the statements queueing deliveries to
    /// subscribed endpoints of what a change in a mailbox's own database
    /// told, counted as queued once written, so they are posted after the
    /// answer as a change on D1's are.
    pub webhooks_on_d1: Vec<crate::core::storage::Statement>,
}

impl Deferred {
    pub fn is_empty(&self) -> bool {
        self.on_d1.is_empty() && self.in_mailboxes.is_empty() && self.webhooks_on_d1.is_empty()
    }

    /// `other`'s writes after these.
    pub fn extend(&mut self, other: &Deferred) {
        self.on_d1.extend(other.on_d1.iter().cloned());
        self.in_mailboxes.extend(other.in_mailboxes.iter().cloned());
        self.webhooks_on_d1.extend(other.webhooks_on_d1.iter().cloned());
    }
}

/// An HTTP response, as the core produces it.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How many storage round trips producing this response took. Not sent; read by
    /// the tests that hold each route to its budget.
    pub round_trips: u32,
    /// Writes to run after the response is sent (`Node::write_deferred`).
    pub deferred: Deferred,
    /// Commit batches producing this response took: 1 for a change, 0 for a
    /// read. Sent as `x-mailroom-commit-attempts` for the benchmark to count.
    pub commit_attempts: u32,
    /// Whether producing this response appended to the audit chain: the adapter
    /// seals the chain after the answer (`audit::seal`).
    pub seal_chain: bool,
    /// The mailbox whose segment of the chain producing this response appended
    /// to (decision 0040): the adapter seals that segment after the answer.
    pub seal_segment: Option<String>,
    /// Whether producing this response queued a message for an agent
    /// elsewhere: the adapter runs the outbox after the answer, so the first
    /// attempt does not wait for the schedule.
    pub remote_deliveries_queued: bool,
    /// Not sent: set when the answer refuses the credential the request
    /// presented, so the MCP server, reading a call it re-entered the
    /// dispatcher with, answers that as HTTP rather than as a tool's result.
    pub credential_refused: Option<CredentialRefused>,
    /// Not sent: set when the call lost a race for a unique name
    /// (`Context::on_constraint_violation_handle_again`) and applied nothing,
    /// so the dispatcher handles it once more.
    pub handle_again: bool,
    /// Not sent: the stream this answer opens (a `Produces::Live` route's
    /// 101). The adapter hands the request to that topic's hub, which holds
    /// the WebSocket.
    pub listen: Option<Listening>,
    /// Not sent as it is: the server-sent events this answer goes on with
    /// (`Following`). The adapter streams them after the answer's body.
    pub follow: Option<Following>,
}

/// A stream an answer opens over the request's own HTTP response, as
/// server-sent events, rather than as a WebSocket: a protocol whose client
/// reads its updates on the call that asked for them (A2A's
/// `SendStreamingMessage` and `SubscribeToTask`, MCP's
/// `subscriptions/listen`). The answer's body (`Response::events`) is what is
/// sent first; the surface's `Follower` says what each event on its topics
/// becomes; the adapter holds a listener on each topic's hub (admitted, and
/// asked again, exactly as a WebSocket's is) and writes what the follower
/// answers.
#[derive(Clone)]
pub struct Following {
    /// Each listening route's admission (the topic, and whom the hub
    /// records) with the request that admitted it, which the hub replays to
    /// ask whether the stream may stay open.
    pub listeners: Vec<(Listening, Request)>,
    /// The surface the follower's readings (and the hub's questions) are
    /// dispatched over.
    pub surface: Surface,
    /// Whether the follower is told each time its listeners were asked again
    /// (`Told::ACCESS_CHECKED`): what it follows depends on access as a whole
    /// (the caller's catalogue of tools).
    pub access_checks: bool,
    pub follower: std::rc::Rc<dyn Follower>,
}

impl std::fmt::Debug for Following {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let topics: Vec<String> = self.listeners.iter().map(|(listening, _)| listening.topic.key()).collect();
        formatter.debug_struct("Following").field("topics", &topics).finish()
    }
}

/// What a listener was told: an event on a topic, or that access was
/// checked again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Told<'frame> {
    /// The topic's key.
    pub topic: &'frame str,
    pub kind: &'frame str,
    pub object: Option<&'frame str>,
}

impl Told<'_> {
    /// The kind of the frame a hub sends a listener that asked to be told its
    /// access was checked again (`Following::access_checks`).
    pub const ACCESS_CHECKED: &'static str = "access_checked";
}

/// What a surface follows on a stream it opened (`Following`): which requests
/// read it again, and what each reading means for the stream.
pub trait Follower {
    /// The requests that read again what `told` may have changed, as the
    /// caller, through the router: none when it concerns nothing followed;
    /// everything for `None` (the first reading, and every
    /// `FOLLOW_REREAD_EVERY_MS`).
    fn readings(&self, told: Option<&Told<'_>>) -> Vec<Request>;
    /// What the answers to `readings(told)`, in order, mean: the events to
    /// send (each one SSE `data:` payload) and whether the stream is over.
    fn read(&self, told: Option<&Told<'_>>, answers: &[Response]) -> Followed;
    /// The last event of a stream whose listener the hub closed while what is
    /// followed goes on (its caller holds too many streams, or may no longer
    /// listen): `reason` in the surface's own words.
    fn closed(&self, reason: &str) -> String;
}

/// What one reading sends, and whether it ends the stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Followed {
    pub events: Vec<String>,
    pub finished: bool,
}

/// One server-sent event carrying `data` (one line of JSON).
pub fn server_sent_event(data: &str) -> String {
    format!("data: {data}\n\n")
}

/// How often a followed stream is read again of its own accord, whatever it
/// was told: a change no entry tells its topic (a lease granted, a message
/// expiring) reaches the stream within this, and the read's comment line
/// keeps the connection from being taken for idle.
pub const FOLLOW_REREAD_EVERY_MS: u64 = 25_000;

/// `Content-Disposition: attachment` for a file called `file_name` (whoever
/// wrote it: a sender, for a received attachment). The name a browser saves is
/// cut to 120 characters, and every control, direction control
/// (`text::is_direction_control`: one would make `invoice`, U+202E, `fdp.exe`
/// read as a PDF), path separator and quote in it becomes `_`. It is given as
/// `filename`, in the ASCII letters, digits, `.`, `-` and `_` every client
/// reads (the rest `_`), and, when that is not the whole name, as RFC 6266's
/// `filename*` in UTF-8 (RFC 8187), so a name in another script survives.
pub fn content_disposition(file_name: &str) -> String {
    let shown: String = file_name
        .chars()
        .map(|c| if c.is_control() || text::is_direction_control(c) || matches!(c, '/' | '\\' | '"') { '_' } else { c })
        .take(120)
        .collect();
    let plain: String = shown
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect();
    if plain == shown {
        return format!("attachment; filename=\"{plain}\"");
    }
    // RFC 8187's attr-char stays; every other byte of the UTF-8 is %XX.
    let encoded: String = shown
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect();
    format!("attachment; filename=\"{plain}\"; filename*=UTF-8''{encoded}")
}

impl Response {
    /// An answer of `status` with `headers` and `body`; what is not sent (its
    /// round trips, deferred writes, commit attempts, sealing, a refused
    /// credential) starts empty, for the dispatcher and the context to fill.
    fn answer(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Response {
        Response {
            status,
            headers,
            body,
            round_trips: 0,
            deferred: Deferred::default(),
            commit_attempts: 0,
            seal_chain: false,
            seal_segment: None,
            remote_deliveries_queued: false,
            credential_refused: None,
            handle_again: false,
            listen: None,
            follow: None,
        }
    }

    /// The answer that opens a stream (`listening`): 101, the WebSocket
    /// itself made by the topic's hub.
    pub fn listening(listening: Listening) -> Response {
        let mut response = Response::answer(101, Vec::new(), Vec::new());
        response.listen = Some(listening);
        response
    }

    pub fn json<T: Serialize>(status: u16, body: &T) -> Response {
        // Serialising the contract's own types cannot fail: they hold no maps with
        // non-string keys and no custom serialisers that error.
        Response::json_written(status, serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec()))
    }

    /// A JSON answer whose body is already written: a surface that splices
    /// bytes it holds ready (the MCP catalogue's tools) rather than writing
    /// them again.
    pub fn json_written(status: u16, body: Vec<u8>) -> Response {
        Response::answer(
            status,
            vec![
                ("content-type".into(), "application/json; charset=utf-8".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body,
        )
    }

    pub fn html(body: String, content_security_policy: &str) -> Response {
        Response::answer(
            200,
            vec![
                ("content-type".into(), "text/html; charset=utf-8".into()),
                ("cache-control".into(), "no-store".into()),
                ("content-security-policy".into(), content_security_policy.into()),
                ("x-frame-options".into(), "DENY".into()),
                ("referrer-policy".into(), "no-referrer".into()),
            ],
            body.into_bytes(),
        )
    }

    /// Server-sent events (`text/event-stream`), each of `events` one `data:`
    /// payload; an answer that goes on streaming carries what follows in
    /// `follow`.
    pub fn events(events: &[String]) -> Response {
        let body: String = events.iter().map(|data| server_sent_event(data)).collect();
        Response::answer(
            200,
            vec![("content-type".into(), "text/event-stream".into()), ("cache-control".into(), "no-store".into())],
            body.into_bytes(),
        )
    }

    /// An answer with no body, such as a 202 to a notification.
    pub fn empty(status: u16) -> Response {
        Response::answer(status, Vec::new(), Vec::new())
    }

    /// One of the browser interface's script modules: kept by the browser for a
    /// year where it was asked for by its own version, checked again each time otherwise.
    pub fn script(source: &str, kept_for_a_year: bool) -> Response {
        let caching = if kept_for_a_year { "public, max-age=31536000, immutable" } else { "no-cache" };
        Response::answer(
            200,
            vec![
                ("content-type".into(), "text/javascript; charset=utf-8".into()),
                ("cache-control".into(), caching.into()),
            ],
            source.as_bytes().to_vec(),
        )
    }

    /// Bytes a browser must save, never render: attacker-written content (an HTML
    /// attachment, say) served from the node's own origin would otherwise run
    /// with the signed-in person's session. `Content-Disposition: attachment` and a
    /// sandboxing policy keep it inert.
    pub fn download(status: u16, content_type: &str, body: Vec<u8>, file_name: &str) -> Response {
        let content_type = if content_type.chars().all(|c| c.is_ascii_graphic()) && content_type.contains('/') {
            content_type
        } else {
            "application/octet-stream"
        };
        Response::answer(
            status,
            vec![
                ("content-type".into(), content_type.into()),
                ("content-disposition".into(), content_disposition(file_name)),
                ("content-security-policy".into(), "default-src 'none'; sandbox".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body,
        )
    }

    pub fn refusal(refusal: &Refusal) -> Response {
        let mut response = if refusal.oauth {
            let body = mailroom_contract::api::OAuthErrorBody {
                error: refusal.code.to_string(),
                error_description: format!("{} {}", refusal.message, refusal.reason),
                fix: refusal.fix.clone(),
            };
            // RFC 6749 §5.1: token answers, errors included, are never cached,
            // which every JSON answer already says (`no-store`), once.
            Response::json(refusal.status, &body)
        } else {
            Response::json(refusal.status, &refusal.body())
        };
        if let Some(seconds) = refusal.retry_after_seconds {
            response.headers.push(("retry-after".into(), seconds.to_string()));
        }
        if let Some(allowed) = &refusal.allow {
            response.headers.push(("allow".into(), allowed.clone()));
        }
        if let Some(challenge) = refusal.challenge() {
            response.headers.push(("www-authenticate".into(), challenge));
        }
        response.credential_refused = refusal.credential;
        response
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The body as JSON, for tests and for the MCP server reading a re-entered call.
    pub fn json_body(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_downloaded_file_is_named_without_what_could_reorder_or_escape_its_name() {
        let check = |name: &str, expected: &str| assert_eq!(content_disposition(name), expected, "{name:?}");
        check("contract.pdf", "attachment; filename=\"contract.pdf\"");
        // A right-to-left override would make the name read `invoiceexe.pdf`.
        check("invoice\u{202E}fdp.exe", "attachment; filename=\"invoice_fdp.exe\"");
        check("a\u{2066}b\u{2069}.txt", "attachment; filename=\"a_b_.txt\"");
        check("../etc\"x\r\n.txt", "attachment; filename=\".._etc_x__.txt\"");
        // Another script survives in `filename*`, its controls still replaced.
        check(
            "请求书 \u{202E}4471.pdf",
            "attachment; filename=\"_____4471.pdf\"; filename*=UTF-8''%E8%AF%B7%E6%B1%82%E4%B9%A6%20_4471.pdf",
        );
        assert!(content_disposition(&"x".repeat(500)).len() < 200, "cut to 120 characters");
    }

    #[test]
    fn cookies_are_found_across_headers_and_pairs() {
        let request = Request {
            headers: vec![("Cookie".into(), "a=1; __Host-mailroom-access=tok".into()), ("cookie".into(), "b=2".into())],
            ..Request::default()
        };
        assert_eq!(request.cookie("__Host-mailroom-access"), Some("tok"));
        assert_eq!(request.cookie("b"), Some("2"));
        assert_eq!(request.cookie("c"), None);
    }
}

#[cfg(test)]
mod url_tests {
    use super::url_parts;

    #[test]
    fn a_normalised_url_splits_into_origin_path_and_query() {
        let parts = |url| url_parts(url).map(|(origin, path, query)| [origin, path, query]);
        assert_eq!(
            parts("https://mail.example.org/api/me?x=1&y=%20#top"),
            Some(["https://mail.example.org".into(), "/api/me".into(), "x=1&y=%20".into()])
        );
        assert_eq!(parts("http://127.0.0.1:8787"), Some(["http://127.0.0.1:8787".into(), "/".into(), String::new()]));
        assert_eq!(
            parts("http://user:pw@127.0.0.1:8787/a%2Fb?"),
            Some(["http://127.0.0.1:8787".into(), "/a%2Fb".into(), String::new()])
        );
        assert_eq!(parts("http://h/?q=a?b"), Some(["http://h".into(), "/".into(), "q=a?b".into()]));
        assert_eq!(parts("not a url"), None);
        assert_eq!(parts("http:///path"), None);
    }
}

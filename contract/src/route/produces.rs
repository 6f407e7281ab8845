//! `Produces`: what a route's successful answer is (JSON, a page, a message's
//! bytes, a JSON-RPC or OAuth answer).

/// What a route's successful answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Produces {
    /// `application/json`, described by the route's response schema.
    Json,
    /// `text/html`: a page for a browser.
    Html,
    /// `text/javascript`: one of the browser interface's script modules.
    Script,
    /// `message/rfc822`: an original message, byte for byte.
    Message,
    /// An attachment's bytes, with the content type the message gave them.
    Attachment,
    /// An export's object: its manifest (`application/json`, the route's response
    /// schema) or one original message (`message/rfc822`).
    ExportObject,
    /// A JSON-RPC message (the MCP endpoint): a response, or 202 with no body for
    /// a notification.
    JsonRpc,
    /// An OAuth endpoint's JSON (RFC 6749, 7591): its own errors are OAuth's
    /// `{error, error_description}`, which standard clients read, not the refusal.
    OAuth,
    /// A WebSocket (101 Switching Protocols) on which the node tells what
    /// changes: frames of ids and kinds. A request that is not an upgrade is
    /// refused with 426.
    Live,
}

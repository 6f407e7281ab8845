//! The R2 bucket, the `send_email` binding and `fetch`, behind the core's
//! `BlobStore`, `Mailer` and `Webhooks` traits.

use std::time::Duration;

use worker::{
    AbortController, Bucket, Delay, EmailMessage, Fetch, Headers, Method, RequestInit, RequestRedirect, SendEmail,
};

use crate::core::bindings::{BlobError, BlobStore, Fetched, Mailer, MailerError, WebhookError, Webhooks};
use crate::core::outbound::{self, Destination};
use crate::core::storage::LocalBoxFuture;

pub struct R2Blobs {
    bucket: Bucket,
}

impl R2Blobs {
    pub fn new(bucket: Bucket) -> R2Blobs {
        R2Blobs { bucket }
    }
}

impl BlobStore for R2Blobs {
    fn put<'a>(&'a self, key: &'a str, bytes: &'a [u8]) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move {
            self.bucket.put(key, bytes.to_vec()).execute().await.map_err(|error| BlobError(error.to_string()))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<Vec<u8>>, BlobError>> {
        Box::pin(async move {
            let Some(object) = self.bucket.get(key).execute().await.map_err(|error| BlobError(error.to_string()))?
            else {
                return Ok(None);
            };
            let Some(body) = object.body() else {
                return Ok(None);
            };
            body.bytes().await.map(Some).map_err(|error| BlobError(error.to_string()))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<(), BlobError>> {
        Box::pin(async move { self.bucket.delete(key).await.map_err(|error| BlobError(error.to_string())) })
    }
}

pub struct EmailBinding {
    binding: SendEmail,
}

impl EmailBinding {
    pub fn new(binding: SendEmail) -> EmailBinding {
        EmailBinding { binding }
    }
}

impl Mailer for EmailBinding {
    fn send<'a>(
        &'a self,
        envelope_from: &'a str,
        envelope_to: &'a str,
        raw: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<Option<String>, MailerError>> {
        Box::pin(async move {
            // The message is written by mail-builder, which encodes everything to
            // 7-bit ASCII, so it is always valid text.
            let raw = std::str::from_utf8(raw).map_err(|_| MailerError("the message is not ASCII".into()))?;
            // The error's own words ("email to … not allowed"): a person reads
            // them on the send, so never a debug dump of the JavaScript value.
            let words = |error: js_sys::Error| MailerError(String::from(error.message()));
            let message = EmailMessage::new(envelope_from, envelope_to, raw).map_err(words)?;
            let sent = self.binding.send(&message).await.map_err(words)?;
            // The service's own Message-ID on what left, when it reports one.
            let message_id = js_sys::Reflect::get(sent.as_ref(), &wasm_bindgen::JsValue::from_str("messageId"))
                .ok()
                .and_then(|id| id.as_string());
            Ok(message_id)
        })
    }
}

/// How long a fetch may hold its connection: the core's own deadline for the
/// request (`outbound::within`, whose words a person reads on a delivery), and
/// a second more; then it is aborted, which also ends a body that trickles in.
const BACKSTOP_MS: u64 = 1_000;

/// How long a document the node reads (an OAuth client's metadata) may take.
const DOCUMENT_TIMEOUT: Duration = Duration::from_millis(outbound::DOCUMENT_TIMEOUT_MS as u64 + BACKSTOP_MS);

/// How long a webhook receiver may take.
const WEBHOOK_TIMEOUT: Duration = Duration::from_millis(outbound::POST_TIMEOUT_MS as u64 + BACKSTOP_MS);

/// POSTs `body` to `destination` with `headers`, without following redirects,
/// aborted after `WEBHOOK_TIMEOUT` (which also ends an answer that trickles in
/// past the deadline; aborting a fetch that already finished does nothing).
async fn posted(
    destination: &Destination,
    headers: &[(String, String)],
    body: &str,
) -> Result<worker::Response, WebhookError> {
    let words = |error: worker::Error| WebhookError(error.to_string());
    let sent = Headers::new();
    for (name, value) in headers {
        sent.set(name, value).map_err(words)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(sent)
        .with_redirect(RequestRedirect::Manual)
        .with_body(Some(wasm_bindgen::JsValue::from_str(body)));
    let request = worker::Request::new_with_init(destination.url(), &init).map_err(words)?;
    let controller = AbortController::default();
    let signal = controller.signal();
    wasm_bindgen_futures::spawn_local(async move {
        Delay::from(WEBHOOK_TIMEOUT).await;
        controller.abort();
    });
    Fetch::Request(request).send_with_signal(&signal).await.map_err(words)
}

/// An answer's status, the headers that matter and at most `limit` bytes of
/// its body: longer, by its declared length or what arrives, is an error.
async fn read_answer(response: &mut worker::Response, limit: usize) -> Result<Fetched, WebhookError> {
    let words = |error: worker::Error| WebhookError(error.to_string());
    let too_long = || WebhookError(format!("the body is longer than {limit} bytes"));
    let header = |name: &str| response.headers().get(name).ok().flatten();
    let declared: Option<usize> = header("content-length").and_then(|length| length.parse().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(too_long());
    }
    let (cache_control, location) = (header("cache-control"), header("location"));
    let body = response.bytes().await.map_err(words)?;
    if body.len() > limit {
        return Err(too_long());
    }
    Ok(Fetched { status: response.status_code(), body, cache_control, location })
}

/// Webhooks through the Workers `fetch`, only to a `Destination` the core's
/// rule has just allowed, and without following redirects (a receiver answers
/// where it was asked to be reached, or the delivery fails: a redirect could
/// otherwise lead inward). `wrangler.toml` turns on the runtime's own guard,
/// `global_fetch_strictly_public`, beneath this.
pub struct FetchWebhooks;

impl Webhooks for FetchWebhooks {
    fn get<'a>(
        &'a self,
        destination: &'a Destination,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>> {
        Box::pin(async move {
            let words = |error: worker::Error| WebhookError(error.to_string());
            let headers = Headers::new();
            headers.set("accept", "application/json").map_err(words)?;
            let mut init = RequestInit::new();
            init.with_method(Method::Get).with_headers(headers).with_redirect(RequestRedirect::Manual);
            let request = worker::Request::new_with_init(destination.url(), &init).map_err(words)?;
            let controller = AbortController::default();
            let signal = controller.signal();
            // The abort also ends a body that trickles in past the deadline.
            wasm_bindgen_futures::spawn_local(async move {
                Delay::from(DOCUMENT_TIMEOUT).await;
                controller.abort();
            });
            let mut response = Fetch::Request(request).send_with_signal(&signal).await.map_err(words)?;
            read_answer(&mut response, limit).await
        })
    }

    fn exchange<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Fetched, WebhookError>> {
        Box::pin(async move {
            let mut response = posted(destination, headers, body).await?;
            read_answer(&mut response, limit).await
        })
    }

    fn post<'a>(
        &'a self,
        destination: &'a Destination,
        headers: &'a [(String, String)],
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<u16, WebhookError>> {
        Box::pin(async move { Ok(posted(destination, headers, body).await?.status_code()) })
    }
}

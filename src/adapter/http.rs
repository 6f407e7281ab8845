//! A Worker request read into a core `Request` (its URL split, its headers,
//! its body refused unread past the limit its declared length exceeds), and a
//! core `Response` written back as a Worker one, with `Server-Timing` when the
//! configuration asks.

use crate::core::http::{MAXIMUM_BODY_BYTES, Request, Response, url_parts};
use crate::core::refusal::Refusal;
use crate::core::timing::Timings;

use super::platform;

pub(super) async fn to_core_request(request: &mut worker::Request) -> Result<Request, Refusal> {
    // The URL as the runtime parsed and normalised it, split by hand.
    let (origin, path, query) = url_parts(&request.inner().url()).ok_or_else(Refusal::internal)?;
    let headers: Vec<(String, String)> =
        request.headers().entries().map(|(name, value)| (name.to_ascii_lowercase(), value)).collect();
    let declared_length =
        headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, value)| value.parse::<usize>().ok());
    // Refuse an oversized body on its declared length, before reading a byte of it.
    let body = if declared_length.is_some_and(|length| length > MAXIMUM_BODY_BYTES) {
        vec![0; MAXIMUM_BODY_BYTES + 1]
    } else {
        request.bytes().await.unwrap_or_default()
    };
    let client_address = headers.iter().find(|(name, _)| name == "cf-connecting-ip").map(|(_, value)| value.clone());
    Ok(Request { method: request.method().to_string(), path, query, headers, body, origin, client_address })
}

pub(super) fn to_worker_response(response: Response, timings: &Timings) -> worker::Result<worker::Response> {
    let headers = worker::Headers::new();
    for (name, value) in &response.headers {
        headers.append(name, value)?;
    }
    headers.set("x-content-type-options", "nosniff")?;
    if response.commit_attempts > 0 {
        // How many commit batches the answer took (1: the chain never makes a
        // writer retry), for the benchmark to count.
        headers.set("x-mailroom-commit-attempts", &response.commit_attempts.to_string())?;
    }
    // Last, so the boundary's share includes the headers above; copying the
    // body into the runtime's response happens after, and is not counted.
    if let Some(server_timing) = timings.header(&platform::WorkersPlatform, response.round_trips) {
        headers.set("server-timing", &server_timing)?;
    }
    let body = if response.body.is_empty() { None } else { Some(response.body) };
    let builder = worker::ResponseBuilder::new().with_status(response.status).with_headers(headers);
    Ok(match body {
        Some(bytes) => builder.fixed(bytes),
        None => builder.empty(),
    })
}

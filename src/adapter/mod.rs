//! The adapter: the only code that names the `worker` crate.
//!
//! It turns a Worker `fetch` event into a core `Request`, hands the core a
//! `Database` on D1 and a `Platform` on the Workers runtime (clock, WebCrypto,
//! timers, console), and turns the core's `Response` back into a Worker one. It
//! decides nothing about the product: every rule lives in the core.

mod d1;
mod platform;

use worker::{Context, Env, event};

use crate::dispatch::dispatch;
use crate::http::{MAXIMUM_BODY_BYTES, Request, Response, Surface};
use crate::node::{Config, Node};
use crate::refusal::Refusal;

/// The shortest `SESSION_SECRET` the node accepts: 32 bytes of key material.
const MINIMUM_SESSION_SECRET_LENGTH: usize = 32;

#[event(fetch)]
async fn fetch(request: worker::Request, env: Env, _context: Context) -> worker::Result<worker::Response> {
    console_error_panic_hook::set_once();
    let response = match handle(request, &env).await {
        Ok(response) => response,
        Err(refusal) => Response::refusal(&refusal),
    };
    to_worker_response(response)
}

async fn handle(mut request: worker::Request, env: &Env) -> Result<Response, Refusal> {
    let platform = platform::WorkersPlatform;
    let config = configuration(env, &platform)?;
    let core_request = to_core_request(&mut request).await?;
    let database = env.d1("DB").map_err(|error| {
        crate::platform::Platform::log(&platform, &format!("the DB binding is missing: {error}"));
        Refusal::misconfigured("the D1 binding `DB`")
    })?;
    let database = d1::D1Storage::new(database);
    let node = Node { database: &database, platform: &platform, config: &config };
    Ok(dispatch(&node, &core_request, Surface::Rest).await)
}

fn configuration(env: &Env, platform: &platform::WorkersPlatform) -> Result<Config, Refusal> {
    let secret = |name: &str| env.secret(name).ok().map(|value| value.to_string()).filter(|value| !value.is_empty());
    let Some(session_secret) = secret("SESSION_SECRET").filter(|value| value.len() >= MINIMUM_SESSION_SECRET_LENGTH)
    else {
        crate::platform::Platform::log(platform, "SESSION_SECRET is missing or shorter than 32 characters");
        return Err(Refusal::misconfigured("the SESSION_SECRET secret (32 characters or more)"));
    };
    Ok(Config::new(session_secret.into_bytes(), secret("SETUP_TOKEN")))
}

async fn to_core_request(request: &mut worker::Request) -> Result<Request, Refusal> {
    let url = request.url().map_err(|_| Refusal::internal())?;
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
    Ok(Request {
        method: request.method().to_string(),
        path: url.path().to_string(),
        query: url.query().unwrap_or_default().to_string(),
        headers,
        body,
        origin: url.origin().ascii_serialization(),
        client_address,
    })
}

fn to_worker_response(response: Response) -> worker::Result<worker::Response> {
    let headers = worker::Headers::new();
    for (name, value) in &response.headers {
        headers.append(name, value)?;
    }
    headers.set("x-content-type-options", "nosniff")?;
    let body = if response.body.is_empty() { None } else { Some(response.body) };
    let builder = worker::ResponseBuilder::new().with_status(response.status).with_headers(headers);
    Ok(match body {
        Some(bytes) => builder.fixed(bytes),
        None => builder.empty(),
    })
}

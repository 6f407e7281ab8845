//! The adapter: the only code that names the `worker` crate.
//!
//! It turns a Worker `fetch` event into a core `Request`, hands the core a
//! `Database` on D1 and a `Platform` on the Workers runtime (clock, WebCrypto,
//! timers, console), and turns the core's `Response` back into a Worker one,
//! saying where its time went (`Server-Timing`) when the configuration asks. It
//! decides nothing about the product: every rule lives in the core.

mod bindings;
mod d1;
mod platform;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{Context, Env, ForwardableEmailMessage, ScheduleContext, ScheduledEvent, event};

use crate::audit;
use crate::core::http::{MAXIMUM_BODY_BYTES, Request, Response, Surface, url_parts};
use crate::core::node::{AuditKey, Config, DEFAULT_MAXIMUM_MESSAGE_BYTES, Installation};
use crate::core::platform::Platform;
use crate::core::refusal::Refusal;
use crate::core::storage::Database;
use crate::core::timing::Timings;
use crate::dispatch::{dispatch, refused_before_dispatch};
use crate::mail::{self, Rejection};

/// The shortest `SESSION_SECRET` and `AUDIT_KEY` the node accepts: 32 bytes of
/// key material.
const MINIMUM_SESSION_SECRET_LENGTH: usize = 32;

#[event(fetch)]
async fn fetch(mut request: worker::Request, env: Env, context: Context) -> worker::Result<worker::Response> {
    // Where the request's time goes is measured from here, when the node's
    // configuration asks (decision 0034); until the dispatcher takes over, and
    // again once it answers, it is the boundary's.
    let began_ms = platform::WorkersPlatform.now_ms();
    console_error_panic_hook::set_once();
    let bindings = match bindings(&env, Some(began_ms)) {
        Ok(bindings) => bindings,
        Err(refusal) => {
            let path = request.path();
            let refused = refused_before_dispatch(request.method().as_ref(), &path, refusal);
            return to_worker_response(refused, &Timings::off());
        }
    };
    let timings = bindings.timings.clone();
    let response = match to_core_request(&mut request).await {
        Ok(core_request) => dispatch(&bindings.node(), &core_request, Surface::Rest).await,
        Err(refusal) => Response::refusal(&refusal),
    };
    if !response.deferred.is_empty() || response.seal_chain {
        // What follows the answer must not hold it up: outcomes recorded after it
        // (a dispatch's result), and sealing the entries it appended to the audit
        // chain. The runtime keeps the isolate alive until they are done.
        let (deferred, seal) = (response.deferred.clone(), response.seal_chain);
        context.wait_until(async move {
            if !deferred.is_empty()
                && let Err(error) = bindings.database.execute(deferred).await
            {
                worker::console_error!("a deferred write failed: {error}");
            }
            if seal {
                seal_chain(&bindings).await;
            }
        });
    }
    to_worker_response(response, &timings)
}

/// Seals the audit chain's waiting entries, logging what stops the sealer.
async fn seal_chain(bindings: &Bindings) {
    match audit::seal(&bindings.database, &bindings.config).await {
        Ok(sealing) => {
            if let Some(stopped) = sealing.stopped {
                worker::console_error!("the audit chain was not sealed past its head: {stopped}");
            }
        }
        Err(error) => worker::console_error!("sealing the audit chain failed: {error}"),
    }
}

/// The cron triggers (`[triggers]` in wrangler.toml): each runs the jobs
/// `schedule::CRONS` names for its expression.
#[event(scheduled)]
async fn scheduled(event: ScheduledEvent, env: Env, _context: ScheduleContext) {
    console_error_panic_hook::set_once();
    let bindings = match bindings(&env, None) {
        Ok(bindings) => bindings,
        Err(refusal) => {
            worker::console_error!("the scheduled upkeep cannot run: {}", refusal.reason);
            return;
        }
    };
    if let Err(failures) = crate::schedule::on_schedule(&bindings.node(), &event.cron()).await {
        for failure in failures {
            worker::console_error!("the scheduled run `{}` failed: {failure}", event.cron());
        }
    }
}

/// The bindings a request or an email is handled with.
type Bindings = Installation<
    d1::D1Storage,
    bindings::R2Blobs,
    bindings::EmailBinding,
    bindings::FetchWebhooks,
    platform::WorkersPlatform,
>;

/// Logs a missing binding for the operator and answers the refusal naming it.
fn missing(what: &'static str) -> impl Fn(worker::Error) -> Refusal {
    move |error| {
        worker::console_error!("the binding {what} is missing: {error}");
        Refusal::misconfigured(what)
    }
}

/// The installation a Worker's environment describes, or the refusal naming
/// what it lacks; for a request that began at `began_ms`, measuring where its
/// time goes if the configuration asks.
fn bindings(env: &Env, began_ms: Option<i64>) -> Result<Bindings, Refusal> {
    let platform = platform::WorkersPlatform;
    let config = configuration(env)?;
    let timings = match began_ms {
        Some(began_ms) if config.server_timing => Timings::began_at(began_ms),
        _ => Timings::off(),
    };
    Ok(Installation {
        database: d1::D1Storage::new(env.d1("DB").map_err(missing("the D1 binding `DB`"))?, timings.clone()),
        blobs: bindings::R2Blobs::new(env.bucket("RAW_MAIL").map_err(missing("the R2 binding `RAW_MAIL`"))?),
        mailer: bindings::EmailBinding::new(
            env.send_email("SEND_EMAIL").map_err(missing("the send_email binding `SEND_EMAIL`"))?,
        ),
        webhooks: bindings::FetchWebhooks,
        platform,
        config,
        timings,
    })
}

/// Inbound mail from Cloudflare Email Routing: stored, or rejected with an SMTP
/// reason the sender's server reports back.
#[event(email)]
async fn email(message: ForwardableEmailMessage, env: Env, context: Context) -> worker::Result<()> {
    console_error_panic_hook::set_once();
    let fallback =
        env.var("INBOUND_FALLBACK_ADDRESS").ok().map(|value| value.to_string()).filter(|value| !value.is_empty());
    let reject = |rejection: Rejection| reject(&message, rejection, fallback.as_deref());
    let Ok(bindings) = bindings(&env, None) else {
        return reject(Rejection::TemporaryFailure).await;
    };
    let limit = bindings.config.maximum_message_bytes;
    // Refuse an oversized message on its declared size, before reading it.
    if message.raw_size() > limit as f64 {
        return reject(Rejection::TooLarge { limit }).await;
    }
    let raw = match message.raw_bytes().await {
        Ok(raw) => raw,
        Err(error) => {
            worker::console_error!("reading an inbound message failed: {error}");
            return reject(Rejection::TemporaryFailure).await;
        }
    };
    let (from, to) = (message.from(), message.to());
    match mail::receive(&bindings.node(), &from, &to, &raw).await {
        // Stored or delivered again, the message left an audit entry to seal.
        Ok(mail::Delivery::Stored { .. } | mail::Delivery::Duplicate { .. }) => {
            context.wait_until(async move { seal_chain(&bindings).await });
            Ok(())
        }
        Err(rejection) => reject(rejection).await,
    }
}

/// Rejects an inbound message with its SMTP reason. Email Routing turns every
/// rejection (and every exception) into a permanent failure, so a sender never
/// retries mail the node failed to store; when the operator named a fallback
/// address, such mail is forwarded there instead of being bounced.
async fn reject(message: &ForwardableEmailMessage, rejection: Rejection, fallback: Option<&str>) -> worker::Result<()> {
    if let (Rejection::TemporaryFailure, Some(address)) = (&rejection, fallback) {
        match message.forward(address).await {
            Ok(_) => {
                worker::console_error!("could not store mail for {}; forwarded it to {address}", message.to());
                return Ok(());
            }
            Err(error) => worker::console_error!("forwarding mail for {} to {address} failed: {error:?}", message.to()),
        }
    }
    set_reject(message, &rejection.smtp_reason()).await;
    Ok(())
}

/// Rejects `message` with `reason` and waits for the rejection to land. Where
/// the message is a stub across an RPC boundary (locally, under wrangler dev),
/// `setReject` answers a promise, and a handler that returned first would leave
/// the rejection unheard; in production it answers nothing, and this waits for
/// nothing.
async fn set_reject(message: &ForwardableEmailMessage, reason: &str) {
    let returned = message.unchecked_ref::<Rejectable>().set_reject_answering(reason);
    if let Err(error) = JsFuture::from(js_sys::Promise::resolve(&returned)).await {
        worker::console_error!("rejecting an inbound message failed: {error:?}");
    }
}

#[wasm_bindgen]
extern "C" {
    /// An inbound message, seen only as something with `setReject`.
    type Rejectable;

    /// `setReject`, keeping what it answers (the worker crate's binding drops it).
    #[wasm_bindgen(method, js_name = setReject)]
    fn set_reject_answering(this: &Rejectable, reason: &str) -> JsValue;
}

fn configuration(env: &Env) -> Result<Config, Refusal> {
    let secret = |name: &str| env.secret(name).ok().map(|value| value.to_string()).filter(|value| !value.is_empty());
    let Some(session_secret) = secret("SESSION_SECRET").filter(|value| value.len() >= MINIMUM_SESSION_SECRET_LENGTH)
    else {
        worker::console_error!("SESSION_SECRET is missing or shorter than 32 characters");
        return Err(Refusal::misconfigured("the SESSION_SECRET secret (32 characters or more)"));
    };
    let Some(audit_key) = secret("AUDIT_KEY").filter(|value| value.len() >= MINIMUM_SESSION_SECRET_LENGTH) else {
        worker::console_error!("AUDIT_KEY is missing or shorter than 32 characters");
        return Err(Refusal::misconfigured("the AUDIT_KEY secret (32 characters or more)"));
    };
    let mut config = Config::new(session_secret.into_bytes(), audit_key.into_bytes(), secret("SETUP_TOKEN"));
    // Keys the chain was written with before a rotation, kept to verify what
    // they wrote: comma-separated, newest first.
    config.previous_audit_keys = secret("AUDIT_PREVIOUS_KEYS")
        .map(|keys| {
            keys.split(',').map(str::trim).filter(|key| !key.is_empty()).map(|key| AuditKey::new(key.into())).collect()
        })
        .unwrap_or_default();
    config.maximum_message_bytes = env
        .var("MAXIMUM_MESSAGE_BYTES")
        .ok()
        .and_then(|value| value.to_string().parse().ok())
        .unwrap_or(DEFAULT_MAXIMUM_MESSAGE_BYTES);
    config.public_origin = env
        .var("PUBLIC_ORIGIN")
        .ok()
        .map(|value| value.to_string().trim_end_matches('/').to_string())
        .filter(|value| !value.is_empty());
    config.reminder_sender = env
        .var("REMINDER_SENDER")
        .ok()
        .map(|value| value.to_string().trim().to_string())
        .filter(|value| !value.is_empty());
    config.agent_network = env
        .var("FEATURE_AGENT_NETWORK")
        .ok()
        .is_some_and(|value| value.to_string().trim().eq_ignore_ascii_case("true"));
    config.server_timing =
        env.var("SERVER_TIMING").ok().is_some_and(|value| value.to_string().trim().eq_ignore_ascii_case("true"));
    Ok(config)
}

async fn to_core_request(request: &mut worker::Request) -> Result<Request, Refusal> {
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

fn to_worker_response(response: Response, timings: &Timings) -> worker::Result<worker::Response> {
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
